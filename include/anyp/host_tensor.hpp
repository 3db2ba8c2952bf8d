// host_tensor.hpp — a small host-side tensor: dtype, shape, contiguous
// row-major storage (owned, or a zero-copy view of user memory).
//
//   anyp::InputGenerator gen(7);                      // the examples' inputs
//   auto x = gen.uniform({P, 1, 64}, anyp::DType::FP32);
//   auto y = anyp::HostTensor::zeros({P, 1, 64}, anyp::DType::FP32);
//   compiled(x, y);
//   double d = anyp::max_abs_diff(y, golden);
//
// Elements are read and written as double (`get`/`set` on a flat index,
// `at` on a multi-index) or, exactly, as int64 (`get_int`/`set_int`,
// `at_int`/`set_at_int`: integers never pass through double, so INT64 is
// exact over its whole range); FP16/BF16 are stored in their 16-bit
// encodings. Conversions: set() truncates toward zero and wraps into integer
// dtypes and rounds to nearest even into floating ones; set_int() wraps into
// narrower integers and rounds to nearest even (once) into floating ones.
// Copies of a HostTensor share storage (like a handle); `clone()` copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "anyp/dtype.hpp"

namespace anyp {

class HostTensor {
 public:
  HostTensor() = default;

  static HostTensor zeros(std::vector<std::int64_t> shape, DType dtype);
  // Normally distributed values (mean 0, stddev 1) from std::mt19937(seed).
  static HostTensor randn(std::vector<std::int64_t> shape, DType dtype, std::uint64_t seed);
  // 0, 1, 2, ... in row-major order.
  static HostTensor arange(std::vector<std::int64_t> shape, DType dtype);
  // A view of user memory; the caller keeps `data` alive and sized.
  static HostTensor view(void* data, std::vector<std::int64_t> shape, DType dtype);

  DType dtype() const { return dtype_; }
  const std::vector<std::int64_t>& shape() const { return shape_; }
  std::int64_t numel() const;
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * dtype_bytes(dtype_); }
  std::byte* data() const { return data_; }
  bool defined() const { return data_ != nullptr || numel() == 0; }

  // Drops the leading dim: x[r] of a [P, 1, S] tensor is the [1, S] slice
  // (a view sharing storage). Throws std::out_of_range naming index/extent.
  HostTensor operator[](std::int64_t index) const;

  double get(std::int64_t flat_index) const;
  void set(std::int64_t flat_index, double value);
  double at(std::initializer_list<std::int64_t> index) const;
  void set_at(std::initializer_list<std::int64_t> index, double value);
  std::int64_t get_int(std::int64_t flat_index) const;
  void set_int(std::int64_t flat_index, std::int64_t value);
  std::int64_t at_int(std::initializer_list<std::int64_t> index) const;
  void set_at_int(std::initializer_list<std::int64_t> index, std::int64_t value);

  HostTensor clone() const;
  std::string shape_string() const;  // "[4, 1, 64]"

 private:
  // The bytes of element flat_index; throws naming `what` when out of range.
  std::byte* element(const char* what, std::int64_t flat_index) const;

  DType dtype_ = DType::FP32;
  std::vector<std::int64_t> shape_;
  std::shared_ptr<std::byte[]> storage_;  // null for views of user memory
  std::byte* data_ = nullptr;
};

// The ladder's input generator (docs/ladder-steps.md §1): a std::mt19937 seeded with
// the step number; each element is 0.5 + (g() >> 9) * 2^-23, uniform on
// [0.5, 1.5) and exact in FP32. Tensors are filled in call order, row-major.
class InputGenerator {
 public:
  explicit InputGenerator(std::uint32_t seed) : engine_(seed) {}
  HostTensor uniform(std::vector<std::int64_t> shape, DType dtype = DType::FP32);
  double next();  // one value, as above

 private:
  std::mt19937 engine_;
};

// max |a - b| over all elements (shapes must match; throws otherwise).
double max_abs_diff(const HostTensor& a, const HostTensor& b);
// Every element: |a - b| <= atol + rtol * |b|.
bool allclose(const HostTensor& a, const HostTensor& b, double rtol = 1e-5, double atol = 1e-5);
// Bitwise equal shapes, dtypes and values.
bool equal_exact(const HostTensor& a, const HostTensor& b);

}  // namespace anyp
