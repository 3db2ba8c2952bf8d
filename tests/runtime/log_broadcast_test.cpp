// log_broadcast_test.cpp — the logarithmic builtin broadcasts (binomial
// tree; scatter + ring allgather, van de Geijn) and Auto (docs/collectives.md
// §3.4a-c): every rank ends with the root's data bit for bit, for every
// dtype, every root, at P = 2 .. 17 and large P, with data of one element
// per rank or fewer (empty scatter blocks) up to several 16 KiB pieces;
// back-to-back calls on one signal from changing roots, each restaging
// its data right before the next call with no barrier between (the
// read-done handshakes make that safe: the race checker would report the
// overwrite otherwise), every signal cell 0 after the calls, under the
// race checker and PCT schedules.
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
#include "support/fidelity_model.hpp"

namespace {

using pld::BroadcastMode;

const pl::Dim NR = pl::dynamic("NR");

struct Case {
  BroadcastMode mode = BroadcastMode::Tree;
  pl::DType dtype = pl::FP32;
  std::int64_t P = 2;
  std::int64_t rows = 3, cols = 64;  // data [rows, cols]
  std::int64_t root = 0;             // call k's root: (root + 3k) mod P
  int calls = 1;
};

bool is_float(pl::DType d) { return d == pl::FP32 || d == pl::FP16 || d == pl::BF16; }

std::int64_t root_of(const Case& c, int k) { return (c.root + 3 * k) % c.P; }

// host(x [NR, R, C], y [NR, R, C], cells [NR, NR, 1]) -> per rank, for each
// call: data = x[r] + k (staged right before it), broadcast from root_k;
// then y[r] = data, cells = the signal.
pl::HostFunction program(const Case& c) {
  const pl::Shape data_shape{c.rows, c.cols};
  const pl::Shape sig{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(data_shape, c.dtype)), pl::Out("y", pl::Tensor(data_shape, c.dtype)),
      pl::Out("cells", pl::Tensor(sig, pl::INT32)),
      pl::InOut("data", pld::DistributedTensor(data_shape, c.dtype)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "log_broadcast", params,
      [c](pl::Value x, pl::Value y, pl::Value cells, pl::Value data, pl::Value signal) {
        for (int k = 0; k < c.calls; ++k) {
          pl::range(c.rows, [&](pl::Scalar i) {
            pl::Tile t = pl::load(x, {i, 0}, {1, c.cols});
            if (k > 0)
              t = pl::add(t, is_float(c.dtype) ? pl::ScalarArg(static_cast<double>(k))
                                               : pl::ScalarArg(std::int64_t{k}));
            pl::store(t, {i, 0}, data);
          });
          data = pld::tensor::broadcast(data, signal, root_of(c, k), c.mode);
        }
        pl::range(c.rows, [&](pl::Scalar i) {
          pl::store(pl::load(data, {i, 0}, {1, c.cols}), {i, 0}, y);
        });
        pl::range(NR, [&](pl::Scalar i) { pl::write(cells, {i, 0}, pl::read(signal, {i, 0})); });
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", params,
                             [kernel](pl::Value x, pl::Value y, pl::Value cells, pl::Value d,
                                      pl::Value s) { kernel(x, y, cells, d, s); });
  return pl::jit::host("log_broadcast_host",
                       {pl::In("x", pl::Tensor({NR, c.rows, c.cols}, c.dtype)),
                        pl::Out("y", pl::Tensor({NR, c.rows, c.cols}, c.dtype)),
                        pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32))},
                       [per_rank, c, data_shape, sig](pl::Value x, pl::Value y, pl::Value cells) {
                         auto data_buf = pld::alloc_window_buffer("data", data_shape, c.dtype);
                         auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], cells[r],
                                    pld::window(data_buf, data_shape, c.dtype),
                                    pld::window(signal_buf, sig, pl::INT32), pl::device(r));
                         });
                       });
}

anyp::HostTensor inputs(const Case& c) {
  anyp::HostTensor x = anyp::HostTensor::zeros({c.P, c.rows, c.cols}, c.dtype);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t r = i / (c.rows * c.cols), e = i % (c.rows * c.cols);
    if (is_float(c.dtype)) {
      x.set(i, static_cast<double>((e * 37 + r * 101) % 211) / 7.3 - 13.0);
    } else {
      x.set_int(i, (e * 37 + r * 101) % 211 - 100);
    }
  }
  return x;
}

// "" when every rank holds x[root] + k of the last call k, bit for bit (the
// add of k rounded once in the dtype, as the tile does), and every signal
// cell is 0; else the first difference.
struct Outcome {
  anyp::HostTensor x, y, cells;
  anyp::RunStats stats;
};

Outcome run(const Case& c, const anyp::RunConfig& base = {}) {
  Outcome o{inputs(c),
            anyp::HostTensor::zeros({c.P, c.rows, c.cols}, c.dtype),
            anyp::HostTensor::zeros({c.P, c.P, 1}, pl::INT32),
            {}};
  anyp::RunConfig config = base;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < c.P; ++d) config.distributed.device_ids.push_back(d);
  o.stats = program(c).compile({o.x, o.y, o.cells}, config)(o.x, o.y, o.cells);
  return o;
}

