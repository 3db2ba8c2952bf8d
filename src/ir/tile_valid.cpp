// tile_valid.cpp — a partial tile's valid region from its load to its store
// (tile_valid.hpp).
#include "ir/tile_valid.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "anyp/errors.hpp"

namespace anyp::ir {
namespace {

// The tile operand whose valid region an elementwise op's result keeps.
int elementwise_source(const Op& op) {
  switch (op.kind) {
    case OpKind::Assign:
    case OpKind::TileBinary:
    case OpKind::TileUnary:
    case OpKind::TileCast:
    case OpKind::TileCmp:
    case OpKind::TileExpand:
      return 0;
    case OpKind::Select:
      return 1;
    default:
      return -1;
  }
}

// Per variable: how many ops (and parameters) define it.
std::vector<int> count_definitions(Function& fn) {
  std::vector<int> definitions(fn.vars.size(), 0);
  for (const Param& p : fn.params) ++definitions[static_cast<std::size_t>(p.var)];
  for_each_op(fn.body, [&](Op& op) {
    if (op.result >= 0) ++definitions[static_cast<std::size_t>(op.result)];
  });
  return definitions;
}

// A load's run-time valid extent that is assigned more than once (PyPTO's
// `valid = pl.min(C, n - col)` in two loops of one kernel) is read into a
// variable of its own, assigned once, right before the load: the store
// that inherits the region reads that copy, whatever the name holds later.
void snapshot_valid_extents(Function& fn, Block& b, const std::vector<int>& definitions) {
  for (std::size_t k = 0; k < b.size(); ++k) {
    if (auto* loop = std::get_if<ForStmt>(&b[k].node)) {
      snapshot_valid_extents(fn, loop->body, definitions);
      continue;
    }
    if (auto* branch = std::get_if<IfStmt>(&b[k].node)) {
      snapshot_valid_extents(fn, branch->then_body, definitions);
      snapshot_valid_extents(fn, branch->else_body, definitions);
      continue;
    }
    auto* load = std::get_if<Op>(&b[k].node);
    if (load == nullptr || (load->kind != OpKind::Load && load->kind != OpKind::RemoteLoad) ||
        !has_run_time_valid(*load))
      continue;
    std::vector<Stmt> copies;
    for (std::size_t i = operands_before_valid(*load); i < load->args.size(); ++i) {
      Operand& e = load->args[i];
      if (!e.is_var() || definitions[static_cast<std::size_t>(e.var)] == 1) continue;
      const auto copy = static_cast<VarId>(fn.vars.size());
      fn.vars.push_back(Var{"", fn.vars[static_cast<std::size_t>(e.var)].type});
      Op assign;
      assign.kind = OpKind::Assign;
      assign.result = copy;
      assign.args.push_back(e);
      assign.loc = load->loc;
      copies.push_back(Stmt{std::move(assign)});
      e = Operand::of_var(copy);
    }
    b.insert(b.begin() + static_cast<std::ptrdiff_t>(k), copies.begin(), copies.end());
    k += copies.size();
  }
}

}  // namespace

namespace {

// A store (or remote store) of a tile that has a valid region and gives none
// of its own writes the load's region.
void apply(Op& store, const Op& load) {
  if (!has_run_time_valid(load)) {
    store.valid = load.valid;
    return;
  }
  // A run-time valid_shape is carried as the load's extents: immediates, or
  // variables defined once (snapshot_valid_extents made them so).
  store.args.insert(store.args.end(),
                    load.args.begin() + static_cast<std::ptrdiff_t>(operands_before_valid(load)),
                    load.args.end());
  store.count = load.count;
}

// Every variable an op of `b` (nested blocks included) defines.
void defined_in(Block& b, std::set<VarId>& out) {
  for_each_op(b, [&](Op& op) {
    if (op.result >= 0) out.insert(op.result);
  });
}

// Walks `b` in order with `valid`: per tile variable, the load whose region
// its current value has. A loop's body starts without the variables it
// defines (an earlier iteration may have redefined them), and after a loop
// or a branch those variables are unknown (either value may reach).
void carry(const Function& fn, Block& b, std::map<VarId, const Op*>& valid) {
  for (Stmt& s : b) {
    if (auto* loop = std::get_if<ForStmt>(&s.node)) {
      std::set<VarId> inside;
      defined_in(loop->body, inside);
      for (VarId v : inside) valid.erase(v);
      std::map<VarId, const Op*> body = valid;
      carry(fn, loop->body, body);
      continue;
    }
    if (auto* branch = std::get_if<IfStmt>(&s.node)) {
      std::set<VarId> inside;
      defined_in(branch->then_body, inside);
      defined_in(branch->else_body, inside);
      std::map<VarId, const Op*> then_valid = valid, else_valid = valid;
      carry(fn, branch->then_body, then_valid);
      carry(fn, branch->else_body, else_valid);
      for (VarId v : inside) valid.erase(v);
      continue;
    }
    Op& op = std::get<Op>(s.node);
    if ((op.kind == OpKind::Store || op.kind == OpKind::RemoteStore) && op.valid.empty() &&
        !has_run_time_valid(op) && !op.args.empty() && op.args[0].is_var()) {
      const auto it = valid.find(op.args[0].var);
      if (it != valid.end()) apply(op, *it->second);
    }
    if (op.result < 0) continue;
    valid.erase(op.result);
    if (fn.vars[static_cast<std::size_t>(op.result)].type.kind != TypeKind::Tile) continue;
    if ((op.kind == OpKind::Load || op.kind == OpKind::RemoteLoad) &&
        (!op.valid.empty() || has_run_time_valid(op))) {
      valid[op.result] = &op;
      continue;
    }
    const int from = elementwise_source(op);
    if (from < 0 || static_cast<std::size_t>(from) >= op.args.size() || !op.args[from].is_var())
      continue;
    const VarId src = op.args[from].var;
    const auto it = valid.find(src);
    if (it != valid.end() && fn.vars[static_cast<std::size_t>(src)].type.shape.size() ==
                                 fn.vars[static_cast<std::size_t>(op.result)].type.shape.size())
      valid[op.result] = it->second;
  }
}

}  // namespace

void infer_store_valid(Function& fn) {
  snapshot_valid_extents(fn, fn.body, count_definitions(fn));
  std::map<VarId, const Op*> valid;
  carry(fn, fn.body, valid);
}

}  // namespace anyp::ir
