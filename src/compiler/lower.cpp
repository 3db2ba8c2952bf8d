// lower.cpp — IR (orchestration + inlined kernels) to flat VM code.
#include "compiler/lower.hpp"

#include <map>
#include <type_traits>

#include "anyp/errors.hpp"
#include "compiler/choose_algorithm.hpp"
#include "compiler/emitter.hpp"
#include "compiler/lower_collectives.hpp"
#include "ir/verifier.hpp"

namespace anyp::compiler {

using runtime::Instr;
using runtime::Opcode;

namespace {

// An instruction's `sub` field: the op attribute's enum value as is (the VM
// reads it back as the same enum, op_attrs.hpp).
template <class Enum>
std::uint8_t vm_sub(Enum e) {
  static_assert(std::is_enum_v<Enum> && sizeof(Enum) == 1);
  return static_cast<std::uint8_t>(e);
}

char file_of(const ir::Type& t) {
  switch (t.kind) {
    case ir::TypeKind::Scalar:
      return 's';
    case ir::TypeKind::Tile:
      return 't';
    case ir::TypeKind::Tensor:
    case ir::TypeKind::DistTensor:
      return 'v';
    default:
      return '-';
  }
}

class Lowerer {
 public:
  Lowerer(runtime::LoweredCode& code, const ir::DimBindings& bindings, const CommScope& scope,
          const ModelSource& model)
      : e_(code), code_(code), bindings_(bindings), scope_(scope), model_(model) {}

  struct Frame {
    const ir::Function* fn;
    std::vector<std::int32_t> regs;
    std::vector<std::int32_t> domains;   // per window variable: its comm domain (-1: the world)
    std::vector<std::int32_t> ctx_view;  // per comm context of a group view: that view's register
  };

  Frame frame_for(const ir::Function& fn) {
    Frame f{&fn, std::vector<std::int32_t>(fn.vars.size(), -1),
            std::vector<std::int32_t>(fn.vars.size(), -1),
            std::vector<std::int32_t>(fn.vars.size(), -1)};
    for (std::size_t v = 0; v < fn.vars.size(); ++v) {
      switch (file_of(fn.vars[v].type)) {
        case 's':
          f.regs[v] = e_.scalar_reg();
          break;
        case 't':
          f.regs[v] = e_.tile_reg();
          break;
        case 'v':
          f.regs[v] = e_.view_reg();
          break;
        default:
          break;
      }
    }
    return f;
  }

  void lower_entry(const ir::Function& orch, const ParamDomains& domains) {
    code_.function = orch.name;
    Frame f = frame_for(orch);
    for (std::size_t i = 0; i < orch.params.size() && i < domains.size(); ++i)
      f.domains[orch.params[i].var] = domains[i];
    for (const auto& p : orch.params) {
      code_.param_files.push_back(file_of(orch.vars[p.var].type));
      code_.param_regs.push_back(f.regs[p.var]);
    }
    block(f, orch.body);
  }

 private:
  std::int64_t eval(const ir::Expr& e) const {
    ir::EvalResult r = ir::evaluate(e, bindings_);
    if (!r.value)
      throw CompileError("compile error: lowering: " + ir::to_string(e) + ": " + r.error);
    return *r.value;
  }
  std::vector<std::int64_t> eval_shape(const std::vector<ir::Expr>& s) const {
    std::vector<std::int64_t> out;
    for (const auto& e : s) out.push_back(eval(e));
    return out;
  }

  std::int32_t scalar(const Frame& f, const ir::Operand& o) {
    if (o.is_var()) return f.regs[o.var];
    if (o.is_float_imm) return e_.float_constant(o.float_imm);
    return e_.int_constant(eval(o.int_imm));
  }
  std::int32_t reg(const Frame& f, const ir::Operand& o) { return f.regs[o.var]; }
  std::vector<std::int32_t> scalars(const Frame& f, const std::vector<ir::Operand>& a,
                                    std::size_t from, std::size_t to) {
    std::vector<std::int32_t> out;
    for (std::size_t i = from; i < to; ++i) out.push_back(scalar(f, a[i]));
    return out;
  }
  // A partial tile's valid_shape: static (Instr::valid), or run-time (its
  // extents' registers appended to idx, count of them in Instr::count).
  void run_time_valid(const Frame& f, const ir::Op& op, Instr& i) {
    i.valid = eval_shape(op.valid);
    if (!ir::has_run_time_valid(op)) return;
    for (std::size_t k = ir::operands_before_valid(op); k < op.args.size(); ++k)
      i.idx.push_back(scalar(f, op.args[k]));
    i.count = op.count;
  }
  DType dtype_of(const Frame& f, ir::VarId v) const { return f.fn->vars[v].type.dtype; }
  // The right operand of a tile op that takes a tile or a scalar: b is a
  // tile register (count 0) or a scalar one (count 1).
  void right_operand(const Frame& f, const ir::Operand& o, Instr& i) {
    const bool tile = o.is_var() && f.fn->vars[o.var].type.kind == ir::TypeKind::Tile;
    i.count = tile ? 0 : 1;
    i.b = tile ? reg(f, o) : scalar(f, o);
  }

