// plan.hpp — a program specialised for one P: everything the runtime needs
// (lowered code, per-rank dispatch lists, window layout, the expected host
// arguments) plus the texts of the compile artifact.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/function.hpp"
#include "runtime/lowered_code.hpp"

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
  std::string host_name;
  std::int64_t world_size = 0;
  std::vector<std::int64_t> device_ids;
  std::string platform;
  std::vector<HostParamSpec> host_params;
  std::vector<runtime::WindowBuffer> buffers;
  std::int64_t window_bytes = 0;  // per rank
  std::vector<runtime::LoweredCode> codes;
  std::vector<std::vector<runtime::Dispatch>> ranks;  // ranks[r]: dispatches in order
  // Orchestration functions the compiler made for host-level collectives.
  std::vector<std::shared_ptr<const ir::Function>> synthesized;
};

}  // namespace anyp::detail
