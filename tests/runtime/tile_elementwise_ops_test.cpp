// tile_elementwise_ops_test.cpp — the elementwise tile ops (issue 11)
// against references written here: div and the bitwise ops, every unary
// function, cmp and sel, full/arange, over their dtypes, at P = 2 and 3
// (each rank with its own data), tile-tile and tile-scalar. Integer results
// are exact; FP32 +-*/ and sqrt are exact against double rounded once;
// exp/log/rsqrt/recip within the stated ulps; FP16/BF16 exact where float
// math then one rounding is the correctly rounded result (+-*/, sqrt).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/tile_op_runner.hpp"

namespace {

using anyp_test::make_input;
using anyp_test::run_tile_op;
using anyp_test::tile_op_error;
using anyp_test::TileInput;

constexpr pl::DType kFloats[] = {pl::FP32, pl::FP16, pl::BF16};
constexpr pl::DType kInts[] = {pl::INT8, pl::INT16, pl::INT32, pl::INT64};

std::string name(pl::DType d) { return std::string(anyp::dtype_name(d)); }
int bits(pl::DType d) { return static_cast<int>(anyp::dtype_bytes(d)) * 8; }
// Elements in one 32-byte unit, and a [2, n] tile of two units per row.
std::int64_t unit(pl::DType d) { return 32 / static_cast<std::int64_t>(anyp::dtype_bytes(d)); }

// v modulo 2^bits as a signed value of that width.
std::int64_t wrap(std::uint64_t v, int b) {
  if (b == 64) return static_cast<std::int64_t>(v);
  const std::uint64_t m = v & ((std::uint64_t{1} << b) - 1);
  return m >= (std::uint64_t{1} << (b - 1)) ? static_cast<std::int64_t>(m) - (std::int64_t{1} << b)
                                            : static_cast<std::int64_t>(m);
}

// A value rounded to dtype (through a one-element host tensor's set()).
double round_to(pl::DType d, double v) {
  anyp::HostTensor t = anyp::HostTensor::zeros({1}, d);
  t.set(0, v);
  return t.get(0);
}

// Inputs of integer dtype d: edge values and small ones, rank-dependent.
double int_value(pl::DType d, std::int64_t r, std::int64_t i) {
  const int b = bits(d);
  const double lo = -std::ldexp(1.0, b - 1), hi = std::ldexp(1.0, b - 1) - 1;
  const double edges[] = {lo, hi, -1, 0, 1, 7, -9, lo + 1, hi - 1, std::min(100.0, hi)};
  return edges[(i + r * 3) % 10] + (i % 5 == 4 ? static_cast<double>(i % 17) : 0);
}

// ---- div and bitwise ------------------------------------------------------------------------

TEST(TileOps, IntegerDivTruncatesTowardZeroAndWrapsMinByMinusOne) {
  for (pl::DType d : kInts) {
    const std::int64_t n = 2 * unit(d), P = 3;
    const auto x =
        make_input(P, n, d, [&](std::int64_t r, std::int64_t i) { return int_value(d, r, i); });
    const auto y = make_input(P, n, d, [&](std::int64_t r, std::int64_t i) {
      const double v[] = {-1, 3, -7, 2, 1, -2, 5, 127};
      return v[(i + r) % 8];
    });
    const auto out = run_tile_op({{x, {2, n / 2}}, {y, {2, n / 2}}}, n, d,
                                 [](const auto& t) { return pl::div(t[0], t[1]); });
    for (std::int64_t k = 0; k < P * n; ++k) {
      const std::int64_t a = x.get_int(k), b = y.get_int(k);
      const std::int64_t want =
          b == -1 ? wrap(0 - static_cast<std::uint64_t>(a), bits(d)) : a / b;  // C truncation
      ASSERT_EQ(out.get_int(k), want) << name(d) << " " << a << " / " << b;
    }
  }
}

TEST(TileOps, FloatDivIsCorrectlyRoundedAndFollowsIeee) {
  for (pl::DType d : kFloats) {
    const std::int64_t n = 2 * unit(d), P = 2;
    const auto x = make_input(P, n, d, [](std::int64_t r, std::int64_t i) {
      return i == 0 ? 1.0 : i == 1 ? -1.0 : i == 2 ? 0.0 : 0.37 * (i + 1) - r;
    });
    const auto y = make_input(P, n, d, [](std::int64_t r, std::int64_t i) {
      return i < 3 ? 0.0 : 1.0 / 3 + 0.5 * (i % 7) + r;
    });
    const auto out =
        run_tile_op({{x, {1, n}}, {y, {1, n}}}, n, d, [](const auto& t) { return t[0] / t[1]; });
    for (std::int64_t k = 0; k < P * n; ++k) {
      const double want = round_to(d, x.get(k) / y.get(k));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out.get(k))) << name(d) << " element " << k;
      } else {
        EXPECT_EQ(out.get(k), want) << name(d) << " " << x.get(k) << " / " << y.get(k);
      }
    }
  }
}