  void block(Frame& f, const ir::Block& b) {
    for (const ir::Stmt& s : b) {
      if (const auto* op = std::get_if<ir::Op>(&s.node)) {
        lower_op(f, *op);
      } else if (const auto* loop = std::get_if<ir::ForStmt>(&s.node)) {
        e_.set_site(f.fn->name, "pl.range", loop->loc);
        if (!ir::is_unit_step(loop->step)) {
          stepped_loop(f, *loop);
          continue;
        }
        const std::int32_t start = scalar(f, loop->start);
        const std::int32_t stop = e_.scalar_reg();
        e_.mov(stop, scalar(f, loop->stop));
        const std::int32_t iv = f.regs[loop->iv];
        e_.for_range(start, stop, -1, [&](std::int32_t counter) {
          e_.mov(iv, counter);
          block(f, loop->body);
        });
      } else if (const auto* c = std::get_if<ir::IfStmt>(&s.node)) {
        e_.set_site(f.fn->name, "pl.if_", c->loc);
        Instr test;
        test.op = Opcode::JumpIfZero;
        test.a = scalar(f, c->cond);
        const std::size_t to_else = e_.emit(test);
        block(f, c->then_body);
        Instr skip;
        skip.op = Opcode::Jump;
        const std::size_t to_end = e_.emit(skip);
        e_.patch(to_else, e_.here());
        block(f, c->else_body);
        e_.patch(to_end, e_.here());
      }
    }
  }

  // pl.range with a step other than the constant 1. The bound and the step
  // are read once, at entry; a step read at run time is checked to be non-zero
  // (check.step) and its sign picks the exit test on every iteration. The
  // counter adds in INT64 (loop.step), and an add that would overflow INT64
  // leaves the loop instead of wrapping around past the bound.
  void stepped_loop(Frame& f, const ir::ForStmt& loop) {
    const std::int32_t counter = e_.scalar_reg();
    e_.mov(counter, scalar(f, loop.start));
    const std::int32_t stop = e_.scalar_reg();
    e_.mov(stop, scalar(f, loop.stop));
    std::int32_t step = -1;
    int sign = 0;  // the constant step's sign; 0: read at run time
    if (loop.step.is_var()) {
      step = e_.scalar_reg();
      e_.mov(step, scalar(f, loop.step));
      Instr check;
      check.op = Opcode::CheckStep;
      check.a = step;
      e_.emit(check);
    } else {
      const std::int64_t v = eval(loop.step.int_imm);
      if (v == 0) {
        throw CompileError("compile error: function '" + f.fn->name + "' (" +
                           ir::level_name(f.fn->level) + "), op " +
                           ir::site_name("pl.range", loop.loc) + ": the step " +
                           ir::to_string(loop.step.int_imm) + " is 0 here");
      }
      sign = v > 0 ? 1 : -1;
      step = e_.int_constant(v);
    }
    const auto op = [](ir::BinaryOp b) { return vm_sub(b); };
    const std::int32_t up =
        sign == 0 ? e_.binary(op(ir::BinaryOp::Gt), step, e_.int_constant(0)) : -1;
    const std::size_t top = e_.here();
    Instr exit;
    exit.op = Opcode::JumpIfGe;
    if (sign > 0) {  // leave when counter >= stop
      exit.a = counter;
      exit.b = stop;
    } else if (sign < 0) {  // leave when counter <= stop
      exit.a = stop;
      exit.b = counter;
    } else {  // leave when (up && counter >= stop) || (!up && counter <= stop)
      const std::int32_t past_up = e_.binary(op(ir::BinaryOp::Ge), counter, stop);
      const std::int32_t past_down = e_.binary(op(ir::BinaryOp::Ge), stop, counter);
      const std::int32_t down = e_.binary(op(ir::BinaryOp::Eq), up, e_.int_constant(0));
      exit.a = e_.binary(op(ir::BinaryOp::Or), e_.binary(op(ir::BinaryOp::And), up, past_up),
                         e_.binary(op(ir::BinaryOp::And), down, past_down));
      exit.b = e_.int_constant(1);
    }
    const std::size_t exit_jump = e_.emit(exit);
    e_.mov(f.regs[loop.iv], counter);
    block(f, loop.body);
    e_.set_site(f.fn->name, "pl.range", loop.loc);
    Instr inc;  // an increment past INT64 leaves the loop: it is past every bound
    inc.op = Opcode::LoopStep;
    inc.a = counter;
    inc.b = step;
    const std::size_t overflow_jump = e_.emit(inc);
    Instr back;
    back.op = Opcode::Jump;
    back.imm = static_cast<std::int64_t>(top);
    e_.emit(back);
    e_.patch(exit_jump, e_.here());
    e_.patch(overflow_jump, e_.here());
  }

