// host_tensor_test.cpp — unit tests for anyp::HostTensor, InputGenerator,
// the comparison helpers (max_abs_diff, allclose, equal_exact) and the
// FP16/BF16 conversions in src/common/half_float.hpp.
#include "anyp/host_tensor.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/half_float.hpp"

namespace anyp {
namespace {

// Runs `fn`, expects it to throw E, and returns the message.
template <class E, class Fn>
std::string message_of(Fn&& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception thrown";
  return {};
}

// ---- InputGenerator -----------------------------------------------------------

TEST(InputGenerator, FirstValuesForSeed7) {
  // Pinned: std::mt19937(7) yields 327741615, 976413892, 3349725721, 1369975286.
  InputGenerator gen(7);
  EXPECT_EQ(gen.next(), 0x1.2711ep-1);   // 0.5 + (327741615 >> 9) * 2^-23
  EXPECT_EQ(gen.next(), 0x1.7465c8p-1);  // 0.5 + (976413892 >> 9) * 2^-23
  EXPECT_EQ(gen.next(), 0x1.47a8c2p+0);  // 0.5 + (3349725721 >> 9) * 2^-23
  EXPECT_EQ(gen.next(), 0x1.a3505p-1);   // 0.5 + (1369975286 >> 9) * 2^-23
}

TEST(InputGenerator, MatchesFormulaInRangeAndExactInFp32) {
  std::mt19937 reference(7);
  EXPECT_EQ(reference(), 327741615u);
  reference.seed(7);
  InputGenerator gen(7);
  for (int i = 0; i < 10000; ++i) {
    const std::uint32_t raw = reference();
    const double expected = 0.5 + static_cast<double>(raw >> 9) * std::ldexp(1.0, -23);
    const double got = gen.next();
    ASSERT_EQ(got, expected) << "element " << i;
    ASSERT_GE(got, 0.5);
    ASSERT_LT(got, 1.5);
    ASSERT_EQ(static_cast<double>(static_cast<float>(got)), got) << "not exact in FP32";
  }
}

TEST(InputGenerator, UniformFillsRowMajorInCallOrder) {
  InputGenerator gen(7);
  const HostTensor x = gen.uniform({2, 1, 3});
  const HostTensor y = gen.uniform({2, 2}, DType::FP32);
  EXPECT_EQ(x.dtype(), DType::FP32);
  EXPECT_EQ(x.shape(), (std::vector<std::int64_t>{2, 1, 3}));

  InputGenerator ref(7);
  for (std::int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(x.get(i), ref.next()) << i;
  for (std::int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.get(i), ref.next()) << i;
  EXPECT_EQ(x.at({0, 0, 0}), 0x1.2711ep-1);
  EXPECT_EQ(x.at({0, 0, 1}), 0x1.7465c8p-1);
}

TEST(InputGenerator, DifferentSeedsDiffer) {
  InputGenerator a(7);
  InputGenerator b(8);
  EXPECT_NE(a.next(), b.next());
}

// ---- construction --------------------------------------------------------------

TEST(HostTensor, DefaultIsUndefined) {
  const HostTensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.data(), nullptr);
  EXPECT_THROW(t.get(0), std::logic_error);
  EXPECT_FALSE(t.clone().defined());
}

TEST(HostTensor, Zeros) {
  const HostTensor t = HostTensor::zeros({4, 1, 64}, DType::FP32);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.dtype(), DType::FP32);
  EXPECT_EQ(t.shape(), (std::vector<std::int64_t>{4, 1, 64}));
  EXPECT_EQ(t.numel(), 256);
  EXPECT_EQ(t.nbytes(), 1024u);
  EXPECT_EQ(t.shape_string(), "[4, 1, 64]");
  for (std::int64_t i = 0; i < t.numel(); ++i) ASSERT_EQ(t.get(i), 0.0);
  for (std::size_t i = 0; i < t.nbytes(); ++i) ASSERT_EQ(t.data()[i], std::byte{0});

