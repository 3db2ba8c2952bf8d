// all_to_all_modes_test.cpp — the all_to_all's pairwise exchange, Bruck's
// algorithm and Auto (docs/collectives.md §3.7a-c): row r of rank d's dst
// is row d of rank r's src, bit for bit, for every dtype at P = 2 .. 17
// and large P, in back-to-back calls on one signal (with a barrier between
// them where the mode needs one), every signal cell 0 after the calls,
// under the race checker and PCT schedules; Bruck's ceil(log2 P) packed
// puts per rank; every mode's modeled time against its estimate; and
// Auto's choice against the candidates' simulated makespans.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/choose_algorithm.hpp"
#include "compiler/lower_bruck_all_to_all.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/fidelity_model.hpp"
#include "support/sweep.hpp"

namespace {

using pld::AllToAllMode;

const pl::Dim NR = pl::dynamic("NR");

struct Case {
  AllToAllMode mode = AllToAllMode::Pairwise;
  pl::DType dtype = pl::FP32;
  std::int64_t P = 2;
  std::int64_t cols = 32;  // src and dst [NR, cols]
  int calls = 1;
  bool barrier_between = true;  // a barrier after every call
  bool collective = true;       // false: the same kernel without the all_to_all
};

bool is_float(pl::DType d) { return d == pl::FP32 || d == pl::FP16 || d == pl::BF16; }

// host(x [NR, NR, C], y [NR, NR, C], cells [NR, NR, 1]) -> per rank, call k
// sends src = x[r] + k and adds dst into y[r] (y starts at 0), then a
// barrier on the same signal; then cells = the signal.
pl::HostFunction program(const Case& c) {
  const pl::Shape all{NR, c.cols}, sig{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(all, c.dtype)),
      pl::Out("y", pl::Tensor(all, c.dtype)),
      pl::Out("cells", pl::Tensor(sig, pl::INT32)),
      pl::InOut("src", pl::Tensor(all, c.dtype)),
      pl::InOut("dst", pld::DistributedTensor(all, c.dtype)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "all_to_all_modes", params,
      [c](pl::Value x, pl::Value y, pl::Value cells, pl::Value src, pl::Value dst,
          pl::Value signal) {
        for (int k = 0; k < c.calls; ++k) {
          pl::range(NR, [&](pl::Scalar i) {
            pl::Tile t = pl::load(x, {i, 0}, {1, c.cols});
            if (k > 0)
              t = pl::add(t, is_float(c.dtype) ? pl::ScalarArg(static_cast<double>(k))
                                               : pl::ScalarArg(std::int64_t{k}));
            src = pl::store(t, {i, 0}, src);
          });
          if (c.collective) dst = pld::tensor::all_to_all(src, dst, signal, c.mode);
          pl::range(NR, [&](pl::Scalar i) {
            y = pl::store(
                pl::add(pl::load(y, {i, 0}, {1, c.cols}), pl::load(dst, {i, 0}, {1, c.cols})),
                {i, 0}, y);
          });
          if (c.barrier_between)
            signal = pld::tensor::barrier(signal);  // before the next call's puts land
        }
        pl::range(NR, [&](pl::Scalar i) { pl::write(cells, {i, 0}, pl::read(signal, {i, 0})); });
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value y, pl::Value cells, pl::Value src, pl::Value d, pl::Value s) {
        kernel(x, y, cells, src, d, s);
      });
  return pl::jit::host(
      "all_to_all_modes_host",
      {pl::In("x", pl::Tensor({NR, NR, c.cols}, c.dtype)),
       pl::Out("y", pl::Tensor({NR, NR, c.cols}, c.dtype)),
       pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32)),
       pl::InOut("src", pl::Tensor({NR, NR, c.cols}, c.dtype))},
      [per_rank, c, all, sig](pl::Value x, pl::Value y, pl::Value cells, pl::Value src) {
        auto dst_buf = pld::alloc_window_buffer("dst", all, c.dtype);
        auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(x[r], y[r], cells[r], src[r], pld::window(dst_buf, all, c.dtype),
                   pld::window(signal_buf, sig, pl::INT32), pl::device(r));
        });
      });
}

