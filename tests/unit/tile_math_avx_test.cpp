// tile_math_avx_test.cpp — the x86 vector paths of FP16 and BF16 tile math
// (runtime/tile_math_avx.hpp), at every width this machine has (AVX-512:
// FP16 in FP16's own arithmetic; AVX2), bit for bit against each other and
// against a scalar reference written here: decode both operands, compute in float
// (std::max/std::min semantics: the first operand unless the second is strictly greater/smaller),
// round once with the double reference (for div too: float's 24 bits make one rounding of the float
// quotient exact). Operands include zeros of both signs, subnormals, the largest finite values,
// infinities and NaNs; lengths 1 ... 37 cover every tail; the second operand is a tile or one
// scalar; and in place (out = a).
#include "runtime/tile_math_avx.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/half_float.hpp"

namespace anyp::runtime {
namespace {

std::uint16_t reference(DType dtype, ir::BinaryOp op, std::uint16_t a, std::uint16_t b) {
  const bool fp16 = dtype == DType::FP16;
  const float x = fp16 ? fp16_bits_to_float(a) : bf16_bits_to_float(a);
  const float y = fp16 ? fp16_bits_to_float(b) : bf16_bits_to_float(b);
  float r = 0;
  switch (op) {
    case ir::BinaryOp::Add:
      r = x + y;
      break;
    case ir::BinaryOp::Sub:
      r = x - y;
      break;
    case ir::BinaryOp::Mul:
      r = x * y;
      break;
    case ir::BinaryOp::Div:
      r = x / y;
      break;
    case ir::BinaryOp::Max:
      r = x < y ? y : x;
      break;
    default:
      r = y < x ? y : x;
      break;
  }
  return fp16 ? double_to_fp16_bits(static_cast<double>(r))
              : double_to_bf16_bits(static_cast<double>(r));
}

bool is_nan(DType dtype, std::uint16_t v) {
  return dtype == DType::FP16 ? (v & 0x7c00u) == 0x7c00u && (v & 0x3ffu) != 0
                              : (v & 0x7f80u) == 0x7f80u && (v & 0x7fu) != 0;
}

// NaN results may differ only in the payload the float unit chose; every
// other result must match exactly.
bool same(DType dtype, std::uint16_t got, std::uint16_t want) {
  const bool nan_got = is_nan(dtype, got), nan_want = is_nan(dtype, want);
  return nan_got || nan_want ? nan_got == nan_want : got == want;
}

std::vector<std::uint16_t> operands(DType dtype, std::mt19937& rng, std::size_t n) {
  // Zeros, subnormals, the smallest normal, the largest finite, infinities,
  // NaNs (quiet and signalling), one.
  static const std::uint16_t fp16[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff,
                                       0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x3c00};
  static const std::uint16_t bf16[] = {0x0000, 0x8000, 0x0001, 0x807f, 0x0080, 0x7f7f,
                                       0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x3f80};
  const std::uint16_t* special = dtype == DType::FP16 ? fp16 : bf16;
  std::vector<std::uint16_t> v(n);
  for (auto& e : v)
    e = rng() % 4 == 0 ? special[rng() % std::size(fp16)] : static_cast<std::uint16_t>(rng());
  return v;
}

class TileMathAvx : public ::testing::TestWithParam<DType> {};

constexpr ir::BinaryOp kOps[] = {ir::BinaryOp::Add, ir::BinaryOp::Sub, ir::BinaryOp::Mul,
                                 ir::BinaryOp::Div, ir::BinaryOp::Max, ir::BinaryOp::Min};

const char* isa_name(HalfIsa isa) { return isa == HalfIsa::Avx512 ? "AVX-512" : "AVX2"; }

// Lengths 1 ... 70 cover every tail of 8, 16 and 32 lanes.
TEST_P(TileMathAvx, EveryWidthMatchesTheScalarReference) {
  const DType dtype = GetParam();
  const std::vector<HalfIsa> isas = half_isas(dtype);
  if (isas.empty()) GTEST_SKIP() << "this machine has no AVX2/F16C: the portable loop runs";
  std::mt19937 rng(10);
  for (const HalfIsa isa : isas) {
    for (const ir::BinaryOp op : kOps) {
      for (std::size_t n = 1; n <= 70; ++n) {
        for (const bool scalar : {false, true}) {
          for (const bool in_place : {false, true}) {
            std::vector<std::uint16_t> a = operands(dtype, rng, n),
                                       b = operands(dtype, rng, scalar ? 1 : n);
            const std::vector<std::uint16_t> a0 = a;
            std::vector<std::uint16_t> out(n + 1, 0x5555);
            std::uint16_t* dst = in_place ? a.data() : out.data();
            ASSERT_TRUE(half_elementwise_with(isa, op, dtype,
                                              reinterpret_cast<const std::byte*>(a.data()),
                                              reinterpret_cast<const std::byte*>(b.data()), scalar,
                                              reinterpret_cast<std::byte*>(dst), n));
            for (std::size_t i = 0; i < n; ++i) {
              const std::uint16_t want = reference(dtype, op, a0[i], b[scalar ? 0 : i]);
              ASSERT_TRUE(same(dtype, dst[i], want))
                  << isa_name(isa) << " " << ir::binary_op_name(op) << " n=" << n << " i=" << i
                  << " scalar=" << scalar << " in_place=" << in_place << std::hex << ": 0x" << a0[i]
                  << ", 0x" << b[scalar ? 0 : i] << " -> 0x" << dst[i] << ", want 0x" << want;
            }
            if (!in_place) ASSERT_EQ(out[n], 0x5555) << "wrote past the end";
          }
        }
      }
    }
  }
}

// Every encoding as the first operand against 256 second operands (the
// special values among them), every op: the widths give the same bits
// (AVX-512's FP16 arithmetic rounds once where AVX2 rounds the float
// result: equal, as float has 2 × 11 + 2 bits). A NaN's payload is the
// one exception, as for FP32 tiles: IEEE 754 leaves open which operand's
// it carries, and the compiler may swap a commutative op's operands.
TEST_P(TileMathAvx, EveryWidthGivesTheSameBits) {
  const DType dtype = GetParam();
  const std::vector<HalfIsa> isas = half_isas(dtype);
  if (isas.size() < 2) GTEST_SKIP() << "this machine runs one width";
  std::mt19937 rng(52);
  std::vector<std::uint16_t> a(65536);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint16_t>(i);
  const std::vector<std::uint16_t> seconds = operands(dtype, rng, 256);
  for (const ir::BinaryOp op : kOps) {
    for (const std::uint16_t second : seconds) {
      const std::vector<std::uint16_t> b(a.size(), second);
      std::vector<std::vector<std::uint16_t>> out(isas.size(),
                                                  std::vector<std::uint16_t>(a.size()));
      for (std::size_t k = 0; k < isas.size(); ++k) {
        ASSERT_TRUE(half_elementwise_with(isas[k], op, dtype,
                                          reinterpret_cast<const std::byte*>(a.data()),
                                          reinterpret_cast<const std::byte*>(b.data()), false,
                                          reinterpret_cast<std::byte*>(out[k].data()), a.size()));
      }
      for (std::size_t k = 1; k < isas.size(); ++k) {
        for (std::size_t i = 0; i < a.size(); ++i) {
          ASSERT_TRUE(same(dtype, out[k][i], out[0][i]))
              << ir::binary_op_name(op) << std::hex << " 0x" << a[i] << ", 0x" << second << ": "
              << isa_name(isas[0]) << " 0x" << out[0][i] << ", " << isa_name(isas[k]) << " 0x"
              << out[k][i];
        }
      }
    }
  }
}

// Widening for the matmul: every one of the 65536 patterns, at every tail
// length position, exactly (NaNs stay NaN), against the scalar decoders.
TEST_P(TileMathAvx, WideningIsExactForEveryPattern) {
  const DType dtype = GetParam();
  std::vector<std::uint16_t> all(65536 + 5);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  std::vector<float> out(all.size(), -1.0f);
  if (!widen_half_avx(dtype, reinterpret_cast<const std::byte*>(all.data()), out.data(),
                      all.size())) {
    GTEST_SKIP() << "this machine has no AVX2/F16C";
  }
  for (std::size_t i = 0; i < all.size(); ++i) {
    const float want =
        dtype == DType::FP16 ? fp16_bits_to_float(all[i]) : bf16_bits_to_float(all[i]);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(out[i])) << std::hex << all[i];
    } else {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(want))
          << std::hex << all[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(HalfTypes, TileMathAvx, ::testing::Values(DType::FP16, DType::BF16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace anyp::runtime
