// lower_collectives.cpp — the builtin collectives as VM code.
#include "compiler/lower_collectives.hpp"

#include <functional>
#include <string>
#include <utility>

#include "common/internal_check.hpp"

namespace anyp::compiler {

using runtime::Instr;
using runtime::Opcode;

namespace {

// Which cell of a signal belongs to rank `who` (registers for row, column).
using CellOf = std::function<std::pair<std::int32_t, std::int32_t>(std::int32_t who)>;

ir::BinaryOp reduce_binary(ir::ReduceKind k) {
  switch (k) {
    case ir::ReduceKind::Sum:
      return ir::BinaryOp::Add;
    case ir::ReduceKind::Max:
      return ir::BinaryOp::Max;
    case ir::ReduceKind::Min:
      return ir::BinaryOp::Min;
    case ir::ReduceKind::Prod:
      return ir::BinaryOp::Mul;
  }
  return ir::BinaryOp::Add;
}

class CollectiveEmitter {
 public:
  CollectiveEmitter(Emitter& e, const CollectiveRegs& regs, const CollectiveCall& call)
      : e_(e), regs_(regs) {
    for (std::size_t k = 0; k < call.views.size(); ++k)
      if (call.views[k] >= 0 && call.ranks[k] == 1) one_dim_.push_back(call.views[k]);
  }

  // The index of cell (row, column) of view `view`: {row} when the view has
  // one dim (the column is then always 0).
  std::vector<std::int32_t> cell_index(std::int32_t view,
                                       std::pair<std::int32_t, std::int32_t> cell) const {
    for (std::int32_t v : one_dim_)
      if (v == view) return {cell.first};
    return {cell.first, cell.second};
  }

  std::int32_t c(std::int64_t v) { return e_.int_constant(v); }
  std::int32_t op(ir::BinaryOp kind, std::int32_t a, std::int32_t b) {
    Instr i;
    i.op = Opcode::ScalarBin;
    i.sub = static_cast<std::uint8_t>(kind);
    i.dst = e_.scalar_reg();
    i.a = a;
    i.b = b;
    i.dtype = DType::INT64;
    e_.emit(i);
    return i.dst;
  }

  // Cells of an [NR, 1] signal: rank s's credits sit in row s (column b,
  // the block's lane, in a multi-block collective).
  CellOf mesh_cells() {
    return [this](std::int32_t who) {
      return std::make_pair(who, regs_.block >= 0 ? regs_.block : c(0));
    };
  }
  void notify(std::int32_t signal, std::int32_t peer, std::pair<std::int32_t, std::int32_t> cell,
              std::int32_t value, ir::NotifyKind kind = ir::NotifyKind::AtomicAdd) {
    Instr i;
    i.op = Opcode::Notify;
    i.sub = static_cast<std::uint8_t>(kind);
    i.a = signal;
    i.b = peer;
    i.c = value;
    i.idx = cell_index(signal, cell);
    e_.emit(i);
  }

  void wait(std::int32_t signal, std::pair<std::int32_t, std::int32_t> cell,
            std::int32_t expected) {
    Instr i;
    i.op = Opcode::Wait;
    i.sub = static_cast<std::uint8_t>(ir::WaitKind::Ge);
    i.a = signal;
    i.b = expected;
    i.idx = cell_index(signal, cell);
    e_.emit(i);
  }

  // Barrier number `expected` (a register holding k) of the current call.
  void barrier(std::int32_t signal, const CellOf& cell, std::int32_t expected) {
    e_.for_range(c(0), regs_.nranks, regs_.rank,
                 [&](std::int32_t peer) { notify(signal, peer, cell(regs_.rank), c(1)); });
    e_.for_range(c(0), regs_.nranks, regs_.rank,
                 [&](std::int32_t s) { wait(signal, cell(s), expected); });
  }

