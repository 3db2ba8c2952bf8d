// bind_dims.cpp — binding dynamic dims from host arguments (see bind_dims.hpp).
#include "compiler/bind_dims.hpp"

#include <map>
#include <set>
#include <variant>
#include <vector>

#include "anyp/errors.hpp"
#include "anyp/host_tensor.hpp"
#include "ir/expr.hpp"
#include "ir/solve_extent.hpp"

namespace anyp::compiler {
namespace {

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void fail_param(const ir::Function& host, const std::string& param,
                             const std::string& what) {
  throw CompileError("compile error: function '" + host.name + "', parameter '" + param + "'" +
                     what);
}

bool is_world_size(const ir::Operand& o) {
  return !o.is_var() && !o.is_float_imm && o.int_imm && o.int_imm->kind == ir::ExprKind::Dim &&
         o.int_imm->dim_id == ir::kWorldSizeDimId;
}
bool is_zero(const ir::Operand& o) {
  return !o.is_var() && !o.is_float_imm && o.int_imm && ir::is_const(o.int_imm) &&
         o.int_imm->value == 0;
}

// Collects the host parameters indexed by the rank loop's variable (x[r] in
// `pl::range(pld::world_size(), [&](pl::Scalar r) { ... })`).
void collect_rank_sliced(const ir::Function& host, const ir::Block& block,
                         std::set<ir::VarId>& rank_vars, std::set<ir::VarId>& sliced) {
  for (const ir::Stmt& st : block) {
    if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      if (op->kind == ir::OpKind::Index && op->args.size() == 2 && op->args[0].is_var() &&
          op->args[1].is_var() && rank_vars.count(op->args[1].var) &&
          static_cast<std::size_t>(op->args[0].var) < host.params.size()) {
        sliced.insert(op->args[0].var);
      }
    } else if (const auto* loop = std::get_if<ir::ForStmt>(&st.node)) {
      const bool rank_loop =
          is_zero(loop->start) && is_world_size(loop->stop) && ir::is_unit_step(loop->step);
      if (rank_loop) rank_vars.insert(loop->iv);
      collect_rank_sliced(host, loop->body, rank_vars, sliced);
      if (rank_loop) rank_vars.erase(loop->iv);
    } else if (const auto* branch = std::get_if<ir::IfStmt>(&st.node)) {
      collect_rank_sliced(host, branch->then_body, rank_vars, sliced);
      collect_rank_sliced(host, branch->else_body, rank_vars, sliced);
    }
  }
}

// True when a call in `block` (at any depth) dispatches to pl::device(iv).
bool dispatches_on(const ir::Block& block, ir::VarId iv) {
  for (const ir::Stmt& st : block) {
    if (const auto* op = std::get_if<ir::Op>(&st.node)) {
      if (op->kind == ir::OpKind::Call && op->has_device && !op->args.empty() &&
          op->args.back().is_var() && op->args.back().var == iv)
        return true;
    } else if (const auto* loop = std::get_if<ir::ForStmt>(&st.node)) {
      if (dispatches_on(loop->body, iv)) return true;
    } else if (const auto* branch = std::get_if<ir::IfStmt>(&st.node)) {
      if (dispatches_on(branch->then_body, iv) || dispatches_on(branch->else_body, iv)) return true;
    }
  }
  return false;
}

// The host loops `pl::range(D, [&](pl::Scalar r) { ... pl::device(r) ... })`
// whose extent is a named dim D other than pld::world_size(): rank loops
// whose rank count comes from the arguments.
void collect_dim_rank_loops(const ir::Block& block, std::vector<const ir::ForStmt*>& out) {
  for (const ir::Stmt& st : block) {
    if (const auto* loop = std::get_if<ir::ForStmt>(&st.node)) {
      const ir::Operand& stop = loop->stop;
      if (is_zero(loop->start) && ir::is_unit_step(loop->step) && !stop.is_var() &&
          !stop.is_float_imm && stop.int_imm && stop.int_imm->kind == ir::ExprKind::Dim &&
          stop.int_imm->dim_id != ir::kWorldSizeDimId && dispatches_on(loop->body, loop->iv))
        out.push_back(loop);
      collect_dim_rank_loops(loop->body, out);
    } else if (const auto* branch = std::get_if<ir::IfStmt>(&st.node)) {
      collect_dim_rank_loops(branch->then_body, out);
      collect_dim_rank_loops(branch->else_body, out);
    }
  }
}

}  // namespace

