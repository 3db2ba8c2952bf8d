// lower_bruck_all_to_all.cpp — Bruck's all_to_all as VM code
// (docs/collectives.md §3.7c; Bruck, Ho, Kipnis, Upfal & Weathersby 1997;
// Thakur, Rabenseifner & Gropp 2005, §3), on the mesh's [P, 1] signal with
// the counted per-peer credits of PeerCredits, through a scratch window the
// compiler adds: a pack area, then two receive halves, floor(P / 2) rows
// each.
//
// Bruck index i (0 <= i < P) of rank r is row (r - i) mod P of its dst.
// First r copies src row (r + i) mod P into index i: the row bound for rank
// r + i. Round k = 0 .. ceil(log2 P) - 1, d = 2^k: r packs the indices
// with bit k set (runs of d rows, each one or, where it wraps past row
// P - 1, two ranges of dst) into its pack area, puts the packed rows into
// receive half k mod 2 of rank r + d in one put and credits it (Ready(k):
// the door delivers a notify after the put before it), waits for Ready(k)
// of r - d and unpacks that half into the same indices. A row goes up by
// 2^k at each bit k of its index, so the row of rank r - i bound for rank r
// ends at index i of rank r: row r - i of dst, its place, and no rotation
// is needed at the end.
//
// A receive half is reused two rounds later: r credits Free(k + 2) to its
// writer r - 2^(k+2) once it has unpacked round k, and Free(0), Free(1) at
// the start of a call (its unpacks of the call before are done), so every
// call is protected from the next one. dst and src are touched by their own
// rank only. Each peer's credits are counted in its program order and
// given back at the end: the signal is 0 again when the call ends.
#include "compiler/lower_bruck_all_to_all.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace anyp::compiler::collective {

std::vector<BruckRound> bruck_all_to_all_rounds(std::int64_t P) {
  std::vector<BruckRound> rounds;
  for (std::int64_t d = 1; d < P; d *= 2) {
    BruckRound b;
    b.distance = d;
    b.runs = (P - d + 2 * d - 1) / (2 * d);
    for (std::int64_t m = 0; m < b.runs; ++m) b.blocks += std::min(d, P - (2 * m + 1) * d);
    rounds.push_back(b);
  }
  return rounds;
}

std::map<std::int64_t, std::vector<BruckCreditAt>> bruck_all_to_all_credits(std::int64_t P) {
  // A sender's program: Free(0) and Free(1) first; then per round k its
  // Ready(k), later its Free(k + 2). Order keys (round, phase) follow it.
  using Key = std::pair<std::int64_t, int>;
  std::map<std::int64_t, std::vector<std::pair<Key, BruckCreditAt>>> keyed;
  const std::vector<BruckRound> rounds = bruck_all_to_all_rounds(P);
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    const std::int64_t d = rounds[k].distance, round = static_cast<std::int64_t>(k);
    keyed[P - d].push_back({Key{round, 0}, {BruckCredit::Ready, round}});
    const Key free_at = round < 2 ? Key{-1, static_cast<int>(round)} : Key{round - 2, 1};
    keyed[d].push_back({free_at, {BruckCredit::Free, round}});
  }
  std::map<std::int64_t, std::vector<BruckCreditAt>> credits;
  for (auto& [distance, list] : keyed) {
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, credit] : list) credits[distance].push_back(credit);
  }
  return credits;
}

std::int64_t bruck_credit_count(const std::map<std::int64_t, std::vector<BruckCreditAt>>& credits,
                                std::int64_t P, BruckCreditAt c) {
  const std::int64_t d = std::int64_t{1} << c.round;
  const std::vector<BruckCreditAt>& list = credits.at(c.kind == BruckCredit::Ready ? P - d : d);
  for (std::size_t n = 0; n < list.size(); ++n)
    if (list[n].kind == c.kind && list[n].round == c.round) return static_cast<std::int64_t>(n) + 1;
  return 0;
}

bool bruck_run_wraps(std::int64_t x, std::int64_t distance, std::int64_t P) {
  return x + 1 < P && (x & distance) != 0 && ((x + 1) & distance) != 0;
}

