// printer.cpp — IR to text. One line per op, two-space indentation per block.
#include "ir/printer.hpp"

#include <charconv>

namespace anyp::ir {
namespace {

// " Tree" after a broadcast, allgather or all_to_all of another algorithm than Mesh.
std::string algorithm_suffix(const Op& op) {
  const Algorithm a = collective_algorithm(op);
  return a == Algorithm::Mesh ? "" : std::string(" ") + algorithm_name(a);
}

class Printer {
 public:
  Printer(const Function& fn, const DimBindings* bindings) : fn_(fn), bindings_(bindings) {}

  std::string run() {
    out_ += std::string(level_name(fn_.level)) + " " + fn_.name + "(";
    for (std::size_t i = 0; i < fn_.params.size(); ++i) {
      if (i) out_ += ", ";
      const Var& v = fn_.vars[fn_.params[i].var];
      out_ += var(fn_.params[i].var) + ": " + type(v.type);
      if (v.type.kind != TypeKind::Scalar)
        out_ += std::string(" ") + intent_name(fn_.params[i].intent);
    }
    out_ += ") {\n";
    block(fn_.body, 1);
    out_ += "}\n";
    return out_;
  }

 private:
  std::string var(VarId id) const {
    const Var& v = fn_.vars[id];
    return v.name.empty() ? "%" + std::to_string(id) : "%" + v.name;
  }

  std::string expr(const Expr& e) const {
    if (bindings_) {
      EvalResult r = evaluate(e, *bindings_);
      if (r.value) return std::to_string(*r.value);
    }
    return to_string(e);
  }

  // " core_num=4" for a multi-block host collective.
  std::string core_num(const Op& op) const {
    return op.blocks ? " core_num=" + expr(op.blocks) : "";
  }

  std::string shape(const std::vector<Expr>& s) const {
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + expr(s[i]);
    return t + "]";
  }

  std::string type(const Type& t) const {
    switch (t.kind) {
      case TypeKind::Scalar:
        return "Scalar " + std::string(dtype_name(t.dtype));
      case TypeKind::CommCtx:
      case TypeKind::CommDomain:
        return type_kind_name(t.kind);
      default:
        return std::string(type_kind_name(t.kind)) + shape(t.shape) + " " +
               std::string(dtype_name(t.dtype));
    }
  }

  std::string operand(const Operand& o) const {
    if (o.is_var()) return var(o.var);
    if (o.is_float_imm) {
      char buf[64];
      auto res = std::to_chars(buf, buf + sizeof buf, o.float_imm);
      std::string s(buf, res.ptr);
      if (s.find_first_of(".e") == std::string::npos) s += ".0";
      return s;
    }
    return expr(o.int_imm);
  }

  std::string operands(const std::vector<Operand>& args, std::size_t from, std::size_t to) const {
    std::string s;
    for (std::size_t i = from; i < to; ++i) s += (i > from ? ", " : "") + operand(args[i]);
    return s;
  }
  std::string indexed(const std::vector<Operand>& args, std::size_t base, std::size_t from,
                      std::size_t to) const {
    return operand(args[base]) + "[" + operands(args, from, to) + "]";
  }

  // " valid=[1, 17]" for a partial tile's load or store, else "".
  std::string valid(const Op& op) const {
    if (has_run_time_valid(op))
      return " valid=[" + operands(op.args, operands_before_valid(op), op.args.size()) + "]";
    return op.valid.empty() ? "" : " valid=" + shape(op.valid);
  }

  std::string result_type(const Op& op) const {
    return op.result >= 0 ? " : " + type(fn_.vars[op.result].type) : "";
  }

