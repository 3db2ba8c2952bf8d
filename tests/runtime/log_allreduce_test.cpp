// log_allreduce_test.cpp — the logarithmic builtin allreduces (recursive
// doubling, Rabenseifner, binomial tree) and the ring's compact [NR, 1] signal
// (docs/collectives.md §3.3, §3.3a-c): every rank's result equal, bit
// for bit, to the documented reduction tree, computed here element by
// element in the dtype's own arithmetic (one rounding per ⊕), for every
// reduce op and dtype, at P = 2 .. 17 (powers of two and the folded
// others) and large P, with data cut into several 16 KiB pieces, in
// back-to-back calls on one signal (whose cells are 0 after each call),
// under the race checker and PCT schedules; the compact ring against the
// ring on its [2 (P - 1), P] signal, bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/choose_algorithm.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/fidelity_model.hpp"
#include "support/sweep.hpp"

namespace {

using pld::AllreduceMode;
using pld::ReduceOp;

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t C = 64;  // columns of the [R, C] data window

struct Case {
  AllreduceMode mode = AllreduceMode::RecursiveDoubling;
  ReduceOp op = ReduceOp::Sum;
  pl::DType dtype = pl::FP32;
  std::int64_t P = 2;
  std::int64_t rows = 3;     // data [rows, C]
  int calls = 1;             // back-to-back allreduces on one signal
  bool ring_signal = false;  // the ring's [2 (P - 1), P] signal, not [P, 1]
};

// host(x [NR, R, C], y [NR, R, C], cells [NR, S0, S1]) -> per rank: data = x[r]
// (row by row), `calls` allreduces, y[r] = data, cells = the signal.
pl::HostFunction program(const Case& c) {
  const pl::Shape data_shape{c.rows, C};
  const pl::Shape sig = c.ring_signal ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(data_shape, c.dtype)), pl::Out("y", pl::Tensor(data_shape, c.dtype)),
      pl::Out("cells", pl::Tensor(sig, pl::INT32)),
      pl::InOut("data", pld::DistributedTensor(data_shape, c.dtype)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "log_allreduce", params,
      [c, sig](pl::Value x, pl::Value y, pl::Value cells, pl::Value data, pl::Value signal) {
        pl::range(c.rows, [&](pl::Scalar i) {
          pl::store(pl::load(x, {i, 0}, {1, C}), {i, 0}, data);
        });
        for (int k = 0; k < c.calls; ++k) data = pld::tensor::allreduce(data, signal, c.op, c.mode);
        pl::range(c.rows, [&](pl::Scalar i) {
          pl::store(pl::load(data, {i, 0}, {1, C}), {i, 0}, y);
        });
        pl::range(sig[0], [&](pl::Scalar i) {
          pl::range(sig[1], [&](pl::Scalar j) {
            pl::write(cells, {i, j}, pl::read(signal, {i, j}));
          });
        });
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", params,
                             [kernel](pl::Value x, pl::Value y, pl::Value cells, pl::Value d,
                                      pl::Value s) { kernel(x, y, cells, d, s); });
  return pl::jit::host("log_allreduce_host",
                       {pl::In("x", pl::Tensor({NR, c.rows, C}, c.dtype)),
                        pl::Out("y", pl::Tensor({NR, c.rows, C}, c.dtype)),
                        pl::Out("cells", pl::Tensor({NR, sig[0], sig[1]}, pl::INT32))},
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

bool is_float(pl::DType d) { return d == pl::FP32 || d == pl::FP16 || d == pl::BF16; }

// Inputs whose reductions depend on the order in floating dtypes and wrap
// in the small integer ones; near 1 for Prod (no overflow to inf).
anyp::HostTensor inputs(const Case& c) {
  anyp::HostTensor x = anyp::HostTensor::zeros({c.P, c.rows, C}, c.dtype);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const std::int64_t r = i / (c.rows * C), e = i % (c.rows * C);
    if (c.op == ReduceOp::Prod) {
      if (is_float(c.dtype)) {
        x.set(i, 1.0 + static_cast<double>((e * 7 + r * 3) % 9 - 4) / 37.0);
      } else {
        x.set_int(i, (e + r) % 4 == 0 ? 3 : ((e + 2 * r) % 3 == 0 ? -1 : 1));
      }
    } else if (is_float(c.dtype)) {
      x.set(i, static_cast<double>((e * 37 + r * 101) % 211) / 7.3 - 13.0);
    } else {
      x.set_int(i, (e * 37 + r * 101) % 211 - 100);
    }
  }
  return x;
}

// a ⊕ b in the dtype's own arithmetic, as the VM's tiles compute it: float
// for FP32, FP16 and BF16 (then rounded to the dtype), int64 wrapped to the
// dtype's width for integers; Max and Min take `a` when neither is greater.
struct Reference {
  pl::DType dtype;
  ReduceOp op;
  anyp::HostTensor scratch = anyp::HostTensor::zeros({1}, dtype);

  void combine(const anyp::HostTensor& lo, const anyp::HostTensor& hi, anyp::HostTensor& out) {
    for (std::int64_t i = 0; i < lo.numel(); ++i) {
      if (is_float(dtype)) {
        const float a = static_cast<float>(lo.get(i)), b = static_cast<float>(hi.get(i));
        float v = a + b;
        if (op == ReduceOp::Prod) v = a * b;
        if (op == ReduceOp::Max) v = std::max(a, b);
        if (op == ReduceOp::Min) v = std::min(a, b);
        scratch.set(0, v);
        out.set(i, scratch.get(0));
      } else {
        const std::int64_t a = lo.get_int(i), b = hi.get_int(i);
        auto wrap = [](std::uint64_t u) { return static_cast<std::int64_t>(u); };
        std::int64_t v = wrap(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
        if (op == ReduceOp::Prod)
          v = wrap(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
        if (op == ReduceOp::Max) v = std::max(a, b);
        if (op == ReduceOp::Min) v = std::min(a, b);
        scratch.set_int(0, v);
        out.set_int(i, scratch.get_int(0));
      }
    }
  }
};

anyp::HostTensor row_of(const anyp::HostTensor& x, std::int64_t r, std::int64_t n) {
  anyp::HostTensor row = anyp::HostTensor::zeros({n}, x.dtype());
  for (std::int64_t i = 0; i < n; ++i) {
    if (is_float(x.dtype())) {
      row.set(i, x.get(r * n + i));
    } else {
      row.set_int(i, x.get_int(r * n + i));
    }
  }
  return row;
}

// The documented tree (collectives.md §3.3a-c). Tree: a binomial tree
// over the P ranks as they are. The others: fold rank 2i into
// 2i + 1 for i < rem (x_2i ⊕ x_2i+1), then over the p' virtual ranks,
// level by level, v ⊕ v ^ m with the lower virtual rank first: m = 1, 2,
// 4, ... for recursive doubling, p'/2, p'/4, ... for Rabenseifner.
anyp::HostTensor reference(const Case& c, std::vector<anyp::HostTensor> value) {
  const std::int64_t n = value[0].numel();
  Reference ref{c.dtype, c.op};
  if (c.mode == AllreduceMode::Tree) {  // rank r ⊕ rank r + m, for r mod 2m = 0, m = 1, 2, 4, ...
    for (std::int64_t m = 1; m < c.P; m *= 2) {
      for (std::int64_t r = 0; r + m < c.P; r += 2 * m) {
        anyp::HostTensor out = anyp::HostTensor::zeros({n}, c.dtype);
        ref.combine(value[r], value[r + m], out);
        value[r] = out;
      }
    }
    return value[0];
  }
  const auto pow2 = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(c.P)));
  const std::int64_t rem = c.P - pow2;
  std::vector<anyp::HostTensor> v;
  for (std::int64_t i = 0; i < pow2; ++i) {
    if (i < rem) {
      anyp::HostTensor folded = anyp::HostTensor::zeros({n}, c.dtype);
      ref.combine(value[2 * i], value[2 * i + 1], folded);
      v.push_back(folded);
    } else {
      v.push_back(value[i + rem]);
    }
  }
  for (std::int64_t level = 1; level < pow2; level *= 2) {
    const std::int64_t m = c.mode == AllreduceMode::Rabenseifner ? pow2 / (2 * level) : level;
    std::vector<anyp::HostTensor> next;
    for (std::int64_t i = 0; i < pow2; ++i) {
      anyp::HostTensor out = anyp::HostTensor::zeros({n}, c.dtype);
      ref.combine(v[std::min(i, i ^ m)], v[std::max(i, i ^ m)], out);
      next.push_back(out);
    }
    v = std::move(next);
  }
  return v[0];
}

struct Outcome {
  anyp::HostTensor y, cells;
};

Outcome run(const Case& c, const anyp::RunConfig& base = {}) {
  const anyp::HostTensor x = inputs(c);
  Outcome o{anyp::HostTensor::zeros({c.P, c.rows, C}, c.dtype), {}};
  const std::int64_t s0 = c.ring_signal ? 2 * (c.P - 1) : c.P, s1 = c.ring_signal ? c.P : 1;
  o.cells = anyp::HostTensor::zeros({c.P, s0, s1}, pl::INT32);
  anyp::RunConfig config = base;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < c.P; ++d) config.distributed.device_ids.push_back(d);
  program(c).compile({x, o.y, o.cells}, config)(x, o.y, o.cells);
  return o;
}

// "" when every rank holds the reference of `calls` allreduces, bit for
// bit, and every signal cell is 0; else the first difference.
std::string check(const Case& c, const anyp::RunConfig& config = {}) {
  const Outcome o = run(c, config);
  const std::int64_t n = c.rows * C;
  const anyp::HostTensor x = inputs(c);
  std::vector<anyp::HostTensor> value;
  for (std::int64_t r = 0; r < c.P; ++r) value.push_back(row_of(x, r, n));
  for (int k = 0; k < c.calls; ++k) {
    const anyp::HostTensor result = reference(c, value);
    for (auto& v : value) v = result;
  }
  for (std::int64_t r = 0; r < c.P; ++r) {
    for (std::int64_t i = 0; i < n; ++i) {
      const bool same = is_float(c.dtype) ? std::bit_cast<std::uint64_t>(o.y.get(r * n + i)) ==
                                                std::bit_cast<std::uint64_t>(value[r].get(i))
                                          : o.y.get_int(r * n + i) == value[r].get_int(i);
      if (!same) {
        std::ostringstream m;
        m << "rank " << r << " element " << i << ": got " << o.y.get(r * n + i) << ", want "
          << value[r].get(i);
        return m.str();
      }
    }
  }
  for (std::int64_t i = 0; i < o.cells.numel(); ++i) {
    if (o.cells.get_int(i) != 0) return "signal cell " + std::to_string(i) + " is not 0";
  }
  return "";
}

anyp::RunConfig race_checked() {
  anyp::RunConfig config;
  config.check_races = true;
  return config;
}

const char* mode_name(AllreduceMode m) {
  if (m == AllreduceMode::Tree) return "tree";
  return m == AllreduceMode::Rabenseifner ? "rabenseifner" : "recursive_doubling";
}

constexpr AllreduceMode kLogModes[] = {AllreduceMode::RecursiveDoubling,
                                       AllreduceMode::Rabenseifner, AllreduceMode::Tree};
constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod};
const pl::DType kDtypes[] = {pl::FP32,  pl::FP16,  pl::BF16, pl::INT8,
                             pl::INT16, pl::INT32, pl::INT64};

