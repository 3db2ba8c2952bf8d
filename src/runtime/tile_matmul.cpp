// tile_matmul.cpp — the matmul family on tiles (see tile_matmul.hpp).
#include "runtime/tile_matmul.hpp"

#include <cstring>
#include <vector>

#include "common/element_codec.hpp"
#include "common/internal_check.hpp"
#include "runtime/sgemm_kernels.hpp"
#include "runtime/tile_math_avx.hpp"

namespace anyp::runtime {
namespace {

// n elements of dtype at p as floats (exact for FP16/BF16/FP32), or p itself.
const float* as_floats(DType dtype, const std::byte* p, std::size_t n, std::vector<float>& buf) {
  if (dtype == DType::FP32) return reinterpret_cast<const float*>(p);
  buf.resize(n);
  if (widen_half_avx(dtype, p, buf.data(), n)) return buf.data();
  convert_elements(p, dtype, reinterpret_cast<std::byte*>(buf.data()), DType::FP32, n);
  return buf.data();
}

std::vector<std::int32_t> as_int32(DType dtype, const std::byte* p, std::size_t n) {
  std::vector<std::int32_t> v(n);
  convert_elements(p, dtype, reinterpret_cast<std::byte*>(v.data()), DType::INT32, n);
  return v;
}

// Writes the initial accumulator of every batch into out.
void start_accumulators(DType acc_dtype, MatmulDims d, ir::MatmulInit init,
                        const std::byte* init_data, DType init_dtype, std::byte* out) {
  const std::size_t z = dtype_bytes(acc_dtype);
  const std::size_t mn = static_cast<std::size_t>(d.m * d.n);
  if (init == ir::MatmulInit::Acc) {
    if (init_data != out) std::memmove(out, init_data, static_cast<std::size_t>(d.batch) * mn * z);
    return;
  }
  ANYP_CHECK(init == ir::MatmulInit::Bias, "start_accumulators without an initial value");
  std::vector<std::byte> row(static_cast<std::size_t>(d.n) * z);
  convert_elements(init_data, init_dtype, row.data(), acc_dtype, static_cast<std::size_t>(d.n));
  for (std::int64_t r = 0; r < d.batch * d.m; ++r)
    std::memcpy(out + static_cast<std::size_t>(r) * row.size(), row.data(), row.size());
}

}  // namespace

void tile_matmul(DType operand_dtype, DType acc_dtype, MatmulDims d, const std::byte* a,
                 const std::byte* b, ir::MatmulInit init, const std::byte* init_data,
                 DType init_dtype, std::byte* out) {
  const bool accumulate = init != ir::MatmulInit::Zero;
  if (accumulate) start_accumulators(acc_dtype, d, init, init_data, init_dtype, out);
  const std::size_t mk = static_cast<std::size_t>(d.m * d.k),
                    kn = static_cast<std::size_t>(d.k * d.n),
                    mn = static_cast<std::size_t>(d.m * d.n);
  const std::size_t z = dtype_bytes(operand_dtype);
  if (acc_dtype == DType::FP32) {
    static thread_local std::vector<float> wa, wb;
    for (std::int64_t p = 0; p < d.batch; ++p) {
      const std::size_t q = static_cast<std::size_t>(p);
      const float* fa = as_floats(operand_dtype, a + q * mk * z, mk, wa);
      const float* fb = as_floats(operand_dtype, b + q * kn * z, kn, wb);
      sgemm(d.m, d.n, d.k, fa, fb, reinterpret_cast<float*>(out) + q * mn, accumulate);
    }
    return;
  }
  ANYP_CHECK(acc_dtype == DType::INT32, "an integer matmul accumulates in INT32");
  for (std::int64_t p = 0; p < d.batch; ++p) {
    const std::size_t q = static_cast<std::size_t>(p);
    const std::vector<std::int32_t> ia = as_int32(operand_dtype, a + q * mk * z, mk);
    const std::vector<std::int32_t> ib = as_int32(operand_dtype, b + q * kn * z, kn);
    std::vector<std::uint32_t> acc(mn, 0);
    if (accumulate) std::memcpy(acc.data(), out + q * mn * 4, mn * 4);
    // i-k-j order: the inner loop runs along a row of b and of acc.
    for (std::int64_t i = 0; i < d.m; ++i)
      for (std::int64_t kk = 0; kk < d.k; ++kk) {
        const std::uint32_t x =
            static_cast<std::uint32_t>(ia[static_cast<std::size_t>(i * d.k + kk)]);
        const std::int32_t* brow = ib.data() + kk * d.n;
        std::uint32_t* arow = acc.data() + i * d.n;
        for (std::int64_t j = 0; j < d.n; ++j) arow[j] += x * static_cast<std::uint32_t>(brow[j]);
      }
    std::memcpy(out + q * mn * 4, acc.data(), mn * 4);
  }
}

}  // namespace anyp::runtime
