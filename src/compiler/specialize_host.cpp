// specialize_host.cpp — compile-time evaluation of the host function.
#include "compiler/specialize_host.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "anyp/errors.hpp"
#include "anyp/host_tensor.hpp"
#include "compiler/check_functions.hpp"
#include "ir/solve_extent.hpp"
#include "ir/tile_rules.hpp"
#include "ir/verifier.hpp"
#include "runtime/collective_tracker.hpp"
#include "runtime/region.hpp"
#include "runtime/scalar_math.hpp"

namespace anyp::compiler {

std::vector<std::int64_t> eval_shape(const std::vector<ir::Expr>& shape,
                                     const ir::DimBindings& bindings, const std::string& context) {
  using runtime::kMaxRank;  // the runtime's limit (region.hpp)
  if (shape.size() > kMaxRank) {
    throw CompileError("compile error: " + context + ": " + std::to_string(shape.size()) +
                       " dims; anyp supports at most " + std::to_string(kMaxRank));
  }
  std::vector<std::int64_t> out;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    ir::EvalResult r = ir::evaluate(shape[i], bindings);
    if (!r.value || *r.value <= 0) {
      std::string why = r.value ? "it is " + std::to_string(*r.value) : r.error;
      throw CompileError("compile error: " + context + ", dim " + std::to_string(i) + ": extent " +
                         ir::to_string(shape[i]) + " is not a positive exact integer (" + why +
                         ")");
    }
    out.push_back(*r.value);
  }
  return out;
}