  void lower_op(Frame& f, const ir::Op& op) {
    e_.set_site(f.fn->name, ir::op_display_name(op), op.loc);
    // A window result holds a view of its first window operand's domain
    // (check_functions made sure a variable keeps one).
    if (op.result >= 0 && f.fn->vars[op.result].type.kind == ir::TypeKind::DistTensor) {
      if (const ir::Operand* w = first_window(*f.fn, op)) f.domains[op.result] = f.domains[w->var];
    }
    const auto& a = op.args;
    const std::size_t n = ir::operands_before_valid(op);  // (a run-time valid_shape follows)
    Instr i;
    i.dst = op.result >= 0 ? f.regs[op.result] : -1;
    switch (op.kind) {
      case ir::OpKind::Const:
      case ir::OpKind::Assign: {
        const char file = file_of(f.fn->vars[op.result].type);
        if (file == '-') return;
        i.op = file == 's' ? Opcode::Mov : file == 't' ? Opcode::MovTile : Opcode::MovView;
        i.a = file == 's' ? scalar(f, a[0]) : reg(f, a[0]);
        if (i.a == i.dst) return;
        break;
      }
      case ir::OpKind::ScalarBinary:
        i.op = Opcode::ScalarBin;
        i.sub = vm_sub(ir::attr_of<ir::BinaryOp>(op));
        i.a = scalar(f, a[0]);
        i.b = scalar(f, a[1]);
        i.dtype = dtype_of(f, op.result);
        break;
      case ir::OpKind::ScalarNot:
        i.op = Opcode::ScalarNot;
        i.a = scalar(f, a[0]);
        break;
      case ir::OpKind::ScalarCast:
        i.op = Opcode::ScalarCast;
        i.a = scalar(f, a[0]);
        i.dtype = op.dtype;
        break;
      case ir::OpKind::Load:
        i.op = Opcode::Load;
        i.a = reg(f, a[0]);
        i.idx = scalars(f, a, 1, n);
        i.shape = eval_shape(op.shape);
        run_time_valid(f, op, i);
        break;
      case ir::OpKind::Store:
        i.op = Opcode::Store;
        i.dst = -1;
        i.a = reg(f, a[0]);
        i.b = reg(f, a[1]);
        i.idx = scalars(f, a, 2, n);
        run_time_valid(f, op, i);
        break;
      case ir::OpKind::Read:
        i.op = Opcode::Read;
        i.a = reg(f, a[0]);
        i.idx = scalars(f, a, 1, n);
        break;
      case ir::OpKind::Write:
        i.op = Opcode::Write;
        i.a = reg(f, a[0]);
        i.b = scalar(f, a[1]);
        i.idx = scalars(f, a, 2, n);
        break;
      case ir::OpKind::TileBinary: {
        i.op = Opcode::TileBin;
        i.sub = vm_sub(ir::attr_of<ir::BinaryOp>(op));
        i.a = reg(f, a[0]);
        right_operand(f, a[1], i);
        break;
      }
      case ir::OpKind::TileCast:
        i.op = Opcode::TileCast;
        i.a = reg(f, a[0]);
        i.dtype = op.dtype;
        break;
      case ir::OpKind::Full:
        i.op = Opcode::FullTile;
        i.a = scalar(f, a[0]);
        i.dtype = op.dtype;
        i.shape = eval_shape(op.shape);
        break;
      case ir::OpKind::Reshape:
        i.op = Opcode::ReshapeTile;
        i.a = reg(f, a[0]);
        i.shape = eval_shape(op.shape);
        break;
      case ir::OpKind::TileUnary:
        i.op = Opcode::TileUnary;
        i.sub = vm_sub(ir::attr_of<ir::UnaryOp>(op));
        i.a = reg(f, a[0]);
        break;
      case ir::OpKind::TileCmp: {
        i.op = Opcode::TileCmp;
        i.sub = vm_sub(ir::attr_of<ir::CmpKind>(op));
        i.a = reg(f, a[0]);
        right_operand(f, a[1], i);
        i.dtype = dtype_of(f, op.result);
        break;
      }
      case ir::OpKind::Select:
        i.op = Opcode::Select;
        i.a = reg(f, a[0]);
        i.b = reg(f, a[1]);
        i.c = reg(f, a[2]);
        break;
      case ir::OpKind::TileReduce:  // a PyPTO scratch operand (a[1]) is not needed
        i.op = Opcode::TileReduce;
        i.sub = vm_sub(ir::attr_of<ir::AxisReduce>(op).kind);
        i.count = ir::attr_of<ir::AxisReduce>(op).row ? 1 : 0;
        i.a = reg(f, a[0]);
        break;
      case ir::OpKind::TileExpand:
        i.op = Opcode::TileExpand;
        i.sub = vm_sub(ir::attr_of<ir::AxisExpand>(op).kind);
        i.count = ir::attr_of<ir::AxisExpand>(op).row ? 1 : 0;
        i.a = reg(f, a[0]);
        i.b = reg(f, a[1]);
        break;
      case ir::OpKind::Matmul: {
        const ir::MatmulInit init = ir::matmul_form_init(ir::attr_of<ir::MatmulForm>(op));
        const std::size_t first = init == ir::MatmulInit::Acc ? 1 : 0;
        i.op = Opcode::Matmul;
        i.sub = vm_sub(init);
        i.a = reg(f, a[first]);
        i.b = reg(f, a[first + 1]);
        if (init != ir::MatmulInit::Zero) i.c = reg(f, a[init == ir::MatmulInit::Acc ? 0 : 2]);
        i.dtype = dtype_of(f, op.result);
        break;
      }
      case ir::OpKind::Transpose:
        i.op = Opcode::Transpose;
        i.a = reg(f, a[0]);
        i.imm = ir::attr_of<ir::TransposeAxes>(op).first;
        i.count = ir::attr_of<ir::TransposeAxes>(op).second;
        break;
      case ir::OpKind::TileSlice:
        i.op = Opcode::SliceTile;
        i.a = reg(f, a[0]);
        i.idx = scalars(f, a, 1, n);
        i.shape = eval_shape(op.shape);
        break;
      case ir::OpKind::Concat:
        i.op = Opcode::ConcatTile;
        i.a = reg(f, a[0]);
        i.b = reg(f, a[1]);
        break;
      case ir::OpKind::Arange:
        i.op = Opcode::Arange;
        i.a = scalar(f, a[0]);
        i.imm = ir::attr_of<ir::ArangeDirection>(op).descending ? 1 : 0;
        i.dtype = op.dtype;
        i.shape = eval_shape(op.shape);
        break;
      case ir::OpKind::TensorSlice:
        i.op = Opcode::SliceView;
        i.a = reg(f, a[0]);
        i.idx = scalars(f, a, 1, n);
        i.shape = eval_shape(op.shape);
        break;
      case ir::OpKind::CreateTensor: {
        i.op = Opcode::CreateView;
        i.dtype = op.dtype;
        i.shape = eval_shape(op.shape);
        i.count = static_cast<std::int32_t>(launch_blocks_);
        i.imm = static_cast<std::int64_t>(code_.scratch.size());
        const std::string& var = f.fn->vars[op.result].name;
        code_.scratch.push_back(runtime::ScratchTensor{
            f.fn->name + "." + (var.empty() ? "%" + std::to_string(op.result) : var), op.dtype,
            i.shape, launch_blocks_, /*shared=*/false});
        break;
      }
      case ir::OpKind::HostWorker: {
        i.op = Opcode::HostWorker;
        i.imm = static_cast<std::int64_t>(code_.host_workers.size());
        runtime::HostWorkerDesc desc{f.fn->name, op.host_worker, {}};
        for (std::size_t k = 0; k < n; ++k) {
          i.idx.push_back(reg(f, a[k]));
          desc.writes.push_back(f.fn->params[k].intent != ir::Intent::In);
        }
        code_.host_workers.push_back(std::move(desc));
        break;
      }
      case ir::OpKind::TensorCopy:
        i.op = Opcode::CopyView;
        i.a = reg(f, a[0]);
        i.b = reg(f, a[1]);
        break;
      case ir::OpKind::TensorBinary: {
        i.op = Opcode::TensorBin;
        i.sub = vm_sub(ir::attr_of<ir::BinaryOp>(op));
        i.a = reg(f, a[0]);
        i.b = reg(f, a[1]);
        const bool view = a[2].is_var() && ir::is_memory(f.fn->vars[a[2].var].type.kind);
        i.count = view ? 0 : 1;
        i.c = view ? reg(f, a[2]) : scalar(f, a[2]);
        break;
      }
      case ir::OpKind::GetCommCtx:  // world views need no register: rank and P are the VM's
        if (f.domains[a[0].var] >= 0) f.ctx_view[op.result] = reg(f, a[0]);
        return;
      case ir::OpKind::Rank:
        i.op = Opcode::Rank;
        i.a = f.ctx_view[a[0].var];  // the rank in this view's group, or in the world
        break;
      case ir::OpKind::NRanks:
        i.op = Opcode::NRanks;
        i.a = f.ctx_view[a[0].var];
        break;
      case ir::OpKind::BlockIdx:
        i.op = Opcode::BlockIdx;
        break;
      case ir::OpKind::BlockNum:
        i.op = Opcode::BlockNum;
        break;
      case ir::OpKind::Notify:
        i.op = Opcode::Notify;
        i.sub = vm_sub(ir::attr_of<ir::NotifyKind>(op));
        i.a = reg(f, a[0]);
        i.b = scalar(f, a[1]);
        i.c = scalar(f, a[2]);
        i.idx = scalars(f, a, 3, n);
        break;
      case ir::OpKind::Wait:
        i.op = Opcode::Wait;
        i.sub = vm_sub(ir::attr_of<ir::WaitKind>(op));
        i.a = reg(f, a[0]);
        i.b = scalar(f, a[1]);
        i.idx = scalars(f, a, 2, n);
        break;
      case ir::OpKind::WaitAsync:
        i.op = Opcode::WaitAsync;
        i.a = scalar(f, a[0]);
        break;
      case ir::OpKind::Put:
      case ir::OpKind::Get:
      case ir::OpKind::PutAsync:
        i.op = op.kind == ir::OpKind::Put   ? Opcode::Put
               : op.kind == ir::OpKind::Get ? Opcode::Get
                                            : Opcode::PutAsync;
        i.sub = vm_sub(ir::attr_of<ir::AtomicKind>(op));
        i.a = reg(f, a[0]);
        i.b = scalar(f, a[1]);
        i.c = reg(f, a[2]);
        i.count = op.count;
        i.idx = scalars(f, a, 3, n);
        i.shape = eval_shape(op.shape);
        break;
      case ir::OpKind::RemoteLoad:
        i.op = Opcode::RemoteLoad;
        i.a = reg(f, a[0]);
        i.b = scalar(f, a[1]);
        i.idx = scalars(f, a, 2, n);
        i.shape = eval_shape(op.shape);
        run_time_valid(f, op, i);
        break;
      case ir::OpKind::RemoteStore:
        i.op = Opcode::RemoteStore;
        i.sub = vm_sub(ir::attr_of<ir::AtomicKind>(op));
        i.c = reg(f, a[0]);
        i.a = reg(f, a[1]);
        i.b = scalar(f, a[2]);
        i.idx = scalars(f, a, 3, n);
        run_time_valid(f, op, i);
        break;
      case ir::OpKind::Call:
        return inline_call(f, op);
      default:
        if (ir::is_collective(op.kind)) return collective(f, op);
        throw CompileError("compile error: function '" + f.fn->name + "': op " +
                           ir::op_site_name(op) + " cannot be lowered at this level");
    }
    e_.emit(std::move(i));
  }

