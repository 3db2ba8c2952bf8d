// native_half_loops.hpp — FP16 and BF16 elementwise loops as an expert
// writes them for this CPU, the baseline of issue 52's "BF16/FP16 with the
// CPU's instructions" (tile_math_bench): out[i] = a[i] op b[i] over n
// 16-bit elements, built with -O3 -march=native. FP16 is _Float16
// arithmetic (on a CPU with AVX512-FP16, one vaddph per 32 elements); BF16
// widens by a shift, computes in float and narrows with AVX512-BF16's
// vcvtneps2bf16 where the CPU has it (which flushes subnormal inputs to
// zero: faster, not the same bits), else rounds to nearest even in integers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace bench {

enum class HalfOp { Add, Mul, Max };

// False when this build's CPU has no native FP16 arithmetic (then nothing is done).
bool native_fp16(HalfOp op, const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out,
                 std::size_t n);
void native_bf16(HalfOp op, const std::uint16_t* a, const std::uint16_t* b, std::uint16_t* out,
                 std::size_t n);

}  // namespace bench