  const HostTensor i64 = HostTensor::zeros({3}, DType::INT64);
  EXPECT_EQ(i64.nbytes(), 24u);
  const HostTensor empty = HostTensor::zeros({0, 5}, DType::INT32);
  EXPECT_TRUE(empty.defined());
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.nbytes(), 0u);
  const HostTensor scalar = HostTensor::zeros({}, DType::FP32);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.shape_string(), "[]");
}

TEST(HostTensor, NegativeExtentIsRejected) {
  EXPECT_EQ(message_of<std::invalid_argument>([] {
              HostTensor::zeros({2, -1}, DType::FP32);
            }),
            "HostTensor: dim 1 has negative extent -1 (shape [2, -1])");
}

TEST(HostTensor, Arange) {
  const HostTensor t = HostTensor::arange({2, 3}, DType::INT32);
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(t.get(i), static_cast<double>(i));
  EXPECT_EQ(t.at({0, 0}), 0.0);
  EXPECT_EQ(t.at({1, 2}), 5.0);
  EXPECT_EQ(t.at({1, 0}), 3.0);
  std::int32_t raw[6];
  std::memcpy(raw, t.data(), sizeof raw);
  EXPECT_EQ(raw[4], 4);

  const HostTensor f = HostTensor::arange({5}, DType::FP32);
  EXPECT_EQ(f.get(4), 4.0);
}

TEST(HostTensor, RandnIsDeterministicAndStandardNormal) {
  const HostTensor a = HostTensor::randn({100000}, DType::FP32, 3);
  const HostTensor b = HostTensor::randn({100000}, DType::FP32, 3);
  const HostTensor c = HostTensor::randn({100000}, DType::FP32, 4);
  EXPECT_TRUE(equal_exact(a, b));
  EXPECT_FALSE(equal_exact(a, c));
  double sum = 0, sum_sq = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double v = a.get(i);
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sum_sq += v * v;
  }
  const double mean = sum / static_cast<double>(a.numel());
  const double var = sum_sq / static_cast<double>(a.numel()) - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(var, 1.0, 0.03);
  // Odd element counts fill the last element too.
  const HostTensor odd = HostTensor::randn({3}, DType::FP32, 1);
  EXPECT_NE(odd.get(2), 0.0);
}

TEST(HostTensor, ViewOfUserMemory) {
  std::vector<float> buffer(6, 0.0f);
  HostTensor v = HostTensor::view(buffer.data(), {2, 3}, DType::FP32);
  EXPECT_EQ(v.data(), reinterpret_cast<std::byte*>(buffer.data()));
  v.set_at({1, 1}, 2.5);
  EXPECT_EQ(buffer[4], 2.5f);
  buffer[0] = 7.0f;
  EXPECT_EQ(v.get(0), 7.0);
  EXPECT_THROW(HostTensor::view(nullptr, {2}, DType::FP32), std::invalid_argument);
}

// ---- indexing -----------------------------------------------------------------

TEST(HostTensor, IndexDropsLeadingDimAndSharesStorage) {
  HostTensor x = HostTensor::arange({4, 1, 64}, DType::FP32);
  const HostTensor row = x[2];
  EXPECT_EQ(row.shape(), (std::vector<std::int64_t>{1, 64}));
  EXPECT_EQ(row.dtype(), DType::FP32);
  EXPECT_EQ(row.data(), x.data() + 2 * 64 * 4);
  EXPECT_EQ(row.get(0), 128.0);
  EXPECT_EQ(row.at({0, 63}), 191.0);

  HostTensor writable = x[3];
  writable.set(5, -1.0);
  EXPECT_EQ(x.at({3, 0, 5}), -1.0);

  const HostTensor element = x[1][0];
  EXPECT_EQ(element.shape(), (std::vector<std::int64_t>{64}));
  EXPECT_EQ(element.get(1), 65.0);
  const HostTensor scalar = element[3];
  EXPECT_EQ(scalar.shape(), (std::vector<std::int64_t>{}));
  EXPECT_EQ(scalar.get(0), 67.0);
}