std::string check(const Case& c, const anyp::RunConfig& base = {}) {
  const Outcome o = run(c, base);
  const anyp::HostTensor& x = o.x;
  const anyp::HostTensor& y = o.y;
  const anyp::HostTensor& cells = o.cells;
  const int last = c.calls - 1;
  const std::int64_t n = c.rows * c.cols, root = root_of(c, last);
  anyp::HostTensor want = anyp::HostTensor::zeros({n}, c.dtype);
  for (std::int64_t i = 0; i < n; ++i) {
    if (is_float(c.dtype)) {
      want.set(i, static_cast<float>(x.get(root * n + i)) + static_cast<float>(last));
    } else {
      want.set_int(i, x.get_int(root * n + i) + last);
    }
  }
  for (std::int64_t r = 0; r < c.P; ++r) {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool same = is_float(c.dtype) ? std::bit_cast<std::uint64_t>(y.get(r * n + i)) ==
                                                std::bit_cast<std::uint64_t>(want.get(i))
                                          : y.get_int(r * n + i) == want.get_int(i);
      if (!same) {
        std::ostringstream m;
        m << "rank " << r << " element " << i << ": got " << y.get(r * n + i) << ", want "
          << want.get(i);
        return m.str();
      }
    }
  }
  for (std::int64_t i = 0; i < cells.numel(); ++i)
    if (cells.get_int(i) != 0) return "signal cell " + std::to_string(i) + " is not 0";
  return "";
}

anyp::RunConfig race_checked() {
  anyp::RunConfig config;
  config.check_races = true;
  return config;
}

const char* mode_name(BroadcastMode m) {
  if (m == BroadcastMode::Tree) return "tree";
  if (m == BroadcastMode::ScatterAllgather) return "scatter_allgather";
  return m == BroadcastMode::Auto ? "auto" : "mesh";
}

constexpr BroadcastMode kLogModes[] = {BroadcastMode::Tree, BroadcastMode::ScatterAllgather};
const pl::DType kDtypes[] = {pl::FP32,  pl::FP16,  pl::BF16, pl::INT8,
                             pl::INT16, pl::INT32, pl::INT64};

class LogBroadcastAtP : public testing::TestWithParam<std::int64_t> {};

// Every root at every P = 2 .. 17, three calls back to back, race-checked.
TEST_P(LogBroadcastAtP, EveryRankGetsTheRootsDataBitForBit) {
  for (BroadcastMode mode : kLogModes) {
    for (std::int64_t root = 0; root < GetParam(); ++root) {
      Case c;
      c.mode = mode;
      c.P = GetParam();
      c.root = root;
      c.calls = 3;
      EXPECT_EQ(check(c, race_checked()), "")
          << mode_name(mode) << " P=" << c.P << " root " << root;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, LogBroadcastAtP, testing::Range<std::int64_t>(2, 18));

TEST(LogBroadcast, EveryDtype) {
  for (std::int64_t P : {3, 6, 8}) {
    for (BroadcastMode mode : kLogModes) {
      for (pl::DType dtype : kDtypes) {
        Case c;
        c.mode = mode;
        c.dtype = dtype;
        c.P = P;
        c.root = P - 1;
        c.rows = 1;
        c.calls = 2;
        EXPECT_EQ(check(c, race_checked()), "")
            << mode_name(mode) << " " << anyp::dtype_name(dtype) << " P=" << P;
      }
    }
  }
}

// 80 rows of FP32 (20 KiB: two pieces for the tree's pulls and the
// scatter's first levels); fewer elements than ranks (8 FP32 at P = 9 .. 17:
// some scatter blocks are empty).
TEST(LogBroadcast, SeveralPiecesAndEmptyBlocks) {
  for (BroadcastMode mode : kLogModes) {
    for (std::int64_t P : {2, 5, 8}) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.rows = 80;
      c.root = 1;
      c.calls = 2;
      EXPECT_EQ(check(c, race_checked()), "") << mode_name(mode) << " P=" << P;
    }
    for (std::int64_t P : {9, 13, 17}) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.rows = 1;
      c.cols = 8;
      c.root = 4;
      c.calls = 2;
      EXPECT_EQ(check(c, race_checked()), "") << mode_name(mode) << " P=" << P << " 8 elements";
    }
  }
}

TEST(LogBroadcast, LargeP) {
  for (std::int64_t P : {64, 100, 256}) {
    for (BroadcastMode mode : kLogModes) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.rows = 1;
      c.root = P / 3;
      c.calls = 2;
      EXPECT_EQ(check(c), "") << mode_name(mode) << " P=" << P;
    }
  }
}

