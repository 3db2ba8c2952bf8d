// cost_cards_test.cpp — the `--cost` card of every ladder example
// (examples/distributed/, steps 01–16), run as a process: each example, mode
// and (steps 11, 14) --op runs with `-d 0,..,P-1 --cost` for P = 2..8 (steps
// 09 and 10 only at P in {2, 3, 4, 5, 6, 8}, docs/ladder-steps.md §3), must exit 0 and
// print `OK` followed by the card (cost_card, src/cli/example_cli.cpp):
//
//   cost card (P=<n>)
//     rank   bytes_in  bytes_out    RMA  notify    +E   wait
//        0 ...                                                   one row per rank
//    total ...
//
// Every rank's row and the total row are checked exactly against the step's
// cost-card formula (docs/ladder-steps.md §5, with docs/collectives.md §3 for
// the builtin collectives), in the accounting of RankCost (compiled_program.hpp): a pull
// (get, remote_load) is bytes_in and 1 RMA of the puller; a push (put,
// remote_store) is bytes_out and 1 RMA of the pusher and bytes_in of the
// receiver; self-accesses are not counted; notify counts notifies to other
// ranks, +E notifies to itself (the builtins' epilogues); wait counts
// completed waits. S = 4·SIZE bytes is one FP32 row.
//
//   01–03             all zero
//   04 hand           0 B, 0 RMA, P-1 notify, P-1 wait
//   04 builtin        S in, 1 RMA, P-1 notify (+E P-1), P-1 wait
//   05 load           S in, 1 RMA, P-1 notify (+E P-1), P-1 wait
//   05 store          S out and S in (from left), 1 RMA, P-1 notify (+E P-1), P-1 wait
//   06/07 put         S out and S in (from left), 1 RMA, 1 notify, 1 wait
//   06/07 get         S in, 1 RMA, 1 notify, 1 wait
//   08                (P-1)·S in, P-1 RMA, P-1 notify, P-1 wait        (SIZE = 960)
//   09                2(P-1)·S/P in, 2(P-1) RMA, 2(P-1) notify, 2(P-1) wait
//   10                as 09 (all notifies to `right`)
//   11 mesh           (P-1)·S in, (P-1)K RMA, (1+K)(P-1) notify (+E P-1), (1+K)(P-1) wait;
//                     K = ceil(S / 16 KiB) = 1
//   11 ring           every segment but two pulled from `left` (2(P-1)·S/P when P divides
//                     SIZE; at P = 7 the segments are uneven), 2(P-1) RMA,
//                     2P-1 notify (+E 2P-1), 2P-1 wait (neighbour handshakes)
//   12 hand/builtin   non-root S in, 1 RMA; root nothing (a pull is counted by the puller);
//                     P-1 notify (+E P-1 in builtin mode), P-1 wait
//   13 hand           (P-1)·S in, P-1 RMA, P-1 notify, P-1 wait
//   13 builtin        (P-1)·S out and (P-1)·S in, P-1 RMA, P-1 notify (+E P-1), P-1 wait
//   14 hand           (P-1)·S in, P-1 RMA, P-1 notify, P-1 wait
//   14 builtin        (P-1)·S in, P-1 RMA, 2(P-1) notify (+E P-1), 2(P-1) wait
//   15 hand/builtin   (P-1)·S out and (P-1)·S in, P-1 RMA, P-1 notify (+E P-1 builtin),
//                     P-1 wait
//   16 (both modes)   non-root (2P-1)·S in, (P-1)·S out, 2P-1 RMA; root 2(P-1)·S in,
//                     (P-1)·S out, 2(P-1) RMA; 4(P-1) notify (+E 3(P-1)), 4(P-1) wait
//
//   k1_tp_mlp         the builtin allreduce of a 2 KiB partial (as 11, SIZE = 512)
//   k2 overlap        (P-1)·C out and in, P-1 RMA, P-1 notify, P-1 wait (C = 4 KiB)
//   k2 bulk           the builtin allgather of C: as 13 builtin
//   k3 overlap        (P-1)·B out and in, P-1 RMA, P-1 notify, P-1 wait (B = 1 KiB)
//   k3 bulk           the builtin reduce_scatter of B: as 14 builtin
//   k4_moe            two all_to_all_v's: bytes by the routing, 2(P-1) RMA,
//                     4(P-1) notify (+E 2P), 2(P-1) wait
//   k5_ring_attention (P-1)·2 KiB out and in, P-1 RMA, 2P-3 notify, 2P-3 wait
//   k6 2d             two mesh allreduces of 4 KiB, over the TP-rank row group then the
//                     DP-rank column group: as 11 mesh with P-1 -> (TP-1) + (DP-1)
//   k6 flat           one mesh allreduce of 4 KiB over the world (11 mesh)
//   k7 one, blocks    a mesh allreduce of 256 KiB, on one block or over core_num 4
//                     blocks (plus the launch protocol's own-window notifies and waits)
//
// The examples directory comes from anyp_test::examples_dir() (tests/support/build_paths.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <anyp/compiled_program.hpp>
#include <cstdint>
#include <functional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "support/build_paths.hpp"
#include "support/run_command.hpp"

