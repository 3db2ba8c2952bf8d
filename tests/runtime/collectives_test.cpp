// collectives_test.cpp — runtime tests of the builtin collectives (pld.hpp;
// docs/collectives.md, docs/design.md §11): for P = 2..8 every builtin against a
// host golden (allreduce mesh and ring with every ReduceOp, broadcast from
// roots 0 and P - 1, allgather, reduce_scatter with every ReduceOp,
// all_to_all, all_to_all_v with per-destination counts); FP16 and BF16
// allreduce; a mesh allreduce over several 16 KiB chunks and a ring whose
// segments split into sub-chunks; ring segments of uneven size; 100
// back-to-back calls on one signal, each round checked; five different
// collectives sharing one [NR, 1] signal in a loop (also under seeded
// deterministic schedules); and a collective called on some ranks only,
// which ends in a DeadlockError naming the collective.
//
// After its last call every program copies its signal's cells out with
// pl::read: the self-clearing credit protocol leaves them all 0. Every program
// is race-free (these tests also run under TSan): in a loop, a collective
// that pushes into peers' windows (allgather, all_to_all) or whose peers read
// the root's window after its only barrier (broadcast) is followed by a
// barrier before the window is written again, as a correct user writes it.
//
// Goldens (docs/ladder-steps.md §1): data movement is exact; arithmetic is close,
// |out - g| <= 1e-5 + 1e-5 |g| for FP32 and a dtype-sized relative bound for
// FP16 / BF16.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t SIZE = 960;    // allreduce data: uneven ring segments at P = 7
constexpr std::int64_t ROW = 64;      // one row of the row-wise collectives
constexpr std::int64_t ROUNDS = 100;  // back-to-back calls
// P for the 100-round loops (single calls run at every P = 2..8): even and
// odd, uneven ring segments (64 elements at P = 3, 5), the largest; kept
// short because these tests also run under TSan.
constexpr std::int64_t kLoopRanks[] = {2, 3, 5, 8};

using pld::AllreduceMode;
using pld::ReduceOp;

constexpr ReduceOp kOps[] = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod};
constexpr AllreduceMode kModes[] = {AllreduceMode::Mesh, AllreduceMode::Ring};

const char* op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum:
      return "sum";
    case ReduceOp::Max:
      return "max";
    case ReduceOp::Min:
      return "min";
    case ReduceOp::Prod:
      return "prod";
  }
  return "?";
}

const char* mode_name(AllreduceMode mode) { return mode == AllreduceMode::Ring ? "ring" : "mesh"; }

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Max:
      return std::max(a, b);
    case ReduceOp::Min:
      return std::min(a, b);
    case ReduceOp::Prod:
      return a * b;
    case ReduceOp::Sum:
      break;
  }
  return a + b;
}

// The signal of an allreduce mode, symbolic and at P.
pl::Shape signal_shape(AllreduceMode mode) {
  if (mode == AllreduceMode::Ring) return {2 * (NR - 1), NR};
  return {NR, 1};
}
std::vector<std::int64_t> signal_dims(AllreduceMode mode, std::int64_t P) {
  if (mode == AllreduceMode::Ring) return {2 * (P - 1), P};
  return {P, 1};
}

// ---- one program shape for (almost) every test ----------------------------------------
// host -> per_rank -> kernel, all three with the parameters x (in), y (out),
// cells (out, INT32, the signal's shape), tmp (out, a private scratch tensor)
// and the windows data and signal, allocated by the host. The kernel runs
// `body`, then (unless told not to) copies every signal cell into `cells`.

struct Layout {
  pl::Shape x, y, tmp, data;
  pl::Shape signal = {NR, 1};
  pl::DType dtype = pl::FP32;
  bool read_cells = true;
};

using Body = std::function<void(pl::Value& x, pl::Value& y, pl::Value& tmp, pl::Value& data,
                                pl::Value& signal)>;

pl::Shape ranked(const pl::Shape& shape) {
  pl::Shape s{NR};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

// Copies this rank's cells of a 2-D signal, one at a time.
void copy_cells(const pl::Value& signal, const pl::Value& cells, const pl::Shape& shape) {
  pl::range(shape[0], [&](pl::Scalar i) {
    pl::range(shape[1], [&](pl::Scalar j) { pl::write(cells, {i, j}, pl::read(signal, {i, j})); });
  });
}

pl::HostFunction make_program(const std::string& name, const Layout& l, const Body& body) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(l.x, l.dtype)),
      pl::Out("y", pl::Tensor(l.y, l.dtype)),
      pl::Out("cells", pl::Tensor(l.signal, pl::INT32)),
      pl::Out("tmp", pl::Tensor(l.tmp, l.dtype)),
      pl::InOut("data", pld::DistributedTensor(l.data, l.dtype)),
      pl::InOut("signal", pld::DistributedTensor(l.signal, pl::INT32))};
  const auto kernel = pl::jit::incore(name + "_kernel", params,
                                      [l, body](pl::Value x, pl::Value y, pl::Value cells,
                                                pl::Value tmp, pl::Value data, pl::Value signal) {
                                        body(x, y, tmp, data, signal);
                                        if (l.read_cells) copy_cells(signal, cells, l.signal);
                                      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value y, pl::Value cells, pl::Value tmp, pl::Value data,
               pl::Value signal) { kernel(x, y, cells, tmp, data, signal); });
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor(ranked(l.x), l.dtype)),
                        pl::Out("y", pl::Tensor(ranked(l.y), l.dtype)),
                        pl::Out("cells", pl::Tensor(ranked(l.signal), pl::INT32)),
                        pl::Out("tmp", pl::Tensor(ranked(l.tmp), l.dtype))},
                       [l, per_rank](pl::Value x, pl::Value y, pl::Value cells, pl::Value tmp) {
                         auto data_buf = pld::alloc_window_buffer("data", l.data, l.dtype);
                         auto signal_buf = pld::alloc_window_buffer("signal", l.signal, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           pl::Value cells_r = cells[r];
                           pl::Value tmp_r = tmp[r];
                           pl::Value data = pld::window(data_buf, l.data, l.dtype);
                           pl::Value signal = pld::window(signal_buf, l.signal, pl::INT32);
                           per_rank(xr, yr, cells_r, tmp_r, data, signal, pl::device(r));
                         });
                       });
}

struct Result {
  anyp::HostTensor y, cells;
};

