// arg_ref.hpp — one argument of a host call (compile() and a run): a host
// tensor, by reference, or an integer or floating scalar. The compiler binds
// dims and scalars from these; the API checks them against the plan.
#pragma once

#include <cstdint>
#include <variant>

namespace anyp {

class HostTensor;  // anyp/host_tensor.hpp: an ArgRef holds only a pointer to one

// One argument of a host call: a host tensor (by reference) or a scalar.
class ArgRef {
 public:
  ArgRef(const HostTensor& t) : value_(&t) {}  // NOLINT
  ArgRef(int v) : value_(std::int64_t{v}) {}   // NOLINT
  ArgRef(std::int64_t v) : value_(v) {}        // NOLINT
  ArgRef(double v) : value_(v) {}              // NOLINT
  bool is_tensor() const { return std::holds_alternative<const HostTensor*>(value_); }
  const HostTensor& tensor() const { return *std::get<const HostTensor*>(value_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(value_); }
  std::int64_t int_value() const { return std::get<std::int64_t>(value_); }
  double float_value() const { return std::get<double>(value_); }

 private:
  std::variant<const HostTensor*, std::int64_t, double> value_;
};

}  // namespace anyp
