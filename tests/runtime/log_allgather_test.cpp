// log_allgather_test.cpp — the logarithmic allgathers (Bruck, recursive
// doubling) and the allgather's Auto (docs/collectives.md §3.5a-c): row s
// of every rank's dst is rank s's src,
// bit for bit, for every dtype at P = 2 .. 17 and large P, rows of several
// 16 KiB pieces, in back-to-back calls on one signal whose sources change
// between calls with no barrier (the read-done handshakes make that safe;
// the race checker would report it otherwise), every signal cell 0 after
// the calls, under the race checker and PCT schedules; their modeled
// times against their formulas; and Auto's choice against the
// candidates' simulated makespans.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/choose_algorithm.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/fidelity_model.hpp"

namespace {

using pld::AllgatherMode;

const pl::Dim NR = pl::dynamic("NR");

struct Case {
  AllgatherMode mode = AllgatherMode::Bruck;
  pl::DType dtype = pl::FP32;
  std::int64_t P = 2;
  std::int64_t cols = 64;  // src [1, cols], dst [NR, cols]
  int calls = 1;
};

bool is_float(pl::DType d) { return d == pl::FP32 || d == pl::FP16 || d == pl::BF16; }

// host(x [NR, 1, C], y [NR, NR, C], cells [NR, NR, 1]) -> per rank, call k
// gathers src = x[r] + k and adds dst into y[r] (y starts at 0); then
// cells = the signal.
pl::HostFunction program(const Case& c) {
  const pl::Shape row{1, c.cols}, all{NR, c.cols}, sig{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(row, c.dtype)),
      pl::Out("y", pl::Tensor(all, c.dtype)),
      pl::Out("cells", pl::Tensor(sig, pl::INT32)),
      pl::InOut("src", pl::Tensor(row, c.dtype)),
      pl::InOut("dst", pld::DistributedTensor(all, c.dtype)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "bruck_allgather", params,
      [c](pl::Value x, pl::Value y, pl::Value cells, pl::Value src, pl::Value dst,
          pl::Value signal) {
        for (int k = 0; k < c.calls; ++k) {
          pl::Tile t = pl::load(x, {0, 0}, {1, c.cols});
          if (k > 0)
            t = pl::add(t, is_float(c.dtype) ? pl::ScalarArg(static_cast<double>(k))
                                             : pl::ScalarArg(std::int64_t{k}));
          src = pl::store(t, {0, 0}, src);
          dst = pld::tensor::allgather(src, dst, signal, c.mode);
          // y += dst, read while the next call's transfers may start.
          pl::range(NR, [&](pl::Scalar i) {
            y = pl::store(
                pl::add(pl::load(y, {i, 0}, {1, c.cols}), pl::load(dst, {i, 0}, {1, c.cols})),
                {i, 0}, y);
          });
        }
        pl::range(NR, [&](pl::Scalar i) { pl::write(cells, {i, 0}, pl::read(signal, {i, 0})); });
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value y, pl::Value cells, pl::Value src, pl::Value d, pl::Value s) {
        kernel(x, y, cells, src, d, s);
      });
  return pl::jit::host(
      "bruck_allgather_host",
      {pl::In("x", pl::Tensor({NR, 1, c.cols}, c.dtype)),
       pl::Out("y", pl::Tensor({NR, NR, c.cols}, c.dtype)),
       pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32)),
       pl::InOut("src", pl::Tensor({NR, 1, c.cols}, c.dtype))},
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
  Outcome o{anyp::HostTensor::zeros({c.P, 1, c.cols}, c.dtype),
            anyp::HostTensor::zeros({c.P, c.P, c.cols}, c.dtype),
            anyp::HostTensor::zeros({c.P, c.P, 1}, pl::INT32),
            anyp::HostTensor::zeros({c.P, 1, c.cols}, c.dtype),
            {}};
  for (std::int64_t i = 0; i < o.x.numel(); ++i) {
    const std::int64_t r = i / c.cols, e = i % c.cols;
    if (is_float(c.dtype)) {
      o.x.set(i, static_cast<double>((e * 37 + r * 101) % 211) / 7.3 - 13.0);
    } else {
      o.x.set_int(i, (e * 37 + r * 101) % 211 - 100);
    }
  }
  anyp::RunConfig config = base;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < c.P; ++d) config.distributed.device_ids.push_back(d);
  o.stats = program(c).compile({o.x, o.y, o.cells, o.src}, config)(o.x, o.y, o.cells, o.src);
  return o;
}