struct Outcome {
  anyp::HostTensor x, y, cells, src;
  anyp::RunStats stats;
};

Outcome run(const Case& c, const anyp::RunConfig& base = {}) {
  const std::int64_t P = c.P;
  Outcome o{anyp::HostTensor::zeros({P, P, c.cols}, c.dtype),
            anyp::HostTensor::zeros({P, P, c.cols}, c.dtype),
            anyp::HostTensor::zeros({P, P, 1}, pl::INT32),
            anyp::HostTensor::zeros({P, P, c.cols}, c.dtype),
            {}};
  for (std::int64_t i = 0; i < o.x.numel(); ++i) {
    const std::int64_t v = (i * 37 + i / c.cols * 101) % 211;
    if (is_float(c.dtype)) {
      o.x.set(i, static_cast<double>(v) / 7.3 - 13.0);
    } else {
      o.x.set_int(i, v - 100);
    }
  }
  anyp::RunConfig config = base;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < P; ++d) config.distributed.device_ids.push_back(d);
  o.stats = program(c).compile({o.x, o.y, o.cells, o.src}, config)(o.x, o.y, o.cells, o.src);
  return o;
}

// "" when every rank d's y row r is the sum over calls k of row d of rank
// r's x, plus k, in the dtype (rounded or wrapped after each add, as the
// tiles do), bit for bit, and every signal cell is 0; else the first
// difference.
std::string check(const Case& c, const anyp::RunConfig& config = {}) {
  const Outcome o = run(c, config);
  const std::int64_t P = c.P, C = c.cols;
  anyp::HostTensor want = anyp::HostTensor::zeros({P * P * C}, c.dtype);
  anyp::HostTensor one = anyp::HostTensor::zeros({1}, c.dtype);
  for (int k = 0; k < c.calls; ++k) {
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      const std::int64_t d = i / (P * C), r = i / C % P, e = i % C;
      const std::int64_t from = (r * P + d) * C + e;  // rank r's x row d
      if (is_float(c.dtype)) {
        one.set(0, static_cast<float>(o.x.get(from)) + static_cast<float>(k));
        want.set(i, static_cast<float>(want.get(i)) + static_cast<float>(one.get(0)));
      } else {
        one.set_int(0, o.x.get_int(from) + k);
        want.set_int(i, want.get_int(i) + one.get_int(0));
      }
    }
  }
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const bool same = is_float(c.dtype) ? std::bit_cast<std::uint64_t>(o.y.get(i)) ==
                                              std::bit_cast<std::uint64_t>(want.get(i))
                                        : o.y.get_int(i) == want.get_int(i);
    if (!same) {
      std::ostringstream m;
      m << "rank " << i / (P * C) << " row " << i / C % P << " element " << i % C << ": got "
        << o.y.get(i) << ", want " << want.get(i);
      return m.str();
    }
  }
  for (std::int64_t i = 0; i < o.cells.numel(); ++i)
    if (o.cells.get_int(i) != 0) return "signal cell " + std::to_string(i) + " is not 0";
  return "";
}

anyp::RunConfig race_checked() {
  anyp::RunConfig config;
  config.check_races = true;
  return config;
}

const char* mode_name(AllToAllMode m) {
  switch (m) {
    case AllToAllMode::Mesh:
      return "Mesh";
    case AllToAllMode::Pairwise:
      return "Pairwise";
    case AllToAllMode::Bruck:
      return "Bruck";
    case AllToAllMode::Auto:
      break;
  }
  return "Auto";
}

AllToAllMode mode_of(anyp::ir::Algorithm a) {
  switch (a) {
    case anyp::ir::Algorithm::Pairwise:
      return AllToAllMode::Pairwise;
    case anyp::ir::Algorithm::Bruck:
      return AllToAllMode::Bruck;
    default:
      return AllToAllMode::Mesh;
  }
}

class AllToAllAtP : public testing::TestWithParam<std::int64_t> {};