class LogAllreduceAtP : public testing::TestWithParam<std::int64_t> {};

// Sum in FP32 and FP16 at every P = 2 .. 17, 3 rows (192 elements: uneven
// Rabenseifner blocks at most P), race-checked.
TEST_P(LogAllreduceAtP, MatchesTheDocumentedTreeBitForBit) {
  for (AllreduceMode mode : kLogModes) {
    for (pl::DType dtype : {pl::FP32, pl::FP16}) {
      Case c;
      c.mode = mode;
      c.dtype = dtype;
      c.P = GetParam();
      EXPECT_EQ(check(c, race_checked()), "") << mode_name(mode) << " P=" << c.P;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, LogAllreduceAtP, testing::Range<std::int64_t>(2, 18));

// Every op and dtype at P = 3, 6, 8 (folded odd and even, a power of two).
TEST(LogAllreduce, EveryOpAndDtype) {
  for (std::int64_t P : {3, 6, 8}) {
    for (AllreduceMode mode : kLogModes) {
      for (ReduceOp op : kOps) {
        for (pl::DType dtype : kDtypes) {
          Case c;
          c.mode = mode;
          c.op = op;
          c.dtype = dtype;
          c.P = P;
          c.rows = 1;
          EXPECT_EQ(check(c, race_checked()), "")
              << mode_name(mode) << " op " << static_cast<int>(op) << " dtype "
              << anyp::dtype_name(dtype) << " P=" << P;
        }
      }
    }
  }
}

// 80 rows of FP32 (20 KiB: two pieces for recursive doubling, several
// blocks per Rabenseifner level), three calls back to back on one signal.
TEST(LogAllreduce, SeveralPiecesAndBackToBackCalls) {
  for (std::int64_t P : {2, 5, 8}) {
    for (AllreduceMode mode : kLogModes) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.rows = 80;
      c.calls = 3;
      c.op = ReduceOp::Max;  // three Sums would grow; Max keeps the tree's choice visible
      EXPECT_EQ(check(c, race_checked()), "") << mode_name(mode) << " P=" << P;
      c.op = ReduceOp::Sum;
      c.calls = 2;
      EXPECT_EQ(check(c), "") << mode_name(mode) << " P=" << P << " sum";
    }
  }
}

TEST(LogAllreduce, LargeP) {
  for (std::int64_t P : {64, 100, 256}) {
    for (AllreduceMode mode : kLogModes) {
      Case c;
      c.mode = mode;
      c.P = P;
      c.rows = 1;
      EXPECT_EQ(check(c), "") << mode_name(mode) << " P=" << P;
    }
  }
}

// PCT schedules (one worker, priorities changed at random points): the
// same bits under every one, race-checked.
TEST(LogAllreduce, UnderPctSchedules) {
  for (std::int64_t P : {5, 6}) {
    for (AllreduceMode mode : kLogModes) {
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        anyp::RunConfig config = race_checked();
        config.pct.enabled = true;
        config.pct.seed = seed;
        config.pct.steps = 400;
        Case c;
        c.mode = mode;
        c.P = P;
        c.rows = 2;
        c.calls = 2;
        c.op = ReduceOp::Min;
        EXPECT_EQ(check(c, config), "") << mode_name(mode) << " P=" << P << " seed " << seed;
      }
    }
  }
}

