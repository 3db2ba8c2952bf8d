// host_tensor.cpp — HostTensor (host-side dtype/shape/contiguous storage),
// the ladder input generator and the host comparison helpers
// (see include/anyp/host_tensor.hpp).
#include "anyp/host_tensor.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/element_codec.hpp"

namespace anyp {
namespace {

std::string shape_to_string(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  s += "]";
  return s;
}

std::int64_t product(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

void check_shape(const std::vector<std::int64_t>& shape) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw std::invalid_argument("HostTensor: dim " + std::to_string(i) + " has negative extent " +
                                  std::to_string(shape[i]) + " (shape " + shape_to_string(shape) +
                                  ")");
    }
  }
}

std::string describe(const HostTensor& t) {
  return std::string(dtype_name(t.dtype())) + " " + t.shape_string();
}

void check_same_layout(const char* what, const HostTensor& a, const HostTensor& b) {
  if (!a.defined() || !b.defined()) {
    throw std::invalid_argument(std::string(what) + ": undefined (default) tensor");
  }
  if (a.shape() != b.shape()) {
    throw std::invalid_argument(std::string(what) + ": shape mismatch: " + a.shape_string() +
                                " vs " + b.shape_string());
  }
  if (a.dtype() != b.dtype()) {
    throw std::invalid_argument(std::string(what) + ": dtype mismatch: " + describe(a) + " vs " +
                                describe(b));
  }
}

}  // namespace

// ---- construction ----------------------------------------------------------

HostTensor HostTensor::zeros(std::vector<std::int64_t> shape, DType dtype) {
  check_shape(shape);
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  // make_shared<T[]>(n) value-initialises: every byte is zero.
  t.storage_ = std::make_shared<std::byte[]>(t.nbytes());
  t.data_ = t.storage_.get();
  return t;
}

HostTensor HostTensor::randn(std::vector<std::int64_t> shape, DType dtype, std::uint64_t seed) {
  HostTensor t = zeros(std::move(shape), dtype);
  // Seeds below 2^32 seed the engine directly; wider seeds fold their top half.
  std::mt19937 engine(static_cast<std::uint32_t>(seed ^ (seed >> 32)));
  // Box-Muller on 53-bit uniforms, spelled out so the values do not depend on
  // the standard library's normal_distribution.
  auto uniform01 = [&engine] {               // (0, 1]
    const std::uint64_t hi = engine() >> 5;  // 27 bits
    const std::uint64_t lo = engine() >> 6;  // 26 bits
    return (static_cast<double>((hi << 26) | lo) + 1.0) * 0x1p-53;
  };
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; i += 2) {
    const double radius = std::sqrt(-2.0 * std::log(uniform01()));
    const double angle = 2.0 * std::numbers::pi * uniform01();
    t.set(i, radius * std::cos(angle));
    if (i + 1 < n) t.set(i + 1, radius * std::sin(angle));
  }
  return t;
}

HostTensor HostTensor::arange(std::vector<std::int64_t> shape, DType dtype) {
  HostTensor t = zeros(std::move(shape), dtype);
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) t.set(i, static_cast<double>(i));
  return t;
}

HostTensor HostTensor::view(void* data, std::vector<std::int64_t> shape, DType dtype) {
  check_shape(shape);
  HostTensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  if (data == nullptr && t.numel() != 0) {
    throw std::invalid_argument("HostTensor::view: null data for tensor " + t.shape_string());
  }
  t.data_ = static_cast<std::byte*>(data);
  return t;
}

// ---- shape and indexing ----------------------------------------------------

std::int64_t HostTensor::numel() const { return product(shape_); }

std::string HostTensor::shape_string() const { return shape_to_string(shape_); }

HostTensor HostTensor::operator[](std::int64_t index) const {
  if (shape_.empty()) {
    throw std::out_of_range("cannot index a 0-d tensor (tensor [])");
  }
  if (index < 0 || index >= shape_[0]) {
    throw std::out_of_range("index " + std::to_string(index) +
                            " out of range for dim 0 of extent " + std::to_string(shape_[0]) +
                            " (tensor " + shape_string() + ")");
  }
  HostTensor t;
  t.dtype_ = dtype_;
  t.shape_.assign(shape_.begin() + 1, shape_.end());
  t.storage_ = storage_;
  const std::size_t row_bytes = static_cast<std::size_t>(t.numel()) * dtype_bytes(dtype_);
  t.data_ = data_ + static_cast<std::size_t>(index) * row_bytes;
  return t;
}

double HostTensor::get(std::int64_t flat_index) const {
  return decode_element(element("HostTensor::get", flat_index), dtype_);
}

void HostTensor::set(std::int64_t flat_index, double value) {
  encode_element(element("HostTensor::set", flat_index), dtype_, value);
}