void lower_bruck_all_to_all(CollectiveEmitter& ce, const CollectiveCall& call) {
  using ir::BinaryOp;
  const std::int32_t src = call.views[0], dst = call.views[1];
  const std::int64_t P = ce.regs_.world, row = call.numel[0] / P, half = P / 2 * row;
  const std::int32_t r = ce.regs_.rank;
  PeerCredits credits(ce, call.views[2]);
  const std::vector<BruckRound> rounds = bruck_all_to_all_rounds(P);
  const auto credit_table = bruck_all_to_all_credits(P);
  const auto peer_at = [&](std::int64_t distance) {
    return ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, ce.c(distance)), ce.c(P));
  };
  const auto rows = [&](std::int32_t count) { return ce.op(BinaryOp::Mul, count, ce.c(row)); };
  std::int32_t scratch = -1;
  if (!rounds.empty()) {
    scratch = ce.e_.scratch_view({ce.e_.site_function() + ".(bruck all_to_all)",
                                  call.dtypes[1],
                                  {3 * half},
                                  ce.regs_.launch_blocks,
                                  /*shared=*/true},
                                 /*group_of=*/dst);
  }
  for (std::size_t k = 0; k < std::min<std::size_t>(2, rounds.size()); ++k)
    credits.credit(peer_at(P - rounds[k].distance));  // Free(k): my receive half k is free
  // Index i: dst row (r - i) mod P = src row (r + i) mod P.
  ce.e_.for_range(ce.c(0), ce.regs_.nranks, -1, [&](std::int32_t i) {
    const std::int32_t to =
        ce.op(BinaryOp::Mod, ce.op(BinaryOp::Sub, ce.op(BinaryOp::Add, r, ce.c(P)), i), ce.c(P));
    const std::int32_t from = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, i), ce.c(P));
    ce.put_flat(dst, r, rows(to), src, rows(from), ce.c(row));
  });
  // body(first dst row, packed row, rows) over my ranges of round b's
  // runs: run m's indices [a, a + len) are rows [lo, lo + len) mod P,
  // lo = (r + 1 - a - len) mod P, packed from row m·d on.
  const auto for_ranges =
      [&](const BruckRound& b,
          const std::function<void(std::int32_t, std::int32_t, std::int32_t)>& body) {
        const std::int64_t d = b.distance;
        ce.repeat(b.runs, [&](std::int32_t m) {
          const std::int32_t a =
              ce.op(BinaryOp::Add, ce.op(BinaryOp::Mul, m, ce.c(2 * d)), ce.c(d));
          const std::int32_t len = ce.op(BinaryOp::Min, ce.c(d), ce.op(BinaryOp::Sub, ce.c(P), a));
          const std::int32_t lo =
              ce.op(BinaryOp::Mod,
                    ce.op(BinaryOp::Sub,
                          ce.op(BinaryOp::Sub, ce.op(BinaryOp::Add, r, ce.c(P + 1)), a), len),
                    ce.c(P));
          const std::int32_t head = ce.op(BinaryOp::Min, len, ce.op(BinaryOp::Sub, ce.c(P), lo));
          const std::int32_t tail = ce.op(BinaryOp::Sub, len, head);
          const std::int32_t packed = ce.op(BinaryOp::Mul, m, ce.c(d));
          body(lo, packed, head);
          ce.when(ce.op(BinaryOp::Gt, tail, ce.c(0)),
                  [&] { body(ce.c(0), ce.op(BinaryOp::Add, packed, head), tail); });
        });
      };
  for (std::size_t k = 0; k < rounds.size(); ++k) {
    const BruckRound& b = rounds[k];
    const auto round = static_cast<std::int64_t>(k);
    const std::int32_t to = peer_at(b.distance), from = peer_at(P - b.distance);
    const std::int32_t received = ce.c((1 + round % 2) * half);  // my receive half
    credits.wait_for(to, bruck_credit_count(credit_table, P, {BruckCredit::Free, round}));
    for_ranges(b, [&](std::int32_t lo, std::int32_t packed, std::int32_t n) {
      ce.put_flat(scratch, r, rows(packed), dst, rows(lo), rows(n));
    });
    ce.put_flat(scratch, to, received, scratch, ce.c(0), ce.c(b.blocks * row));
    credits.credit(to);  // Ready(k)
    credits.wait_for(from, bruck_credit_count(credit_table, P, {BruckCredit::Ready, round}));
    for_ranges(b, [&](std::int32_t lo, std::int32_t packed, std::int32_t n) {
      ce.put_flat(dst, r, rows(lo), scratch, ce.op(BinaryOp::Add, received, rows(packed)), rows(n));
    });
    if (k + 2 < rounds.size()) credits.credit(peer_at(P - rounds[k + 2].distance));  // Free(k + 2)
  }
  for (const auto& [distance, list] : credit_table)
    credits.give_back(peer_at(distance), static_cast<std::int64_t>(list.size()));
}

}  // namespace anyp::compiler::collective
