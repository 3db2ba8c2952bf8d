// everyday_api_run_test.cpp — the everyday API of issue 7, run at P = 2, 3
// and 5 with exact results: pl::full / pl::zeros (constant, Dim and runtime
// values, every dtype), unary minus and compound assignment on scalars
// (wrapping, C division), tile operators, pl::range with a step (constant
// and runtime, both signs, in kernels and in the host), pl::reshape,
// sub-windows (pld::window with an offset) and the forwarding wrapper with
// named arguments. References are computed here by hand, never by anyp.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t N = 32;  // a row of 32 elements: a whole 32-byte unit even at INT8
constexpr std::int64_t kRanks[] = {2, 3, 5};

using Body = std::function<void(pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& scratch,
                                pl::Value& signal)>;

// host(x [NR, 1, N] xd, y [NR, y_shape...] yd) -> orchestration_for(kernel)
// -> kernel. One window buffer [2, N] xd is split into two sub-windows, data
// (row 0) and scratch (row 1); signal is [NR, 1] INT32. The host binds the
// wrapper's arguments by name, in an order of its own.
pl::HostFunction make_program(const std::string& name, pl::DType xd, pl::DType yd,
                              const pl::Shape& y_shape, const Body& body) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, N}, xd)), pl::Out("y", pl::Tensor(y_shape, yd)),
      pl::InOut("data", pld::DistributedTensor({1, N}, xd)),
      pl::InOut("scratch", pld::DistributedTensor({1, N}, xd)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const pl::Function kernel =
      pl::jit::incore(name + "_k", params,
                      [body](pl::Value x, pl::Value y, pl::Value data, pl::Value scratch,
                             pl::Value signal) { body(x, y, data, scratch, signal); });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  pl::Shape host_y = {NR};
  host_y.insert(host_y.end(), y_shape.begin(), y_shape.end());
  return pl::jit::host(
      name, {pl::In("x", pl::Tensor({NR, 1, N}, xd)), pl::Out("y", pl::Tensor(host_y, yd))},
      [=](pl::Value x, pl::Value y) {
        auto buf = pld::alloc_window_buffer("buf", {2, N}, xd);
        auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value yr = y[r];
          pl::Value xr = x[r];
          pl::Value scratch = pld::window(buf, {1, N}, xd, N);
          pl::Value data = pld::window(buf, {1, N}, xd, 0);
          pl::Value signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
          per_rank(pl::arg("signal") = signal, pl::arg("y") = yr, pl::arg("scratch") = scratch,
                   pl::arg("data") = data, pl::arg("x") = xr, pl::device(r));
        });
      });
}

anyp::RunConfig config(std::int64_t P) { return anyp::RunConfig::for_world_size(P); }

std::vector<std::int64_t> with_rows(std::int64_t P, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> s = {P};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

// Runs `program` on x; returns y.
anyp::HostTensor run(const pl::HostFunction& program, const anyp::HostTensor& x, pl::DType yd,
                     const std::vector<std::int64_t>& y_shape) {
  const std::int64_t P = x.shape()[0];
  anyp::HostTensor y = anyp::HostTensor::zeros(with_rows(P, y_shape), yd);
  program.compile({x, y}, config(P))(x, y);
  return y;
}

std::string run_error(const pl::HostFunction& program, std::int64_t P, pl::DType xd, pl::DType yd,
                      const std::vector<std::int64_t>& y_shape) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, N}, xd);
  anyp::HostTensor y = anyp::HostTensor::zeros(with_rows(P, y_shape), yd);
  try {
    program.compile({x, y}, config(P))(x, y);
  } catch (const anyp::RunError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "ran without error";
}

pl::Scalar my_rank(const pl::Value& window) { return pld::rank(pld::get_comm_ctx(window)); }

// ---- pl::full and pl::zeros ------------------------------------------------------------------

