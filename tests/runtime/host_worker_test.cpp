// host_worker_test.cpp — host workers (pl::jit::host_worker, PyPTO's HOST
// SubWorker): a C++ callable the host calls between its dispatch loops.
// It sees every rank's writes of the tensors it takes, the dispatches after
// it see its writes, and a dispatch that overwrites what it read waits for
// it: exact values at P = 1 ... 16 under free, deterministic and PCT
// schedules with the race checker on. Its exception ends the run with a
// RunError naming it; misuse (a device, a window view, a scalar parameter,
// a replaced argument) is refused with the whole message; the MPI engine
// refuses a program that has one.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t N = 8;

// y = x + k on this rank.
pl::Function add_orch(const std::string& name, double k) {
  const pl::TypeSpec t = pl::Tensor({1, N}, pl::FP32);
  const pl::Function kernel =
      pl::jit::incore(name, {pl::In("x", t), pl::Out("y", t)}, [k](pl::Value x, pl::Value y) {
        y = pl::store(pl::add(pl::load(x, {0, 0}, {1, N}), k), {0, 0}, y);
      });
  return pl::jit::orchestration_for(name + "_orch", kernel);
}

// z = y * s on this rank (s: the host worker's [1, N] result).
pl::Function scale_orch() {
  const pl::TypeSpec t = pl::Tensor({1, N}, pl::FP32);
  const pl::Function kernel = pl::jit::incore(
      "scale", {pl::In("y", t), pl::In("s", t), pl::Out("z", t)},
      [](pl::Value y, pl::Value s, pl::Value z) {
        z = pl::store(pl::mul(pl::load(y, {0, 0}, {1, N}), pl::load(s, {0, 0}, {1, N})), {0, 0}, z);
      });
  return pl::jit::orchestration_for("scale_orch", kernel);
}

// What the fold worker saw, one tensor per call.
struct Seen {
  std::vector<anyp::HostTensor> calls;
};

// s = the sum over ranks of y (every rank's row), recorded in `seen`.
pl::Function fold_worker(const std::shared_ptr<Seen>& seen) {
  return pl::jit::host_worker(
      "fold",
      {pl::In("y", pl::Tensor({NR, 1, N}, pl::FP32)), pl::Out("s", pl::Tensor({1, N}, pl::FP32))},
      [seen](std::span<anyp::HostTensor> args) {
        seen->calls.push_back(args[0].clone());
        const std::int64_t ranks = args[0].shape()[0];
        for (std::int64_t j = 0; j < N; ++j) {
          double sum = 0;
          for (std::int64_t r = 0; r < ranks; ++r) sum += args[0].get(r * N + j);
          args[1].set(j, sum);
        }
      });
}

// Round 1: y[r] = x[r] + 1; fold(y) -> s; round 2: z[r] = y[r] * s; round
// 3 overwrites y[r] = x[r] + 1000 (after fold has read it).
pl::HostFunction pipeline(const std::shared_ptr<Seen>& seen) {
  const pl::Function stage = add_orch("stage", 1.0);
  const pl::Function restage = add_orch("restage", 1000.0);
  const pl::Function scale = scale_orch();
  const pl::Function fold = fold_worker(seen);
  const pl::TypeSpec rows = pl::Tensor({NR, 1, N}, pl::FP32);
  return pl::jit::host(
      "pipeline",
      {pl::In("x", rows), pl::InOut("y", rows), pl::Out("s", pl::Tensor({1, N}, pl::FP32)),
       pl::Out("z", rows)},
      [=](pl::Value x, pl::Value y, pl::Value s, pl::Value z) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { stage(x[r], y[r], pl::device(r)); });
        fold(y, s);
        pl::range(pld::world_size(), [&](pl::Scalar r) { scale(y[r], s, z[r], pl::device(r)); });
        pl::range(pld::world_size(), [&](pl::Scalar r) { restage(x[r], y[r], pl::device(r)); });
      });
}

