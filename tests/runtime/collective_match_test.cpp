// collective_match_test.cpp — builtin collective calls are matched across
// ranks (runtime/collective_tracker.hpp): every rank's n-th call on one
// signal must be the same call, else a run error names both calls and
// ranks; a collective's windows must be distinct buffers. Without the
// match, collectives out of order balance their credits and finish with
// garbage. Run on one worker so the first rank to arrive is fixed.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t ROW = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, ROW}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("sig", pld::DistributedTensor({NR, 1}, pl::INT32))};

// Rank 0 calls allreduce then broadcast on `sig`; the others the reverse.
const auto swapped =
    pl::jit::incore("swapped", kParams, [](pl::Value x, pl::Value data, pl::Value sig) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
      data = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, data);
      pl::if_(
          r == 0,
          [&] {
            data = pld::tensor::allreduce(data, sig);
            data = pld::tensor::broadcast(data, sig, 0);
          },
          [&] {
            data = pld::tensor::broadcast(data, sig, 0);
            data = pld::tensor::allreduce(data, sig);
          });
    });

pl::HostFunction host_of(const pl::Function& kernel, bool one_buffer = false) {
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams, [kernel](pl::Value x, pl::Value d, pl::Value s) { kernel(x, d, s); });
  return pl::jit::host("match_" + kernel.name(), {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                       [per_rank, one_buffer](pl::Value x) {
                         // One buffer: [1, 64] FP32 also holds the [NR, 1] INT32 view (P <= 64).
                         auto data = pld::alloc_window_buffer("data", {1, ROW}, pl::FP32);
                         if (one_buffer) {
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             pl::Value xr = x[r];
                             per_rank(xr, pld::window(data, {1, ROW}, pl::FP32),
                                      pld::window(data, {NR, 1}, pl::INT32), pl::device(r));
                           });
                           return;
                         }
                         auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           per_rank(xr, pld::window(data, {1, ROW}, pl::FP32),
                                    pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

std::string run_error(const pl::HostFunction& p, std::int64_t P) {
  anyp::InputGenerator gen(1);
  const anyp::HostTensor x = gen.uniform({P, 1, ROW});
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.workers = 1;
  try {
    p.compile({x}, config)(x);
  } catch (const anyp::RunError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

TEST(CollectiveMatch, CallsInADifferentOrderAreAnError) {
  const pl::HostFunction p = host_of(swapped);
  // Rank 0 runs first and enters allreduce; rank 1 then enters broadcast.
  EXPECT_EQ(run_error(p, 2),
            "run error: rank 1 (device 1), function 'swapped', op pld.tensor.broadcast: "
            "collective mismatch on signal 'sig': call #1 on it is pld.tensor.allreduce (Sum, "
            "Mesh, data FP32 [1, 64]) in function 'swapped' on rank 0, but pld.tensor.broadcast "
            "(root 0, data FP32 [1, 64]) in function 'swapped' on rank 1; every rank must make "
            "the same builtin collective calls on a signal, in the same order");
  for (std::int64_t P : {3, 4, 7}) {
    EXPECT_NE(run_error(p, P).find("collective mismatch on signal 'sig': call #1"),
              std::string::npos)
        << "P=" << P;
  }
}

const auto aliased =
    pl::jit::incore("aliased", kParams, [](pl::Value x, pl::Value data, pl::Value sig) {
      data = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, data);
      data = pld::tensor::allreduce(data, sig);
    });

TEST(CollectiveMatch, DataAndSignalInOneBufferAreAnError) {
  for (std::int64_t P : {2, 3, 5}) {
    EXPECT_EQ(run_error(host_of(aliased, true), P),
              "compile error: function 'aliased' (incore), op pld.tensor.allreduce: the data and "
              "the signal are views of one window buffer 'data'; a collective's windows must be "
              "distinct buffers")
        << "P=" << P;
  }
}

// Rank 0 passes views of buffer A, the others of buffer B: the same call,
// but on different windows (without the check: a silent wrong sum).
const std::vector<pl::Param> kTwoBufferParams = {
    pl::In("x", pl::Tensor({1, ROW}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("sig", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto two_buffers_per_rank =
    pl::jit::orchestration("per_rank_two", kTwoBufferParams,
                           [](pl::Value x, pl::Value d, pl::Value s) { aliased(x, d, s); });

const pl::HostFunction two_buffers = pl::jit::host(
    "two_buffers", {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32))}, [](pl::Value x) {
      auto a = pld::alloc_window_buffer("A", {1, ROW}, pl::FP32);
      auto b = pld::alloc_window_buffer("B", {1, ROW}, pl::FP32);
      auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        pl::Value xr = x[r];
        pl::if_(
            r == 0,
            [&] {
              two_buffers_per_rank(xr, pld::window(a, {1, ROW}, pl::FP32),
                                   pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
            },
            [&] {
              two_buffers_per_rank(xr, pld::window(b, {1, ROW}, pl::FP32),
                                   pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
            });
      });
    });

TEST(CollectiveMatch, ViewsOfDifferentBuffersOnDifferentRanksAreAnError) {
  // 'A' reaches rank 0 only and 'B' the others: each is its ranks' own
  // window (a domain inferred as PyPTO does), which the world's signal is not.
  EXPECT_EQ(run_error(two_buffers, 3),
            "compile error: function 'aliased' (incore), op pld.tensor.allreduce: the data is a "
            "view in domain 'ranks {0}', but the signal is a view in the world; a collective's "
            "windows must be in one domain (a buffer whose views are dispatched to some ranks "
            "only is theirs alone, a domain inferred as PyPTO does: pass every rank views of "
            "the same buffers, or declare the domain)");
}

// Every rank gets views of both A and B, and the kernel picks one by its
// rank: the buffers are the world's, and the run finds the mismatch.
const auto picks_by_rank = pl::jit::incore(
    "picks_by_rank",
    {pl::InOut("a", pld::DistributedTensor({1, ROW}, pl::FP32)),
     pl::InOut("b", pld::DistributedTensor({1, ROW}, pl::FP32)),
     pl::InOut("sig", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value a, pl::Value b, pl::Value sig) {
      pl::if_(
          pld::rank(pld::get_comm_ctx(sig)) == 0, [&] { a = pld::tensor::allreduce(a, sig); },
          [&] { b = pld::tensor::allreduce(b, sig); });
    });

TEST(CollectiveMatch, ViewsOfDifferentBuffersChosenByRankAreARunError) {
  const auto per_rank = pl::jit::orchestration_for("per_rank_picks", picks_by_rank);
  const pl::HostFunction host = pl::jit::host(
      "picks", {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32))}, [per_rank](pl::Value) {
        auto a = pld::alloc_window_buffer("A", {1, ROW}, pl::FP32);
        auto b = pld::alloc_window_buffer("B", {1, ROW}, pl::FP32);
        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(pld::window(a, {1, ROW}, pl::FP32), pld::window(b, {1, ROW}, pl::FP32),
                   pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
  EXPECT_EQ(run_error(host, 3),
            "run error: rank 1 (device 1), function 'picks_by_rank', op pld.tensor.allreduce: "
            "collective mismatch on signal 'sig': call #1 on it is pld.tensor.allreduce (Sum, "
            "Mesh, data FP32 [1, 64]) in function 'picks_by_rank' with data 'A' on rank 0, but "
            "with data 'B' on rank 1; every rank must pass views of the same window buffers to "
            "a builtin collective");
}

}  // namespace

namespace {

// Sub-windows of one byte buffer: data at byte 0, the signal at byte
// `signal_element * 4`. Disjoint spans are two distinct windows; overlapping
// ones are refused at compile time like views of one buffer.
pl::HostFunction sub_window_allreduce(std::int64_t signal_element) {
  const auto per_rank = pl::jit::orchestration_for("per_rank_sub", aliased);
  return pl::jit::host("sub_windows", {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                       [per_rank, signal_element](pl::Value x) {
                         auto bytes = pld::alloc_window_buffer("bytes", ROW * 4 + NR * 4);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           per_rank(xr, pld::window(bytes, {1, ROW}, pl::FP32, 0),
                                    pld::window(bytes, {NR, 1}, pl::INT32, signal_element),
                                    pl::device(r));
                         });
                       });
}

TEST(CollectiveMatch, DisjointSubWindowsOfOneBufferAreDistinctWindows) {
  for (std::int64_t P : {2, 3, 5}) {
    EXPECT_EQ(run_error(sub_window_allreduce(ROW), P), "ran without error") << "P=" << P;
  }
}

TEST(CollectiveMatch, OverlappingSubWindowsAreAnError) {
  for (std::int64_t P : {2, 3, 5}) {
    EXPECT_EQ(run_error(sub_window_allreduce(ROW - 1), P),
              "compile error: function 'aliased' (incore), op pld.tensor.allreduce: the data and "
              "the signal are views of one window buffer 'bytes'; a collective's windows must be "
              "distinct buffers")
        << "P=" << P;
  }
}

}  // namespace

namespace {

// Every rank passes a sub-window at its own offset: a collective reaches a
// peer's window through this rank's view, so rank 0 would read rank 1's
// buffer at rank 0's offset — a silent wrong sum without the check.
TEST(CollectiveMatch, SubWindowsAtPerRankOffsetsAreAMismatch) {
  const auto per_rank = pl::jit::orchestration_for("per_rank_offsets", aliased);
  const pl::HostFunction host = pl::jit::host(
      "offsets", {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32))}, [per_rank](pl::Value x) {
        auto data = pld::alloc_window_buffer("data", {NR, ROW}, pl::FP32);
        auto sig = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr = x[r];
          per_rank(xr, pld::window(data, {1, ROW}, pl::FP32, r * ROW),
                   pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
  for (std::int64_t P : {2, 3, 5}) {
    const std::string error = run_error(host, P);
    EXPECT_EQ(error.substr(0, error.find(':')), "run error") << "P=" << P;
    EXPECT_NE(error.find("collective mismatch on signal 'sig': call #1"), std::string::npos)
        << error;
    EXPECT_NE(error.find("data 'data' at byte "), std::string::npos) << error;
  }
}

}  // namespace