TEST(EverydayFull, FloatValuesConstantsDimsAndRuntimeScalars) {
  const pl::HostFunction program = make_program(
      "full_fp32", pl::FP32, pl::FP32, {4, N},
      [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
        pl::Scalar r = my_rank(data);
        y = pl::store(pl::full({1, N}, 2.5, pl::FP32), {0, 0}, y);
        y = pl::store(pl::add(pl::zeros({1, N}, pl::FP32), pl::load(x, {0, 0}, {1, N})), {1, 0}, y);
        y = pl::store(pl::add(pl::full({1, N}, r, pl::FP32), pl::full({1, N}, NR, pl::FP32)),
                      {2, 0}, y);
        y = pl::store(pl::full({1, N}, -7, pl::FP32), {3, 0}, y);
      });
  for (std::int64_t P : kRanks) {
    anyp::InputGenerator gen(3);
    const anyp::HostTensor x = gen.uniform({P, 1, N});
    const anyp::HostTensor y = run(program, x, pl::FP32, {4, N});
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) {
        EXPECT_EQ(y.at({r, 0, j}), 2.5);
        EXPECT_EQ(y.at({r, 1, j}), x.at({r, 0, j}));
        EXPECT_EQ(y.at({r, 2, j}), static_cast<double>(r + P));
        EXPECT_EQ(y.at({r, 3, j}), -7.0);
      }
    }
  }
}

TEST(EverydayFull, IntegerDtypesHoldTheirWholeRange) {
  constexpr std::int64_t big = (std::int64_t{1} << 40) + 3;
  const pl::HostFunction program8 =
      make_program("full_int8", pl::INT8, pl::INT8, {3, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::Scalar r = my_rank(data);
                     y = pl::store(pl::full({1, N}, -128, pl::INT8), {0, 0}, y);
                     y = pl::store(pl::full({1, N}, 127, pl::INT8), {1, 0}, y);
                     y = pl::store(pl::full({1, N}, r - 100, pl::INT8), {2, 0}, y);
                   });
  const pl::HostFunction program64 = make_program(
      "full_int64", pl::INT64, pl::INT64, {2, N},
      [](pl::Value&, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
        y = pl::store(pl::full({1, N}, big, pl::INT64), {0, 0}, y);
        y = pl::store(pl::full({1, N}, std::numeric_limits<std::int64_t>::min(), pl::INT64), {1, 0},
                      y);
      });
  const pl::HostFunction program16 =
      make_program("full_int16", pl::INT16, pl::INT16, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
                     y = pl::store(pl::full({1, N}, -32768, pl::INT16), {0, 0}, y);
                   });
  for (std::int64_t P : kRanks) {
    const anyp::HostTensor y8 =
        run(program8, anyp::HostTensor::zeros({P, 1, N}, pl::INT8), pl::INT8, {3, N});
    const anyp::HostTensor y64 =
        run(program64, anyp::HostTensor::zeros({P, 1, N}, pl::INT64), pl::INT64, {2, N});
    const anyp::HostTensor y16 =
        run(program16, anyp::HostTensor::zeros({P, 1, N}, pl::INT16), pl::INT16, {1, N});
    const auto* raw64 = reinterpret_cast<const std::int64_t*>(y64.data());
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) {
        EXPECT_EQ(y8.at({r, 0, j}), -128);
        EXPECT_EQ(y8.at({r, 1, j}), 127);
        EXPECT_EQ(y8.at({r, 2, j}), static_cast<double>(r - 100));
        EXPECT_EQ(raw64[(r * 2 + 0) * N + j], big);
        EXPECT_EQ(raw64[(r * 2 + 1) * N + j], std::numeric_limits<std::int64_t>::min());
        EXPECT_EQ(y16.at({r, 0, j}), -32768);
      }
    }
  }
}

// 0.1 rounds to nearest even once: FP16 0x2E66 = 0.0999755859375, BF16 0x3DCD = 0.10009765625.
TEST(EverydayFull, HalfPrecisionValuesRoundOnce) {
  for (pl::DType dtype : {pl::FP16, pl::BF16}) {
    const pl::HostFunction program =
        make_program(dtype == pl::FP16 ? "full_fp16" : "full_bf16", dtype, dtype, {1, N},
                     [dtype](pl::Value&, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
                       y = pl::store(pl::full({1, N}, 0.1, dtype), {0, 0}, y);
                     });
    const std::uint16_t bits = dtype == pl::FP16 ? 0x2E66 : 0x3DCD;
    for (std::int64_t P : kRanks) {
      const anyp::HostTensor y =
          run(program, anyp::HostTensor::zeros({P, 1, N}, dtype), dtype, {1, N});
      const auto* raw = reinterpret_cast<const std::uint16_t*>(y.data());
      for (std::int64_t k = 0; k < P * N; ++k) ASSERT_EQ(raw[k], bits) << "P=" << P;
    }
  }
}

