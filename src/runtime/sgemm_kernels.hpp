// sgemm_kernels.hpp — the FP32 matrix product behind pl::matmul:
// C[m, n] (+)= A[m, k] @ B[k, n], row-major and contiguous. Every element is
// one chain of fused multiply-adds in k order, starting from 0 or from C's
// value, so the result does not depend on the machine: AVX-512 (12 x 32
// register blocks), AVX2+FMA (6 x 16) and the portable std::fma loop give
// the same bits. Packed panels of A and B, blocked by 256 along k, keep the
// operands in L1/L2; products up to 64 x 64 x 64 skip the packing (4 x 16
// blocks of C in registers); bench/compute_bench compares it with OpenBLAS
// sgemm.
#pragma once

#include <cstdint>

namespace anyp::runtime {

// c = a @ b, or c += a @ b with accumulate (c's value starts every chain).
void sgemm(std::int64_t m, std::int64_t n, std::int64_t k, const float* a, const float* b, float* c,
           bool accumulate);

// Which kernel sgemm uses on this machine: "avx512", "avx2" or "portable".
const char* sgemm_kernel_name();

}  // namespace anyp::runtime