TEST(LogBroadcast, UnderPctSchedules) {
  for (std::int64_t P : {5, 6}) {
    for (BroadcastMode mode : kLogModes) {
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        anyp::RunConfig config = race_checked();
        config.pct.enabled = true;
        config.pct.seed = seed;
        config.pct.steps = 400;
        Case c;
        c.mode = mode;
        c.P = P;
        c.rows = 2;
        c.root = 2;
        c.calls = 3;
        EXPECT_EQ(check(c, config), "") << mode_name(mode) << " P=" << P << " seed " << seed;
      }
    }
  }
}

// Auto runs one of the three; the result is the root's either way. One
// call: Auto keeps the mesh's contract (a barrier before restaging).
TEST(LogBroadcast, AutoAtEveryP) {
  for (std::int64_t P : {2, 3, 7, 16}) {
    Case c;
    c.mode = BroadcastMode::Auto;
    c.P = P;
    c.root = 1;
    EXPECT_EQ(check(c, race_checked()), "") << "auto P=" << P;
  }
}

// The modeled makespan of one call under a model of α and β only (local
// accesses and handshakes free) against each algorithm's formula, within
// 1 %: Mesh α + Nβ (one pull); Tree ⌊log₂ P⌋ (Kα + Nβ) (the deepest leaf,
// K pieces of at most 16 KiB); ScatterAllgather the longest chain of its
// pulls (compiler::scatter_allgather_time), which at a power of two with
// one piece per pull is van de Geijn's (log₂ P + P − 1)α + 2(P − 1)/P·Nβ.
double modeled(const Case& c, const std::string& model) {
  anyp::RunConfig config;
  config.timeline = true;
  config.model_file = model;
  const Outcome o = run(c, config);
  EXPECT_EQ(o.stats.timeline->note, "");
  return o.stats.timeline->makespan_ns;
}

TEST(BroadcastFidelity, ModeledTimeMatchesTheFormulas) {
  const anyp_test::Constants k{.alpha = 2000, .beta = 0.005};
  const std::string model = anyp_test::model_file(k, "broadcast");
  for (std::int64_t P : {2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 17}) {
    for (std::int64_t n : {64, 4096, 65536}) {
      const double N = 4.0 * static_cast<double>(n);
      const double K = std::max(1.0, std::ceil(N / 16384.0));
      const double levels = std::floor(std::log2(static_cast<double>(P)));
      const double want[] = {
          k.alpha + N * k.beta, levels * (K * k.alpha + N * k.beta),
          anyp::compiler::scatter_allgather_time(P, n, pl::FP32, k.alpha, k.beta, 0)};
      const BroadcastMode modes[] = {BroadcastMode::Mesh, BroadcastMode::Tree,
                                     BroadcastMode::ScatterAllgather};
      for (int m = 0; m < 3; ++m) {
        Case c;
        c.mode = modes[m];
        c.P = P;
        c.rows = 1;
        c.cols = n;
        c.root = P / 2;
        EXPECT_NEAR(modeled(c, model), want[m], 0.01 * want[m])
            << mode_name(modes[m]) << " P=" << P << " n=" << n;
      }
    }
  }
  for (std::int64_t P : {4, 8, 16}) {
    const double p = static_cast<double>(P), N = 4.0 * 64.0 * p;
    const double van_de_geijn = (std::log2(p) + p - 1) * k.alpha + 2 * (p - 1) / p * N * k.beta;
    EXPECT_NEAR(anyp::compiler::scatter_allgather_time(P, 64 * P, pl::FP32, k.alpha, k.beta, 0),
                van_de_geijn, 1e-9 * van_de_geijn)
        << "P=" << P;
  }
  std::filesystem::remove(model);
}

// What Auto runs, and the table that says why, under that model at P = 16.
// Without link contention in the model the mesh's one pull is always the
// least (the root serves its P - 1 pulls at once at no cost), so Auto runs
// the mesh, and the table shows by how much the others lose.
TEST(BroadcastFidelity, AutoRunsTheLeastEstimate) {
  const anyp_test::Constants k{.alpha = 2000, .beta = 0.005};
  const std::string model = anyp_test::model_file(k, "broadcast_auto");
  Case c;
  c.mode = BroadcastMode::Auto;
  c.P = 16;
  c.rows = 1;
  c.cols = 64;
  anyp::RunConfig config;
  config.model_file = model;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < c.P; ++d) config.distributed.device_ids.push_back(d);
  const anyp::HostTensor x = inputs(c);
  anyp::HostTensor y = anyp::HostTensor::zeros({c.P, c.rows, c.cols}, c.dtype);
  anyp::HostTensor cells = anyp::HostTensor::zeros({c.P, c.P, 1}, pl::INT32);
  EXPECT_EQ(program(c).compile({x, y, cells}, config).collective_table(),
            "collectives (model fidelity, P=16): per call, the algorithm it runs and each "
            "candidate's modeled time, fastest first\n"
            "  per_rank: pld.tensor.broadcast (root 0, data FP32 [1, 64]): runs Mesh (chosen by "
            "Auto)\n"
            "        2.001 us  Mesh  <- runs\n"
            "        8.005 us  Tree\n"
            "       38.002 us  ScatterAllgather\n");
  std::filesystem::remove(model);
}

}  // namespace
