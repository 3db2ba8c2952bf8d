// trace.hpp — the recorder behind pl:: and pld::. While a body lambda runs,
// a Trace is active on this thread; every pl/pld call appends an op to its
// innermost open block. Traces nest (tracing a host function traces the
// functions it calls), so the active traces form a thread-local stack. A
// Trace leaves that stack when it is destroyed, also by an exception.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anyp/pl.hpp"
#include "ir/function.hpp"

namespace anyp::detail {

class Trace {
 public:
  Trace(std::string name, ir::Level level);
  ~Trace();
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  // The innermost active trace; throws CompileError naming `op` if none.
  static Trace& current(std::string_view op);
  static Trace* active();

  ir::VarId new_var(ir::Type type, std::string name = "");
  VarRef ref(ir::VarId id) const { return VarRef{this, id}; }
  // The variable behind a handle; it must belong to this trace.
  ir::VarId id_of(VarRef v, std::string_view op) const;
  const ir::Type& type_of(ir::VarId id) const { return fn_.vars[id].type; }
  ir::Type operand_type(const ir::Operand& o) const;
  ir::Operand operand(const pl::ScalarArg& arg, std::string_view op) const;

  void add_param(ir::VarId var, ir::Intent intent) { fn_.params.push_back({var, intent}); }
  const ir::Function& function() const { return fn_; }
  void emit(ir::Op op);
  // Sets the block count of the op just emitted (a host collective's core_num).
  void set_last_op_blocks(ir::Expr blocks);
  void emit_stmt(ir::Stmt stmt);
  void push_block();
  ir::Block pop_block();
  // pl::range bodies being traced (ops that may not sit in a loop check it).
  int loop_depth() const { return static_cast<int>(open_loops_.size()); }
  void enter_loop() { open_loops_.push_back(next_loop_++); }
  void exit_loop() { open_loops_.pop_back(); }

  // Tensors made by pl::create_tensor (and the value-returning tensor ops):
  // values, which copying and assigning copy (pl_values.cpp).
  void mark_created(ir::VarId var);
  bool created(ir::VarId var) const { return var >= 0 && created_root(var) == var; }
  // The created tensor whose storage `var` views (itself, or the source of
  // the slices it was taken by), or -1.
  ir::VarId created_root(ir::VarId var) const {
    return static_cast<std::size_t>(var) < defs_.size() ? defs_[var].root : -1;
  }
  // Whether `var` was made inside a loop that is still being traced and
  // `outside` before that loop began: a loop-local created tensor that the
  // loop re-creates (zeroed, in the same storage) in every iteration.
  bool inside_open_loop_not_enclosing(ir::VarId var, ir::VarId outside) const;
  // A view variable assigned a view of created tensor `root` views it too.
  void add_view_root(ir::VarId var, ir::VarId root) {
    if (root >= 0) defs_[var].root = root;
  }

  // Names an unnamed variable (the Python front-end names a created tensor
  // after the name it is bound to; diagnostics and the IR show it).
  void name_if_unnamed(ir::VarId var, const std::string& name) {
    if (fn_.vars[var].name.empty()) fn_.vars[var].name = name;
  }

  [[noreturn]] void fail(const std::string& what) const;
  ir::Function finish();

 private:
  ir::Function fn_;
  std::vector<ir::Block> blocks_;
  // Per variable: the loops open when it was made and the created tensor
  // it views (-1: none; itself: it is one).
  struct Definition {
    std::size_t loops = 0;  // open loops, outermost first: open_loops_[0, loops)
    int innermost = -1;     // the innermost one's id, -1 outside every loop
    ir::VarId root = -1;
  };
  std::vector<Definition> defs_;
  std::vector<int> open_loops_;  // ids of the pl::range bodies being traced
  int next_loop_ = 0;
};

}  // namespace anyp::detail