TEST_P(AllToAllAtP, EveryRowIsItsSendersBitForBit) {
  for (AllToAllMode mode :
       {AllToAllMode::Pairwise, AllToAllMode::Bruck, AllToAllMode::Mesh, AllToAllMode::Auto}) {
    Case c;
    c.mode = mode;
    c.P = GetParam();
    c.calls = 3;
    EXPECT_EQ(check(c, race_checked()), "") << "P=" << c.P << " " << mode_name(mode);
  }
}

// Bruck's dst is touched by its own rank only and its receive halves are
// handed back by credits (docs/collectives.md §3.7c): calls back to back
// without a barrier are race-free.
TEST_P(AllToAllAtP, BruckCallsBackToBackNeedNoBarrier) {
  Case c;
  c.mode = AllToAllMode::Bruck;
  c.P = GetParam();
  c.calls = 3;
  c.barrier_between = false;
  EXPECT_EQ(check(c, race_checked()), "") << "P=" << c.P;
}

INSTANTIATE_TEST_SUITE_P(P, AllToAllAtP, testing::Range<std::int64_t>(2, 18));

TEST(AllToAllModes, EveryDtype) {
  for (AllToAllMode mode : {AllToAllMode::Pairwise, AllToAllMode::Bruck}) {
    for (std::int64_t P : {3, 6, 8}) {
      for (pl::DType dtype :
           {pl::FP32, pl::FP16, pl::BF16, pl::INT8, pl::INT16, pl::INT32, pl::INT64}) {
        Case c;
        c.mode = mode;
        c.dtype = dtype;
        c.P = P;
        c.calls = 2;
        EXPECT_EQ(check(c, race_checked()), "")
            << mode_name(mode) << " " << anyp::dtype_name(dtype) << " P=" << P;
      }
    }
  }
}

TEST(AllToAllModes, LargeP) {
  for (AllToAllMode mode : {AllToAllMode::Pairwise, AllToAllMode::Bruck}) {
    for (std::int64_t P : anyp_test::sweep({64, 100}, {100})) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.cols = 8;
      c.calls = 2;
      EXPECT_EQ(check(c), "") << mode_name(mode) << " P=" << P;
    }
  }
  // Bruck's rows wrap in every round.
  for (std::int64_t P : anyp_test::sweep({257, 1000}, {257})) {
    Case c;
    c.mode = AllToAllMode::Bruck;
    c.P = P;
    c.cols = 8;
    c.calls = 2;
    c.barrier_between = false;
    EXPECT_EQ(check(c), "") << "Bruck P=" << P;
  }
}

TEST(AllToAllModes, UnderPctSchedules) {
  for (AllToAllMode mode : {AllToAllMode::Pairwise, AllToAllMode::Bruck}) {
    for (std::int64_t P : {5, 6}) {
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        anyp::RunConfig config = race_checked();
        config.pct.enabled = true;
        config.pct.seed = seed;
        config.pct.steps = 400;
        Case c;
        c.mode = mode;
        c.P = P;
        c.calls = 3;
        c.barrier_between = mode != AllToAllMode::Bruck;
        EXPECT_EQ(check(c, config), "") << mode_name(mode) << " P=" << P << " seed " << seed;
      }
    }
  }
}

// Bruck's defining count: every rank sends ceil(log2 P) messages (one
// packed put per round, of the rows whose index has bit k set in round k)
// and receives as many; the mesh sends P - 1.
TEST(AllToAllModes, BruckSendsOnePackedPutPerRound) {
  for (std::int64_t P : {2, 3, 5, 8, 12, 17}) {
    Case c;
    c.mode = AllToAllMode::Bruck;
    c.P = P;
    c.cols = 8;
    c.barrier_between = false;
    anyp::RunConfig config;
    config.timeline = true;
    const Outcome o = run(c, config);
    std::int64_t rounds = 0, rows = 0;
    for (std::int64_t d = 1; d < P; d *= 2, ++rounds)
      for (std::int64_t i = 0; i < P; ++i) rows += (i & d) != 0;
    std::vector<std::int64_t> sent(static_cast<std::size_t>(P)), bytes(sent.size()),
        received(sent.size());
    for (const anyp::TimelineOp& op : o.stats.timeline->ops) {
      if (op.kind != anyp::TimelineOp::Kind::RemoteWrite) continue;
      ++sent[static_cast<std::size_t>(op.rank)];
      bytes[static_cast<std::size_t>(op.rank)] += op.bytes;
      ++received[static_cast<std::size_t>(op.peer)];
    }
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(sent[static_cast<std::size_t>(r)], rounds) << "P=" << P << " rank " << r;
      EXPECT_EQ(received[static_cast<std::size_t>(r)], rounds) << "P=" << P << " rank " << r;
      EXPECT_EQ(bytes[static_cast<std::size_t>(r)], rows * c.cols * 4) << "P=" << P;
    }
  }
}