// The ring on the [P, 1] signal runs the same rounds as on [2 (P - 1), P]:
// the same bits, every cell back to 0, at P = 2 (left is right) .. 9.
TEST(CompactRingSignal, SameBitsAsTheRingSignal) {
  for (std::int64_t P = 2; P <= 9; ++P) {
    Case c;
    c.mode = AllreduceMode::Ring;
    c.P = P;
    c.rows = 3;
    c.calls = 2;
    c.op = ReduceOp::Sum;
    const Outcome compact = run(c, race_checked());
    c.ring_signal = true;
    const Outcome full = run(c, race_checked());
    for (std::int64_t i = 0; i < compact.y.numel(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(compact.y.get(i)),
                std::bit_cast<std::uint64_t>(full.y.get(i)))
          << "P=" << P << " element " << i;
    for (std::int64_t i = 0; i < compact.cells.numel(); ++i)
      ASSERT_EQ(compact.cells.get_int(i), 0) << "P=" << P;
  }
}

// ---- reduce_scatter by recursive halving (collectives.md §3.6a) --------------------
// Rabenseifner's reduce-scatter half over the P rows: row r of rank r is
// that row of the Rabenseifner tree (the same reference), bit for bit.

struct ScatterCase {
  pld::ReduceScatterMode mode = pld::ReduceScatterMode::RecursiveHalving;
  ReduceOp op = ReduceOp::Sum;
  pl::DType dtype = pl::FP32;
  std::int64_t P = 2;
  std::int64_t cols = C;  // a row of the [NR, cols] window
  int calls = 1;          // back to back, each restaging the window
};

// host(x [NR, NR, cols], y [NR, 1, cols], cells [NR, NR, 1]) -> per rank,
// per call: data = x[r], reduce_scatter; then y[r] = data row r.
pl::HostFunction scatter_program(const ScatterCase& c) {
  const pl::Shape all{NR, c.cols}, row{1, c.cols}, sig{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(all, c.dtype)), pl::Out("y", pl::Tensor(row, c.dtype)),
      pl::Out("cells", pl::Tensor(sig, pl::INT32)),
      pl::InOut("data", pld::DistributedTensor(all, c.dtype)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "halving_reduce_scatter", params,
      [c](pl::Value x, pl::Value y, pl::Value cells, pl::Value data, pl::Value signal) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(data));
        for (int k = 0; k < c.calls; ++k) {
          pl::range(NR, [&](pl::Scalar i) {
            pl::store(pl::load(x, {i, 0}, {1, c.cols}), {i, 0}, data);
          });
          data = pld::tensor::reduce_scatter(data, signal, c.op, c.mode);
        }
        pl::store(pl::load(data, {me, 0}, {1, c.cols}), {0, 0}, y);
        pl::range(NR, [&](pl::Scalar i) { pl::write(cells, {i, 0}, pl::read(signal, {i, 0})); });
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", params,
                             [kernel](pl::Value x, pl::Value y, pl::Value cells, pl::Value d,
                                      pl::Value s) { kernel(x, y, cells, d, s); });
  return pl::jit::host("halving_host",
                       {pl::In("x", pl::Tensor({NR, NR, c.cols}, c.dtype)),
                        pl::Out("y", pl::Tensor({NR, 1, c.cols}, c.dtype)),
                        pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32))},
                       [per_rank, c, all, sig](pl::Value x, pl::Value y, pl::Value cells) {
                         auto data_buf = pld::alloc_window_buffer("data", all, c.dtype);
                         auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], cells[r], pld::window(data_buf, all, c.dtype),
                                    pld::window(signal_buf, sig, pl::INT32), pl::device(r));
                         });
                       });
}

