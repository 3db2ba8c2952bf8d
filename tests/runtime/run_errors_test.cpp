// run_errors_test.cpp — run-time errors (anyp::RunError, whole what()
// compared): the seed's P > 2 pitfall, a peer computed as (r - 1) % P, which
// C++ truncates to -1 at rank 0 (the error names rank, device, function, op
// and value, with a hint); other out-of-range peers; regions and signal cells
// out of bounds at run time; and arguments that do not match the compiled
// program. A failing rank stops the run at once; the others, parked, do not
// turn it into a hang or a deadlock report.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

using KernelBody =
    std::function<void(pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal)>;

std::vector<pl::Param> kernel_params() {
  return {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
          pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
          pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
          pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
          pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
}

// Step 07's shape (x, y [NR, 1, SIZE]; windows src, dst, signal) with the
// kernel `body`, named `kernel_name`.
pl::HostFunction ring_program(const std::string& kernel_name, const KernelBody& body) {
  const pl::Function kernel = pl::jit::incore(kernel_name, kernel_params(), body);
  const pl::Function per_rank =
      pl::jit::orchestration("per_rank", kernel_params(),
                             [kernel](pl::Value x, pl::Value y, pl::Value src, pl::Value dst,
                                      pl::Value signal) { kernel(x, y, src, dst, signal); });
  return pl::jit::host(
      "ring",
      {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        auto src_buf = pld::alloc_window_buffer("src_buf", {1, SIZE}, pl::FP32);
        auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, SIZE}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          auto src = pld::window(src_buf, {1, SIZE}, pl::FP32);
          auto dst = pld::window(dst_buf, {1, SIZE}, pl::FP32);
          auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
          pl::Value xr = x[r];
          pl::Value yr = y[r];
          per_rank(xr, yr, src, dst, signal, pl::device(r));
        });
      });
}