// Compiles and runs `program`; the y and tmp shapes include the leading P,
// `signal` is the signal window's shape (cells gets a leading P).
Result run_program(const pl::HostFunction& program, const anyp::HostTensor& x,
                   const std::vector<std::int64_t>& y_shape,
                   const std::vector<std::int64_t>& tmp_shape,
                   const std::vector<std::int64_t>& signal, const anyp::RunConfig& config) {
  std::vector<std::int64_t> cells_shape{x.shape()[0]};
  cells_shape.insert(cells_shape.end(), signal.begin(), signal.end());
  Result out;
  out.y = anyp::HostTensor::zeros(y_shape, x.dtype());
  out.cells = anyp::HostTensor::zeros(cells_shape, pl::INT32);
  for (std::int64_t i = 0; i < out.cells.numel(); ++i) out.cells.set(i, -7);  // must be overwritten
  anyp::HostTensor tmp = anyp::HostTensor::zeros(tmp_shape, x.dtype());
  program.compile({x, out.y, out.cells, tmp}, config)(x, out.y, out.cells, tmp);
  return out;
}

// ---- checks ----------------------------------------------------------------------------

// The expected value of element [r][i][j] of a 3-D output.
using Golden = std::function<double(std::int64_t r, std::int64_t i, std::int64_t j)>;

// "" when every element of the 3-D `out` satisfies |out - g| <= atol + rtol |g|
// (bitwise equality when both are 0), else the first mismatch.
std::string mismatch(const std::string& name, const anyp::HostTensor& out, const Golden& golden,
                     double rtol = 0, double atol = 0) {
  const auto& s = out.shape();
  for (std::int64_t r = 0; r < s[0]; ++r) {
    for (std::int64_t i = 0; i < s[1]; ++i) {
      for (std::int64_t j = 0; j < s[2]; ++j) {
        const double got = out.at({r, i, j}), want = golden(r, i, j);
        const bool ok = rtol == 0 && atol == 0
                            ? got == want
                            : std::abs(got - want) <= atol + rtol * std::abs(want);
        if (!ok) {
          std::ostringstream m;
          m.precision(17);
          m << name << "[" << r << "][" << i << "][" << j << "] = " << got << ", expected " << want
            << " (P=" << s[0] << ")";
          return m.str();
        }
      }
    }
  }
  return "";
}

std::string close(const std::string& name, const anyp::HostTensor& out, const Golden& golden) {
  return mismatch(name, out, golden, 1e-5, 1e-5);
}

// "" when every signal cell is back to 0 after the last call.
std::string cells_not_zero(const anyp::HostTensor& cells) {
  return mismatch("cells", cells, [](std::int64_t, std::int64_t, std::int64_t) { return 0.0; });
}

// Both checks; the first failure.
std::string first_failure(const std::string& a, const std::string& b) { return a.empty() ? b : a; }

// ---- allreduce -------------------------------------------------------------------------

pl::HostFunction allreduce_program(ReduceOp op, AllreduceMode mode, pl::DType dtype,
                                   std::int64_t size) {
  Layout l;
  l.x = l.y = l.data = {1, size};
  l.tmp = {1, 16};
  l.signal = signal_shape(mode);
  l.dtype = dtype;
  return make_program(
      "allreduce", l,
      [op, mode, size](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, size}), {0, 0}, data);
        data = pld::tensor::allreduce(data, signal, op, mode);
        y = pl::store(pl::load(data, {0, 0}, {1, size}), {0, 0}, y);
      });
}

// Runs allreduce at P on uniform inputs; "" when y[r] = OP_k x[k] within
// |y - g| <= atol + rtol |g| and every signal cell is 0.
std::string check_allreduce(ReduceOp op, AllreduceMode mode, pl::DType dtype, std::int64_t size,
                            std::int64_t P, double rtol, double atol) {
  anyp::InputGenerator gen(11);
  const anyp::HostTensor x = gen.uniform({P, 1, size}, dtype);
  Result out = run_program(allreduce_program(op, mode, dtype, size), x, {P, 1, size}, {P, 1, 16},
                           signal_dims(mode, P), anyp::RunConfig::for_world_size(P));
  std::vector<double> g(static_cast<std::size_t>(size));
  for (std::int64_t j = 0; j < size; ++j) {
    double acc = x.at({0, 0, j});
    for (std::int64_t k = 1; k < P; ++k) acc = combine(op, acc, x.at({k, 0, j}));
    g[static_cast<std::size_t>(j)] = acc;
  }
  const std::string name = std::string("y(") + op_name(op) + ", " + mode_name(mode) + ")";
  return first_failure(mismatch(
                           name, out.y,
                           [&](std::int64_t, std::int64_t, std::int64_t j) {
                             return g[static_cast<std::size_t>(j)];
                           },
                           rtol, atol),
                       cells_not_zero(out.cells));
}

TEST(Allreduce, MeshAndRingWithEveryOpForPFrom2To8) {
  for (std::int64_t P = 2; P <= 8; ++P) {
    for (AllreduceMode mode : kModes) {
      for (ReduceOp op : kOps) {
        EXPECT_EQ(check_allreduce(op, mode, pl::FP32, SIZE, P, 1e-5, 1e-5), "")
            << "P=" << P << " " << mode_name(mode) << " " << op_name(op);
      }
    }
  }
}

// Every partial result is rounded to the dtype, so after P - 1 combining
// steps the relative error is at most about (P - 1) u (u = 2^-11 for FP16,
// 2^-8 for BF16); the bound allows twice that. Max and Min stay exact.
TEST(Allreduce, Fp16AndBf16MeshAndRing) {
  for (pl::DType dtype : {pl::FP16, pl::BF16}) {
    const double eps = dtype == pl::FP16 ? std::ldexp(1.0, -10) : std::ldexp(1.0, -7);
    for (std::int64_t P = 2; P <= 8; ++P) {
      for (AllreduceMode mode : kModes) {
        for (ReduceOp op : kOps) {
          const bool exact = op == ReduceOp::Max || op == ReduceOp::Min;
          EXPECT_EQ(check_allreduce(op, mode, dtype, SIZE, P, exact ? 0 : P * eps, 0), "")
              << anyp::dtype_name(dtype) << " P=" << P << " " << mode_name(mode) << " "
              << op_name(op);
        }
      }
    }
  }
}

// More than 16 KiB of data: the mesh runs K chunks, each between its own
// read-done barriers (8192 FP32 = 32 KiB, K = 2; 10240 FP32 = 40 KiB, K = 3).
TEST(Allreduce, LargeMeshRunsInChunks) {
  for (std::int64_t size : {8192, 10240}) {
    for (std::int64_t P = 2; P <= 8; ++P) {
      EXPECT_EQ(check_allreduce(ReduceOp::Sum, AllreduceMode::Mesh, pl::FP32, size, P, 1e-5, 1e-5),
                "")
          << "size=" << size << " P=" << P;
    }
  }
}