namespace {

// A shape without its extents of 1 ([1, 64] and [64] are both {64}).
std::vector<std::int64_t> without_unit_dims(const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> out;
  for (std::int64_t e : shape)
    if (e != 1) out.push_back(e);
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

struct TensorSlice {
  std::int32_t param;
  std::int64_t byte_offset;
  std::vector<std::int64_t> shape;
  DType dtype;
};
struct BufferRef {
  std::int32_t id;
};
struct DomainRef {
  std::int32_t id;
};
struct ViewRef {
  std::int32_t buffer;
  std::vector<std::int64_t> shape;
  DType dtype;
  ir::VarId made_by;             // the Window op's result var
  std::int64_t byte_offset = 0;  // from the buffer's start (pld::window's offset)
};
using HostValue =
    std::variant<std::monostate, runtime::ScalarValue, TensorSlice, BufferRef, ViewRef, DomainRef>;

class HostEvaluator {
 public:
  HostEvaluator(const ir::Function& host, ir::DimBindings& bindings,
                const std::vector<ArgRef>& args, std::int64_t world_size)
      : host_(host), bindings_(bindings), world_size_(world_size), env_(host.vars.size()) {
    loop_dependence(host.body);
    result_.ranks.resize(static_cast<std::size_t>(world_size));
    for (std::size_t i = 0; i < host.params.size(); ++i) {
      const ir::Var& p = host.vars[host.params[i].var];
      if (p.type.kind == ir::TypeKind::Scalar) {
        env_[i] =
            runtime::scalar_cast(args[i].is_int() ? runtime::int_scalar(args[i].int_value())
                                                  : runtime::float_scalar(args[i].float_value()),
                                 p.type.dtype);
      } else {
        env_[i] =
            TensorSlice{static_cast<std::int32_t>(i), 0, args[i].tensor().shape(), p.type.dtype};
      }
    }
  }

  HostSpecialization run() {
    block(host_.body);
    where_ = first_dispatch_ ? first_dispatch_->loc : ir::SourceLoc{};
    for (std::size_t r = 0; r < result_.ranks.size(); ++r) {
      if (result_.ranks[r].empty()) {
        // The first dispatch names the place to fix (" at step.py:42").
        const std::string where =
            first_dispatch_
                ? "; the " +
                      ir::site_name("dispatch of '" + first_dispatch_->callee->name + "'",
                                    first_dispatch_->loc) +
                      " does not reach it"
                : "";
        fail("rank " + std::to_string(r) + " of P = " + std::to_string(world_size_) +
             " gets no dispatch" + where +
             "; loop the dispatch over pl::range(pld::world_size()), never a literal bound");
      }
    }
    for (std::size_t b = 0; b < result_.buffers.size(); ++b) {
      where_ = allocated_at_[b];
      if (!viewed_.count(static_cast<std::int32_t>(b))) {
        fail("window buffer '" + result_.buffers[b].name +
             "' is allocated but never viewed with pld::window (dead allocation)");
      }
    }
    for (const auto& [var, buffer] : views_made_) {
      where_ = viewed_at_[var];
      if (!views_dispatched_.count(var)) {
        fail("a pld::window view of buffer '" + result_.buffers[buffer].name +
             "' is never passed to a dispatch");
      }
    }
    infer_domains();
    return std::move(result_);
  }

 private:
  // The message names the place of the op (or loop) being run, as
  // "function 'host' (host) at step.py:42: ...", unless it names it already.
  [[noreturn]] void fail(const std::string& what) const {
    const std::string at = ir::to_string(where_);
    const bool named = !where_.known() || what.find(" at " + at) != std::string::npos;
    throw CompileError("compile error: function '" + host_.name + "' (host)" +
                       (named ? "" : " at " + at) + ": " + what);
  }

  // PyPTO's comm domains from the dispatched ranks: a buffer of no declared
  // domain whose views reach only some ranks is the window of those ranks
  // alone, a sub-communicator numbered in rank order. Buffers reached by the
  // same ranks share one such domain, named after them ("ranks {1, 2}").
  void infer_domains() {
    const std::size_t buffers = result_.buffers.size();
    std::vector<std::vector<std::int64_t>> reached(buffers);
    for (std::size_t r = 0; r < result_.ranks.size(); ++r) {
      for (const HostDispatch& d : result_.ranks[r]) {
        for (const runtime::ArgBinding& a : d.args) {
          if (a.kind != runtime::ArgBinding::Kind::Window) continue;
          auto& ranks = reached[static_cast<std::size_t>(a.buffer)];
          if (ranks.empty() || ranks.back() != static_cast<std::int64_t>(r))
            ranks.push_back(static_cast<std::int64_t>(r));
        }
      }
    }
    std::map<std::vector<std::int64_t>, std::int32_t> inferred;
    for (std::size_t b = 0; b < buffers; ++b) {
      const std::vector<std::int64_t>& group = reached[b];
      if (result_.buffers[b].domain >= 0 || group.empty() ||
          static_cast<std::int64_t>(group.size()) == world_size_)
        continue;
      auto [it, fresh] = inferred.emplace(group, static_cast<std::int32_t>(result_.domains.size()));
      if (fresh) {
        runtime::CommDomain d;
        d.name = "ranks " + runtime::group_text(group);
        d.group_size = static_cast<std::int64_t>(group.size());
        d.groups = {group};
        d.inferred = true;
        d.group_of.assign(static_cast<std::size_t>(world_size_), -1);
        d.index_of.assign(static_cast<std::size_t>(world_size_), -1);
        for (std::size_t i = 0; i < group.size(); ++i) {
          d.group_of[static_cast<std::size_t>(group[i])] = 0;
          d.index_of[static_cast<std::size_t>(group[i])] = static_cast<std::int32_t>(i);
        }
        result_.domains.push_back(std::move(d));
      }
      result_.buffers[b].domain = it->second;
    }
  }

  std::string var_name(ir::VarId v) const {
    return host_.vars[v].name.empty() ? "%" + std::to_string(v) : "'" + host_.vars[v].name + "'";
  }

  runtime::ScalarValue scalar(const ir::Operand& o, const std::string& op) {
    if (o.is_var()) {
      if (auto* s = std::get_if<runtime::ScalarValue>(&env_[o.var])) return *s;
      fail(op + ": " + var_name(o.var) + " is not a scalar");
    }
    if (o.is_float_imm) return runtime::float_scalar(o.float_imm);
    ir::EvalResult r = ir::evaluate(o.int_imm, bindings_);
    if (!r.value) fail(op + ": " + ir::to_string(o.int_imm) + ": " + r.error);
    return runtime::int_scalar(*r.value);
  }

  void block(const ir::Block& b) {
    for (const ir::Stmt& s : b) {
      if (const auto* op = std::get_if<ir::Op>(&s.node)) {
        this->op(*op);
      } else if (const auto* f = std::get_if<ir::ForStmt>(&s.node)) {
        where_ = f->loc;
        const std::int64_t start = scalar(f->start, "pl.range").as_int();
        const std::int64_t stop = scalar(f->stop, "pl.range").as_int();
        const std::int64_t step = scalar(f->step, "pl.range").as_int();
        if (step == 0) fail(ir::site_name("pl.range", f->loc) + ": the step is 0");
        ++loop_depth_;
        rank_loop_stack_.push_back(rank_loops_.count(f->iv) > 0);
        iterations_.push_back({f->iv, 0});
        for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
          env_[f->iv] = runtime::int_scalar(i);
          block(f->body);
          ++iterations_.back().second;
          const __int128 next = static_cast<__int128>(i) + step;  // no int64 overflow
          if (step > 0 ? next >= stop : next <= stop) break;
        }
        iterations_.pop_back();
        rank_loop_stack_.pop_back();
        --loop_depth_;
      } else if (const auto* c = std::get_if<ir::IfStmt>(&s.node)) {
        block(scalar(c->cond, "pl.if_").as_double() != 0 ? c->then_body : c->else_body);
      }
    }
  }

  void op(const ir::Op& op) {
    where_ = op.loc;
    const std::string name = ir::op_site_name(op);
    switch (op.kind) {
      case ir::OpKind::Const:
        env_[op.result] = scalar(op.args[0], name);
        return;
      case ir::OpKind::Assign:
        env_[op.result] =
            op.args[0].is_var() ? env_[op.args[0].var] : HostValue(scalar(op.args[0], name));
        return;
      case ir::OpKind::ScalarBinary: {
        std::string error;
        auto v = runtime::scalar_binary(ir::attr_of<ir::BinaryOp>(op), scalar(op.args[0], name),
                                        scalar(op.args[1], name), host_.vars[op.result].type.dtype,
                                        &error);
        if (!v)
          fail("scalar " + std::string(ir::binary_op_name(ir::attr_of<ir::BinaryOp>(op))) + ": " +
               error);
        env_[op.result] = *v;
        return;
      }
      case ir::OpKind::ScalarNot:
        env_[op.result] = runtime::int_scalar(scalar(op.args[0], name).as_double() == 0);
        return;
      case ir::OpKind::ScalarCast:
        env_[op.result] = runtime::scalar_cast(scalar(op.args[0], name), op.dtype);
        return;
      case ir::OpKind::Index:
        return index(op);
      case ir::OpKind::AllocWindow:
        return alloc(op);
      case ir::OpKind::Window:
        return window(op);
      case ir::OpKind::CommDomain:
        return comm_domain(op);
      case ir::OpKind::CommGroup:
        return comm_group(op);
      case ir::OpKind::WorldSize:
        return;
      case ir::OpKind::GetCommCtx:
        env_[op.result] = std::monostate{};
        return;
      case ir::OpKind::Call:
        return call(op);
      default:
        if (ir::is_collective(op.kind)) return host_collective(op);
        fail("op " + name + " cannot run at the host level");
    }
  }

  void index(const ir::Op& op) {
    auto* t = std::get_if<TensorSlice>(&env_[op.args[0].var]);
    if (!t) fail("x[r]: " + var_name(op.args[0].var) + " is not a host tensor");
    const std::int64_t i = scalar(op.args[1], "x[r]").as_int();
    const std::string what = op.args[0].var < static_cast<ir::VarId>(host_.params.size())
                                 ? "parameter " + var_name(op.args[0].var)
                                 : var_name(op.args[0].var);
    if (i < 0 || i >= t->shape[0]) {
      fail("x[r]: index " + std::to_string(i) + " is out of range for dim 0 of " + what + " " +
           shape_text(t->shape) + " (extent " + std::to_string(t->shape[0]) +
           ", P = " + std::to_string(world_size_) + ")");
    }
    std::int64_t inner = static_cast<std::int64_t>(dtype_bytes(t->dtype));
    for (std::size_t d = 1; d < t->shape.size(); ++d) inner *= t->shape[d];
    TensorSlice s{
        t->param, t->byte_offset + i * inner, {t->shape.begin() + 1, t->shape.end()}, t->dtype};
    env_[op.result] = std::move(s);
  }

  // The bytes of `shape` elements of `dtype`; a CompileError when they
  // overflow (a window must fit in memory).
  std::int64_t checked_bytes(const std::vector<std::int64_t>& shape, DType dtype,
                             const std::string& what) {
    std::int64_t bytes = static_cast<std::int64_t>(dtype_bytes(dtype));
    for (auto e : shape) {
      if (__builtin_mul_overflow(bytes, e, &bytes)) {
        fail(what + ": " + shape_text(shape) + " " + std::string(dtype_name(dtype)) +
             " is too large: its size in bytes overflows 64 bits");
      }
    }
    return bytes;
  }

  const DomainRef& domain_arg(const ir::Operand& o, const std::string& op) {
    const auto* d = std::get_if<DomainRef>(&env_[o.var]);
    if (!d) fail(op + ": " + var_name(o.var) + " is not a comm domain");
    return *d;
  }

  void comm_domain(const ir::Op& op) {
    if (loop_depth_ > 0) {
      fail("pld.comm_domain '" + op.name +
           "' is inside a loop: declare each domain once, above the loops that add its groups");
    }
    for (const auto& d : result_.domains) {
      if (d.name == op.name) fail("comm domain '" + op.name + "' is declared twice");
    }
    runtime::CommDomain d;
    d.name = op.name;
    d.group_of.assign(static_cast<std::size_t>(world_size_), -1);
    d.index_of.assign(static_cast<std::size_t>(world_size_), -1);
    result_.domains.push_back(std::move(d));
    env_[op.result] = DomainRef{static_cast<std::int32_t>(result_.domains.size() - 1)};
  }

  // The ranks of one pld::comm_group, checked: in [0, P), distinct, in no
  // other group of the domain, as many as the domain's first group has.
  void comm_group(const ir::Op& op) {
    const DomainRef ref = domain_arg(op.args[0], "pld.comm_group");
    runtime::CommDomain& d = result_.domains[static_cast<std::size_t>(ref.id)];
    const std::string what = "pld.comm_group of domain '" + d.name + "'";
    if (sealed_.count(ref.id)) {
      fail(what +
           ": the domain already has a window buffer; add every group before the first "
           "pld::alloc_window_buffer in it");
    }
    std::vector<std::int64_t> ranks;
    if (op.count == 0) {
      for (std::size_t i = 1; i < op.args.size(); ++i)
        ranks.push_back(scalar(op.args[i], what).as_int());
    } else {
      const std::int64_t first = scalar(op.args[1], what).as_int();
      const std::int64_t count = scalar(op.args[2], what).as_int();
      const std::int64_t stride = scalar(op.args[3], what).as_int();
      if (count < 1)
        fail(what + ": the count is " + std::to_string(count) +
             "; a group needs at least one rank");
      if (stride < 1)
        fail(what + ": the stride is " + std::to_string(stride) + "; it must be positive");
      // Up to the first rank outside [0, P), which the check below names
      // (a group never has more than P ranks: no loop over a huge count).
      for (std::int64_t k = 0; k < count; ++k) {
        const __int128 r = static_cast<__int128>(first) + static_cast<__int128>(k) * stride;
        ranks.push_back(r > world_size_ ? world_size_ : r < 0 ? -1 : static_cast<std::int64_t>(r));
        if (ranks.back() < 0 || ranks.back() >= world_size_) {
          if (r < 0) ranks.back() = first;  // name the real first rank
          break;
        }
      }
    }
    const std::string group = runtime::group_text(ranks);
    const auto g = static_cast<std::int32_t>(d.groups.size());
    for (std::size_t k = 0; k < ranks.size(); ++k) {
      const std::int64_t r = ranks[k];
      if (r < 0 || r >= world_size_) {
        fail(what + ": rank " + std::to_string(r) + " of the group " + group +
             " is out of range [0, " + std::to_string(world_size_) +
             ") for P = " + std::to_string(world_size_));
      }
      const auto ur = static_cast<std::size_t>(r);
      if (d.group_of[ur] == g) {
        fail(what + ": rank " + std::to_string(r) + " appears twice in the group " + group);
      }
      if (d.group_of[ur] >= 0) {
        fail(what + ": rank " + std::to_string(r) + " of the group " + group +
             " is already in its group " +
             runtime::group_text(d.groups[static_cast<std::size_t>(d.group_of[ur])]) +
             "; the groups of one domain are disjoint (declare another domain for an "
             "overlapping group)");
      }
      d.group_of[ur] = g;
      d.index_of[ur] = static_cast<std::int32_t>(k);
    }
    if (!d.groups.empty() && static_cast<std::int64_t>(ranks.size()) != d.group_size) {
      fail(what + ": the group " + group + " has " + std::to_string(ranks.size()) +
           " ranks, but the domain's first group " + runtime::group_text(d.groups.front()) +
           " has " + std::to_string(d.group_size) +
           "; the groups of one domain have one size (its kernels are compiled once for it)");
    }
    d.group_size = static_cast<std::int64_t>(ranks.size());
    d.groups.push_back(std::move(ranks));
  }

  void alloc(const ir::Op& op) {
    if (loop_depth_ > 0) {
      fail("pld.alloc_window_buffer '" + op.name +
           "' is inside a loop: symmetric memory needs one allocation per host call, shared by "
           "all ranks; allocate above the rank loop");
    }
    for (const auto& b : result_.buffers) {
      if (b.name == op.name) fail("window buffer '" + op.name + "' is allocated twice");
    }
    auto shape = eval_shape(
        op.shape, bindings_,
        "function '" + host_.name + "' (host), op pld.alloc_window_buffer '" + op.name + "'");
    const std::int64_t bytes =
        checked_bytes(shape, op.dtype, "pld.alloc_window_buffer '" + op.name + "'");
    runtime::WindowBuffer b;
    b.name = op.name;
    b.dtype = op.dtype;
    b.shape = shape;
    b.used = bytes;
    if (!op.args.empty()) {
      const DomainRef d = domain_arg(op.args[0], "pld.alloc_window_buffer '" + op.name + "'");
      const runtime::CommDomain& dom = result_.domains[static_cast<std::size_t>(d.id)];
      if (dom.groups.empty()) {
        fail("pld.alloc_window_buffer '" + op.name + "': comm domain '" + dom.name +
             "' has no groups; add them with pld::comm_group before allocating in it");
      }
      b.domain = d.id;
      sealed_.insert(d.id);
    }
    result_.buffers.push_back(b);
    allocated_at_.push_back(where_);
    env_[op.result] = BufferRef{static_cast<std::int32_t>(result_.buffers.size() - 1)};
  }

  void window(const ir::Op& op) {
    auto* b = std::get_if<BufferRef>(&env_[op.args[0].var]);
    if (!b) fail("pld.window: " + var_name(op.args[0].var) + " is not a window buffer");
    const auto& buf = result_.buffers[b->id];
    auto shape =
        eval_shape(op.shape, bindings_,
                   "function '" + host_.name + "' (host), op pld.window of '" + buf.name + "'");
    const std::int64_t bytes = checked_bytes(shape, op.dtype, "pld.window of '" + buf.name + "'");
    if (bytes > buf.used) {
      fail("pld.window: a view " + shape_text(shape) + " " + std::string(dtype_name(op.dtype)) +
           " (" + std::to_string(bytes) + " B) does not fit window buffer '" + buf.name + "' (" +
           std::to_string(buf.used) + " B)");
    }
    std::int64_t byte_offset = 0;
    if (op.args.size() > 1) {  // a sub-window: offset in elements of the view's dtype
      const std::int64_t offset = scalar(op.args[1], "pld.window").as_int();
      const auto width = static_cast<std::int64_t>(dtype_bytes(op.dtype));
      if (offset < 0 || offset > (buf.used - bytes) / width) {
        fail("pld.window: a view " + shape_text(shape) + " " + std::string(dtype_name(op.dtype)) +
             " (" + std::to_string(bytes) + " B) at element offset " + std::to_string(offset) +
             " (byte " + std::to_string(offset * width) + ") does not fit window buffer '" +
             buf.name + "' (" + std::to_string(buf.used) + " B)");
      }
      byte_offset = offset * width;
    }
    viewed_.insert(b->id);
    views_made_[op.result] = b->id;
    viewed_at_[op.result] = op.loc;
    env_[op.result] = ViewRef{b->id, std::move(shape), op.dtype, op.result, byte_offset};
  }

  // A collective between dispatch loops: one dispatch per rank of a
  // synthesized orchestration function whose body is the collective itself.
  void host_collective(const ir::Op& op) {
    const std::string name = ir::op_site_name(op);
    for (bool rank_loop : rank_loop_stack_) {
      if (rank_loop) {
        fail(name +
             " is inside a loop that also dispatches to the ranks (the rank loop): a "
             "host-level collective runs once on every rank by itself; call it between "
             "dispatch loops");
      }
    }
    ir::Op body = op;
    auto fn = std::make_shared<ir::Function>();
    const std::string kind = ir::op_display_name(op);
    fn->name = "host_" + kind.substr(kind.rfind('.') + 1) + "_" +
               std::to_string(result_.synthesized.size());
    fn->level = ir::Level::Orchestration;
    std::vector<runtime::ArgBinding> bindings;
    std::vector<std::pair<runtime::WindowSpan, std::size_t>> spans_seen;  // (span, role)
    std::size_t role = 0;
    std::int32_t domain = -2;  // the operands' one domain (-2: none seen yet)
    auto add_param = [&](const std::string& pname, const ViewRef& w) {
      fn->vars.push_back(ir::Var{pname, ir::shaped_type(ir::TypeKind::DistTensor, {}, w.dtype)});
      for (auto e : w.shape) fn->vars.back().type.shape.push_back(ir::make_const(e));
      fn->params.push_back({static_cast<ir::VarId>(fn->vars.size() - 1), ir::Intent::InOut});
      runtime::ArgBinding a;
      a.kind = runtime::ArgBinding::Kind::Window;
      a.buffer = w.buffer;
      a.dtype = w.dtype;
      a.shape = result_.arg_shapes->intern(w.shape);
      a.byte_offset = w.byte_offset;
      bindings.push_back(std::move(a));
      views_dispatched_.insert(w.made_by);
      return static_cast<ir::VarId>(fn->vars.size() - 1);
    };
    for (std::size_t i = 0; i < op.args.size(); ++i) {
      const ir::Operand& o = op.args[i];
      if (!o.is_var()) continue;  // broadcast root: an immediate, kept as is
      const auto* w = std::get_if<ViewRef>(&env_[o.var]);
      if (!w) {
        fail(name + " at the host level works on window views made with pld::window; argument " +
             std::to_string(i) + " is " + var_name(o.var) + ", which is not one");
      }
      const runtime::WindowSpan span =
          runtime::window_span(w->buffer, w->byte_offset, w->dtype, w->shape);
      for (const auto& [seen, seen_role] : spans_seen) {
        if (!span.overlaps(seen)) continue;
        const std::vector<std::string>& roles = ir::collective_roles(op.kind);
        fail(name + ": " +
             runtime::shared_window_message(roles.at(seen_role), roles.at(role),
                                            result_.buffers[w->buffer].name));
      }
      spans_seen.emplace_back(span, role++);
      const std::int32_t d = result_.buffers[static_cast<std::size_t>(w->buffer)].domain;
      if (domain != -2 && d != domain) {
        fail(name + ": argument " + std::to_string(i) + " is a view of '" +
             result_.buffers[static_cast<std::size_t>(w->buffer)].name + "' in " + domain_name(d) +
             ", but the arguments before it are in " + domain_name(domain) +
             "; a collective's windows must be in one domain");
      }
      domain = d;
      body.args[i] = ir::Operand::of_var(add_param("arg" + std::to_string(i), *w));
    }
    if (domain == -2) domain = -1;  // the signal-free barrier: the world
    if ((op.kind == ir::OpKind::Allreduce && op.args.size() == 1) ||
        (op.kind == ir::OpKind::Barrier && op.args.empty())) {
      if (loop_depth_ > 0) {
        fail(name +
             " without a signal is inside a loop: the synthesized signal would be "
             "allocated once per iteration; allocate an [NR, 1] INT32 signal with "
             "pld::alloc_window_buffer above the loop and pass it");
      }
      const std::int64_t n =
          domain < 0 ? world_size_ : result_.domains[static_cast<std::size_t>(domain)].group_size;
      runtime::WindowBuffer b;
      b.name = fn->name + "_signal";
      b.dtype = DType::INT32;
      b.shape = {n, 1};
      b.used = n * 4;
      b.domain = domain;
      result_.buffers.push_back(b);
      allocated_at_.push_back(where_);
      const auto id = static_cast<std::int32_t>(result_.buffers.size() - 1);
      viewed_.insert(id);
      body.args.push_back(
          ir::Operand::of_var(add_param("signal", ViewRef{id, {n, 1}, DType::INT32, -1})));
    }
    body.result = body.args[static_cast<std::size_t>(ir::result_view_operand(body))].var;
    fn->body.push_back(ir::Stmt{std::move(body)});
    result_.synthesized.push_back(fn);
    // Every rank of the domain runs it (the pipeline checks it with the rest).
    const std::int64_t group = group_of(op, std::nullopt);
    for (std::size_t r = 0; r < result_.ranks.size(); ++r) {
      if (domain < 0 || result_.domains[static_cast<std::size_t>(domain)].group_of[r] >= 0)
        result_.ranks[r].push_back(HostDispatch{fn.get(), bindings, issued_++, group});
    }
  }

  std::string domain_name(std::int32_t d) const {
    return d < 0 ? "the world"
                 : "comm domain '" + result_.domains[static_cast<std::size_t>(d)].name + "'";
  }

  // A view of a domain's buffer reaches only the ranks of the domain.
  void check_in_domain(const std::string& what, const ViewRef& w, std::int64_t rank) const {
    const runtime::WindowBuffer& b = result_.buffers[static_cast<std::size_t>(w.buffer)];
    if (b.domain < 0) return;
    const runtime::CommDomain& d = result_.domains[static_cast<std::size_t>(b.domain)];
    if (d.group_of[static_cast<std::size_t>(rank)] >= 0) return;
    std::string groups;
    for (const auto& g : d.groups) groups += (groups.empty() ? "" : ", ") + runtime::group_text(g);
    fail(what + ": a view of window buffer '" + b.name + "' of comm domain '" + d.name +
         "' is dispatched to rank " + std::to_string(rank) + ", which is in none of its groups (" +
         groups + "); dispatch it only to the ranks of its domain");
  }

  void call(const ir::Op& op) {
    const ir::Function& callee = *op.callee;
    const std::size_t nargs = op.has_device ? op.args.size() - 1 : op.args.size();
    const bool worker = ir::is_host_worker(callee);
    if (first_dispatch_ == nullptr && !worker) first_dispatch_ = &op;
    const std::string what =
        worker ? ir::site_name("call of host worker '" + callee.name + "'", op.loc)
               : "dispatch of '" + callee.name + "'";
    if (worker && op.has_device) {
      fail(what +
           " names a device: a host worker runs on the host (PyPTO's SubWorker); call it "
           "without device=");
    }
    if (!worker && !op.has_device && world_size_ != 1) {
      fail("the " + ir::site_name(what, op.loc) +
           " has no pl::device(r): the host runs orchestration functions on a " +
           "device (only a one-rank run may leave it out, and runs it on rank 0; here P = " +
           std::to_string(world_size_) + ")");
    }
    const std::int64_t rank = op.has_device ? scalar(op.args.back(), "pl.device").as_int() : 0;
    if (rank < 0 || rank >= world_size_) {
      fail(what + ": pl::device(" + std::to_string(rank) +
           ") is out of range for P = " + std::to_string(world_size_));
    }
    if (ir::contains_op(callee.body, ir::OpKind::AllToAllV)) {
      if (!runs_all_to_all_v_.insert(rank).second) {
        fail(what + ": rank " + std::to_string(rank) +
             " already runs pld.tensor.all_to_all_v in "
             "an earlier dispatch; it is refused in loops at every level (its Set-published "
             "recv_counts have no read-done handshake), and repeated dispatches repeat it");
      }
    }
    HostDispatch d;
    d.callee = &callee;
    d.issued = issued_++;
    // One group per run of the call's rank loops: the loops its device
    // depends on (the other loops' iterations name the run).
    d.group = group_of(op, op.has_device && op.args.back().is_var()
                               ? std::optional<ir::VarId>(op.args.back().var)
                               : std::nullopt);
    d.args.reserve(nargs);  // P ranks hold it: no spare capacity
    for (std::size_t i = 0; i < nargs; ++i) {
      const ir::Var& param = callee.vars[callee.params[i].var];
      const std::string arg_what =
          what + ", argument " + std::to_string(i) + " ('" + param.name + "')";
      // `unit_dims`: a window view may differ from its parameter in dims of
      // extent 1 (PyPTO's [SIZE] view for a [1, SIZE] parameter: the same
      // bytes in the same order); it then takes the parameter's shape.
      auto expect = [&](const std::vector<std::int64_t>& shape, DType dtype, const char* kind,
                        bool unit_dims = false) {
        bind_from_argument(param.type.shape, shape);
        auto want = eval_shape(param.type.shape, bindings_,
                               "function '" + callee.name + "' (" + ir::level_name(callee.level) +
                                   "), parameter '" + param.name + "'");
        if (unit_dims && dtype == param.type.dtype &&
            without_unit_dims(want) == without_unit_dims(shape))
          return want;
        if (want != shape || dtype != param.type.dtype) {
          fail(arg_what + ": expected " + ir::type_kind_name(param.type.kind) + shape_text(want) +
               " " + std::string(dtype_name(param.type.dtype)) + ", got " + kind +
               shape_text(shape) + " " + std::string(dtype_name(dtype)));
        }
        return want;
      };
      runtime::ArgBinding a;
      const ir::Operand& o = op.args[i];
      const HostValue& v = o.is_var() ? env_[o.var] : HostValue(scalar(o, what));
      if (worker && !std::holds_alternative<TensorSlice>(v)) {
        fail(arg_what +
             ": a host worker takes host tensors (the host function's parameters, "
             "or x[r] of one); got " +
             (o.is_var() ? var_name(o.var) : std::string("a value")) + ", which is not one");
      }
      if (const auto* t = std::get_if<TensorSlice>(&v)) {
        if (param.type.kind != ir::TypeKind::Tensor)
          fail(arg_what + ": expected a window view, got a host tensor");
        expect(t->shape, t->dtype, "Tensor");
        a.kind = runtime::ArgBinding::Kind::HostTensor;
        a.host_param = t->param;
        a.byte_offset = t->byte_offset;
        a.dtype = t->dtype;
        a.shape = result_.arg_shapes->intern(t->shape);
      } else if (const auto* w = std::get_if<ViewRef>(&v)) {
        if (param.type.kind != ir::TypeKind::DistTensor)
          fail(arg_what + ": expected a tensor, got a window view");
        const std::vector<std::int64_t> shape =
            expect(w->shape, w->dtype, "DistributedTensor", /*unit_dims=*/true);
        check_in_domain(arg_what, *w, rank);
        views_dispatched_.insert(w->made_by);
        a.kind = runtime::ArgBinding::Kind::Window;
        a.buffer = w->buffer;
        a.byte_offset = w->byte_offset;
        a.dtype = w->dtype;
        a.shape = result_.arg_shapes->intern(shape);
      } else if (const auto* s = std::get_if<runtime::ScalarValue>(&v)) {
        if (param.type.kind != ir::TypeKind::Scalar)
          fail(arg_what + ": expected a tensor, got a scalar");
        // A value the parameter's dtype cannot hold is refused, not wrapped.
        if (!dtype_is_float(param.type.dtype)) {
          const auto [lo, hi] = ir::integer_range(param.type.dtype);
          const bool integral = !s->is_float || s->f == static_cast<double>(s->as_int());
          if (!integral || s->as_int() < lo || s->as_int() > hi) {
            fail(arg_what + ": the value " +
                 (s->is_float ? std::to_string(s->f) : std::to_string(s->i)) +
                 " does not fit parameter '" + param.name + "' (Scalar " +
                 std::string(dtype_name(param.type.dtype)) + ", range [" + std::to_string(lo) +
                 ", " + std::to_string(hi) + "])");
          }
        }
        runtime::ScalarValue c = runtime::scalar_cast(*s, param.type.dtype);
        a.kind = c.is_float ? runtime::ArgBinding::Kind::Float : runtime::ArgBinding::Kind::Int;
        if (c.is_float) {
          a.float_value = c.f;
        } else {
          a.int_value = c.i;
        }
        a.dtype = param.type.dtype;
      } else if (std::holds_alternative<std::monostate>(v)) {
        fail(arg_what + ": " + (o.is_var() ? var_name(o.var) : std::string("the value")) +
             " was never set when the host reached this dispatch (it is assigned only inside "
             "a pl::range that ran no iteration or a pl::if_ branch that was not taken)");
      } else {
        fail(arg_what + ": this value cannot be passed to a device");
      }
      d.args.push_back(std::move(a));
    }
    result_.ranks[static_cast<std::size_t>(rank)].push_back(std::move(d));
  }

  // Binds each dim a parameter's extent names and nothing has bound yet,
  // from the argument's extent (specialize_host.hpp); an extent it cannot
  // solve is left to the shape check, which names it.
  void bind_from_argument(const std::vector<ir::Expr>& declared,
                          const std::vector<std::int64_t>& actual) {
    if (declared.size() != actual.size()) return;
    for (std::size_t i = 0; i < declared.size(); ++i) {
      const ir::ExtentSolution s = ir::solve_extent(declared[i], actual[i], bindings_);
      if (s.kind == ir::ExtentSolution::Kind::Solved) bindings_[s.dim_id] = s.value;
    }
  }

  // The dispatch group (HostDispatch::group, numbered in order of first
  // issue) of host call `op` here: the call and the iterations of its
  // enclosing loops, but for the loops `device` depends on (its rank loops).
  std::int64_t group_of(const ir::Op& op, std::optional<ir::VarId> device) {
    std::vector<std::int64_t> run;
    const std::set<ir::VarId>* rank_loops = nullptr;
    if (device) {
      const auto it = depends_on_.find(*device);
      if (it != depends_on_.end()) rank_loops = &it->second;
    }
    for (const auto& [iv, iteration] : iterations_)
      run.push_back(rank_loops && rank_loops->count(iv) ? -1 : iteration);
    const auto next = static_cast<std::int64_t>(groups_.size());
    return groups_.emplace(std::make_pair(&op, run), next).first->second;
  }

  // depends_on_[v]: the loop variables host value v is computed from (to a
  // fixed point: a value may be reassigned in a loop).
  void loop_dependence(const ir::Block& body) {
    bool grew = true;
    while (grew) {
      grew = false;
      const std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
        for (const ir::Stmt& s : b) {
          if (const auto* op = std::get_if<ir::Op>(&s.node)) {
            if (op->result < 0) continue;
            std::set<ir::VarId>& mine = depends_on_[op->result];
            const std::size_t before = mine.size();
            for (const ir::Operand& a : op->args) {
              if (!a.is_var() || a.var == op->result) continue;
              const auto it = depends_on_.find(a.var);
              if (it != depends_on_.end()) mine.insert(it->second.begin(), it->second.end());
            }
            grew = grew || mine.size() != before;
          } else if (const auto* f = std::get_if<ir::ForStmt>(&s.node)) {
            grew = depends_on_[f->iv].insert(f->iv).second || grew;
            walk(f->body);
          } else if (const auto* c = std::get_if<ir::IfStmt>(&s.node)) {
            walk(c->then_body);
            walk(c->else_body);
          }
        }
      };
      walk(body);
    }
    ir::for_each_op(body, [&](const ir::Op& op) {
      if (op.kind != ir::OpKind::Call || !op.has_device || !op.args.back().is_var()) return;
      const auto it = depends_on_.find(op.args.back().var);
      if (it != depends_on_.end()) rank_loops_.insert(it->second.begin(), it->second.end());
    });
  }

