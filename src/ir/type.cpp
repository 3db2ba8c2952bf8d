// type.cpp — construction and printing of IR types.
#include "ir/type.hpp"

namespace anyp::ir {

Type scalar_type(DType dtype) { return Type{TypeKind::Scalar, dtype, {}}; }

Type shaped_type(TypeKind kind, std::vector<Expr> shape, DType dtype) {
  return Type{kind, dtype, std::move(shape)};
}

const char* type_kind_name(TypeKind k) {
  switch (k) {
    case TypeKind::Scalar:
      return "Scalar";
    case TypeKind::Tensor:
      return "Tensor";
    case TypeKind::DistTensor:
      return "DistributedTensor";
    case TypeKind::Tile:
      return "Tile";
    case TypeKind::WindowBuffer:
      return "WindowBuffer";
    case TypeKind::CommCtx:
      return "CommCtx";
    case TypeKind::CommDomain:
      return "CommDomain";
  }
  return "?";
}

bool is_memory(TypeKind k) { return k == TypeKind::Tensor || k == TypeKind::DistTensor; }

std::string to_string(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += to_string(shape[i]);
  }
  return s + "]";
}

std::string to_string(const Type& t) {
  switch (t.kind) {
    case TypeKind::Scalar:
      return "Scalar " + std::string(dtype_name(t.dtype));
    case TypeKind::CommCtx:
    case TypeKind::CommDomain:
      return type_kind_name(t.kind);
    default:
      return std::string(type_kind_name(t.kind)) + to_string(t.shape) + " " +
             std::string(dtype_name(t.dtype));
  }
}

}  // namespace anyp::ir