TEST(HostTensor, ViewOutlivesOriginalHandle) {
  HostTensor row;
  {
    const HostTensor x = HostTensor::arange({2, 3}, DType::FP32);
    row = x[1];
  }
  EXPECT_EQ(row.get(2), 5.0);  // storage kept alive by the view
}

TEST(HostTensor, CopiesShareStorageClonesDoNot) {
  HostTensor a = HostTensor::zeros({2, 2}, DType::FP32);
  HostTensor copy = a;
  HostTensor deep = a.clone();
  a.set(0, 3.0);
  EXPECT_EQ(copy.get(0), 3.0);
  EXPECT_EQ(deep.get(0), 0.0);
  EXPECT_NE(deep.data(), a.data());
  EXPECT_EQ(a.clone().get(0), 3.0);
}

TEST(HostTensor, IndexOutOfRangeMessages) {
  const HostTensor x = HostTensor::zeros({4, 1, 64}, DType::FP32);
  EXPECT_EQ(message_of<std::out_of_range>([&] { x[5]; }),
            "index 5 out of range for dim 0 of extent 4 (tensor [4, 1, 64])");
  EXPECT_EQ(message_of<std::out_of_range>([&] { x[4]; }),
            "index 4 out of range for dim 0 of extent 4 (tensor [4, 1, 64])");
  EXPECT_EQ(message_of<std::out_of_range>([&] { x[-1]; }),
            "index -1 out of range for dim 0 of extent 4 (tensor [4, 1, 64])");
  EXPECT_EQ(message_of<std::out_of_range>([&] {
              x.at({0, 1, 0});
            }),
            "index 1 out of range for dim 1 of extent 1 (tensor [4, 1, 64])");
  EXPECT_EQ(message_of<std::out_of_range>([&] {
              x.at({0, 0});
            }),
            "index has 2 coordinates but tensor [4, 1, 64] has 3 dims");
  EXPECT_EQ(message_of<std::out_of_range>([&] { x.get(256); }),
            "flat index 256 out of range for 256 elements (tensor [4, 1, 64])");
  const HostTensor scalar = HostTensor::zeros({}, DType::FP32);
  EXPECT_EQ(message_of<std::out_of_range>([&] { scalar[0]; }),
            "cannot index a 0-d tensor (tensor [])");
}

// ---- element conversions ---------------------------------------------------------

TEST(HostTensor, Fp32RoundsToNearest) {
  HostTensor t = HostTensor::zeros({1}, DType::FP32);
  t.set(0, 0.1);
  EXPECT_EQ(t.get(0), static_cast<double>(0.1f));
}

TEST(HostTensor, IntegerSetTruncatesAndWrapsLikeACast) {
  HostTensor i32 = HostTensor::zeros({1}, DType::INT32);
  i32.set(0, 2.7);
  EXPECT_EQ(i32.get(0), 2.0);
  i32.set(0, -2.7);
  EXPECT_EQ(i32.get(0), -2.0);
  i32.set(0, 4294967297.0);  // 2^32 + 1
  EXPECT_EQ(i32.get(0), 1.0);
  i32.set(0, std::nan(""));
  EXPECT_EQ(i32.get(0), 0.0);

  HostTensor i8 = HostTensor::zeros({1}, DType::INT8);
  i8.set(0, 200.0);
  EXPECT_EQ(i8.get(0), -56.0);
  i8.set(0, -129.9);
  EXPECT_EQ(i8.get(0), 127.0);

  HostTensor i16 = HostTensor::zeros({1}, DType::INT16);
  i16.set(0, 65537.0);
  EXPECT_EQ(i16.get(0), 1.0);

  HostTensor i64 = HostTensor::zeros({1}, DType::INT64);
  i64.set(0, -9007199254740992.0);  // -2^53
  EXPECT_EQ(i64.get(0), -9007199254740992.0);
  i64.set(0, 18446744073709551616.0 + 4096.0);  // 2^64 + 2^12 wraps to 2^12
  EXPECT_EQ(i64.get(0), 4096.0);
  i64.set(0, 9223372036854775808.0);  // 2^63 wraps to -2^63
  EXPECT_EQ(i64.get(0), -9223372036854775808.0);
}