  // Gives back the `total` credits of one call: every cell returns to 0.
  void epilogue(std::int32_t signal, const CellOf& cell, std::int64_t total) {
    epilogue_minus(signal, cell, c(-total));
  }
  // The same, with -total in a register (a block's barrier count is known
  // at run time).
  void epilogue_minus(std::int32_t signal, const CellOf& cell, std::int32_t minus) {
    e_.for_range(c(0), regs_.nranks, regs_.rank,
                 [&](std::int32_t s) { notify(signal, regs_.rank, cell(s), minus); });
  }
  // This block's share of `count` items dealt out block-cyclically:
  // ceil((count - b) / blocks) (0 when b >= count).
  std::int32_t share_of(std::int64_t count) {
    using ir::BinaryOp;
    return op(BinaryOp::Div, op(BinaryOp::Sub, c(count + regs_.blocks - 1), regs_.block),
              c(regs_.blocks));
  }
  // Item k of this block's share: b + k * blocks.
  std::int32_t item(std::int32_t k) {
    using ir::BinaryOp;
    return op(BinaryOp::Add, regs_.block, op(BinaryOp::Mul, k, c(regs_.blocks)));
  }

  std::int32_t load_flat(std::int32_t view, std::int32_t rank, std::int32_t offset,
                         std::int32_t len) {
    const std::int32_t tile = e_.tile_reg();
    load_flat_into(tile, view, rank, offset, len);
    return tile;
  }
  void load_flat_into(std::int32_t tile, std::int32_t view, std::int32_t rank, std::int32_t offset,
                      std::int32_t len) {
    Instr i;
    i.op = Opcode::LoadFlat;
    i.dst = tile;
    i.a = view;
    i.b = rank;
    i.idx = {offset, len};
    e_.emit(i);
  }
  void store_flat(std::int32_t view, std::int32_t rank, std::int32_t offset, std::int32_t tile) {
    Instr i;
    i.op = Opcode::StoreFlat;
    i.a = view;
    i.b = rank;
    i.c = tile;
    i.idx = {offset};
    e_.emit(i);
  }
  void put_flat(std::int32_t dst, std::int32_t peer, std::int32_t dst_offset, std::int32_t src,
                std::int32_t src_offset, std::int32_t len) {
    Instr i;
    i.op = Opcode::PutFlat;
    i.a = dst;
    i.b = peer;
    i.c = src;
    i.idx = {dst_offset, src_offset, len};
    e_.emit(i);
  }
  void reduce_into(std::int32_t acc, std::int32_t other, ir::ReduceKind kind) {
    Instr i;
    i.op = Opcode::TileBin;
    i.sub = static_cast<std::uint8_t>(reduce_binary(kind));
    i.dst = acc;
    i.a = acc;
    i.b = other;
    e_.emit(i);
  }
  void jump_if_zero(std::int32_t cond, std::size_t& patch_at) {
    Instr i;
    i.op = Opcode::JumpIfZero;
    i.a = cond;
    patch_at = e_.emit(i);
  }

  // body(j) for j = 0 .. count - 1: a run-time loop, or straight code when
  // count is 1 (a collective's data mostly fits one chunk).
  void repeat(std::int64_t count, const std::function<void(std::int32_t)>& body) {
    if (count == 1) return body(c(0));
    e_.for_range(c(0), c(count), -1, body);
  }
  // Part j of `parts` near-equal parts of [begin, begin + len): (offset,
  // length) registers, [begin + j·len/parts, begin + (j+1)·len/parts).
  std::pair<std::int32_t, std::int32_t> part(std::int32_t begin, std::int32_t len, std::int32_t j,
                                             std::int64_t parts) {
    using ir::BinaryOp;
    if (parts == 1) return {begin, len};
    const std::int32_t lo = op(BinaryOp::Div, op(BinaryOp::Mul, j, len), c(parts));
    const std::int32_t hi =
        op(BinaryOp::Div, op(BinaryOp::Mul, op(BinaryOp::Add, j, c(1)), len), c(parts));
    return {op(BinaryOp::Add, begin, lo), op(BinaryOp::Sub, hi, lo)};
  }

