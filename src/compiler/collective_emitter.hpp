// collective_emitter.hpp — the VM-code vocabulary the builtin collectives
// are written in (lower_collectives.cpp, lower_log_allreduce.cpp): credits
// (notify / wait Ge on signal cells), flat loads, stores and puts, in-place
// reductions, run-time loops and near-equal parts of an element range.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "compiler/emitter.hpp"
#include "compiler/lower_collectives.hpp"

namespace anyp::compiler::collective {

using runtime::Instr;
using runtime::Opcode;

// Which cell of a signal belongs to rank `who` (registers for row, column).
using CellOf = std::function<std::pair<std::int32_t, std::int32_t>(std::int32_t who)>;

inline ir::BinaryOp reduce_binary(ir::ReduceKind k) {
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

  // body() when the register `cond` is non-zero.
  void when(std::int32_t cond, const std::function<void()>& body) {
    std::size_t skip = 0;
    jump_if_zero(cond, skip);
    body();
    e_.patch(skip, e_.here());
  }
  // body(offset, length) over [begin, begin + len) in `pieces` near-equal
  // pieces (chunks_for of the longest len: at most 16 KiB each).
  void for_pieces(std::int32_t begin, std::int32_t len, std::int64_t pieces,
                  const std::function<void(std::int32_t, std::int32_t)>& body) {
    repeat(pieces, [&](std::int32_t j) {
      const auto [off, piece] = part(begin, len, j, pieces);
      body(off, piece);
    });
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

inline std::int64_t chunks_for(std::int64_t elements, DType dtype) {
  const std::int64_t bytes = elements * static_cast<std::int64_t>(dtype_bytes(dtype));
  return std::max<std::int64_t>(1, (bytes + kCollectiveChunkBytes - 1) / kCollectiveChunkBytes);
}

// The credits of the logarithmic collectives on the mesh's [P, 1] signal:
// every credit a rank receives from peer s goes into its cell {s}; a
// peer's credits to one rank in one call are counted up from 1 (waits are
// Ge, so no cell needs a round index), and each call gives back, on its own
// cells, what it received, so the signal is 0 again when the call ends.
class PeerCredits {
 public:
  PeerCredits(CollectiveEmitter& ce, std::int32_t signal) : ce_(ce), signal_(signal) {}
  std::pair<std::int32_t, std::int32_t> cell(std::int32_t who) { return {who, ce_.c(0)}; }
  void credit(std::int32_t peer) { ce_.notify(signal_, peer, cell(ce_.regs_.rank), ce_.c(1)); }
  // Waits until `peer`'s credits number `count` (a register).
  void wait_for_reg(std::int32_t peer, std::int32_t count) { ce_.wait(signal_, cell(peer), count); }
  void wait_for(std::int32_t peer, std::int64_t count) { wait_for_reg(peer, ce_.c(count)); }
  // Gives back `count` credits received from `peer` (-count on my cell {peer}).
  void give_back_reg(std::int32_t peer, std::int32_t minus_count) {
    ce_.notify(signal_, ce_.regs_.rank, cell(peer), minus_count);
  }
  void give_back(std::int32_t peer, std::int64_t count) { give_back_reg(peer, ce_.c(-count)); }

 private:
  CollectiveEmitter& ce_;
  std::int32_t signal_;
};

}  // namespace anyp::compiler::collective
