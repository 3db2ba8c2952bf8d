// typed_tiles_test.cpp — tiles keep their dtype (issue 7): every integer
// type is exact over its whole range through load/store, remote_load, put,
// tile math (wrapping like two's complement), pl::read/pl::write, atomic adds
// and every builtin collective; casts and FP16/BF16 math round to nearest
// even once; a scalar operand that the tile's dtype cannot hold is an error,
// never a silent truncation. References are computed here independently
// (uint64 wrap-around, narrowing by hand), never by anyp.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t N = 32;  // elements per row: a whole 32-byte unit at INT8
constexpr std::int64_t kRanks[] = {2, 3, 5};

using Kernel = std::function<void(pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal)>;

// host(x [NR, XR, N] xd, y [NR, YR, N] yd) -> per_rank -> kernel, with windows
// data (data_shape, xd) and signal [NR, 1] INT32.
pl::HostFunction make_program(const std::string& name, pl::DType xd, std::int64_t xr, pl::DType yd,
                              std::int64_t yr, const pl::Shape& data_shape, const Kernel& body) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({xr, N}, xd)), pl::Out("y", pl::Tensor({yr, N}, yd)),
      pl::InOut("data", pld::DistributedTensor(data_shape, xd)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      name + "_kernel", params, [body](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        body(x, y, data, signal);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params, [kernel](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        kernel(x, y, data, signal);
      });
  return pl::jit::host(
      name, {pl::In("x", pl::Tensor({NR, xr, N}, xd)), pl::Out("y", pl::Tensor({NR, yr, N}, yd))},
      [=](pl::Value x, pl::Value y) {
        auto data_buf = pld::alloc_window_buffer("data", data_shape, xd);
        auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr_ = x[r];
          pl::Value yr_ = y[r];
          pl::Value data = pld::window(data_buf, data_shape, xd);
          pl::Value signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
          per_rank(xr_, yr_, data, signal, pl::device(r));
        });
      });
}

anyp::RunConfig config(std::int64_t P) {
  anyp::RunConfig c;
  c.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < P; ++d) c.distributed.device_ids.push_back(d);
  return c;
}

// Runs `program` on x; returns y ([P, yr, N] of dtype yd).
anyp::HostTensor run(const pl::HostFunction& program, const anyp::HostTensor& x, pl::DType yd,
                     std::int64_t yr) {
  const std::int64_t P = x.shape()[0];
  anyp::HostTensor y = anyp::HostTensor::zeros({P, yr, N}, yd);
  program.compile({x, y}, config(P))(x, y);
  return y;
}

// ---- independent references ------------------------------------------------------------

struct IntType {
  pl::DType dtype;
  int bits;
};
constexpr IntType kIntTypes[] = {{pl::INT8, 8}, {pl::INT16, 16}, {pl::INT32, 32}, {pl::INT64, 64}};

std::int64_t min_of(int bits) { return bits == 64 ? INT64_MIN : -(std::int64_t{1} << (bits - 1)); }
std::int64_t max_of(int bits) {
  return bits == 64 ? INT64_MAX : (std::int64_t{1} << (bits - 1)) - 1;
}
// v modulo 2^bits, as a signed value of that width.
std::int64_t narrow(std::uint64_t v, int bits) {
  if (bits == 64) return static_cast<std::int64_t>(v);
  const std::uint64_t m = v & ((std::uint64_t{1} << bits) - 1);
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  return m >= sign ? static_cast<std::int64_t>(m) - (std::int64_t{1} << bits)
                   : static_cast<std::int64_t>(m);
}

// Values at the edges of a type, and for INT64 beyond double's 2^53.
std::vector<std::int64_t> edge_values(int bits) {
  std::vector<std::int64_t> v = {
      min_of(bits), max_of(bits), min_of(bits) + 1, max_of(bits) - 1, -1, 0, 1, max_of(bits) / 3};
  if (bits == 64) {
    v[5] = (std::int64_t{1} << 53) + 1;
    v[6] = -(std::int64_t{1} << 53) - 1;
    v[7] = (std::int64_t{1} << 62) + 1;
  }
  return v;
}

std::string type_name(pl::DType d) { return std::string(anyp::dtype_name(d)); }

// ---- load / store / barrier / remote_load --------------------------------------------------

