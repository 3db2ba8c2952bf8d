// lowered_code.hpp — what the compiler hands the runtime: flat, resumable
// code per orchestration function (kernels inlined, loops and branches as
// jumps), the per-rank dispatch list, and the window layout.
//
// A rank's whole state is (dispatch index, pc, registers), so a wait that
// cannot complete parks the rank and frees its worker. Registers come in
// three files: scalars (s), tiles (t) and tensor views (v).
//
// Instruction format: op, sub (enum payload), dst/a/b/c register numbers,
// idx (offset registers), shape (static extents), imm/fimm, site.
//   Const      s[dst] = imm | fimm (is_float)
//   Mov        s[dst] = s[a]        MovTile t[dst] = t[a]     MovView v[dst] = v[a]
//   ScalarBin  s[dst] = s[a] <sub:BinaryOp> s[b]  (dtype: result type)
//   ScalarNot  s[dst] = !s[a]       ScalarCast s[dst] = cast(s[a], dtype)
//   Jump       pc = imm             JumpIfZero if s[a] == 0: pc = imm
//   JumpIfGe   if s[a] >= s[b]: pc = imm
//   Load       t[dst] = v[a] at idx, shape        Store v[b] at idx = t[a]
//   Read       s[dst] = v[a] at idx               Write v[a] at idx = s[b]
//   TileBin    t[dst] = t[a] <sub> (t[b] | s[b] when flag)
//   TileCast   t[dst] = cast(t[a], dtype)
//   Rank       s[dst] = rank        NRanks s[dst] = P
//   Notify     signal v[a] of peer s[b] at idx: <sub:NotifyKind> s[c]
//   Wait       own signal v[a] at idx <sub:WaitKind> s[b], else park
//   Put/Get    dst v[a], peer s[b], src v[c]; idx = dst offsets (count) then
//              src offsets; shape = region (empty: whole); sub = AtomicKind
//   RemoteLoad  t[dst] = peer s[b]'s v[a] at idx, shape
//   RemoteStore peer s[b]'s v[a] at idx = t[c] (sub = AtomicKind)
// Flat forms (builtin collectives; offsets and lengths in elements, at run time):
//   LoadFlat   t[dst] = rank s[b]'s v[a] elements [s[idx0], s[idx0] + s[idx1])  (1-D tile)
//   StoreFlat  rank s[b]'s v[a] elements from s[idx0] = t[c]
//   PutFlat    peer s[b]'s v[a] from s[idx0] = local v[c] elements [s[idx1], + s[idx2])
//   CheckCount fail unless 0 <= s[a] <= s[b] (all_to_all_v send counts)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anyp/dtype.hpp"

namespace anyp::runtime {

enum class Opcode : std::uint8_t {
  Const,
  Mov,
  MovTile,
  MovView,
  ScalarBin,
  ScalarNot,
  ScalarCast,
  Jump,
  JumpIfZero,
  JumpIfGe,
  Load,
  Store,
  Read,
  Write,
  TileBin,
  TileCast,
  Rank,
  NRanks,
  Notify,
  Wait,
  Put,
  Get,
  RemoteLoad,
  RemoteStore,
  LoadFlat,
  StoreFlat,
  PutFlat,
  CheckCount,
};
const char* opcode_name(Opcode op);

// Where an instruction came from, for diagnostics.
struct Site {
  std::string function;  // the user function ("get_step")
  std::string op;        // the user-level op ("pld.system.wait", "pld.tensor.barrier")
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
};

// A symmetric window buffer: same offset in every rank's window.
struct WindowBuffer {
  std::string name;
  std::int64_t offset = 0;  // bytes from the start of a rank's window
  std::int64_t bytes = 0;   // slot size, rounded up to 32 B
  std::int64_t used = 0;    // requested size
};

// How one parameter of a dispatch is bound on its rank.
struct ArgBinding {
  enum class Kind { HostTensor, Window, Int, Float } kind = Kind::Int;
  std::int32_t host_param = -1;  // HostTensor: index into the run's arguments
  std::int64_t byte_offset = 0;  // HostTensor: from its data; Window: from window base
  std::int32_t buffer = -1;      // Window: buffer index
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
  std::int64_t int_value = 0;
  double float_value = 0;
};

struct Dispatch {
  std::int32_t code = -1;  // index into Plan codes
  std::vector<ArgBinding> args;
};

}  // namespace anyp::runtime