// "" when every rank's y row s is the sum over calls k of x[s] + k, in the
// dtype (rounded or wrapped after each add, as the tiles do), bit for bit,
// and every signal cell is 0; else the first difference.
std::string check(const Case& c, const anyp::RunConfig& config = {}) {
  const Outcome o = run(c, config);
  anyp::HostTensor want = anyp::HostTensor::zeros({c.P * c.cols}, c.dtype);
  anyp::HostTensor row = anyp::HostTensor::zeros({1}, c.dtype);
  for (int k = 0; k < c.calls; ++k) {
    for (std::int64_t i = 0; i < want.numel(); ++i) {
      const std::int64_t s = i / c.cols, e = i % c.cols, from = s * c.cols + e;
      if (is_float(c.dtype)) {
        row.set(0, static_cast<float>(o.x.get(from)) + static_cast<float>(k));
        want.set(i, static_cast<float>(want.get(i)) + static_cast<float>(row.get(0)));
      } else {
        row.set_int(0, o.x.get_int(from) + k);
        want.set_int(i, want.get_int(i) + row.get_int(0));
      }
    }
  }
  const std::int64_t n = c.P * c.cols;
  for (std::int64_t r = 0; r < c.P; ++r) {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool same = is_float(c.dtype) ? std::bit_cast<std::uint64_t>(o.y.get(r * n + i)) ==
                                                std::bit_cast<std::uint64_t>(want.get(i))
                                          : o.y.get_int(r * n + i) == want.get_int(i);
      if (!same) {
        std::ostringstream m;
        m << "rank " << r << " row " << i / c.cols << " element " << i % c.cols << ": got "
          << o.y.get(r * n + i) << ", want " << want.get(i);
        return m.str();
      }
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

class BruckAllgatherAtP : public testing::TestWithParam<std::int64_t> {};

const AllgatherMode kLogModes[] = {AllgatherMode::Bruck, AllgatherMode::RecursiveDoubling};

const char* name_of(AllgatherMode m) {
  return m == AllgatherMode::Bruck ? "bruck" : m == AllgatherMode::Mesh ? "mesh" : "rd";
}

AllgatherMode mode_of(anyp::ir::Algorithm a) {
  switch (a) {
    case anyp::ir::Algorithm::Mesh:
      return AllgatherMode::Mesh;
    case anyp::ir::Algorithm::Bruck:
      return AllgatherMode::Bruck;
    case anyp::ir::Algorithm::RecursiveDoubling:
      return AllgatherMode::RecursiveDoubling;
    default:
      ADD_FAILURE() << "no allgather mode runs " << anyp::ir::algorithm_name(a);
      return AllgatherMode::Auto;
  }
}

TEST_P(BruckAllgatherAtP, EveryRowIsItsRanksBitForBit) {
  for (AllgatherMode mode : kLogModes) {
    Case c;
    c.mode = mode;
    c.P = GetParam();
    c.calls = 3;
    EXPECT_EQ(check(c, race_checked()), "") << name_of(mode) << " P=" << c.P;
  }
}

INSTANTIATE_TEST_SUITE_P(P, BruckAllgatherAtP, testing::Range<std::int64_t>(2, 18));

TEST(BruckAllgather, EveryDtype) {
  for (std::int64_t P : {3, 6, 8}) {
    for (pl::DType dtype :
         {pl::FP32, pl::FP16, pl::BF16, pl::INT8, pl::INT16, pl::INT32, pl::INT64}) {
      for (AllgatherMode mode : kLogModes) {
        Case c;
        c.mode = mode;
        c.dtype = dtype;
        c.P = P;
        c.calls = 2;
        EXPECT_EQ(check(c, race_checked()), "")
            << name_of(mode) << " " << anyp::dtype_name(dtype) << " P=" << P;
      }
    }
  }
}

// Rows of 4096 FP32 (16 KiB): from round 1 on a pull is several pieces.
TEST(BruckAllgather, SeveralPieces) {
  for (std::int64_t P : {2, 5, 8}) {
    for (AllgatherMode mode : kLogModes) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.cols = 4096;
      c.calls = 2;
      EXPECT_EQ(check(c, race_checked()), "") << name_of(mode) << " P=" << P;
    }
  }
}

TEST(BruckAllgather, LargeP) {
  for (std::int64_t P : {64, 100, 256}) {
    for (AllgatherMode mode : kLogModes) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.cols = 8;
      c.calls = 2;
      EXPECT_EQ(check(c), "") << name_of(mode) << " P=" << P;
    }
  }
}