ir::DimBindings bind_dims(const ir::Function& host, const std::vector<ArgRef>& args,
                          std::int64_t world_size) {
  ir::DimBindings bindings{{ir::kWorldSizeDimId, world_size}};
  if (args.size() != host.params.size()) {
    std::string names;
    for (const auto& p : host.params) names += (names.empty() ? "" : ", ") + host.vars[p.var].name;
    throw CompileError("compile error: function '" + host.name + "' takes " +
                       std::to_string(host.params.size()) + " arguments (" + names + "), got " +
                       std::to_string(args.size()));
  }
  // Which parameter/dim first bound each dim, for the "bound twice" message.
  std::map<std::int64_t, std::pair<std::string, std::size_t>> bound_by;
  std::set<ir::VarId> rank_vars, rank_sliced;
  collect_rank_sliced(host, host.body, rank_vars, rank_sliced);
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ir::Var& p = host.vars[host.params[i].var];
    if (p.type.kind == ir::TypeKind::Scalar) {
      if (args[i].is_tensor()) fail_param(host, p.name, ": expected a scalar, got a tensor");
      continue;
    }
    if (!args[i].is_tensor()) fail_param(host, p.name, ": expected a tensor, got a scalar");
    const HostTensor& t = args[i].tensor();
    if (t.dtype() != p.type.dtype) {
      fail_param(host, p.name,
                 ": dtype mismatch: declared " + std::string(dtype_name(p.type.dtype)) +
                     ", actual " + std::string(dtype_name(t.dtype())));
    }
    if (t.shape().size() != p.type.shape.size()) {
      fail_param(host, p.name,
                 ": declared " + std::to_string(p.type.shape.size()) + " dims " +
                     ir::to_string(p.type.shape) + ", actual " + std::to_string(t.shape().size()) +
                     " dims " + shape_text(t.shape()));
    }
    const bool sliced_by_rank = rank_sliced.count(host.params[i].var) > 0;
    for (std::size_t d = 0; d < t.shape().size(); ++d) {
      const ir::Expr& e = p.type.shape[d];
      if (d == 0 && sliced_by_rank && ir::is_const(e) && e->value > world_size) {
        fail_param(host, p.name,
                   ", dim 0: declared " + std::to_string(e->value) +
                       ", but the rank loop over pld::world_size() runs P = " +
                       std::to_string(world_size) + " ranks and gives rank r the row " + p.name +
                       "[r]: rows " + std::to_string(world_size) + " .. " +
                       std::to_string(e->value - 1) +
                       " would never be dispatched\n  hint: a constant in the host signature "
                       "pins the rank count; declare NR = pl::dynamic(\"NR\") and write NR in "
                       "the host signature");
      }
      if (e->kind != ir::ExprKind::Dim) continue;
      const std::int64_t actual = t.shape()[d];
      if (d == 0 && sliced_by_rank && e->kind == ir::ExprKind::Dim &&
          e->dim_id != ir::kWorldSizeDimId && actual != world_size) {
        fail_param(host, p.name,
                   ", dim 0: " + e->dim_name + " is " + std::to_string(actual) +
                       " here, but the rank loop over pld::world_size() runs P = " +
                       std::to_string(world_size) +
                       " ranks (from the device list) and gives rank r "
                       "the row " +
                       p.name +
                       "[r]: a tensor sliced by the rank loop needs exactly P "
                       "rows\n  hint: shape the host tensors from the device count");
      }
      auto it = bindings.find(e->dim_id);
      if (it == bindings.end()) {
        bindings[e->dim_id] = actual;
        bound_by[e->dim_id] = {p.name, d};
      } else if (it->second != actual) {
        std::string source = e->dim_id == ir::kWorldSizeDimId
                                 ? "the device list (P = " + std::to_string(world_size) + ")"
                                 : "parameter '" + bound_by[e->dim_id].first + "' dim " +
                                       std::to_string(bound_by[e->dim_id].second);
        fail_param(host, p.name,
                   ", dim " + std::to_string(d) + ": dim " + e->dim_name + " is bound to " +
                       std::to_string(it->second) + " by " + source + ", but the argument has " +
                       std::to_string(actual));
      }
    }
  }
  // An extent that mentions one unbound dim through + - * and exact /
  // binds it from the argument: [M * 2, N] binds M from dim 0. Bare dims
  // bound first; repeat while a solution binds another dim. What cannot be
  // solved is reported only if its dim stays unbound.
  std::map<std::pair<std::size_t, std::size_t>, ir::ExtentSolution> unsolved;
  for (bool progress = true; progress;) {
    progress = false;
    unsolved.clear();
    for (std::size_t i = 0; i < args.size(); ++i) {
      const ir::Var& p = host.vars[host.params[i].var];
      if (p.type.kind == ir::TypeKind::Scalar) continue;
      for (std::size_t d = 0; d < p.type.shape.size(); ++d) {
        const ir::Expr& e = p.type.shape[d];
        if (e->kind == ir::ExprKind::Dim || ir::is_const(e)) continue;
        ir::ExtentSolution s = ir::solve_extent(e, args[i].tensor().shape()[d], bindings);
        if (s.kind == ir::ExtentSolution::Kind::Solved) {
          bindings[s.dim_id] = s.value;
          bound_by[s.dim_id] = {p.name, d};
          progress = true;
        } else if (s.kind != ir::ExtentSolution::Kind::NoUnknown) {
          unsolved[{i, d}] = std::move(s);
        }
      }
    }
  }
  for (const auto& [at, s] : unsolved) {
    if (s.kind == ir::ExtentSolution::Kind::NoInteger && !bindings.count(s.dim_id)) {
      fail_param(host, host.vars[host.params[at.first].var].name,
                 ", dim " + std::to_string(at.second) + ": cannot bind " + s.dim_name +
                     " from the argument's extent: " + s.why);
    }
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ir::Var& p = host.vars[host.params[i].var];
    if (p.type.kind == ir::TypeKind::Scalar) continue;
    const HostTensor& t = args[i].tensor();
    for (std::size_t d = 0; d < t.shape().size(); ++d) {
      const ir::Expr& e = p.type.shape[d];
      const std::int64_t actual = t.shape()[d];
      ir::EvalResult r = ir::evaluate(e, bindings);
      const std::string where = ", dim " + std::to_string(d) + ": ";
      if (!r.value) {
        const auto it = unsolved.find({i, d});
        const std::string why = it == unsolved.end()
                                    ? ""
                                    : "; " + it->second.why +
                                          ": declare a dim bare (as in [M, ...]) in some host "
                                          "parameter to bind it";
        fail_param(host, p.name,
                   where + "extent " + ir::to_string(e) + " is not a positive exact integer (" +
                       r.error + why + ")");
      }
      if (*r.value == actual) continue;
      if (ir::is_const(e)) {
        fail_param(host, p.name,
                   where + "declared " + std::to_string(*r.value) + ", actual " +
                       std::to_string(actual) + " (P = " + std::to_string(world_size) +
                       ")\n  hint: a constant in the host signature pins this dim to " +
                       std::to_string(*r.value) +
                       "; if it is the rank count, declare NR = pl::dynamic(\"NR\") and write NR "
                       "in the host signature");
      }
      fail_param(host, p.name,
                 where + "declared " + ir::to_string(e) + " = " + std::to_string(*r.value) +
                     ", actual " + std::to_string(actual));
    }
  }
  // A loop that dispatches one call per rank over a dim bound from the
  // arguments must not run over more than P ranks (it would dispatch past
  // the device list: rows P.. of the arguments are a program for another P).
  std::vector<const ir::ForStmt*> rank_loops;
  collect_dim_rank_loops(host.body, rank_loops);
  for (const ir::ForStmt* loop : rank_loops) {
    const ir::Expr& e = loop->stop.int_imm;
    const auto it = bindings.find(e->dim_id);
    const auto by = bound_by.find(e->dim_id);
    // (Fewer than P is legitimate when other dispatches cover the rest;
    // otherwise specialize_host reports the rank that gets no dispatch.)
    if (it == bindings.end() || by == bound_by.end() || it->second <= world_size) continue;
    fail_param(
        host, by->second.first,
        ", dim " + std::to_string(by->second.second) + ": " + e->dim_name + " is " +
            std::to_string(it->second) + " here, but the loop over " + e->dim_name +
            " dispatches one call per rank (pl::device(r)) and P = " + std::to_string(world_size) +
            " ranks (from the device list): a rank loop cannot run over more than P "
            "ranks\n  hint: shape the host tensors from the device count, or loop over "
            "pld::world_size()");
  }
  return bindings;
}