// A runtime value that the tile's integer dtype cannot hold: rank 1's 128 (P = 2).
TEST(EverydayFull, RuntimeValueThatDoesNotFitIsARunError) {
  const pl::HostFunction program =
      make_program("full_overflow", pl::INT8, pl::INT8, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     y = pl::store(pl::full({1, N}, my_rank(data) + 127, pl::INT8), {0, 0}, y);
                   });
  EXPECT_EQ(run_error(program, 2, pl::INT8, pl::INT8, {1, N}),
            "run error: rank 1 (device 1), function 'full_overflow_k', op pl.full: the value 128 "
            "does not fit the INT8 tile (tiles are typed)");
}

// ---- scalar operators
// ----------------------------------------------------------------------------

TEST(EverydayScalars, UnaryMinusCompoundAssignmentWrapAndTruncatingDivision) {
  const pl::HostFunction program =
      make_program("scalars", pl::INT32, pl::INT32, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::Scalar r = my_rank(data);
                     pl::write(y, {0, 0}, -r);
                     pl::write(y, {0, 1}, +r);
                     pl::Scalar a = r;
                     a += 5;
                     a *= 3;
                     a -= 1;
                     pl::write(y, {0, 2}, a);
                     pl::Scalar b = -7 - r;
                     b /= 2;  // truncates toward zero, like C
                     pl::write(y, {0, 3}, b);
                     pl::Scalar c = -7 - r;
                     c %= 3;  // the sign of the dividend, like C
                     pl::write(y, {0, 4}, c);
                     pl::Scalar d = pl::cast(100, pl::INT8);
                     d += 100;  // computed in INT32, converted back to INT8: wraps to -56
                     pl::write(y, {0, 5}, d);
                     pl::Scalar e = std::numeric_limits<std::int32_t>::min();
                     e /= -1;  // INT32_MIN / -1 wraps
                     pl::write(y, {0, 6}, e);
                     pl::Scalar f = std::numeric_limits<std::int32_t>::max();
                     f += 1;
                     pl::write(y, {0, 7}, f);
                     pl::Scalar g = -(r + 1);
                     g = -g;
                     pl::write(y, {0, 8}, g);
                     pl::Scalar h = pl::cast(r, pl::FP32);
                     h *= 2.5;
                     h -= 0.5;
                     pl::write(y, {0, 9}, pl::cast(-h, pl::INT32));  // -(2.5 r - 0.5), truncated
                     pl::Scalar m = std::numeric_limits<std::int32_t>::min();
                     pl::write(y, {0, 10}, -m);  // -INT32_MIN wraps to itself
                   });
  for (std::int64_t P : kRanks) {
    const anyp::HostTensor y =
        run(program, anyp::HostTensor::zeros({P, 1, N}, pl::INT32), pl::INT32, {1, N});
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(y.at({r, 0, 0}), -r);
      EXPECT_EQ(y.at({r, 0, 1}), r);
      EXPECT_EQ(y.at({r, 0, 2}), (r + 5) * 3 - 1);
      EXPECT_EQ(y.at({r, 0, 3}), (-7 - r) / 2);
      EXPECT_EQ(y.at({r, 0, 4}), (-7 - r) % 3);
      EXPECT_EQ(y.at({r, 0, 5}), -56);
      EXPECT_EQ(y.at({r, 0, 6}), -2147483648.0);
      EXPECT_EQ(y.at({r, 0, 7}), -2147483648.0);
      EXPECT_EQ(y.at({r, 0, 8}), r + 1);
      EXPECT_EQ(y.at({r, 0, 9}), static_cast<std::int64_t>(-(2.5 * r - 0.5)));
      EXPECT_EQ(y.at({r, 0, 10}), -2147483648.0);
    }
  }
}

