// plan.hpp — a program specialised for one P: the runtime's part
// (runtime::Executable: lowered code, per-rank dispatch lists, window
// layout) next to what only the compiler and the artifact need (the
// symbolic program, the dim bindings, the compiled-in scalar arguments).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/function.hpp"
#include "runtime/executable.hpp"

namespace anyp::detail {

// A scalar host argument: its value is bound at compile time.
struct ArgScalar {
  bool is_int = true;
  std::int64_t int_value = 0;
  double float_value = 0;
  bool operator==(const ArgScalar&) const = default;
};

struct HostParamSpec {
  std::string name;
  bool is_tensor = true;
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;  // tensors: the bound shape
  ArgScalar scalar;                 // scalars: the value compiled in
};

struct Plan {
  ir::Program program;  // symbolic
  ir::DimBindings bindings;
  std::string platform;
  // The cost model the collectives' estimates were priced on (its `name`),
  // "" when no call needed one.
  std::string model_name;
  std::vector<HostParamSpec> host_params;
  runtime::Executable exec;
  // Orchestration functions the compiler made for host-level collectives.
  std::vector<std::shared_ptr<const ir::Function>> synthesized;
};

}  // namespace anyp::detail
