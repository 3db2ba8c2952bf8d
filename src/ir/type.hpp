// type.hpp — the types of IR variables: scalars, tensors (private memory),
// distributed tensors (window views), tiles, window buffers, the comm
// context and communication domains (host). Shapes are extent expressions, so types may mention NR.
#pragma once

#include <string>
#include <vector>

#include "anyp/dtype.hpp"
#include "ir/expr.hpp"

namespace anyp::ir {

enum class TypeKind { Scalar, Tensor, DistTensor, Tile, WindowBuffer, CommCtx, CommDomain };

struct Type {
  TypeKind kind = TypeKind::Scalar;
  DType dtype = DType::INT32;
  std::vector<Expr> shape;  // empty for Scalar, CommCtx and CommDomain
};

Type scalar_type(DType dtype);
Type shaped_type(TypeKind kind, std::vector<Expr> shape, DType dtype);

// "Tensor[NR, 1, 64] FP32", "DistributedTensor[1, 64] FP32", "Scalar INT32".
std::string to_string(const Type& t);
std::string to_string(const std::vector<Expr>& shape);  // "[NR, 1, 64]"
const char* type_kind_name(TypeKind k);
bool is_memory(TypeKind k);  // Tensor or DistTensor

}  // namespace anyp::ir