TEST(EverydayScalars, FloorDivAndFloorModRoundTowardNegativeInfinity) {
  const pl::HostFunction program =
      make_program("floor_ops", pl::INT32, pl::INT32, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::Scalar r = my_rank(data);
                     pl::write(y, {0, 0}, pl::floor_mod(r - 1, 3));   // Python's (r - 1) % 3
                     pl::write(y, {0, 1}, pl::floor_div(r - 7, 2));   // (r - 7) // 2
                     pl::write(y, {0, 2}, pl::floor_mod(r + 1, -3));  // the divisor's sign
                     pl::write(y, {0, 3}, pl::floor_div(-7 - r, -2));
                     pl::write(y, {0, 4}, pl::floor_mod(6, 3));
                   });
  // Python's values, spelled out: -1 % 3 == 2, -7 // 2 == -4, 1 % -3 == -2.
  const std::int64_t mod3[] = {2, 0, 1, 2, 0, 1, 2, 0};
  const std::int64_t half[] = {-4, -3, -3, -2, -2, -1, -1, 0};
  const std::int64_t mod_neg3[] = {-2, -1, 0, -2, -1, 0, -2, -1};
  const std::int64_t neg_half[] = {3, 4, 4, 5, 5, 6, 6, 7};
  for (std::int64_t P : kRanks) {
    ASSERT_LE(P, 8);
    const anyp::HostTensor y =
        run(program, anyp::HostTensor::zeros({P, 1, N}, pl::INT32), pl::INT32, {1, N});
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(y.at_int({r, 0, 0}), mod3[r]);
      EXPECT_EQ(y.at_int({r, 0, 1}), half[r]);
      EXPECT_EQ(y.at_int({r, 0, 2}), mod_neg3[r]);
      EXPECT_EQ(y.at_int({r, 0, 3}), neg_half[r]);
      EXPECT_EQ(y.at_int({r, 0, 4}), 0);
    }
  }
}

TEST(EverydayScalars, FloorDivByZeroIsARunErrorInPythonsSpelling) {
  const pl::HostFunction program =
      make_program("floor_zero", pl::INT32, pl::INT32, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::write(y, {0, 0}, pl::floor_div(5, my_rank(data)));
                   });
  EXPECT_EQ(run_error(program, 2, pl::INT32, pl::INT32, {1, N}),
            "run error: rank 0 (device 0), function 'floor_zero_k', op scalar floordiv: 5 // 0 "
            "divides by zero");
}

TEST(EverydayScalars, DivisionByZeroIsARunErrorNamingTheOp) {
  const pl::HostFunction program =
      make_program("div_zero", pl::INT32, pl::INT32, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::Scalar q = 5;
                     q /= my_rank(data);  // rank 0 divides by zero
                     pl::write(y, {0, 0}, q);
                   });
  EXPECT_EQ(run_error(program, 2, pl::INT32, pl::INT32, {1, N}),
            "run error: rank 0 (device 0), function 'div_zero_k', op scalar div: 5 / 0 divides by "
            "zero");
}

// ---- tile operators
// --------------------------------------------------------------------------------

