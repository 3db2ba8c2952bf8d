// lower_collectives.cpp — the builtin collectives as VM code.
#include "compiler/lower_collectives.hpp"

#include <functional>
#include <string>
#include <utility>

#include "anyp/collective_algorithms.hpp"
#include "common/internal_check.hpp"
#include "compiler/collective_emitter.hpp"
#include "compiler/lower_bruck_all_to_all.hpp"
#include "compiler/lower_bruck_allgather.hpp"
#include "compiler/lower_log_allreduce.hpp"
#include "compiler/lower_log_broadcast.hpp"
#include "compiler/lower_pairwise_all_to_all.hpp"
#include "compiler/lower_pairwise_reduce_scatter.hpp"

namespace anyp::compiler {

using runtime::Instr;
using runtime::Opcode;
using namespace collective;

std::int64_t block_chunks(std::int64_t elements, DType dtype, std::int64_t blocks) {
  return std::max(chunks_for(elements, dtype), std::min(blocks, elements));
}

std::int64_t collective_blocks(ir::OpKind kind, std::int64_t ranks, std::int64_t core_num) {
  const bool all_to_all = kind == ir::OpKind::AllToAll || kind == ir::OpKind::AllToAllV;
  if (!all_to_all || core_num < ranks) return core_num;
  return core_num / ranks * ranks;
}

namespace {

// Mesh: barrier 1 (all staged); per chunk: pull every peer's chunk and reduce,
// read-done barrier, overwrite my chunk. B = 1 + K.
void lower_one_block_mesh_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  const std::int32_t data = call.views[0], signal = call.views[1];
  const std::int64_t n = call.numel[0];
  const std::int64_t chunks = chunks_for(n, call.dtypes[0]);
  using ir::BinaryOp;
  const CellOf cells = ce.mesh_cells();
  ce.barrier(signal, cells, ce.c(1));
  const std::int32_t acc = ce.e_.tile_reg(), part = ce.e_.tile_reg();
  // Chunk k = [k*n/K, (k+1)*n/K), in a run-time loop: code size and tile
  // memory stay constant whatever the data size.
  ce.repeat(chunks, [&](std::int32_t k) {
    const auto [off, len] = ce.part(ce.c(0), ce.c(n), k, chunks);
    // Every rank reduces in rank order 0..P-1, so the replicas agree bitwise.
    ce.load_flat_into(acc, data, ce.c(0), off, len);
    ce.e_.for_range(ce.c(1), ce.regs_.nranks, -1, [&](std::int32_t peer) {
      ce.load_flat_into(part, data, peer, off, len);
      ce.reduce_into(acc, part, call.reduce);
    });
    ce.barrier(signal, cells, ce.op(BinaryOp::Add, k, ce.c(2)));  // read-done: barrier 2 + k
    ce.store_flat(data, ce.regs_.rank, off, acc);
  });
  ce.epilogue(signal, cells, 1 + chunks);
}

// Mesh over core_num blocks B: the data in K = max(16 KiB chunks, min(B,
// n)) near-equal chunks, chunk j to block j mod B. Block b on lane b:
// barrier 1; per chunk of its share: pull every peer's chunk and reduce,
// read-done barrier, overwrite my chunk; 1 + share barriers.
void lower_block_mesh_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  using ir::BinaryOp;
  const std::int32_t data = call.views[0], signal = call.views[1];
  const std::int64_t n = call.numel[0];
  const std::int64_t chunks = block_chunks(n, call.dtypes[0], ce.regs_.blocks);
  const CellOf cells = ce.mesh_cells();
  ce.barrier(signal, cells, ce.c(1));
  const std::int32_t share = ce.share_of(chunks);
  const std::int32_t acc = ce.e_.tile_reg(), part = ce.e_.tile_reg();
  ce.e_.for_range(ce.c(0), share, -1, [&](std::int32_t k) {
    const auto [off, len] = ce.part(ce.c(0), ce.c(n), ce.item(k), chunks);
    ce.load_flat_into(acc, data, ce.c(0), off, len);  // rank order 0..P-1, as one block does
    ce.e_.for_range(ce.c(1), ce.regs_.nranks, -1, [&](std::int32_t peer) {
      ce.load_flat_into(part, data, peer, off, len);
      ce.reduce_into(acc, part, call.reduce);
    });
    ce.barrier(signal, cells, ce.op(BinaryOp::Add, k, ce.c(2)));  // read-done: barrier 2 + k
    ce.store_flat(data, ce.regs_.rank, off, acc);
  });
  ce.epilogue_minus(signal, cells, ce.op(BinaryOp::Sub, ce.c(-1), share));
}