struct ScatterOutcome {
  anyp::HostTensor x, y, cells;
  anyp::RunStats stats;
};

ScatterOutcome run_scatter(const ScatterCase& c, const anyp::RunConfig& base = {}) {
  Case as_allreduce;
  as_allreduce.op = c.op;
  as_allreduce.dtype = c.dtype;
  as_allreduce.P = c.P;
  as_allreduce.rows = c.P * c.cols / C;
  ScatterOutcome o{anyp::HostTensor::zeros({c.P, c.P, c.cols}, c.dtype),
                   anyp::HostTensor::zeros({c.P, 1, c.cols}, c.dtype),
                   anyp::HostTensor::zeros({c.P, c.P, 1}, pl::INT32),
                   {}};
  const anyp::HostTensor in = inputs(as_allreduce);  // [P, P·cols / C, C]: the same elements
  for (std::int64_t i = 0; i < o.x.numel(); ++i) {
    if (is_float(c.dtype)) {
      o.x.set(i, in.get(i));
    } else {
      o.x.set_int(i, in.get_int(i));
    }
  }
  anyp::RunConfig config = base;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < c.P; ++d) config.distributed.device_ids.push_back(d);
  o.stats = scatter_program(c).compile({o.x, o.y, o.cells}, config)(o.x, o.y, o.cells);
  return o;
}