// The credit schedule: each peer's credits in its program order, every
// wait's count, and which runs wrap (the estimate's two-copy runs).
TEST(AllToAllModes, BruckCreditTable) {
  using anyp::compiler::collective::BruckCredit;
  // P = 3: rank q + 1 = q - 2 sends Free(0) (start), then Ready(1); rank
  // q - 1 = q + 2 sends Free(1) (start), then Ready(0).
  const auto three = anyp::compiler::collective::bruck_all_to_all_credits(3);
  ASSERT_EQ(three.size(), 2u);
  ASSERT_EQ(three.at(1).size(), 2u);
  EXPECT_EQ(three.at(1)[0].kind, BruckCredit::Free);
  EXPECT_EQ(three.at(1)[0].round, 0);
  EXPECT_EQ(three.at(1)[1].kind, BruckCredit::Ready);
  EXPECT_EQ(three.at(1)[1].round, 1);
  EXPECT_EQ(three.at(2)[0].kind, BruckCredit::Free);
  EXPECT_EQ(three.at(2)[0].round, 1);
  EXPECT_EQ(three.at(2)[1].kind, BruckCredit::Ready);
  EXPECT_EQ(three.at(2)[1].round, 0);
  // P = 8: five distinct senders (distances 1, 2, 4, 6, 7), one credit each
  // except distance 4: Free(2), sent after its round 0's unpack, then Ready(2).
  const auto eight = anyp::compiler::collective::bruck_all_to_all_credits(8);
  EXPECT_EQ(eight.size(), 5u);  // distances 1, 2, 4, 6, 7
  EXPECT_EQ(anyp::compiler::collective::bruck_credit_count(eight, 8, {BruckCredit::Ready, 2}), 2);
  EXPECT_EQ(anyp::compiler::collective::bruck_credit_count(eight, 8, {BruckCredit::Free, 2}), 1);
  EXPECT_TRUE(anyp::compiler::collective::bruck_run_wraps(2, 2, 8));   // indices 2, 3 of rank 2
  EXPECT_FALSE(anyp::compiler::collective::bruck_run_wraps(3, 2, 8));  // 4 has no bit 1
  EXPECT_FALSE(anyp::compiler::collective::bruck_run_wraps(7, 4, 8));  // 8 is past P - 1
  const auto rounds = anyp::compiler::collective::bruck_all_to_all_rounds(6);
  ASSERT_EQ(rounds.size(), 3u);
  EXPECT_EQ(rounds[0].runs, 3);  // {1}, {3}, {5}
  EXPECT_EQ(rounds[1].runs, 1);  // {2, 3}
  EXPECT_EQ(rounds[1].blocks, 2);
  EXPECT_EQ(rounds[2].runs, 1);  // {4, 5}
  EXPECT_EQ(rounds[2].blocks, 2);
}

// Without the barrier between calls, the next call's put of a row may land
// before its receiver has read the row: the race checker reports it at
// every P (the steps order the rows of one call only; docs/collectives.md
// §3.7a), for the mesh as for the pairwise exchange.
TEST(AllToAllModes, BackToBackWithoutABarrierIsARace) {
  for (AllToAllMode mode : {AllToAllMode::Pairwise, AllToAllMode::Mesh}) {
    for (std::int64_t P : {2, 3, 4}) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.calls = 2;
      c.barrier_between = false;
      EXPECT_THROW(run(c, race_checked()), anyp::RaceError) << "P=" << P;
    }
  }
}

