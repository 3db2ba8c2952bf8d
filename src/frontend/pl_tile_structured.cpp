// pl_tile_structured.cpp — recording of the tile ops whose result shape
// differs from their operands': row/column reductions and broadcasts, the
// matmul family, transpose, slice and concat. Kinds, dtypes and ranks are
// checked here; extents once dims are bound (compiler/check_tile_ops.cpp).
#include "anyp/pl.hpp"
#include "frontend/call_site.hpp"
#include "frontend/tile_recording.hpp"

namespace pl {

using anyp::detail::emit_tile;
using anyp::detail::expect_rank;
using anyp::detail::expect_same_dtype;
using anyp::detail::tile_operand;
using anyp::detail::Trace;
namespace ir = anyp::ir;

namespace {

Tile reduce(ir::ReduceKind kind, bool row, const Tile& tile, const Tile* tmp) {
  const std::string name = ir::tile_reduce_name(kind, row);
  Trace& t = Trace::current(name);
  const ir::VarId v = tile_operand(t, tile, name, "the operand");
  const ir::Type vt = t.type_of(v);
  expect_rank(t, name, "the operand", vt, 2, true);
  ir::Op op;
  op.kind = ir::OpKind::TileReduce;
  op.attr = ir::AxisReduce{kind, row};
  op.args = {ir::Operand::of_var(v)};
  if (tmp) {
    const ir::VarId tv = tile_operand(t, *tmp, name, "tmp");
    const ir::Type& tt = t.type_of(tv);
    expect_same_dtype(t, name, "the operand", vt.dtype, "tmp", tt.dtype);
    expect_rank(t, name, "tmp", tt, vt.shape.size());
    op.args.push_back(ir::Operand::of_var(tv));
  }
  ir::Type rt = vt;
  rt.shape[rt.shape.size() - (row ? 1 : 2)] = ir::make_const(1);
  return emit_tile(t, std::move(op), rt);
}

Tile expand(ir::ExpandKind kind, bool row, const Tile& tile, const Tile& vec) {
  const std::string name = ir::expand_name(kind, row);
  Trace& t = Trace::current(name);
  const char* target_role = kind == ir::ExpandKind::Broadcast ? "the target" : "t";
  const char* vec_role = row ? "row_vec" : "col_vec";
  const ir::VarId tv = tile_operand(t, tile, name, target_role);
  const ir::VarId vv = tile_operand(t, vec, name, vec_role);
  const ir::Type tt = t.type_of(tv), vt = t.type_of(vv);
  expect_rank(t, name, target_role, tt, 2, true);
  expect_rank(t, name, vec_role, vt, tt.shape.size());
  expect_same_dtype(t, name, target_role, tt.dtype, vec_role, vt.dtype);
  ir::Op op;
  op.kind = ir::OpKind::TileExpand;
  op.attr = ir::AxisExpand{kind, row};
  op.args = {ir::Operand::of_var(tv), ir::Operand::of_var(vv)};
  return emit_tile(t, std::move(op), tt);
}

// The accumulator dtype of matmul operands of `dtype` (refusing INT64).
DType accumulator_dtype(Trace& t, const std::string& name, DType dtype) {
  if (dtype == DType::INT64) {
    t.fail(name +
           ": the operands are INT64 tiles; the cube unit multiplies FP32, FP16, BF16, INT8, "
           "INT16 or INT32 tiles (the integer accumulator is INT32)");
  }
  return anyp::dtype_is_float(dtype) ? DType::FP32 : DType::INT32;
}

Tile matmul_form(ir::MatmulForm form, const Tile* acc, const Tile& lhs, const Tile& rhs,
                 const Tile* bias) {
  const std::string name = ir::matmul_form_name(form);
  Trace& t = Trace::current(name);
  const std::size_t rank = ir::matmul_form_batched(form) ? 3 : 2;
  const ir::VarId lv = tile_operand(t, lhs, name, "lhs");
  const ir::VarId rv = tile_operand(t, rhs, name, "rhs");
  const ir::Type lt = t.type_of(lv), rt = t.type_of(rv);
  expect_rank(t, name, "lhs", lt, rank);
  expect_rank(t, name, "rhs", rt, rank);
  expect_same_dtype(t, name, "lhs", lt.dtype, "rhs", rt.dtype);
  const DType acc_dtype = accumulator_dtype(t, name, lt.dtype);
  ir::Type result = ir::shaped_type(ir::TypeKind::Tile, lt.shape, acc_dtype);
  result.shape[rank - 1] = rt.shape[rank - 1];
  ir::Op op;
  op.kind = ir::OpKind::Matmul;
  op.attr = form;
  if (acc) {
    const ir::VarId av = tile_operand(t, *acc, name, "acc");
    const ir::Type& at = t.type_of(av);
    expect_rank(t, name, "acc", at, rank);
    if (at.dtype != acc_dtype) {
      t.fail(name + ": acc is " + anyp::detail::dtype_with_article(at.dtype) +
             " tile, but the accumulator of " + std::string(anyp::dtype_name(lt.dtype)) +
             " operands is " + std::string(anyp::dtype_name(acc_dtype)));
    }
    op.args.push_back(ir::Operand::of_var(av));
  }
  op.args.push_back(ir::Operand::of_var(lv));
  op.args.push_back(ir::Operand::of_var(rv));
  if (bias) {
    const ir::VarId bv = tile_operand(t, *bias, name, "bias");
    const ir::Type& bt = t.type_of(bv);
    expect_rank(t, name, "bias", bt, 2);
    if (bt.dtype != lt.dtype && bt.dtype != acc_dtype) {
      const std::string allowed =
          lt.dtype == acc_dtype
              ? std::string(anyp::dtype_name(lt.dtype)) + " (the operands' and the accumulator's)"
              : std::string(anyp::dtype_name(lt.dtype)) + " (the operands') or " +
                    std::string(anyp::dtype_name(acc_dtype)) + " (the accumulator's)";
      t.fail(name + ": bias is " + anyp::detail::dtype_with_article(bt.dtype) +
             " tile; it must be " + allowed);
    }
    op.args.push_back(ir::Operand::of_var(bv));
  }
  return emit_tile(t, std::move(op), result);
}

}  // namespace

Tile row_sum(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Sum, true, t, nullptr);
}
Tile row_max(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Max, true, t, nullptr);
}
Tile row_min(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Min, true, t, nullptr);
}
Tile row_sum(const Tile& t, const Tile& tmp, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Sum, true, t, &tmp);
}
Tile row_max(const Tile& t, const Tile& tmp, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Max, true, t, &tmp);
}
Tile row_min(const Tile& t, const Tile& tmp, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Min, true, t, &tmp);
}
Tile col_sum(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Sum, false, t, nullptr);
}
Tile col_max(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Max, false, t, nullptr);
}
Tile col_min(const Tile& t, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Min, false, t, nullptr);
}
Tile col_sum(const Tile& t, const Tile& tmp, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return reduce(ir::ReduceKind::Sum, false, t, &tmp);
}