std::vector<detail::HostParamSpec> host_param_specs(const ir::Function& host,
                                                    const std::vector<ArgRef>& args) {
  std::vector<detail::HostParamSpec> specs;
  for (std::size_t i = 0; i < host.params.size(); ++i) {
    const ir::Var& p = host.vars[host.params[i].var];
    detail::HostParamSpec s;
    s.name = p.name;
    s.is_tensor = p.type.kind != ir::TypeKind::Scalar;
    s.dtype = p.type.dtype;
    if (s.is_tensor) {
      s.shape = args[i].tensor().shape();
    } else {
      s.scalar.is_int = args[i].is_int();
      s.scalar.int_value = s.scalar.is_int ? args[i].int_value() : 0;
      s.scalar.float_value = s.scalar.is_int ? 0 : args[i].float_value();
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

std::string describe_bindings(const ir::DimBindings& bindings, const ir::Program& program) {
  std::map<std::int64_t, std::string> names;
  for (const auto& fn : program.functions) {
    for (const auto& v : fn->vars) {
      for (const auto& e : v.type.shape) {
        ir::for_each_dim(e, [&](std::int64_t id, const std::string& name) { names[id] = name; });
      }
    }
  }
  std::string s;
  for (const auto& [id, value] : bindings) {
    if (id == ir::kWorldSizeDimId || !names.count(id)) continue;
    s += (s.empty() ? "" : ", ") + names[id] + " = " + std::to_string(value);
  }
  return s;
}

std::vector<std::optional<std::vector<std::int64_t>>> parameter_shapes(
    const ir::Function& host, const std::vector<std::optional<ArgRef>>& args,
    std::int64_t world_size) {
  ir::DimBindings bindings{{ir::kWorldSizeDimId, world_size}};
  const auto present = [&](std::size_t i) {
    return i < args.size() && args[i] && args[i]->is_tensor() &&
           args[i]->tensor().shape().size() == host.vars[host.params[i].var].type.shape.size();
  };
  for (std::size_t i = 0; i < host.params.size(); ++i) {
    if (!present(i)) continue;
    const ir::Type& t = host.vars[host.params[i].var].type;
    for (std::size_t d = 0; d < t.shape.size(); ++d)
      if (t.shape[d]->kind == ir::ExprKind::Dim)
        bindings.emplace(t.shape[d]->dim_id, args[i]->tensor().shape()[d]);
  }
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < host.params.size(); ++i) {
      if (!present(i)) continue;
      const ir::Type& t = host.vars[host.params[i].var].type;
      for (std::size_t d = 0; d < t.shape.size(); ++d) {
        const ir::ExtentSolution s =
            ir::solve_extent(t.shape[d], args[i]->tensor().shape()[d], bindings);
        if (s.kind == ir::ExtentSolution::Kind::Solved) {
          bindings[s.dim_id] = s.value;
          progress = true;
        }
      }
    }
  }
  std::vector<std::optional<std::vector<std::int64_t>>> shapes;
  for (const ir::Param& p : host.params) {
    const ir::Type& t = host.vars[p.var].type;
    std::optional<std::vector<std::int64_t>> shape;
    if (t.kind != ir::TypeKind::Scalar) {
      shape.emplace();
      for (const ir::Expr& e : t.shape) {
        const ir::EvalResult r = ir::evaluate(e, bindings);
        if (!r.value || *r.value <= 0) {
          shape.reset();
          break;
        }
        shape->push_back(*r.value);
      }
    }
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

}  // namespace anyp::compiler
