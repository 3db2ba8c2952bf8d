// host_collectives_test.cpp — collectives called in a host function between
// dispatch loops: each becomes one dispatch per rank, in host program order.
// A host mesh allreduce written without a signal gets a synthesized [NR, 1]
// one; that form is refused inside a loop, and in kernels. Also: a host
// allgather whose source and target view one buffer is refused.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kStageParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))};
const auto stage = pl::jit::incore("stage", kStageParams, [](pl::Value x, pl::Value data) {
  data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
});
const auto stage_on_rank = pl::jit::orchestration(
    "stage_on_rank", kStageParams, [](pl::Value x, pl::Value data) { stage(x, data); });

const std::vector<pl::Param> kCopyOutParams = {
    pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))};
const auto copy_out = pl::jit::incore("copy_out", kCopyOutParams, [](pl::Value y, pl::Value data) {
  y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
});
const auto copy_out_on_rank = pl::jit::orchestration(
    "copy_out_on_rank", kCopyOutParams, [](pl::Value y, pl::Value data) { copy_out(y, data); });

const std::vector<pl::Param> kHostParams = {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                                            pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))};

// stage loop; host allreduce (synthesized signal); copy-out loop.
const pl::HostFunction host_sum =
    pl::jit::host("host_sum", kHostParams, [](pl::Value x, pl::Value y) {
      auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        stage_on_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
      });
      pld::tensor::allreduce(pld::window(buf, {1, SIZE}, pl::FP32));
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        copy_out_on_rank(y[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
      });
    });

class HostCollectives : public testing::TestWithParam<std::int64_t> {};

TEST_P(HostCollectives, AllreduceBetweenDispatchLoopsWithASynthesizedSignal) {
  const std::int64_t P = GetParam();
  anyp::InputGenerator gen(3);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = host_sum.compile({x, y}, anyp::RunConfig::for_world_size(P));
  const anyp::RunStats stats = compiled(x, y);
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_NEAR(y.at({r, 0, j}), sum, 1e-5 + 1e-5 * sum) << "P=" << P << " r=" << r;
    }
  }
  // One mesh allreduce: 2 barriers of P - 1 notifies per rank, one epilogue.
  EXPECT_EQ(stats.total().notifies, P * 2 * (P - 1));
  EXPECT_EQ(stats.total().local_notifies, P * (P - 1));
  EXPECT_NE(compiled.window_layout().find("host_allreduce_0_signal"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(P, HostCollectives, testing::Values(2, 3, 4, 5, 8));

// With an explicit signal the host may call the collective in a loop.
TEST(HostCollectivesLoop, ExplicitSignalInAHostLoopAccumulates) {
  const pl::HostFunction host =
      pl::jit::host("host_loop", kHostParams, [](pl::Value x, pl::Value y) {
        auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          stage_on_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
        auto data = pld::window(buf, {1, SIZE}, pl::FP32);
        auto signal = pld::window(sig, {NR, 1}, pl::INT32);
        pl::range(3, [&](pl::Scalar) { pld::tensor::allreduce(data, signal); });
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          copy_out_on_rank(y[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
      });
  for (std::int64_t P : {2, 3, 4}) {
    anyp::InputGenerator gen(5);
    anyp::HostTensor x = gen.uniform({P, 1, SIZE});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
    host.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, 7});
    const double expected = sum * static_cast<double>(P * P);  // three allreduces: sum * P^2
    EXPECT_NEAR(y.at({0, 0, 7}), expected, 1e-4 * expected) << "P=" << P;
  }
}

std::string compile_error(const pl::HostFunction& host, std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  try {
    host.compile({x, y}, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return e.what();
  }
  return "compiled without error";
}

TEST(HostCollectivesErrors, SynthesizedSignalInsideALoopIsRefused) {
  const pl::HostFunction host =
      pl::jit::host("host_bad_loop", kHostParams, [](pl::Value x, pl::Value y) {
        auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          stage_on_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
        auto data = pld::window(buf, {1, SIZE}, pl::FP32);
        pl::range(2, [&](pl::Scalar) { pld::tensor::allreduce(data); });
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          copy_out_on_rank(y[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 3),
            "compile error: function 'host_bad_loop' (host): pld.tensor.allreduce without a "
            "signal is inside a loop: the synthesized signal would be allocated once per "
            "iteration; allocate an [NR, 1] INT32 signal with pld::alloc_window_buffer above the "
            "loop and pass it");
}

// Inside the rank loop a host collective would run P times on every rank.
TEST(HostCollectivesErrors, CollectiveInsideTheRankLoopIsRefused) {
  const pl::HostFunction host =
      pl::jit::host("host_in_rank_loop", kHostParams, [](pl::Value x, pl::Value) {
        auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          auto data = pld::window(buf, {1, SIZE}, pl::FP32);
          stage_on_rank(x[r], data, pl::device(r));
          pld::tensor::allreduce(data, pld::window(sig, {NR, 1}, pl::INT32));
        });
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host_in_rank_loop' (host): pld.tensor.allreduce is inside a "
            "loop that also dispatches to the ranks (the rank loop): a host-level collective runs "
            "once on every rank by itself; call it between dispatch loops");
}

TEST(HostCollectivesErrors, SignalFreeFormInAKernelIsRefused) {
  const auto kernel = pl::jit::incore(
      "bad_kernel", kStageParams, [](pl::Value, pl::Value data) { pld::tensor::allreduce(data); });
  const auto per_rank = pl::jit::orchestration(
      "bad_per_rank", kStageParams, [kernel](pl::Value x, pl::Value data) { kernel(x, data); });
  const pl::HostFunction host =
      pl::jit::host("host_kernel_form", kHostParams, [per_rank](pl::Value x, pl::Value) {
        auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'bad_kernel' (incore): pld.tensor.allreduce without a signal "
            "is a host-level form; in an incore function pass an [NR, 1] INT32 signal window");
}

TEST(HostCollectivesErrors, HostAllgatherSourceAliasingItsTargetIsRefused) {
  const pl::HostFunction host =
      pl::jit::host("host_alias", kHostParams, [](pl::Value x, pl::Value y) {
        auto buf = pld::alloc_window_buffer("gathered", {NR, SIZE}, pl::FP32);
        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          stage_on_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
        pld::tensor::allgather(pld::window(buf, {1, SIZE}, pl::FP32),
                               pld::window(buf, {NR, SIZE}, pl::FP32),
                               pld::window(sig, {NR, 1}, pl::INT32));
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          copy_out_on_rank(y[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host_alias' (host): pld.tensor.allgather: the src and the "
            "dst are views of one window buffer 'gathered'; a collective's windows must be "
            "distinct buffers");
}

}  // namespace
