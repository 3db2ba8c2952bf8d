// tensor_views.hpp — Python arrays as anyp::HostTensor views, without a
// copy: torch CPU tensors by duck typing (data_ptr, dtype, shape,
// is_contiguous; no libtorch link, so BF16 works too) and anything with the
// buffer protocol (numpy arrays). Each error names the parameter.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "anyp/host_tensor.hpp"

namespace anyp::python {

// A view of `array`'s memory, for parameter `param` of `function`. The
// caller keeps `array` alive while the view is used. Throws
// anyp::ConfigError naming the parameter for a non-CPU, non-contiguous or
// unsupported-dtype array, or an object that is not an array.
HostTensor tensor_view(const pybind11::handle& array, const std::string& function,
                       const std::string& param);

}  // namespace anyp::python