Tile row_expand(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Broadcast, true, t, v);
}
Tile row_expand_add(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Add, true, t, v);
}
Tile row_expand_sub(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Sub, true, t, v);
}
Tile row_expand_mul(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Mul, true, t, v);
}
Tile row_expand_div(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Div, true, t, v);
}
Tile col_expand(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Broadcast, false, t, v);
}
Tile col_expand_add(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Add, false, t, v);
}
Tile col_expand_sub(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Sub, false, t, v);
}
Tile col_expand_mul(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Mul, false, t, v);
}
Tile col_expand_div(const Tile& t, const Tile& v, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return expand(ir::ExpandKind::Div, false, t, v);
}

Tile matmul(const Tile& lhs, const Tile& rhs, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::Matmul, nullptr, lhs, rhs, nullptr);
}
Tile matmul_acc(const Tile& acc, const Tile& lhs, const Tile& rhs, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::MatmulAcc, &acc, lhs, rhs, nullptr);
}
Tile matmul_bias(const Tile& lhs, const Tile& rhs, const Tile& bias, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::MatmulBias, nullptr, lhs, rhs, &bias);
}
Tile batch_matmul(const Tile& lhs, const Tile& rhs, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::BatchMatmul, nullptr, lhs, rhs, nullptr);
}
Tile batch_matmul_acc(const Tile& acc, const Tile& lhs, const Tile& rhs, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::BatchMatmulAcc, &acc, lhs, rhs, nullptr);
}
Tile gemv(const Tile& lhs, const Tile& rhs, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::Gemv, nullptr, lhs, rhs, nullptr);
}
Tile gemv_acc(const Tile& acc, const Tile& lhs, const Tile& rhs, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::GemvAcc, &acc, lhs, rhs, nullptr);
}
Tile gemv_bias(const Tile& lhs, const Tile& rhs, const Tile& bias, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return matmul_form(ir::MatmulForm::GemvBias, nullptr, lhs, rhs, &bias);
}

