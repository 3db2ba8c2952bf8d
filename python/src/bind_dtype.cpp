// bind_dtype.cpp — anyp._core.DType, the element types, with the methods of
// PyPTO's DataType that a program calls on pl.FP32 and its kin:
// get_byte() (pld.alloc_window_buffer(SIZE * pl.FP32.get_byte())), get_bit(),
// to_string() and to_c_type_string() in PyPTO's spellings, is_float(),
// is_int(), is_signed_int(), is_unsigned_int() and code() (PyPTO's type
// code). One row per dtype below; sizes come from anyp::dtype_bytes.
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "anyp/dtype.hpp"
#include "bindings.hpp"

namespace py = pybind11;

namespace anyp::python {

namespace {

// What PyPTO's DataType says of each dtype anyp has: its name in
// to_string(), its C type in to_c_type_string(), and its type code.
struct PyptoDtypeRow {
  DType dtype;  // pl.<dtype_name(dtype)>, the enum value's name
  const char* pypto_name;
  const char* c_type;
  std::uint8_t pypto_code;
};

constexpr std::array<PyptoDtypeRow, 7> kPyptoDtypes{{
    {DType::FP32, "fp32", "float", 0x34},
    {DType::FP16, "fp16", "half", 0x33},
    {DType::BF16, "bfloat16", "bfloat16", 0x40},
    {DType::INT8, "int8", "int8_t", 0x11},
    {DType::INT16, "int16", "int16_t", 0x12},
    {DType::INT32, "int32", "int32_t", 0x13},
    {DType::INT64, "int64", "int64_t", 0x14},
}};

// The rows are in the enum's order, one per dtype: a dtype indexes its row.
constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kPyptoDtypes.size(); ++i) {
    if (static_cast<std::size_t>(kPyptoDtypes[i].dtype) != i) return false;
  }
  return static_cast<std::size_t>(DType::INT64) + 1 == kPyptoDtypes.size();
}
static_assert(rows_in_enum_order(), "kPyptoDtypes needs one row per anyp::DType, in its order");

const PyptoDtypeRow& row_of(DType t) { return kPyptoDtypes.at(static_cast<std::size_t>(t)); }

}  // namespace

void bind_dtype(py::module_& m) {
  py::enum_<DType> dtype(m, "DType");
  for (const PyptoDtypeRow& row : kPyptoDtypes)
    dtype.value(dtype_name(row.dtype).data(), row.dtype);
  dtype
      .def(
          "get_byte", [](DType t) { return dtype_bytes(t); },
          "Bytes of one element (pl.FP32.get_byte() is 4).")
      .def(
          "get_bit", [](DType t) { return 8 * dtype_bytes(t); },
          "Bits of one element (pl.FP16.get_bit() is 16).")
      .def(
          "to_string", [](DType t) { return std::string(row_of(t).pypto_name); },
          "PyPTO's name of the dtype: 'fp32', 'bfloat16', 'int32', ...")
      .def(
          "to_c_type_string", [](DType t) { return std::string(row_of(t).c_type); },
          "The C type PyPTO's code generator writes: 'float', 'half', 'int32_t', ...")
      .def("is_float", [](DType t) { return dtype_is_float(t); })
      .def("is_int", [](DType t) { return !dtype_is_float(t); })
      .def("is_signed_int", [](DType t) { return !dtype_is_float(t); })
      .def("is_unsigned_int", [](DType) { return false; })
      .def(
          "code", [](DType t) { return row_of(t).pypto_code; },
          "PyPTO's type code (0x34 for FP32).");
}

}  // namespace anyp::python