anyp::RunConfig config(std::int64_t P, int schedule) {
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.check_races = true;
  if (schedule == 1) {
    c.deterministic = true;
    c.schedule_seed = 5;
  } else if (schedule >= 2) {
    c.pct.enabled = true;
    c.pct.seed = static_cast<std::uint64_t>(schedule);
    c.pct.depth = 3;
    c.pct.steps = 60;
  } else {
    c.workers = 2;
  }
  return c;
}

class HostWorker : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(HostWorker, SeesEveryRankAndIsSeenByTheNextRounds) {
  const std::int64_t P = GetParam();
  for (int schedule = 0; schedule < 4; ++schedule) {
    auto seen = std::make_shared<Seen>();
    const pl::HostFunction host = pipeline(seen);
    auto x = anyp::HostTensor::arange({P, 1, N}, anyp::DType::FP32);
    auto y = anyp::HostTensor::zeros({P, 1, N}, anyp::DType::FP32);
    auto s = anyp::HostTensor::zeros({1, N}, anyp::DType::FP32);
    auto z = anyp::HostTensor::zeros({P, 1, N}, anyp::DType::FP32);
    host.compile({x, y, s, z}, config(P, schedule))(x, y, s, z);  // a race would throw
    ASSERT_EQ(seen->calls.size(), 1u);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) {
        const std::int64_t i = r * N + j;
        double sum = 0;  // sum over q of (x[q][j] + 1)
        for (std::int64_t q = 0; q < P; ++q) sum += static_cast<double>(q * N + j) + 1;
        EXPECT_EQ(seen->calls[0].get(i), static_cast<double>(i) + 1) << "P=" << P;
        EXPECT_EQ(s.get(j), sum);
        EXPECT_EQ(z.get(i), (static_cast<double>(i) + 1) * sum) << "P=" << P << " i=" << i;
        EXPECT_EQ(y.get(i), static_cast<double>(i) + 1000);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, HostWorker, ::testing::Values(1, 2, 3, 4, 5, 8, 16));

// A host worker called in a rank loop: once per rank, in rank order, each
// after that rank's dispatch.
TEST(HostWorkerCalls, OncePerCallInHostOrder) {
  const std::int64_t P = 5;
  auto rows = std::make_shared<std::vector<double>>();
  const pl::Function look =
      pl::jit::host_worker("look", {pl::In("y", pl::Tensor({1, N}, pl::FP32))},
                           [rows](std::span<anyp::HostTensor> a) { rows->push_back(a[0].get(0)); });
  const pl::Function stage = add_orch("stage", 1.0);
  const pl::TypeSpec t = pl::Tensor({NR, 1, N}, pl::FP32);
  const pl::HostFunction host =
      pl::jit::host("each_row", {pl::In("x", t), pl::Out("y", t)}, [=](pl::Value x, pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          stage(x[r], y[r], pl::device(r));
          look(y[r]);
        });
      });
  auto x = anyp::HostTensor::arange({P, 1, N}, anyp::DType::FP32);
  auto y = anyp::HostTensor::zeros({P, 1, N}, anyp::DType::FP32);
  anyp::RunConfig c = config(P, 0);
  host.compile({x, y}, c)(x, y);
  EXPECT_EQ(*rows, (std::vector<double>{1, 9, 17, 25, 33}));
}

// Compiles and runs at P = 3 a program that stages y and calls `worker`
// on it; the error's what().
std::string error_of(const pl::Function& worker, bool device) {
  const pl::TypeSpec t = pl::Tensor({NR, 1, N}, pl::FP32);
  const pl::Function stage = add_orch("stage", 1.0);
  const pl::HostFunction host =
      pl::jit::host("calls_worker", {pl::InOut("y", t)}, [=](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { stage(y[r], y[r], pl::device(r)); });
        if (device) {
          worker(y, pl::device(1));
        } else {
          worker(y);
        }
      });
  auto y = anyp::HostTensor::zeros({3, 1, N}, anyp::DType::FP32);
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(3))(y);
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
  return "no error";
}

