// function.cpp — program collection (reachable functions in first-call order).
#include "ir/function.hpp"

#include <set>

namespace anyp::ir {

const char* intent_name(Intent i) {
  switch (i) {
    case Intent::In:
      return "in";
    case Intent::Out:
      return "out";
    case Intent::InOut:
      return "inout";
  }
  return "?";
}

bool is_unit_step(const Operand& o) {
  return !o.is_var() && !o.is_float_imm && o.int_imm && is_const(o.int_imm) &&
         o.int_imm->value == 1;
}

namespace {

void collect_block(const Block& block, std::set<const Function*>& seen, Program& program);

void collect_function(const std::shared_ptr<const Function>& fn, std::set<const Function*>& seen,
                      Program& program) {
  if (!seen.insert(fn.get()).second) return;
  program.functions.push_back(fn);
  collect_block(fn->body, seen, program);
}

void collect_block(const Block& block, std::set<const Function*>& seen, Program& program) {
  for (const Stmt& s : block) {
    if (const auto* op = std::get_if<Op>(&s.node)) {
      if (op->kind == OpKind::Call) collect_function(op->callee, seen, program);
    } else if (const auto* f = std::get_if<ForStmt>(&s.node)) {
      collect_block(f->body, seen, program);
    } else if (const auto* i = std::get_if<IfStmt>(&s.node)) {
      collect_block(i->then_body, seen, program);
      collect_block(i->else_body, seen, program);
    }
  }
}

}  // namespace

Program collect_program(std::shared_ptr<const Function> host) {
  Program program;
  program.host = host;
  std::set<const Function*> seen;
  collect_function(host, seen, program);
  return program;
}

bool is_host_worker(const Function& fn) {
  if (fn.body.size() != 1) return false;
  const auto* op = std::get_if<Op>(&fn.body.front().node);
  return op != nullptr && op->kind == OpKind::HostWorker;
}

}  // namespace anyp::ir
