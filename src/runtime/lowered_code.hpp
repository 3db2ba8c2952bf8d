// lowered_code.hpp — what the compiler hands the runtime: flat, resumable
// code per orchestration function (kernels inlined, loops and branches as
// jumps), the per-rank dispatch list, and the window layout.
//
// A rank's whole state is (dispatch index, pc, registers), so a wait that
// cannot complete parks the rank and frees its worker. Registers come in
// three files: scalars (s), tiles (t) and tensor views (v). The instruction
// set and each opcode's meaning: vm_opcodes.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "anyp/dtype.hpp"
#include "anyp/host_worker.hpp"
#include "runtime/vm_opcodes.hpp"

namespace anyp::runtime {

enum class Opcode : std::uint8_t {
#define ANYP_X(name, text, traits, meaning) name,
  ANYP_VM_OPCODES(ANYP_X)
#undef ANYP_X
};
const char* opcode_name(Opcode op);     // "load.flat"
const char* opcode_meaning(Opcode op);  // its one-line meaning

// The traits column of vm_opcodes.hpp, as bits.
enum OpcodeTrait : unsigned {
#define ANYP_X(trait, bit) trait = bit,
  ANYP_VM_OPCODE_TRAITS(ANYP_X)
#undef ANYP_X
};
inline constexpr unsigned kOpcodeTraits[] = {
#define ANYP_X(name, text, traits, meaning) traits,
    ANYP_VM_OPCODES(ANYP_X)
#undef ANYP_X
};
constexpr unsigned opcode_traits(Opcode op) { return kOpcodeTraits[static_cast<std::size_t>(op)]; }
constexpr bool opcode_has(Opcode op, OpcodeTrait trait) { return (opcode_traits(op) & trait) != 0; }

// The most blocks one kernel launch may have (pl::blocks(n)).
inline constexpr std::int64_t kMaxBlocks = 256;

// Where an instruction came from, for diagnostics.
struct Site {
  std::string function;  // the user function ("get_step")
  std::string op;        // the user-level op ("pld.system.wait", "pld.tensor.barrier")
  std::string where;     // where the user wrote it ("step07.py:42"), or ""
  // The op as diagnostics name it: "pld.system.wait at step07.py:42".
  std::string located_op() const { return where.empty() ? op : op + " at " + where; }
};

struct Instr {
  Opcode op = Opcode::Const;
  std::uint8_t sub = 0;
  bool is_float = false;  // Const: fimm; TileBin: scalar operand
  DType dtype = DType::INT32;
  std::int32_t dst = -1, a = -1, b = -1, c = -1;
  std::int32_t count = 0;  // Put/Get: number of dst offsets in idx
  std::int64_t imm = 0;
  double fimm = 0;
  std::int32_t site = -1;
  std::vector<std::int32_t> idx;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> valid;  // load/store of a partial tile: the region moved
};

// One builtin collective call site (the Collective instruction's imm).
// Every rank's n-th call on one signal buffer must have the same signature.
struct CollectiveDesc {
  std::string op;         // "pld.tensor.allreduce"
  std::string signature;  // what must agree across ranks: "Sum, Mesh, data FP32 [1, 960]"
  // The call's window operands (view registers) and their roles ("data",
  // "signal", ...), checked to be distinct buffers; the signal is last.
  std::vector<std::int32_t> views;
  std::vector<std::string> roles;
  // The algorithm the call runs ("Mesh", "Ring", ...), whether
  // AllreduceMode::Auto chose it, and every candidate algorithm's modeled
  // time on the compile's cost model, in candidate order (empty when the op
  // has one builtin algorithm). CompiledProgram::collective_choices() and
  // collective_table() print them.
  std::string algorithm = "Mesh";
  bool chosen_by_auto = false;
  struct Estimate {
    std::string algorithm;
    double ns = 0;
  };
  std::vector<Estimate> estimates;
};

// One host worker (anyp/host_worker.hpp): the HostWorker instruction's imm.
struct HostWorkerDesc {
  std::string name;  // the host worker function
  std::shared_ptr<const HostWorkerBody> body;
  std::vector<bool> writes;  // per operand: written back (pl::Out, pl::InOut)
};

// A tensor made by pl::create_tensor, or a builtin collective's scratch
// window: `slots` copies (one per block of the kernel launch it is in) of
// `shape` and `dtype`, each rounded up to 32 B.
struct ScratchTensor {
  std::string name;  // "function.variable", or "function.(what)" for a builtin's
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
  std::int64_t slots = 1;
  // Reached by peers (a builtin's scratch window, such as Bruck's
  // all_to_all's); a pl::create_tensor is its rank's own.
  bool shared = false;
};

struct LoweredCode {
  std::string function;          // orchestration function name
  std::vector<Instr> constants;  // Const instructions run at dispatch entry
  std::vector<Instr> instrs;
  std::vector<Site> sites;
  std::int32_t num_scalars = 0, num_tiles = 0, num_views = 0;
  // Parameter i binds register param_regs[i] of file param_files[i] ('s'/'v').
  std::vector<char> param_files;
  std::vector<std::int32_t> param_regs;
  std::vector<CollectiveDesc> collectives;
  std::vector<HostWorkerDesc> host_workers;
  // The tensors its pl::create_tensor ops make (CreateView's imm indexes
  // this until the compiler gives each its window buffer, then it is the
  // buffer's index).
  std::vector<ScratchTensor> scratch;
};

// A symmetric window buffer: same offset in every rank's window.
struct WindowBuffer {
  std::string name;
  DType dtype = DType::INT8;        // as allocated (INT8 for a size in bytes)
  std::vector<std::int64_t> shape;  // as allocated ({bytes} for a size in bytes)
  bool signal = false;              // some notify/wait uses a view of it
  // Only credits: every access in the program is an AtomicAdd notify or a
  // Ge wait, never data (so a credit's arrival order matters to no one).
  bool credit_only = false;
  std::int64_t offset = 0;   // bytes from the start of a rank's window
  std::int64_t bytes = 0;    // slot size, rounded up to 32 B
  std::int64_t used = 0;     // requested size
  std::int32_t domain = -1;  // its CommDomain (index into Executable::domains), -1: the world
  // A pl::create_tensor's storage: this rank's own, reached by no peer.
  bool local = false;
};

// A communication domain (pld::comm_domain): disjoint groups of ranks, all
// of one size. A view of one of its buffers is reached through the group of
// the rank that holds it: peer k is the group's k-th rank, pld::rank is the
// rank's index in its group, and a builtin collective runs over the group.
struct CommDomain {
  std::string name;
  std::int64_t group_size = 0;
  std::vector<std::vector<std::int64_t>> groups;  // world ranks, in group order
  std::vector<std::int32_t> group_of;             // per world rank: its group, or -1
  std::vector<std::int32_t> index_of;             // per world rank: its index in the group, or -1
  // Made by the compiler from the ranks a buffer's views are dispatched to
  // (PyPTO's inference), not declared with pld::comm_domain.
  bool inferred = false;
};
// "{2, 3}": the world ranks of a group.
std::string group_text(const std::vector<std::int64_t>& group);

// The shapes of dispatch arguments, each distinct one stored once: P ranks
// bind the same few shapes P times each (step 07 at P = 4 million: 20
// million bindings of [1, 64]). A shape stays where it is while the pool
// lives; plans and their copies share the pool (Executable::arg_shapes).
class ShapePool {
 public:
  std::span<const std::int64_t> intern(std::span<const std::int64_t> shape) {
    return *shapes_.emplace(shape.begin(), shape.end()).first;
  }