  Emitter& e_;
  const CollectiveRegs& regs_;
  std::vector<std::int32_t> one_dim_;  // view registers of one-dim windows
};

std::int64_t chunks_for(std::int64_t elements, DType dtype) {
  const std::int64_t bytes = elements * static_cast<std::int64_t>(dtype_bytes(dtype));
  return std::max<std::int64_t>(1, (bytes + kCollectiveChunkBytes - 1) / kCollectiveChunkBytes);
}

}  // namespace

std::int64_t block_chunks(std::int64_t elements, DType dtype, std::int64_t blocks) {
  return std::max(chunks_for(elements, dtype), std::min(blocks, elements));
}

namespace {

// Mesh: barrier 1 (all staged); per chunk: pull every peer's chunk and reduce,
// read-done barrier, overwrite my chunk. B = 1 + K.
void lower_mesh_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
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
// neighbour's credit for round g is in cell {g, left}, then gives the right
// neighbour its credit for round g + 1 in cell {g + 1, r}. After the last
// round: read-done to the left (cell {0, left} of the left neighbour: its
// own column, which no ready credit uses), a wait for the right
// neighbour's read-done in {0, r}, and the epilogue (-1 on each cell used).
void lower_ring_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  using ir::BinaryOp;
  const std::int32_t data = call.views[0], signal = call.views[1];
  const std::int64_t n = call.numel[0], world = ce.regs_.world, rounds = 2 * (world - 1);
  const std::int64_t subs = chunks_for((n + world - 1) / world, call.dtypes[0]);
  const std::int32_t r = ce.regs_.rank, p = ce.regs_.nranks;
  const std::int32_t left = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(world - 1)), p);
  const std::int32_t right = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(1)), p);
  const std::int32_t one = ce.c(1);
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
    ce.wait(signal, {g, left}, one);
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
    if (credit_next) ce.notify(signal, right, {ce.op(BinaryOp::Add, g, one), r}, one);
  };
  ce.notify(signal, right, {ce.c(0), r}, one);  // my staged data, for its round 0
  ce.e_.for_range(ce.c(0), ce.c(world - 1), -1, [&](std::int32_t g) { round(g, true, true); });
  ce.e_.for_range(ce.c(world - 1), ce.c(rounds - 1), -1,
                  [&](std::int32_t g) { round(g, false, true); });
  round(ce.c(rounds - 1), false, false);
  ce.notify(signal, left, {ce.c(0), left}, one);  // read-done: I read the left window no more
  ce.wait(signal, {ce.c(0), r}, one);             // the right neighbour reads mine no more
  const std::int32_t minus = ce.c(-1);
  ce.e_.for_range(ce.c(0), ce.c(rounds), -1, [&](std::int32_t g) {
    ce.notify(signal, r, {g, left}, minus);
  });
  ce.notify(signal, r, {ce.c(0), r}, minus);
}

}  // namespace