// Ring: 2(P-1) rounds with neighbour handshakes only (collectives.md §3.3).
// Round g pulls segment k = (r - g - 1) mod P from the left neighbour
// (reduce-scatter: accumulate; all-gather: overwrite) once the left
// neighbour's credit for round g is in, then gives the right neighbour its
// credit for round g + 1. After the last round: read-done to the left, a
// wait for the right neighbour's read-done, and the epilogue.
// Two signal forms:
//   [2(P - 1), P]: the credit for round g in cell {g, left}, expected 1; the
//     read-done in the left neighbour's own column, cell {0, left}; the
//     epilogue gives back 1 on each cell used.
//   [P, 1] (the mesh's): every credit from the left neighbour in cell
//     {left}, counted (round g expects g + 1); the read-done from the
//     right in cell {right} (at P = 2 left is right: its read-done is that
//     cell's credit 2(P - 1) + 1); the epilogue gives back each cell's count.
void lower_ring_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  using ir::BinaryOp;
  const std::int32_t data = call.views[0], signal = call.views[1];
  const std::int64_t n = call.numel[0], world = ce.regs_.world, rounds = 2 * (world - 1);
  const bool compact = call.numel[1] == world;
  const std::int64_t subs = chunks_for((n + world - 1) / world, call.dtypes[0]);
  const std::int32_t r = ce.regs_.rank, p = ce.regs_.nranks;
  const std::int32_t left = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(world - 1)), p);
  const std::int32_t right = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(1)), p);
  const std::int32_t one = ce.c(1), zero = ce.c(0);
  // The cell of the credit for round g (to the right neighbour: in its
  // cells, written from my side), and the wait for mine from the left.
  auto credit_right = [&](std::int32_t g) {
    ce.notify(signal, right, compact ? std::make_pair(r, zero) : std::make_pair(g, r), one);
  };
  auto wait_left = [&](std::int32_t g) {
    if (compact) return ce.wait(signal, {left, zero}, ce.op(BinaryOp::Add, g, one));
    ce.wait(signal, {g, left}, one);
  };
  // Segment k = (r - g - 1) mod P in both phases: reduce-scatter step s = g
  // pulls (r - s - 1); all-gather step s = g - (P - 1) pulls (r - s), the
  // same residue. (+2P keeps the dividend positive; C's % truncates.)
  const std::int32_t r_shifted = ce.op(BinaryOp::Add, r, ce.c(2 * world - 1));
  // Round g (a register): pull segment k from the left neighbour once its
  // credit is in, reduce it into mine (reduce-scatter) or overwrite mine
  // (all-gather), then credit the right neighbour for round g + 1. The
  // phases and the last round (no credit) are separate loops, so a round
  // tests nothing; the segment is k·(n/P) long when P divides n.
  auto round = [&](std::int32_t g, bool reduce, bool credit_next) {
    wait_left(g);
    const std::int32_t k = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Sub, r_shifted, g), p);
    std::int32_t seg_begin = 0, seg_len = 0;
    if (n % world == 0) {
      seg_begin = ce.op(BinaryOp::Mul, k, ce.c(n / world));
      seg_len = ce.c(n / world);
    } else {
      seg_begin = ce.op(BinaryOp::Div, ce.op(BinaryOp::Mul, k, ce.c(n)), p);
      const std::int32_t seg_end =
          ce.op(BinaryOp::Div, ce.op(BinaryOp::Mul, ce.op(BinaryOp::Add, k, one), ce.c(n)), p);
      seg_len = ce.op(BinaryOp::Sub, seg_end, seg_begin);
    }
    ce.repeat(subs, [&](std::int32_t j) {
      const auto [off, len] = ce.part(seg_begin, seg_len, j, subs);
      const std::int32_t incoming = ce.load_flat(data, left, off, len);
      if (reduce) {
        const std::int32_t mine = ce.load_flat(data, r, off, len);
        ce.reduce_into(incoming, mine, call.reduce);
      }
      ce.store_flat(data, r, off, incoming);
    });
    // My round-g segment, for its round g + 1.
    if (credit_next) credit_right(ce.op(BinaryOp::Add, g, one));
  };
  credit_right(zero);  // my staged data, for its round 0
  ce.e_.for_range(zero, ce.c(world - 1), -1, [&](std::int32_t g) { round(g, true, true); });
  ce.e_.for_range(ce.c(world - 1), ce.c(rounds - 1), -1,
                  [&](std::int32_t g) { round(g, false, true); });
  round(ce.c(rounds - 1), false, false);
  const std::int32_t minus = ce.c(-1);
  if (compact) {
    ce.notify(signal, left, {r, zero}, one);  // read-done: I read the left window no more
    ce.wait(signal, {right, zero}, ce.c(world == 2 ? rounds + 1 : 1));
    ce.notify(signal, r, {left, zero}, ce.c(-rounds));
    ce.notify(signal, r, {right, zero}, minus);
    return;
  }
  ce.notify(signal, left, {zero, left}, one);  // read-done: I read the left window no more
  ce.wait(signal, {zero, r}, one);             // the right neighbour reads mine no more
  ce.e_.for_range(zero, ce.c(rounds), -1, [&](std::int32_t g) {
    ce.notify(signal, r, {g, left}, minus);
  });
  ce.notify(signal, r, {zero, r}, minus);
}

}  // namespace

