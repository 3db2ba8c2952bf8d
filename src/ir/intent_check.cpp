// intent_check.cpp — the pl::In rule (see intent_check.hpp): which variables
// may hold a view of an In tensor parameter, and the writes and calls that
// the rule refuses.
#include "ir/intent_check.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "anyp/errors.hpp"

namespace anyp::ir {
namespace {

// Per variable: the In tensor parameters it may be a view of (sorted ids).
using AliasSets = std::vector<std::vector<VarId>>;

void join_into(AliasSets& into, const AliasSets& from) {
  for (std::size_t v = 0; v < into.size(); ++v) {
    if (from[v].empty()) continue;
    std::vector<VarId> merged;
    std::set_union(into[v].begin(), into[v].end(), from[v].begin(), from[v].end(),
                   std::back_inserter(merged));
    into[v] = std::move(merged);
  }
}

class IntentChecker {
 public:
  // With `written`: tracks every tensor parameter and, instead of refusing
  // a write, marks each parameter the written variable may be a view of.
  explicit IntentChecker(const Function& fn, std::vector<bool>* written = nullptr)
      : fn_(fn), written_(written) {}

  void run() {
    AliasSets state(fn_.vars.size());
    for (const Param& p : fn_.params) {
      if ((written_ || p.intent == Intent::In) && fn_.vars[p.var].type.kind == TypeKind::Tensor)
        state[p.var] = {p.var};
    }
    block(fn_.body, state);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw CompileError("compile error: function '" + fn_.name + "' (" + level_name(fn_.level) +
                       "): " + what);
  }

  // "parameter 'x'", or "parameter 'x' (through a copy or view of its handle)".
  std::string what_is_written(VarId through, VarId param) const {
    std::string s = "parameter '" + fn_.vars[param].name + "'";
    if (through != param) s += " (through a copy or view of its handle)";
    return s;
  }

  void check_op(const Op& op, const AliasSets& state) const {
    for (std::size_t i : written_memory_operands(op)) {
      if (i >= op.args.size() || !op.args[i].is_var()) continue;
      const VarId v = op.args[i].var;
      if (state[v].empty()) continue;
      if (written_) {
        mark(state[v]);
        continue;
      }
      fail(op_site_name(op) + " writes " + what_is_written(v, state[v].front()) +
           ", which is declared pl::In; declare it pl::Out or pl::InOut");
    }
    if (op.kind != OpKind::Call) return;
    const Function& callee = *op.callee;
    const std::size_t n = std::min(callee.params.size(), op.args.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (!op.args[i].is_var() || callee.params[i].intent == Intent::In) continue;
      const VarId v = op.args[i].var;
      if (state[v].empty()) continue;
      if (written_) {
        mark(state[v]);
        continue;
      }
      const std::string to = callee.vars[callee.params[i].var].name;
      fail(op_site_name(op) + " passes " + what_is_written(v, state[v].front()) +
           ", which is declared pl::In, to parameter '" + to + "' of '" + callee.name +
           "', which is pl::" + (callee.params[i].intent == Intent::Out ? "Out" : "InOut") + " ('" +
           callee.name + "' may write it); declare '" + fn_.vars[state[v].front()].name +
           "' pl::InOut, or declare '" + to + "' pl::In if '" + callee.name + "' only reads it");
    }
  }

  void op(const Op& op, AliasSets& state) const {
    check_op(op, state);
    if (op.result < 0) return;
    const int from = result_view_operand(op);
    if (from >= 0 && static_cast<std::size_t>(from) < op.args.size() && op.args[from].is_var()) {
      if (op.args[from].var != op.result) state[op.result] = state[op.args[from].var];
    } else {
      state[op.result].clear();
    }
  }

  void block(const Block& b, AliasSets& state) const {
    for (const Stmt& s : b) {
      if (const auto* o = std::get_if<Op>(&s.node)) {
        op(*o, state);
      } else if (const auto* f = std::get_if<ForStmt>(&s.node)) {
        // The body runs zero or more times: iterate to the fixed point of
        // "entry joined with the end of the body". Sets only grow, so a
        // refusal found on an early pass holds for the fixed point too.
        state[f->iv].clear();
        for (;;) {
          AliasSets after = state;
          block(f->body, after);
          AliasSets joined = state;
          join_into(joined, after);
          if (joined == state) break;
          state = std::move(joined);
        }
      } else if (const auto* i = std::get_if<IfStmt>(&s.node)) {
        AliasSets other = state;
        block(i->then_body, state);
        block(i->else_body, other);
        join_into(state, other);
      }
    }
  }

  void mark(const std::vector<VarId>& params) const {
    for (VarId p : params) (*written_)[static_cast<std::size_t>(p)] = true;
  }

  const Function& fn_;
  std::vector<bool>* written_;
};

}  // namespace

void check_intents(const Function& fn) { IntentChecker(fn).run(); }

std::vector<bool> written_tensor_parameters(const Function& fn) {
  std::vector<bool> written(fn.vars.size(), false);
  IntentChecker(fn, &written).run();
  written.resize(fn.params.size());  // params[i].var == i
  return written;
}

}  // namespace anyp::ir
