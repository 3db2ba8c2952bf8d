// function_def.cpp — lazy tracing of pl::jit functions and call recording.
#include "frontend/function_def.hpp"

#include <atomic>
#include <optional>

#include "anyp/errors.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"
#include "ir/intent_check.hpp"
#include "ir/printer.hpp"
#include "ir/tile_valid.hpp"
#include "ir/verifier.hpp"

namespace anyp::detail {

namespace {

std::atomic<std::uint64_t> next_function_id{1};

ir::Level to_ir_level(Level l) {
  switch (l) {
    case Level::Host:
      return ir::Level::Host;
    case Level::Orchestration:
      return ir::Level::Orchestration;
    case Level::Incore:
      return ir::Level::Incore;
  }
  return ir::Level::Incore;
}

ir::Intent to_ir_intent(pl::Intent i) {
  switch (i) {
    case pl::Intent::In:
      return ir::Intent::In;
    case pl::Intent::Out:
      return ir::Intent::Out;
    case pl::Intent::InOut:
      return ir::Intent::InOut;
  }
  return ir::Intent::In;
}

std::string param_list(const ir::Function& fn) {
  std::string s;
  for (const auto& p : fn.params) s += (s.empty() ? "" : ", ") + fn.vars[p.var].name;
  return s;
}

}  // namespace

ir::Type type_from_spec(const pl::TypeSpec& spec) {
  std::vector<ir::Expr> shape;
  for (const pl::Dim& d : spec.shape) shape.push_back(d.node());
  switch (spec.kind) {
    case pl::TypeSpec::Kind::Tensor:
      return ir::shaped_type(ir::TypeKind::Tensor, shape, spec.dtype);
    case pl::TypeSpec::Kind::DistributedTensor:
      return ir::shaped_type(ir::TypeKind::DistTensor, shape, spec.dtype);
    case pl::TypeSpec::Kind::Scalar:
      return ir::scalar_type(spec.dtype);
  }
  return ir::scalar_type(spec.dtype);
}

FunctionDef::FunctionDef(std::string name, ir::Level level, std::vector<pl::Param> params,
                         std::size_t body_arity, BodyFn body)
    : id_(next_function_id.fetch_add(1)),
      name_(std::move(name)),
      level_(level),
      params_(std::move(params)),
      body_arity_(body_arity),
      body_(std::move(body)) {}

std::shared_ptr<const ir::Function> FunctionDef::ir() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (traced_) return traced_;
  if (tracing_) {
    throw CompileError("compile error: function '" + name_ +
                       "' calls itself (directly or through the functions it calls); a traced "
                       "program cannot recurse");
  }
  // Whatever trace() throws (a CompileError, or the user's own exception from
  // the body) propagates unchanged, and leaves nothing behind: the flag is
  // cleared by the guard, the Trace (and with it the thread's active-trace
  // entry) is destroyed by unwinding, and traced_ stays empty, so the next
  // use traces the body again from scratch.
  struct ClearOnExit {
    bool& flag;
    ~ClearOnExit() { flag = false; }
  } clear{tracing_};
  tracing_ = true;
  traced_ = trace();
  return traced_;
}

std::shared_ptr<const ir::Function> FunctionDef::trace() const {
  const CallSiteSuspension body_of_its_own;  // the body's calls name their own lines
  Trace trace(name_, level_);
  if (body_arity_ != params_.size()) {
    trace.fail("declares " + counted(params_.size(), "parameter", "parameters") +
               " but its body takes " + std::to_string(body_arity_));
  }
  std::vector<VarRef> refs;
  for (const pl::Param& p : params_) {
    for (const auto& q : params_) {
      if (&q != &p && q.name == p.name) trace.fail("parameter '" + p.name + "' is declared twice");
    }
    if (level_ == ir::Level::Host && p.type.kind == pl::TypeSpec::Kind::DistributedTensor) {
      trace.fail("parameter '" + p.name +
                 "' is a pld::DistributedTensor, but a host function's parameters are the run's "
                 "arguments, host tensors and scalars: declare it pl::Tensor (the host makes "
                 "window views itself, with pld::alloc_window_buffer and pld::window)");
    }
    ir::VarId v = trace.new_var(type_from_spec(p.type), p.name);
    trace.add_param(v, to_ir_intent(p.intent));
    refs.push_back(trace.ref(v));
  }
  body_(refs);
  auto fn = std::make_shared<ir::Function>(trace.finish());
  if (narrow_intents_) {
    const std::vector<bool> written = ir::written_tensor_parameters(*fn);
    for (std::size_t i = 0; i < fn->params.size(); ++i) {
      ir::Param& p = fn->params[i];
      if (p.intent == ir::Intent::InOut && !written[i] &&
          fn->vars[p.var].type.kind == ir::TypeKind::Tensor)
        p.intent = ir::Intent::In;
    }
  }
  ir::infer_store_valid(*fn);
  ir::verify_function(*fn);
  return fn;
}

std::shared_ptr<FunctionDef> make_function(std::string name, Level level,
                                           std::vector<pl::Param> params, std::size_t body_arity,
                                           BodyFn body) {
  return std::make_shared<FunctionDef>(std::move(name), to_ir_level(level), std::move(params),
                                       body_arity, std::move(body));
}

CallArg::CallArg(const pl::NamedArg& named) : CallArg(named.value) { name = named.name; }