TEST(TileOps, BitwiseOpsOnEveryIntegerDtype) {
  for (pl::DType d : kInts) {
    const std::int64_t n = unit(d), P = 2;
    const int b = bits(d);
    const auto x =
        make_input(P, n, d, [&](std::int64_t r, std::int64_t i) { return int_value(d, r, i); });
    const auto y = make_input(
        P, n, d, [&](std::int64_t r, std::int64_t i) { return int_value(d, r + 1, i + 3); });
    const auto s = make_input(P, n, d, [&](std::int64_t r, std::int64_t i) {
      return static_cast<double>((i * 5 + r) % b);  // shift counts 0 .. b-1
    });
    const auto run2 = [&](const anyp::HostTensor& rhs, auto f) {
      return run_tile_op({{x, {1, n}}, {rhs, {1, n}}}, n, d, f);
    };
    const auto a = run2(y, [](const auto& t) { return pl::and_(t[0], t[1]); });
    const auto o = run2(y, [](const auto& t) { return pl::or_(t[0], t[1]); });
    const auto e = run2(y, [](const auto& t) { return pl::xor_(t[0], t[1]); });
    const auto l = run2(s, [](const auto& t) { return pl::shl(t[0], t[1]); });
    const auto h = run2(s, [](const auto& t) { return pl::shr(t[0], t[1]); });
    const auto nt = run_tile_op({{x, {1, n}}}, n, d, [](const auto& t) { return pl::not_(t[0]); });
    const auto ls =
        run_tile_op({{x, {1, n}}}, n, d, [&](const auto& t) { return pl::shl(t[0], b - 1); });
    const auto xs =
        run_tile_op({{x, {1, n}}}, n, d, [](const auto& t) { return pl::xor_(t[0], -1); });
    for (std::int64_t k = 0; k < P * n; ++k) {
      const std::int64_t p = x.get_int(k), q = y.get_int(k), c = s.get_int(k);
      const std::uint64_t up = static_cast<std::uint64_t>(p);
      EXPECT_EQ(a.get_int(k), p & q) << name(d);
      EXPECT_EQ(o.get_int(k), p | q) << name(d);
      EXPECT_EQ(e.get_int(k), p ^ q) << name(d);
      EXPECT_EQ(l.get_int(k), wrap(up << c, b)) << name(d) << " " << p << " << " << c;
      // Arithmetic shift: floor division by 2^c.
      EXPECT_EQ(h.get_int(k),
                static_cast<std::int64_t>(std::floor(static_cast<long double>(p) /
                                                     std::ldexp(1.0L, static_cast<int>(c)))))
          << name(d) << " " << p << " >> " << c;
      EXPECT_EQ(nt.get_int(k), -p - 1) << name(d);
      EXPECT_EQ(ls.get_int(k), wrap(up << (b - 1), b)) << name(d);
      EXPECT_EQ(xs.get_int(k), ~p) << name(d);
    }
  }
}

// ---- unary ------------------------------------------------------------------------------------

TEST(TileOps, NegAbsReluOnIntegersWrap) {
  for (pl::DType d : kInts) {
    const std::int64_t n = unit(d), P = 2;
    const int b = bits(d);
    const auto x =
        make_input(P, n, d, [&](std::int64_t r, std::int64_t i) { return int_value(d, r, i); });
    const auto ng = run_tile_op({{x, {1, n}}}, n, d, [](const auto& t) { return pl::neg(t[0]); });
    const auto ab = run_tile_op({{x, {1, n}}}, n, d, [](const auto& t) { return pl::abs(t[0]); });
    const auto re = run_tile_op({{x, {1, n}}}, n, d, [](const auto& t) { return pl::relu(t[0]); });
    for (std::int64_t k = 0; k < P * n; ++k) {
      const std::int64_t v = x.get_int(k);
      const std::int64_t negated = wrap(0 - static_cast<std::uint64_t>(v), b);
      EXPECT_EQ(ng.get_int(k), negated) << name(d) << " " << v;
      EXPECT_EQ(ab.get_int(k), v < 0 ? negated : v) << name(d) << " " << v;
      EXPECT_EQ(re.get_int(k), v > 0 ? v : 0) << name(d) << " " << v;
    }
  }
}

