// tensor_views.cpp — torch tensors and buffer-protocol arrays as HostTensor
// views (tensor_views.hpp).
#include "tensor_views.hpp"

#include <cstdint>
#include <optional>
#include <vector>

#include "anyp/errors.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

[[noreturn]] void refuse(const std::string& function, const std::string& param,
                         const std::string& what) {
  throw ConfigError("argument error: '" + function + "', parameter '" + param + "': " + what);
}

std::optional<DType> torch_dtype(const std::string& name) {
  if (name == "torch.float32") return DType::FP32;
  if (name == "torch.float16") return DType::FP16;
  if (name == "torch.bfloat16") return DType::BF16;
  if (name == "torch.int8") return DType::INT8;
  if (name == "torch.int16") return DType::INT16;
  if (name == "torch.int32") return DType::INT32;
  if (name == "torch.int64") return DType::INT64;
  return std::nullopt;
}

// A buffer-protocol format string ("f", "<i", "=l", ...) and item size.
std::optional<DType> buffer_dtype(std::string format, py::ssize_t itemsize) {
  if (!format.empty() && (format[0] == '<' || format[0] == '=' || format[0] == '@'))
    format.erase(0, 1);
  if (format.size() != 1) return std::nullopt;
  const char c = format[0];
  if (c == 'f' && itemsize == 4) return DType::FP32;
  if (c == 'e' && itemsize == 2) return DType::FP16;
  if (c == 'b' && itemsize == 1) return DType::INT8;
  if (c == 'h' && itemsize == 2) return DType::INT16;
  if ((c == 'i' || c == 'l') && itemsize == 4) return DType::INT32;
  if ((c == 'l' || c == 'q') && itemsize == 8) return DType::INT64;
  return std::nullopt;
}

bool is_torch(const py::handle& object) {
  return py::hasattr(object, "data_ptr") && py::hasattr(object, "is_contiguous") &&
         py::hasattr(object, "dtype") && py::hasattr(object, "device");
}

HostTensor torch_view(const py::handle& t, const std::string& function, const std::string& param) {
  const std::string device = py::str(t.attr("device").attr("type"));
  if (device != "cpu")
    refuse(function, param, "the tensor is on device '" + device + "'; anyp takes CPU tensors");
  const std::string dtype_name = py::str(t.attr("dtype"));
  const std::optional<DType> dtype = torch_dtype(dtype_name);
  if (!dtype) {
    refuse(function, param,
           "dtype " + dtype_name +
               " is not supported (float32, float16, bfloat16, int8, int16, int32, int64)");
  }
  if (!t.attr("is_contiguous")().cast<bool>()) {
    refuse(function, param,
           "the tensor is not contiguous; pass tensor.contiguous() (anyp reads and writes the "
           "caller's memory in place, row-major)");
  }
  std::vector<std::int64_t> shape;
  for (const py::handle extent : t.attr("shape")) shape.push_back(extent.cast<std::int64_t>());
  const auto address = t.attr("data_ptr")().cast<std::uintptr_t>();
  return HostTensor::view(reinterpret_cast<void*>(address), std::move(shape), *dtype);
}

HostTensor buffer_view(const py::handle& object, const std::string& function,
                       const std::string& param) {
  const py::buffer buffer = py::reinterpret_borrow<py::buffer>(object);
  const py::buffer_info info = buffer.request(/*writable=*/true);
  const std::optional<DType> dtype = buffer_dtype(info.format, info.itemsize);
  if (!dtype) {
    refuse(function, param,
           "element format '" + info.format +
               "' is not supported (float32, float16, int8, int16, int32, int64)");
  }
  py::ssize_t expected = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    const auto i = static_cast<std::size_t>(d);
    if (info.shape[i] > 1 && info.strides[i] != expected) {
      refuse(function, param,
             "the array is not C-contiguous; pass numpy.ascontiguousarray(a) (anyp reads and "
             "writes the caller's memory in place, row-major)");
    }
    expected *= info.shape[i];
  }
  std::vector<std::int64_t> shape(info.shape.begin(), info.shape.end());
  return HostTensor::view(info.ptr, std::move(shape), *dtype);
}

}  // namespace

HostTensor tensor_view(const py::handle& array, const std::string& function,
                       const std::string& param) {
  // Buffer-protocol arrays first: the check is one slot lookup, where the
  // torch test is four attribute lookups that fail (and raise) on numpy.
  // torch tensors do not export the buffer protocol.
  if (PyObject_CheckBuffer(array.ptr())) return buffer_view(array, function, param);
  if (is_torch(array)) return torch_view(array, function, param);
  refuse(function, param,
         "expected a torch tensor or a numpy array, got " +
             std::string(py::str(py::type::handle_of(array).attr("__name__"))));
}

}  // namespace anyp::python
