// kernel_errors.hpp — the compile-error probes the unit tests share: trace
// one function, or compile a one-kernel program at P, and return the error
// text (or what happened instead), so a test asserts the exact message
// (without its source locations: support/source_locations.hpp).
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>

namespace anyp_test {

// Elements of the probe kernel's one parameter, y [1, kProbeWidth] FP32.
inline constexpr std::int64_t kProbeWidth = 32;

// The trace error of `fn` (its whole what()), "traced without error", or
// "unexpected exception: ..." for another exception.
std::string trace_error(const pl::Function& fn);

// An incore kernel `name` with one parameter, InOut y [1, 32] FP32.
pl::Function kernel_of(const std::string& name, const std::function<void(pl::Value)>& body);

// host(y [NR, 1, 32]) -> orchestration_for(kernel) -> kernel(y), compiled at
// P: the compile error, "compiled without error", or "unexpected exception: ...".
std::string compile_error(const pl::Function& kernel, std::int64_t P);

}  // namespace anyp_test