// Ring segments larger than 16 KiB split into sub-chunks (20480 FP32: 40 KiB
// segments at P = 2, about 27 KiB at P = 3, 20 KiB at P = 4).
TEST(Allreduce, LargeRingSplitsSegmentsIntoSubChunks) {
  for (std::int64_t P : {2, 3, 4}) {
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod}) {
      EXPECT_EQ(check_allreduce(op, AllreduceMode::Ring, pl::FP32, 20480, P, 1e-5, 1e-5), "")
          << "P=" << P << " " << op_name(op);
    }
  }
}

// SIZE = 960 at P = 7: segments of 137 and 138 elements; 1000 elements
// leave remainders at P = 3, 6, 7 and 8.
TEST(Allreduce, RingWithUnevenSegments) {
  for (ReduceOp op : kOps) {
    EXPECT_EQ(check_allreduce(op, AllreduceMode::Ring, pl::FP32, 960, 7, 1e-5, 1e-5), "")
        << op_name(op);
  }
  for (std::int64_t P : {3, 6, 7, 8}) {
    EXPECT_EQ(check_allreduce(ReduceOp::Sum, AllreduceMode::Ring, pl::FP32, 1000, P, 1e-5, 1e-5),
              "")
        << "P=" << P;
  }
}

// ---- broadcast ---------------------------------------------------------------------------

// Root `root` (0 or NR - 1, a compile-time constant) stages x; with
// `all_stage` every rank stages its own x first, which the broadcast must
// overwrite on non-roots.
pl::HostFunction broadcast_program(const pl::Dim& root, bool all_stage) {
  Layout l;
  l.x = l.y = l.data = {1, ROW};
  l.tmp = {1, 8};
  return make_program("broadcast", l,
                      [root, all_stage](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data,
                                        pl::Value& signal) {
                        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
                        auto stage = [&] {
                          data = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, data);
                        };
                        if (all_stage) {
                          stage();
                        } else {
                          pl::if_(r == root, stage);
                        }
                        data = pld::tensor::broadcast(data, signal, root);
                        y = pl::store(pl::load(data, {0, 0}, {1, ROW}), {0, 0}, y);
                      });
}

TEST(Broadcast, FromRootZeroAndFromTheLastRank) {
  for (std::int64_t P = 2; P <= 8; ++P) {
    for (bool last : {false, true}) {
      for (bool all_stage : {false, true}) {
        const std::int64_t root = last ? P - 1 : 0;
        const anyp::HostTensor x = anyp::HostTensor::arange({P, 1, ROW}, pl::FP32);
        Result out =
            run_program(broadcast_program(last ? NR - 1 : pl::Dim(0), all_stage), x, {P, 1, ROW},
                        {P, 1, 8}, {P, 1}, anyp::RunConfig::for_world_size(P));
        EXPECT_EQ(first_failure(mismatch("y", out.y,
                                         [&](std::int64_t, std::int64_t, std::int64_t j) {
                                           return x.at({root, 0, j});
                                         }),
                                cells_not_zero(out.cells)),
                  "")
            << "P=" << P << " root=" << root << " all_stage=" << all_stage;
      }
    }
  }
}

// ---- allgather ---------------------------------------------------------------------------

TEST(Allgather, RowRGetsRankRsSource) {
  Layout l;
  l.x = {1, ROW};
  l.y = l.data = {NR, ROW};
  l.tmp = {1, 8};
  const pl::HostFunction program =
      make_program("allgather", l,
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
                     data = pld::tensor::allgather(x, data, signal);
                     y = pl::store(pl::load(data, {0, 0}, {NR, ROW}), {0, 0}, y);
                   });
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::HostTensor x = anyp::HostTensor::arange({P, 1, ROW}, pl::FP32);
    Result out =
        run_program(program, x, {P, P, ROW}, {P, 1, 8}, {P, 1}, anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(first_failure(mismatch("y", out.y,
                                     [&](std::int64_t, std::int64_t p, std::int64_t j) {
                                       return x.at({p, 0, j});
                                     }),
                            cells_not_zero(out.cells)),
              "")
        << "P=" << P;
  }
}

// ---- reduce_scatter ----------------------------------------------------------------------

pl::HostFunction reduce_scatter_program(ReduceOp op) {
  Layout l;
  l.x = l.data = {NR, ROW};
  l.y = {1, ROW};
  l.tmp = {1, 8};
  return make_program(
      "reduce_scatter", l,
      [op](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
        data = pl::store(pl::load(x, {0, 0}, {NR, ROW}), {0, 0}, data);
        data = pld::tensor::reduce_scatter(data, signal, op);
        y = pl::store(pl::load(data, {r, 0}, {1, ROW}), {0, 0}, y);
      });
}

TEST(ReduceScatter, EveryOpForPFrom2To8) {
  for (ReduceOp op : kOps) {
    const pl::HostFunction program = reduce_scatter_program(op);
    for (std::int64_t P = 2; P <= 8; ++P) {
      anyp::InputGenerator gen(14);
      const anyp::HostTensor x = gen.uniform({P, P, ROW});
      Result out = run_program(program, x, {P, 1, ROW}, {P, 1, 8}, {P, 1},
                               anyp::RunConfig::for_world_size(P));
      const Golden g = [&](std::int64_t r, std::int64_t, std::int64_t j) {
        double acc = x.at({0, r, j});
        for (std::int64_t k = 1; k < P; ++k) acc = combine(op, acc, x.at({k, r, j}));
        return acc;
      };
      EXPECT_EQ(first_failure(close("y", out.y, g), cells_not_zero(out.cells)), "")
          << "P=" << P << " " << op_name(op);
    }
  }
}

// ---- all_to_all --------------------------------------------------------------------------

TEST(AllToAll, TransposesTheFirstTwoDims) {
  Layout l;
  l.x = l.y = l.data = {NR, ROW};
  l.tmp = {1, 8};
  const pl::HostFunction program =
      make_program("all_to_all", l,
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
                     data = pld::tensor::all_to_all(x, data, signal);
                     y = pl::store(pl::load(data, {0, 0}, {NR, ROW}), {0, 0}, y);
                   });
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::HostTensor x = anyp::HostTensor::arange({P, P, ROW}, pl::FP32);
    Result out =
        run_program(program, x, {P, P, ROW}, {P, 1, 8}, {P, 1}, anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(first_failure(mismatch("y", out.y,
                                     [&](std::int64_t r, std::int64_t s, std::int64_t j) {
                                       return x.at({s, r, j});
                                     }),
                            cells_not_zero(out.cells)),
              "")
        << "P=" << P;
  }
}

// ---- all_to_all_v ------------------------------------------------------------------------
// Rank r sends the first count(r, d) elements of its row d to rank d, and
// rank d finds the count in cell {r, 0} of its recv_counts window. Counts run
// from 0 to a whole row. The rest of each received row stays 0 (windows
// start zeroed).