namespace {

constexpr std::int64_t kChunkBytes = 16 * 1024;  // the builtins' chunk (part C)

anyp::RankCost cost(std::int64_t in, std::int64_t out, std::int64_t rma, std::int64_t notifies,
                    std::int64_t local, std::int64_t waits) {
  return anyp::RankCost{.bytes_in = in,
                        .bytes_out = out,
                        .rma = rma,
                        .notifies = notifies,
                        .local_notifies = local,
                        .waits = waits};
}

std::string text(const anyp::RankCost& c) {
  std::ostringstream s;
  s << "in " << c.bytes_in << ", out " << c.bytes_out << ", RMA " << c.rma << ", notify "
    << c.notifies << " (+E " << c.local_notifies << "), wait " << c.waits;
  return s.str();
}

// One example invocation: the expected card row of rank r at P ranks.
using Formula = std::function<anyp::RankCost(std::int64_t P, std::int64_t r)>;

struct Case {
  std::string name;  // <example>[_<mode>][_<op>]: how the parameter prints
  std::string example;
  std::string mode;  // "" for none
  std::string op;    // "" for none
  std::vector<std::int64_t> ranks;
  Formula formula;
};

const std::vector<std::int64_t> kAnyP = {2, 3, 4, 5, 6, 7, 8};
const std::vector<std::int64_t> kDividesSize = {2, 3, 4, 5, 6, 8};  // steps 09, 10 (A.4)

// One FP32 row in bytes: SIZE = 64 in steps 04–07 and 12–16, 960 in steps 08–11.
constexpr std::int64_t S = 4 * 64;
constexpr std::int64_t kLargeSize = 960;
constexpr std::int64_t kLargeRow = 4 * kLargeSize;

std::int64_t chunks(std::int64_t bytes) {
  return std::max<std::int64_t>(1, (bytes + kChunkBytes - 1) / kChunkBytes);
}

// Step 11 ring: round g pulls segment (r - g - 1) mod P from left; segment k
// is elements [k·n/P, (k+1)·n/P). The reduce-scatter rounds pull every
// segment but r, the all-gather rounds every segment but r + 1 (the one that
// rank r completed itself).
anyp::RankCost ring_allreduce_of(std::int64_t n, std::int64_t P, std::int64_t r) {
  auto seg = [&](std::int64_t k) { return (k + 1) * n / P - k * n / P; };
  const std::int64_t subs = chunks(4 * ((n + P - 1) / P));
  const std::int64_t in = 4 * (2 * n - seg(r) - seg((r + 1) % P));
  // 2(P - 1) ready credits to `right` and a read-done to `left`; the
  // epilogue gives back each of those cells once.
  const std::int64_t handshakes = 2 * (P - 1) + 1;
  return cost(in, 0, 2 * (P - 1) * subs, handshakes, handshakes, handshakes);
}
anyp::RankCost ring_allreduce(std::int64_t P, std::int64_t r) {
  return ring_allreduce_of(kLargeSize, P, r);
}

// k4_moe's routing (its run()): token t of rank r goes to expert (3r + t^2) mod P.
constexpr std::int64_t kMoeTokens = 8, kMoeRow = 4 * 32;
std::int64_t moe_expert(std::int64_t P, std::int64_t r, std::int64_t t) {
  return (3 * r + t * t) % P;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  auto add = [&](std::string example, std::string mode, std::string op,
                 std::vector<std::int64_t> ranks, Formula f) {
    std::string name = example;
    if (!mode.empty()) name += "_" + mode;
    if (!op.empty()) name += "_" + op;
    cases.push_back(
        {name, std::move(example), std::move(mode), std::move(op), std::move(ranks), std::move(f)});
  };
  const Formula zero = [](std::int64_t, std::int64_t) { return anyp::RankCost{}; };

  // 01–03: no communication at all.
  add("01_hello_rank", "", "", kAnyP, zero);
  add("02_programming_model", "", "", kAnyP, zero);
  add("03_window_buffer", "", "", kAnyP, zero);

  // 04: hbar, or the builtin barrier followed by one pull from right.
  add("04_barrier", "hand", "", kAnyP,
      [](std::int64_t P, std::int64_t) { return cost(0, 0, 0, P - 1, 0, P - 1); });
  add("04_barrier", "builtin", "", kAnyP,
      [](std::int64_t P, std::int64_t) { return cost(S, 0, 1, P - 1, P - 1, P - 1); });

  // 05: a ring shift by one, pulled or pushed, around a builtin barrier.
  add("05_remote_load_store", "load", "", kAnyP,
      [](std::int64_t P, std::int64_t) { return cost(S, 0, 1, P - 1, P - 1, P - 1); });
  add("05_remote_load_store", "store", "", kAnyP,
      [](std::int64_t P, std::int64_t) { return cost(S, S, 1, P - 1, P - 1, P - 1); });

  // 06/07: one transfer and a pairwise handshake, independent of P.
  for (const char* example : {"06_put_get", "07_dynamic_rank_count"}) {
    add(example, "put", "", kAnyP,
        [](std::int64_t, std::int64_t) { return cost(S, S, 1, 1, 0, 1); });
    add(example, "get", "", kAnyP,
        [](std::int64_t, std::int64_t) { return cost(S, 0, 1, 1, 0, 1); });
  }

  // 08: hbar, then every peer's row.
  add("08_allreduce_mesh", "", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * kLargeRow, 0, P - 1, P - 1, 0, P - 1);
  });

  // 09: two hbars; P-1 chunks of S/P pulled in each phase.
  add("09_allreduce_two_phase", "", "", kDividesSize, [](std::int64_t P, std::int64_t) {
    return cost(2 * (P - 1) * kLargeRow / P, 0, 2 * (P - 1), 2 * (P - 1), 0, 2 * (P - 1));
  });

  // 10: 2(P-1) neighbour exchanges of S/P; 1 + (P-1) + (P-2) notifies.
  add("10_allreduce_ring", "", "", kDividesSize, [](std::int64_t P, std::int64_t) {
    return cost(2 * (P - 1) * kLargeRow / P, 0, 2 * (P - 1), 2 * (P - 1), 0, 2 * (P - 1));
  });

  // 11: the builtin allreduce (part C): mesh B = 1 + K barriers, or the ring.
  for (const char* op : {"sum", "max", "min", "prod"}) {
    add("11_allreduce_reveal", "mesh", op, kAnyP, [](std::int64_t P, std::int64_t) {
      const std::int64_t K = chunks(kLargeRow);
      return cost((P - 1) * kLargeRow, 0, (P - 1) * K, (1 + K) * (P - 1), P - 1, (1 + K) * (P - 1));
    });
    add("11_allreduce_reveal", "ring", op, kAnyP, ring_allreduce);
  }

  // 12: every non-root pulls the root's row; the root reads its own.
  add("12_broadcast", "hand", "", kAnyP, [](std::int64_t P, std::int64_t r) {
    return cost(r == 0 ? 0 : S, 0, r == 0 ? 0 : 1, P - 1, 0, P - 1);
  });
  add("12_broadcast", "builtin", "", kAnyP, [](std::int64_t P, std::int64_t r) {
    return cost(r == 0 ? 0 : S, 0, r == 0 ? 0 : 1, P - 1, P - 1, P - 1);
  });

  // 13: hand pulls P-1 rows; the builtin pushes P-1 rows (plus a local self-put).
  add("13_allgather", "hand", "", kAnyP,
      [](std::int64_t P, std::int64_t) { return cost((P - 1) * S, 0, P - 1, P - 1, 0, P - 1); });
  add("13_allgather", "builtin", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * S, (P - 1) * S, P - 1, P - 1, P - 1, P - 1);
  });

  // 14: chunk r (S bytes) pulled from every peer; the builtin has B = 2.
  for (const char* op : {"sum", "max", "min", "prod"}) {
    add("14_reduce_scatter", "hand", op, kAnyP,
        [](std::int64_t P, std::int64_t) { return cost((P - 1) * S, 0, P - 1, P - 1, 0, P - 1); });
    add("14_reduce_scatter", "builtin", op, kAnyP, [](std::int64_t P, std::int64_t) {
      return cost((P - 1) * S, 0, P - 1, 2 * (P - 1), P - 1, 2 * (P - 1));
    });
  }

  // 15: one row pushed to every peer, one row received from every peer.
  add("15_all_to_all", "hand", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * S, (P - 1) * S, P - 1, P - 1, 0, P - 1);
  });
  add("15_all_to_all", "builtin", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * S, (P - 1) * S, P - 1, P - 1, P - 1, P - 1);
  });

  // 16: broadcast (B = 1), mesh allreduce (B = 2, K = 1), allgather (B = 1).
  for (const char* mode : {"shared", "separate"}) {
    add("16_putting_it_together", mode, "", kAnyP, [](std::int64_t P, std::int64_t r) {
      const std::int64_t bcast = r == 0 ? 0 : 1;  // ROOT = 0 reads its own row
      return cost((bcast + 2 * (P - 1)) * S, (P - 1) * S, bcast + 2 * (P - 1), 4 * (P - 1),
                  3 * (P - 1), 4 * (P - 1));
    });
  }
  // The second ladder (examples/kernels/), formulas in each file's header.
  // k1: the builtin allreduce of the [8, 64] FP32 partial (2 KiB, K = 1).
  add("k1_tp_mlp", "mesh", "", kDividesSize, [](std::int64_t P, std::int64_t) {
    const std::int64_t row = 4 * 8 * 64, K = chunks(row);
    return cost((P - 1) * row, 0, (P - 1) * K, (1 + K) * (P - 1), P - 1, (1 + K) * (P - 1));
  });
  add("k1_tp_mlp", "ring", "", kDividesSize,
      [](std::int64_t P, std::int64_t r) { return ring_allreduce_of(8 * 64, P, r); });
  // k2: P-1 chunk puts of [16, 64] FP32 and their Sets, or the builtin allgather.
  constexpr std::int64_t chunk = 4 * 16 * 64;
  add("k2_allgather_gemm", "overlap", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * chunk, (P - 1) * chunk, P - 1, P - 1, 0, P - 1);
  });
  add("k2_allgather_gemm", "bulk", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * chunk, (P - 1) * chunk, P - 1, P - 1, P - 1, P - 1);
  });
  // k3: P-1 remote stores of [8, 32] FP32 blocks, or the builtin reduce_scatter.
  constexpr std::int64_t block = 4 * 8 * 32;
  add("k3_gemm_reduce_scatter", "overlap", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * block, (P - 1) * block, P - 1, P - 1, 0, P - 1);
  });
  add("k3_gemm_reduce_scatter", "bulk", "", kAnyP, [](std::int64_t P, std::int64_t) {
    return cost((P - 1) * block, 0, P - 1, 2 * (P - 1), P - 1, 2 * (P - 1));
  });
  // k4: two all_to_all_v's (B = 1 each). A rank pushes its tokens routed
  // elsewhere and the results of the tokens it received; it receives as many.
  add("k4_moe", "", "", kAnyP, [](std::int64_t P, std::int64_t r) {
    std::int64_t away = 0, arrived = 0;
    for (std::int64_t q = 0; q < P; ++q)
      for (std::int64_t t = 0; t < kMoeTokens; ++t) {
        const std::int64_t e = moe_expert(P, q, t);
        if (q == r && e != r) ++away;
        if (q != r && e == r) ++arrived;
      }
    const std::int64_t bytes = (away + arrived) * kMoeRow;
    return cost(bytes, bytes, 2 * (P - 1), 4 * (P - 1), 2 * P, 2 * (P - 1));
  });
  // k5: P-1 block puts of [16, 32] FP32, P-1 ready and P-2 credit notifies.
  add("k5_ring_attention", "", "", kAnyP, [](std::int64_t P, std::int64_t) {
    constexpr std::int64_t kv = 4 * 16 * 32;
    return cost((P - 1) * kv, (P - 1) * kv, P - 1, 2 * P - 3, 0, 2 * P - 3);
  });
  // k6: a mesh allreduce of [1, 1024] FP32 over each group (K = 1): the row
  // group of TP ranks (TP the largest divisor of P up to sqrt(P)), then the
  // column group of DP = P / TP; or one over the world.
  constexpr std::int64_t k6_row = 4 * 1024;
  add("k6_tp_dp_allreduce", "2d", "", kAnyP, [](std::int64_t P, std::int64_t) {
    std::int64_t tp = 1;
    for (std::int64_t k = 1; k * k <= P; ++k)
      if (P % k == 0) tp = k;
    const std::int64_t peers = (tp - 1) + (P / tp - 1), K = chunks(k6_row);
    return cost(peers * k6_row, 0, peers * K, (1 + K) * peers, peers, (1 + K) * peers);
  });
  add("k6_tp_dp_allreduce", "flat", "", kAnyP, [](std::int64_t P, std::int64_t) {
    const std::int64_t K = chunks(k6_row);
    return cost((P - 1) * k6_row, 0, (P - 1) * K, (1 + K) * (P - 1), P - 1, (1 + K) * (P - 1));
  });
  // k7: a mesh allreduce of [1, 65536] FP32 (K = 16 chunks), one block or
  // core_num B = 4 blocks (each with K / B chunks: (B + K)(P - 1) credits to
  // peers, B (P - 1) back to itself). A multi-block program also counts its
  // launch protocol, all own-window: per launch (two: the kernel and the
  // allreduce) B - 1 launch Sets, B - 1 consumes, B - 1 join adds and the
  // join reset, waits B - 1 + 1; at the end B - 1 Sets and B - 1 consumes
  // for the idle blocks, and their B - 1 waits.
  constexpr std::int64_t k7_row = 4 * 65536, k7_blocks = 4;
  add("k7_multi_block", "one", "", kAnyP, [](std::int64_t P, std::int64_t) {
    const std::int64_t K = chunks(k7_row);
    return cost((P - 1) * k7_row, 0, (P - 1) * K, (1 + K) * (P - 1), P - 1, (1 + K) * (P - 1));
  });
  add("k7_multi_block", "blocks", "", kAnyP, [](std::int64_t P, std::int64_t) {
    const std::int64_t K = chunks(k7_row), B = k7_blocks;
    const std::int64_t launch_notifies = 2 * (3 * (B - 1) + 1) + 2 * (B - 1);
    const std::int64_t launch_waits = 2 * B + (B - 1);
    return cost((P - 1) * k7_row, 0, (P - 1) * K, (B + K) * (P - 1), B * (P - 1) + launch_notifies,
                (B + K) * (P - 1) + launch_waits);
  });
  return cases;
}