// The pairwise exchange's order (collectives.md §3.6c): row r is
// ((x_r ⊕ x_{r+1}) ⊕ x_{r+2}) .. ⊕ x_{r-1} (indices mod P), row r of each.
anyp::HostTensor pairwise_reference(const ScatterCase& c,
                                    const std::vector<anyp::HostTensor>& value) {
  Reference ref{c.dtype, c.op};
  anyp::HostTensor want = anyp::HostTensor::zeros({c.P * c.cols}, c.dtype);
  for (std::int64_t r = 0; r < c.P; ++r) {
    auto row = [&](std::int64_t rank) {
      return row_of(value[static_cast<std::size_t>(rank)], r, c.cols);
    };
    anyp::HostTensor acc = row(r);
    for (std::int64_t k = 1; k < c.P; ++k) ref.combine(acc, row((r + k) % c.P), acc);
    for (std::int64_t j = 0; j < c.cols; ++j) {
      if (is_float(c.dtype)) {
        want.set(r * c.cols + j, acc.get(j));
      } else {
        want.set_int(r * c.cols + j, acc.get_int(j));
      }
    }
  }
  return want;
}

// "" when rank r's row r is row r of the mode's reference (of the last
// call's inputs, which every call restages), bit for bit: the Rabenseifner
// tree for RecursiveHalving, the pairwise order for Pairwise; and every
// cell is 0.
std::string check_scatter(const ScatterCase& c, const anyp::RunConfig& config = {}) {
  const ScatterOutcome o = run_scatter(c, config);
  const std::int64_t n = c.P * c.cols;
  Case ref_case;
  ref_case.mode = AllreduceMode::Rabenseifner;
  ref_case.op = c.op;
  ref_case.dtype = c.dtype;
  ref_case.P = c.P;
  std::vector<anyp::HostTensor> value;
  for (std::int64_t r = 0; r < c.P; ++r) value.push_back(row_of(o.x, r, n));
  const anyp::HostTensor want = c.mode == pld::ReduceScatterMode::Pairwise
                                    ? pairwise_reference(c, value)
                                    : reference(ref_case, value);
  for (std::int64_t r = 0; r < c.P; ++r) {
    for (std::int64_t j = 0; j < c.cols; ++j) {
      const std::int64_t got = r * c.cols + j, at = r * c.cols + j;
      const bool same = is_float(c.dtype) ? std::bit_cast<std::uint64_t>(o.y.get(got)) ==
                                                std::bit_cast<std::uint64_t>(want.get(at))
                                          : o.y.get_int(got) == want.get_int(at);
      if (!same) {
        std::ostringstream m;
        m << "rank " << r << " element " << j << ": got " << o.y.get(got) << ", want "
          << want.get(at);
        return m.str();
      }
    }
  }
  for (std::int64_t i = 0; i < o.cells.numel(); ++i)
    if (o.cells.get_int(i) != 0) return "signal cell " + std::to_string(i) + " is not 0";
  return "";
}