TEST(HalfFloat, Fp16Encodings) {
  EXPECT_EQ(float_to_fp16_bits(1.0f), 0x3C00);
  EXPECT_EQ(float_to_fp16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_fp16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_fp16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_fp16_bits(65504.0f), 0x7BFF);  // largest finite
  EXPECT_EQ(float_to_fp16_bits(0x1p-14f), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_fp16_bits(0x1p-24f), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_fp16_bits(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(-std::numeric_limits<float>::infinity()), 0xFC00);
  const std::uint16_t nan = float_to_fp16_bits(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(fp16_bits_to_float(nan)));
}

TEST(HalfFloat, Fp16RoundsToNearestEven) {
  // Ties between 1 and 1 + 2^-10.
  EXPECT_EQ(float_to_fp16_bits(1.0f + 0x1p-11f), 0x3C00);             // tie: down to even 1
  EXPECT_EQ(float_to_fp16_bits(1.0f + 3 * 0x1p-11f), 0x3C02);         // tie: up to even
  EXPECT_EQ(float_to_fp16_bits(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);  // above half
  EXPECT_EQ(float_to_fp16_bits(1.0f + 0x1p-11f - 0x1p-20f), 0x3C00);  // below half
  // Mantissa carry into the exponent: 2 - 2^-11 is a tie between 2 - 2^-10 (odd) and 2.
  EXPECT_EQ(float_to_fp16_bits(2.0f - 0x1p-11f), 0x4000);
  // Overflow: 65520 is the tie between 65504 and 65536 (infinity).
  EXPECT_EQ(float_to_fp16_bits(65519.0f), 0x7BFF);
  EXPECT_EQ(float_to_fp16_bits(65520.0f), 0x7C00);
  EXPECT_EQ(float_to_fp16_bits(1e10f), 0x7C00);
  // Subnormals.
  EXPECT_EQ(float_to_fp16_bits(0x1p-25f), 0x0000);  // tie: down to 0
  EXPECT_EQ(float_to_fp16_bits(0x1.8p-25f), 0x0001);
  EXPECT_EQ(float_to_fp16_bits(3 * 0x1p-25f), 0x0002);  // tie: up to even 2
  EXPECT_EQ(float_to_fp16_bits(0x1p-26f), 0x0000);
  EXPECT_EQ(float_to_fp16_bits(-0x1p-26f), 0x8000);
  EXPECT_EQ(float_to_fp16_bits(0x1p-14f - 0x1p-25f), 0x0400);  // rounds up into the normals
  EXPECT_EQ(float_to_fp16_bits(1e-30f), 0x0000);
}

TEST(HalfFloat, Fp16FromDoubleRoundsOnce) {
  // Through float, 1 + 2^-11 + 2^-40 would first become the tie 1 + 2^-11
  // and then round down; rounded once it is above the tie.
  EXPECT_EQ(double_to_fp16_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3C01);
  EXPECT_EQ(float_to_fp16_bits(static_cast<float>(1.0 + 0x1p-11 + 0x1p-40)), 0x3C00);
  EXPECT_EQ(double_to_fp16_bits(1e-300), 0x0000);
  EXPECT_EQ(double_to_fp16_bits(-1e300), 0xFC00);
  EXPECT_EQ(double_to_fp16_bits(std::numeric_limits<double>::denorm_min()), 0x0000);
}

TEST(HalfFloat, Fp16RoundTripsEveryFiniteEncoding) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    if ((h & 0x7C00) == 0x7C00) continue;  // inf/NaN
    const float f = fp16_bits_to_float(h);
    ASSERT_EQ(float_to_fp16_bits(f), h) << std::hex << bits;
  }
  EXPECT_EQ(fp16_bits_to_float(0x3C00), 1.0f);
  EXPECT_EQ(fp16_bits_to_float(0x3C01), 1.0f + 0x1p-10f);
  EXPECT_EQ(fp16_bits_to_float(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_bits_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_bits_to_float(0xC000), -2.0f);
  EXPECT_EQ(fp16_bits_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::signbit(fp16_bits_to_float(0x8000)));
}

TEST(HalfFloat, Bf16Encodings) {
  EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16_bits(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f), 0x3F80);      // tie: down to even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3F82);  // tie: up to even
  EXPECT_EQ(float_to_bf16_bits(1.0f + 0x1p-8f + 0x1p-20f), 0x3F81);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::max()), 0x7F80);  // rounds to inf
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()), 0x7FC0);
  EXPECT_EQ(float_to_bf16_bits(std::numeric_limits<float>::denorm_min()), 0x0000);  // << half ulp
  EXPECT_EQ(float_to_bf16_bits(0x1p-133f), 0x0001);                // smallest BF16 subnormal
  EXPECT_EQ(double_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3F81);  // rounds once
  EXPECT_EQ(bf16_bits_to_float(0x3F81), 1.0f + 0x1p-7f);
  EXPECT_EQ(bf16_bits_to_float(0x7F7F), std::bit_cast<float>(0x7F7F0000u));
}

