// pld_collectives.cpp — recording of the builtin collectives: barrier,
// allreduce (mesh, ring, core_num), broadcast, allgather, reduce_scatter,
// all_to_all and all_to_all_v, with their operand checks.
#include "anyp/pld.hpp"
#include "common/internal_check.hpp"
#include "frontend/call_site.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"

namespace pld::tensor {
namespace {

namespace ir = anyp::ir;
using anyp::detail::expect_kind;
using anyp::detail::expect_signal;
using anyp::detail::Trace;

static_assert(static_cast<int>(ReduceOp::Prod) == static_cast<int>(ir::ReduceKind::Prod));

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

// Each mode's algorithm, a case per row of its list
// (anyp/collective_algorithms.hpp, which also makes the enum): complete by
// construction.
#define ANYP_MODE_CASE(Mode, algorithm, snake_name) \
  case Mode::algorithm:                             \
    return ir::Algorithm::algorithm;
#define ANYP_ALGORITHM_OF(Op, Mode, snake_name, LIST)                             \
  ir::Algorithm algorithm_of(Mode mode) {                                         \
    switch (mode) {                                                               \
      LIST(ANYP_MODE_CASE, Mode)                                                  \
      case Mode::Auto:                                                            \
        return ir::Algorithm::Auto;                                               \
    }                                                                             \
    ANYP_UNREACHABLE("pld::" #Mode " " + std::to_string(static_cast<int>(mode))); \
  }
ANYP_COLLECTIVES_WITH_MODES(ANYP_ALGORITHM_OF)
#undef ANYP_ALGORITHM_OF
#undef ANYP_MODE_CASE

// pld::ReduceOp has ir::ReduceKind's order (op_attrs.hpp).
ir::AllreduceAttr allreduce_attr(ReduceOp op, AllreduceMode mode) {
  return ir::AllreduceAttr{static_cast<ir::ReduceKind>(op), algorithm_of(mode)};
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

pl::Value allreduce(const pl::Value& data, const pl::Value& signal, CoreNum cores, ReduceOp op,
                    pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tensor.allreduce";
  Trace& t = Trace::current(name);
  ir::Expr blocks = core_num_blocks(t, name, cores);
  ir::VarId d = expect_data_window(t, data, name, "the data");
  ir::VarId s = expect_signal_window(t, signal, name);
  return emit_collective(t, ir::OpKind::Allreduce, {var(d), var(s)}, d,
                         allreduce_attr(op, AllreduceMode::Mesh), std::move(blocks));
}

pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal, CoreNum cores,
                       Counts counts, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tensor.all_to_all_v";
  ir::Expr blocks = core_num_blocks(Trace::current(name), name, cores);
  pl::Value out = all_to_all_v(src, send_counts, dst, recv_counts, signal, counts);
  Trace::current(name).set_last_op_blocks(std::move(blocks));
  return out;
}

pl::Value allreduce(const pl::Value& data, const pl::Value& signal, ReduceOp op, AllreduceMode mode,
                    pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tensor.allreduce";
  Trace& t = Trace::current(name);
  ir::VarId d = expect_data_window(t, data, name, "the data");
  ir::VarId s = expect_signal_window(t, signal, name);
  return emit_collective(t, ir::OpKind::Allreduce, {var(d), var(s)}, d, allreduce_attr(op, mode));
}

pl::Value allreduce(const pl::Value& data, ReduceOp op, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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

pl::Value broadcast(const pl::Value& data, const pl::Value& signal, const pl::ScalarArg& root,
                    BroadcastMode mode, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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
  return emit_collective(t, ir::OpKind::Broadcast, {var(d), var(s), r}, d, algorithm_of(mode));
}

pl::Value allgather(const pl::Value& src, const pl::Value& dst, const pl::Value& signal,
                    AllgatherMode mode, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tensor.allgather";
  Trace& t = Trace::current(name);
  ir::VarId x = expect_plain_source(t, src, name);
  ir::VarId d = expect_kind(t, dst, name, "the target", kWindowKind);
  ir::VarId s = expect_signal_window(t, signal, name);
  expect_same_dtype(t, x, d, name);
  return emit_collective(t, ir::OpKind::Allgather, {var(x), var(d), var(s)}, d, algorithm_of(mode));
}

pl::Value reduce_scatter(const pl::Value& data, const pl::Value& signal, ReduceOp op,
                         ReduceScatterMode mode, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tensor.reduce_scatter";
  Trace& t = Trace::current(name);
  ir::VarId d = expect_data_window(t, data, name, "the data");
  ir::VarId s = expect_signal_window(t, signal, name);
  return emit_collective(t, ir::OpKind::ReduceScatter, {var(d), var(s)}, d,
                         ir::AllreduceAttr{static_cast<ir::ReduceKind>(op), algorithm_of(mode)});
}

pl::Value all_to_all(const pl::Value& src, const pl::Value& dst, const pl::Value& signal,
                     AllToAllMode mode, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  const char* name = "pld.tensor.all_to_all";
  Trace& t = Trace::current(name);
  ir::VarId x = expect_plain_source(t, src, name);
  ir::VarId d = expect_kind(t, dst, name, "the target", kWindowKind);
  ir::VarId s = expect_signal_window(t, signal, name);
  expect_same_dtype(t, x, d, name);
  return emit_collective(t, ir::OpKind::AllToAll, {var(x), var(d), var(s)}, d, algorithm_of(mode));
}

pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal, Counts counts,
                       pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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
  return emit_collective(t, ir::OpKind::AllToAllV, {var(x), var(sc), var(d), var(rc), var(s)}, d,
                         ir::CountUnit{counts == Counts::Rows});
}

pl::Value barrier(const pl::Value& signal, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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

void barrier(pl::Here where) {
  const anyp::detail::CallSite call_site(where);
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

}  // namespace pld::tensor
