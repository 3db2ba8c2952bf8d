// created_tensors_test.cpp — pl::create_tensor and the value-returning
// tensor ops (issue 24, section D): a tensor accumulated in a loop by
// `acc = pl::tensor::add(acc, x)` (assignment writes a created tensor),
// copies that are values, created tensors passed to kernels and cast, one
// slot per block in a multi-block kernel with pld::tensor::remote_store
// (PyPTO's tensor-level remote store) into the right neighbour, at
// P = 2 ... 8, race-checked; the printed IR; and each refusal by its exact
// text.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t R = 3, C = 5;

using OrchBody = std::function<void(pl::Value&, pl::Value&)>;

// host(x [NR, R, C], y [NR, R, C]) -> orch(x[r], y[r]) with `body`.
pl::HostFunction per_rank(const std::string& name, const OrchBody& body) {
  const auto orch = pl::jit::orchestration(
      name, {pl::In("x", pl::Tensor({R, C}, pl::FP32)), pl::Out("y", pl::Tensor({R, C}, pl::FP32))},
      [body](pl::Value x, pl::Value y) { body(x, y); });
  return pl::jit::host(name + "_host",
                       {pl::In("x", pl::Tensor({NR, R, C}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, R, C}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(),
                                   [&](pl::Scalar r) { orch(x[r], y[r], pl::device(r)); });
                       });
}

struct Io {
  anyp::HostTensor x, y;
};

Io run(const pl::HostFunction& host, std::int64_t P) {
  Io io{anyp::HostTensor::zeros({P, R, C}, pl::FP32), anyp::HostTensor::zeros({P, R, C}, pl::FP32)};
  for (std::int64_t i = 0; i < io.x.numel(); ++i) io.x.set(i, static_cast<double>(i % 13) - 4.5);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  host.compile({io.x, io.y}, config)(io.x, io.y);
  return io;
}

