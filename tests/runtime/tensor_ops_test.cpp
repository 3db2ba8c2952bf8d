// tensor_ops_test.cpp — the tensor-level ops (issue 12, item 6; PyPTO's
// pl.tensor.slice / assemble / add on tensors and windows): y = x + 1 per
// rank with no tile (PyPTO's rank_slice_dispatch), a window sliced, read,
// assembled into and cast-added into (window_slice_incore), shapes no tile
// could have ([3, 5] INT32, [1, 17] FP32), slices of windows as put
// targets, remote-load sources and signal cells (an allgather by hand), at
// P = 2, 3, 5, race-checked; and the errors, each by its exact text.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");

// host(x [NR, R, C] T, y [NR, R, C] U) -> kernel(x[r], y[r], window [R, 2C] T, signal [NR, 1]).
using Body = std::function<void(pl::Value&, pl::Value&, pl::Value&, pl::Value&)>;
pl::HostFunction program(const std::string& name, std::int64_t R, std::int64_t C, pl::DType in,
                         pl::DType out, const Body& body) {
  const auto kernel = pl::jit::incore(
      name,
      {pl::In("x", pl::Tensor({R, C}, in)), pl::Out("y", pl::Tensor({R, C}, out)),
       pl::InOut("w", pld::DistributedTensor({R, 2 * C}, in)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [body](pl::Value x, pl::Value y, pl::Value w, pl::Value signal) { body(x, y, w, signal); });
  const auto orch = pl::jit::orchestration_for(name + "_rank", kernel);
  return pl::jit::host(
      name, {pl::In("x", pl::Tensor({NR, R, C}, in)), pl::Out("y", pl::Tensor({NR, R, C}, out))},
      [=](pl::Value x, pl::Value y) {
        auto w = pld::alloc_window_buffer("w", {R, 2 * C}, in);
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(x[r], y[r], pld::window(w, {R, 2 * C}, in), pld::window(signal, {NR, 1}, pl::INT32),
               pl::device(r));
        });
      });
}

struct Io {
  anyp::HostTensor x, y;
};

Io run(const pl::HostFunction& host, std::int64_t P, std::int64_t R, std::int64_t C, pl::DType in,
       pl::DType out) {
  Io io{anyp::HostTensor::zeros({P, R, C}, in), anyp::HostTensor::zeros({P, R, C}, out)};
  for (std::int64_t i = 0; i < io.x.numel(); ++i) io.x.set(i, static_cast<double>(i % 23) - 7);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  host.compile({io.x, io.y}, config)(io.x, io.y);
  return io;
}

class TensorOps : public testing::TestWithParam<std::int64_t> {};

TEST_P(TensorOps, PlusOneWithoutATile) {
  const std::int64_t P = GetParam();
  for (const auto& [R, C, dtype] : {std::tuple{3, 5, pl::INT32}, std::tuple{1, 17, pl::FP32}}) {
    const Io io = run(program("plus_one", R, C, dtype, dtype,
                              [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                                pl::tensor::add(y, x, 1);
                              }),
                      P, R, C, dtype, dtype);
    for (std::int64_t i = 0; i < io.x.numel(); ++i) ASSERT_EQ(io.y.get(i), io.x.get(i) + 1) << i;
  }
}

TEST_P(TensorOps, AWindowSlicedAssembledAndCastAdded) {
  // w = [x | 2x] by assemble; y = (right half) + (left half) read through
  // slices = 3x; then an FP16 copy of y cast back to FP32 adds exactly.
  const std::int64_t P = GetParam();
  constexpr std::int64_t R = 4, C = 6;
  const Io io = run(program("window_slices", R, C, pl::FP32, pl::FP32,
                            [](pl::Value& x, pl::Value& y, pl::Value& w, pl::Value&) {
                              pl::tensor::assemble(w, x, {0, 0});
                              pl::Value right = pl::tensor::slice(w, {0, C}, {R, C});
                              pl::tensor::mul(right, x, 2);
                              pl::tensor::add(y, pl::tensor::slice(w, {0, 0}, {R, C}), right);
                              // A row of the window, one element in: [1, C - 1].
                              pl::Value row = pl::tensor::slice(w, {2, 1}, {1, C - 1});
                              pl::tensor::maximum(row, row, 100.0);
                              pl::tensor::assemble(y, row, {3, 0});
                            }),
                    P, R, C, pl::FP32, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < R; ++i)
      for (std::int64_t j = 0; j < C; ++j) {
        const double want = i == 3 && j < C - 1 ? 100.0 : 3 * io.x.at({r, i, j});
        ASSERT_EQ(io.y.at({r, i, j}), want) << r << " " << i << " " << j;
      }
}