  void collective(Frame& f, const ir::Op& op) {
    // The ranks it spans: the world, or the group of its windows' domain.
    const ir::Operand* window = first_window(*f.fn, op);
    const std::int32_t domain = window ? f.domains[window->var] : -1;
    CollectiveRegs regs{e_.scalar_reg(), e_.scalar_reg(), scope_.size(domain)};
    regs.launch_blocks = launch_blocks_;
    Instr r;
    r.op = Opcode::Rank;
    r.dst = regs.rank;
    r.a = window && domain >= 0 ? reg(f, *window) : -1;
    e_.emit(r);
    r.op = Opcode::NRanks;
    r.dst = regs.nranks;
    e_.emit(r);
    // core_num > 1: the collective runs on its blocks (collective_blocks),
    // lane b each.
    const std::int64_t core_num = op.blocks ? eval(op.blocks) : 1;
    const std::int64_t blocks = collective_blocks(op.kind, regs.world, core_num);
    if (const std::int64_t cores = model_().vector_cores;
        blocks > 1 && cores > 0 && blocks > cores) {
      throw CompileError(
          "compile error: function '" + f.fn->name + "': op " + ir::op_site_name(op) +
          ": core_num = " + std::to_string(core_num) +
          (blocks == core_num ? " is"
                              : " runs on " + std::to_string(blocks) + " blocks, which is") +
          " more than " + model_().name + "'s " + std::to_string(cores) +
          " vector cores per device" +
          " (a collective's blocks run at once: block b of every rank waits for block b of its "
          "peers); use core_num <= " +
          std::to_string(cores));
    }
    begin_launch(blocks);
    if (blocks > 1) {
      regs.block = e_.scalar_reg();
      regs.blocks = blocks;
      Instr idx;
      idx.op = Opcode::BlockIdx;
      idx.dst = regs.block;
      e_.emit(idx);
    }
    CollectiveCall call;
    call.kind = op.kind;
    if (const auto* allreduce = std::get_if<ir::AllreduceAttr>(&op.attr)) {
      call.reduce = allreduce->op;
      call.mode = allreduce->mode;
    } else if (const auto* reduce = std::get_if<ir::ReduceKind>(&op.attr)) {
      call.reduce = *reduce;
    } else if (const auto* algorithm = std::get_if<ir::Algorithm>(&op.attr)) {
      call.mode = *algorithm;
    } else if (const auto* unit = std::get_if<ir::CountUnit>(&op.attr)) {
      call.count_rows = unit->rows;
    }
    for (const ir::Operand& o : op.args) {
      if (!o.is_var()) {
        call.root = eval(o.int_imm);
        call.views.push_back(-1);
        call.numel.push_back(0);
        call.dtypes.push_back(DType::INT32);
        call.ranks.push_back(0);
        call.rows.push_back(0);
        continue;
      }
      const ir::Type& t = f.fn->vars[o.var].type;
      std::int64_t n = 1;
      const std::vector<std::int64_t> shape = eval_shape(t.shape);
      for (auto e : shape) n *= e;
      call.views.push_back(reg(f, o));
      call.numel.push_back(n);
      call.dtypes.push_back(t.dtype);
      call.ranks.push_back(t.shape.size());
      call.rows.push_back(shape.empty() ? 0 : shape[0]);
    }
    // Every single-block allreduce and every broadcast is priced on the
    // cost model, so that the table of a call names what Auto would run;
    // Auto runs the least.
    std::vector<AlgorithmEstimate> estimates;
    const bool automatic = call.mode == ir::Algorithm::Auto;
    if (call.kind == ir::OpKind::Allreduce && blocks <= 1)
      estimates =
          allreduce_estimates(regs.world, call.numel[0], call.dtypes[0], call.reduce, model_());
    if (call.kind == ir::OpKind::Broadcast)
      estimates = broadcast_estimates(regs.world, call.numel[0], call.dtypes[0], model_());
    if (call.kind == ir::OpKind::Allgather)
      estimates = allgather_estimates(regs.world, call.numel[0], call.dtypes[0], model_());
    if (call.kind == ir::OpKind::ReduceScatter)
      estimates = reduce_scatter_estimates(regs.world, call.numel[0] / regs.world, call.dtypes[0],
                                           call.reduce, model_());
    if (call.kind == ir::OpKind::AllToAll)
      estimates =
          all_to_all_estimates(regs.world, call.numel[0] / regs.world, call.dtypes[0], model_());
    if (automatic) call.mode = choose_fastest(estimates).kind;
    describe_collective(f, op, call);
    runtime::CollectiveDesc& desc = code_.collectives.back();
    desc.algorithm = ir::algorithm_name(call.mode);
    desc.chosen_by_auto = automatic;
    for (const AlgorithmEstimate& x : estimates)
      desc.estimates.push_back({ir::algorithm_name(x.kind), x.ns});
    lower_collective(e_, regs, call);
    end_launch(blocks);
  }