TEST(EverydayTiles, OperatorsAreAddSubMul) {
  const pl::HostFunction program =
      make_program("tile_ops", pl::FP32, pl::FP32, {7, N},
                   [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::Tile t = pl::load(x, {0, 0}, {1, N});
                     pl::Tile two = pl::full({1, N}, 2, pl::FP32);
                     pl::Scalar rf = pl::cast(my_rank(data), pl::FP32);
                     y = pl::store(t + two, {0, 0}, y);
                     y = pl::store(t - 1, {1, 0}, y);
                     y = pl::store(2 * t, {2, 0}, y);
                     y = pl::store(-t, {3, 0}, y);
                     y = pl::store(t * rf, {4, 0}, y);
                     y = pl::store(3 + t, {5, 0}, y);
                     y = pl::store(t * t - two, {6, 0}, y);
                   });
  for (std::int64_t P : kRanks) {
    anyp::InputGenerator gen(5);
    const anyp::HostTensor x = gen.uniform({P, 1, N});
    const anyp::HostTensor y = run(program, x, pl::FP32, {7, N});
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) {
        const float v = static_cast<float>(x.at({r, 0, j}));
        EXPECT_EQ(y.at({r, 0, j}), v + 2.0f);
        EXPECT_EQ(y.at({r, 1, j}), v - 1.0f);
        EXPECT_EQ(y.at({r, 2, j}), v * 2.0f);
        EXPECT_EQ(y.at({r, 3, j}), -v);
        EXPECT_EQ(y.at({r, 4, j}), v * static_cast<float>(r));
        EXPECT_EQ(y.at({r, 5, j}), v + 3.0f);
        EXPECT_EQ(y.at({r, 6, j}), v * v - 2.0f);
      }
    }
  }
}

TEST(EverydayTiles, IntegerNegationWraps) {
  const pl::HostFunction program = make_program(
      "tile_neg", pl::INT32, pl::INT32, {2, N},
      [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
        y = pl::store(-pl::load(x, {0, 0}, {1, N}), {0, 0}, y);
        y = pl::store(-pl::full({1, N}, std::numeric_limits<std::int32_t>::min(), pl::INT32),
                      {1, 0}, y);
      });
  for (std::int64_t P : kRanks) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, N}, pl::INT32);
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t j = 0; j < N; ++j) x.set_at({r, 0, j}, static_cast<double>(r * N + j - 40));
    const anyp::HostTensor y = run(program, x, pl::INT32, {2, N});
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) {
        EXPECT_EQ(y.at({r, 0, j}), -static_cast<double>(r * N + j - 40));
        EXPECT_EQ(y.at({r, 1, j}), -2147483648.0);
      }
    }
  }
}

// ---- pl::range with a step
// ------------------------------------------------------------------------

// Python's range, by hand: the values of range(start, stop, step).
std::vector<std::int64_t> py_range(std::int64_t start, std::int64_t stop, std::int64_t step) {
  std::vector<std::int64_t> out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}
std::int64_t sum(const std::vector<std::int64_t>& v) {
  std::int64_t s = 0;
  for (auto e : v) s += e;
  return s;
}

TEST(EverydayRange, ConstantAndRuntimeStepsOfBothSigns) {
  const pl::HostFunction program = make_program(
      "steps", pl::INT32, pl::INT32, {1, N},
      [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
        pl::Scalar r = my_rank(data);
        pl::Scalar up = 0, down = 0, rt_up = 0, rt_down = 0, none = 0, count = 0, last = 0;
        pl::range(1, 20, 3, [&](pl::Scalar i) { up += i; });
        pl::range(10, -1, -2, [&](pl::Scalar i) { down += i; });
        pl::range(0, 10, r + 1, [&](pl::Scalar i) { rt_up += i; });
        pl::range(9, -1, -(r + 1), [&](pl::Scalar i) { rt_down += i; });
        pl::range(0, 5, -1, [&](pl::Scalar) { none += 1; });
        pl::range(5, 0, 1, [&](pl::Scalar) { none += 1; });
        pl::range(0, 6, 2, [&](pl::Scalar i) {
          i = i + 100;  // writing the loop variable does not change the iterations
          count += 1;
          last = i;
        });
        pl::range(r, -3, -1, [&](pl::Scalar) { count += 10; });  // r + 3 iterations
        pl::write(y, {0, 0}, up);
        pl::write(y, {0, 1}, down);
        pl::write(y, {0, 2}, rt_up);
        pl::write(y, {0, 3}, rt_down);
        pl::write(y, {0, 4}, none);
        pl::write(y, {0, 5}, count);
        pl::write(y, {0, 6}, last);
      });
  for (std::int64_t P : kRanks) {
    const anyp::HostTensor y =
        run(program, anyp::HostTensor::zeros({P, 1, N}, pl::INT32), pl::INT32, {1, N});
    for (std::int64_t r = 0; r < P; ++r) {
      EXPECT_EQ(y.at({r, 0, 0}), sum(py_range(1, 20, 3)));    // 70
      EXPECT_EQ(y.at({r, 0, 1}), sum(py_range(10, -1, -2)));  // 30
      EXPECT_EQ(y.at({r, 0, 2}), sum(py_range(0, 10, r + 1)));
      EXPECT_EQ(y.at({r, 0, 3}), sum(py_range(9, -1, -(r + 1))));
      EXPECT_EQ(y.at({r, 0, 4}), 0);
      EXPECT_EQ(y.at({r, 0, 5}), 3 + 10 * static_cast<std::int64_t>(py_range(r, -3, -1).size()));
      EXPECT_EQ(y.at({r, 0, 6}), 104);
    }
  }
}