std::string device_list(std::int64_t P) {
  std::string s;
  for (std::int64_t i = 0; i < P; ++i) s += (i == 0 ? "" : ",") + std::to_string(i);
  return s;
}

// "" when `out` is OK followed by a card whose rows equal `expected`.
std::string card_mismatch(const std::string& out, std::int64_t P, const Formula& expected) {
  std::istringstream lines(out);
  std::string line;
  if (!std::getline(lines, line) || line != "OK") return "first line is not OK: '" + line + "'";
  const std::string header = "cost card (P=" + std::to_string(P) + ")";
  if (!std::getline(lines, line) || line != header)
    return "expected '" + header + "': '" + line + "'";
  if (!std::getline(lines, line) ||
      line != "  rank   bytes_in  bytes_out    RMA  notify    +E   wait    time_us  rounds") {
    return "unexpected column header: '" + line + "'";
  }
  anyp::RankCost total;
  double latest = 0;
  std::int64_t most_rounds = 0;
  std::string mismatches;  // one line per row that differs
  for (std::int64_t r = 0; r <= P; ++r) {
    const std::string who = r < P ? std::to_string(r) : "total";
    if (!std::getline(lines, line)) return "missing row '" + who + "'";
    std::istringstream fields(line);
    std::string label, rest;
    anyp::RankCost got;
    double time_us = 0;
    std::int64_t rounds = 0;
    fields >> label >> got.bytes_in >> got.bytes_out >> got.rma >> got.notifies >>
        got.local_notifies >> got.waits >> time_us >> rounds;
    if (fields.fail() || (fields >> rest) || label != who) {
      return "row '" + who + "' does not parse: '" + line + "'";
    }
    // The modeled time: positive for every rank; the total is the makespan
    // (the latest finish) and the most rounds (timeline_test.cpp checks the
    // values themselves).
    if (!(time_us > 0) || rounds < 0)
      return "row '" + who + "' has no modeled time: '" + line + "'";
    if (r < P) {
      latest = std::max(latest, time_us);
      most_rounds = std::max(most_rounds, rounds);
    } else if (time_us != latest || rounds != most_rounds) {
      return "the total row's time and rounds are not the latest rank's: '" + line + "'";
    }
    const anyp::RankCost want = r < P ? expected(P, r) : total;
    if (r < P) total += want;
    if (!(got == want)) {
      mismatches += "P=" + std::to_string(P) + " " + (r < P ? "rank " : "") + who + ": counted " +
                    text(got) + "; expected " + text(want) + "\n";
    }
  }
  if (!std::getline(lines, line) || line != "(time: modeled on a2a3sim, the total is the makespan)")
    return "expected the time note after the total: '" + line + "'";
  // The memory block: the total, then the windows of P ranks, the threads
  // engine's notify record and the rank VMs (footprint.hpp).
  if (!std::getline(lines, line) ||
      line.rfind("memory (this process, planned before the run): ", 0) != 0)
    return "expected the memory block after the note: '" + line + "'";
  const std::string windows = " ranks × ";
  if (!std::getline(lines, line) || line.rfind("  windows ", 0) != 0 ||
      line.find("  " + std::to_string(P) + windows) == std::string::npos)
    return "expected the windows of " + std::to_string(P) + " ranks: '" + line + "'";
  if (!std::getline(lines, line) || line.rfind("  notify record ", 0) != 0)
    return "expected the notify record: '" + line + "'";
  if (!std::getline(lines, line) || line.rfind("  rank VMs ", 0) != 0)
    return "expected the rank VMs: '" + line + "'";
  if (std::getline(lines, line)) return "unexpected line after the memory block: '" + line + "'";
  return mismatches;
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class ExampleCost : public testing::TestWithParam<Case> {};

TEST_P(ExampleCost, CardMatchesFormula) {
  const Case& c = GetParam();
  for (std::int64_t P : c.ranks) {
    std::string command = std::string("'") + anyp_test::examples_dir() + "/" + c.example + "' -d " +
                          device_list(P) + " --cost";
    if (!c.mode.empty()) command += " --mode " + c.mode;
    if (!c.op.empty()) command += " --op " + c.op;
    SCOPED_TRACE(command);
    const anyp_test::CommandOutput result = anyp_test::run_command(command);
    ASSERT_TRUE(result.ok) << "did not exit 0; stdout:\n" << result.out;
    const std::string mismatch = card_mismatch(result.out, P, c.formula);
    EXPECT_TRUE(mismatch.empty()) << mismatch << "stdout:\n" << result.out;
  }
}

// The parameter prints as its name, so that the ctest names (gtest_discover_tests
// substitutes the printed value for the index) read e.g.
// cost_cards/ExampleCost.CardMatchesFormula/11_allreduce_reveal_ring_max.
INSTANTIATE_TEST_SUITE_P(cost_cards, ExampleCost, testing::ValuesIn(all_cases()));

}  // namespace