TEST(BruckAllgather, UnderPctSchedules) {
  for (std::int64_t P : {5, 6}) {
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      for (AllgatherMode mode : kLogModes) {
        anyp::RunConfig config = race_checked();
        config.pct.enabled = true;
        config.pct.seed = seed;
        config.pct.steps = 400;
        Case c;
        c.mode = mode;
        c.P = P;
        c.calls = 3;
        EXPECT_EQ(check(c, config), "") << name_of(mode) << " P=" << P << " seed " << seed;
      }
    }
  }
}

// One call (Auto keeps the mesh's contract: a barrier before the next
// call's puts).
TEST(BruckAllgather, AutoAtEveryP) {
  for (std::int64_t P : {2, 3, 7, 16}) {
    Case c;
    c.mode = AllgatherMode::Auto;
    c.P = P;
    EXPECT_EQ(check(c, race_checked()), "") << "auto P=" << P;
  }
}

// The modeled makespan of one call under a model of α and β only against
// the formulas, within 1 %: Mesh (P − 1)(α + Nβ) (every rank's P − 1 puts
// of its row, one after the other); Bruck the longest chain of its rounds
// (compiler::bruck_allgather_time: round k pulls min(2^k, P − 2^k) rows in
// pieces of at most 16 KiB, a wrapped range in two), which at a power of
// two with rows under 16 KiB lies between ⌈log₂ P⌉α + (P − 1)Nβ (Bruck's
// rotated buffer) and one α more per round.
TEST(BruckAllgatherFidelity, ModeledTimeMatchesTheFormulas) {
  const anyp_test::Constants k{.alpha = 2000, .beta = 0.005};
  const std::string model = anyp_test::model_file(k, "bruck");
  for (std::int64_t P : {2, 3, 4, 5, 7, 8, 12, 16, 17}) {
    for (std::int64_t cols : {8, 1024, 8192}) {
      const double N = 4.0 * static_cast<double>(cols), p = static_cast<double>(P);
      const double want[] = {
          (p - 1) * (k.alpha + N * k.beta),
          anyp::compiler::bruck_allgather_time(P, cols, pl::FP32, k.alpha, k.beta, 0)};
      const AllgatherMode modes[] = {AllgatherMode::Mesh, AllgatherMode::Bruck};
      for (int m = 0; m < 2; ++m) {
        Case c;
        c.mode = modes[m];
        c.P = P;
        c.cols = cols;
        anyp::RunConfig config;
        config.timeline = true;
        config.model_file = model;
        const Outcome o = run(c, config);
        EXPECT_EQ(o.stats.timeline->note, "");
        EXPECT_NEAR(o.stats.timeline->makespan_ns, want[m], 0.01 * want[m])
            << (m ? "bruck" : "mesh") << " P=" << P << " cols=" << cols;
      }
    }
  }
  for (std::int64_t P : {4, 8, 16}) {
    const double p = static_cast<double>(P), N = 4.0 * 8.0, L = std::log2(p);
    const double rotated = L * k.alpha + (p - 1) * N * k.beta;
    const double t = anyp::compiler::bruck_allgather_time(P, 8, pl::FP32, k.alpha, k.beta, 0);
    EXPECT_GE(t, rotated - 1e-9) << "P=" << P;
    EXPECT_LE(t, rotated + L * k.alpha + 1e-9) << "P=" << P;
  }
  std::filesystem::remove(model);
}

