// element_codec_test.cpp — the one conversion between element bytes and
// double (common/element_codec.hpp), shared by HostTensor and the runtime:
// floats round to nearest even (FP16/BF16 once, from double), integers
// truncate toward zero and wrap, NaN and infinities become 0 in integers.
#include "common/element_codec.hpp"

#include <gtest/gtest.h>

#include <anyp/host_tensor.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

namespace anyp {
namespace {

double roundtrip(DType t, double v) {
  std::byte buf[8] = {};
  encode_element(buf, t, v);
  return decode_element(buf, t);
}

TEST(ElementCodec, IntegersTruncateTowardZeroAndWrap) {
  EXPECT_EQ(roundtrip(DType::INT8, 127), 127);
  EXPECT_EQ(roundtrip(DType::INT8, 128), -128);
  EXPECT_EQ(roundtrip(DType::INT8, 300), 44);
  EXPECT_EQ(roundtrip(DType::INT8, -2.7), -2);
  EXPECT_EQ(roundtrip(DType::INT16, 32768), -32768);
  EXPECT_EQ(roundtrip(DType::INT32, 2147483648.0), -2147483648.0);
  EXPECT_EQ(roundtrip(DType::INT32, -2147483649.0), 2147483647.0);
  EXPECT_EQ(roundtrip(DType::INT32, 2.9), 2);
  EXPECT_EQ(roundtrip(DType::INT64, 9007199254740992.0), 9007199254740992.0);  // 2^53
  EXPECT_EQ(roundtrip(DType::INT64, -9223372036854775808.0), -9223372036854775808.0);
  for (DType t : {DType::INT8, DType::INT16, DType::INT32, DType::INT64}) {
    EXPECT_EQ(roundtrip(t, std::nan("")), 0) << dtype_name(t);
    EXPECT_EQ(roundtrip(t, std::numeric_limits<double>::infinity()), 0) << dtype_name(t);
  }
}

TEST(ElementCodec, FloatsRoundToNearestEvenOnce) {
  EXPECT_EQ(roundtrip(DType::FP32, 0.1), static_cast<double>(0.1f));
  // 1 + 2^-11 is halfway between FP16 neighbours 1 and 1 + 2^-10: even is 1.
  EXPECT_EQ(roundtrip(DType::FP16, 1.0 + 0x1p-11), 1.0);
  // Just above halfway rounds up; through float first it would round down twice.
  EXPECT_EQ(roundtrip(DType::FP16, 1.0 + 0x1p-11 + 0x1p-40), 1.0 + 0x1p-10);
  EXPECT_EQ(roundtrip(DType::BF16, 1.0 + 0x1p-8), 1.0);
  EXPECT_EQ(roundtrip(DType::BF16, 1.0 + 0x1p-8 + 0x1p-40), 1.0 + 0x1p-7);
  EXPECT_EQ(roundtrip(DType::FP16, 65520.0), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(roundtrip(DType::FP16, std::nan(""))));
}

TEST(ElementCodec, BatchedFormsMatchOneByOne) {
  const std::vector<double> values = {0.5, -1.25, 3.0, 70000.5, -0.0, 1e-8, 255.9, -128.5};
  for (DType t : {DType::FP32, DType::FP16, DType::BF16, DType::INT8, DType::INT16, DType::INT32,
                  DType::INT64}) {
    std::vector<std::byte> bytes(values.size() * dtype_bytes(t));
    encode_elements(bytes.data(), t, values.data(), values.size());
    std::vector<double> back(values.size());
    decode_elements(bytes.data(), t, back.data(), values.size());
    for (std::size_t i = 0; i < values.size(); ++i)
      EXPECT_EQ(back[i], roundtrip(t, values[i])) << dtype_name(t) << " " << values[i];
  }
}

TEST(ElementCodec, HostTensorUsesTheSameEncoding) {
  for (DType t : {DType::FP16, DType::BF16, DType::INT8, DType::INT32}) {
    HostTensor h = HostTensor::zeros({4}, t);
    const double values[] = {1.0 + 0x1p-11 + 0x1p-40, 300.0, -2.7, 1e5};
    for (int i = 0; i < 4; ++i) {
      h.set(i, values[i]);
      EXPECT_EQ(h.get(i), roundtrip(t, values[i])) << dtype_name(t) << " " << values[i];
      EXPECT_EQ(decode_element(h.data() + i * dtype_bytes(t), t), h.get(i));
    }
  }
}

}  // namespace
}  // namespace anyp