// Rank 1's step is r - 1 = 0 (P = 2); rank 0's is -1, over an empty range.
TEST(EverydayRange, RuntimeZeroStepIsARunErrorNamingTheOp) {
  const pl::HostFunction program =
      make_program("zero_step", pl::INT32, pl::INT32, {1, N},
                   [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value&, pl::Value&) {
                     pl::Scalar n = 0;
                     pl::range(0, 4, my_rank(data) - 1, [&](pl::Scalar) { n += 1; });
                     pl::write(y, {0, 0}, n);
                   });
  EXPECT_EQ(run_error(program, 2, pl::INT32, pl::INT32, {1, N}),
            "run error: rank 1 (device 1), function 'zero_step_k', op pl.range: the step is 0 "
            "(read at run time)");
}

// The host's rank loops with steps: even ranks, then odd ranks, then every
// rank again counting down. Each dispatch adds 1 to y[r] (y is read back).
TEST(EverydayRange, HostLoopsWithStepsDispatchEveryRank) {
  const std::vector<pl::Param> params = {pl::InOut("y", pl::Tensor({1, N}, pl::FP32)),
                                         pl::In("k", pl::FP32)};
  const pl::Function kernel = pl::jit::incore("bump", params, [](pl::Value y, pl::Scalar k) {
    y = pl::store(pl::add(pl::load(y, {0, 0}, {1, N}), k), {0, 0}, y);
  });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const pl::HostFunction program = pl::jit::host(
      "host_steps", {pl::InOut("y", pl::Tensor({NR, 1, N}, pl::FP32))}, [=](pl::Value y) {
        pl::range(0, pld::world_size(), 2, [&](pl::Scalar r) {
          per_rank(pl::arg("k") = 1.0, pl::arg("y") = y[r], pl::device(r));
        });
        pl::range(1, pld::world_size(), 2, [&](pl::Scalar r) {
          per_rank(pl::arg("y") = y[r], pl::arg("k") = 10.0, pl::device(r));
        });
        pl::range(pld::world_size() - 1, -1, -1,
                  [&](pl::Scalar r) { per_rank(y[r], 100.0, pl::device(r)); });
      });
  for (std::int64_t P : kRanks) {
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
    program.compile({y}, config(P))(y);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) EXPECT_EQ(y.at({r, 0, j}), r % 2 == 0 ? 101 : 110);
    }
  }
}

// ---- pl::reshape
// ------------------------------------------------------------------------------------

TEST(EverydayReshape, ShapeChangesElementsStayInRowMajorOrder) {
  const pl::HostFunction program =
      make_program("reshape", pl::FP32, pl::FP32, {4, 8},
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
                     pl::Tile t = pl::reshape(pl::load(x, {0, 0}, {1, N}), {4, 8});
                     pl::Tile back = pl::reshape(t, {1, N});
                     t = pl::reshape(back * 2, {4, 8});
                     y = pl::store(t, {0, 0}, y);
                   });
  const pl::HostFunction program8 =
      make_program("reshape_int8", pl::INT8, pl::INT8, {1, N},
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&, pl::Value&) {
                     pl::Tile t = pl::reshape(pl::load(x, {0, 0}, {1, N}), {1, 1, N});
                     y = pl::store(pl::reshape(t + 1, {1, N}), {0, 0}, y);
                   });
  for (std::int64_t P : kRanks) {
    anyp::InputGenerator gen(9);
    const anyp::HostTensor x = gen.uniform({P, 1, N});
    const anyp::HostTensor y = run(program, x, pl::FP32, {4, 8});
    anyp::HostTensor x8 = anyp::HostTensor::zeros({P, 1, N}, pl::INT8);
    for (std::int64_t k = 0; k < P * N; ++k) x8.set(k, static_cast<double>(k % 256 - 128));
    const anyp::HostTensor y8 = run(program8, x8, pl::INT8, {1, N});
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 8; ++j)
          EXPECT_EQ(y.at({r, i, j}), static_cast<float>(x.at({r, 0, i * 8 + j})) * 2.0f);
    }
    for (std::int64_t k = 0; k < P * N; ++k) {
      const std::int64_t v = k % 256 - 128 + 1;
      EXPECT_EQ(y8.get(k), v == 128 ? -128 : v);
    }
  }
}