// With the notifies priced too (i issue, l latency, w wait), the modeled
// makespan of one call matches the estimate Auto compares, within 1 %, at
// every P = 2 .. 17: the mesh's barrier and epilogue, Bruck's credits,
// recursive doubling's fold and levels.
TEST(BruckAllgatherFidelity, ModeledTimeMatchesTheEstimateWithNotifyCosts) {
  const anyp_test::Constants k{
      .alpha = 2000, .beta = 0.005, .issue = 100, .latency = 700, .wait = 50};
  const std::string model = anyp_test::model_file(k, "bruck_notify");
  const anyp::runtime::CostModel cost = anyp::runtime::load_cost_model(model);
  for (std::int64_t P = 2; P <= 17; ++P) {
    for (std::int64_t cols : {8, 4096}) {
      for (const auto& e : anyp::compiler::allgather_estimates(P, cols, pl::FP32, cost)) {
        Case c;
        c.mode = mode_of(e.kind);
        c.P = P;
        c.cols = cols;
        anyp::RunConfig config;
        config.timeline = true;
        config.model_file = model;
        const Outcome o = run(c, config);
        EXPECT_NEAR(o.stats.timeline->makespan_ns, e.ns, 0.01 * e.ns)
            << anyp::ir::algorithm_name(e.kind) << " P=" << P << " cols=" << cols;
      }
    }
  }
  std::filesystem::remove(model);
}

// AllgatherMode::Auto runs the candidate of least simulated makespan
// (within 1 %) under a latency-bound and a bandwidth-bound model, and over
// the grid more than one candidate wins.
TEST(LogAllgather, AutoRunsTheCandidateOfLeastModeledTime) {
  std::vector<std::string> winners;
  for (const anyp_test::Constants& k :
       {anyp_test::Constants{.alpha = 2000, .beta = 0.005, .issue = 100, .latency = 700},
        anyp_test::Constants{.alpha = 50, .beta = 0.5, .issue = 10, .latency = 30}}) {
    const std::string model = anyp_test::model_file(k, "allgather_auto");
    for (std::int64_t P : {2, 3, 5, 8, 13, 16}) {
      for (std::int64_t cols : {8, 4096}) {
        anyp::RunConfig config;
        config.timeline = true;
        config.model_file = model;
        Case c;
        c.P = P;
        c.cols = cols;
        double least = 0;
        std::string fastest;
        for (AllgatherMode mode :
             {AllgatherMode::Mesh, AllgatherMode::Bruck, AllgatherMode::RecursiveDoubling}) {
          c.mode = mode;
          const double t = run(c, config).stats.timeline->makespan_ns;
          if (fastest.empty() || t < least) {
            least = t;
            fastest = name_of(mode);
          }
        }
        c.mode = AllgatherMode::Auto;
        const double automatic = run(c, config).stats.timeline->makespan_ns;
        EXPECT_NEAR(automatic, least, 0.01 * least)
            << "P=" << P << " cols=" << cols << " fastest " << fastest;
        winners.push_back(fastest);
      }
    }
    std::filesystem::remove(model);
  }
  std::sort(winners.begin(), winners.end());
  winners.erase(std::unique(winners.begin(), winners.end()), winners.end());
  EXPECT_GT(winners.size(), 1u);
}

// Under a model of α and β only, at a power of two with rows of 32 B (one
// piece per level): recursive doubling is Thakur, Rabenseifner & Gropp's
// L·α + (P − 1)·Nβ (level s pulls 2^s rows), within 1 %; and with several
// pieces per level (rows of 4 KiB) its estimate.
TEST(RecursiveDoublingAllgatherFidelity, ModeledTimeMatchesTheTextbookFormula) {
  const anyp_test::Constants k{.alpha = 2000, .beta = 0.005};
  const std::string model = anyp_test::model_file(k, "rd_allgather");
  const anyp::runtime::CostModel cost = anyp::runtime::load_cost_model(model);
  for (std::int64_t P : {2, 4, 8, 16, 32}) {
    const double p = static_cast<double>(P), N = 4.0 * 8.0, L = std::log2(p);
    const double textbook = L * k.alpha + (p - 1) * N * k.beta;
    EXPECT_NEAR(anyp::compiler::recursive_doubling_allgather_time(P, 8, pl::FP32, cost), textbook,
                1e-9 * textbook)
        << "P=" << P;
    for (std::int64_t cols : {8, 1024}) {
      Case c;
      c.mode = AllgatherMode::RecursiveDoubling;
      c.P = P;
      c.cols = cols;
      anyp::RunConfig config;
      config.timeline = true;
      config.model_file = model;
      const double want =
          anyp::compiler::recursive_doubling_allgather_time(P, cols, pl::FP32, cost);
      EXPECT_NEAR(run(c, config).stats.timeline->makespan_ns, want, 0.01 * want)
          << "P=" << P << " cols=" << cols;
    }
  }
  std::filesystem::remove(model);
}

}  // namespace