std::int64_t send_count(std::int64_t r, std::int64_t d) {
  if ((r + d) % 3 == 2) return ROW;
  return (9 * (r + 2 * d)) % (ROW + 1);
}

const std::vector<pl::Param> kAllToAllVParams = {
    pl::In("x", pl::Tensor({NR, ROW}, pl::FP32)),
    pl::In("counts", pl::Tensor({NR, 1}, pl::INT32)),
    pl::Out("y", pl::Tensor({NR, ROW}, pl::FP32)),
    pl::Out("got", pl::Tensor({NR, 1}, pl::INT32)),
    pl::Out("cells", pl::Tensor({NR, 1}, pl::INT32)),
    pl::InOut("data", pld::DistributedTensor({NR, ROW}, pl::FP32)),
    pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto all_to_all_v_kernel =
    pl::jit::incore("all_to_all_v_kernel", kAllToAllVParams,
                    [](pl::Value x, pl::Value counts, pl::Value y, pl::Value got, pl::Value cells,
                       pl::Value data, pl::Value recv, pl::Value signal) {
                      data = pld::tensor::all_to_all_v(x, counts, data, recv, signal);
                      y = pl::store(pl::load(data, {0, 0}, {NR, ROW}), {0, 0}, y);
                      pl::range(NR, [&](pl::Scalar s) {
                        pl::write(got, {s, 0}, pl::read(recv, {s, 0}));
                        pl::write(cells, {s, 0}, pl::read(signal, {s, 0}));
                      });
                    });

const auto per_rank_all_to_all_v =
    pl::jit::orchestration("per_rank", kAllToAllVParams,
                           [](pl::Value x, pl::Value counts, pl::Value y, pl::Value got,
                              pl::Value cells, pl::Value data, pl::Value recv, pl::Value signal) {
                             all_to_all_v_kernel(x, counts, y, got, cells, data, recv, signal);
                           });

const pl::HostFunction all_to_all_v_program = pl::jit::host(
    "all_to_all_v",
    {pl::In("x", pl::Tensor({NR, NR, ROW}, pl::FP32)),
     pl::In("counts", pl::Tensor({NR, NR, 1}, pl::INT32)),
     pl::Out("y", pl::Tensor({NR, NR, ROW}, pl::FP32)),
     pl::Out("got", pl::Tensor({NR, NR, 1}, pl::INT32)),
     pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value counts, pl::Value y, pl::Value got, pl::Value cells) {
      auto data_buf = pld::alloc_window_buffer("data", {NR, ROW}, pl::FP32);
      auto recv_buf = pld::alloc_window_buffer("recv", {NR, 1}, pl::INT32);
      auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        pl::Value xr = x[r];
        pl::Value counts_r = counts[r];
        pl::Value yr = y[r];
        pl::Value got_r = got[r];
        pl::Value cells_r = cells[r];
        per_rank_all_to_all_v(xr, counts_r, yr, got_r, cells_r,
                              pld::window(data_buf, {NR, ROW}, pl::FP32),
                              pld::window(recv_buf, {NR, 1}, pl::INT32),
                              pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
      });
    });

TEST(AllToAllV, PerDestinationCounts) {
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::HostTensor x = anyp::HostTensor::arange({P, P, ROW}, pl::FP32);
    anyp::HostTensor counts = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t d = 0; d < P; ++d)
        counts.set_at({r, d, 0}, static_cast<double>(send_count(r, d)));
    }
    anyp::HostTensor y = anyp::HostTensor::zeros({P, P, ROW}, pl::FP32);
    anyp::HostTensor got = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
    anyp::HostTensor cells = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
    for (std::int64_t i = 0; i < cells.numel(); ++i) cells.set(i, -7);
    all_to_all_v_program.compile({x, counts, y, got, cells}, anyp::RunConfig::for_world_size(P))(
        x, counts, y, got, cells);
    EXPECT_EQ(mismatch("y", y,
                       [&](std::int64_t r, std::int64_t s, std::int64_t j) {
                         return j < send_count(s, r) ? x.at({s, r, j}) : 0.0;
                       }),
              "")
        << "P=" << P;
    EXPECT_EQ(mismatch("recv_counts", got,
                       [&](std::int64_t r, std::int64_t s, std::int64_t) {
                         return static_cast<double>(send_count(s, r));
                       }),
              "")
        << "P=" << P;
    EXPECT_EQ(cells_not_zero(cells), "") << "P=" << P;
  }
}

// ---- 100 back-to-back calls on one signal --------------------------------------------------
// Round k stages data that depends on k, calls the collective and stores the
// round's result in row k of y: a lost, stale or early round shows up in its row.

// allreduce (Sum): round k stages x + k.
std::string check_allreduce_rounds(AllreduceMode mode, std::int64_t P,
                                   const anyp::RunConfig& config) {
  Layout l;
  l.x = l.data = {1, ROW};
  l.y = {ROUNDS, ROW};
  l.tmp = {1, 8};
  l.signal = signal_shape(mode);
  const pl::HostFunction program = make_program(
      "allreduce_rounds", l,
      [mode](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
        pl::Tile mine = pl::load(x, {0, 0}, {1, ROW});
        pl::range(ROUNDS, [&](pl::Scalar k) {
          data = pl::store(pl::add(mine, pl::cast(k, pl::FP32)), {0, 0}, data);
          data = pld::tensor::allreduce(data, signal, ReduceOp::Sum, mode);
          y = pl::store(pl::load(data, {0, 0}, {1, ROW}), {k, 0}, y);
        });
      });
  anyp::InputGenerator gen(11);
  const anyp::HostTensor x = gen.uniform({P, 1, ROW});
  Result out = run_program(program, x, {P, ROUNDS, ROW}, {P, 1, 8}, signal_dims(mode, P), config);
  const Golden g = [&](std::int64_t, std::int64_t k, std::int64_t j) {
    double sum = 0;
    for (std::int64_t p = 0; p < P; ++p)
      sum += static_cast<float>(x.at({p, 0, j}) + static_cast<double>(k));
    return sum;
  };
  return first_failure(close("y", out.y, g), cells_not_zero(out.cells));
}

TEST(BackToBack, HundredMeshAllreducesOnOneSignal) {
  for (std::int64_t P : kLoopRanks) {
    EXPECT_EQ(check_allreduce_rounds(AllreduceMode::Mesh, P, anyp::RunConfig::for_world_size(P)),
              "")
        << "P=" << P;
  }
}

TEST(BackToBack, HundredRingAllreducesOnOneSignal) {
  for (std::int64_t P : kLoopRanks) {
    EXPECT_EQ(check_allreduce_rounds(AllreduceMode::Ring, P, anyp::RunConfig::for_world_size(P)),
              "")
        << "P=" << P;
  }
}

