// tile_valid.cpp — a partial tile's valid region from its load to its store
// (tile_valid.hpp).
#include "ir/tile_valid.hpp"

#include <functional>
#include <string>
#include <vector>

#include "anyp/errors.hpp"

namespace anyp::ir {
namespace {

// Calls `f` on every op of `b`, nested blocks included, in order.
void for_each_op(Block& b, const std::function<void(Op&)>& f) {
  for (Stmt& s : b) {
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

}  // namespace

void infer_store_valid(Function& fn) {
  const std::size_t n = fn.vars.size();
  std::vector<int> definitions(n, 0);
  for (const Param& p : fn.params) ++definitions[static_cast<std::size_t>(p.var)];
  for_each_op(fn.body, [&](Op& op) {
    if (op.result >= 0) ++definitions[static_cast<std::size_t>(op.result)];
  });
  // Loops define their variable too (it is never a tile).
  // Per tile variable: the load whose valid_shape it has (static or run-time).
  std::vector<const Op*> valid(n, nullptr);
  for_each_op(fn.body, [&](Op& op) {
    if (op.result < 0 || definitions[static_cast<std::size_t>(op.result)] != 1) return;
    if (fn.vars[static_cast<std::size_t>(op.result)].type.kind != TypeKind::Tile) return;
    if ((op.kind == OpKind::Load || op.kind == OpKind::RemoteLoad) &&
        (!op.valid.empty() || has_run_time_valid(op))) {
      valid[static_cast<std::size_t>(op.result)] = &op;
      return;
    }
    const int from = elementwise_source(op);
    if (from < 0 || static_cast<std::size_t>(from) >= op.args.size() || !op.args[from].is_var())
      return;
    const auto src = static_cast<std::size_t>(op.args[from].var);
    if (definitions[src] == 1 && fn.vars[src].type.shape.size() ==
                                     fn.vars[static_cast<std::size_t>(op.result)].type.shape.size())
      valid[static_cast<std::size_t>(op.result)] = valid[src];
  });
  for_each_op(fn.body, [&](Op& op) {
    if (op.kind != OpKind::Store && op.kind != OpKind::RemoteStore) return;
    if (!op.valid.empty() || has_run_time_valid(op)) return;
    if (op.args.empty() || !op.args[0].is_var()) return;
    const Op* load = valid[static_cast<std::size_t>(op.args[0].var)];
    if (load == nullptr) return;
    if (!has_run_time_valid(*load)) {
      op.valid = load->valid;
      return;
    }
    // A run-time valid_shape is carried when its extents cannot change
    // between the load and the store: immediates, or variables defined once.
    for (std::size_t i = operands_before_valid(*load); i < load->args.size(); ++i) {
      const Operand& e = load->args[i];
      if (!e.is_var() || definitions[static_cast<std::size_t>(e.var)] == 1) continue;
      const std::string& name = fn.vars[static_cast<std::size_t>(e.var)].name;
      throw CompileError("compile error: function '" + fn.name + "' (" + level_name(fn.level) +
                         "), op " + op_site_name(op) +
                         ": the tile comes from a load with a run-time valid_shape whose extent " +
                         (name.empty() ? "%" + std::to_string(e.var) : "'" + name + "'") +
                         " is assigned more than once, so the store cannot tell which value "
                         "its valid part had; give the store its own valid_shape");
    }
    op.args.insert(op.args.end(),
                   load->args.begin() + static_cast<std::ptrdiff_t>(operands_before_valid(*load)),
                   load->args.end());
    op.count = load->count;
  });
}

}  // namespace anyp::ir
