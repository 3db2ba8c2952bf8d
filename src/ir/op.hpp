// op.hpp — the IR's operations: one X-macro lists every op kind with its
// printed name, the function levels that may use it, its family, the
// operand its result views, the operands it writes and a collective's
// operand roles; OpAttr is the typed attribute an op carries.
//
// Operand layout per kind (args are Operands: a variable or an immediate):
//   Const        %r = args[0]                         (immediate)
//   Assign       %r = args[0]                         (writes an existing var)
//   ScalarBinary %r = args[0] <attr:BinaryOp> args[1]
//   ScalarNot    %r = !args[0]
//   ScalarCast   %r = cast(args[0]) to dtype
//   Index        %r = args[0][args[1]]                (host slicing, drops dim 0)
//   AllocWindow  %r = buffer `name`, shape, dtype     (host); args[0], when present, is
//                the CommDomain the buffer belongs to (else the world)
//   CommDomain   %r = domain `name` (host): a set of disjoint groups of ranks
//   CommGroup    adds a group to domain args[0] (host): count 0: the ranks args[1..], in
//                group order; count 1: args[2] ranks args[1], args[1] + args[3], ...
//   Window       %r = view of buffer args[0], shape, dtype (host); args[1], when present,
//                is the view's offset in elements of dtype from the buffer's start
//   WorldSize    marker: pld::world_size() used as a value
//   Call         callee(args...), device = last arg when has_device; `blocks`, when set,
//                launches an incore callee over that many blocks (pl::blocks(n))
//   Load         %r = tile of args[0] at offsets args[1..], shape (with `valid`: only that
//                region is read, the rest of the tile is 0)
//   Store        args[1][offsets args[2..]] = tile args[0]; %r is args[1] (with `valid`:
//                only the tile's top-left `valid` corner is written)
//   Read         %r = args[0][indices args[1..]]
//   Write        args[0][indices args[2..]] = args[1]
//   TileBinary   %r = args[0] <attr:BinaryOp> args[1] (tile or scalar)
//   TileCast     %r = cast(args[0]) to dtype
//   Full         %r = tile of `shape` and dtype, every element args[0] (converted)
//   Reshape      %r = tile args[0] seen with `shape` (same element count and dtype)
//   GetCommCtx   %r = comm context of window args[0]
//   Rank/NRanks  %r = rank / P of ctx args[0]
//   BlockIdx     %r = this block's index in its kernel launch (0 for a one-block call)
//   BlockNum     %r = the launch's block count (1 for a one-block call)
//   Notify       signal args[0], peer args[1], value args[2], offsets args[3..]; attr NotifyOp
//   Wait         signal args[0], expected args[1], offsets args[2..]; attr WaitKind
//   Put/Get      dst args[0], peer args[1], src args[2]; region form: `count` dst
//                offsets, then src offsets, and shape; attr AtomicKind
//   PutAsync     %r (an INT32 event) = a Put, operands as Put, that completes at the
//                WaitAsync of %r (its source must not be written before)
//   WaitAsync    waits for the put_async whose event is args[0]
//   RemoteLoad   %r = tile of peer args[1]'s window args[0] at offsets args[2..], shape
//   RemoteStore  tile args[0] into peer args[2]'s window args[1] at offsets args[3..];
//                attr AtomicKind
//   Barrier      self-clearing barrier on signal args[0]; %r is args[0]. A host
//                Barrier may omit its signal (args = []): the compiler synthesizes one
//   Allreduce    data args[0] in place, signal args[1]; attr AllreduceAttr
//   Broadcast    data args[0] in place, signal args[1], root args[2] (an immediate);
//                attr Algorithm (Mesh, Tree, ScatterAllgather, Auto)
//   Allgather    src tensor args[0] -> dst window args[1] (row r), signal args[2];
//                attr Algorithm (Mesh, Bruck, RecursiveDoubling, Auto)
//   ReduceScatter data args[0] ([NR, ...], row r reduced in place), signal args[1];
//                attr AllreduceAttr (the op; Mesh, RecursiveHalving, Pairwise or Auto)
//   AllToAll     src tensor args[0] row d -> rank d's dst window args[1] row r, signal args[2];
//                attr Algorithm (Mesh, Pairwise, Bruck, Auto)
//   AllToAllV    src args[0], send_counts args[1], dst args[2], recv_counts args[3],
//                signal args[4]
//   (every collective's result %r is its in-place window: data, or dst; the table's view_of)
//   Load, Store, RemoteLoad, RemoteStore with `count` > 0: a run-time valid_shape, one
//   extent per dim as the last `count` args (scalars or immediates; `valid` is empty)
//   At the host level a collective runs between dispatch loops: every rank gets one
//   dispatch of it. A host Allreduce may omit its signal (args = [data]); the compiler
//   then synthesizes an [NR, 1] one.
// Tensor-level ops (memory to memory, this rank's tensors and windows):
//   TensorSlice  %r = the view [offsets args[1..], + shape) of view args[0] (no copy)
//   TensorCopy   view args[0] = view args[1], element by element, converted to args[0]'s dtype
//   TensorBinary view args[0] = args[1] <attr:BinaryOp> args[2] (a view or a scalar)
//   CreateTensor %r = a new zeroed tensor of `shape` and dtype, this rank's own (a
//                compiler-allocated slot of its window that no peer reaches; in a
//                multi-block kernel one slot per block); the same storage each time the
//                op runs (pl::create_tensor)
// Tile compute ops (incore; shapes and dtypes checked when traced and once dims are bound):
//   TileUnary    %r = <attr:UnaryOp> args[0]
//   TileCmp      %r = mask (1 / 0) of args[0] <attr:CmpKind> args[1] (tile or scalar)
//   Select       %r = args[1] where mask args[0] != 0, else args[2]
//   TileReduce   %r = <attr:AxisReduce> of args[0] along its rows (row: [.., M, 1])
//                or its columns ([.., 1, N])
//   TileExpand   %r = args[0] <attr:AxisExpand> the row vector args[1] ([.., M, 1]; row)
//                or the column vector ([.., 1, N]) broadcast to args[0]'s shape
//   Matmul       %r = init + args[a] @ args[b]; attr MatmulForm: Acc forms take the
//                accumulator first (acc, a, b), Bias forms last (a, b, bias)
//   Transpose    %r = args[0] with the dims of attr TransposeAxes swapped
//   TileSlice    %r = the sub-tile of args[0] at offsets args[1..], shape
//   Concat       %r = args[0] and args[1] side by side (columns appended)
//   Arange       %r = tile of `shape` and dtype, element i (row-major) = args[0] + i,
//                or args[0] - i when attr ArangeDirection is descending
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "anyp/dtype.hpp"
#include "anyp/host_worker.hpp"
#include "ir/expr.hpp"
#include "ir/op_attrs.hpp"
#include "ir/source_loc.hpp"

