// expr.hpp — integer extent expressions: constants, named dynamic dims
// (pl::dynamic("NR"); one dim per name), the world size, and + - * / % over
// them.
//
// Nodes are immutable and shared. Constant sub-expressions fold at
// construction. evaluate() resolves an expression against dim bindings and
// reports what could not be resolved or was not an exact integer.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace anyp::ir {

enum class ExprKind { Const, Dim, Add, Sub, Mul, Div, Mod };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind;
  std::int64_t value = 0;   // Const
  std::int64_t dim_id = 0;  // Dim: one per distinct pl::dynamic() name; 0 is world_size
  std::string dim_name;     // Dim
  Expr lhs, rhs;            // binary
};

inline constexpr std::int64_t kWorldSizeDimId = 0;

Expr make_const(std::int64_t v);
Expr make_dim(std::string name);  // the dynamic dim of this name (same name, same dim)
Expr world_size_dim();            // the dim bound to P
Expr make_binary(ExprKind kind, Expr a, Expr b);

bool is_const(const Expr& e);
// Text as written: "NR", "NR * 64", "2 * (NR - 1)", "64 / NR".
std::string to_string(const Expr& e);
// Structural equality.
bool same_expr(const Expr& a, const Expr& b);

// Dim id -> bound value.
using DimBindings = std::map<std::int64_t, std::int64_t>;

struct EvalResult {
  std::optional<std::int64_t> value;
  // When value is empty: why, e.g. "dim M is not bound" or
  // "64 / 3 is not an exact integer".
  std::string error;
};
EvalResult evaluate(const Expr& e, const DimBindings& bindings);

// Calls f(id, name) for every dim in e.
template <class F>
void for_each_dim(const Expr& e, F&& f) {
  if (!e) return;
  if (e->kind == ExprKind::Dim) f(e->dim_id, e->dim_name);
  for_each_dim(e->lhs, f);
  for_each_dim(e->rhs, f);
}

}  // namespace anyp::ir