// Devices first_id, first_id + 1, ...: the message names rank and device.
// Compiles and runs `host` at P; returns the RunError's what() (a
// DeadlockError is reported as unexpected), or what happened instead.
std::string run_error(const pl::HostFunction& host, std::int64_t P, const anyp::RunConfig& config) {
  anyp::InputGenerator gen(6);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  try {
    host.compile({x, y}, config)(x, y);
  } catch (const anyp::DeadlockError& e) {
    return std::string("unexpected deadlock: ") + anyp_test::without_locations(e.what());
  } catch (const anyp::RunError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

std::string run_error(const pl::HostFunction& host, std::int64_t P) {
  return run_error(host, P, anyp::RunConfig::for_world_size(P));
}

const std::string kNegativePeerHint =
    "\n  hint: a negative peer usually comes from (r - 1) % P, which C++ truncates to -1 at r = 0; "
    "write (r + P - 1) % P";

// ---- the negative peer --------------------------------------------------------------------------

// Step 06's put kernel with the pitfall: left = (r - 1) % P, push into left.
void put_to_bad_left(pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
  auto ctx = pld::get_comm_ctx(src);
  pl::Scalar my_rank = pld::rank(ctx);
  pl::Scalar nranks = pld::nranks(ctx);
  pl::Scalar left = (my_rank - 1) % nranks;  // -1 at rank 0
  src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
  pld::tensor::put(dst, left, src, AtomicType::None);
  pld::system::notify(signal, left, {0, 0}, 1, NotifyOp::AtomicAdd);
  pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
  y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
}

TEST(RunErrors, NegativePeerInAPut) {
  const pl::HostFunction host = ring_program("put_left", put_to_bad_left);
  EXPECT_EQ(run_error(host, 3),
            "run error: rank 0 (device 0), function 'put_left', op pld.tensor.put: peer -1 is out "
            "of range [0, 3)\n  hint: a negative peer usually comes from (r - 1) % P, which C++ "
            "truncates to -1 at r = 0; write (r + P - 1) % P");
  // The same P on other devices is another plan (the cache keys the list).
  EXPECT_EQ(run_error(host, 3, anyp::RunConfig::for_world_size(3, 20)),
            "run error: rank 0 (device 20), function 'put_left', op pld.tensor.put: peer -1 is "
            "out of range [0, 3)" +
                kNegativePeerHint);
  for (std::int64_t P : {2, 8}) {
    EXPECT_EQ(run_error(host, P, anyp::RunConfig::for_world_size(P, 10)),
              "run error: rank 0 (device 10), function 'put_left', op pld.tensor.put: peer -1 is "
              "out of range [0, " +
                  std::to_string(P) + ")" + kNegativePeerHint)
        << "P=" << P;
  }
}

// The get kernel with the pitfall: notify left = (r - 1) % P.
void notify_bad_left(pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
  auto ctx = pld::get_comm_ctx(src);
  pl::Scalar my_rank = pld::rank(ctx);
  pl::Scalar nranks = pld::nranks(ctx);
  pl::Scalar left = (my_rank - 1) % nranks;  // -1 at rank 0
  pl::Scalar right = (my_rank + 1) % nranks;
  src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
  pld::system::notify(signal, left, {0, 0}, 1, NotifyOp::AtomicAdd);
  pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
  pld::tensor::get(dst, right, src);
  y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
}

TEST(RunErrors, NegativePeerInANotify) {
  const pl::HostFunction host = ring_program("get_left", notify_bad_left);
  for (std::int64_t P : {2, 3, 8}) {
    EXPECT_EQ(run_error(host, P, anyp::RunConfig::for_world_size(P, 4)),
              "run error: rank 0 (device 4), function 'get_left', op pld.system.notify: peer -1 is "
              "out of range [0, " +
                  std::to_string(P) + ")" + kNegativePeerHint)
        << "P=" << P;
  }
}

// Under every schedule the failure is rank 0's, never a deadlock report.
TEST(RunErrors, NegativePeerUnderDeterministicSchedules) {
  const pl::HostFunction host = ring_program("get_left", notify_bad_left);
  for (std::uint64_t seed : {0u, 1u, 2u, 3u}) {
    anyp::RunConfig config = anyp::RunConfig::for_world_size(5);
    config.deterministic = true;
    config.schedule_seed = seed;
    config.preempt_budget = 2;
    EXPECT_EQ(run_error(host, 5, config),
              "run error: rank 0 (device 0), function 'get_left', op pld.system.notify: peer -1 is "
              "out of range [0, 5)" +
                  kNegativePeerHint)
        << "seed " << seed;
  }
}

// A peer past the end (r + 1 without % P) has no hint. (dst is never
// written, so the reads race with nothing.)
TEST(RunErrors, PeerPastTheEnd) {
  const pl::HostFunction host = ring_program(
      "unwrapped", [](pl::Value, pl::Value y, pl::Value src, pl::Value dst, pl::Value) {
        pl::Scalar right = pld::rank(pld::get_comm_ctx(src)) + 1;
        y = pl::store(pld::tile::remote_load(dst, right, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  EXPECT_EQ(run_error(host, 3),
            "run error: rank 2 (device 2), function 'unwrapped', op pld.tile.remote_load: peer 3 "
            "is out of range [0, 3)");
}

// ---- bounds checked at run time ----------------------------------------------------------------

// Rank r loads columns [32 r, 32 r + 32): past the end on rank 2.
TEST(RunErrors, RegionOutOfBoundsWithARuntimeOffset) {
  const pl::HostFunction host =
      ring_program("shifted", [](pl::Value x, pl::Value y, pl::Value src, pl::Value, pl::Value) {
        pl::Scalar column = pld::rank(pld::get_comm_ctx(src)) * 32;
        y = pl::store(pl::load(x, {0, column}, {1, 32}), {0, 0}, y);
      });
  EXPECT_EQ(run_error(host, 2), "ran without error");
  EXPECT_EQ(
      run_error(host, 3),
      "run error: rank 2 (device 2), function 'shifted', op pl.load: region out of bounds: offsets "
      "[0, 64] + shape [1, 32] exceeds the source [1, 64] (host tensor 'x') in dim 1");
}

// An offset near 2^63: offset + extent would overflow, and the bounds check
// must not be fooled into letting the access through.
TEST(RunErrors, HugeOffsetIsOutOfBoundsNotAnOverflow) {
  const pl::HostFunction host =
      ring_program("huge", [](pl::Value x, pl::Value y, pl::Value src, pl::Value, pl::Value) {
        pl::Scalar h = pl::cast(pld::rank(pld::get_comm_ctx(src)), pl::INT64) +
                       std::int64_t{4611686018427387904};  // 2^62 (+ rank)
        pl::Scalar offset = h + (h - 8);                   // 2^63 - 8
        y = pl::store(pl::load(x, {0, offset}, {1, 16}), {0, 0}, y);
      });
  EXPECT_EQ(run_error(host, 2,
                      [] {
                        anyp::RunConfig c = anyp::RunConfig::for_world_size(2);
                        c.workers = 1;
                        return c;
                      }()),
            "run error: rank 0 (device 0), function 'huge', op pl.load: region out of bounds: "
            "offsets [0, 9223372036854775800] + shape [1, 16] exceeds the source [1, 64] (host "
            "tensor 'x') in dim 1");
}

// A notify value must fit the INT32 cell.
TEST(RunErrors, NotifyValueOutOfInt32Range) {
  const pl::HostFunction host =
      ring_program("big_notify", [](pl::Value, pl::Value, pl::Value, pl::Value, pl::Value signal) {
        pld::system::notify(signal, 0, {0, 0}, std::int64_t{1} << 32, NotifyOp::AtomicAdd);
      });
  EXPECT_EQ(
      run_error(host, 2,
                [] {
                  anyp::RunConfig c = anyp::RunConfig::for_world_size(2);
                  c.workers = 1;
                  return c;
                }()),
      "run error: rank 0 (device 0), function 'big_notify', op pld.system.notify: notify value "
      "4294967296 does not fit the INT32 signal cell (range [-2147483648, 2147483647])");
}

// Rank r notifies cell {r, 0} of a [1, 1] signal: only rank 0's cell exists.
TEST(RunErrors, SignalCellOutOfBounds) {
  const pl::HostFunction host = ring_program(
      "bad_cell", [](pl::Value, pl::Value, pl::Value src, pl::Value, pl::Value signal) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(src));
        pld::system::notify(signal, 0, {r, 0}, 1, NotifyOp::AtomicAdd);
      });
  EXPECT_EQ(run_error(host, 2),
            "run error: rank 1 (device 1), function 'bad_cell', op pld.system.notify: region out "
            "of bounds: offsets [1, 0] + shape [1, 1] exceeds the signal [1, 1] (rank 0's window "
            "'signal_buf') in dim 0");
}

TEST(RunErrors, ScalarDivisionByZero) {
  const pl::HostFunction host =
      ring_program("div0", [](pl::Value, pl::Value, pl::Value src, pl::Value, pl::Value signal) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(src));
        pl::Scalar peer = 100 / (r - r);
        pld::system::notify(signal, peer, {0, 0}, 1, NotifyOp::AtomicAdd);
      });
  EXPECT_EQ(
      run_error(host, 1),
      "run error: rank 0 (device 0), function 'div0', op scalar div: 100 / 0 divides by zero");
}

// ---- arguments that do not fit the compiled program
// ----------------------------------------------

TEST(RunErrors, ArgumentsMustMatchTheCompiledProgram) {
  const pl::HostFunction host =
      ring_program("copy", [](pl::Value x, pl::Value y, pl::Value, pl::Value, pl::Value) {
        y = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  anyp::HostTensor x2 = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor y2 = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor x3 = anyp::HostTensor::zeros({3, 1, SIZE}, pl::FP32);
  anyp::HostTensor i2 = anyp::HostTensor::zeros({2, 1, SIZE}, pl::INT32);
  const anyp::CompiledProgram compiled = host.compile({x2, y2}, anyp::RunConfig::for_world_size(2));
  auto message = [&](const std::vector<anyp::ArgRef>& args) -> std::string {
    try {
      compiled.run(args);
    } catch (const anyp::RunError& e) {
      return anyp_test::without_locations(e.what());
    }
    return "ran without error";
  };
  EXPECT_EQ(message({x2, y2}), "ran without error");
  EXPECT_EQ(message({x3, y2}),
            "run error: argument 'x' is [3, 1, 64] FP32, but the program was compiled for [2, 1, "
            "64] FP32; compile again for these arguments");
  EXPECT_EQ(message({x2, i2}),
            "run error: argument 'y' is [2, 1, 64] INT32, but the program was compiled for [2, 1, "
            "64] FP32; compile again for these arguments");
  EXPECT_EQ(message({x2}), "run error: 'ring' takes 2 arguments, got 1");
  EXPECT_EQ(message({x2, 5}), "run error: argument 'y' must be a tensor");
}

// Scalar host arguments are bound at compile time: a run with another value
// is refused rather than silently using the compiled one.
TEST(RunErrors, ScalarArgumentMustMatchTheCompiledValue) {
  const auto add_k = pl::jit::incore(
      "add_k",
      {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
       pl::In("k", pl::INT32)},
      [](pl::Value x, pl::Value y, pl::Scalar k) {
        y = pl::store(pl::add(pl::load(x, {0, 0}, {1, SIZE}), pl::cast(k, pl::FP32)), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank",
      {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
       pl::In("k", pl::INT32)},
      [add_k](pl::Value x, pl::Value y, pl::Scalar k) { add_k(x, y, k); });
  const pl::HostFunction host =
      pl::jit::host("add_scalar",
                    {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                     pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32)), pl::In("k", pl::INT32)},
                    [per_rank](pl::Value x, pl::Value y, pl::Scalar k) {
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        pl::Value xr = x[r];
                        pl::Value yr = y[r];
                        per_rank(xr, yr, k, pl::device(r));
                      });
                    });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  const anyp::CompiledProgram three = host.compile({x, y, 3}, anyp::RunConfig::for_world_size(2));
  three(x, y, 3);
  EXPECT_EQ(y.at({1, 0, 7}), 3.0);
  try {
    three(x, y, 4);
    ADD_FAILURE() << "no RunError";
  } catch (const anyp::RunError& e) {
    EXPECT_EQ(std::string(anyp_test::without_locations(e.what())),
              "run error: scalar argument 'k' is 4, but the program was compiled with 3; scalar "
              "host arguments are bound at compile time, so compile again");
  }
  host.compile({x, y, 4}, anyp::RunConfig::for_world_size(2))(x, y, 4);
  EXPECT_EQ(y.at({1, 0, 7}), 4.0);
}

}  // namespace