namespace {

const char* launch_option_name(const CallArg& a) {
  return a.kind == CallArg::Kind::Device ? "pl::device(r)" : "pl::blocks(n)";
}

// Named arguments (pl::arg("x") = x) in the callee's parameter order; the
// device or block count, if any, stays last. Positional arguments are returned unchanged.
std::vector<CallArg> by_parameter_name(Trace& t, const std::string& what,
                                       const ir::Function& callee,
                                       const std::vector<CallArg>& args) {
  bool named = false;
  for (const CallArg& a : args) named = named || !a.name.empty();
  if (!named) return args;
  std::vector<const CallArg*> slot(callee.params.size(), nullptr);
  const CallArg* device = nullptr;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const CallArg& a = args[i];
    if ((a.kind == CallArg::Kind::Device || a.kind == CallArg::Kind::Blocks) && a.name.empty()) {
      if (i + 1 != args.size())
        t.fail(what + ": " + launch_option_name(a) + " must be the last argument");
      device = &a;
      continue;
    }
    if (a.name.empty()) {
      t.fail(what + ": argument " + std::to_string(i) +
             " has no name; name every argument (pl::arg(\"name\") = value) or none");
    }
    std::size_t p = 0;
    while (p < callee.params.size() && callee.vars[callee.params[p].var].name != a.name) ++p;
    if (p == callee.params.size()) {
      t.fail(what + ": '" + callee.name + "' has no parameter named '" + a.name +
             "' (its parameters: " + param_list(callee) + ")");
    }
    if (slot[p]) t.fail(what + ": parameter '" + a.name + "' is given twice");
    slot[p] = &a;
  }
  std::vector<CallArg> out;
  for (std::size_t p = 0; p < slot.size(); ++p) {
    if (!slot[p]) {
      t.fail(what + ": parameter '" + callee.vars[callee.params[p].var].name +
             "' is not given (the parameters of '" + callee.name + "': " + param_list(callee) +
             ")");
    }
    out.push_back(*slot[p]);
  }
  if (device) out.push_back(*device);
  return out;
}

}  // namespace

void record_call(const FunctionDef& callee_def, const std::vector<CallArg>& given) {
  const std::string what = "call of '" + callee_def.name() + "'";
  Trace& t = Trace::current(what);
  std::shared_ptr<const ir::Function> callee = callee_def.ir();
  const std::vector<CallArg> args = by_parameter_name(t, what, *callee, given);
  ir::Op op;
  op.kind = ir::OpKind::Call;
  op.callee = callee;
  std::size_t n = args.size();
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == CallArg::Kind::Device || args[i].kind == CallArg::Kind::Blocks) {
      if (i + 1 != args.size())
        t.fail(what + ": " + launch_option_name(args[i]) + " must be the last argument");
      op.has_device = args[i].kind == CallArg::Kind::Device;
      n = i;
    }
  }
  if (n != callee->params.size()) {
    t.fail(what + ": expects " + std::to_string(callee->params.size()) + " arguments (" +
           param_list(*callee) + "), got " + std::to_string(n));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const CallArg& a = args[i];
    if (a.kind == CallArg::Kind::Device) {
      op.args.push_back(t.operand(a.imm, what));
      continue;
    }
    if (a.kind == CallArg::Kind::Blocks) {
      if (a.imm.kind() != pl::ScalarArg::Kind::Int) {
        t.fail(what +
               ": the block count of pl::blocks(n) must be an integer or a Dim "
               "expression, known when the program is compiled (got a " +
               (a.imm.kind() == pl::ScalarArg::Kind::Var ? "traced scalar" : "floating value") +
               ")");
      }
      op.blocks = a.imm.int_expr();
      continue;
    }
    ir::Operand o = a.kind == CallArg::Kind::Var ? ir::Operand::of_var(t.id_of(a.var, what))
                                                 : t.operand(a.imm, what);
    const ir::Var& param = callee->vars[callee->params[i].var];
    const ir::Type got = t.operand_type(o);
    if (got.kind != param.type.kind) {
      t.fail(what + ": argument " + std::to_string(i) + " ('" + param.name + "') must be " +
             ir::to_string(param.type) + ", got " + ir::to_string(got) +
             (param.type.kind == ir::TypeKind::DistTensor || got.kind == ir::TypeKind::DistTensor
                  ? " (a window view and a plain tensor are distinct types)"
                  : ""));
    }
    op.args.push_back(o);
  }
  t.emit(std::move(op));
}

}  // namespace anyp::detail

namespace pl::jit {

namespace {

Function orchestration_calling(std::string name, const Function& kernel,
                               std::optional<Blocks> blocks) {
  using anyp::detail::CallArg;
  std::shared_ptr<anyp::detail::FunctionDef> def = kernel.def();
  std::vector<Param> params = def->params();
  const std::size_t arity = params.size();
  return Function(anyp::detail::make_function(
      std::move(name), anyp::detail::Level::Orchestration, std::move(params), arity,
      [def, blocks](const std::vector<anyp::detail::VarRef>& vars) {
        std::vector<CallArg> args;
        for (const anyp::detail::VarRef& v : vars) args.emplace_back(Value(v));
        if (blocks) args.emplace_back(*blocks);
        anyp::detail::record_call(*def, args);
      }));
}

}  // namespace

Function orchestration_for(std::string name, const Function& kernel) {
  return orchestration_calling(std::move(name), kernel, std::nullopt);
}

Function orchestration_for(std::string name, const Function& kernel, const Blocks& blocks) {
  return orchestration_calling(std::move(name), kernel, blocks);
}

}  // namespace pl::jit

namespace anyp::detail {

std::string function_ir_text(const FunctionDef& fn) {
  return ir::print_program(ir::collect_program(fn.ir()));
}

const std::string& function_name(const FunctionDef& fn) { return fn.name(); }

}  // namespace anyp::detail