std::int64_t HostTensor::get_int(std::int64_t flat_index) const {
  return decode_integer(element("HostTensor::get_int", flat_index), dtype_);
}

void HostTensor::set_int(std::int64_t flat_index, std::int64_t value) {
  encode_integer(element("HostTensor::set_int", flat_index), dtype_, value);
}

std::byte* HostTensor::element(const char* what, std::int64_t flat_index) const {
  if (!defined()) throw std::logic_error(std::string(what) + " on an undefined (default) tensor");
  if (flat_index < 0 || flat_index >= numel()) {
    throw std::out_of_range("flat index " + std::to_string(flat_index) + " out of range for " +
                            std::to_string(numel()) + " elements (tensor " + shape_string() + ")");
  }
  return data_ + static_cast<std::size_t>(flat_index) * dtype_bytes(dtype_);
}

namespace {

// The shape's text is made only for an error: at() and set_at() are called
// per element by host reference loops.
std::int64_t flatten(const std::vector<std::int64_t>& shape,
                     std::initializer_list<std::int64_t> index) {
  if (index.size() != shape.size()) {
    throw std::out_of_range("index has " + std::to_string(index.size()) +
                            " coordinates but tensor " + shape_to_string(shape) + " has " +
                            std::to_string(shape.size()) + " dims");
  }
  std::int64_t flat = 0;
  std::size_t dim = 0;
  for (std::int64_t i : index) {
    if (i < 0 || i >= shape[dim]) {
      throw std::out_of_range("index " + std::to_string(i) + " out of range for dim " +
                              std::to_string(dim) + " of extent " + std::to_string(shape[dim]) +
                              " (tensor " + shape_to_string(shape) + ")");
    }
    flat = flat * shape[dim] + i;
    ++dim;
  }
  return flat;
}

}  // namespace

double HostTensor::at(std::initializer_list<std::int64_t> index) const {
  return get(flatten(shape_, index));
}

void HostTensor::set_at(std::initializer_list<std::int64_t> index, double value) {
  set(flatten(shape_, index), value);
}

std::int64_t HostTensor::at_int(std::initializer_list<std::int64_t> index) const {
  return get_int(flatten(shape_, index));
}

void HostTensor::set_at_int(std::initializer_list<std::int64_t> index, std::int64_t value) {
  set_int(flatten(shape_, index), value);
}

HostTensor HostTensor::clone() const {
  if (!defined()) return HostTensor{};
  HostTensor t = zeros(shape_, dtype_);
  if (nbytes() != 0) std::memcpy(t.data_, data_, nbytes());
  return t;
}

// ---- inputs ----------------------------------------------------------------

double InputGenerator::next() { return 0.5 + static_cast<double>(engine_() >> 9) * 0x1p-23; }

HostTensor InputGenerator::uniform(std::vector<std::int64_t> shape, DType dtype) {
  HostTensor t = HostTensor::zeros(std::move(shape), dtype);
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) t.set(i, next());
  return t;
}

// ---- comparisons -----------------------------------------------------------

namespace {

// |a[i] - b[i]| as a double, and whether they are equal: integers compared
// exactly (INT64 values above 2^53 that differ by 1 differ here too).
struct ElementDiff {
  double x, y, diff;
  bool equal;
};
ElementDiff element_diff(const HostTensor& a, const HostTensor& b, std::int64_t i) {
  if (!dtype_is_float(a.dtype())) {
    const std::int64_t x = a.get_int(i), y = b.get_int(i);
    const __int128 d = static_cast<__int128>(x) - static_cast<__int128>(y);
    return {static_cast<double>(x), static_cast<double>(y), static_cast<double>(d < 0 ? -d : d),
            x == y};
  }
  const double x = a.get(i), y = b.get(i);
  return {x, y, std::fabs(x - y), x == y};  // equal: also equal infinities
}

}  // namespace

double max_abs_diff(const HostTensor& a, const HostTensor& b) {
  check_same_layout("max_abs_diff", a, b);
  double worst = 0.0;
  const std::int64_t n = a.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const ElementDiff e = element_diff(a, b, i);
    if (e.equal) continue;
    if (std::isnan(e.diff)) return std::numeric_limits<double>::quiet_NaN();
    if (e.diff > worst) worst = e.diff;
  }
  return worst;
}

bool allclose(const HostTensor& a, const HostTensor& b, double rtol, double atol) {
  check_same_layout("allclose", a, b);
  const std::int64_t n = a.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const ElementDiff e = element_diff(a, b, i);
    if (e.equal) continue;
    // Written so that NaN fails.
    if (!(e.diff <= atol + rtol * std::fabs(e.y))) return false;
  }
  return true;
}

bool equal_exact(const HostTensor& a, const HostTensor& b) {
  check_same_layout("equal_exact", a, b);
  return a.nbytes() == 0 || std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

}  // namespace anyp