// The ring has no barrier: restaging `data` right after a call is safe only
// because the call waits for its right neighbour's read-done. The race
// checker sees every access of the 100 calls, on random schedules too.
TEST(BackToBack, HundredRingAllreducesAreRaceFree) {
  for (std::int64_t P : {2, 3, 4, 7}) {
    for (std::uint64_t seed : {0u, 3u}) {
      anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
      config.check_races = true;
      if (seed != 0) {
        config.deterministic = true;
        config.schedule_seed = seed;
        config.preempt_budget = 5;
      }
      EXPECT_EQ(check_allreduce_rounds(AllreduceMode::Ring, P, config), "")
          << "P=" << P << " seed=" << seed;
    }
  }
}

// One worker, the next rank drawn by a seeded RNG, and a small preemption
// budget: ranks drift apart mid-call, several rounds of the ring's rows apart.
TEST(BackToBack, HundredAllreducesUnderDeterministicSchedules) {
  for (AllreduceMode mode : kModes) {
    for (std::int64_t P : {3, 5}) {
      for (std::uint64_t seed : {1u, 2u}) {
        anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
        config.deterministic = true;
        config.schedule_seed = seed;
        config.preempt_budget = 7;
        EXPECT_EQ(check_allreduce_rounds(mode, P, config), "")
            << mode_name(mode) << " P=" << P << " seed=" << seed;
      }
    }
  }
}