namespace {

// ---- the Mesh algorithms (docs/collectives.md §3) ------------------------------

void lower_mesh_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  if (ce.regs_.block >= 0) return lower_block_mesh_allreduce(ce, call);
  lower_one_block_mesh_allreduce(ce, call);
}

void lower_mesh_broadcast(CollectiveEmitter& ce, const CollectiveCall& call) {
  const std::int32_t r = ce.regs_.rank;
  const CellOf mesh = ce.mesh_cells();
  const std::int32_t data = call.views[0], signal = call.views[1];
  ce.barrier(signal, mesh, ce.c(1));
  const std::int32_t not_root = ce.op(ir::BinaryOp::Ne, r, ce.c(call.root));
  std::size_t skip = 0;
  ce.jump_if_zero(not_root, skip);
  const std::int32_t t = ce.load_flat(data, ce.c(call.root), ce.c(0), ce.c(call.numel[0]));
  ce.store_flat(data, r, ce.c(0), t);
  ce.e_.patch(skip, ce.e_.here());
  ce.epilogue(signal, mesh, 1);
}

void lower_mesh_allgather(CollectiveEmitter& ce, const CollectiveCall& call) {
  const CellOf mesh = ce.mesh_cells();
  const std::int32_t src = call.views[0], dst = call.views[1], signal = call.views[2];
  const std::int64_t n = call.numel[0];
  const std::int32_t my_row = ce.op(ir::BinaryOp::Mul, ce.regs_.rank, ce.c(n));
  ce.e_.for_range(ce.c(0), ce.regs_.nranks, -1, [&](std::int32_t peer) {
    ce.put_flat(dst, peer, my_row, src, ce.c(0), ce.c(n));
  });
  ce.barrier(signal, mesh, ce.c(1));
  ce.epilogue(signal, mesh, 1);
}

void lower_mesh_reduce_scatter(CollectiveEmitter& ce, const CollectiveCall& call) {
  const std::int32_t r = ce.regs_.rank;
  const CellOf mesh = ce.mesh_cells();
  const std::int32_t data = call.views[0], signal = call.views[1];
  const std::int64_t n = call.numel[0] / ce.regs_.world;
  ce.barrier(signal, mesh, ce.c(1));
  const std::int32_t off = ce.op(ir::BinaryOp::Mul, r, ce.c(n));
  const std::int32_t acc = ce.load_flat(data, ce.c(0), off, ce.c(n));  // rank order 0..P-1
  const std::int32_t part = ce.e_.tile_reg();
  ce.e_.for_range(ce.c(1), ce.regs_.nranks, -1, [&](std::int32_t peer) {
    ce.load_flat_into(part, data, peer, off, ce.c(n));
    ce.reduce_into(acc, part, call.reduce);
  });
  ce.barrier(signal, mesh, ce.c(2));
  ce.store_flat(data, r, off, acc);
  ce.epilogue(signal, mesh, 2);
}