// Floating inputs: signed zeros, infinities, NaN, tiny and ordinary values.
double float_value(std::int64_t r, std::int64_t i) {
  const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-3, -2.5, 0.75};
  if (i < 8) return special[i];
  return std::ldexp(1.0 + 0.1 * static_cast<double>((i * 7 + r) % 10),
                    static_cast<int>(i % 9) - 4) *
         ((i + r) % 3 == 0 ? -1 : 1);
}

// |got - want| within `ulps` units in the last place of dtype at want.
void expect_within_ulps(pl::DType d, double got, double want, double ulps,
                        const std::string& what) {
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << what;
    return;
  }
  if (std::isinf(want) || want == 0) {
    EXPECT_EQ(got, want) << what;
    return;
  }
  const int mantissa = d == pl::FP32 ? 23 : d == pl::FP16 ? 10 : 7;
  int e = 0;
  std::frexp(want, &e);
  const double ulp = std::ldexp(1.0, e - 1 - mantissa);
  EXPECT_LE(std::fabs(got - want), ulps * ulp) << what << ": got " << got << ", want " << want;
}

TEST(TileOps, FloatingUnaryFunctionsAgainstDouble) {
  struct Fn {
    const char* name;
    pl::Tile (*op)(const pl::Tile&, pl::Here);
    double (*ref)(double);
    double ulps;  // against the double result rounded to dtype
  };
  const Fn fns[] = {
      {"neg", pl::neg, [](double v) { return -v; }, 0},
      {"abs", pl::abs, [](double v) { return std::fabs(v); }, 0},
      {"relu", pl::relu, [](double v) { return v > 0 || std::isnan(v) ? v : 0.0; }, 0},
      {"sqrt", pl::sqrt, [](double v) { return std::sqrt(v); }, 0},
      {"exp", pl::exp, [](double v) { return std::exp(v); }, 1},
      {"log", pl::log, [](double v) { return std::log(v); }, 1},
      {"rsqrt", pl::rsqrt, [](double v) { return 1 / std::sqrt(v); }, 1},
      {"recip", pl::recip, [](double v) { return 1 / v; }, 0},
  };
  for (pl::DType d : kFloats) {
    const std::int64_t n = 2 * unit(d), P = 2;
    const auto x = make_input(P, n, d, float_value);
    for (const Fn& fn : fns) {
      const auto out = run_tile_op({{x, {1, n}}}, n, d,
                                   [&](const auto& t) { return fn.op(t[0], pl::Here::current()); });
      for (std::int64_t k = 0; k < P * n; ++k) {
        const double v = x.get(k);
        const double want = round_to(d, fn.ref(v));
        const std::string what = std::string(fn.name) + " " + name(d) + " of " + std::to_string(v);
        if (fn.ulps == 0) {
          if (std::isnan(want)) {
            EXPECT_TRUE(std::isnan(out.get(k))) << what;
          } else {
            EXPECT_EQ(out.get(k), want) << what;
            EXPECT_EQ(std::signbit(out.get(k)), std::signbit(want)) << what;
          }
        } else {
          // FP32: glibc's float functions within 1 ulp; FP16/BF16: float
          // math rounded once more, so within one ulp of the format.
          expect_within_ulps(d, out.get(k), want, fn.ulps, what);
        }
      }
    }
  }
}

TEST(TileOps, NotOnEveryIntegerDtypeAndFloatOnlyFunctionsRefuseIntegers) {
  const auto x =
      make_input(2, 8, pl::INT32, [](std::int64_t r, std::int64_t i) { return i - 3 + r; });
  EXPECT_EQ(tile_op_error({{x, {1, 8}}}, 8, pl::INT32, [](const auto& t) { return pl::exp(t[0]); }),
            "compile error: function 'op' (incore): pl.exp: the operand is an INT32 tile; pl.exp "
            "takes FP32, FP16 or BF16 tiles (pl::cast it first)");
  const auto f = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t i) { return i; });
  EXPECT_EQ(tile_op_error({{f, {1, 8}}}, 8, pl::FP32, [](const auto& t) { return pl::not_(t[0]); }),
            "compile error: function 'op' (incore): pl.not_: the operand is an FP32 tile; pl.not_ "
            "takes integer tiles (INT8, INT16, INT32 or INT64)");
  EXPECT_EQ(tile_op_error({{f, {1, 8}}, {f, {1, 8}}}, 8, pl::FP32,
                          [](const auto& t) { return pl::shl(t[0], t[1]); }),
            "compile error: function 'op' (incore): pl.shl: the first operand is an FP32 tile; "
            "pl.shl takes integer tiles (INT8, INT16, INT32 or INT64)");
}

