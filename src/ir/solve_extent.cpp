// solve_extent.cpp — an extent solved for its one unknown dim (solve_extent.hpp).
#include "ir/solve_extent.hpp"

#include <map>
#include <optional>

namespace anyp::ir {
namespace {

// How many times dim `id` occurs in e.
int occurrences(const Expr& e, std::int64_t id) {
  int n = 0;
  for_each_dim(e, [&](std::int64_t d, const std::string&) { n += d == id ? 1 : 0; });
  return n;
}

struct Peeled {
  std::optional<std::int64_t> value;  // the dim's value
  ExtentSolution::Kind failure = ExtentSolution::Kind::NoInteger;
  std::string why;
};

Peeled fail(ExtentSolution::Kind kind, std::string why) {
  return {std::nullopt, kind, std::move(why)};
}

// Undoes e's operations around the unknown dim `id` (which occurs once in
// e): e = target, so the dim is ...
Peeled peel(const Expr& e, std::int64_t id, std::int64_t target, const DimBindings& bindings) {
  if (e->kind == ExprKind::Dim) return {target, {}, {}};
  const bool in_left = occurrences(e->lhs, id) > 0;
  const Expr& side = in_left ? e->lhs : e->rhs;
  const EvalResult other = evaluate(in_left ? e->rhs : e->lhs, bindings);
  if (!other.value) return fail(ExtentSolution::Kind::Ambiguous, other.error);
  const std::int64_t v = *other.value;
  const std::string t = std::to_string(target), vs = std::to_string(v);
  switch (e->kind) {
    case ExprKind::Add:
      return peel(side, id, target - v, bindings);
    case ExprKind::Sub:
      return peel(side, id, in_left ? target + v : v - target, bindings);
    case ExprKind::Mul:
      if (v == 0) return fail(ExtentSolution::Kind::Ambiguous, "it is multiplied by 0");
      if (target % v != 0)
        return fail(ExtentSolution::Kind::NoInteger, t + " is not a multiple of " + vs);
      return peel(side, id, target / v, bindings);
    case ExprKind::Div:
      if (in_left) return peel(side, id, target * v, bindings);  // exact division
      if (target == 0 || v % target != 0)
        return fail(ExtentSolution::Kind::NoInteger, vs + " is not a multiple of " + t);
      return peel(side, id, v / target, bindings);
    default:
      return fail(ExtentSolution::Kind::Ambiguous, "% cannot be solved for a dim");
  }
}

}  // namespace

ExtentSolution solve_extent(const Expr& extent, std::int64_t actual, const DimBindings& bindings) {
  std::map<std::int64_t, std::string> unknown;
  for_each_dim(extent, [&](std::int64_t id, const std::string& name) {
    if (!bindings.count(id)) unknown[id] = name;
  });
  ExtentSolution s;
  if (unknown.empty()) return s;
  const std::string equation = to_string(extent) + " = " + std::to_string(actual);
  if (unknown.size() > 1) {
    s.kind = ExtentSolution::Kind::Ambiguous;
    std::string names;
    for (auto it = unknown.begin(); it != unknown.end(); ++it)
      names += (it == unknown.begin()            ? ""
                : std::next(it) == unknown.end() ? " and "
                                                 : ", ") +
               it->second;
    s.why = equation + " has " + std::to_string(unknown.size()) + " unknown dims, " + names;
    return s;
  }
  s.dim_id = unknown.begin()->first;
  s.dim_name = unknown.begin()->second;
  if (occurrences(extent, s.dim_id) > 1) {
    s.kind = ExtentSolution::Kind::Ambiguous;
    s.why = equation + " mentions " + s.dim_name + " more than once";
    return s;
  }
  const Peeled p = peel(extent, s.dim_id, actual, bindings);
  if (!p.value) {
    s.kind = p.failure;
    s.why = equation + ": " + p.why;
    return s;
  }
  if (*p.value <= 0) {
    s.kind = ExtentSolution::Kind::NoInteger;
    s.why = equation + " gives " + s.dim_name + " = " + std::to_string(*p.value) +
            ", and a dim is positive";
    return s;
  }
  s.kind = ExtentSolution::Kind::Solved;
  s.value = *p.value;
  return s;
}

}  // namespace anyp::ir