TEST(TypedTiles, IntegersAtTheirExtremesThroughLoadStoreAndRemoteLoad) {
  for (const IntType& it : kIntTypes) {
    const auto program = make_program(
        "roundtrip", it.dtype, 1, it.dtype, 2, {1, N},
        [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
          const auto ctx = pld::get_comm_ctx(data);
          const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
          data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
          signal = pld::tensor::barrier(signal);
          y = pl::store(pld::tile::remote_load(data, (r + 1) % P, {0, 0}, {1, N}), {0, 0}, y);
          pld::tensor::put(data, (r + 1) % P, x);  // after the barrier: the next rank's data
          signal = pld::tensor::barrier(signal);
          y = pl::store(pl::load(data, {0, 0}, {1, N}), {1, 0}, y);
        });
    for (std::int64_t P : kRanks) {
      const std::vector<std::int64_t> values = edge_values(it.bits);
      anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, N}, it.dtype);
      for (std::int64_t r = 0; r < P; ++r) {
        for (std::int64_t i = 0; i < N; ++i)
          x.set_at_int({r, 0, i}, values[static_cast<std::size_t>(i + r) % values.size()]);
      }
      const anyp::HostTensor y = run(program, x, it.dtype, 2);
      for (std::int64_t r = 0; r < P; ++r) {
        for (std::int64_t i = 0; i < N; ++i) {
          ASSERT_EQ(y.at_int({r, 0, i}), x.at_int({(r + 1) % P, 0, i}))
              << type_name(it.dtype) << " P=" << P << " remote_load r=" << r << " i=" << i;
          ASSERT_EQ(y.at_int({r, 1, i}), x.at_int({(r + P - 1) % P, 0, i}))
              << type_name(it.dtype) << " P=" << P << " put r=" << r << " i=" << i;
        }
      }
    }
  }
}

// ---- tile math ------------------------------------------------------------------------

TEST(TypedTiles, IntegerTileMathWrapsExactlyAtEveryWidth) {
  for (const IntType& it : kIntTypes) {
    const auto program = make_program("math", it.dtype, 2, it.dtype, 5, {1, N},
                                      [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                                        const pl::Tile a = pl::load(x, {0, 0}, {1, N});
                                        const pl::Tile b = pl::load(x, {1, 0}, {1, N});
                                        y = pl::store(pl::add(a, b), {0, 0}, y);
                                        y = pl::store(pl::sub(a, b), {1, 0}, y);
                                        y = pl::store(pl::mul(a, b), {2, 0}, y);
                                        y = pl::store(pl::maximum(a, b), {3, 0}, y);
                                        y = pl::store(pl::minimum(a, b), {4, 0}, y);
                                      });
    for (std::int64_t P : {2, 3}) {
      const std::vector<std::int64_t> values = edge_values(it.bits);
      anyp::HostTensor x = anyp::HostTensor::zeros({P, 2, N}, it.dtype);
      for (std::int64_t r = 0; r < P; ++r) {
        for (std::int64_t i = 0; i < N; ++i) {
          x.set_at_int({r, 0, i}, values[static_cast<std::size_t>(i) % values.size()]);
          x.set_at_int({r, 1, i}, values[static_cast<std::size_t>(i * 3 + r + 1) % values.size()]);
        }
      }
      const anyp::HostTensor y = run(program, x, it.dtype, 5);
      for (std::int64_t r = 0; r < P; ++r) {
        for (std::int64_t i = 0; i < N; ++i) {
          const std::int64_t a = x.at_int({r, 0, i}), b = x.at_int({r, 1, i});
          const auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
          const std::int64_t want[5] = {narrow(ua + ub, it.bits), narrow(ua - ub, it.bits),
                                        narrow(ua * ub, it.bits), std::max(a, b), std::min(a, b)};
          for (std::int64_t k = 0; k < 5; ++k) {
            ASSERT_EQ(y.at_int({r, k, i}), want[k])
                << type_name(it.dtype) << " op " << k << " of " << a << " and " << b;
          }
        }
      }
    }
  }
}