// broadcast from the last rank: round k's root stages x + 1000 k. Peers read
// the root's window after the broadcast's only barrier, so a barrier follows
// before the root overwrites it in the next round.
TEST(BackToBack, HundredBroadcastsOnOneSignal) {
  Layout l;
  l.x = l.data = {1, ROW};
  l.y = {ROUNDS, ROW};
  l.tmp = {1, 8};
  const pl::HostFunction program = make_program(
      "broadcast_rounds", l,
      [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
        pl::Tile mine = pl::load(x, {0, 0}, {1, ROW});
        pl::range(ROUNDS, [&](pl::Scalar k) {
          pl::if_(r == NR - 1, [&] {
            data = pl::store(pl::add(mine, pl::cast(k * 1000, pl::FP32)), {0, 0}, data);
          });
          data = pld::tensor::broadcast(data, signal, NR - 1);
          y = pl::store(pl::load(data, {0, 0}, {1, ROW}), {k, 0}, y);
          signal = pld::tensor::barrier(signal);  // everyone has read the root's data
        });
      });
  for (std::int64_t P : kLoopRanks) {
    const anyp::HostTensor x = anyp::HostTensor::arange({P, 1, ROW}, pl::FP32);
    Result out = run_program(program, x, {P, ROUNDS, ROW}, {P, 1, 8}, {P, 1},
                             anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(first_failure(mismatch("y", out.y,
                                     [&](std::int64_t, std::int64_t k, std::int64_t j) {
                                       return x.at({P - 1, 0, j}) + 1000.0 * static_cast<double>(k);
                                     }),
                            cells_not_zero(out.cells)),
              "")
        << "P=" << P;
  }
}

// allgather: round k gathers x + 1000 k (staged in the private tensor tmp).
// Peers push into my window in the next round, so a barrier follows my read.
TEST(BackToBack, HundredAllgathersOnOneSignal) {
  Layout l;
  l.x = l.tmp = {1, ROW};
  l.y = {ROUNDS, NR * ROW};
  l.data = {NR, ROW};
  const pl::HostFunction program = make_program(
      "allgather_rounds", l,
      [](pl::Value& x, pl::Value& y, pl::Value& tmp, pl::Value& data, pl::Value& signal) {
        pl::Tile mine = pl::load(x, {0, 0}, {1, ROW});
        pl::range(ROUNDS, [&](pl::Scalar k) {
          tmp = pl::store(pl::add(mine, pl::cast(k * 1000, pl::FP32)), {0, 0}, tmp);
          data = pld::tensor::allgather(tmp, data, signal);
          pl::range(NR, [&](pl::Scalar p) {
            y = pl::store(pl::load(data, {p, 0}, {1, ROW}), {k, p * ROW}, y);
          });
          signal = pld::tensor::barrier(signal);  // everyone has read its gathered rows
        });
      });
  for (std::int64_t P : kLoopRanks) {
    const anyp::HostTensor x = anyp::HostTensor::arange({P, 1, ROW}, pl::FP32);
    Result out = run_program(program, x, {P, ROUNDS, P * ROW}, {P, 1, ROW}, {P, 1},
                             anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(first_failure(
                  mismatch("y", out.y,
                           [&](std::int64_t, std::int64_t k, std::int64_t c) {
                             return x.at({c / ROW, 0, c % ROW}) + 1000.0 * static_cast<double>(k);
                           }),
                  cells_not_zero(out.cells)),
              "")
        << "P=" << P;
  }
}

// reduce_scatter (Sum): round k stages x + k. Peers read my rows only between
// the call's two barriers, so no extra barrier is needed.
TEST(BackToBack, HundredReduceScattersOnOneSignal) {
  Layout l;
  l.x = l.data = {NR, ROW};
  l.y = {ROUNDS, ROW};
  l.tmp = {1, 8};
  const pl::HostFunction program =
      make_program("reduce_scatter_rounds", l,
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& data, pl::Value& signal) {
                     pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
                     pl::Tile mine = pl::load(x, {0, 0}, {NR, ROW});
                     pl::range(ROUNDS, [&](pl::Scalar k) {
                       data = pl::store(pl::add(mine, pl::cast(k, pl::FP32)), {0, 0}, data);
                       data = pld::tensor::reduce_scatter(data, signal, ReduceOp::Sum);
                       y = pl::store(pl::load(data, {r, 0}, {1, ROW}), {k, 0}, y);
                     });
                   });
  for (std::int64_t P : kLoopRanks) {
    anyp::InputGenerator gen(14);
    const anyp::HostTensor x = gen.uniform({P, P, ROW});
    Result out = run_program(program, x, {P, ROUNDS, ROW}, {P, 1, 8}, {P, 1},
                             anyp::RunConfig::for_world_size(P));
    const Golden g = [&](std::int64_t r, std::int64_t k, std::int64_t j) {
      double sum = 0;
      for (std::int64_t p = 0; p < P; ++p)
        sum += static_cast<float>(x.at({p, r, j}) + static_cast<double>(k));
      return sum;
    };
    EXPECT_EQ(first_failure(close("y", out.y, g), cells_not_zero(out.cells)), "") << "P=" << P;
  }
}

// all_to_all: round k exchanges x + 1000 k (staged in tmp); a barrier
// follows my read, as for allgather.
TEST(BackToBack, HundredAllToAllsOnOneSignal) {
  Layout l;
  l.x = l.tmp = l.data = {NR, ROW};
  l.y = {ROUNDS, NR * ROW};
  const pl::HostFunction program = make_program(
      "all_to_all_rounds", l,
      [](pl::Value& x, pl::Value& y, pl::Value& tmp, pl::Value& data, pl::Value& signal) {
        pl::Tile mine = pl::load(x, {0, 0}, {NR, ROW});
        pl::range(ROUNDS, [&](pl::Scalar k) {
          tmp = pl::store(pl::add(mine, pl::cast(k * 1000, pl::FP32)), {0, 0}, tmp);
          data = pld::tensor::all_to_all(tmp, data, signal);
          pl::range(NR, [&](pl::Scalar s) {
            y = pl::store(pl::load(data, {s, 0}, {1, ROW}), {k, s * ROW}, y);
          });
          signal = pld::tensor::barrier(signal);  // everyone has read its received rows
        });
      });
  for (std::int64_t P : kLoopRanks) {
    const anyp::HostTensor x = anyp::HostTensor::arange({P, P, ROW}, pl::FP32);
    Result out = run_program(program, x, {P, ROUNDS, P * ROW}, {P, P, ROW}, {P, 1},
                             anyp::RunConfig::for_world_size(P));
    EXPECT_EQ(first_failure(
                  mismatch("y", out.y,
                           [&](std::int64_t r, std::int64_t k, std::int64_t c) {
                             return x.at({c / ROW, r, c % ROW}) + 1000.0 * static_cast<double>(k);
                           }),
                  cells_not_zero(out.cells)),
              "")
        << "P=" << P;
  }
}

// ---- mixed collectives sharing one [NR, 1] signal ---------------------------------------------
// Each round: broadcast from rank 0 (x + 1000 k), mesh allreduce Sum (x + k),
// allgather (x + 1000 k), reduce_scatter Max (xs + k) and a barrier, all on
// one signal. Each window is rewritten only after a later barrier that every
// reader of it has passed: the broadcast's window after the allreduce's
// first barrier, the gathered rows after the reduce_scatter's barriers.

const std::vector<pl::Param> kMixedParams = {
    pl::In("x", pl::Tensor({1, ROW}, pl::FP32)),
    pl::In("xs", pl::Tensor({NR, ROW}, pl::FP32)),
    pl::Out("yb", pl::Tensor({ROUNDS, ROW}, pl::FP32)),
    pl::Out("ya", pl::Tensor({ROUNDS, ROW}, pl::FP32)),
    pl::Out("yg", pl::Tensor({ROUNDS, NR* ROW}, pl::FP32)),
    pl::Out("yr", pl::Tensor({ROUNDS, ROW}, pl::FP32)),
    pl::Out("cells", pl::Tensor({NR, 1}, pl::INT32)),
    pl::Out("tmp", pl::Tensor({1, ROW}, pl::FP32)),
    pl::InOut("bdata", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("adata", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("gdata", pld::DistributedTensor({NR, ROW}, pl::FP32)),
    pl::InOut("rdata", pld::DistributedTensor({NR, ROW}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto mixed_kernel = pl::jit::incore(
    "mixed_kernel", kMixedParams,
    [](pl::Value x, pl::Value xs, pl::Value yb, pl::Value ya, pl::Value yg, pl::Value yr,
       pl::Value cells, pl::Value tmp, pl::Value bdata, pl::Value adata, pl::Value gdata,
       pl::Value rdata, pl::Value signal) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(signal));
      pl::Tile mine = pl::load(x, {0, 0}, {1, ROW});
      pl::Tile rows = pl::load(xs, {0, 0}, {NR, ROW});
      pl::range(ROUNDS, [&](pl::Scalar k) {
        pl::Tile big = pl::add(mine, pl::cast(k * 1000, pl::FP32));
        pl::Tile small = pl::add(mine, pl::cast(k, pl::FP32));
        pl::if_(r == 0, [&] { bdata = pl::store(big, {0, 0}, bdata); });
        bdata = pld::tensor::broadcast(bdata, signal, 0);
        yb = pl::store(pl::load(bdata, {0, 0}, {1, ROW}), {k, 0}, yb);

        adata = pl::store(small, {0, 0}, adata);
        adata = pld::tensor::allreduce(adata, signal, ReduceOp::Sum, AllreduceMode::Mesh);
        ya = pl::store(pl::load(adata, {0, 0}, {1, ROW}), {k, 0}, ya);

        tmp = pl::store(big, {0, 0}, tmp);
        gdata = pld::tensor::allgather(tmp, gdata, signal);
        pl::range(NR, [&](pl::Scalar p) {
          yg = pl::store(pl::load(gdata, {p, 0}, {1, ROW}), {k, p * ROW}, yg);
        });

        rdata = pl::store(pl::add(rows, pl::cast(k, pl::FP32)), {0, 0}, rdata);
        rdata = pld::tensor::reduce_scatter(rdata, signal, ReduceOp::Max);
        yr = pl::store(pl::load(rdata, {r, 0}, {1, ROW}), {k, 0}, yr);

        signal = pld::tensor::barrier(signal);
      });
      pl::range(NR, [&](pl::Scalar s) { pl::write(cells, {s, 0}, pl::read(signal, {s, 0})); });
    });

const auto per_rank_mixed = pl::jit::orchestration(
    "per_rank_mixed", kMixedParams,
    [](pl::Value x, pl::Value xs, pl::Value yb, pl::Value ya, pl::Value yg, pl::Value yr,
       pl::Value cells, pl::Value tmp, pl::Value bdata, pl::Value adata, pl::Value gdata,
       pl::Value rdata, pl::Value signal) {
      mixed_kernel(x, xs, yb, ya, yg, yr, cells, tmp, bdata, adata, gdata, rdata, signal);
    });

const pl::HostFunction mixed_program =
    pl::jit::host("mixed",
                  {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32)),
                   pl::In("xs", pl::Tensor({NR, NR, ROW}, pl::FP32)),
                   pl::Out("yb", pl::Tensor({NR, ROUNDS, ROW}, pl::FP32)),
                   pl::Out("ya", pl::Tensor({NR, ROUNDS, ROW}, pl::FP32)),
                   pl::Out("yg", pl::Tensor({NR, ROUNDS, NR* ROW}, pl::FP32)),
                   pl::Out("yr", pl::Tensor({NR, ROUNDS, ROW}, pl::FP32)),
                   pl::Out("cells", pl::Tensor({NR, NR, 1}, pl::INT32)),
                   pl::Out("tmp", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                  [](pl::Value x, pl::Value xs, pl::Value yb, pl::Value ya, pl::Value yg,
                     pl::Value yr, pl::Value cells, pl::Value tmp) {
                    auto bdata_buf = pld::alloc_window_buffer("bdata", {1, ROW}, pl::FP32);
                    auto adata_buf = pld::alloc_window_buffer("adata", {1, ROW}, pl::FP32);
                    auto gdata_buf = pld::alloc_window_buffer("gdata", {NR, ROW}, pl::FP32);
                    auto rdata_buf = pld::alloc_window_buffer("rdata", {NR, ROW}, pl::FP32);
                    auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      pl::Value xr = x[r];
                      pl::Value xs_r = xs[r];
                      pl::Value yb_r = yb[r];
                      pl::Value ya_r = ya[r];
                      pl::Value yg_r = yg[r];
                      pl::Value yr_r = yr[r];
                      pl::Value cells_r = cells[r];
                      pl::Value tmp_r = tmp[r];
                      per_rank_mixed(xr, xs_r, yb_r, ya_r, yg_r, yr_r, cells_r, tmp_r,
                                     pld::window(bdata_buf, {1, ROW}, pl::FP32),
                                     pld::window(adata_buf, {1, ROW}, pl::FP32),
                                     pld::window(gdata_buf, {NR, ROW}, pl::FP32),
                                     pld::window(rdata_buf, {NR, ROW}, pl::FP32),
                                     pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                    });
                  });

// Runs the mixed program at P; "" when every round of every output matches.
std::string check_mixed(std::int64_t P, const anyp::RunConfig& config) {
  const anyp::HostTensor x = anyp::HostTensor::arange({P, 1, ROW}, pl::FP32);
  anyp::InputGenerator gen(16);
  const anyp::HostTensor xs = gen.uniform({P, P, ROW});
  auto zeros = [](std::vector<std::int64_t> shape) {
    return anyp::HostTensor::zeros(std::move(shape), pl::FP32);
  };
  anyp::HostTensor yb = zeros({P, ROUNDS, ROW}), ya = zeros({P, ROUNDS, ROW});
  anyp::HostTensor yg = zeros({P, ROUNDS, P * ROW}), yr = zeros({P, ROUNDS, ROW});
  anyp::HostTensor tmp = zeros({P, 1, ROW});
  anyp::HostTensor cells = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  for (std::int64_t i = 0; i < cells.numel(); ++i) cells.set(i, -7);
  mixed_program.compile({x, xs, yb, ya, yg, yr, cells, tmp}, config)(x, xs, yb, ya, yg, yr, cells,
                                                                     tmp);
  const double k1000 = 1000.0;
  std::string failure = mismatch("yb", yb, [&](std::int64_t, std::int64_t k, std::int64_t j) {
    return x.at({0, 0, j}) + k1000 * static_cast<double>(k);
  });
  failure =
      first_failure(failure, close("ya", ya, [&](std::int64_t, std::int64_t k, std::int64_t j) {
                      double sum = 0;
                      for (std::int64_t p = 0; p < P; ++p)
                        sum += x.at({p, 0, j}) + static_cast<double>(k);
                      return sum;
                    }));
  failure =
      first_failure(failure, mismatch("yg", yg, [&](std::int64_t, std::int64_t k, std::int64_t c) {
                      return x.at({c / ROW, 0, c % ROW}) + k1000 * static_cast<double>(k);
                    }));
  failure = first_failure(
      failure, mismatch("yr", yr, [&](std::int64_t r, std::int64_t k, std::int64_t j) {
        double m = -1e300;
        for (std::int64_t p = 0; p < P; ++p) {
          m = std::max<double>(m, static_cast<float>(xs.at({p, r, j}) + static_cast<double>(k)));
        }
        return m;
      }));
  return first_failure(failure, cells_not_zero(cells));
}

TEST(BackToBack, MixedCollectivesShareOneSignal) {
  for (std::int64_t P : kLoopRanks)
    EXPECT_EQ(check_mixed(P, anyp::RunConfig::for_world_size(P)), "") << "P=" << P;
}

// One worker, the next rank drawn by a seeded RNG, and a small preemption
// budget: ranks drift apart mid-collective; the credits stay exact.
TEST(BackToBack, MixedCollectivesUnderDeterministicSchedules) {
  for (std::int64_t P : {3, 5}) {
    for (std::uint64_t seed : {1u, 2u}) {
      anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
      config.deterministic = true;
      config.schedule_seed = seed;
      config.preempt_budget = 7;
      EXPECT_EQ(check_mixed(P, config), "") << "P=" << P << " seed=" << seed;
    }
  }
}

// ---- a collective called on some ranks only ---------------------------------------------------
// Step 16's fatal mistake (docs/ladder-steps.md §8): the call sits inside pl::if_. The
// runtime reports the deadlock with the collective's op; the signal cells
// are not read afterwards (the ranks that skip the call would race with the
// caller's credits).

std::string deadlock_report(const pl::HostFunction& program, std::int64_t P,
                            const std::vector<std::int64_t>& signal) {
  const anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, ROW}, pl::FP32);
  try {
    run_program(program, x, {P, 1, ROW}, {P, 1, ROW}, signal, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::DeadlockError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

// A program whose kernel runs `call` only where `cond(r)` holds.
using Call = std::function<void(pl::Value& x, pl::Value& tmp, pl::Value& data, pl::Value& signal)>;
Layout partial_layout(const pl::Shape& signal) {
  Layout l;
  l.x = l.y = l.tmp = {1, ROW};
  l.data = {NR, ROW};
  l.signal = signal;
  l.read_cells = false;
  return l;
}
pl::HostFunction partial_program(const Layout& l, bool only_rank_zero, const Call& call) {
  return make_program("partial", l,
                      [only_rank_zero, call](pl::Value& x, pl::Value&, pl::Value& tmp,
                                             pl::Value& data, pl::Value& signal) {
                        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
                        pl::if_(only_rank_zero ? r == 0 : r != 0,
                                [&] { call(x, tmp, data, signal); });
                      });
}

TEST(PartialCollective, AllreduceOnRankZeroOnlyDeadlocks) {
  const Layout l = partial_layout({NR, 1});
  const pl::HostFunction program =
      partial_program(l, true, [](pl::Value&, pl::Value&, pl::Value& data, pl::Value& signal) {
        data = pld::tensor::allreduce(data, signal);
      });
  // Rank 0 deposits its credit with every peer and waits for rank 1's.
  EXPECT_EQ(deadlock_report(program, 3, {3, 1}),
            "deadlock: no rank can make progress (1 of 3 ranks waiting)\n  rank 0: function "
            "'partial_kernel', op pld.tensor.allreduce: waits for signal 'signal' cell [1, 0] Ge "
            "1; current value 0; never notified\n  ranks 1, 2 (2 ranks): finished\nbuiltin "
            "collective calls not entered by every rank:\n  collective call #1 on signal 'signal', "
            "pld.tensor.allreduce (Sum, Mesh, data FP32 [3, 64]) in function 'partial_kernel': "
            "entered by rank 0; never entered by ranks 1, 2 (finished)");
}

TEST(PartialCollective, RingAllreduceOnRankZeroOnlyDeadlocks) {
  const Layout l = partial_layout({2 * (NR - 1), NR});
  const pl::HostFunction program =
      partial_program(l, true, [](pl::Value&, pl::Value&, pl::Value& data, pl::Value& signal) {
        data = pld::tensor::allreduce(data, signal, ReduceOp::Sum, AllreduceMode::Ring);
      });
  // Round 0 uses row 0: rank 0 waits for its left neighbour's (rank 3's)
  // credit in cell {0, 3}.
  EXPECT_EQ(deadlock_report(program, 4, {6, 4}),
            "deadlock: no rank can make progress (1 of 4 ranks waiting)\n  rank 0: function "
            "'partial_kernel', op pld.tensor.allreduce: waits for signal 'signal' cell [0, 3] Ge "
            "1; current value 0; never notified\n  ranks 1-3 (3 ranks): finished\nbuiltin "
            "collective calls not entered by every rank:\n  collective call #1 on signal 'signal', "
            "pld.tensor.allreduce (Sum, Ring, data FP32 [4, 64]) in function 'partial_kernel': "
            "entered by rank 0; never entered by ranks 1-3 (finished)");
}

// Every rank but rank 0 calls: each waits for rank 0's credit in cell {0, 0}.
// `signature`: the call's description in the report's last line ("" for none).
std::string all_but_zero_report(const std::string& op, const std::string& signature,
                                std::int64_t P) {
  // The waiting ranks first, ranks in one state on one line (1-4 is a range).
  std::string s = "deadlock: no rank can make progress (" + std::to_string(P - 1) + " of " +
                  std::to_string(P) + " ranks waiting)\n  ";
  if (P == 2) {
    s += "rank 1";
  } else {
    s += "ranks " + (P == 3 ? std::string("1, 2") : "1-" + std::to_string(P - 1)) + " (" +
         std::to_string(P - 1) + " ranks)";
  }
  s += ": function 'partial_kernel', op " + op +
       ": waits for signal 'signal' cell [0, 0] Ge 1; current value 0; never notified\n"
       "  rank 0: finished\n";
  s += "builtin collective calls not entered by every rank:\n  collective call #1 on signal "
       "'signal', " +
       op + (signature.empty() ? "" : " (" + signature + ")") +
       " in function 'partial_kernel': entered by ";
  // The same range list as the rank lines above (issue 22: it once said "1, 2, 3, 4").
  s += P == 2 ? "rank 1" : P == 3 ? "ranks 1, 2" : "ranks 1-" + std::to_string(P - 1);
  return s + "; never entered by rank 0 (finished)";
}

TEST(PartialCollective, EveryMeshCollectiveSkippedByRankZeroDeadlocks) {
  EXPECT_EQ(all_but_zero_report("pld.tensor.broadcast", "root 1, data FP32 [3, 64]", 3),
            "deadlock: no rank can make progress (2 of 3 ranks waiting)\n  ranks 1, 2 (2 ranks): "
            "function 'partial_kernel', op pld.tensor.broadcast: waits for signal 'signal' cell "
            "[0, 0] Ge 1; current value 0; never notified\n  rank 0: finished\nbuiltin collective "
            "calls not entered by every rank:\n  collective call #1 on signal 'signal', "
            "pld.tensor.broadcast (root 1, data FP32 [3, 64]) in function 'partial_kernel': "
            "entered by ranks 1, 2; never entered by rank 0 (finished)");
  const Layout l = partial_layout({NR, 1});
  // (op, signature with "P" for the rank count, call)
  const std::vector<std::tuple<std::string, std::string, Call>> calls = {
      {"pld.tensor.allreduce", "Sum, Mesh, data FP32 [P, 64]",
       [](pl::Value&, pl::Value&, pl::Value& data, pl::Value& signal) {
         data = pld::tensor::allreduce(data, signal);
       }},
      {"pld.tensor.broadcast", "root 1, data FP32 [P, 64]",
       [](pl::Value&, pl::Value&, pl::Value& data, pl::Value& signal) {
         data = pld::tensor::broadcast(data, signal, 1);
       }},
      {"pld.tensor.allgather", "src FP32 [1, 64], dst FP32 [P, 64]",
       [](pl::Value& x, pl::Value&, pl::Value& data, pl::Value& signal) {
         data = pld::tensor::allgather(x, data, signal);
       }},
      {"pld.tensor.reduce_scatter", "Max, data FP32 [P, 64]",
       [](pl::Value&, pl::Value&, pl::Value& data, pl::Value& signal) {
         data = pld::tensor::reduce_scatter(data, signal, ReduceOp::Max);
       }},
      {"pld.tensor.barrier", "",
       [](pl::Value&, pl::Value&, pl::Value&, pl::Value& signal) {
         signal = pld::tensor::barrier(signal);
       }},
  };
  for (const auto& [op, signature, call] : calls) {
    for (std::int64_t P : {2, 3, 5}) {
      std::string sig = signature;
      for (auto at = sig.find("[P"); at != std::string::npos; at = sig.find("[P"))
        sig.replace(at + 1, 1, std::to_string(P));
      EXPECT_EQ(deadlock_report(partial_program(l, false, call), P, {P, 1}),
                all_but_zero_report(op, sig, P))
          << op << " P=" << P;
    }
  }
}

TEST(PartialCollective, AllToAllOnRankZeroOnlyDeadlocks) {
  Layout l = partial_layout({NR, 1});
  l.tmp = {NR, ROW};
  const pl::HostFunction program =
      partial_program(l, true, [](pl::Value&, pl::Value& tmp, pl::Value& data, pl::Value& signal) {
        data = pld::tensor::all_to_all(tmp, data, signal);
      });
  const anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, ROW}, pl::FP32);
  std::string report;
  try {
    run_program(program, x, {2, 1, ROW}, {2, 2, ROW}, {2, 1}, anyp::RunConfig::for_world_size(2));
  } catch (const anyp::DeadlockError& e) {
    report = anyp_test::without_locations(e.what());
  }
  EXPECT_EQ(report,
            "deadlock: no rank can make progress (1 of 2 ranks waiting)\n  rank 0: function "
            "'partial_kernel', op pld.tensor.all_to_all: waits for signal 'signal' cell [1, 0] Ge "
            "1; current value 0; never notified\n  rank 1: finished\nbuiltin collective calls not "
            "entered by every rank:\n  collective call #1 on signal 'signal', "
            "pld.tensor.all_to_all (src FP32 [2, 64], dst FP32 [2, 64]) in function "
            "'partial_kernel': entered by rank 0; never entered by rank 1 (finished)");
}

}  // namespace
