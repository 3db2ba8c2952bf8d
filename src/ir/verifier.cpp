// verifier.cpp — level rules and call-graph rules of the three-level model.
#include "ir/verifier.hpp"

#include <cstdint>
#include <string>

#include "anyp/errors.hpp"
#include "ir/intent_check.hpp"
#include "ir/tile_rules.hpp"

namespace anyp::ir {
namespace {

[[noreturn]] void fail(const Function& fn, const std::string& what) {
  throw CompileError("compile error: function '" + fn.name + "' (" + level_name(fn.level) +
                     "): " + what);
}

// As fail, naming the op and its place ("op call @k at step.py:42").
[[noreturn]] void fail_at(const Function& fn, const Op& op, const std::string& what) {
  throw CompileError("compile error: function '" + fn.name + "' (" + level_name(fn.level) +
                     "), op " + op_site_name(op) + ": " + what);
}

std::string allowed_levels(unsigned mask) {
  std::string s;
  auto add = [&](unsigned bit, const char* name) {
    if (!(mask & bit)) return;
    if (!s.empty()) s += " and ";
    s += name;
  };
  add(kHost, "host");
  add(kOrch, "orchestration");
  add(kIncore, "incore");
  return s;
}

// "a host", "an incore", "an orchestration".
std::string with_article(const std::string& levels) {
  return (levels.rfind("host", 0) == 0 ? "a " : "an ") + levels;
}

unsigned level_bit(Level l) {
  switch (l) {
    case Level::Host:
      return kHost;
    case Level::Orchestration:
      return kOrch;
    case Level::Incore:
      return kIncore;
  }
  return 0;
}

void check_operand(const Function& fn, const Operand& o) {
  if (o.is_var() && (o.var < 0 || static_cast<std::size_t>(o.var) >= fn.vars.size())) {
    fail(fn, "operand refers to unknown variable %" + std::to_string(o.var));
  }
}

// Would passing a scalar of dtype `from` to a parameter of dtype `to` lose
// integer values (an INT32 300 into INT8 is 44)? Integers into a narrower
// integer, and floats into an integer, do; rounding into a float does not count.
bool narrows(DType from, DType to) {
  if (dtype_is_float(to)) return false;
  return dtype_is_float(from) || dtype_bytes(to) < dtype_bytes(from);
}

// Scalar arguments of a call from an orchestration function (values known
// only at run time): their type must not narrow into the parameter's.
// Constants must fit it. (Host dispatches pass values known when compiled:
// specialize_host checks the value itself.)
void check_scalar_arguments(const Function& fn, const Op& op) {
  const Function& callee = *op.callee;
  for (std::size_t i = 0; i < callee.params.size() && i < op.args.size(); ++i) {
    const Var& param = callee.vars[static_cast<std::size_t>(callee.params[i].var)];
    if (param.type.kind != TypeKind::Scalar) continue;
    const Operand& a = op.args[i];
    const DType to = param.type.dtype;
    std::string got;
    if (a.is_var()) {
      const DType from = fn.vars[static_cast<std::size_t>(a.var)].type.dtype;
      if (narrows(from, to)) got = "Scalar " + std::string(dtype_name(from));
    } else if (a.is_float_imm) {
      if (!dtype_is_float(to)) got = "the floating constant " + std::to_string(a.float_imm);
    } else if (is_const(a.int_imm) && !dtype_is_float(to) &&
               (a.int_imm->value < integer_range(to).first ||
                a.int_imm->value > integer_range(to).second)) {
      got = "the constant " + std::to_string(a.int_imm->value);
    }
    if (got.empty()) continue;
    fail(fn, "call @" + callee.name + ": argument " + std::to_string(i) + " ('" + param.name +
                 "') is " + got + ", which does not fit parameter '" + param.name + "' (Scalar " +
                 std::string(dtype_name(to)) + ") without losing its value; pass a value of " +
                 std::string(dtype_name(to)) + " (pl::cast it where a narrower value is meant)");
  }
}

void check_call(const Function& fn, const Op& op) {
  const Function& callee = *op.callee;
  if (fn.level == Level::Orchestration) check_scalar_arguments(fn, op);
  if (fn.level == Level::Host) {
    if (callee.level != Level::Orchestration) {
      fail_at(fn, op,
              "'" + callee.name + "' is " + level_name(callee.level) +
                  ", but the host may only dispatch orchestration functions " +
                  "(device dispatch of a non-orchestration function); wrap the kernel in a " +
                  "pl::jit::orchestration function and dispatch that");
    }
    if (op.blocks) {
      fail_at(fn, op,
              "the dispatch of '" + callee.name +
                  "' passes pl::blocks(n); blocks launch an incore kernel, from an "
                  "orchestration function (the host dispatches with pl::device(r))");
    }
    // A dispatch without pl::device(r) runs on rank 0 of a one-rank run
    // (specialize_host refuses it at P > 1, where the rank matters).
  } else if (fn.level == Level::Orchestration) {
    if (op.has_device) {
      fail_at(fn, op,
              "the call of '" + callee.name +
                  "' passes pl::device(r); only the host dispatches to a device");
    }
    if (callee.level != Level::Incore) {
      fail_at(fn, op,
              "calls '" + callee.name + "' (" + level_name(callee.level) +
                  "); an orchestration function calls incore kernels only");
    }
    if (op.blocks && contains_op(callee.body, OpKind::PutAsync)) {
      fail_at(fn, op,
              "the launch of '" + callee.name +
                  "' over pl::blocks(n) runs pld.tensor.put_async, whose source guard covers "
                  "one block (another block could write the source while the put is in "
                  "flight): use pld::tensor::put in a multi-block kernel");
    }
    if (op.blocks) {
      for (int i = 0; i < kOpKinds; ++i) {
        const auto k = static_cast<OpKind>(i);
        if (is_collective(k) && contains_op(callee.body, k)) {
          fail_at(fn, op,
                  "the launch of '" + callee.name + "' over pl::blocks(n) runs " + op_kind_name(k) +
                      ", a builtin collective, which runs on one block per rank: call it from "
                      "a one-block kernel (a host-level collective takes core_num)");
        }
      }
    }
  }
}

}  // namespace

bool contains_op(const Block& block, OpKind kind) {
  for (const Stmt& s : block) {
    if (const auto* op = std::get_if<Op>(&s.node)) {
      if (op->kind == kind) return true;
      if (op->kind == OpKind::Call && contains_op(op->callee->body, kind)) return true;
    } else if (const auto* f = std::get_if<ForStmt>(&s.node)) {
      if (contains_op(f->body, kind)) return true;
    } else if (const auto* i = std::get_if<IfStmt>(&s.node)) {
      if (contains_op(i->then_body, kind) || contains_op(i->else_body, kind)) return true;
    }
  }
  return false;
}

namespace {

void verify_block(const Function& fn, const Block& block, int loop_depth = 0) {
  for (const Stmt& s : block) {
    if (const auto* op = std::get_if<Op>(&s.node)) {
      if (op->kind == OpKind::Call && loop_depth > 0 && fn.level != Level::Host &&
          contains_op(op->callee->body, OpKind::AllToAllV)) {
        fail(fn, "the call of '" + op->callee->name +
                     "' inside a pl::range loop runs pld.tensor.all_to_all_v, which is refused "
                     "in loops at every level: its Set-published recv_counts have no read-done "
                     "handshake");
      }
      for (const Operand& o : op->args) check_operand(fn, o);
      const unsigned levels = op_levels(op->kind);
      if (!(levels & level_bit(fn.level))) {
        fail(fn, "op " + op_site_name(*op) + " is not allowed at the " + level_name(fn.level) +
                     " level (it is " + with_article(allowed_levels(levels)) + " op)");
      }
      if (op->kind == OpKind::Call) check_call(fn, *op);
    } else if (const auto* f = std::get_if<ForStmt>(&s.node)) {
      check_operand(fn, f->start);
      check_operand(fn, f->stop);
      check_operand(fn, f->step);
      verify_block(fn, f->body, loop_depth + 1);
    } else if (const auto* i = std::get_if<IfStmt>(&s.node)) {
      check_operand(fn, i->cond);
      verify_block(fn, i->then_body, loop_depth);
      verify_block(fn, i->else_body, loop_depth);
    }
  }
}

}  // namespace

void verify_function(const Function& fn) {
  for (std::size_t i = 0; i < fn.params.size(); ++i) {
    if (fn.params[i].var != static_cast<VarId>(i)) fail(fn, "parameter variables out of order");
  }
  verify_block(fn, fn.body);
  check_intents(fn);
}

void verify_program(const Program& program) {
  if (program.host->level != Level::Host) {
    fail(*program.host, "compile() needs a pl::jit::host function");
  }
  for (const auto& fn : program.functions) verify_function(*fn);
}

}  // namespace anyp::ir