// ---- sub-windows
// ------------------------------------------------------------------------------------

// data (row 0) and scratch (row 1) of one buffer: a ring pull lands in
// scratch and leaves data alone.
TEST(EverydaySubWindows, TwoHalvesOfOneBufferDoNotOverlap) {
  const pl::HostFunction program = make_program(
      "halves", pl::FP32, pl::FP32, {2, N},
      [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& scratch, pl::Value& signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
        data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
        signal = pld::tensor::barrier(signal);
        scratch = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, N}), {0, 0}, scratch);
        y = pl::store(pl::load(scratch, {0, 0}, {1, N}), {0, 0}, y);
        y = pl::store(pl::load(data, {0, 0}, {1, N}), {1, 0}, y);
      });
  for (std::int64_t P : kRanks) {
    anyp::InputGenerator gen(11);
    const anyp::HostTensor x = gen.uniform({P, 1, N});
    const anyp::HostTensor y = run(program, x, pl::FP32, {2, N});
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t j = 0; j < N; ++j) {
        EXPECT_EQ(y.at({r, 0, j}), x.at({(r + 1) % P, 0, j}));
        EXPECT_EQ(y.at({r, 1, j}), x.at({r, 0, j}));
      }
    }
  }
}

// One byte-sized buffer holds the data (FP32 at element 0) and the signal
// (INT32 at element N, byte 4 N): views of different dtypes at offsets.
TEST(EverydaySubWindows, DataAndSignalShareAByteBuffer) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, N}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const pl::Function kernel = pl::jit::incore(
      "shared_bytes", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar left = (pld::rank(ctx) + pld::nranks(ctx) - 1) % pld::nranks(ctx);
        data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
        signal = pld::tensor::barrier(signal);
        signal = pld::tensor::barrier(signal);  // self-clearing: reusable at once
        y = pl::store(pld::tile::remote_load(data, left, {0, 0}, {1, N}), {0, 0}, y);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const pl::HostFunction program =
      pl::jit::host("shared_bytes",
                    {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                     pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                    [=](pl::Value x, pl::Value y) {
                      auto bytes = pld::alloc_window_buffer("bytes", N * 4 + NR * 4);
                      pl::range(pld::world_size(), [&](pl::Scalar r) {
                        pl::Value xr = x[r];
                        pl::Value yr = y[r];
                        per_rank(xr, yr, pld::window(bytes, {1, N}, pl::FP32, 0),
                                 pld::window(bytes, {NR, 1}, pl::INT32, N), pl::device(r));
                      });
                    });
  for (std::int64_t P : kRanks) {
    anyp::InputGenerator gen(12);
    const anyp::HostTensor x = gen.uniform({P, 1, N});
    for (bool check_races : {false, true}) {  // offsets reach the race checker's shadow too
      anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
      anyp::RunConfig c = config(P);
      c.check_races = check_races;
      program.compile({x, y}, c)(x, y);
      for (std::int64_t r = 0; r < P; ++r) {
        for (std::int64_t j = 0; j < N; ++j)
          EXPECT_EQ(y.at({r, 0, j}), x.at({(r + P - 1) % P, 0, j}));
      }
    }
  }
}

}  // namespace