  std::int64_t issued_ = 0;  // dispatches issued so far (HostDispatch::issued)
  // Per enclosing loop: its variable and the iteration it is in.
  std::vector<std::pair<ir::VarId, std::int64_t>> iterations_;
  std::map<std::pair<const ir::Op*, std::vector<std::int64_t>>, std::int64_t> groups_;
  std::map<ir::VarId, std::set<ir::VarId>> depends_on_;
  const ir::Op* first_dispatch_ = nullptr;  // the host's first dispatch to a device
  const ir::Function& host_;
  ir::DimBindings& bindings_;
  std::int64_t world_size_;
  std::vector<HostValue> env_;
  HostSpecialization result_;
  int loop_depth_ = 0;
  std::set<std::int32_t> viewed_;
  std::map<ir::VarId, std::int32_t> views_made_;
  std::vector<ir::SourceLoc> allocated_at_;       // each buffer's allocating op
  std::map<ir::VarId, ir::SourceLoc> viewed_at_;  // each view's pld.window
  ir::SourceLoc where_;                           // the op or loop being run
  std::set<ir::VarId> views_dispatched_;
  std::vector<bool> rank_loop_stack_;  // per enclosing loop: is it a rank loop?
  std::set<ir::VarId> rank_loops_;     // loops whose variable some dispatch's device depends on
  std::set<std::int64_t> runs_all_to_all_v_;  // ranks dispatched an all_to_all_v already
  std::set<std::int32_t> sealed_;             // domains with a buffer: no more groups
};

}  // namespace

HostSpecialization specialize_host(const ir::Function& host, ir::DimBindings& bindings,
                                   const std::vector<ArgRef>& args, std::int64_t world_size) {
  return HostEvaluator(host, bindings, args, world_size).run();
}

}  // namespace anyp::compiler
