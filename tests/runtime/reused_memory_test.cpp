// reused_memory_test.cpp — the threads engine keeps its heap and worker
// threads across runs (heap_pool.hpp, worker_pool.hpp): every run must
// still start from zeroed windows and signal cells, whatever ran before it
// in the process — the same program, a program with another layout, or two
// programs at once from two threads. A writer program dirties its windows
// everywhere (contiguous stores, strided puts, atomic adds, notifies into
// every cell); a reader program with the same window sizes then checks, by
// data and by waits that only hold on zero cells, that it sees zeros.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t ROWS = 64, COLS = 256;  // 64 KiB of FP32 per rank: many bitmap words

using pld::NotifyOp;
using pld::WaitCmp;

// The window buffers both programs declare, in this order: data [ROWS, COLS]
// FP32 and signal [NR, 1] INT32.
struct Windows {
  pl::Value data, signal;
};

pl::HostFunction make_host(const std::string& name, const pl::Function& per_rank) {
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, ROWS, COLS}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, ROWS, COLS}, pl::FP32))},
                       [=](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {ROWS, COLS}, pl::FP32);
                         auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(data, {ROWS, COLS}, pl::FP32),
                                    pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({ROWS, COLS}, pl::FP32)),
    pl::Out("y", pl::Tensor({ROWS, COLS}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({ROWS, COLS}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

// Dirties both buffers on every rank, race-free: the top half of its own
// data (a contiguous store), a strided column block of the right
// neighbour's bottom half and an atomic add into its last row (the
// neighbour never writes its own bottom half), and an AtomicAdd 5 into
// every rank's every cell. Never waits, so nothing it leaves is consumed.
pl::HostFunction writer() {
  const auto kernel = pl::jit::incore(
      "dirty", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
        pl::Scalar right = (r + 1) % P;
        data = pl::store(pl::load(x, {0, 0}, {ROWS / 2, COLS}), {0, 0}, data);
        pld::tensor::put(data, right, x, {ROWS / 2, 100}, {0, 0}, {ROWS / 2, 8});
        pld::tensor::put(data, right, x, {ROWS - 1, 0}, {0, 0}, {1, COLS}, pld::AtomicType::Add);
        pl::range(P, [&](pl::Scalar p) {
          pl::range(P, [&](pl::Scalar cell) {
            pld::system::notify(signal, p, {cell, 0}, 5, NotifyOp::AtomicAdd);
          });
        });
        y = pl::store(pl::load(x, {0, 0}, {ROWS, COLS}), {0, 0}, y);
      });
  return make_host("dirty_everything", pl::jit::orchestration_for("dirty_per_rank", kernel));
}

// Waits until every own cell is 0 (a dirty cell deadlocks: the run fails),
// then copies its own data buffer to y.
pl::HostFunction reader() {
  const auto kernel = pl::jit::incore(
      "check", kParams, [](pl::Value, pl::Value y, pl::Value data, pl::Value signal) {
        pl::Scalar P = pld::nranks(pld::get_comm_ctx(data));
        pl::range(P, [&](pl::Scalar cell) {
          pld::system::wait(signal, {cell, 0}, 0, WaitCmp::Eq);
        });
        y = pl::store(pl::load(data, {0, 0}, {ROWS, COLS}), {0, 0}, y);
      });
  return make_host("check_zeroed", pl::jit::orchestration_for("check_per_rank", kernel));
}

// x filled with 1 + (flat index % 7): never zero.
anyp::HostTensor ones_and_more(std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, ROWS, COLS}, pl::FP32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(1 + i % 7));
  return x;
}

std::int64_t nonzero_elements(const anyp::HostTensor& y) {
  std::int64_t n = 0;
  for (std::int64_t i = 0; i < y.numel(); ++i) n += y.get(i) != 0.0;
  return n;
}

class ReusedMemory : public ::testing::TestWithParam<std::tuple<std::int64_t, int>> {};