Tile transpose(const Tile& tile, int axis1, int axis2, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.transpose");
  const ir::VarId v = tile_operand(t, tile, "pl.transpose", "the operand");
  const ir::Type vt = t.type_of(v);
  expect_rank(t, "pl.transpose", "the operand", vt, 2, true);
  const int rank = static_cast<int>(vt.shape.size());
  int axes[2] = {axis1, axis2};
  for (int& a : axes) {
    if (a < -rank || a >= rank) {
      t.fail("pl.transpose: axis " + std::to_string(a) + " is outside the tile's " +
             std::to_string(rank) + " dims (" + ir::to_string(vt) + "; axes run from " +
             std::to_string(-rank) + " to " + std::to_string(rank - 1) + ")");
    }
    if (a < 0) a += rank;
  }
  if (axes[0] == axes[1]) {
    t.fail("pl.transpose: both axes are dim " + std::to_string(axes[0]) +
           "; a transpose swaps two different dims");
  }
  ir::Op op;
  op.kind = ir::OpKind::Transpose;
  const ir::TransposeAxes swapped{std::min(axes[0], axes[1]), std::max(axes[0], axes[1])};
  op.attr = swapped;
  op.args = {ir::Operand::of_var(v)};
  ir::Type rt = vt;
  std::swap(rt.shape[static_cast<std::size_t>(swapped.first)],
            rt.shape[static_cast<std::size_t>(swapped.second)]);
  return emit_tile(t, std::move(op), rt);
}

Tile transpose(const Tile& tile, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  return transpose(tile, -2, -1);
}

Tile slice(const Tile& tile, Shape shape, Index offsets, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.slice");
  const ir::VarId v = tile_operand(t, tile, "pl.slice", "the operand");
  const ir::Type vt = t.type_of(v);
  if (shape.size() != vt.shape.size()) {
    t.fail("pl.slice: the shape has " + anyp::detail::dims_text(shape.size()) + ", but the tile " +
           ir::to_string(vt.shape) + " has " + anyp::detail::dims_text(vt.shape.size()));
  }
  ir::Op op;
  op.kind = ir::OpKind::TileSlice;
  op.args = {ir::Operand::of_var(v)};
  if (offsets.size() != vt.shape.size()) {
    t.fail("pl.slice: offsets has " + std::to_string(offsets.size()) +
           (offsets.size() == 1 ? " entry" : " entries") + ", but the tile " +
           ir::to_string(vt.shape) + " has " + anyp::detail::dims_text(vt.shape.size()));
  }
  for (auto& o : anyp::detail::index_operands(t, offsets, vt.shape.size(), "pl.slice", "offsets"))
    op.args.push_back(o);
  op.shape = anyp::detail::shape_exprs(shape);
  return emit_tile(t, std::move(op), ir::shaped_type(ir::TypeKind::Tile, op.shape, vt.dtype));
}

Tile concat(const Tile& a, const Tile& b, pl::Here where) {
  const anyp::detail::CallSite call_site(where);
  Trace& t = Trace::current("pl.concat");
  const ir::VarId av = tile_operand(t, a, "pl.concat", "src0");
  const ir::VarId bv = tile_operand(t, b, "pl.concat", "src1");
  const ir::Type at = t.type_of(av), bt = t.type_of(bv);
  expect_rank(t, "pl.concat", "src0", at, 2);
  expect_rank(t, "pl.concat", "src1", bt, 2);
  expect_same_dtype(t, "pl.concat", "src0", at.dtype, "src1", bt.dtype);
  ir::Op op;
  op.kind = ir::OpKind::Concat;
  op.args = {ir::Operand::of_var(av), ir::Operand::of_var(bv)};
  ir::Type rt = at;
  rt.shape[1] = ir::make_binary(ir::ExprKind::Add, at.shape[1], bt.shape[1]);
  return emit_tile(t, std::move(op), rt);
}

}  // namespace pl
