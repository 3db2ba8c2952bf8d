// host_collectives_test.cpp — collectives called in a host function between
// dispatch loops: each becomes one dispatch per rank, in host program order.
// A host mesh allreduce written without a signal gets a synthesized [NR, 1]
// one; that form is refused inside a loop, and in kernels. Also: a host
// allgather whose source and target view one buffer is refused; a host
// all_to_all_v takes its counts from a window; a host all_to_all runs in
// every mode, Bruck's with its scratch window in the layout.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

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
    return anyp_test::without_locations(e.what());
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

// ---- the host barrier (issue 12, item 5) -------------------------------------------------

// Rank r reads its right neighbour's window, which that rank staged in the
// first dispatch loop: without a barrier between the loops nothing orders
// the stage before the read.
const std::vector<pl::Param> kReadRightParams = {
    pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))};
const auto read_right =
    pl::jit::incore("read_right", kReadRightParams, [](pl::Value y, pl::Value data) {
      auto ctx = pld::get_comm_ctx(data);
      const pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
      y = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, SIZE}), {0, 0}, y);
    });
const auto read_right_on_rank = pl::jit::orchestration_for("read_right_on_rank", read_right);

enum class HostSync { None, Synthesized, Explicit };

pl::HostFunction stage_then_read(HostSync sync) {
  return pl::jit::host("stage_then_read", kHostParams, [sync](pl::Value x, pl::Value y) {
    auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      stage_on_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
    });
    if (sync == HostSync::Synthesized) pld::tensor::barrier();
    if (sync == HostSync::Explicit) {
      auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
      pld::tensor::barrier(pld::window(sig, {NR, 1}, pl::INT32));
    }
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      read_right_on_rank(y[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
    });
  });
}

class HostBarrier : public testing::TestWithParam<std::int64_t> {};

TEST_P(HostBarrier, OrdersOneDispatchLoopBeforeTheNext) {
  const std::int64_t P = GetParam();
  for (const HostSync sync : {HostSync::Synthesized, HostSync::Explicit}) {
    anyp::InputGenerator gen(4);
    anyp::HostTensor x = gen.uniform({P, 1, SIZE});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    anyp::CompiledProgram compiled = stage_then_read(sync).compile({x, y}, config);
    const anyp::RunStats stats = compiled(x, y);
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t j = 0; j < SIZE; ++j)
        ASSERT_EQ(y.at({r, 0, j}), x.at({(r + 1) % P, 0, j})) << "P=" << P << " r=" << r;
    // One barrier: P - 1 notifies per rank and its epilogue.
    EXPECT_EQ(stats.total().notifies, P * (P - 1));
    EXPECT_EQ(stats.total().local_notifies, P * (P - 1));
    EXPECT_EQ(compiled.window_layout().find("host_barrier_0_signal") != std::string::npos,
              sync == HostSync::Synthesized);
  }
}

// Without the barrier the two loops still run in host order: they pass one
// window, and dispatch groups that pass a window run one after the other
// (compiler/order_dispatches.hpp), so every read sees the staged row and the
// race checker sees the order.
TEST_P(HostBarrier, WithoutItTheWindowOrdersTheLoops) {
  const std::int64_t P = GetParam();
  anyp::InputGenerator gen(5);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  anyp::CompiledProgram compiled = stage_then_read(HostSync::None).compile({x, y}, config);
  const anyp::RunStats stats = compiled(x, y);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t j = 0; j < SIZE; ++j)
      ASSERT_EQ(y.at({r, 0, j}), x.at({(r + 1) % P, 0, j})) << "P=" << P << " r=" << r;
  // The order is the runtime's, not the program's: the card counts no notify.
  EXPECT_EQ(stats.total().notifies, 0);
  EXPECT_EQ(stats.total().waits, 0);
  const std::string others = P == 2 ? "1 dispatch" : std::to_string(P - 1) + " dispatches";
  EXPECT_NE(compiled.lowered_code().find("after the earlier group on 'data' (" + others +
                                         " of other ranks"),
            std::string::npos)
      << compiled.lowered_code();
}

INSTANTIATE_TEST_SUITE_P(P, HostBarrier, testing::Values(2, 3, 5, 8));

