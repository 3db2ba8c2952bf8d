// lower_collectives.hpp — expansion of the builtin collectives into VM code,
// following the self-clearing credit protocol (docs/design.md §11):
//   barrier k (k = 1..B of one call): notify every peer's cell {r, 0} +1,
//   then wait own cells {s, 0} >= k; epilogue after barrier B: self-notify
//   {s, 0} -= B for every s != r, so every cell returns to 0. (Cell {s} of
//   a one-dim [NR] signal.)
// Data moves with flat (element-range) VM ops whose offsets may depend on the
// rank at run time. Chunks of at most 16 KiB get a read-done barrier before
// their owner overwrites them. Over core_num blocks (CollectiveRegs::block),
// block b runs the same protocol on its own lane, column b of the signal,
// over its share of the work: every chunk j = b (mod core_num) of a Mesh
// allreduce (block_chunks), each with its read-done barrier. An
// all_to_all(_v) runs on B = collective_blocks(...) blocks: below P, block b
// sends to the destinations d = b (mod B); from P on, B is a multiple K·P
// and block b sends part b / P of K of destination b mod P's rows. After the
// launch's join every rank has seen every lane's barrier, so the whole
// collective is done.
#pragma once

#include <cstdint>
#include <vector>

#include "anyp/dtype.hpp"
#include "compiler/emitter.hpp"
#include "ir/op.hpp"

namespace anyp::compiler {

inline constexpr std::int64_t kCollectiveChunkBytes = 16 * 1024;

struct CollectiveRegs {
  std::int32_t rank = -1;    // this rank (scalar reg)
  std::int32_t nranks = -1;  // P (scalar reg)
  std::int64_t world = 0;    // P, known at compile time
  // A multi-block collective (core_num): this block's index (scalar reg,
  // -1: one block) and the block count. Block b's credits use column b of
  // the [P, S] signal.
  std::int32_t block = -1;
  std::int64_t blocks = 1;
  // The blocks of the kernel launch the call is in (pl::blocks; 1: none):
  // the slots of a scratch window the algorithm adds.
  std::int64_t launch_blocks = 1;
};

// The blocks a collective over core_num blocks runs on, among `ranks`
// ranks (PyPTO's admission): an all_to_all(_v) takes core_num below P and
// core_num rounded down to a multiple of P from P on (every destination
// then has as many blocks); the others take core_num.
std::int64_t collective_blocks(ir::OpKind kind, std::int64_t ranks, std::int64_t core_num);

// The chunks of a Mesh allreduce of `elements` over `blocks` blocks: the
// 16 KiB chunks of one block, and at least one per block (as many as there
// are elements); chunk j goes to block j mod blocks.
std::int64_t block_chunks(std::int64_t elements, DType dtype, std::int64_t blocks);

// One collective call: its op, and per argument its view register (or -1),
// element count and dtype (from the bound types).
struct CollectiveCall {
  ir::OpKind kind = ir::OpKind::Barrier;
  ir::ReduceKind reduce = ir::ReduceKind::Sum;
  ir::Algorithm mode = ir::Algorithm::Mesh;
  std::int64_t root = 0;
  std::vector<std::int32_t> views;
  std::vector<std::int64_t> numel;
  std::vector<DType> dtypes;
  // Dims of each argument's view (0 for an immediate): a signal or count
  // window of one dim ([NR], as PyPTO allows) is addressed {s}, not {s, 0}.
  std::vector<std::size_t> ranks;
  std::vector<std::int64_t> rows;  // each argument's dim 0 extent (0: an immediate or 0-d)
  bool count_rows = false;         // AllToAllV: PyPTO's row counts (ir::CountUnit)
};

void lower_collective(Emitter& e, const CollectiveRegs& regs, const CollectiveCall& call);

}  // namespace anyp::compiler
