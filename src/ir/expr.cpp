// expr.cpp — construction, folding, printing and evaluation of extent
// expressions.
#include "ir/expr.hpp"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/internal_check.hpp"

namespace anyp::ir {
namespace {

int precedence(ExprKind k) {
  switch (k) {
    case ExprKind::Add:
    case ExprKind::Sub:
      return 1;
    case ExprKind::Mul:
    case ExprKind::Div:
    case ExprKind::Mod:
      return 2;
    default:
      return 3;
  }
}

const char* op_text(ExprKind k) {
  switch (k) {
    case ExprKind::Add:
      return " + ";
    case ExprKind::Sub:
      return " - ";
    case ExprKind::Mul:
      return " * ";
    case ExprKind::Div:
      return " / ";
    case ExprKind::Mod:
      return " % ";
    default:
      return "?";
  }
}

}  // namespace

Expr make_const(std::int64_t v) {
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Const;
  n->value = v;
  return n;
}

Expr make_dim(std::string name) {
  // One node per name for the whole process: pl::dynamic("NR") in two
  // translation units (a host signature and a kernel's parameter shape) must
  // name one dim, bound once. Function-local, because namespace-scope
  // `const pl::Dim NR = pl::dynamic("NR");` runs during static initialization.
  static std::mutex mutex;
  static std::map<std::string, Expr> dims;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = dims.find(name);
  if (it != dims.end()) return it->second;
  auto n = std::make_shared<ExprNode>();
  n->kind = ExprKind::Dim;
  n->dim_id = static_cast<std::int64_t>(dims.size()) + 1;  // 0 is world_size
  n->dim_name = name;
  return dims.emplace(std::move(name), std::move(n)).first->second;
}

Expr world_size_dim() {
  static const Expr ws = [] {
    auto n = std::make_shared<ExprNode>();
    n->kind = ExprKind::Dim;
    n->dim_id = kWorldSizeDimId;
    n->dim_name = "world_size";
    return Expr(n);
  }();
  return ws;
}

namespace {

// x <kind> y in INT64, or nullopt when it overflows, divides by zero or is
// an inexact division (evaluate() names which).
std::optional<std::int64_t> fold(ExprKind kind, std::int64_t x, std::int64_t y) {
  std::int64_t r = 0;
  switch (kind) {
    case ExprKind::Add:
      if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
      return r;
    case ExprKind::Sub:
      if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
      return r;
    case ExprKind::Mul:
      if (__builtin_mul_overflow(x, y, &r)) return std::nullopt;
      return r;
    case ExprKind::Div:
      if (y == 0 || (x == INT64_MIN && y == -1) || x % y != 0) return std::nullopt;
      return x / y;
    case ExprKind::Mod:
      if (y == 0) return std::nullopt;
      return y == -1 ? 0 : x % y;
    default:
      return std::nullopt;
  }
}

}  // namespace

Expr make_binary(ExprKind kind, Expr a, Expr b) {
  // Constants fold unless the result is not an INT64 (kept symbolic, so
  // that evaluate() reports the overflow or the inexact division).
  if (is_const(a) && is_const(b)) {
    if (const auto v = fold(kind, a->value, b->value)) return make_const(*v);
  }
  auto n = std::make_shared<ExprNode>();
  n->kind = kind;
  n->lhs = std::move(a);
  n->rhs = std::move(b);
  return n;
}

bool is_const(const Expr& e) { return e && e->kind == ExprKind::Const; }

std::string to_string(const Expr& e) {
  if (!e) return "?";
  switch (e->kind) {
    case ExprKind::Const:
      return std::to_string(e->value);
    case ExprKind::Dim:
      return e->dim_name;
    default:
      break;
  }
  const int p = precedence(e->kind);
  std::string l = to_string(e->lhs);
  std::string r = to_string(e->rhs);
  if (precedence(e->lhs->kind) < p) l = "(" + l + ")";
  // Right operand of a non-commutative op needs parentheses at equal precedence.
  const int rp = precedence(e->rhs->kind);
  if (rp < p || (rp == p && e->kind != ExprKind::Add && e->kind != ExprKind::Mul)) {
    r = "(" + r + ")";
  }
  return l + op_text(e->kind) + r;
}

bool same_expr(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  switch (a->kind) {
    case ExprKind::Const:
      return a->value == b->value;
    case ExprKind::Dim:
      return a->dim_id == b->dim_id;
    default:
      return same_expr(a->lhs, b->lhs) && same_expr(a->rhs, b->rhs);
  }
}

EvalResult evaluate(const Expr& e, const DimBindings& bindings) {
  switch (e->kind) {
    case ExprKind::Const:
      return {e->value, {}};
    case ExprKind::Dim: {
      auto it = bindings.find(e->dim_id);
      if (it == bindings.end()) return {std::nullopt, "dim " + e->dim_name + " is not bound"};
      return {it->second, {}};
    }
    default:
      break;
  }
  EvalResult l = evaluate(e->lhs, bindings);
  if (!l.value) return l;
  EvalResult r = evaluate(e->rhs, bindings);
  if (!r.value) return r;
  const std::int64_t x = *l.value, y = *r.value;
  if (const auto v = fold(e->kind, x, y)) return {*v, {}};
  const std::string text = std::to_string(x) + op_text(e->kind) + std::to_string(y);
  switch (e->kind) {
    case ExprKind::Add:
    case ExprKind::Sub:
    case ExprKind::Mul:
      return {std::nullopt, text + " overflows INT64"};
    case ExprKind::Div:
      if (y == 0) return {std::nullopt, text + " divides by zero"};
      if (y == -1) return {std::nullopt, text + " overflows INT64"};
      return {std::nullopt, text + " is not an exact integer"};
    case ExprKind::Mod:
      return {std::nullopt, text + " divides by zero"};
    default:
      ANYP_UNREACHABLE("evaluate: expression kind " + std::to_string(static_cast<int>(e->kind)));
  }
}

}  // namespace anyp::ir
