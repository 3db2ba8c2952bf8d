// trace.cpp — the thread-local stack of active traces and op recording.
#include "frontend/trace.hpp"

#include <algorithm>
#include <iterator>

#include "anyp/errors.hpp"
#include "frontend/call_site.hpp"

namespace anyp::detail {
namespace {
thread_local std::vector<Trace*> active_traces;
}

Trace::Trace(std::string name, ir::Level level) {
  fn_.name = std::move(name);
  fn_.level = level;
  blocks_.emplace_back();
  active_traces.push_back(this);
}

// Traces live on the stack of FunctionDef::trace(), so they end in LIFO order,
// also when a body throws; erasing by identity keeps the stack exact anyway.
Trace::~Trace() {
  auto it = std::find(active_traces.rbegin(), active_traces.rend(), this);
  if (it != active_traces.rend()) active_traces.erase(std::next(it).base());
}

Trace* Trace::active() { return active_traces.empty() ? nullptr : active_traces.back(); }

Trace& Trace::current(std::string_view op) {
  if (active_traces.empty()) {
    throw CompileError("compile error: " + std::string(op) +
                       " used outside a traced function body (pl::jit::host, "
                       "pl::jit::orchestration or pl::jit::incore)");
  }
  return *active_traces.back();
}

ir::VarId Trace::new_var(ir::Type type, std::string name) {
  fn_.vars.push_back(ir::Var{std::move(name), std::move(type)});
  defs_.push_back(Definition{open_loops_.size(), open_loops_.empty() ? -1 : open_loops_.back()});
  return static_cast<ir::VarId>(fn_.vars.size() - 1);
}

bool Trace::inside_open_loop_not_enclosing(ir::VarId var, ir::VarId outside) const {
  const Definition& d = defs_[var];
  if (d.loops == 0 || d.loops > open_loops_.size()) return false;
  if (open_loops_[d.loops - 1] != d.innermost) return false;  // that loop was closed
  return defs_[outside].loops < d.loops;
}

void Trace::mark_created(ir::VarId var) { defs_[var].root = var; }

ir::VarId Trace::id_of(VarRef v, std::string_view op) const {
  if (!v.valid()) fail(std::string(op) + ": a moved-from or empty handle was used");
  if (v.owner != this) {
    fail(std::string(op) +
         ": a value of another function was used; pass it as a parameter instead of capturing it");
  }
  return v.id;
}

ir::Type Trace::operand_type(const ir::Operand& o) const {
  if (o.is_var()) return type_of(o.var);
  if (o.is_float_imm) return ir::scalar_type(DType::FP32);
  // An integer constant is INT32 unless it does not fit in 32 bits.
  const bool wide =
      ir::is_const(o.int_imm) && (o.int_imm->value < INT32_MIN || o.int_imm->value > INT32_MAX);
  return ir::scalar_type(wide ? DType::INT64 : DType::INT32);
}

ir::Operand Trace::operand(const pl::ScalarArg& arg, std::string_view op) const {
  switch (arg.kind()) {
    case pl::ScalarArg::Kind::Var: {
      ir::VarId id = id_of(arg.var(), op);
      if (type_of(id).kind != ir::TypeKind::Scalar) {
        fail(std::string(op) + ": expected a scalar, got " + ir::to_string(type_of(id)));
      }
      return ir::Operand::of_var(id);
    }
    case pl::ScalarArg::Kind::Int: {
      if (fn_.level != ir::Level::Host) {
        bool world_size = false;
        ir::for_each_dim(arg.int_expr(), [&](std::int64_t id, const std::string&) {
          world_size = world_size || id == ir::kWorldSizeDimId;
        });
        if (world_size) {
          fail(std::string("op pld.world_size is not allowed at the ") + ir::level_name(fn_.level) +
               " level (it is a host op; other levels may use it only in shapes)");
        }
      }
      return ir::Operand::of_int(arg.int_expr());
    }
    case pl::ScalarArg::Kind::Float:
      return ir::Operand::of_float(arg.float_value());
  }
  return {};
}

void Trace::emit(ir::Op op) {
  if (!op.loc.known()) op.loc = current_call_site();
  // A view (a slice, a row) of a created tensor views that tensor's storage.
  if (const int v = ir::result_view_operand(op); v >= 0 && op.result >= 0 && op.args[v].is_var()) {
    defs_[op.result].root = created_root(op.args[v].var);
  }
  blocks_.back().push_back(ir::Stmt{std::move(op)});
}
void Trace::set_last_op_blocks(ir::Expr blocks) {
  std::get<ir::Op>(blocks_.back().back().node).blocks = std::move(blocks);
}
void Trace::emit_stmt(ir::Stmt stmt) { blocks_.back().push_back(std::move(stmt)); }
void Trace::push_block() { blocks_.emplace_back(); }

ir::Block Trace::pop_block() {
  ir::Block b = std::move(blocks_.back());
  blocks_.pop_back();
  return b;
}

void Trace::fail(const std::string& what) const {
  const ir::SourceLoc here = current_call_site();
  throw CompileError("compile error: function '" + fn_.name + "' (" + ir::level_name(fn_.level) +
                     ")" + (here.known() ? " at " + ir::to_string(here) : std::string()) + ": " +
                     what);
}

ir::Function Trace::finish() {
  // pl::range and pl::if_ pop the block they push when their body returns;
  // a body that threw and was caught inside this trace leaves it open, and
  // the ops recorded since would be silently misplaced.
  if (blocks_.size() != 1 || !open_loops_.empty()) {
    fail(
        "a pl::range or pl::if_ body was left by an exception that was caught inside this "
        "function's body; let exceptions thrown while tracing propagate out of the body");
  }
  fn_.body = std::move(blocks_.front());
  blocks_.clear();
  blocks_.emplace_back();
  return std::move(fn_);
}

}  // namespace anyp::detail
