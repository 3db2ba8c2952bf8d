// pld_windows.cpp — recording of the distributed structure ops: window
// buffers (pld::alloc_window_buffer, DistributedTensor), views of them
// (pld::window), comm domains and groups, pld::world_size, the comm
// context and rank / nranks.
#include "anyp/pld.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"

namespace pld {

using anyp::detail::expect_kind;
using anyp::detail::index_operands;
using anyp::detail::Trace;
namespace ir = anyp::ir;

namespace {
const auto kWindow = {ir::TypeKind::DistTensor};

int alloc_counter(Trace& t) {
  int n = 0;
  for (const auto& v : t.function().vars) n += v.type.kind == ir::TypeKind::WindowBuffer;
  return n;
}

}  // namespace

pl::TypeSpec DistributedTensor(pl::Shape shape, pl::DType dtype) {
  return pl::TypeSpec{pl::TypeSpec::Kind::DistributedTensor, std::move(shape), dtype};
}

namespace {

pl::Value record_alloc(std::string name, pl::Shape shape, pl::DType dtype,
                       const CommDomain* domain) {
  Trace& t = Trace::current("pld.alloc_window_buffer");
  ir::Op op;
  op.kind = ir::OpKind::AllocWindow;
  if (domain) {
    op.args.push_back(ir::Operand::of_var(expect_kind(t, *domain, "pld.alloc_window_buffer",
                                                      "the domain", {ir::TypeKind::CommDomain})));
  }
  op.name = std::move(name);
  op.shape = anyp::detail::shape_exprs(shape);
  op.dtype = dtype;
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::WindowBuffer, op.shape, dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return pl::Value(t.ref(res));
}

}  // namespace

pl::Value alloc_window_buffer(std::string name, pl::Shape shape, pl::DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return record_alloc(std::move(name), std::move(shape), dtype, nullptr);
}

pl::Value alloc_window_buffer(std::string name, pl::Shape shape, pl::DType dtype,
                              const CommDomain& domain, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return record_alloc(std::move(name), std::move(shape), dtype, &domain);
}

CommDomain comm_domain(std::string name, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pld.comm_domain");
  ir::Op op;
  op.kind = ir::OpKind::CommDomain;
  op.name = std::move(name);
  op.result = t.new_var(ir::Type{ir::TypeKind::CommDomain, pl::INT32, {}});
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return CommDomain(t.ref(res));
}

namespace {

void record_group(const CommDomain& domain, const std::vector<const pl::ScalarArg*>& args,
                  std::int32_t form) {
  Trace& t = Trace::current("pld.comm_group");
  ir::Op op;
  op.kind = ir::OpKind::CommGroup;
  op.count = form;
  op.args.push_back(ir::Operand::of_var(
      expect_kind(t, domain, "pld.comm_group", "the domain", {ir::TypeKind::CommDomain})));
  for (const pl::ScalarArg* a : args) {
    ir::Operand o = t.operand(*a, "pld.comm_group");
    if (anyp::dtype_is_float(t.operand_type(o).dtype))
      t.fail("pld.comm_group: ranks, counts and strides must be integers");
    op.args.push_back(o);
  }
  if (form == 0 && args.empty()) t.fail("pld.comm_group: a group needs at least one rank");
  t.emit(std::move(op));
}

}  // namespace

void comm_group(const CommDomain& domain, const pl::ScalarArg& first, const pl::ScalarArg& count,
                const pl::ScalarArg& stride, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  record_group(domain, {&first, &count, &stride}, 1);
}

void comm_group(const CommDomain& domain, const std::vector<pl::ScalarArg>& ranks, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  std::vector<const pl::ScalarArg*> args;
  for (const auto& r : ranks) args.push_back(&r);
  record_group(domain, args, 0);
}

pl::Value alloc_window_buffer(std::string name, const pl::Dim& bytes, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return alloc_window_buffer(std::move(name), pl::Shape{bytes}, pl::INT8);
}

pl::Value alloc_window_buffer(pl::Shape shape, pl::DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pld.alloc_window_buffer");
  return alloc_window_buffer("buf" + std::to_string(alloc_counter(t)), std::move(shape), dtype);
}

namespace {

pl::Value make_window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype,
                      const pl::ScalarArg* offset) {
  Trace& t = Trace::current("pld.window");
  ir::VarId buf = expect_kind(t, buffer, "pld.window", "the buffer", {ir::TypeKind::WindowBuffer});
  ir::Op op;
  op.kind = ir::OpKind::Window;
  op.args = {ir::Operand::of_var(buf)};
  if (offset) {
    ir::Operand o = t.operand(*offset, "pld.window");
    if (anyp::dtype_is_float(t.operand_type(o).dtype)) {
      t.fail("pld.window: the offset must be an integer (a count of " +
             std::string(anyp::dtype_name(dtype)) + " elements)");
    }
    op.args.push_back(o);
  }
  op.shape = anyp::detail::shape_exprs(shape);
  op.dtype = dtype;
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::DistTensor, op.shape, dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return pl::Value(t.ref(res));
}

}  // namespace

pl::Value window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return make_window(buffer, std::move(shape), dtype, nullptr);
}

pl::Value window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype,
                 const pl::ScalarArg& offset, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return make_window(buffer, std::move(shape), dtype, &offset);
}

pl::Dim world_size(pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  // Recorded only in the host, where P is a value. Kernels and orchestration
  // functions may use it in shapes; Trace::operand refuses it as a value there.
  if (Trace* t = Trace::active(); t && t->function().level == ir::Level::Host) {
    ir::Op op;
    op.kind = ir::OpKind::WorldSize;
    t->emit(std::move(op));
  }
  return pl::Dim(ir::world_size_dim());
}

CommCtx get_comm_ctx(const pl::Value& window_view, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pld.get_comm_ctx");
  ir::VarId w = expect_kind(t, window_view, "pld.get_comm_ctx", "the argument", kWindow);
  ir::Op op;
  op.kind = ir::OpKind::GetCommCtx;
  op.args = {ir::Operand::of_var(w)};
  op.result = t.new_var(ir::Type{ir::TypeKind::CommCtx, pl::INT32, {}});
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return CommCtx(t.ref(res));
}

namespace {
pl::Scalar ctx_query(ir::OpKind kind, const CommCtx& ctx) {
  const char* name = ir::op_kind_name(kind);
  Trace& t = Trace::current(name);
  ir::VarId c = expect_kind(t, ctx, name, "the argument", {ir::TypeKind::CommCtx});
  ir::Op op;
  op.kind = kind;
  op.args = {ir::Operand::of_var(c)};
  op.result = t.new_var(ir::scalar_type(pl::INT32));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return pl::Scalar(t.ref(res));
}
}  // namespace

pl::Scalar rank(const CommCtx& ctx, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return ctx_query(ir::OpKind::Rank, ctx);
}
pl::Scalar nranks(const CommCtx& ctx, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return ctx_query(ir::OpKind::NRanks, ctx);
}

}  // namespace pld