TEST(TypedTiles, Int64ScalarOperandBeyondTwoToThe53IsExact) {
  constexpr std::int64_t big = (std::int64_t{1} << 60) + 3;
  const auto program =
      make_program("scalar", pl::INT64, 1, pl::INT64, 1, {1, N},
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                     y = pl::store(pl::add(pl::load(x, {0, 0}, {1, N}), big), {0, 0}, y);
                   });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::INT64);
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set_int(i, (std::int64_t{1} << 61) + i);
  const anyp::HostTensor y = run(program, x, pl::INT64, 1);
  for (std::int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.get_int(i), x.get_int(i) + big) << i;
}

// A constant the tile's dtype cannot hold is refused before the run: when
// traced, or once NR is bound when it mentions NR.
TEST(TypedTiles, ScalarOperandOutsideTheTileDtypeIsACompileError) {
  const auto narrow = [](const pl::ScalarArg& v) {
    return make_program("narrow", pl::INT8, 1, pl::INT8, 1, {1, N},
                        [v](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                          y = pl::store(pl::add(pl::load(x, {0, 0}, {1, N}), v), {0, 0}, y);
                        });
  };
  const anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::INT8);
  const auto error_of = [&](const pl::HostFunction& program) -> std::string {
    try {
      run(program, x, pl::INT8, 1);
    } catch (const anyp::CompileError& e) {
      return anyp_test::without_locations(e.what());
    }
    return "no compile error";
  };
  EXPECT_EQ(error_of(narrow(300)),
            "compile error: function 'narrow_kernel' (incore): pl.add: the constant 300 does not "
            "fit an INT8 tile (range [-128, 127]); tiles are typed: pl::cast the tile to a wider "
            "dtype first");
  EXPECT_EQ(error_of(narrow(NR * 100)),
            "compile error: function 'narrow_kernel' (incore), op pl.add: the constant 200 does "
            "not fit an INT8 tile (range [-128, 127]); tiles are typed: pl::cast the tile to a "
            "wider dtype first");
  EXPECT_EQ(error_of(narrow(-128)), "no compile error");
}

TEST(TypedTiles, FloatingConstantWithAnIntegerTileIsACompileError) {
  const auto program =
      make_program("fconst", pl::INT32, 1, pl::INT32, 1, {1, N},
                   [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                     y = pl::store(pl::mul(pl::load(x, {0, 0}, {1, N}), 0.5), {0, 0}, y);
                   });
  const anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::INT32);
  try {
    run(program, x, pl::INT32, 1);
    FAIL() << "expected a CompileError";
  } catch (const anyp::CompileError& e) {
    EXPECT_EQ(std::string(anyp_test::without_locations(e.what())),
              "compile error: function 'fconst_kernel' (incore): pl.mul: a floating constant "
              "with an INT32 tile; tiles are typed: use an integer constant, or pl::cast the "
              "tile");
  }
}

// FP16 has 11 significant bits (ulp 2 at 2048), BF16 8 (ulp 2 at 256): the
// sums below fall exactly between two neighbours and round to the even one.
TEST(TypedTiles, Fp16AndBf16MathRoundsToNearestEven) {
  struct Case {
    pl::DType dtype;
    double a, b, want;
  };
  const Case cases[] = {{pl::FP16, 2048, 1, 2048}, {pl::FP16, 2048, 3, 2052},
                        {pl::FP16, 2050, 1, 2052}, {pl::BF16, 256, 1, 256},
                        {pl::BF16, 256, 3, 260},   {pl::BF16, 258, 1, 260}};
  for (const Case& c : cases) {
    const auto program = make_program(
        "half", c.dtype, 2, c.dtype, 1, {1, N},
        [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
          y = pl::store(pl::add(pl::load(x, {0, 0}, {1, N}), pl::load(x, {1, 0}, {1, N})), {0, 0},
                        y);
        });
    anyp::HostTensor x = anyp::HostTensor::zeros({2, 2, N}, c.dtype);
    for (std::int64_t r = 0; r < 2; ++r) {
      for (std::int64_t i = 0; i < N; ++i) {
        x.set_at({r, 0, i}, c.a);
        x.set_at({r, 1, i}, c.b);
      }
    }
    const anyp::HostTensor y = run(program, x, c.dtype, 1);
    for (std::int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.get(i), c.want) << type_name(c.dtype) << " " << c.a << " + " << c.b;
  }
}

