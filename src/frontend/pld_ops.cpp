// pld_ops.cpp — recording of the distributed ops: window buffers and views,
// the comm context, signals, one-sided RMA and the builtin barrier.
#include "anyp/pld.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"

namespace pld {

using anyp::detail::expect_kind;
using anyp::detail::index_operands;
using anyp::detail::Trace;
namespace ir = anyp::ir;

// The public enums are cast to the IR's: they must keep its order.
static_assert(static_cast<int>(NotifyOp::Set) == static_cast<int>(ir::NotifyKind::Set));
static_assert(static_cast<int>(WaitCmp::Le) == static_cast<int>(ir::WaitKind::Le) &&
              static_cast<int>(WaitCmp::Ge) == static_cast<int>(ir::WaitKind::Ge));
static_assert(static_cast<int>(AtomicType::Add) == static_cast<int>(ir::AtomicKind::Add));
static_assert(static_cast<int>(ReduceOp::Prod) == static_cast<int>(ir::ReduceKind::Prod) &&
              static_cast<int>(ReduceOp::Min) == static_cast<int>(ir::ReduceKind::Min));
static_assert(static_cast<int>(AllreduceMode::Ring) == static_cast<int>(ir::AllreduceKind::Ring));

static_assert(static_cast<int>(NotifyOp::Set) == static_cast<int>(ir::NotifyKind::Set));
static_assert(static_cast<int>(WaitCmp::Le) == static_cast<int>(ir::WaitKind::Le));
static_assert(static_cast<int>(AtomicType::Add) == static_cast<int>(ir::AtomicKind::Add));

namespace {
const auto kMemory = {ir::TypeKind::Tensor, ir::TypeKind::DistTensor};
const auto kWindow = {ir::TypeKind::DistTensor};

ir::VarId expect_signal(Trace& t, const pl::Value& signal, std::string_view op) {
  ir::VarId v = expect_kind(t, signal, op, "the signal", kWindow);
  if (t.type_of(v).dtype != pl::INT32) {
    t.fail(std::string(op) + ": the signal must be INT32, got " + ir::to_string(t.type_of(v)));
  }
  return v;
}

ir::Operand peer_operand(Trace& t, const pl::ScalarArg& peer, std::string_view op) {
  ir::Operand o = t.operand(peer, op);
  if (anyp::dtype_is_float(t.operand_type(o).dtype))
    t.fail(std::string(op) + ": peer must be an integer");
  return o;
}

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

pl::Value alloc_window_buffer(std::string name, pl::Shape shape, pl::DType dtype) {
  return record_alloc(std::move(name), std::move(shape), dtype, nullptr);
}

pl::Value alloc_window_buffer(std::string name, pl::Shape shape, pl::DType dtype,
                              const CommDomain& domain) {
  return record_alloc(std::move(name), std::move(shape), dtype, &domain);
}

CommDomain comm_domain(std::string name) {
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
                const pl::ScalarArg& stride) {
  record_group(domain, {&first, &count, &stride}, 1);
}

void comm_group(const CommDomain& domain, const std::vector<pl::ScalarArg>& ranks) {
  std::vector<const pl::ScalarArg*> args;
  for (const auto& r : ranks) args.push_back(&r);
  record_group(domain, args, 0);
}

pl::Value alloc_window_buffer(std::string name, const pl::Dim& bytes) {
  return alloc_window_buffer(std::move(name), pl::Shape{bytes}, pl::INT8);
}

pl::Value alloc_window_buffer(pl::Shape shape, pl::DType dtype) {
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

pl::Value window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype) {
  return make_window(buffer, std::move(shape), dtype, nullptr);
}

pl::Value window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype,
                 const pl::ScalarArg& offset) {
  return make_window(buffer, std::move(shape), dtype, &offset);
}

pl::Dim world_size() {
  // Recorded only in the host, where P is a value. Kernels and orchestration
  // functions may use it in shapes; Trace::operand refuses it as a value there.
  if (Trace* t = Trace::active(); t && t->function().level == ir::Level::Host) {
    ir::Op op;
    op.kind = ir::OpKind::WorldSize;
    t->emit(std::move(op));
  }
  return pl::Dim(ir::world_size_dim());
}

CommCtx get_comm_ctx(const pl::Value& window_view) {
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

pl::Scalar rank(const CommCtx& ctx) { return ctx_query(ir::OpKind::Rank, ctx); }
pl::Scalar nranks(const CommCtx& ctx) { return ctx_query(ir::OpKind::NRanks, ctx); }

namespace system {

void notify(const pl::Value& signal, const pl::ScalarArg& peer, pl::Index offsets,
            const pl::ScalarArg& value, NotifyOp nop) {
  const char* name = "pld.system.notify";
  Trace& t = Trace::current(name);
  ir::VarId s = expect_signal(t, signal, name);
  ir::Op op;
  op.kind = ir::OpKind::Notify;
  op.attr = static_cast<ir::NotifyKind>(nop);  // the same order (op_attrs.hpp)
  op.args = {ir::Operand::of_var(s), peer_operand(t, peer, name), t.operand(value, name)};
  for (auto& o : index_operands(t, offsets, t.type_of(s).shape.size(), name, "offsets"))
    op.args.push_back(o);
  t.emit(std::move(op));
}

void wait(const pl::Value& signal, pl::Index offsets, const pl::ScalarArg& expected, WaitCmp cmp) {
  const char* name = "pld.system.wait";
  Trace& t = Trace::current(name);
  ir::VarId s = expect_signal(t, signal, name);
  ir::Op op;
  op.kind = ir::OpKind::Wait;
  op.attr = static_cast<ir::WaitKind>(cmp);  // the same order (op_attrs.hpp)
  op.args = {ir::Operand::of_var(s), t.operand(expected, name)};
  for (auto& o : index_operands(t, offsets, t.type_of(s).shape.size(), name, "offsets"))
    op.args.push_back(o);
  t.emit(std::move(op));
}

void wait_async(const AsyncEvent& event) {
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

void put(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src, AtomicType atomic) {
  transfer(ir::OpKind::Put, dst, peer, src, nullptr, nullptr, nullptr, atomic);
}
void put(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape, AtomicType atomic) {
  transfer(ir::OpKind::Put, dst, peer, src, &dst_offsets, &src_offsets, &shape, atomic);
}
AsyncEvent put_async(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src) {
  const ir::VarId e =
      transfer(ir::OpKind::PutAsync, dst, peer, src, nullptr, nullptr, nullptr, AtomicType::None);
  return AsyncEvent(Trace::current("pld.tensor.put_async").ref(e));
}
AsyncEvent put_async(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
                     pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape) {
  const ir::VarId e = transfer(ir::OpKind::PutAsync, dst, peer, src, &dst_offsets, &src_offsets,
                               &shape, AtomicType::None);
  return AsyncEvent(Trace::current("pld.tensor.put_async").ref(e));
}
void get(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src, AtomicType atomic) {
  transfer(ir::OpKind::Get, dst, peer, src, nullptr, nullptr, nullptr, atomic);
}
void get(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape, AtomicType atomic) {
  transfer(ir::OpKind::Get, dst, peer, src, &dst_offsets, &src_offsets, &shape, atomic);
}

pl::Value barrier(const pl::Value& signal) {
  const char* name = "pld.tensor.barrier";
  Trace& t = Trace::current(name);
  ir::VarId s = expect_signal(t, signal, name);
  ir::Op op;
  op.kind = ir::OpKind::Barrier;
  op.args = {ir::Operand::of_var(s)};
  op.result = s;
  t.emit(std::move(op));
  return pl::Value(t.ref(s));
}

void barrier() {
  const char* name = "pld.tensor.barrier";
  Trace& t = Trace::current(name);
  if (t.function().level != ir::Level::Host) {
    t.fail(std::string(name) + " without a signal is a host-level form; in an " +
           ir::level_name(t.function().level) + " function pass an [NR, 1] INT32 signal window");
  }
  ir::Op op;
  op.kind = ir::OpKind::Barrier;
  t.emit(std::move(op));
}

}  // namespace tensor

namespace tile {

namespace {

pl::Tile remote_load_tile(const pl::Value& window_view, const pl::ScalarArg& peer,
                          pl::Index offsets, pl::Shape shape, const pl::Shape* valid) {
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
  if (valid) op.valid = anyp::detail::valid_exprs(t, name, *valid, shape.size());
  op.result = t.new_var(ir::shaped_type(ir::TypeKind::Tile, op.shape, wt.dtype));
  ir::VarId res = op.result;
  t.emit(std::move(op));
  return pl::Tile(t.ref(res));
}

}  // namespace

pl::Tile remote_load(const pl::Value& window_view, const pl::ScalarArg& peer, pl::Index offsets,
                     pl::Shape shape) {
  return remote_load_tile(window_view, peer, std::move(offsets), std::move(shape), nullptr);
}
pl::Tile remote_load(const pl::Value& window_view, const pl::ScalarArg& peer, pl::Index offsets,
                     pl::Shape shape, pl::Shape valid_shape) {
  return remote_load_tile(window_view, peer, std::move(offsets), std::move(shape), &valid_shape);
}

void remote_store(const pl::Tile& tile, const pl::Value& window_view, const pl::ScalarArg& peer,
                  pl::Index offsets, AtomicType atomic) {
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

// ---- builtin collectives -----------------------------------------------------------------

namespace pld::tensor {
namespace {

namespace ir = anyp::ir;
using anyp::detail::expect_kind;
using anyp::detail::Trace;

static_assert(static_cast<int>(ReduceOp::Prod) == static_cast<int>(ir::ReduceKind::Prod));
static_assert(static_cast<int>(AllreduceMode::Ring) == static_cast<int>(ir::AllreduceKind::Ring));

const auto kWindowKind = {ir::TypeKind::DistTensor};

// The data of a reduction: a window view of any dtype (tiles are typed:
// integers reduce exactly, wrapping like C++ unsigned arithmetic).
ir::VarId expect_data_window(Trace& t, const pl::Value& data, const char* op, const char* role) {
  return expect_kind(t, data, op, role, kWindowKind);
}

ir::VarId expect_signal_window(Trace& t, const pl::Value& signal, const char* op,
                               const std::string& role = "the signal") {
  ir::VarId v = expect_kind(t, signal, op, role, kWindowKind);
  if (t.type_of(v).dtype != pl::INT32) {
    t.fail(std::string(op) + ": " + role + " must be INT32, got " + ir::to_string(t.type_of(v)));
  }
  // [NR, 1] (or PyPTO's one-dim [NR]); a ring allreduce's is [2 (NR - 1), NR].
  const std::size_t dims = t.type_of(v).shape.size();
  if (dims != 1 && dims != 2) {
    t.fail(std::string(op) + ": " + role + " must have 1 or 2 dims ([NR] or [NR, 1]), got " +
           ir::to_string(t.type_of(v)));
  }
  return v;
}

// A plain tensor source: a buffer that cannot alias the window target.
ir::VarId expect_plain_source(Trace& t, const pl::Value& src, const char* op) {
  ir::VarId v = t.id_of(src.var(), op);
  // At the host level the source is a separate staging window (checked not
  // to alias the target when the host function is specialised).
  if (t.function().level == ir::Level::Host && t.type_of(v).kind == ir::TypeKind::DistTensor)
    return v;
  if (t.type_of(v).kind != ir::TypeKind::Tensor) {
    t.fail(std::string(op) +
           ": the source must be a plain tensor, a buffer separate from the "
           "target window, got " +
           ir::to_string(t.type_of(v)));
  }
  return v;
}

void expect_same_dtype(Trace& t, ir::VarId src, ir::VarId dst, const char* op) {
  if (t.type_of(src).dtype != t.type_of(dst).dtype) {
    t.fail(std::string(op) + ": dtype mismatch: source " + ir::to_string(t.type_of(src)) +
           ", target " + ir::to_string(t.type_of(dst)));
  }
}

// pld::ReduceOp and pld::AllreduceMode have ir::ReduceKind's and
// ir::AllreduceKind's order (op_attrs.hpp).
ir::AllreduceAttr allreduce_attr(ReduceOp op, AllreduceMode mode) {
  return ir::AllreduceAttr{static_cast<ir::ReduceKind>(op), static_cast<ir::AllreduceKind>(mode)};
}

pl::Value emit_collective(Trace& t, ir::OpKind kind, std::vector<ir::Operand> args,
                          ir::VarId result, ir::OpAttr attr = {}, ir::Expr blocks = nullptr) {
  ir::Op op;
  op.kind = kind;
  op.args = std::move(args);
  op.attr = attr;
  op.result = result;
  op.blocks = std::move(blocks);
  t.emit(std::move(op));
  return pl::Value(t.ref(result));
}

ir::Operand var(ir::VarId v) { return ir::Operand::of_var(v); }

// The block count of a host collective's core_num (PyPTO's core_num=):
// an integer or Dim expression, at the host level only.
ir::Expr core_num_blocks(Trace& t, const char* name, const CoreNum& cores) {
  if (t.function().level != ir::Level::Host) {
    t.fail(std::string(name) +
           " with core_num is a host-level form (the host launches the "
           "collective over core_num blocks of every rank); in a kernel, "
           "launch the kernel over pl::blocks(n) instead");
  }
  if (cores.count.kind() != pl::ScalarArg::Kind::Int)
    t.fail(std::string(name) + ": core_num must be an integer or a Dim expression");
  return cores.count.int_expr();
}

}  // namespace

pl::Value allreduce(const pl::Value& data, const pl::Value& signal, CoreNum cores, ReduceOp op) {
  const char* name = "pld.tensor.allreduce";
  Trace& t = Trace::current(name);
  ir::Expr blocks = core_num_blocks(t, name, cores);
  ir::VarId d = expect_data_window(t, data, name, "the data");
  ir::VarId s = expect_signal_window(t, signal, name);
  return emit_collective(t, ir::OpKind::Allreduce, {var(d), var(s)}, d,
                         allreduce_attr(op, AllreduceMode::Mesh), std::move(blocks));
}

pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal, CoreNum cores) {
  const char* name = "pld.tensor.all_to_all_v";
  ir::Expr blocks = core_num_blocks(Trace::current(name), name, cores);
  pl::Value out = all_to_all_v(src, send_counts, dst, recv_counts, signal);
  Trace::current(name).set_last_op_blocks(std::move(blocks));
  return out;
}

pl::Value allreduce(const pl::Value& data, const pl::Value& signal, ReduceOp op,
                    AllreduceMode mode) {
  const char* name = "pld.tensor.allreduce";
  Trace& t = Trace::current(name);
  ir::VarId d = expect_data_window(t, data, name, "the data");
  ir::VarId s = expect_signal_window(t, signal, name);
  return emit_collective(t, ir::OpKind::Allreduce, {var(d), var(s)}, d, allreduce_attr(op, mode));
}

pl::Value allreduce(const pl::Value& data, ReduceOp op) {
  const char* name = "pld.tensor.allreduce";
  Trace& t = Trace::current(name);
  if (t.function().level != ir::Level::Host) {
    t.fail(std::string(name) + " without a signal is a host-level form; in an " +
           ir::level_name(t.function().level) + " function pass an [NR, 1] INT32 signal window");
  }
  ir::VarId d = expect_data_window(t, data, name, "the data");
  return emit_collective(t, ir::OpKind::Allreduce, {var(d)}, d,
                         allreduce_attr(op, AllreduceMode::Mesh));
}

pl::Value broadcast(const pl::Value& data, const pl::Value& signal, const pl::ScalarArg& root) {
  const char* name = "pld.tensor.broadcast";
  Trace& t = Trace::current(name);
  ir::VarId d = expect_kind(t, data, name, "the data", kWindowKind);
  ir::VarId s = expect_signal_window(t, signal, name);
  ir::Operand r = t.operand(root, name);
  if (r.is_var()) {
    t.fail(std::string(name) +
           ": root must be a compile-time integer constant in [0, P), got a "
           "run-time value; pass a constant such as ROOT = 0");
  }
  if (r.is_float_imm) {
    t.fail(std::string(name) +
           ": root must be an integer constant in [0, P), got a floating "
           "value");
  }
  return emit_collective(t, ir::OpKind::Broadcast, {var(d), var(s), r}, d);
}

pl::Value allgather(const pl::Value& src, const pl::Value& dst, const pl::Value& signal) {
  const char* name = "pld.tensor.allgather";
  Trace& t = Trace::current(name);
  ir::VarId x = expect_plain_source(t, src, name);
  ir::VarId d = expect_kind(t, dst, name, "the target", kWindowKind);
  ir::VarId s = expect_signal_window(t, signal, name);
  expect_same_dtype(t, x, d, name);
  return emit_collective(t, ir::OpKind::Allgather, {var(x), var(d), var(s)}, d);
}

pl::Value reduce_scatter(const pl::Value& data, const pl::Value& signal, ReduceOp op) {
  const char* name = "pld.tensor.reduce_scatter";
  Trace& t = Trace::current(name);
  ir::VarId d = expect_data_window(t, data, name, "the data");
  ir::VarId s = expect_signal_window(t, signal, name);
  return emit_collective(t, ir::OpKind::ReduceScatter, {var(d), var(s)}, d,
                         static_cast<ir::ReduceKind>(op));
}

pl::Value all_to_all(const pl::Value& src, const pl::Value& dst, const pl::Value& signal) {
  const char* name = "pld.tensor.all_to_all";
  Trace& t = Trace::current(name);
  ir::VarId x = expect_plain_source(t, src, name);
  ir::VarId d = expect_kind(t, dst, name, "the target", kWindowKind);
  ir::VarId s = expect_signal_window(t, signal, name);
  expect_same_dtype(t, x, d, name);
  return emit_collective(t, ir::OpKind::AllToAll, {var(x), var(d), var(s)}, d);
}

pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal) {
  const char* name = "pld.tensor.all_to_all_v";
  Trace& t = Trace::current(name);
  const bool host = t.function().level == ir::Level::Host;
  if (t.loop_depth() > 0) {
    t.fail(std::string(name) +
           " is inside a pl::range loop: its Set-published recv_counts have "
           "no read-done handshake, so a second call could overwrite counts a peer has not read; "
           "call it outside loops");
  }
  ir::VarId x = expect_plain_source(t, src, name);
  // In a kernel the counts are the rank's plain tensor; at the host level
  // every rank's counts sit in its copy of a window (written by an earlier
  // dispatch), like every other operand of a host collective.
  ir::VarId sc = host ? expect_kind(t, send_counts, name, "send_counts", kWindowKind)
                      : expect_kind(t, send_counts, name, "send_counts", {ir::TypeKind::Tensor});
  ir::VarId d = expect_kind(t, dst, name, "the target", kWindowKind);
  ir::VarId rc = expect_signal_window(t, recv_counts, name, "recv_counts");
  ir::VarId s = expect_signal_window(t, signal, name);
  if (rc == s) {
    t.fail(std::string(name) +
           ": recv_counts and the signal must be different windows (the "
           "Set-published counts would overwrite the barrier's credits)");
  }
  if (t.type_of(sc).dtype != pl::INT32) {
    t.fail(std::string(name) + ": send_counts must be INT32, got " + ir::to_string(t.type_of(sc)));
  }
  expect_same_dtype(t, x, d, name);
  return emit_collective(t, ir::OpKind::AllToAllV, {var(x), var(sc), var(d), var(rc), var(s)}, d);
}

}  // namespace pld::tensor