  // A launch over `blocks` (pl::blocks, core_num) > 1 blocks: block 0
  // starts the others at the next instruction, with its registers as they
  // are; end_launch(blocks) closes it. Returns the block count (1: none).
  std::int64_t begin_launch(std::int64_t blocks) {
    if (blocks > 1) {
      Instr launch;
      launch.op = Opcode::BlockLaunch;
      launch.imm = blocks;
      e_.emit(launch);
    }
    return blocks;
  }
  void end_launch(std::int64_t blocks) {
    if (blocks <= 1) return;
    Instr end;
    end.op = Opcode::BlockEnd;
    end.imm = blocks;
    e_.emit(end);
  }

  // The Collective instruction that opens a call: its descriptor names the
  // window operands (checked to be distinct buffers at run time) and the
  // signature every rank's matching call must share.
  void describe_collective(const Frame& f, const ir::Op& op, const CollectiveCall& call) {
    const std::vector<std::string>& roles = ir::collective_roles(op.kind);
    runtime::CollectiveDesc desc;
    desc.op = ir::op_kind_name(op.kind);
    std::vector<std::string> parts;
    if (op.kind == ir::OpKind::Allreduce) {
      parts.push_back(ir::reduce_name(call.reduce));
      parts.push_back(ir::algorithm_name(call.mode));
    } else if (op.kind == ir::OpKind::ReduceScatter) {
      parts.push_back(ir::reduce_name(call.reduce));
      if (call.mode != ir::Algorithm::Mesh) parts.push_back(ir::algorithm_name(call.mode));
    } else if (op.kind == ir::OpKind::Broadcast) {
      parts.push_back("root " + std::to_string(call.root));
      if (call.mode != ir::Algorithm::Mesh) parts.push_back(ir::algorithm_name(call.mode));
    } else if ((op.kind == ir::OpKind::Allgather || op.kind == ir::OpKind::AllToAll) &&
               call.mode != ir::Algorithm::Mesh) {
      parts.push_back(ir::algorithm_name(call.mode));
    }
    std::size_t role = 0;
    for (std::size_t i = 0; i < op.args.size(); ++i) {
      if (!op.args[i].is_var()) continue;
      const ir::Type& t = f.fn->vars[op.args[i].var].type;
      const std::string& name = roles.at(role++);
      if (name != "signal") {
        std::string shape;
        for (auto e : eval_shape(t.shape)) shape += (shape.empty() ? "" : ", ") + std::to_string(e);
        parts.push_back(name + " " + std::string(dtype_name(t.dtype)) + " [" + shape + "]");
      }
      desc.views.push_back(call.views[i]);
      desc.roles.push_back(name);
    }
    for (const auto& p : parts) desc.signature += (desc.signature.empty() ? "" : ", ") + p;
    code_.collectives.push_back(std::move(desc));
    Instr i;
    i.op = Opcode::Collective;
    i.a = code_.collectives.back().views.back();
    i.imm = static_cast<std::int64_t>(code_.collectives.size() - 1);
    e_.emit(i);
  }

