// lower_bruck_allgather.cpp — the Bruck allgather as VM code
// (docs/collectives.md §3.5a), on the mesh's [P, 1] signal with the
// counted per-peer credits of PeerCredits.
//
// Rank r first puts its src into its own row r of dst. Round k = 0 ..
// ceil(log2 P) - 1, distance d = 2^k: r holds rows [r, r + min(d, P)) (mod
// P); it credits r - d (which pulls from it this round), waits for the
// credit of r + d, and pulls from r + d the c = min(d, P - d) rows
// [r + d, r + d + c) (mod P: one range, or two where it wraps past row
// P - 1), which r + d holds. Rows keep their places (row s is rank s's), so
// no rotation is needed at the end, which Bruck's rotated buffer has.
// Every rank writes only rows it does not hold and is read only for rows
// it holds. At the end r credits every rank it pulled from (read-done),
// waits for the read-done of every rank that pulled from it, and gives
// every credit back.
//
// The peers r + d are distinct, and so are the r - d; r - d is also some
// r + d' when P - d is a power of two: that peer's ready credit comes
// first (in a round), its read-done last, so the read-done wait counts both.
#include "compiler/lower_bruck_allgather.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace anyp::compiler::collective {

namespace {

using ir::BinaryOp;

bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

}  // namespace

std::int64_t bruck_rounds(std::int64_t ranks) {
  std::int64_t rounds = 0;
  while ((std::int64_t{1} << rounds) < ranks) ++rounds;
  return rounds;
}

void lower_bruck_allgather(CollectiveEmitter& ce, const CollectiveCall& call) {
  const std::int32_t src = call.views[0], dst = call.views[1];
  const std::int64_t n = call.numel[0], P = ce.regs_.world;
  const std::int32_t r = ce.regs_.rank;
  PeerCredits credits(ce, call.views[2]);
  ce.put_flat(dst, r, ce.op(BinaryOp::Mul, r, ce.c(n)), src, ce.c(0), ce.c(n));
  const std::int64_t rounds = bruck_rounds(P);
  std::vector<std::int32_t> from(static_cast<std::size_t>(rounds)),
      to(static_cast<std::size_t>(rounds));
  for (std::int64_t k = 0; k < rounds; ++k) {
    const std::int64_t d = std::int64_t{1} << k, c = std::min(d, P - d);
    const std::int32_t first = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(d)), ce.c(P));
    from[static_cast<std::size_t>(k)] = first;  // rank r + d, whose row r + d comes first
    to[static_cast<std::size_t>(k)] =
        ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(P - d)), ce.c(P));
    credits.credit(to[static_cast<std::size_t>(k)]);
    credits.wait_for(first, 1);
    // Rows [first, first + c) mod P: up to row P - 1, then from row 0.
    const std::int32_t head = ce.op(BinaryOp::Min, ce.c(c), ce.op(BinaryOp::Sub, ce.c(P), first));
    const std::int32_t tail = ce.op(BinaryOp::Sub, ce.c(c), head);
    const std::int64_t pieces = chunks_for(c * n, call.dtypes[1]);
    auto pull_rows = [&](std::int32_t row, std::int32_t count) {
      ce.for_pieces(ce.op(BinaryOp::Mul, row, ce.c(n)), ce.op(BinaryOp::Mul, count, ce.c(n)),
                    pieces, [&](std::int32_t off, std::int32_t len) {
                      ce.store_flat(dst, r, off, ce.load_flat(dst, first, off, len));
                    });
    };
    pull_rows(first, head);
    ce.when(ce.op(BinaryOp::Gt, tail, ce.c(0)), [&] { pull_rows(ce.c(0), tail); });
  }
  for (std::int32_t peer : from) credits.credit(peer);  // read-done
  for (std::int64_t k = 0; k < rounds; ++k) {
    const std::int64_t d = std::int64_t{1} << k;
    credits.wait_for(to[static_cast<std::size_t>(k)], is_power_of_two(P - d) ? 2 : 1);
  }
  for (std::int64_t k = 0; k < rounds; ++k) {
    credits.give_back(from[static_cast<std::size_t>(k)], 1);
    credits.give_back(to[static_cast<std::size_t>(k)], 1);
  }
}

}  // namespace anyp::compiler::collective