std::string failure(const pl::HostFunction& host) {
  try {
    run(host, 2);
    return "ran without error";
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
}

class CreatedTensors : public testing::TestWithParam<std::int64_t> {};

TEST_P(CreatedTensors, AccumulatedInALoopByAssignment) {
  // acc = 0; 4 times acc = acc + x; y = acc * 0.5 - x (= x, exactly).
  const auto host = per_rank("accumulate", [](pl::Value& x, pl::Value& y) {
    pl::Value acc = pl::create_tensor({R, C}, pl::FP32);
    pl::range(4, [&](pl::Scalar) { acc = pl::tensor::add(acc, x); });
    pl::tensor::copy(y, pl::tensor::sub(pl::tensor::mul(acc, 0.5), x));
    pl::tensor::add(y, y, x);  // y = 2x
  });
  const Io io = run(host, GetParam());
  for (std::int64_t i = 0; i < io.x.numel(); ++i) ASSERT_EQ(io.y.get(i), 2 * io.x.get(i)) << i;
}

TEST_P(CreatedTensors, ACopyIsAValueAndACastIsANewTensor) {
  // b = a copies: writing b leaves a. y = a + (int) b, with b = a + 0.75.
  const auto host = per_rank("copies", [](pl::Value& x, pl::Value& y) {
    pl::Value a = pl::tensor::add(x, 0.0);
    pl::Value b = a;
    b = pl::tensor::add(b, 0.75);
    pl::Value truncated = pl::tensor::cast(pl::tensor::cast(b, pl::INT32), pl::FP32);
    pl::tensor::add(y, a, truncated);
  });
  const Io io = run(host, GetParam());
  for (std::int64_t i = 0; i < io.x.numel(); ++i) {
    const double a = io.x.get(i);
    ASSERT_EQ(io.y.get(i), a + std::trunc(a + 0.75)) << i;
  }
}

TEST_P(CreatedTensors, OneSlotPerBlockAndATensorRemoteStore) {
  // Every block b of rank r makes its own [1, C] tensor x[b] + 100 r and
  // remote-stores it into row b of the right neighbour's window (row r's
  // block of rows), then a one-block kernel signals the neighbour.
  const std::int64_t P = GetParam();
  const auto push = pl::jit::incore(
      "push",
      {pl::In("x", pl::Tensor({R, C}, pl::FP32)),
       pl::InOut("w", pld::DistributedTensor({NR * R, C}, pl::FP32))},
      [](pl::Value x, pl::Value w) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(w));
        const pl::Scalar b = pl::get_block_idx();
        pl::Value mine = pl::create_tensor({1, C}, pl::FP32);
        mine = pl::tensor::add(pl::tensor::slice(x, {b, 0}, {1, C}), pl::cast(me * 100, pl::FP32));
        pld::tensor::remote_store(mine, w, (me + 1) % pld::nranks(pld::get_comm_ctx(w)),
                                  {me * R + b, 0});
      });
  const auto hand_over = pl::jit::incore(
      "hand_over", {pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value signal) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(signal));
        pld::system::notify(signal, (me + 1) % pld::nranks(pld::get_comm_ctx(signal)), {0, 0}, 1,
                            pld::NotifyOp::AtomicAdd);
        pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
      });
  const auto orch =
      pl::jit::orchestration("orch",
                             {pl::In("x", pl::Tensor({R, C}, pl::FP32)),
                              pl::InOut("w", pld::DistributedTensor({NR * R, C}, pl::FP32)),
                              pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32)),
                              pl::Out("y", pl::Tensor({NR * R, C}, pl::FP32))},
                             [&](pl::Value x, pl::Value w, pl::Value signal, pl::Value y) {
                               push(x, w, pl::blocks(R));
                               hand_over(signal);
                               pl::tensor::copy(y, w);
                             });
  const auto host =
      pl::jit::host("host",
                    {pl::In("x", pl::Tensor({NR, R, C}, pl::FP32)),
                     pl::Out("y", pl::Tensor({NR, NR * R, C}, pl::FP32))},
                    [&](pl::Value x, pl::Value y) {
                      auto w = pld::alloc_window_buffer("w", {NR * R, C}, pl::FP32);
                      auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        orch(x[r], pld::window(w, {NR * R, C}, pl::FP32),
                             pld::window(signal, {NR, 1}, pl::INT32), y[r], pl::device(r));
                      });
                    });
  auto x = anyp::HostTensor::zeros({P, R, C}, pl::FP32);
  auto y = anyp::HostTensor::zeros({P, P * R, C}, pl::FP32);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i));
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  host.compile({x, y}, config)(x, y);
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t left = (r + P - 1) % P;
    for (std::int64_t row = 0; row < P * R; ++row)
      for (std::int64_t c = 0; c < C; ++c) {
        const bool from_left = row / R == left;
        const double want = from_left ? x.at({left, row % R, c}) + 100.0 * left : 0.0;
        ASSERT_EQ(y.at({r, row, c}), want) << r << " " << row << " " << c;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(P, CreatedTensors, testing::Values(2, 3, 4, 5, 8));

TEST_P(CreatedTensors, AViewCarriedByALoopOfATensorMadeAboveIt) {
  // prev starts as row 0 of x and then names row i of t, made above the
  // loop: y row 0 = x row 0 + rows 0, 1 of t = x + 1 (iterations 1, 2).
  const auto host = per_rank("carried_view", [](pl::Value& x, pl::Value& y) {
    pl::Value t = pl::tensor::add(x, 1.0);
    pl::Value prev = pl::tensor::slice(x, {0, 0}, {1, C});
    pl::Value acc = pl::create_tensor({1, C}, pl::FP32);
    pl::range(3, [&](pl::Scalar i) {
      acc = pl::tensor::add(acc, prev);
      prev = pl::tensor::slice(t, {i, 0}, {1, C});
    });
    pl::tensor::copy(pl::tensor::slice(y, {0, 0}, {1, C}), acc);
  });
  const Io io = run(host, GetParam());
  for (std::int64_t p = 0; p < GetParam(); ++p) {
    for (std::int64_t c = 0; c < C; ++c) {
      const auto x = [&](std::int64_t row) {
        return static_cast<float>(io.x.get((p * R + row) * C + c));
      };
      const float expected = (x(0) + (x(0) + 1.0f)) + (x(1) + 1.0f);
      ASSERT_EQ(io.y.get(p * R * C + c), expected) << p << "," << c;
    }
  }
}

TEST(CreatedTensorsIr, PrintedAsCreateThenWrite) {
  const auto orch = pl::jit::orchestration(
      "orch",
      {pl::In("x", pl::Tensor({R, C}, pl::FP32)), pl::Out("y", pl::Tensor({R, C}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        pl::Value t = pl::tensor::mul(x, 2);
        t = pl::tensor::add(t, x);
        pl::tensor::copy(y, t);
      });
  EXPECT_EQ(anyp_test::without_locations(orch.ir_text()),
            "orchestration orch(%x: Tensor[3, 5] FP32 in, %y: Tensor[3, 5] FP32 out) {\n"
            "  %2 = pl.create_tensor [3, 5] : Tensor[3, 5] FP32\n"
            "  pl.tensor.mul %2 <- %x, 2\n"
            "  %3 = pl.create_tensor [3, 5] : Tensor[3, 5] FP32\n"
            "  pl.tensor.add %3 <- %2, %x\n"
            "  pl.tensor.copy %2 <- %3\n"
            "  pl.tensor.copy %y <- %2\n"
            "}\n");
}

TEST(CreatedTensorErrors, EachMistakeByItsMessage) {
  EXPECT_EQ(
      failure(per_rank("rename", [](pl::Value& x, pl::Value& y) { y = pl::tensor::add(x, 1.0); })),
      "compile error: function 'rename' (orchestration): assignment of a new tensor "
      "Tensor[3, 5] FP32 (made by pl.create_tensor or a value-returning tensor op) to a "
      "variable that names a parameter, a window view or a slice: that would only rename "
      "the variable, and the tensor it names would not change; write into it with "
      "pl.tensor.copy / pl.assemble, or give the new tensor a new variable");
  EXPECT_EQ(failure(per_rank("shapes",
                             [](pl::Value& x, pl::Value& y) {
                               pl::Value wide = pl::create_tensor({R, C + 1}, pl::FP32);
                               pl::tensor::copy(y, pl::tensor::add(wide, 1.0));
                               (void)x;
                             })),
            "compile error: function 'shapes' (orchestration), op pl.tensor.copy: the source "
            "[3, 6] and the destination [3, 5] differ; copy takes one shape (pl::tensor::slice "
            "the larger one)");
  // A view of a tensor the loop makes again each iteration, kept in a
  // variable from before the loop: the next iteration would zero it.
  EXPECT_EQ(failure(per_rank("kept",
                             [](pl::Value& x, pl::Value& y) {
                               pl::Value prev = pl::tensor::slice(x, {0, 0}, {1, C});
                               pl::range(3, [&](pl::Scalar) {
                                 pl::Value t = pl::tensor::add(x, 1.0);
                                 pl::tensor::copy(pl::tensor::slice(y, {0, 0}, {1, C}), prev);
                                 prev = pl::tensor::slice(t, {1, 0}, {1, C});
                               });
                             })),
            "compile error: function 'kept' (orchestration): assignment of a view of the "
            "tensor 'kept.%4' (pl.create_tensor inside a pl.range loop) to a variable from "
            "outside that loop: the loop makes that tensor again, zeroed and in the same "
            "storage, in every iteration, so the variable would not keep this iteration's "
            "elements; create the tensor above the loop, or copy the view into a tensor "
            "created above it (pl.tensor.copy / pl.assemble)");
  const auto host_create =
      pl::jit::host("host_create", {pl::In("x", pl::Tensor({NR, R, C}, pl::FP32))}, [](pl::Value) {
        pl::create_tensor({R, C}, pl::FP32);
      });
  auto x = anyp::HostTensor::zeros({2, R, C}, pl::FP32);
  try {
    host_create.compile({x}, anyp::RunConfig::for_world_size(2));
    FAIL() << "compiled";
  } catch (const anyp::CompileError& e) {
    EXPECT_EQ(anyp_test::without_locations(e.what()),
              "compile error: function 'host_create' (host): pl.create_tensor in the host "
              "function: a host function allocates window buffers (pld::alloc_window_buffer) or "
              "takes tensors as parameters; create the tensor in the orchestration function or "
              "kernel that uses it");
  }
}

}  // namespace