  void inline_call(Frame& f, const ir::Op& op) {
    const ir::Function& callee = *op.callee;
    Frame g = frame_for(callee);
    for (std::size_t p = 0; p < callee.params.size(); ++p) {
      const ir::Var& param = callee.vars[callee.params[p].var];
      if (is_window(*f.fn, op.args[p])) g.domains[callee.params[p].var] = f.domains[op.args[p].var];
      const char file = file_of(param.type);
      Instr i;
      i.dst = g.regs[p];
      if (file == 's') {
        i.op = Opcode::ScalarCast;
        i.a = scalar(f, op.args[p]);
        i.dtype = param.type.dtype;
      } else {
        i.op = file == 't' ? Opcode::MovTile : Opcode::MovView;
        i.a = reg(f, op.args[p]);
      }
      e_.emit(i);
    }
    // An orchestration function's call of an incore function is a task:
    // its begin and end are marked (block 0 only) for the observers.
    const bool task = f.fn->level == ir::Level::Orchestration && callee.level == ir::Level::Incore;
    if (task) mark_task(callee, f, op, 0);
    // The blocks start with the parameters bound, and all run the body.
    const std::int64_t blocks = begin_launch(op.blocks ? eval(op.blocks) : 1);
    const std::int64_t outer_blocks = launch_blocks_;
    launch_blocks_ = blocks;
    block(g, callee.body);
    launch_blocks_ = outer_blocks;
    if (ir::contains_op(callee.body, ir::OpKind::PutAsync)) {  // its puts end with it
      Instr check;
      check.op = Opcode::CheckAsync;
      e_.emit(check);
    }
    e_.set_site(f.fn->name, ir::op_display_name(op), op.loc);
    end_launch(blocks);
    if (task) mark_task(callee, f, op, 1);
  }