TEST(HostCollectivesErrors, TheSignalLessBarrierIsAHostForm) {
  const auto bad = pl::jit::incore("bad_barrier", kStageParams,
                                   [](pl::Value, pl::Value) { pld::tensor::barrier(); });
  EXPECT_THROW(
      {
        try {
          bad.ir_text();
        } catch (const anyp::CompileError& e) {
          EXPECT_EQ(std::string(anyp_test::without_locations(e.what())),
                    "compile error: function 'bad_barrier' (incore): pld.tensor.barrier without a "
                    "signal is a host-level form; in an incore function pass an [NR, 1] INT32 "
                    "signal window");
          throw;
        }
      },
      anyp::CompileError);
  const pl::HostFunction looped = pl::jit::host("looped", kHostParams, [](pl::Value x, pl::Value) {
    auto buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
    pl::range(pld::world_size(), [&](pl::Scalar r) {
      stage_on_rank(x[r], pld::window(buf, {1, SIZE}, pl::FP32), pl::device(r));
    });
    pl::range(2, [&](pl::Scalar) { pld::tensor::barrier(); });
  });
  EXPECT_EQ(compile_error(looped, 2),
            "compile error: function 'looped' (host): pld.tensor.barrier without a signal is "
            "inside a loop: the synthesized signal would be allocated once per iteration; "
            "allocate an [NR, 1] INT32 signal with pld::alloc_window_buffer above the loop and "
            "pass it");
}

// ---- host-level all_to_all_v (issue 12, item 5) --------------------------------------------

constexpr std::int64_t C = 8;  // elements per destination row
// Rank r stages row d of src (C elements) and the count (r + 2d) % 9 for
// every destination d into its windows.
const std::vector<pl::Param> kStageVParams = {
    pl::In("x", pl::Tensor({NR, C}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({NR, C}, pl::FP32)),
    pl::InOut("counts", pld::DistributedTensor({NR, 1}, pl::INT32))};
const auto stage_v =
    pl::jit::incore("stage_v", kStageVParams, [](pl::Value x, pl::Value src, pl::Value counts) {
      auto ctx = pld::get_comm_ctx(src);
      const pl::Scalar r = pld::rank(ctx);
      src = pl::store(pl::load(x, {0, 0}, {NR, C}), {0, 0}, src);
      pl::range(pld::nranks(ctx), [&](pl::Scalar d) {
        pl::write(counts, {d, 0}, (r + 2 * d) % (C + 1));
      });
    });
const std::vector<pl::Param> kCopyVParams = {
    pl::Out("y", pl::Tensor({NR, C}, pl::FP32)), pl::Out("n", pl::Tensor({NR, 1}, pl::INT32)),
    pl::InOut("dst", pld::DistributedTensor({NR, C}, pl::FP32)),
    pl::InOut("recv_counts", pld::DistributedTensor({NR, 1}, pl::INT32))};
const auto copy_v = pl::jit::incore(
    "copy_v", kCopyVParams, [](pl::Value y, pl::Value n, pl::Value dst, pl::Value recv_counts) {
      y = pl::store(pl::load(dst, {0, 0}, {NR, C}), {0, 0}, y);
      pl::range(NR, [&](pl::Scalar s) { pl::write(n, {s, 0}, pl::read(recv_counts, {s, 0})); });
    });

TEST_P(HostCollectives, AllToAllVBetweenDispatchLoopsTakesItsCountsFromAWindow) {
  const std::int64_t P = GetParam();
  const auto stage_on = pl::jit::orchestration_for("stage_v_on_rank", stage_v);
  const auto copy_on = pl::jit::orchestration_for("copy_v_on_rank", copy_v);
  const pl::HostFunction host = pl::jit::host(
      "host_a2av",
      {pl::In("x", pl::Tensor({NR, NR, C}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, NR, C}, pl::FP32)),
       pl::Out("n", pl::Tensor({NR, NR, 1}, pl::INT32))},
      [&](pl::Value x, pl::Value y, pl::Value n) {
        auto src = pld::alloc_window_buffer("src", {NR, C}, pl::FP32);
        auto counts = pld::alloc_window_buffer("counts", {NR, 1}, pl::INT32);
        auto dst = pld::alloc_window_buffer("dst", {NR, C}, pl::FP32);
        auto recv = pld::alloc_window_buffer("recv_counts", {NR, 1}, pl::INT32);
        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
        const auto view = [](const pl::Value& b, pl::Shape shape, pl::DType d) {
          return pld::window(b, std::move(shape), d);
        };
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          stage_on(x[r], view(src, {NR, C}, pl::FP32), view(counts, {NR, 1}, pl::INT32),
                   pl::device(r));
        });
        pld::tensor::all_to_all_v(view(src, {NR, C}, pl::FP32), view(counts, {NR, 1}, pl::INT32),
                                  view(dst, {NR, C}, pl::FP32), view(recv, {NR, 1}, pl::INT32),
                                  view(sig, {NR, 1}, pl::INT32));
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          copy_on(y[r], n[r], view(dst, {NR, C}, pl::FP32), view(recv, {NR, 1}, pl::INT32),
                  pl::device(r));
        });
      });
  anyp::InputGenerator gen(9);
  anyp::HostTensor x = gen.uniform({P, P, C});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, P, C}, pl::FP32);
  anyp::HostTensor n = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  host.compile({x, y, n}, config)(x, y, n);
  // Rank r's row s holds the first (s + 2r) % 9 elements of rank s's row r.
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t s = 0; s < P; ++s) {
      const std::int64_t count = (s + 2 * r) % (C + 1);
      EXPECT_EQ(n.at_int({r, s, 0}), count) << "rank " << r << " from " << s;
      for (std::int64_t j = 0; j < C; ++j)
        EXPECT_EQ(y.at({r, s, j}), j < count ? x.at({s, r, j}) : 0.0)
            << "rank " << r << " row " << s << " element " << j;
    }
}