// all_to_all and all_to_all_v (whose send counts say how much of each
// destination's block goes).
void lower_mesh_all_to_all(CollectiveEmitter& ce, const CollectiveCall& call) {
  Emitter& e = ce.e_;
  const CollectiveRegs& regs = ce.regs_;
  const std::int32_t r = regs.rank;
  const CellOf mesh = ce.mesh_cells();
  const bool v = call.kind == ir::OpKind::AllToAllV;
  const std::int32_t src = call.views[0], dst = call.views[v ? 2 : 1],
                     signal = call.views[v ? 4 : 2];
  const std::int64_t row = call.numel[0] / regs.world;
  const std::int32_t my_row = ce.op(ir::BinaryOp::Mul, r, ce.c(row));
  // Every destination (one block); this block's share of them, d = b mod B
  // (B < P); or one destination, d = b mod P, and part b / P of its rows
  // (B = K·P blocks, K parts).
  const bool split = regs.block >= 0 && regs.blocks >= regs.world;
  const std::int64_t parts = split ? regs.blocks / regs.world : 1;
  const std::int32_t count = !split && regs.block >= 0 ? ce.share_of(regs.world)
                             : split                   ? ce.c(1)
                                                       : regs.nranks;
  const std::int32_t part =
      split ? ce.op(ir::BinaryOp::Div, regs.block, ce.c(regs.world)) : ce.c(0);
  e.for_range(ce.c(0), count, -1, [&](std::int32_t k) {
    const std::int32_t d = split ? ce.op(ir::BinaryOp::Mod, regs.block, ce.c(regs.world))
                           : regs.block >= 0 ? ce.item(k)
                                             : k;
    const std::int32_t their_row = ce.op(ir::BinaryOp::Mul, d, ce.c(row));
    std::int32_t len = ce.c(row), published = len;
    if (v) {
      Instr read;
      read.op = Opcode::Read;
      read.dst = e.scalar_reg();
      read.a = call.views[1];
      read.idx = ce.cell_index(call.views[1], {d, ce.c(0)});
      e.emit(read);
      if (call.count_rows) {
        // PyPTO's: rows of this destination's block of rows / P rows,
        // clamped to [0, rows / P]; the clamped count is published.
        const std::int64_t block_rows = call.rows[0] / regs.world;
        const std::int32_t clamped =
            ce.op(ir::BinaryOp::Max, ce.c(0), ce.op(ir::BinaryOp::Min, read.dst, ce.c(block_rows)));
        published = clamped;
        len = ce.op(ir::BinaryOp::Mul, clamped, ce.c(row / block_rows));
      } else {
        Instr check;
        check.op = Opcode::CheckCount;
        check.a = read.dst;
        check.b = ce.c(row);
        e.emit(check);
        len = published = read.dst;
      }
    }
    if (!split) {
      ce.put_flat(dst, d, my_row, src, their_row, len);
      if (v) ce.notify(call.views[3], d, {r, ce.c(0)}, published, ir::NotifyKind::Set);
      return;
    }
    const auto [off, piece] = ce.part(ce.c(0), len, part, parts);
    ce.put_flat(dst, d, ce.op(ir::BinaryOp::Add, my_row, off), src,
                ce.op(ir::BinaryOp::Add, their_row, off), piece);
    // The count is published once per destination, by its part 0.
    if (v) {
      const std::int32_t first =
          ce.op(ir::BinaryOp::Sub, ce.c(1), ce.op(ir::BinaryOp::Min, part, ce.c(1)));
      e.for_range(ce.c(0), first, -1, [&](std::int32_t) {
        ce.notify(call.views[3], d, {r, ce.c(0)}, published, ir::NotifyKind::Set);
      });
    }
  });
  ce.barrier(signal, mesh, ce.c(1));
  ce.epilogue(signal, mesh, 1);
}

}  // namespace

// The lowering of the call's row of its collective's list
// (anyp/collective_algorithms.hpp): lower_<algorithm>_<collective>. A row
// without one does not compile; an algorithm no row names (Auto, chosen
// before lowering) is an internal error, never another algorithm's code.
void lower_collective(Emitter& e, const CollectiveRegs& regs, const CollectiveCall& call) {
  CollectiveEmitter ce(e, regs, call);
  if (call.kind == ir::OpKind::Barrier) {
    ANYP_CHECK(call.mode == ir::Algorithm::Mesh, "lower_collective: a barrier's algorithm is Mesh");
    const CellOf mesh = ce.mesh_cells();
    ce.barrier(call.views[0], mesh, ce.c(1));
    ce.epilogue(call.views[0], mesh, 1);
    return;
  }
  // all_to_all_v runs all_to_all's algorithms.
  const ir::OpKind kind = call.kind == ir::OpKind::AllToAllV ? ir::OpKind::AllToAll : call.kind;
#define ANYP_LOWER_ROW(collective, algorithm, snake_name) \
  if (call.mode == ir::Algorithm::algorithm) return lower_##snake_name##_##collective(ce, call);
#define ANYP_LOWER_COLLECTIVE(Op, Mode, snake_name, LIST) \
  if (kind == ir::OpKind::Op) {                           \
    LIST(ANYP_LOWER_ROW, snake_name)                      \
  }
  ANYP_COLLECTIVES_WITH_MODES(ANYP_LOWER_COLLECTIVE)
#undef ANYP_LOWER_COLLECTIVE
#undef ANYP_LOWER_ROW
  ANYP_UNREACHABLE(std::string("lower_collective: ") + ir::op_kind_name(call.kind) +
                   " has no lowering for algorithm " + ir::algorithm_name(call.mode));
}

}  // namespace anyp::compiler