double makespan(const Case& c, const std::string& model) {
  anyp::RunConfig config;
  config.timeline = true;
  config.model_file = model;
  const Outcome o = run(c, config);
  EXPECT_EQ(o.stats.timeline->note, "");
  return o.stats.timeline->makespan_ns;
}

// The modeled time of one call (the makespan less that of the same kernel
// without the call: its loads and stores around the call are priced too)
// against the estimates the compiler prices Auto with, within 1 %, local
// accesses priced too: Mesh
// (P − 1)(α + Sβ + 2i + w) + l + (P + 1)L, Pairwise (P − 1)(α + Sβ + i + l
// + w + i) + (P + 1)L, with S the row's bytes, i the notify issue, l its
// latency, w a wait, L a local access of a row; Bruck its chain.
TEST(AllToAllFidelity, ModeledTimeMatchesTheEstimates) {
  const anyp_test::Constants k{.alpha = 2000,
                               .beta = 0.005,
                               .local_alpha = 100,
                               .local_beta = 0.000625,
                               .issue = 100,
                               .latency = 700,
                               .wait = 50};
  const std::string model = anyp_test::model_file(k, "all_to_all");
  const anyp::runtime::CostModel cost = anyp::runtime::load_cost_model(model);
  for (std::int64_t P : anyp_test::sweep(anyp_test::every_p(2, 17), {2, 3, 6, 8, 13})) {
    for (std::int64_t cols : {8, 4096}) {
      for (const auto& e : anyp::compiler::all_to_all_estimates(P, cols, pl::FP32, cost)) {
        Case c;
        c.mode = mode_of(e.kind);
        c.P = P;
        c.cols = cols;
        c.barrier_between = false;
        Case without = c;
        without.collective = false;
        EXPECT_NEAR(makespan(c, model) - makespan(without, model), e.ns, 0.01 * e.ns)
            << anyp::ir::algorithm_name(e.kind) << " P=" << P << " cols=" << cols;
      }
    }
  }
  std::filesystem::remove(model);
}

// AllToAllMode::Auto runs the candidate of least simulated makespan
// (within 1 %) under a latency-bound and a bandwidth-bound model. Without
// link contention (docs/timeline.md) the pairwise exchange's per-step
// handshake never pays over the mesh (this test will see it change when
// the model prices contention); Bruck's ceil(log2 P) messages win where α
// dominates and P is large enough, and lose to its copies elsewhere.
TEST(AllToAllModes, AutoRunsTheCandidateOfLeastModeledTime) {
  int bruck_wins = 0, mesh_wins = 0;
  for (const anyp_test::Constants& k :
       {anyp_test::Constants{
            .alpha = 2000, .beta = 0.005, .local_alpha = 100, .issue = 100, .latency = 700},
        anyp_test::Constants{
            .alpha = 50, .beta = 0.5, .local_alpha = 20, .issue = 10, .latency = 30}}) {
    const std::string model = anyp_test::model_file(k, "all_to_all_auto");
    for (std::int64_t P : {2, 3, 5, 8, 13}) {
      for (std::int64_t cols : {8, 4096}) {
        Case c;
        c.P = P;
        c.cols = cols;
        c.barrier_between = false;
        c.mode = AllToAllMode::Mesh;
        const double mesh = makespan(c, model);
        c.mode = AllToAllMode::Pairwise;
        const double pairwise = makespan(c, model);
        c.mode = AllToAllMode::Bruck;
        const double bruck = makespan(c, model);
        c.mode = AllToAllMode::Auto;
        const double least = std::min({mesh, pairwise, bruck});
        EXPECT_NEAR(makespan(c, model), least, 0.01 * least) << "P=" << P << " cols=" << cols;
        EXPECT_LE(mesh, pairwise * 1.000001) << "P=" << P << " cols=" << cols;
        bruck_wins += bruck == least;
        mesh_wins += mesh == least;
      }
    }
    std::filesystem::remove(model);
  }
  EXPECT_GT(bruck_wins, 0);  // both choices are exercised
  EXPECT_GT(mesh_wins, 0);
}

}  // namespace
