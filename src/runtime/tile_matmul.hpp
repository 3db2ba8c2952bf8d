// tile_matmul.hpp — the matmul family on tiles (pl::matmul, _acc, _bias,
// batch_*, gemv_*). Floating operands (FP32, FP16, BF16) are widened to
// FP32 exactly and multiplied by sgemm (sgemm_kernels.hpp): every result is
// one chain of FP32 fused multiply-adds in k order from its initial value
// (0, the accumulator's element, or the bias element), as the cube unit
// accumulates into its FP32 buffer. Integer operands (INT8, INT16, INT32)
// accumulate in INT32, wrapping; the order does not matter there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anyp/dtype.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::runtime {

struct MatmulDims {
  std::int64_t batch = 1, m = 1, k = 1, n = 1;
};

// out [batch, m, n] of acc_dtype (FP32 or INT32) = init + a [batch, m, k] @
// b [batch, k, n], a and b of operand_dtype. init: Zero (init_data unused),
// Acc (init_data [batch, m, n] of acc_dtype; it may be out), Bias
// (init_data [1, n] of init_dtype, widened). out is disjoint from a and b.
void tile_matmul(DType operand_dtype, DType acc_dtype, MatmulDims d, const std::byte* a,
                 const std::byte* b, ir::MatmulInit init, const std::byte* init_data,
                 DType init_dtype, std::byte* out);

}  // namespace anyp::runtime