// ---- host-level all_to_all, every mode (Bruck's scratch window) ---------------------------

const std::vector<pl::Param> kStageRowsParams = {
    pl::In("x", pl::Tensor({NR, C}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({NR, C}, pl::FP32))};
const auto stage_rows =
    pl::jit::incore("stage_rows", kStageRowsParams, [](pl::Value x, pl::Value src) {
      src = pl::store(pl::load(x, {0, 0}, {NR, C}), {0, 0}, src);
    });
const std::vector<pl::Param> kCopyRowsParams = {
    pl::Out("y", pl::Tensor({NR, C}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({NR, C}, pl::FP32))};
const auto copy_rows =
    pl::jit::incore("copy_rows", kCopyRowsParams, [](pl::Value y, pl::Value dst) {
      y = pl::store(pl::load(dst, {0, 0}, {NR, C}), {0, 0}, y);
    });

TEST_P(HostCollectives, AllToAllBetweenDispatchLoopsInEveryMode) {
  const std::int64_t P = GetParam();
  const auto stage_on = pl::jit::orchestration_for("stage_rows_on_rank", stage_rows);
  const auto copy_on = pl::jit::orchestration_for("copy_rows_on_rank", copy_rows);
  for (pld::AllToAllMode mode : {pld::AllToAllMode::Mesh, pld::AllToAllMode::Pairwise,
                                 pld::AllToAllMode::Bruck, pld::AllToAllMode::Auto}) {
    const pl::HostFunction host =
        pl::jit::host("host_a2a",
                      {pl::In("x", pl::Tensor({NR, NR, C}, pl::FP32)),
                       pl::Out("y", pl::Tensor({NR, NR, C}, pl::FP32))},
                      [&](pl::Value x, pl::Value y) {
                        auto src = pld::alloc_window_buffer("src", {NR, C}, pl::FP32);
                        auto dst = pld::alloc_window_buffer("dst", {NR, C}, pl::FP32);
                        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
                        pl::range(pld::world_size(), [&](pl::Scalar r) {
                          stage_on(x[r], pld::window(src, {NR, C}, pl::FP32), pl::device(r));
                        });
                        pld::tensor::all_to_all(pld::window(src, {NR, C}, pl::FP32),
                                                pld::window(dst, {NR, C}, pl::FP32),
                                                pld::window(sig, {NR, 1}, pl::INT32), mode);
                        pl::range(pld::world_size(), [&](pl::Scalar r) {
                          copy_on(y[r], pld::window(dst, {NR, C}, pl::FP32), pl::device(r));
                        });
                      });
    anyp::InputGenerator gen(11);
    anyp::HostTensor x = gen.uniform({P, P, C});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, P, C}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.check_races = true;
    anyp::CompiledProgram compiled = host.compile({x, y}, config);
    compiled(x, y);
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t s = 0; s < P; ++s)
        for (std::int64_t j = 0; j < C; ++j)
          ASSERT_EQ(y.at({r, s, j}), x.at({s, r, j})) << "rank " << r << " row " << s;
    // Bruck's scratch window, 3 floor(P / 2) rows of C FP32, in the layout.
    const std::string scratch = "(bruck all_to_all): offset";
    const std::string layout = compiled.window_layout();
    if (mode == pld::AllToAllMode::Bruck) {
      EXPECT_NE(layout.find(scratch), std::string::npos) << layout;
      EXPECT_NE(layout.find("used " + std::to_string(3 * (P / 2) * C * 4) + " B"),
                std::string::npos)
          << layout;
    } else if (mode != pld::AllToAllMode::Auto) {
      EXPECT_EQ(layout.find(scratch), std::string::npos) << layout;
    }
  }
}

}  // namespace