  void line(int depth, const std::string& text) {
    out_.append(static_cast<std::size_t>(depth) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }

  std::string op_text(const Op& op) const {
    const std::string res = op.result >= 0 ? var(op.result) + " = " : "";
    const auto& a = op.args;
    const std::size_t n = operands_before_valid(op);  // a run-time valid_shape: valid(op)
    switch (op.kind) {
      case OpKind::Const:
        return res + "const " + operand(a[0]) + result_type(op);
      case OpKind::Assign:
        return res + operand(a[0]);
      case OpKind::ScalarBinary:
        return res + binary_op_name(attr_of<BinaryOp>(op)) + " " + operands(a, 0, 2) +
               result_type(op);
      case OpKind::ScalarNot:
        return res + "not " + operand(a[0]) + result_type(op);
      case OpKind::ScalarCast:
      case OpKind::TileCast:
        return res + "pl.cast " + operand(a[0]) + result_type(op);
      case OpKind::Index:
        return res + indexed(a, 0, 1, 2) + result_type(op);
      case OpKind::AllocWindow:
        return res + "pld.alloc_window_buffer \"" + op.name + "\" " + shape(op.shape) + " " +
               std::string(dtype_name(op.dtype)) + (n > 0 ? " domain=" + operand(a[0]) : "");
      case OpKind::CommDomain:
        return res + "pld.comm_domain \"" + op.name + "\"";
      case OpKind::CommGroup:
        return "pld.comm_group " + operand(a[0]) +
               (op.count == 0 ? " ranks=[" + operands(a, 1, n) + "]"
                              : " first=" + operand(a[1]) + " count=" + operand(a[2]) +
                                    " stride=" + operand(a[3]));
      case OpKind::Window:
        return res + "pld.window " + operand(a[0]) + " " + shape(op.shape) + " " +
               std::string(dtype_name(op.dtype)) + (n > 1 ? " offset=" + operand(a[1]) : "");
      case OpKind::WorldSize:
        return "pld.world_size";
      case OpKind::Call: {
        const std::size_t nargs = op.has_device ? n - 1 : n;
        std::string s = "call @" + op.callee->name + "(" + operands(a, 0, nargs) + ")";
        if (op.has_device) s += " device=" + operand(a[n - 1]);
        if (op.blocks) s += " blocks=" + expr(op.blocks);
        return s;
      }
      case OpKind::Load:
        return res + "pl.load " + indexed(a, 0, 1, n) + " " + shape(op.shape) + valid(op) +
               result_type(op);
      case OpKind::Store:
        return res + "pl.store " + operand(a[0]) + " -> " + indexed(a, 1, 2, n) + valid(op);
      case OpKind::Read:
        return res + "pl.read " + indexed(a, 0, 1, n) + result_type(op);
      case OpKind::Write:
        return "pl.write " + indexed(a, 0, 2, n) + " = " + operand(a[1]);
      case OpKind::TileBinary:
        return res + tile_binary_name(attr_of<BinaryOp>(op)) + " " + operands(a, 0, 2) +
               result_type(op);
      case OpKind::TileUnary:
      case OpKind::TileReduce:
      case OpKind::TileExpand:
      case OpKind::Matmul:
      case OpKind::Select:
      case OpKind::Concat:
        return res + op_display_name(op) + " " + operands(a, 0, n) + result_type(op);
      case OpKind::TileCmp:
        return res + "pl.cmp " + operands(a, 0, 2) + " " + cmp_kind_name(attr_of<CmpKind>(op)) +
               result_type(op);
      case OpKind::Transpose:
        return res + "pl.transpose " + operand(a[0]) +
               " axes=" + std::to_string(attr_of<TransposeAxes>(op).first) + "," +
               std::to_string(attr_of<TransposeAxes>(op).second) + result_type(op);
      case OpKind::TileSlice:
        return res + "pl.slice " + indexed(a, 0, 1, n) + " " + shape(op.shape) + result_type(op);
      case OpKind::TensorSlice:
        return res + "pl.tensor.slice " + indexed(a, 0, 1, n) + " " + shape(op.shape) +
               result_type(op);
      case OpKind::TensorCopy:
        return "pl.tensor.copy " + operand(a[0]) + " <- " + operand(a[1]);
      case OpKind::TensorBinary:
        return op_display_name(op) + " " + operand(a[0]) + " <- " + operands(a, 1, 3);
      case OpKind::CreateTensor:
        return res + "pl.create_tensor " + shape(op.shape) + result_type(op);
      case OpKind::HostWorker:
        return "pl.host_worker(" + operands(a, 0, n) + ")";
      case OpKind::Arange:
        return res + "pl.arange " + operand(a[0]) +
               (attr_of<ArangeDirection>(op).descending ? " descending" : "") + " " +
               shape(op.shape) + result_type(op);
      case OpKind::Full:
        return res + "pl.full " + operand(a[0]) + " " + shape(op.shape) + result_type(op);
      case OpKind::Reshape:
        return res + "pl.reshape " + operand(a[0]) + " " + shape(op.shape) + result_type(op);
      case OpKind::GetCommCtx:
        return res + "pld.get_comm_ctx " + operand(a[0]);
      case OpKind::Rank:
        return res + "pld.rank " + operand(a[0]) + result_type(op);
      case OpKind::NRanks:
        return res + "pld.nranks " + operand(a[0]) + result_type(op);
      case OpKind::BlockIdx:
        return res + "pl.get_block_idx" + result_type(op);
      case OpKind::BlockNum:
        return res + "pl.get_block_num" + result_type(op);
      case OpKind::Notify:
        return "pld.system.notify " + indexed(a, 0, 3, n) + " peer=" + operand(a[1]) + " " +
               notify_name(attr_of<NotifyKind>(op)) + " " + operand(a[2]);
      case OpKind::Wait:
        return "pld.system.wait " + indexed(a, 0, 2, n) + " " + wait_name(attr_of<WaitKind>(op)) +
               " " + operand(a[1]);
      case OpKind::WaitAsync:
        return "pld.system.wait_async " + operand(a[0]);
      case OpKind::Put:
      case OpKind::Get:
      case OpKind::PutAsync: {
        std::string s = res + std::string(op_kind_name(op.kind)) + " ";
        const std::string atomic = std::string(" atomic=") + atomic_name(attr_of<AtomicKind>(op));
        if (op.shape.empty()) {
          return s + operand(a[0]) + " <- " + operand(a[2]) + " peer=" + operand(a[1]) + atomic;
        }
        const std::size_t dst_end = 3 + static_cast<std::size_t>(op.count);
        return s + indexed(a, 0, 3, dst_end) + " <- " + indexed(a, 2, dst_end, n) + " " +
               shape(op.shape) + " peer=" + operand(a[1]) + atomic;
      }
      case OpKind::RemoteLoad:
        return res + "pld.tile.remote_load " + indexed(a, 0, 2, n) + " peer=" + operand(a[1]) +
               " " + shape(op.shape) + valid(op) + result_type(op);
      case OpKind::RemoteStore:
        return "pld.tile.remote_store " + operand(a[0]) + " -> " + indexed(a, 1, 3, n) +
               " peer=" + operand(a[2]) + " atomic=" + atomic_name(attr_of<AtomicKind>(op)) +
               valid(op);
      case OpKind::Barrier:  // the host form may have no signal (synthesized)
        return res + "pld.tensor.barrier" + (n ? " " + operand(a[0]) : "");
      case OpKind::Allreduce:
        return res + "pld.tensor.allreduce " + operands(a, 0, n) + " " +
               reduce_name(attr_of<AllreduceAttr>(op).op) + " " +
               algorithm_name(attr_of<AllreduceAttr>(op).mode) + core_num(op);
      case OpKind::ReduceScatter:
        return res + "pld.tensor.reduce_scatter " + operands(a, 0, n) + " " +
               reduce_name(attr_of<AllreduceAttr>(op).op) +
               (attr_of<AllreduceAttr>(op).mode == Algorithm::Mesh
                    ? ""
                    : std::string(" ") + algorithm_name(attr_of<AllreduceAttr>(op).mode));
      case OpKind::Broadcast:
        return res + "pld.tensor.broadcast " + operands(a, 0, 2) + " root=" + operand(a[2]) +
               algorithm_suffix(op);
      case OpKind::Allgather:
        return res + op_kind_name(op.kind) + " " + operands(a, 0, n) + algorithm_suffix(op);
      case OpKind::AllToAll:
        return res + op_kind_name(op.kind) + " " + operands(a, 0, n) + algorithm_suffix(op);
      case OpKind::AllToAllV: {
        const auto* unit = std::get_if<CountUnit>(&op.attr);
        return res + op_kind_name(op.kind) + " " + operands(a, 0, n) +
               (unit && unit->rows ? " counts=rows" : "") + core_num(op);
      }
    }
    return "?";
  }

  void block(const Block& b, int depth) {
    for (const Stmt& s : b) {
      if (const auto* op = std::get_if<Op>(&s.node)) {
        line(depth, op_text(*op));
      } else if (const auto* f = std::get_if<ForStmt>(&s.node)) {
        line(depth, "for " + var(f->iv) + " in range(" + operand(f->start) + ", " +
                        operand(f->stop) + (is_unit_step(f->step) ? "" : ", " + operand(f->step)) +
                        ") {");
        block(f->body, depth + 1);
        line(depth, "}");
      } else if (const auto* i = std::get_if<IfStmt>(&s.node)) {
        line(depth, "if " + operand(i->cond) + " {");
        block(i->then_body, depth + 1);
        if (!i->else_body.empty()) {
          line(depth, "} else {");
          block(i->else_body, depth + 1);
        }
        line(depth, "}");
      }
    }
  }

  const Function& fn_;
  const DimBindings* bindings_;
  std::string out_;
};

}  // namespace

std::string print_function(const Function& fn, const DimBindings* bindings) {
  return Printer(fn, bindings).run();
}

std::string print_program(const Program& program, const DimBindings* bindings) {
  std::string out;
  for (std::size_t i = 0; i < program.functions.size(); ++i) {
    if (i) out += "\n";
    out += print_function(*program.functions[i], bindings);
  }
  return out;
}

}  // namespace anyp::ir