// ---- cmp and sel --------------------------------------------------------------------------------

bool compare(int kind, double a, double b) {
  switch (kind) {
    case pl::EQ:
      return a == b;
    case pl::NE:
      return a != b;
    case pl::LT:
      return a < b;
    case pl::LE:
      return a <= b;
    case pl::GT:
      return a > b;
    default:
      return a >= b;
  }
}

TEST(TileOps, CmpGivesAOneZeroMaskOfTheOperandsWidth) {
  for (pl::DType d : {pl::FP32, pl::FP16, pl::BF16, pl::INT8, pl::INT16, pl::INT32, pl::INT64}) {
    const pl::DType mask = d == pl::FP32 ? pl::INT32 : anyp::dtype_is_float(d) ? pl::INT16 : d;
    const std::int64_t n = unit(d), P = 2;
    const bool fl = anyp::dtype_is_float(d);
    const auto x = make_input(P, n, d, [&](std::int64_t r, std::int64_t i) {
      return fl ? float_value(r, i) : static_cast<double>((i * 3 + r) % 7 - 3);
    });
    const auto y = make_input(P, n, d, [&](std::int64_t r, std::int64_t i) {
      return fl ? float_value(r + 1, (i + 2) % n) : static_cast<double>((i + r) % 5 - 2);
    });
    for (int kind = pl::EQ; kind <= pl::GE; ++kind) {
      const auto tt = run_tile_op({{x, {1, n}}, {y, {1, n}}}, n, mask,
                                  [&](const auto& t) { return pl::cmp(t[0], t[1], kind); });
      const auto ts = run_tile_op({{x, {1, n}}}, n, mask,
                                  [&](const auto& t) { return pl::cmp(t[0], 1, kind); });
      for (std::int64_t k = 0; k < P * n; ++k) {
        EXPECT_EQ(tt.get_int(k), compare(kind, x.get(k), y.get(k)) ? 1 : 0)
            << name(d) << " cmp " << kind << " of " << x.get(k) << ", " << y.get(k);
        EXPECT_EQ(ts.get_int(k), compare(kind, x.get(k), 1.0) ? 1 : 0) << name(d);
      }
    }
  }
}

TEST(TileOps, SelPicksAWhereTheMaskIsNonZero) {
  for (pl::DType d : {pl::FP32, pl::BF16, pl::INT8, pl::INT64}) {
    const std::int64_t n = unit(d), P = 3;
    const auto a = make_input(P, n, d, [](std::int64_t r, std::int64_t i) { return i + 10 * r; });
    const auto b = make_input(P, n, d, [](std::int64_t r, std::int64_t i) { return -i - 10 * r; });
    // relu by cmp + sel, and a mask read from data (any non-zero selects a).
    const auto out = run_tile_op({{a, {1, n}}, {b, {1, n}}}, n, d, [](const auto& t) {
      return pl::sel(pl::cmp(t[0], 3, pl::GE), t[0], t[1]);
    });
    for (std::int64_t k = 0; k < P * n; ++k)
      EXPECT_EQ(out.get(k), a.get(k) >= 3 ? a.get(k) : b.get(k)) << name(d) << " element " << k;
  }
  const auto m =
      make_input(2, 8, pl::INT32, [](std::int64_t, std::int64_t i) { return i % 3 == 0 ? 0 : -i; });
  const auto a = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t i) { return i; });
  const auto b = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t) { return -1; });
  const auto out = run_tile_op({{m, {1, 8}}, {a, {1, 8}}, {b, {1, 8}}}, 8, pl::FP32,
                               [](const auto& t) { return pl::sel(t[0], t[1], t[2]); });
  for (std::int64_t k = 0; k < 16; ++k) EXPECT_EQ(out.get(k), (k % 8) % 3 == 0 ? -1.0 : k % 8);
}

// ---- fills
// ----------------------------------------------------------------------------------------

