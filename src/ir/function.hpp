// function.hpp — structured statements (op, for, if), functions with a level,
// and programs (a host function and everything it calls).
//
// Variables are function-local registers with a static type; an op names
// them by VarId. Nodes are built once by the tracer and never mutated.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "ir/op.hpp"
#include "ir/type.hpp"

namespace anyp::ir {

struct Stmt;
using Block = std::vector<Stmt>;

// for iv in range(start, stop, step): body. The bound and the step are read
// once, at loop entry. A positive step runs while iv < stop, a negative one
// while iv > stop; the step is never 0 (checked when traced or at run time).
struct ForStmt {
  VarId iv = -1;
  Operand start, stop;
  Operand step = Operand::of_int(make_const(1));
  Block body;
  SourceLoc loc;  // the pl.range call
};

// True when `o` is the integer constant 1 (a plain pl::range step).
bool is_unit_step(const Operand& o);

// if cond != 0: then_body else else_body.
struct IfStmt {
  Operand cond;
  Block then_body, else_body;
  SourceLoc loc;  // the pl.if_ call
};

struct Stmt {
  std::variant<Op, ForStmt, IfStmt> node;
};

// Calls f(op) on every op of `block` (a Block or a const Block), the ops of
// its loops and branches included, in program order; calls are not entered.
template <class B, class F>
void for_each_op(B& block, F&& f) {
  for (auto& s : block) {
    if (auto* op = std::get_if<Op>(&s.node)) {
      f(*op);
    } else if (auto* loop = std::get_if<ForStmt>(&s.node)) {
      for_each_op(loop->body, f);
    } else if (auto* branch = std::get_if<IfStmt>(&s.node)) {
      for_each_op(branch->then_body, f);
      for_each_op(branch->else_body, f);
    }
  }
}

enum class Intent { In, Out, InOut };
const char* intent_name(Intent i);

struct Var {
  std::string name;  // parameter name; empty for temporaries (printed %<id>)
  Type type;
};

struct Param {
  VarId var;
  Intent intent;
};

struct Function {
  std::string name;
  Level level = Level::Incore;
  std::vector<Var> vars;
  std::vector<Param> params;  // params[i].var == i
  Block body;
};

// A pl::jit::host_worker function: its body is one pl.host_worker op.
bool is_host_worker(const Function& fn);

// A host function and, in first-call order, every function reachable from it.
struct Program {
  std::shared_ptr<const Function> host;
  std::vector<std::shared_ptr<const Function>> functions;  // includes host, first
};

Program collect_program(std::shared_ptr<const Function> host);

}  // namespace anyp::ir