class HalvingReduceScatterAtP : public testing::TestWithParam<std::int64_t> {};

const pld::ReduceScatterMode kScatterModes[] = {pld::ReduceScatterMode::RecursiveHalving,
                                                pld::ReduceScatterMode::Pairwise};

const char* scatter_name(pld::ReduceScatterMode m) {
  return m == pld::ReduceScatterMode::Mesh               ? "mesh"
         : m == pld::ReduceScatterMode::RecursiveHalving ? "halving"
         : m == pld::ReduceScatterMode::Pairwise         ? "pairwise"
                                                         : "auto";
}

pld::ReduceScatterMode scatter_mode_of(anyp::ir::Algorithm a) {
  switch (a) {
    case anyp::ir::Algorithm::Mesh:
      return pld::ReduceScatterMode::Mesh;
    case anyp::ir::Algorithm::RecursiveHalving:
      return pld::ReduceScatterMode::RecursiveHalving;
    case anyp::ir::Algorithm::Pairwise:
      return pld::ReduceScatterMode::Pairwise;
    default:
      ADD_FAILURE() << "no reduce_scatter mode runs " << anyp::ir::algorithm_name(a);
      return pld::ReduceScatterMode::Auto;
  }
}

TEST_P(HalvingReduceScatterAtP, RowRIsTheDocumentedOrderBitForBit) {
  for (pld::ReduceScatterMode mode : kScatterModes) {
    for (pl::DType dtype : {pl::FP32, pl::FP16}) {
      ScatterCase c;
      c.mode = mode;
      c.dtype = dtype;
      c.P = GetParam();
      c.calls = 3;
      EXPECT_EQ(check_scatter(c, race_checked()), "") << scatter_name(mode) << " P=" << c.P;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, HalvingReduceScatterAtP, testing::Range<std::int64_t>(2, 18));

TEST(HalvingReduceScatter, EveryOpAndDtype) {
  for (std::int64_t P : {3, 6, 8}) {
    for (ReduceOp op : kOps) {
      for (pl::DType dtype : kDtypes) {
        for (pld::ReduceScatterMode mode : kScatterModes) {
          ScatterCase c;
          c.mode = mode;
          c.op = op;
          c.dtype = dtype;
          c.P = P;
          c.calls = 2;
          EXPECT_EQ(check_scatter(c, race_checked()), "")
              << scatter_name(mode) << " op " << static_cast<int>(op) << " "
              << anyp::dtype_name(dtype) << " P=" << P;
        }
      }
    }
  }
}

// Rows of 4096 FP32 (16 KiB): a level's half is several pieces.
TEST(HalvingReduceScatter, SeveralPiecesLargePAndPct) {
  for (pld::ReduceScatterMode mode : kScatterModes) {
    const std::string name = scatter_name(mode);
    for (std::int64_t P : {2, 5, 8}) {
      ScatterCase c;
      c.mode = mode;
      c.P = P;
      c.cols = 4096;
      c.calls = 2;
      c.op = ReduceOp::Max;
      EXPECT_EQ(check_scatter(c, race_checked()), "") << name << " P=" << P;
    }
    for (std::int64_t P : anyp_test::sweep({64, 100}, {100})) {
      ScatterCase c;
      c.mode = mode;
      c.P = P;
      c.calls = 2;
      EXPECT_EQ(check_scatter(c), "") << name << " P=" << P;
    }
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      anyp::RunConfig config = race_checked();
      config.pct.enabled = true;
      config.pct.seed = seed;
      config.pct.steps = 400;
      ScatterCase c;
      c.mode = mode;
      c.P = 6;
      c.calls = 3;
      c.op = ReduceOp::Min;
      EXPECT_EQ(check_scatter(c, config), "") << name << " seed " << seed;
    }
  }
}

// Under a model of α and β only, at a power of two (no fold) with rows
// under 16 KiB: L α + (P − 1)·Sβ for the halving (level s pulls P/2^(s+1)
// rows), (P − 1)(α + Sβ) for the mesh (its P − 1 pulls of a row), within 1 %.
TEST(HalvingReduceScatter, ModeledTimeMatchesTheFormulas) {
  const std::string model = anyp_test::model_file({.alpha = 2000, .beta = 0.005}, "halving");
  for (std::int64_t P : {2, 4, 8, 16}) {
    const double p = static_cast<double>(P), S = 4.0 * C, L = std::log2(p);
    const double want[] = {(p - 1) * (2000 + S * 0.005), L * 2000 + (p - 1) * S * 0.005};
    const pld::ReduceScatterMode modes[] = {pld::ReduceScatterMode::Mesh,
                                            pld::ReduceScatterMode::RecursiveHalving};
    for (int m = 0; m < 2; ++m) {
      ScatterCase c;
      c.mode = modes[m];
      c.P = P;
      anyp::RunConfig config;
      config.timeline = true;
      config.model_file = model;
      const double got = run_scatter(c, config).stats.timeline->makespan_ns;
      EXPECT_NEAR(got, want[m], 0.01 * want[m]) << (m ? "halving" : "mesh") << " P=" << P;
    }
  }
  std::filesystem::remove(model);
}

double scatter_makespan(ScatterCase c, const std::string& model) {
  anyp::RunConfig config;
  config.timeline = true;
  config.model_file = model;
  const ScatterOutcome o = run_scatter(c, config);
  EXPECT_EQ(o.stats.timeline->note, "");
  return o.stats.timeline->makespan_ns;
}

// Every P, folded or not: the simulated makespan of each algorithm is its
// estimate (compiler::reduce_scatter_estimates, the formulas of §3.6a, §3.6c
// with the fold's whole-window hand-over and own-row return), within 1 %,
// under a model of α and β only and under one that prices the notifies.
TEST(HalvingReduceScatter, ModeledTimeMatchesTheEstimateAtEveryP) {
  for (const anyp_test::Constants& k :
       {anyp_test::Constants{.alpha = 2000, .beta = 0.005},
        anyp_test::Constants{
            .alpha = 2000, .beta = 0.005, .issue = 100, .latency = 700, .wait = 50}}) {
    const std::string model = anyp_test::model_file(k, "halving_fold");
    const anyp::runtime::CostModel cost = anyp::runtime::load_cost_model(model);
    for (std::int64_t P : anyp_test::sweep(anyp_test::every_p(2, 17), {2, 3, 6, 8, 13})) {
      for (std::int64_t cols : {std::int64_t{C}, std::int64_t{8192}}) {
        const auto estimates = anyp::compiler::reduce_scatter_estimates(
            P, cols, pl::FP32, anyp::ir::ReduceKind::Sum, cost);
        for (const auto& e : estimates) {
          ScatterCase c;
          c.P = P;
          c.cols = cols;
          c.mode = scatter_mode_of(e.kind);
          EXPECT_NEAR(scatter_makespan(c, model), e.ns, 0.01 * e.ns)
              << anyp::ir::algorithm_name(e.kind) << " P=" << P << " cols=" << cols << " latency "
              << k.latency;
        }
      }
    }
    std::filesystem::remove(model);
  }
}

// ReduceScatterMode::Auto under a latency-bound and a bandwidth-bound
// model: it runs the algorithm of least simulated makespan (within 1 %) at
// P = 2 .. 17, and over the grid more than one wins; its result is bit for
// bit the result of the algorithm it names.
TEST(HalvingReduceScatter, AutoRunsTheCandidateOfLeastModeledTime) {
  std::vector<std::string> winners;
  for (const anyp_test::Constants& k :
       {anyp_test::Constants{.alpha = 2000, .beta = 0.005, .issue = 100, .latency = 700},
        anyp_test::Constants{.alpha = 50, .beta = 0.5, .issue = 10, .latency = 30}}) {
    const std::string model = anyp_test::model_file(k, "halving_auto");
    for (std::int64_t P : anyp_test::sweep({2, 3, 4, 5, 7, 8, 12, 16, 17}, {2, 5, 8, 12})) {
      for (std::int64_t cols : {std::int64_t{C}, std::int64_t{4096}}) {
        ScatterCase c;
        c.P = P;
        c.cols = cols;
        double least = 0;
        std::string fastest;
        for (pld::ReduceScatterMode mode :
             {pld::ReduceScatterMode::Mesh, pld::ReduceScatterMode::RecursiveHalving,
              pld::ReduceScatterMode::Pairwise}) {
          c.mode = mode;
          const double t = scatter_makespan(c, model);
          if (fastest.empty() || t < least) {
            least = t;
            fastest = scatter_name(mode);
          }
        }
        c.mode = pld::ReduceScatterMode::Auto;
        EXPECT_NEAR(scatter_makespan(c, model), least, 0.01 * least)
            << "alpha " << k.alpha << " P=" << P << " cols=" << cols << " fastest " << fastest;
        winners.push_back(fastest);
      }
    }
    std::filesystem::remove(model);
  }
  std::sort(winners.begin(), winners.end());
  winners.erase(std::unique(winners.begin(), winners.end()), winners.end());
  EXPECT_GT(winners.size(), 1u);
  // The bits: Auto's row r is the row r of the mode it chose.
  for (std::int64_t P : {3, 8, 13}) {
    ScatterCase c;
    c.P = P;
    c.mode = pld::ReduceScatterMode::Auto;
    const ScatterOutcome got = run_scatter(c);
    const std::string choices = got.stats.collective_choices;
    EXPECT_NE(choices.find("Auto chose"), std::string::npos) << choices;
    c.mode = choices.find("chose RecursiveHalving") != std::string::npos
                 ? pld::ReduceScatterMode::RecursiveHalving
             : choices.find("chose Pairwise") != std::string::npos
                 ? pld::ReduceScatterMode::Pairwise
                 : pld::ReduceScatterMode::Mesh;
    const ScatterOutcome want = run_scatter(c);
    for (std::int64_t i = 0; i < want.y.numel(); ++i)
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got.y.get(i)),
                std::bit_cast<std::uint64_t>(want.y.get(i)))
          << "P=" << P << " element " << i;
  }
}