 private:
  std::set<std::vector<std::int64_t>> shapes_;  // nodes never move
};

// How one parameter of a dispatch is bound on its rank (48 bytes: P ranks
// hold one per parameter).
struct ArgBinding {
  enum class Kind : std::uint8_t { HostTensor, Window, Int, Float } kind = Kind::Int;
  DType dtype = DType::FP32;
  std::int32_t host_param = -1;         // HostTensor: index into the run's arguments
  std::int32_t buffer = -1;             // Window: buffer index
  std::int64_t byte_offset = 0;         // HostTensor: from its data; Window: from window base
  std::span<const std::int64_t> shape;  // in the plan's ShapePool
  union {                               // by kind
    std::int64_t int_value = 0;
    double float_value;
  };
};

// The dispatch order across ranks (compiler/order_dispatches.hpp): before a
// dispatch runs, its rank waits for the dispatches of other ranks it
// depends on; after one ends, its rank releases the ranks that wait for it.
// Each pair of ranks (source, waiter) has one cell on the waiter, in the
// window buffer Executable::order_buffer, that counts the source's releases.
//
// A window shared by two dispatch groups orders them instead: every rank's
// first dispatch of the later group waits on one cell of its own until all
// the earlier group's dispatches on other ranks released it
// (Executable::order_edges; one cell index per edge, on every rank).
struct DispatchWait {
  std::int64_t cell = 0;   // element of the waiter's order buffer
  std::int64_t count = 0;  // Ge this: the source's count-th release
  std::int64_t source_rank = 0;
  std::int64_t source_dispatch = 0;  // the last one waited for (for messages)
  std::int32_t host_param = -1;      // through this host tensor ...
  std::int64_t byte_offset = 0;      // ... view (the dependency's key)
  std::int32_t buffer = -1;          // or a group edge: through this window buffer
};
struct DispatchRelease {
  std::int64_t peer = 0;  // the waiting rank
  std::int64_t cell = 0;  // its cell for this rank
};

// A group edge: its cell, and the ranks that wait on it.
struct OrderEdge {
  std::int64_t cell = 0;
  std::vector<std::int64_t> waiters;
};

struct DispatchOrder {
  std::vector<DispatchWait> waits;          // before it runs
  std::vector<DispatchRelease> releases;    // after it ends
  std::vector<std::int64_t> edge_releases;  // after it ends: these order edges' waiters
};

struct Dispatch {
  std::int32_t code = -1;  // index into Plan codes
  std::vector<ArgBinding> args;
  // Its place in the order across ranks; none for a dispatch that neither
  // waits nor releases (most, and P ranks hold one each).
  std::unique_ptr<const DispatchOrder> order;
  std::span<const DispatchWait> waits() const {
    return order ? std::span<const DispatchWait>(order->waits) : std::span<const DispatchWait>();
  }
  std::span<const DispatchRelease> releases() const {
    return order ? std::span<const DispatchRelease>(order->releases)
                 : std::span<const DispatchRelease>();
  }
  std::span<const std::int64_t> edge_releases() const {
    return order ? std::span<const std::int64_t>(order->edge_releases)
                 : std::span<const std::int64_t>();
  }
};

}  // namespace anyp::runtime