  // A Task instruction (sub 0: begin, 1: end) whose site is the callee's
  // name at the call; the caller's site follows it.
  void mark_task(const ir::Function& callee, const Frame& f, const ir::Op& op, std::uint8_t end) {
    e_.set_site(callee.name, ir::op_display_name(op), op.loc);
    Instr mark;
    mark.op = Opcode::Task;
    mark.sub = end;
    e_.emit(mark);
    e_.set_site(f.fn->name, ir::op_display_name(op), op.loc);
  }

  Emitter e_;
  std::int64_t launch_blocks_ = 1;  // the blocks of the kernel launch being lowered
  runtime::LoweredCode& code_;
  const ir::DimBindings& bindings_;
  const CommScope& scope_;
  const ModelSource& model_;
};

}  // namespace

runtime::LoweredCode lower_orchestration(const ir::Function& orchestration,
                                         const ir::DimBindings& bindings, const CommScope& scope,
                                         const ParamDomains& domains, const ModelSource& model) {
  runtime::LoweredCode code;
  Lowerer(code, bindings, scope, model).lower_entry(orchestration, domains);
  return code;
}

std::string lowered_code_text(const runtime::LoweredCode& code) {
  std::string s = "code " + code.function + ": " + std::to_string(code.instrs.size()) +
                  " instructions, registers s" + std::to_string(code.num_scalars) + " t" +
                  std::to_string(code.num_tiles) + " v" + std::to_string(code.num_views) + "\n";
  s += "  params:";
  for (std::size_t i = 0; i < code.param_regs.size(); ++i) {
    s += std::string(" ") + code.param_files[i] + std::to_string(code.param_regs[i]);
  }
  s += "\n";
  auto line = [&](const Instr& i, const std::string& label) {
    s += label + runtime::opcode_name(i.op);
    if (i.dst >= 0) s += " dst=" + std::to_string(i.dst);
    if (i.a >= 0) s += " a=" + std::to_string(i.a);
    if (i.b >= 0) s += " b=" + std::to_string(i.b);
    if (i.c >= 0) s += " c=" + std::to_string(i.c);
    if (i.sub) s += " sub=" + std::to_string(i.sub);
    if (!i.idx.empty()) {
      s += " idx=[";
      for (std::size_t k = 0; k < i.idx.size(); ++k) s += (k ? "," : "") + std::to_string(i.idx[k]);
      s += "]";
    }
    if (!i.shape.empty()) {
      s += " shape=[";
      for (std::size_t k = 0; k < i.shape.size(); ++k)
        s += (k ? "," : "") + std::to_string(i.shape[k]);
      s += "]";
    }
    if (!i.valid.empty()) {
      s += " valid=[";
      for (std::size_t k = 0; k < i.valid.size(); ++k)
        s += (k ? "," : "") + std::to_string(i.valid[k]);
      s += "]";
    }
    const bool jump = runtime::opcode_has(i.op, runtime::kJump);
    if (i.op == Opcode::Const) {
      s += i.is_float ? " imm=" + std::to_string(i.fimm) : " imm=" + std::to_string(i.imm);
    } else if (i.op == Opcode::Collective || (i.imm != 0 && !jump)) {
      s += " imm=" + std::to_string(i.imm);
    }
    if (i.count != 0) s += " count=" + std::to_string(i.count);
    if (i.op == Opcode::TileCast || i.op == Opcode::FullTile || i.op == Opcode::TileCmp ||
        i.op == Opcode::Matmul || i.op == Opcode::Arange) {
      s += " dtype=" + std::string(dtype_name(i.dtype));  // the result's
    }
    if (jump) s += " -> " + std::to_string(i.imm);
    if (i.site >= 0) s += "    ; " + code.sites[i.site].function + ": " + code.sites[i.site].op;
    s += "\n";
  };
  for (const auto& c : code.constants) line(c, "  const ");
  for (std::size_t k = 0; k < code.instrs.size(); ++k)
    line(code.instrs[k], "  " + std::to_string(k) + ": ");
  for (std::size_t k = 0; k < code.collectives.size(); ++k) {
    const auto& c = code.collectives[k];
    s += "  collective " + std::to_string(k) + ": " + c.op;
    if (!c.signature.empty()) s += " (" + c.signature + ")";
    s += ";";
    for (std::size_t v = 0; v < c.views.size(); ++v)
      s += " " + c.roles[v] + "=v" + std::to_string(c.views[v]);
    s += "\n";
  }
  return s;
}

}  // namespace anyp::compiler