// INT64 -> float rounds once, from the exact integer: through double first,
// 2^62 + 2^38 + 1 would become the FP32 tie 2^62 + 2^38 and round down.
TEST(TypedTiles, CastsRoundOnceFromTheExactInteger) {
  struct Case {
    pl::DType to;
    std::int64_t from;
    double want;
  };
  const std::int64_t two62 = std::int64_t{1} << 62;
  const Case cases[] = {
      {pl::FP32, two62 + (std::int64_t{1} << 38) + 1, std::ldexp(1.0, 62) + std::ldexp(1.0, 39)},
      {pl::FP32, two62 + (std::int64_t{1} << 38), std::ldexp(1.0, 62)},
      {pl::BF16, two62 + (std::int64_t{1} << 54) + 1, std::ldexp(1.0, 62) + std::ldexp(1.0, 55)},
      {pl::BF16, two62 + (std::int64_t{1} << 54), std::ldexp(1.0, 62)},
      {pl::FP16, 2049, 2048},
      {pl::FP16, 2051, 2052},
      {pl::FP16, 65520, std::numeric_limits<double>::infinity()},
      {pl::FP32, INT64_MIN, -std::ldexp(1.0, 63)}};
  for (const Case& c : cases) {
    const auto program =
        make_program("cast", pl::INT64, 1, c.to, 1, {1, N},
                     [to = c.to](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                       y = pl::store(pl::cast(pl::load(x, {0, 0}, {1, N}), to), {0, 0}, y);
                     });
    anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::INT64);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set_int(i, c.from);
    const anyp::HostTensor y = run(program, x, c.to, 1);
    for (std::int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.get(i), c.want) << type_name(c.to) << " from " << c.from;
  }
}

TEST(TypedTiles, FloatToIntegerCastsTruncateAndWrap) {
  struct Case {
    pl::DType to;
    double from;
    std::int64_t want;
  };
  const Case cases[] = {{pl::INT32, -3.75, -3},
                        {pl::INT32, 3e9, 3000000000LL - 4294967296LL},
                        {pl::INT8, 200.5, -56},
                        {pl::INT64, 1e300, 0},  // a multiple of 2^64
                        {pl::INT64, -std::ldexp(1.0, 63), INT64_MIN},
                        {pl::INT16, std::numeric_limits<double>::quiet_NaN(), 0}};
  for (const Case& c : cases) {
    const auto program =
        make_program("fcast", pl::FP32, 1, c.to, 1, {1, N},
                     [to = c.to](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                       y = pl::store(pl::cast(pl::load(x, {0, 0}, {1, N}), to), {0, 0}, y);
                     });
    anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, N}, pl::FP32);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, c.from);
    const double stored = x.get(0);  // the FP32 value the kernel sees
    const anyp::HostTensor y = run(program, x, c.to, 1);
    for (std::int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.get_int(i), c.want) << type_name(c.to) << " from " << stored;
  }
}

// ---- scalars -------------------------------------------------------------------------

TEST(TypedTiles, Int64ReadAndWriteKeepEveryBit) {
  const auto program = make_program("scalars", pl::INT64, 1, pl::INT64, 1, {1, N},
                                    [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value&) {
                                      pl::range(N, [&](pl::Scalar i) {
                                        const pl::Scalar v = pl::read(x, {0, i});
                                        pl::write(y, {0, i}, v - 1);
                                      });
                                    });
  anyp::HostTensor x = anyp::HostTensor::zeros({3, 1, N}, pl::INT64);
  const std::vector<std::int64_t> values = edge_values(64);
  for (std::int64_t i = 0; i < x.numel(); ++i)
    x.set_int(i, values[static_cast<std::size_t>(i) % values.size()]);
  const anyp::HostTensor y = run(program, x, pl::INT64, 1);
  for (std::int64_t i = 0; i < y.numel(); ++i) {
    EXPECT_EQ(y.get_int(i), narrow(static_cast<std::uint64_t>(x.get_int(i)) - 1, 64)) << i;
  }
}

// ---- atomics and collectives ----------------------------------------------------------