pl::Function worker_of(const std::string& name, anyp::HostWorkerBody body) {
  return pl::jit::host_worker(name, {pl::InOut("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                              std::move(body));
}

TEST(HostWorkerErrors, ItsExceptionEndsTheRun) {
  const auto boom = worker_of(
      "boom", [](std::span<anyp::HostTensor>) { throw std::runtime_error("checksum mismatch"); });
  EXPECT_EQ(error_of(boom, false),
            "run error: rank 0 (device 0), function 'boom', op pl.host_worker: host worker "
            "'boom' failed: checksum mismatch");
}

TEST(HostWorkerErrors, ReplacingAnArgumentIsRefused) {
  const auto swap = worker_of("swap", [](std::span<anyp::HostTensor> a) {
    a[0] = anyp::HostTensor::zeros({2}, anyp::DType::FP32);
  });
  EXPECT_EQ(error_of(swap, false),
            "run error: rank 0 (device 0), function 'swap', op pl.host_worker: host worker "
            "'swap' replaced its argument 0 with another tensor; write into the one it was "
            "given (FP32 [3, 1, 8])");
}

TEST(HostWorkerErrors, ADeviceIsRefused) {
  const auto w = worker_of("w", [](std::span<anyp::HostTensor>) {});
  EXPECT_EQ(error_of(w, true),
            "compile error: function 'calls_worker' (host): call of host worker 'w' names a "
            "device: a host worker runs on the host (PyPTO's SubWorker); call it without "
            "device=");
}

TEST(HostWorkerErrors, AWindowViewOrAScalarParameterIsRefused) {
  EXPECT_THROW(
      {
        try {
          pl::jit::host_worker("w", {pl::In("n", anyp::DType::INT32)},
                               [](std::span<anyp::HostTensor>) {});
        } catch (const anyp::CompileError& e) {
          EXPECT_STREQ(e.what(),
                       "compile error: host worker 'w', parameter 'n': a host worker takes host "
                       "tensors (pl::Tensor), not a scalar");
          throw;
        }
      },
      anyp::CompileError);
  EXPECT_THROW(pl::jit::host_worker("w", {pl::In("v", pld::DistributedTensor({1, N}, pl::FP32))},
                                    [](std::span<anyp::HostTensor>) {}),
               anyp::CompileError);
}

}  // namespace

namespace {

// The MPI engine keeps each rank's host tensors in its own process, so a
// worker could not see the other ranks' results there: refused by name.
TEST(HostWorkerErrors, TheMpiEngineRefusesAProgramWithAWorker) {
  const auto engines = anyp::available_engines();
  if (std::find(engines.begin(), engines.end(), "mpi") == engines.end())
    GTEST_SKIP() << "this build has no MPI engine";
#ifdef ANYP_TEST_SANITIZED
  GTEST_SKIP() << "Open MPI is not built with the sanitizers";
#endif
  const auto look = worker_of("look", [](std::span<anyp::HostTensor>) {});
  const pl::Function stage = add_orch("stage", 1.0);
  const pl::TypeSpec t = pl::Tensor({NR, 1, N}, pl::FP32);
  const pl::HostFunction host = pl::jit::host("on_mpi", {pl::InOut("y", t)}, [=](pl::Value y) {
    pl::range(pld::world_size(), [&](pl::Scalar r) { stage(y[r], y[r], pl::device(r)); });
    look(y);
  });
  auto y = anyp::HostTensor::zeros({1, 1, N}, anyp::DType::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(1);
  config.engine = "mpi";
  try {
    host.compile({y}, config)(y);
    ADD_FAILURE() << "the MPI engine ran a program with a host worker";
  } catch (const anyp::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "engine 'mpi': 'on_mpi' calls host worker 'look', which takes every "
              "rank's results in one process; the MPI engine keeps each rank's host tensors in "
              "its own process: run it on the threads engine");
  }
}

}  // namespace