TEST(HalfFloat, Bf16RoundTripsEveryFiniteEncoding) {
  for (std::uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    if ((h & 0x7F80) == 0x7F80) continue;  // inf/NaN
    ASSERT_EQ(float_to_bf16_bits(bf16_bits_to_float(h)), h) << std::hex << bits;
  }
}

TEST(HostTensor, Fp16AndBf16StoreTheirEncodings) {
  HostTensor h = HostTensor::zeros({3}, DType::FP16);
  EXPECT_EQ(h.nbytes(), 6u);
  h.set(0, 1.0 + 0x1p-11);
  h.set(1, 1.0 + 3 * 0x1p-11);
  h.set(2, 1.0 + 0x1p-11 + 0x1p-40);
  std::uint16_t raw[3];
  std::memcpy(raw, h.data(), sizeof raw);
  EXPECT_EQ(raw[0], 0x3C00);
  EXPECT_EQ(raw[1], 0x3C02);
  EXPECT_EQ(raw[2], 0x3C01);
  EXPECT_EQ(h.get(0), 1.0);
  EXPECT_EQ(h.get(1), 1.0 + 0x1p-9);

  HostTensor b = HostTensor::zeros({2}, DType::BF16);
  b.set(0, -1.5);
  b.set(1, 1.0 + 3 * 0x1p-8);
  std::memcpy(raw, b.data(), 4);
  EXPECT_EQ(raw[0], 0xBFC0);
  EXPECT_EQ(raw[1], 0x3F82);
  EXPECT_EQ(b.get(0), -1.5);
  EXPECT_EQ(b.get(1), 1.0 + 0x1p-6);

  InputGenerator gen(7);
  const HostTensor u = gen.uniform({2}, DType::FP16);
  EXPECT_EQ(u.dtype(), DType::FP16);
  EXPECT_EQ(u.get(0), static_cast<double>(fp16_bits_to_float(double_to_fp16_bits(0x1.2711ep-1))));
}

// ---- comparisons -----------------------------------------------------------------