void lower_collective(Emitter& e, const CollectiveRegs& regs, const CollectiveCall& call) {
  CollectiveEmitter ce(e, regs, call);
  const std::int32_t r = regs.rank;
  const CellOf mesh = ce.mesh_cells();
  switch (call.kind) {
    case ir::OpKind::Barrier:
      ce.barrier(call.views[0], mesh, ce.c(1));
      ce.epilogue(call.views[0], mesh, 1);
      return;
    case ir::OpKind::Allreduce:
      if (call.mode == ir::AllreduceKind::Ring) return lower_ring_allreduce(ce, call);
      if (regs.block >= 0) return lower_block_mesh_allreduce(ce, call);
      return lower_mesh_allreduce(ce, call);
    case ir::OpKind::Broadcast: {
      const std::int32_t data = call.views[0], signal = call.views[1];
      ce.barrier(signal, mesh, ce.c(1));
      const std::int32_t not_root = ce.op(ir::BinaryOp::Ne, r, ce.c(call.root));
      std::size_t skip = 0;
      ce.jump_if_zero(not_root, skip);
      const std::int32_t t = ce.load_flat(data, ce.c(call.root), ce.c(0), ce.c(call.numel[0]));
      ce.store_flat(data, r, ce.c(0), t);
      e.patch(skip, e.here());
      ce.epilogue(signal, mesh, 1);
      return;
    }
    case ir::OpKind::Allgather: {
      const std::int32_t src = call.views[0], dst = call.views[1], signal = call.views[2];
      const std::int64_t n = call.numel[0];
      const std::int32_t my_row = ce.op(ir::BinaryOp::Mul, r, ce.c(n));
      e.for_range(ce.c(0), regs.nranks, -1, [&](std::int32_t peer) {
        ce.put_flat(dst, peer, my_row, src, ce.c(0), ce.c(n));
      });
      ce.barrier(signal, mesh, ce.c(1));
      ce.epilogue(signal, mesh, 1);
      return;
    }
    case ir::OpKind::ReduceScatter: {
      const std::int32_t data = call.views[0], signal = call.views[1];
      const std::int64_t n = call.numel[0] / regs.world;
      ce.barrier(signal, mesh, ce.c(1));
      const std::int32_t off = ce.op(ir::BinaryOp::Mul, r, ce.c(n));
      const std::int32_t acc = ce.load_flat(data, ce.c(0), off, ce.c(n));  // rank order 0..P-1
      const std::int32_t part = e.tile_reg();
      e.for_range(ce.c(1), regs.nranks, -1, [&](std::int32_t peer) {
        ce.load_flat_into(part, data, peer, off, ce.c(n));
        ce.reduce_into(acc, part, call.reduce);
      });
      ce.barrier(signal, mesh, ce.c(2));
      ce.store_flat(data, r, off, acc);
      ce.epilogue(signal, mesh, 2);
      return;
    }
    case ir::OpKind::AllToAll:
    case ir::OpKind::AllToAllV: {
      const bool v = call.kind == ir::OpKind::AllToAllV;
      const std::int32_t src = call.views[0], dst = call.views[v ? 2 : 1],
                         signal = call.views[v ? 4 : 2];
      const std::int64_t row = call.numel[0] / regs.world;
      const std::int32_t my_row = ce.op(ir::BinaryOp::Mul, r, ce.c(row));
      // Every destination, or this block's share of them (d = b mod B).
      const std::int32_t count = regs.block >= 0 ? ce.share_of(regs.world) : regs.nranks;
      e.for_range(ce.c(0), count, -1, [&](std::int32_t k) {
        const std::int32_t d = regs.block >= 0 ? ce.item(k) : k;
        const std::int32_t their_row = ce.op(ir::BinaryOp::Mul, d, ce.c(row));
        std::int32_t len = ce.c(row);
        if (v) {
          Instr read;
          read.op = Opcode::Read;
          read.dst = e.scalar_reg();
          read.a = call.views[1];
          read.idx = ce.cell_index(call.views[1], {d, ce.c(0)});
          e.emit(read);
          Instr check;
          check.op = Opcode::CheckCount;
          check.a = read.dst;
          check.b = ce.c(row);
          e.emit(check);
          len = read.dst;
        }
        ce.put_flat(dst, d, my_row, src, their_row, len);
        if (v) ce.notify(call.views[3], d, {r, ce.c(0)}, len, ir::NotifyKind::Set);
      });
      ce.barrier(signal, mesh, ce.c(1));
      ce.epilogue(signal, mesh, 1);
      return;
    }
    default:
      ANYP_UNREACHABLE(std::string("lower_collective on ") + ir::op_kind_name(call.kind));
  }
}

}  // namespace anyp::compiler