TEST_P(ReusedMemory, EveryRunStartsFromZeroedWindows) {
  const auto [P, workers] = GetParam();
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.workers = workers;
  const anyp::HostTensor x = ones_and_more(P);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, ROWS, COLS}, pl::FP32);
  const anyp::CompiledProgram dirty = writer().compile({x, y}, config);
  const anyp::CompiledProgram check = reader().compile({x, y}, config);
  for (int round = 0; round < 3; ++round) {
    dirty(x, y);
    ASSERT_EQ(nonzero_elements(y), P * ROWS * COLS) << "the writer really wrote";
    anyp::HostTensor seen = ones_and_more(P);  // the reader must overwrite every element
    ASSERT_NO_THROW(check(x, seen)) << "round " << round << ": a signal cell was not zeroed";
    EXPECT_EQ(nonzero_elements(seen), 0) << "round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, ReusedMemory,
                         ::testing::Combine(::testing::Values(2, 3, 5, 8, 16),
                                            ::testing::Values(1, 2)));

// One program run many times in one process: the builtin ring allreduce,
// whose cells are spread over a [2(P-1), P] signal buffer, gives the exact
// sums every time (a cell left over from the previous run would release a
// wait early or deadlock).
TEST(ReusedMemory, RepeatedRunsOfOneProgramAgree) {
  const std::int64_t P = 4;
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  const pl::Shape sig{2 * (NR - 1), NR};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, 64}, pl::FP32)), pl::Out("y", pl::Tensor({1, 64}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, 64}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "ring_sum", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, 64}), {0, 0}, data);
        data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, pld::AllreduceMode::Ring);
        y = pl::store(pl::load(data, {0, 0}, {1, 64}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration_for("ring_sum_per_rank", kernel);
  const auto host = pl::jit::host("ring_sum_host",
                                  {pl::In("x", pl::Tensor({NR, 1, 64}, pl::FP32)),
                                   pl::Out("y", pl::Tensor({NR, 1, 64}, pl::FP32))},
                                  [=](pl::Value x, pl::Value y) {
                                    auto data = pld::alloc_window_buffer("data", {1, 64}, pl::FP32);
                                    auto signal =
                                        pld::alloc_window_buffer("signal", sig, pl::INT32);
                                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                                      pl::Value xr = x[r];
                                      pl::Value yr = y[r];
                                      per_rank(xr, yr, pld::window(data, {1, 64}, pl::FP32),
                                               pld::window(signal, sig, pl::INT32), pl::device(r));
                                    });
                                  });
  anyp::HostTensor x = anyp::HostTensor::arange({P, 1, 64}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, 64}, pl::FP32);
  const anyp::CompiledProgram compiled = host.compile({x, y}, config);
  for (int run = 0; run < 20; ++run) {
    y = anyp::HostTensor::zeros({P, 1, 64}, pl::FP32);
    ASSERT_NO_THROW(compiled(x, y)) << "run " << run;
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t i = 0; i < 64; ++i) {
        double sum = 0;
        for (std::int64_t q = 0; q < P; ++q) sum += static_cast<double>(q * 64 + i);
        ASSERT_EQ(y.at({r, 0, i}), sum) << "run " << run << ", rank " << r << ", element " << i;
      }
  }
}

// Two user threads run the writer and the reader at different P at once:
// each run has a heap of its own and workers of its own.
TEST(ReusedMemory, ConcurrentRunsFromTwoThreads) {
  auto loop = [](std::int64_t P, int rounds, std::string* failure) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    const anyp::HostTensor x = ones_and_more(P);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, ROWS, COLS}, pl::FP32);
    const anyp::CompiledProgram dirty = writer().compile({x, y}, config);
    const anyp::CompiledProgram check = reader().compile({x, y}, config);
    for (int round = 0; round < rounds; ++round) {
      try {
        dirty(x, y);
        anyp::HostTensor seen = ones_and_more(P);
        check(x, seen);
        if (nonzero_elements(seen) != 0) *failure = "nonzero window at P = " + std::to_string(P);
      } catch (const anyp::Error& e) {
        *failure = e.what();
      }
      if (!failure->empty()) return;
    }
  };
  std::string failure3, failure4;
  std::thread a(loop, 3, 10, &failure3), b(loop, 4, 10, &failure4);
  a.join();
  b.join();
  EXPECT_EQ(failure3, "");
  EXPECT_EQ(failure4, "");
}

}  // namespace