namespace anyp::ir {

enum class Level { Host, Orchestration, Incore };
const char* level_name(Level l);

enum LevelMask : unsigned { kHost = 1, kOrch = 2, kIncore = 4, kAny = 7 };

// What an op is about; passes that treat a family alike ask op_family()
// instead of listing its kinds.
enum class OpFamily : std::uint8_t {
  Scalar,      // scalar values: constants, arithmetic, casts
  Host,        // host-only structure: windows, views, domains, groups, indexing
  Call,        // a call to another function
  Memory,      // this rank's tensors and windows, tile by tile or element by element
  Tile,        // tile compute
  Query,       // where this code runs: rank, P, block, comm context
  Signal,      // notify and wait
  Transfer,    // one-sided transfers to or from a peer
  Collective,  // builtin collectives (every rank takes part)
  Tensor,      // memory-to-memory tensor ops
};

// Operand-index sets (bit i: args[i]) for the table below.
inline constexpr unsigned kArg0 = 1, kArg1 = 2, kArg2 = 4, kArg3 = 8, kArg4 = 16;

// Every op kind: its printed name, the levels that may use it, its family,
// the operand its result is a view of (-1: the result is a new value; a
// collective's in-place window), the memory operands it writes (on this
// rank or a peer; calls write what their callees' intents say) and, for a
// builtin collective, its window operands' roles in argument order.
// Operands past op.args.size() are absent (a host barrier or allreduce may
// omit its signal).
#define ANYP_OP_KINDS(X)                                                                         \
  X(Const, "const", kAny, Scalar, -1, 0, "")                                                     \
  X(Assign, "assign", kAny, Scalar, 0, 0, "")                                                    \
  X(ScalarBinary, "scalar", kAny, Scalar, -1, 0, "")                                             \
  X(ScalarNot, "not", kAny, Scalar, -1, 0, "")                                                   \
  X(ScalarCast, "pl.cast", kAny, Scalar, -1, 0, "")                                              \
  X(Index, "index", kHost, Host, 0, 0, "")                                                       \
  X(AllocWindow, "pld.alloc_window_buffer", kHost, Host, -1, 0, "")                              \
  X(Window, "pld.window", kHost, Host, -1, 0, "")                                                \
  X(CommDomain, "pld.comm_domain", kHost, Host, -1, 0, "")                                       \
  X(CommGroup, "pld.comm_group", kHost, Host, -1, 0, "")                                         \
  X(WorldSize, "pld.world_size", kHost, Host, -1, 0, "")                                         \
  X(Call, "call", kHost | kOrch, Call, -1, 0, "")                                                \
  X(Load, "pl.load", kIncore, Memory, -1, 0, "")                                                 \
  X(Store, "pl.store", kIncore, Memory, 1, kArg1, "")                                            \
  X(Read, "pl.read", kOrch | kIncore, Memory, -1, 0, "")                                         \
  X(Write, "pl.write", kOrch | kIncore, Memory, -1, kArg0, "")                                   \
  X(TileBinary, "tile", kIncore, Tile, -1, 0, "")                                                \
  X(TileCast, "pl.cast", kIncore, Tile, -1, 0, "")                                               \
  X(Full, "pl.full", kIncore, Tile, -1, 0, "")                                                   \
  X(Reshape, "pl.reshape", kIncore, Tile, -1, 0, "")                                             \
  X(GetCommCtx, "pld.get_comm_ctx", kAny, Query, -1, 0, "")                                      \
  X(Rank, "pld.rank", kIncore, Query, -1, 0, "")                                                 \
  X(NRanks, "pld.nranks", kIncore, Query, -1, 0, "")                                             \
  X(BlockIdx, "pl.get_block_idx", kIncore, Query, -1, 0, "")                                     \
  X(BlockNum, "pl.get_block_num", kIncore, Query, -1, 0, "")                                     \
  X(Notify, "pld.system.notify", kIncore, Signal, -1, kArg0, "")                                 \
  X(Wait, "pld.system.wait", kIncore, Signal, -1, 0, "")                                         \
  X(Put, "pld.tensor.put", kIncore, Transfer, -1, kArg0, "")                                     \
  X(Get, "pld.tensor.get", kIncore, Transfer, -1, kArg0, "")                                     \
  X(PutAsync, "pld.tensor.put_async", kIncore, Transfer, -1, kArg0, "")                          \
  X(WaitAsync, "pld.system.wait_async", kIncore, Transfer, -1, 0, "")                            \
  X(RemoteLoad, "pld.tile.remote_load", kIncore, Transfer, -1, 0, "")                            \
  X(RemoteStore, "pld.tile.remote_store", kIncore, Transfer, -1, kArg1, "")                      \
  X(Barrier, "pld.tensor.barrier", kHost | kIncore, Collective, 0, kArg0, "signal")              \
  X(Allreduce, "pld.tensor.allreduce", kHost | kIncore, Collective, 0, kArg0 | kArg1,            \
    "data signal")                                                                               \
  X(Broadcast, "pld.tensor.broadcast", kHost | kIncore, Collective, 0, kArg0 | kArg1,            \
    "data signal")                                                                               \
  X(Allgather, "pld.tensor.allgather", kHost | kIncore, Collective, 1, kArg1 | kArg2,            \
    "src dst signal")                                                                            \
  X(ReduceScatter, "pld.tensor.reduce_scatter", kHost | kIncore, Collective, 0, kArg0 | kArg1,   \
    "data signal")                                                                               \
  X(AllToAll, "pld.tensor.all_to_all", kHost | kIncore, Collective, 1, kArg1 | kArg2,            \
    "src dst signal")                                                                            \
  X(AllToAllV, "pld.tensor.all_to_all_v", kHost | kIncore, Collective, 2, kArg2 | kArg3 | kArg4, \
    "src send_counts dst recv_counts signal")                                                    \
  X(TileUnary, "pl.unary", kIncore, Tile, -1, 0, "")                                             \
  X(TileCmp, "pl.cmp", kIncore, Tile, -1, 0, "")                                                 \
  X(Select, "pl.sel", kIncore, Tile, -1, 0, "")                                                  \
  X(TileReduce, "pl.reduce", kIncore, Tile, -1, 0, "")                                           \
  X(TileExpand, "pl.expand", kIncore, Tile, -1, 0, "")                                           \
  X(Matmul, "pl.matmul", kIncore, Tile, -1, 0, "")                                               \
  X(Transpose, "pl.transpose", kIncore, Tile, -1, 0, "")                                         \
  X(TileSlice, "pl.slice", kIncore, Tile, -1, 0, "")                                             \
  X(Concat, "pl.concat", kIncore, Tile, -1, 0, "")                                               \
  X(Arange, "pl.arange", kIncore, Tile, -1, 0, "")                                               \
  X(TensorSlice, "pl.tensor.slice", kOrch | kIncore, Tensor, 0, 0, "")                           \
  X(TensorCopy, "pl.tensor.copy", kOrch | kIncore, Tensor, -1, kArg0, "")                        \
  X(TensorBinary, "pl.tensor", kOrch | kIncore, Tensor, -1, kArg0, "")                           \
  X(CreateTensor, "pl.create_tensor", kOrch | kIncore, Tensor, -1, 0, "")                        \
  X(HostWorker, "pl.host_worker", kOrch, Call, -1, 0, "")

enum class OpKind {
#define ANYP_X(kind, name, levels, family, view_of, writes, roles) kind,
  ANYP_OP_KINDS(ANYP_X)
#undef ANYP_X
};

inline constexpr int kOpKinds = 0
#define ANYP_X(kind, name, levels, family, view_of, writes, roles) +1
    ANYP_OP_KINDS(ANYP_X)
#undef ANYP_X
    ;

const char* op_kind_name(OpKind k);
unsigned op_levels(OpKind k);
OpFamily op_family(OpKind k);
inline bool is_collective(OpKind k) { return op_family(k) == OpFamily::Collective; }
// The roles of a builtin collective's window operands, in argument order
// ("data", "signal"; "src", "dst", "signal"; ...). Empty for other ops.
const std::vector<std::string>& collective_roles(OpKind k);

// The typed attributes an op carries (the enums of op_attrs.hpp, and small
// structs for the ops that need more than one). Which op carries which:
//   ScalarBinary, TileBinary, TensorBinary  BinaryOp
//   TileUnary UnaryOp, TileCmp CmpKind, Matmul MatmulForm
//   TileReduce AxisReduce, TileExpand AxisExpand, Transpose TransposeAxes,
//   Arange ArangeDirection
//   Notify NotifyKind, Wait WaitKind, Put/Get/PutAsync/RemoteStore AtomicKind
//   Allreduce and ReduceScatter AllreduceAttr, Broadcast and Allgather Algorithm,
//   AllToAllV CountUnit
// Every other op carries none (std::monostate).
struct AxisReduce {  // pl::row_sum ... (row: along each row, to [.., M, 1])
  ReduceKind kind = ReduceKind::Sum;
  bool row = true;
};
struct AxisExpand {  // pl::row_expand_add ... (row: a [.., M, 1] vector)
  ExpandKind kind = ExpandKind::Broadcast;
  bool row = true;
};
struct TransposeAxes {  // the two dims swapped, first < second
  int first = 0, second = 1;
};
struct ArangeDirection {
  bool descending = false;
};
// AllToAllV: what send_counts count. Elements: of the block of numel / P
// elements each destination gets (checked to be in [0, block]); Rows:
// PyPTO's, rows of the source's rows / P rows per destination, clamped to
// [0, rows / P], and recv_counts receives the clamped row count.
struct CountUnit {
  bool rows = false;
};
struct AllreduceAttr {
  ReduceKind op = ReduceKind::Sum;
  Algorithm mode = Algorithm::Mesh;
};
using OpAttr = std::variant<std::monostate, BinaryOp, UnaryOp, CmpKind, MatmulForm, NotifyKind,
                            WaitKind, AtomicKind, ReduceKind, AxisReduce, AxisExpand, TransposeAxes,
                            ArangeDirection, AllreduceAttr, Algorithm, CountUnit>;

using VarId = std::int32_t;

// An op argument: a variable, or an integer/floating immediate.
struct Operand {
  VarId var = -1;
  Expr int_imm;  // set for integer immediates (may mention dims)
  double float_imm = 0;
  bool is_float_imm = false;
  bool is_var() const { return var >= 0; }
  static Operand of_var(VarId v) { return Operand{v, nullptr, 0, false}; }
  static Operand of_int(Expr e) { return Operand{-1, std::move(e), 0, false}; }
  static Operand of_float(double f) { return Operand{-1, nullptr, f, true}; }
};

struct Function;

struct Op {
  OpKind kind = OpKind::Const;
  VarId result = -1;
  std::vector<Operand> args;
  std::vector<Expr> shape;  // Load/RemoteLoad/AllocWindow/Window/region Put/Get
  std::vector<Expr> valid;  // Load/Store of a partial tile: the region moved (empty: whole)
  DType dtype = DType::INT32;
  OpAttr attr;              // see OpAttr: which op carries which
  int count = 0;            // Put/Get region: number of dst offsets; CommGroup: its form;
                            // Load/Store/RemoteLoad/RemoteStore: run-time valid extents
  bool has_device = false;  // Call: last arg is the device
  Expr blocks;              // Call: the block count (null: one block)
  std::string name;         // AllocWindow: buffer name
  std::shared_ptr<const Function> callee;  // Call
  // HostWorker: the callable (the whole body of a pl::jit::host_worker
  // function; its operands are that function's parameters, in order).
  std::shared_ptr<const HostWorkerBody> host_worker;
  SourceLoc loc;  // where the user recorded it (may be unknown)
};

// Whether a load or store (remote or not) has a run-time valid_shape (its
// last op.count args), and where its other operands end.
bool has_run_time_valid(const Op& op);
std::size_t operands_before_valid(const Op& op);

// The name shown in diagnostics ("pl.add", "pld.system.wait", "call @k").
std::string op_display_name(const Op& op);
// The name and, when known, where the op was recorded: "pl.add at k.py:12".
// Every diagnostic that names an op uses this form.
std::string op_site_name(const Op& op);

// op.attr as a T: an internal error (naming the op) when the op carries
// another attribute, which only a front-end bug can cause.
[[noreturn]] void wrong_attr(const Op& op);
template <class T>
const T& attr_of(const Op& op) {
  if (const T* v = std::get_if<T>(&op.attr)) return *v;
  wrong_attr(op);
}

// A broadcast's or allgather's algorithm (Mesh when the op carries none).
inline Algorithm collective_algorithm(const Op& op) {
  const auto* a = std::get_if<Algorithm>(&op.attr);
  return a ? *a : Algorithm::Mesh;
}

// The memory operands (tensor or window views) that `op` writes, on this rank
// or on a peer, as indices into op.args: a store's target, a get's
// destination, a collective's in-place data, destination and signal, ...
// Calls are not listed: what a callee writes is its parameters' intents.
std::vector<std::size_t> written_memory_operands(const Op& op);
// The operand that `op.result` is a view of (an assignment's source, a
// slice's tensor, a host index's tensor, a store's target, a collective's
// in-place window), or -1 when the result is a new value.
int result_view_operand(const Op& op);

}  // namespace anyp::ir