TEST_P(TensorOps, ACastThroughACopy) {
  const std::int64_t P = GetParam();
  const Io io = run(program("cast_copy", 2, 8, pl::INT32, pl::FP16,
                            [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                              pl::tensor::copy(y, x);
                              pl::tensor::add(y, y, 0.5);
                            }),
                    P, 2, 8, pl::INT32, pl::FP16);
  for (std::int64_t i = 0; i < io.x.numel(); ++i) ASSERT_EQ(io.y.get(i), io.x.get(i) + 0.5) << i;
}

TEST_P(TensorOps, SlicesOfWindowsAsPutTargetsLoadSourcesAndSignals) {
  // An allgather by hand through slices: rank r puts x into the left half
  // of row r of every rank's [P, 2C] window and raises cell {r, 0} (a
  // one-cell slice of the signal) there; every rank waits on each cell
  // through its own slice, then reads the rows back through a slice.
  const std::int64_t P = GetParam();
  const std::int64_t C = 8;  // a tile row: 32 B
  const auto kernel = pl::jit::incore(
      "sliced_gather",
      {pl::In("x", pl::Tensor({1, C}, pl::FP32)), pl::Out("y", pl::Tensor({NR, C}, pl::FP32)),
       pl::InOut("w", pld::DistributedTensor({NR, 2 * C}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [C](pl::Value x, pl::Value y, pl::Value w, pl::Value signal) {
        const pld::CommCtx ctx = pld::get_comm_ctx(w);
        const pl::Scalar me = pld::rank(ctx), n = pld::nranks(ctx);
        const pl::Value my_row = pl::tensor::slice(w, {me, 0}, {1, C});
        const pl::Value my_cell = pl::tensor::slice(signal, {me, 0}, {1, 1});
        pl::range(n, [&](pl::Scalar p) {
          pld::tensor::put(my_row, p, x);
          pld::system::notify(my_cell, p, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
        });
        pl::range(n, [&](pl::Scalar p) {
          pld::system::wait(pl::tensor::slice(signal, {p, 0}, {1, 1}), {0, 0}, 1, pld::WaitCmp::Ge);
        });
        // The gathered rows, read through a slice of the own window
        // (remote_load with the own rank as the peer).
        const pl::Value left_half = pl::tensor::slice(w, {0, 0}, {NR, C});
        y = pl::store(pld::tile::remote_load(left_half, me, {0, 0}, {NR, C}), {0, 0}, y);
      });
  const auto orch = pl::jit::orchestration_for("sliced_gather_rank", kernel);
  const pl::HostFunction host =
      pl::jit::host("sliced_gather",
                    {pl::In("x", pl::Tensor({NR, 1, C}, pl::FP32)),
                     pl::Out("y", pl::Tensor({NR, NR, C}, pl::FP32))},
                    [orch, C](pl::Value x, pl::Value y) {
                      auto w = pld::alloc_window_buffer("w", {NR, 2 * C}, pl::FP32);
                      auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        orch(x[r], y[r], pld::window(w, {NR, 2 * C}, pl::FP32),
                             pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
                      });
                    });
  anyp::InputGenerator gen(81);
  const anyp::HostTensor x = gen.uniform({P, 1, C});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, P, C}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  host.compile({x, y}, config)(x, y);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t k = 0; k < P; ++k)
      for (std::int64_t j = 0; j < C; ++j) ASSERT_EQ(y.at({r, k, j}), x.at({k, 0, j}));
}

INSTANTIATE_TEST_SUITE_P(P, TensorOps, testing::Values(2, 3, 5));

std::string compile_failure(const pl::HostFunction& host, std::int64_t R, std::int64_t C,
                            pl::DType in, pl::DType out) {
  try {
    run(host, 2, R, C, in, out);
    return "ran without error";
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
}

TEST(TensorOpErrors, EachMistakeByItsMessage) {
  auto probe = [](const Body& body, pl::DType out = pl::FP32) {
    return compile_failure(program("probe", 2, 8, pl::FP32, out, body), 2, 8, pl::FP32, out);
  };
  EXPECT_EQ(probe([](pl::Value&, pl::Value& y, pl::Value& w, pl::Value&) {
              pl::tensor::copy(y, pl::tensor::slice(w, {0, 10}, {2, 8}));
            }),
            "compile error: function 'probe' (incore), op pl.tensor.slice: region out of bounds "
            "in dim 1: offset 10 + extent 8 exceeds the tensor 'w' [2, 16]");
  EXPECT_EQ(probe([](pl::Value&, pl::Value& y, pl::Value& w, pl::Value&) {
              const pl::Scalar far = pld::rank(pld::get_comm_ctx(w)) + 9;
              pl::tensor::copy(y, pl::tensor::slice(w, {0, far}, {2, 8}));
            }),
            "run error: rank 0 (device 0), function 'probe', op pl.tensor.slice: region out of "
            "bounds: offsets [0, 9] + shape [2, 8] exceeds the tensor [2, 16] (rank 0's window "
            "'w') in dim 1");
  EXPECT_EQ(probe([](pl::Value& x, pl::Value&, pl::Value&, pl::Value&) {
              pl::tensor::add(pl::tensor::slice(x, {0, 0}, {1, 8}), x, 1.0);
            }),
            "compile error: function 'probe' (incore): pl.tensor.add writes parameter 'x' "
            "(through a copy or view of its handle), which is declared pl::In; declare it "
            "pl::Out or pl::InOut");
  EXPECT_EQ(
      probe([](pl::Value&, pl::Value& y, pl::Value& w, pl::Value&) { pl::tensor::copy(y, w); }),
      "compile error: function 'probe' (incore), op pl.tensor.copy: the source [2, 16] and "
      "the destination [2, 8] differ; copy takes one shape (pl::tensor::slice the larger "
      "one)");
  EXPECT_EQ(
      probe([](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) { pl::tensor::add(y, x, x); },
            pl::INT32),
      "compile error: function 'probe' (incore): pl.tensor.add: dtype mismatch: destination "
      "Tensor[2, 8] INT32, operands Tensor[2, 8] FP32 and Tensor[2, 8] FP32; convert with "
      "pl::tensor::copy into a tensor of the other dtype");
  EXPECT_EQ(probe([](pl::Value&, pl::Value&, pl::Value& w, pl::Value& signal) {
              pl::Value half = pl::tensor::slice(w, {0, 0}, {2, 8});
              half = pld::tensor::allreduce(half, signal);
            }),
            "run error: rank 0 (device 0), function 'probe', op pld.tensor.allreduce: the data "
            "is a pl::tensor::slice; a builtin collective takes whole views (pass a pld::window "
            "view, a sub-window at an offset if need be)");
}

TEST(TensorOpErrors, AnIntegerDivisionByZeroIsARunError) {
  const std::string error = compile_failure(
      program("divide", 1, 8, pl::INT32, pl::INT32,
              [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) { pl::tensor::div(y, x, x); }),
      1, 8, pl::INT32, pl::INT32);
  EXPECT_EQ(error,
            "run error: rank 0 (device 0), function 'divide', op pl.tensor.div: division by zero: "
            "element 7 of the second operand is 0");
}

}  // namespace