TEST(TypedTiles, Int64AtomicAddIntoOneWindowIsExact) {
  constexpr std::int64_t base = (std::int64_t{1} << 55) + 1;
  const auto program = make_program(
      "atomic", pl::INT64, 1, pl::INT64, 1, {1, N},
      [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
        pld::tile::remote_store(pl::load(x, {0, 0}, {1, N}), data, 0, {0, 0}, pld::AtomicType::Add);
        signal = pld::tensor::barrier(signal);
        y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
      });
  for (std::int64_t P : kRanks) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, N}, pl::INT64);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t i = 0; i < N; ++i) x.set_at_int({r, 0, i}, base + r * N + i);
    }
    const anyp::HostTensor y = run(program, x, pl::INT64, 1);
    for (std::int64_t i = 0; i < N; ++i) {
      std::int64_t sum = 0;
      for (std::int64_t r = 0; r < P; ++r) sum += base + r * N + i;
      ASSERT_EQ(y.at_int({0, 0, i}), sum) << "P=" << P << " i=" << i;
    }
  }
}

// Sum, max, min and prod of integers, mesh and ring, wrapping like the tile
// math; broadcast of INT64 values above 2^53 bit for bit.
TEST(TypedTiles, IntegerAllreduceAndBroadcastAreExact) {
  struct Reduction {
    pld::ReduceOp op;
    const char* name;
  };
  const Reduction ops[] = {{pld::ReduceOp::Sum, "sum"},
                           {pld::ReduceOp::Max, "max"},
                           {pld::ReduceOp::Min, "min"},
                           {pld::ReduceOp::Prod, "prod"}};
  for (const IntType& it : {kIntTypes[0], kIntTypes[3]}) {
    for (const Reduction& red : ops) {
      for (pld::AllreduceMode mode : {pld::AllreduceMode::Mesh, pld::AllreduceMode::Ring}) {
        const bool ring = mode == pld::AllreduceMode::Ring;
        const pl::Shape sig = ring ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 1};
        const std::vector<pl::Param> params = {
            pl::In("x", pl::Tensor({1, N}, it.dtype)), pl::Out("y", pl::Tensor({1, N}, it.dtype)),
            pl::InOut("data", pld::DistributedTensor({1, N}, it.dtype)),
            pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
        const auto kernel = pl::jit::incore(
            "reduce_kernel", params,
            [op = red.op, mode](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
              data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
              data = pld::tensor::allreduce(data, signal, op, mode);
              y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
            });
        const auto per_rank = pl::jit::orchestration(
            "per_rank", params,
            [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
        const auto program =
            pl::jit::host("reduce",
                          {pl::In("x", pl::Tensor({NR, 1, N}, it.dtype)),
                           pl::Out("y", pl::Tensor({NR, 1, N}, it.dtype))},
                          [&](pl::Value x, pl::Value y) {
                            auto data_buf = pld::alloc_window_buffer("data", {1, N}, it.dtype);
                            auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
                            pl::range(pld::world_size(), [&](pl::Scalar r) {
                              pl::Value xr = x[r], yr = y[r];
                              pl::Value data = pld::window(data_buf, {1, N}, it.dtype);
                              pl::Value signal = pld::window(signal_buf, sig, pl::INT32);
                              per_rank(xr, yr, data, signal, pl::device(r));
                            });
                          });
        for (std::int64_t P : kRanks) {
          const std::vector<std::int64_t> values = edge_values(it.bits);
          anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, N}, it.dtype);
          for (std::int64_t r = 0; r < P; ++r) {
            for (std::int64_t i = 0; i < N; ++i)
              x.set_at_int({r, 0, i}, values[static_cast<std::size_t>(i + 2 * r) % values.size()]);
          }
          const anyp::HostTensor y = run(program, x, it.dtype, 1);
          for (std::int64_t i = 0; i < N; ++i) {
            std::int64_t want = x.at_int({0, 0, i});
            for (std::int64_t r = 1; r < P; ++r) {
              const std::int64_t v = x.at_int({r, 0, i});
              const auto uw = static_cast<std::uint64_t>(want), uv = static_cast<std::uint64_t>(v);
              switch (red.op) {
                case pld::ReduceOp::Sum:
                  want = narrow(uw + uv, it.bits);
                  break;
                case pld::ReduceOp::Prod:
                  want = narrow(uw * uv, it.bits);
                  break;
                case pld::ReduceOp::Max:
                  want = std::max(want, v);
                  break;
                case pld::ReduceOp::Min:
                  want = std::min(want, v);
                  break;
              }
            }
            for (std::int64_t r = 0; r < P; ++r) {
              ASSERT_EQ(y.at_int({r, 0, i}), want)
                  << type_name(it.dtype) << " " << red.name << (ring ? " ring" : " mesh")
                  << " P=" << P << " r=" << r << " i=" << i;
            }
          }
        }
      }
    }
  }
}

