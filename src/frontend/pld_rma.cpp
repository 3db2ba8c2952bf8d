// pld_rma.cpp — recording of the one-sided ops: signals
// (pld::system::notify, wait, wait_async), transfers (pld::tensor::put,
// get, put_async) and remote tile access (pld::tile::remote_load,
// remote_store).
#include "anyp/pld.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"

namespace pld {

using anyp::detail::expect_kind;
using anyp::detail::index_operands;
using anyp::detail::Trace;
namespace ir = anyp::ir;
using anyp::detail::expect_signal;
using anyp::detail::integer_operand;
using anyp::detail::peer_operand;

// The public enums are cast to the IR's: they must keep its order.
static_assert(static_cast<int>(NotifyOp::Set) == static_cast<int>(ir::NotifyKind::Set));
static_assert(static_cast<int>(WaitCmp::Le) == static_cast<int>(ir::WaitKind::Le));
static_assert(static_cast<int>(AtomicType::Add) == static_cast<int>(ir::AtomicKind::Add));

namespace {
const auto kMemory = {ir::TypeKind::Tensor, ir::TypeKind::DistTensor};
const auto kWindow = {ir::TypeKind::DistTensor};
}  // namespace

namespace system {

void notify(const pl::Value& signal, const pl::ScalarArg& peer, pl::Index offsets,
            const pl::ScalarArg& value, NotifyOp nop, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.system.notify";
  Trace& t = Trace::current(name);
  ir::VarId s = expect_signal(t, signal, name);
  ir::Op op;
  op.kind = ir::OpKind::Notify;
  op.attr = static_cast<ir::NotifyKind>(nop);  // the same order (op_attrs.hpp)
  op.args = {ir::Operand::of_var(s), peer_operand(t, peer, name),
             integer_operand(t, value, name, "the value (a signal cell is INT32)")};
  for (auto& o : index_operands(t, offsets, t.type_of(s).shape.size(), name, "offsets"))
    op.args.push_back(o);
  t.emit(std::move(op));
}

void wait(const pl::Value& signal, pl::Index offsets, const pl::ScalarArg& expected, WaitCmp cmp,
          pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.system.wait";
  Trace& t = Trace::current(name);
  ir::VarId s = expect_signal(t, signal, name);
  ir::Op op;
  op.kind = ir::OpKind::Wait;
  op.attr = static_cast<ir::WaitKind>(cmp);  // the same order (op_attrs.hpp)
  op.args = {ir::Operand::of_var(s),
             integer_operand(t, expected, name, "the expected value (a signal cell is INT32)")};
  for (auto& o : index_operands(t, offsets, t.type_of(s).shape.size(), name, "offsets"))
    op.args.push_back(o);
  t.emit(std::move(op));
}

void wait_async(const AsyncEvent& event, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.system.wait_async";
  Trace& t = Trace::current(name);
  ir::Op op;
  op.kind = ir::OpKind::WaitAsync;
  op.args = {ir::Operand::of_var(expect_kind(t, event, name, "the event", {ir::TypeKind::Scalar}))};
  t.emit(std::move(op));
}

}  // namespace system

namespace tensor {
namespace {

// Records a put, get or put_async; returns the put_async's event variable.
ir::VarId transfer(ir::OpKind kind, const pl::Value& dst, const pl::ScalarArg& peer,
                   const pl::Value& src, const pl::Index* dst_offsets, const pl::Index* src_offsets,
                   const pl::Shape* shape, AtomicType atomic) {
  const bool is_put = kind != ir::OpKind::Get;
  const char* name = ir::op_kind_name(kind);
  Trace& t = Trace::current(name);
  ir::VarId d = expect_kind(t, dst, name, "the destination", is_put ? kWindow : kMemory);
  ir::VarId s = expect_kind(t, src, name, "the source", is_put ? kMemory : kWindow);
  const ir::Type& dt = t.type_of(d);
  const ir::Type& st = t.type_of(s);
  if (dt.dtype != st.dtype) {
    t.fail(std::string(name) + ": dtype mismatch: destination " + ir::to_string(dt) + ", source " +
           ir::to_string(st));
  }
  ir::Op op;
  op.kind = kind;
  op.attr = static_cast<ir::AtomicKind>(atomic);  // the same order (op_attrs.hpp)
  op.args = {ir::Operand::of_var(d), peer_operand(t, peer, name), ir::Operand::of_var(s)};
  if (shape) {
    auto dofs = index_operands(t, *dst_offsets, dt.shape.size(), name, "dst_offsets");
    auto sofs = index_operands(t, *src_offsets, st.shape.size(), name, "src_offsets");
    if (shape->size() != dt.shape.size() || shape->size() != st.shape.size()) {
      t.fail(std::string(name) + ": the region shape has " +
             anyp::detail::counted(shape->size(), "dim", "dims") +
             "; destination and source have " + std::to_string(dt.shape.size()) + " and " +
             std::to_string(st.shape.size()));
    }
    op.count = static_cast<int>(dofs.size());
    op.args.insert(op.args.end(), dofs.begin(), dofs.end());
    op.args.insert(op.args.end(), sofs.begin(), sofs.end());
    op.shape = anyp::detail::shape_exprs(*shape);
  } else if (dt.shape.size() != st.shape.size()) {
    t.fail(std::string(name) + ": destination " + ir::to_string(dt) + " and source " +
           ir::to_string(st) + " differ in rank; use the region form");
  }
  if (kind == ir::OpKind::PutAsync) op.result = t.new_var(ir::scalar_type(pl::INT32));
  const ir::VarId event = op.result;
  t.emit(std::move(op));
  return event;
}

}  // namespace

void put(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src, AtomicType atomic,
         pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  transfer(ir::OpKind::Put, dst, peer, src, nullptr, nullptr, nullptr, atomic);
}
void put(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape, AtomicType atomic,
         pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  transfer(ir::OpKind::Put, dst, peer, src, &dst_offsets, &src_offsets, &shape, atomic);
}
AsyncEvent put_async(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
                     pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const ir::VarId e =
      transfer(ir::OpKind::PutAsync, dst, peer, src, nullptr, nullptr, nullptr, AtomicType::None);
  return AsyncEvent(Trace::current("pld.tensor.put_async").ref(e));
}
AsyncEvent put_async(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
                     pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape,
                     pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const ir::VarId e = transfer(ir::OpKind::PutAsync, dst, peer, src, &dst_offsets, &src_offsets,
                               &shape, AtomicType::None);
  return AsyncEvent(Trace::current("pld.tensor.put_async").ref(e));
}
void get(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src, AtomicType atomic,
         pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  transfer(ir::OpKind::Get, dst, peer, src, nullptr, nullptr, nullptr, atomic);
}
void get(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape, AtomicType atomic,
         pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  transfer(ir::OpKind::Get, dst, peer, src, &dst_offsets, &src_offsets, &shape, atomic);
}

void remote_store(const pl::Value& src, const pl::Value& target, const pl::ScalarArg& peer,
                  pl::Index offsets, AtomicType atomic, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pld.tensor.remote_store");
  const ir::VarId s = anyp::detail::expect_kind(t, src, "pld.tensor.remote_store", "the source",
                                                {ir::TypeKind::Tensor, ir::TypeKind::DistTensor});
  pl::Shape shape;
  for (const ir::Expr& e : t.type_of(s).shape) shape.push_back(pl::Dim(e));
  pl::Index zeros(shape.size(), pl::ScalarArg(0));
  transfer(ir::OpKind::Put, target, peer, src, &offsets, &zeros, &shape, atomic);
}

}  // namespace tensor

namespace tile {

namespace {

pl::Tile remote_load_tile(const pl::Value& window_view, const pl::ScalarArg& peer,
                          pl::Index offsets, pl::Shape shape, const pl::Index* valid) {
  const char* name = "pld.tile.remote_load";
  Trace& t = Trace::current(name);
  ir::VarId w = expect_kind(t, window_view, name, "the source", kWindow);
  const ir::Type& wt = t.type_of(w);
  if (shape.size() != wt.shape.size()) {
    t.fail(std::string(name) + ": the tile shape has " +
           anyp::detail::counted(shape.size(), "dim", "dims") + ", but the window has " +
           std::to_string(wt.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::RemoteLoad;
  op.args = {ir::Operand::of_var(w), peer_operand(t, peer, name)};
  for (auto& o : index_operands(t, offsets, wt.shape.size(), name, "offsets")) op.args.push_back(o);
  op.shape = anyp::detail::shape_exprs(shape);
  if (valid) anyp::detail::record_valid(t, name, *valid, shape.size(), op);
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::Tile, op.shape, wt.dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return pl::Tile(t.ref(res));
}

}  // namespace

pl::Tile remote_load(const pl::Value& window_view, const pl::ScalarArg& peer, pl::Index offsets,
                     pl::Shape shape, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return remote_load_tile(window_view, peer, std::move(offsets), std::move(shape), nullptr);
}
pl::Tile remote_load(const pl::Value& window_view, const pl::ScalarArg& peer, pl::Index offsets,
                     pl::Shape shape, pl::Index valid_shape, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return remote_load_tile(window_view, peer, std::move(offsets), std::move(shape), &valid_shape);
}

void remote_store(const pl::Tile& tile, const pl::Value& window_view, const pl::ScalarArg& peer,
                  pl::Index offsets, AtomicType atomic, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tile.remote_store";
  Trace& t = Trace::current(name);
  ir::VarId tv = expect_kind(t, tile, name, "the stored value", {ir::TypeKind::Tile});
  ir::VarId w = expect_kind(t, window_view, name, "the target", kWindow);
  const ir::Type& wt = t.type_of(w);
  if (t.type_of(tv).dtype != wt.dtype) {
    t.fail(std::string(name) +
           ": dtype mismatch: " + anyp::detail::dtype_with_article(t.type_of(tv).dtype) +
           " tile stored into " + ir::to_string(wt));
  }
  ir::Op op;
  op.kind = ir::OpKind::RemoteStore;
  op.attr = static_cast<ir::AtomicKind>(atomic);
  op.args = {ir::Operand::of_var(tv), ir::Operand::of_var(w), peer_operand(t, peer, name)};
  for (auto& o : index_operands(t, offsets, wt.shape.size(), name, "offsets")) op.args.push_back(o);
  t.emit(std::move(op));
}

}  // namespace tile
}  // namespace pld
