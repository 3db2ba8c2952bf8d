// tile_math_f16c_test.cpp — the F16C path of FP16 tile math
// (runtime/tile_math_f16c.hpp) bit for bit against a scalar reference
// written here: decode both operands, compute in float (std::max/std::min
// semantics: the first operand unless the second is strictly
// greater/smaller), round once with the double reference. Operands include
// zeros of both signs, subnormals, the largest finite values, infinities
// and NaNs; lengths 1 ... 37 cover every tail; the second operand is a
// tile or one scalar; and in place (out = a).
#include "runtime/tile_math_f16c.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/half_float.hpp"

namespace anyp::runtime {
namespace {

std::uint16_t reference(ir::BinaryOp op, std::uint16_t a, std::uint16_t b) {
  const float x = fp16_bits_to_float(a), y = fp16_bits_to_float(b);
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
    case ir::BinaryOp::Max:
      r = x < y ? y : x;
      break;
    default:
      r = y < x ? y : x;
      break;
  }
  return double_to_fp16_bits(static_cast<double>(r));
}

// NaN results may differ only in the payload the float unit chose; every
// other result must match exactly.
bool same(std::uint16_t got, std::uint16_t want) {
  const bool nan_got = (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu) != 0;
  const bool nan_want = (want & 0x7c00u) == 0x7c00u && (want & 0x3ffu) != 0;
  return nan_got || nan_want ? nan_got == nan_want : got == want;
}

std::vector<std::uint16_t> operands(std::mt19937& rng, std::size_t n) {
  static const std::uint16_t special[] = {0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff,
                                          0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0x3c00};
  std::vector<std::uint16_t> v(n);
  for (auto& e : v) {
    e = rng() % 4 == 0 ? special[rng() % std::size(special)] : static_cast<std::uint16_t>(rng());
  }
  return v;
}

TEST(TileMathF16c, MatchesTheScalarReference) {
  std::mt19937 rng(10);
  const std::vector<std::uint8_t> probe(16);
  std::vector<std::uint16_t> probe_out(1);
  if (!fp16_elementwise_f16c(ir::BinaryOp::Add, reinterpret_cast<const std::byte*>(probe.data()),
                             reinterpret_cast<const std::byte*>(probe.data()), false,
                             reinterpret_cast<std::byte*>(probe_out.data()), 1)) {
    GTEST_SKIP() << "this machine has no F16C: FP16 math takes the portable loop";
  }
  for (const ir::BinaryOp op : {ir::BinaryOp::Add, ir::BinaryOp::Sub, ir::BinaryOp::Mul,
                                ir::BinaryOp::Max, ir::BinaryOp::Min}) {
    for (std::size_t n = 1; n <= 37; ++n) {
      for (const bool scalar : {false, true}) {
        for (const bool in_place : {false, true}) {
          std::vector<std::uint16_t> a = operands(rng, n), b = operands(rng, scalar ? 1 : n);
          const std::vector<std::uint16_t> a0 = a;
          std::vector<std::uint16_t> out(n, 0x5555);
          std::uint16_t* dst = in_place ? a.data() : out.data();
          ASSERT_TRUE(fp16_elementwise_f16c(op, reinterpret_cast<const std::byte*>(a.data()),
                                            reinterpret_cast<const std::byte*>(b.data()), scalar,
                                            reinterpret_cast<std::byte*>(dst), n));
          for (std::size_t i = 0; i < n; ++i) {
            const std::uint16_t want = reference(op, a0[i], b[scalar ? 0 : i]);
            ASSERT_TRUE(same(dst[i], want))
                << ir::binary_op_name(op) << " n=" << n << " i=" << i << " scalar=" << scalar
                << " in_place=" << in_place << std::hex << ": 0x" << a0[i] << ", 0x"
                << b[scalar ? 0 : i] << " -> 0x" << dst[i] << ", want 0x" << want;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace anyp::runtime