TEST(TypedTiles, Int64BroadcastAndReduceScatterAreExact) {
  const auto program =
      make_program("bcast", pl::INT64, 1, pl::INT64, 2, {NR, N},
                   [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                     const auto ctx = pld::get_comm_ctx(data);
                     const pl::Scalar r = pld::rank(ctx);
                     // Every row of data holds x; reduce_scatter sums row r over ranks.
                     pl::range(NR, [&](pl::Scalar k) {
                       data = pl::store(pl::load(x, {0, 0}, {1, N}), {k, 0}, data);
                     });
                     data = pld::tensor::reduce_scatter(data, signal);
                     y = pl::store(pl::load(data, {r, 0}, {1, N}), {0, 0}, y);
                     signal = pld::tensor::barrier(signal);  // every rank has read its row
                     data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
                     data = pld::tensor::broadcast(data, signal, 1);
                     y = pl::store(pl::load(data, {0, 0}, {1, N}), {1, 0}, y);
                   });
  for (std::int64_t P : kRanks) {
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, N}, pl::INT64);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t i = 0; i < N; ++i)
        x.set_at_int({r, 0, i}, (std::int64_t{1} << 58) + (std::int64_t{1} << 54) * r + 2 * i + 1);
    }
    const anyp::HostTensor y = run(program, x, pl::INT64, 2);
    for (std::int64_t i = 0; i < N; ++i) {
      std::int64_t sum = 0;
      for (std::int64_t r = 0; r < P; ++r) sum += x.at_int({r, 0, i});
      for (std::int64_t r = 0; r < P; ++r) {
        ASSERT_EQ(y.at_int({r, 0, i}), sum) << "reduce_scatter P=" << P << " r=" << r;
        ASSERT_EQ(y.at_int({r, 1, i}), x.at_int({1, 0, i})) << "broadcast P=" << P << " r=" << r;
      }
    }
  }
}

// ---- HostTensor ----------------------------------------------------------------------

TEST(TypedTiles, HostTensorIntegersNeverPassThroughDouble) {
  for (const IntType& it : kIntTypes) {
    const std::vector<std::int64_t> values = edge_values(it.bits);
    const auto n = static_cast<std::int64_t>(values.size());
    anyp::HostTensor t = anyp::HostTensor::zeros({n}, it.dtype);
    for (std::int64_t i = 0; i < n; ++i) t.set_int(i, values[static_cast<std::size_t>(i)]);
    for (std::int64_t i = 0; i < n; ++i)
      EXPECT_EQ(t.get_int(i), values[static_cast<std::size_t>(i)]) << type_name(it.dtype);
    t.set_int(0, max_of(it.bits) + (it.bits == 64 ? 0 : 1));  // wraps into the narrow types
    EXPECT_EQ(t.get_int(0), it.bits == 64 ? INT64_MAX : min_of(it.bits)) << type_name(it.dtype);
  }
  anyp::HostTensor a = anyp::HostTensor::zeros({2}, pl::INT64);
  anyp::HostTensor b = anyp::HostTensor::zeros({2}, pl::INT64);
  a.set_int(0, (std::int64_t{1} << 60) + 1);
  b.set_int(0, std::int64_t{1} << 60);
  EXPECT_EQ(anyp::max_abs_diff(a, b), 1.0);  // equal as doubles, not as integers
  EXPECT_FALSE(anyp::allclose(a, b, 0, 0));
  a.set_int(1, INT64_MIN);
  b.set_int(1, INT64_MAX);
  EXPECT_EQ(anyp::max_abs_diff(a, b), std::ldexp(1.0, 64));
  anyp::HostTensor f = anyp::HostTensor::zeros({1}, pl::FP32);
  f.set_int(0, (std::int64_t{1} << 62) + (std::int64_t{1} << 38) + 1);  // one rounding
  EXPECT_EQ(f.get(0), std::ldexp(1.0, 62) + std::ldexp(1.0, 39));
}

}  // namespace