// The table names the reduce_scatter's choice and every estimate: at P = 8,
// rows of 256 B, 3α + 7·Sβ for the halving, 7(α + Sβ) for the mesh and the
// pairwise exchange alike (no notify costs in this model).
TEST(HalvingReduceScatter, TheTableNamesTheChoice) {
  const std::string model = anyp_test::model_file({.alpha = 2000, .beta = 0.005}, "halving_table");
  ScatterCase c;
  c.P = 8;
  c.mode = pld::ReduceScatterMode::Auto;
  anyp::RunConfig config;
  config.model_file = model;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < c.P; ++d) config.distributed.device_ids.push_back(d);
  const anyp::HostTensor x = anyp::HostTensor::zeros({c.P, c.P, c.cols}, c.dtype);
  const anyp::HostTensor y = anyp::HostTensor::zeros({c.P, 1, c.cols}, c.dtype);
  const anyp::HostTensor cells = anyp::HostTensor::zeros({c.P, c.P, 1}, pl::INT32);
  EXPECT_EQ(scatter_program(c).compile({x, y, cells}, config).collective_table(),
            "collectives (model fidelity, P=8): per call, the algorithm it runs and each "
            "candidate's modeled time, fastest first\n"
            "  per_rank: pld.tensor.reduce_scatter (Sum, RecursiveHalving, data FP32 [8, 64]): "
            "runs RecursiveHalving (chosen by Auto)\n"
            "        6.009 us  RecursiveHalving  <- runs\n"
            "       14.009 us  Mesh\n"
            "       14.009 us  Pairwise\n");
  std::filesystem::remove(model);
}

}  // namespace