TEST(Compare, MaxAbsDiff) {
  HostTensor a = HostTensor::arange({2, 3}, DType::FP32);
  HostTensor b = a.clone();
  EXPECT_EQ(max_abs_diff(a, b), 0.0);
  b.set(4, 4.25);
  b.set(1, 0.5);
  EXPECT_EQ(max_abs_diff(a, b), 0.5);
  EXPECT_EQ(max_abs_diff(b, a), 0.5);
  b.set(5, std::nan(""));
  EXPECT_TRUE(std::isnan(max_abs_diff(a, b)));

  HostTensor inf_a = HostTensor::zeros({1}, DType::FP32);
  inf_a.set(0, INFINITY);
  EXPECT_EQ(max_abs_diff(inf_a, inf_a.clone()), 0.0);
}

TEST(Compare, Allclose) {
  HostTensor golden = HostTensor::zeros({2}, DType::FP32);
  golden.set(0, 4.0);
  HostTensor out = golden.clone();
  EXPECT_TRUE(allclose(out, golden));
  out.set(0, 5.0);  // |5 - 4| = 1 <= 0 + 0.25 * 4
  EXPECT_TRUE(allclose(out, golden, 0.25, 0.0));
  EXPECT_FALSE(allclose(out, golden, 0.25 - 0x1p-20, 0.0));
  out.set(0, 4.0);
  out.set(1, 0.25);  // golden 0: only atol counts
  EXPECT_TRUE(allclose(out, golden, 1.0, 0.25));
  EXPECT_FALSE(allclose(out, golden, 1.0, 0.125));
  // Default tolerances (docs/ladder-steps.md §1): 1e-5 + 1e-5 * |g|.
  HostTensor one = HostTensor::zeros({1}, DType::FP32);
  one.set(0, 1.0);
  HostTensor near = one.clone();
  near.set(0, 1.0 + 0x1p-17);  // 7.6e-6 <= 2e-5
  EXPECT_TRUE(allclose(near, one));
  near.set(0, 1.0 + 0x1p-15);  // 3.05e-5 > 2e-5
  EXPECT_FALSE(allclose(near, one));
  near.set(0, std::nan(""));
  EXPECT_FALSE(allclose(near, one));
}

TEST(Compare, EqualExactIsBitwise) {
  HostTensor a = HostTensor::zeros({2}, DType::FP32);
  HostTensor b = a.clone();
  EXPECT_TRUE(equal_exact(a, b));
  b.set(1, -0.0);
  EXPECT_FALSE(equal_exact(a, b));  // -0 and +0 differ bitwise
  EXPECT_EQ(max_abs_diff(a, b), 0.0);
  EXPECT_TRUE(
      equal_exact(HostTensor::zeros({0}, DType::FP32), HostTensor::zeros({0}, DType::FP32)));
}

TEST(Compare, MismatchedShapeOrDtypeThrows) {
  const HostTensor a = HostTensor::zeros({2, 3}, DType::FP32);
  const HostTensor b = HostTensor::zeros({3, 2}, DType::FP32);
  const HostTensor c = HostTensor::zeros({2, 3}, DType::INT32);
  EXPECT_EQ(message_of<std::invalid_argument>([&] { max_abs_diff(a, b); }),
            "max_abs_diff: shape mismatch: [2, 3] vs [3, 2]");
  EXPECT_EQ(message_of<std::invalid_argument>([&] { allclose(a, b); }),
            "allclose: shape mismatch: [2, 3] vs [3, 2]");
  EXPECT_EQ(message_of<std::invalid_argument>([&] { equal_exact(a, b); }),
            "equal_exact: shape mismatch: [2, 3] vs [3, 2]");
  EXPECT_EQ(message_of<std::invalid_argument>([&] { max_abs_diff(a, c); }),
            "max_abs_diff: dtype mismatch: FP32 [2, 3] vs INT32 [2, 3]");
  EXPECT_EQ(message_of<std::invalid_argument>([&] { allclose(c, a); }),
            "allclose: dtype mismatch: INT32 [2, 3] vs FP32 [2, 3]");
  EXPECT_EQ(message_of<std::invalid_argument>([&] { equal_exact(a, HostTensor{}); }),
            "equal_exact: undefined (default) tensor");
}

}  // namespace
}  // namespace anyp