TEST(TileOps, ArangeCountsUpOrDownInEveryDtype) {
  for (pl::DType d : {pl::FP32, pl::FP16, pl::INT8, pl::INT16, pl::INT32, pl::INT64}) {
    const std::int64_t n = 2 * unit(d);
    const auto dummy = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t) { return 0; });
    const auto up = run_tile_op({{dummy, {1, 8}}}, n, d, [&](const auto&) {
      return pl::arange(-5, {2, n / 2}, d);
    });
    const auto down = run_tile_op({{dummy, {1, 8}}}, n, d, [&](const auto&) {
      return pl::arange(3, {1, n}, d, true);
    });
    for (std::int64_t r = 0; r < 2; ++r)
      for (std::int64_t i = 0; i < n; ++i) {
        EXPECT_EQ(up.get_int(r * n + i), -5 + i) << name(d);
        EXPECT_EQ(down.get_int(r * n + i), 3 - i) << name(d);
      }
  }
}

// A run-time start (a constant one is checked when compiling).
TEST(TileOps, ArangeValuesMustFitTheDtype) {
  const auto dummy = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t) { return 0; });
  EXPECT_EQ(
      tile_op_error({{dummy, {1, 8}}}, 64, pl::INT8,
                    [](const auto&) {
                      return pl::arange(pl::max(100, 0), {2, 32}, pl::INT8);
                    }),
      "run error: rank 0 (device 0), function 'op', op pl.arange: element 28 (start 100 + 28) "
      "does not fit the INT8 tile [2, 32]");
}

TEST(TileOps, AFloatingArangeFromARunTimeStartMustBeExact) {
  const auto dummy = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t) { return 0; });
  // FP16 holds every integer up to 2048, then only even ones.
  const auto ok = run_tile_op({{dummy, {1, 8}}}, 16, pl::FP16, [](const auto&) {
    return pl::arange(pl::max(2033, 0), {1, 16}, pl::FP16);
  });
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_EQ(ok.get(i), 2033 + i);
  EXPECT_EQ(tile_op_error({{dummy, {1, 8}}}, 16, pl::FP16,
                          [](const auto&) {
                            return pl::arange(pl::max(2040, 0), {1, 16}, pl::FP16);
                          }),
            "run error: rank 0 (device 0), function 'op', op pl.arange: element 9 (start 2040 + 9) "
            "does not fit the FP16 tile [1, 16] exactly");
}

// ---- run-time refusals
// ------------------------------------------------------------------------------

TEST(TileOps, IntegerDivisionByZeroAndBadShiftCountsAreRunErrors) {
  const auto x = make_input(2, 8, pl::INT32, [](std::int64_t, std::int64_t i) { return i; });
  const auto z = make_input(
      2, 8, pl::INT32, [](std::int64_t r, std::int64_t i) { return r == 1 && i == 5 ? 0 : 2; });
  EXPECT_EQ(tile_op_error({{x, {1, 8}}, {z, {1, 8}}}, 8, pl::INT32,
                          [](const auto& t) { return pl::div(t[0], t[1]); }),
            "run error: rank 1 (device 1), function 'op', op pl.div: division by zero: element 5 "
            "of the second operand is 0");
  EXPECT_EQ(
      tile_op_error({{x, {1, 8}}}, 8, pl::INT32, [](const auto& t) { return pl::div(t[0], 0); }),
      "compile error: function 'op' (incore): pl.div: division of an INT32 tile by the "
      "constant 0");
  const auto c =
      make_input(2, 8, pl::INT32, [](std::int64_t, std::int64_t i) { return i == 3 ? 32 : 1; });
  EXPECT_EQ(tile_op_error({{x, {1, 8}}, {c, {1, 8}}}, 8, pl::INT32,
                          [](const auto& t) { return pl::shl(t[0], t[1]); }),
            "run error: rank 0 (device 0), function 'op', op pl.shl: shift count 32 (element 3 of "
            "the second operand) is outside [0, 32) for the INT32 tile [1, 8]");
  EXPECT_EQ(
      tile_op_error({{x, {1, 8}}}, 8, pl::INT32, [](const auto& t) { return pl::shr(t[0], -1); }),
      "compile error: function 'op' (incore): pl.shr: shift count -1 is outside [0, 32) for "
      "an INT32 tile");
  // Floating division by zero is IEEE's: no error.
  const auto f = make_input(2, 8, pl::FP32, [](std::int64_t, std::int64_t i) { return i - 1; });
  const auto q =
      run_tile_op({{f, {1, 8}}}, 8, pl::FP32, [](const auto& t) { return pl::div(t[0], 0.0); });
  EXPECT_EQ(q.get(0), -INFINITY);
  EXPECT_TRUE(std::isnan(q.get(1)));
  EXPECT_EQ(q.get(2), INFINITY);
}

}  // namespace
