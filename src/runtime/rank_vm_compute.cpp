// rank_vm_compute.cpp — the rank VM's tile compute instructions: they read
// and write tile registers only (no memory, so nothing passes the door but
// the compute event the cost card and the timeline price). The math lives
// in tile_math, tile_unary, tile_structured and tile_matmul; here are the
// register shapes, the run-time checks and the pricing.
#include <algorithm>
#include <string>

#include "common/element_codec.hpp"
#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/rank_vm.hpp"
#include "runtime/tile_math.hpp"
#include "runtime/tile_matmul.hpp"
#include "runtime/tile_structured.hpp"
#include "runtime/tile_unary.hpp"

namespace anyp::runtime {
namespace {

ComputeClass compute_class_of(ir::UnaryOp op) {
  switch (op) {
    case ir::UnaryOp::Exp:
    case ir::UnaryOp::Log:
    case ir::UnaryOp::Sqrt:
    case ir::UnaryOp::Rsqrt:
    case ir::UnaryOp::Recip:
      return ComputeClass::Math;
    default:
      return ComputeClass::Unary;
  }
}

std::string tile_text(const TileReg& t) {
  return "the " + std::string(dtype_name(t.dtype)) + " tile " + list_text(t.shape);
}

}  // namespace

std::byte* RankVm::result_storage(std::size_t bytes) {
  scratch_.resize(bytes);
  return scratch_.data();
}

void RankVm::price_compute(const Instr& in, ComputeClass cls, DType dtype, std::int64_t elements) {
  compute_elements_ += elements;
  ctx_->fabric->compute(agent_, site(in), cls, dtype, elements);
}

void RankVm::commit_result(const Instr& in, DType dtype, std::vector<std::int64_t> shape) {
  TileReg& out = t_[in.dst];
  out.dtype = dtype;
  out.shape = std::move(shape);
  out.data.swap(scratch_);
}

void RankVm::scalar_element(const Instr& in, DType dtype, std::byte* element, std::int32_t reg,
                            const char* operand_of) const {
  const ScalarValue& x = s_[reg < 0 ? in.b : reg];
  if (dtype_is_float(dtype)) {
    if (x.is_float) {
      encode_element(element, dtype, x.f);
    } else {
      encode_integer(element, dtype, x.i);
    }
    return;
  }
  const std::string what = std::string(operand_of);
  const std::string tile = "the " + std::string(dtype_name(dtype)) + " " + what;
  if (x.is_float) fail(in, "a floating scalar operand with " + tile + "; " + what + "s are typed");
  encode_integer(element, dtype, x.i);
  if (decode_integer(element, dtype) != x.i) {
    fail(in, "scalar operand " + std::to_string(x.i) + " does not fit " + tile + " (" + what +
                 "s are typed: cast the " + what + " to a wider dtype first)");
  }
}

void RankVm::tile_binary(const Instr& in) {
  const TileReg& a = t_[in.a];
  const auto op = static_cast<ir::BinaryOp>(in.sub);
  const bool scalar = in.count == 1;
  const std::byte* b = nullptr;
  std::byte element[8];
  if (scalar) {  // the scalar, converted to the tile's dtype
    scalar_element(in, a.dtype, element);
    b = element;
  } else {
    const TileReg& bt = t_[in.b];
    if (bt.data.size() != a.data.size() || bt.dtype != a.dtype) {
      fail(in, "operand shapes differ: " + list_text(a.shape) + " and " + list_text(bt.shape));
    }
    b = bt.data.data();
  }
  const std::size_t n = static_cast<std::size_t>(a.elements());
  if (const auto bad = invalid_operand(op, a.dtype, b, scalar, n)) {
    const std::string which = scalar ? "the scalar operand"
                                     : "element " + std::to_string(*bad) + " of the second operand";
    if (op == ir::BinaryOp::Div) fail(in, "division by zero: " + which + " is 0");
    const std::int64_t y = decode_integer(b + *bad * dtype_bytes(a.dtype), a.dtype);
    fail(in, "shift count " + std::to_string(y) + " (" + which + ") is outside [0, " +
                 std::to_string(dtype_bytes(a.dtype) * 8) + ") for " + tile_text(a));
  }
  std::byte* out = result_storage(a.data.size());
  tile_elementwise(op, a.dtype, a.data.data(), b, scalar, out, n);
  price_compute(in, compute_class_of(op), a.dtype, a.elements());
  commit_result(in, a.dtype, a.shape);
}

void RankVm::tile_cast(const Instr& in) {
  const TileReg& a = t_[in.a];
  std::byte* out = result_storage(static_cast<std::size_t>(a.elements()) * dtype_bytes(in.dtype));
  convert_elements(a.data.data(), a.dtype, out, in.dtype, static_cast<std::size_t>(a.elements()));
  price_compute(in, ComputeClass::Cast, in.dtype, a.elements());
  commit_result(in, in.dtype, a.shape);
}

void RankVm::full_tile(const Instr& in) {
  const ScalarValue& x = s_[in.a];
  std::byte element[8];
  if (dtype_is_float(in.dtype)) {
    if (x.is_float) {
      encode_element(element, in.dtype, x.f);
    } else {
      encode_integer(element, in.dtype, x.i);
    }
  } else {
    // A floating scalar for an integer tile is refused when traced.
    ANYP_CHECK(!x.is_float, "pl.full of a floating scalar into an integer tile");
    encode_integer(element, in.dtype, x.i);
    if (decode_integer(element, in.dtype) != x.i) {
      fail(in, "the value " + std::to_string(x.i) + " does not fit the " +
                   std::string(dtype_name(in.dtype)) + " tile (tiles are typed)");
    }
  }
  const std::size_t width = dtype_bytes(in.dtype);
  std::byte* out = shape_tile(t_[in.dst], in.dtype, in.shape, element_count(in.shape));
  const std::size_t n = static_cast<std::size_t>(element_count(in.shape));
  for (std::size_t k = 0; k < n; ++k) std::copy_n(element, width, out + k * width);
  price_compute(in, ComputeClass::Fill, in.dtype, static_cast<std::int64_t>(n));
}

void RankVm::reshape_tile(const Instr& in) {
  const TileReg& a = t_[in.a];
  ANYP_CHECK(a.elements() == element_count(in.shape), "reshape.tile changes the element count");
  TileReg& out = t_[in.dst];
  if (&out != &a) {
    out.dtype = a.dtype;
    out.data = a.data;
  }
  out.shape.assign(in.shape.begin(), in.shape.end());
}

void RankVm::tile_unary(const Instr& in) {
  const TileReg& a = t_[in.a];
  const auto op = static_cast<ir::UnaryOp>(in.sub);
  std::byte* out = result_storage(a.data.size());
  runtime::tile_unary(op, a.dtype, a.data.data(), out, static_cast<std::size_t>(a.elements()));
  price_compute(in, compute_class_of(op), a.dtype, a.elements());
  commit_result(in, a.dtype, a.shape);
}

void RankVm::tile_cmp(const Instr& in) {
  const TileReg& a = t_[in.a];
  const bool scalar = in.count == 1;
  std::byte element[8];
  const std::byte* b = element;
  if (scalar) {
    scalar_element(in, a.dtype, element);
  } else {
    ANYP_CHECK(t_[in.b].data.size() == a.data.size(), "cmp.tile operands of different sizes");
    b = t_[in.b].data.data();
  }
  const std::size_t n = static_cast<std::size_t>(a.elements());
  std::byte* out = result_storage(n * dtype_bytes(in.dtype));
  tile_compare(static_cast<ir::CmpKind>(in.sub), a.dtype, a.data.data(), b, scalar, in.dtype, out,
               n);
  price_compute(in, ComputeClass::Compare, a.dtype, a.elements());
  commit_result(in, in.dtype, a.shape);
}

void RankVm::tile_select(const Instr& in) {
  const TileReg &mask = t_[in.a], &a = t_[in.b], &b = t_[in.c];
  ANYP_CHECK(mask.elements() == a.elements() && a.data.size() == b.data.size() &&
                 a.dtype == b.dtype && !dtype_is_float(mask.dtype),
             "sel.tile operands of different sizes");
  std::byte* out = result_storage(a.data.size());
  runtime::tile_select(mask.dtype, mask.data.data(), dtype_bytes(a.dtype), a.data.data(),
                       b.data.data(), out, static_cast<std::size_t>(a.elements()));
  price_compute(in, ComputeClass::Compare, a.dtype, a.elements());
  commit_result(in, a.dtype, a.shape);
}

void RankVm::tile_reduce(const Instr& in) {
  const TileReg& a = t_[in.a];
  const bool along_rows = in.count == 1;
  ANYP_CHECK(a.shape.size() >= 2, "reduce.tile of a tile of fewer than 2 dims");
  const Matrices m = Matrices::of(a.shape);
  std::vector<std::int64_t> shape = a.shape;
  shape[shape.size() - (along_rows ? 1 : 2)] = 1;
  std::byte* out =
      result_storage(static_cast<std::size_t>(element_count(shape)) * dtype_bytes(a.dtype));
  runtime::tile_reduce(static_cast<ir::ReduceKind>(in.sub), along_rows, a.dtype, m, a.data.data(),
                       out);
  price_compute(in, ComputeClass::Reduce, a.dtype, a.elements());
  commit_result(in, a.dtype, std::move(shape));
}

void RankVm::tile_expand(const Instr& in) {
  const TileReg &t = t_[in.a], &vec = t_[in.b];
  const auto kind = static_cast<ir::ExpandKind>(in.sub);
  const bool row = in.count == 1;
  const Matrices mt = Matrices::of(t.shape);
  ANYP_CHECK(vec.dtype == t.dtype && t.shape.size() >= 2 &&
                 vec.elements() == mt.batch * (row ? mt.rows : mt.cols),
             "expand.tile with a vector that does not fit the tile");
  if (kind == ir::ExpandKind::Div) {
    const auto bad = invalid_operand(ir::BinaryOp::Div, vec.dtype, vec.data.data(), false,
                                     static_cast<std::size_t>(vec.elements()));
    if (bad) {
      fail(in, "division by zero: element " + std::to_string(*bad) + " of " +
                   (row ? "row_vec " : "col_vec ") + list_text(vec.shape) + " is 0");
    }
  }
  std::byte* out = result_storage(t.data.size());
  runtime::tile_expand(kind, row, t.dtype, Matrices::of(t.shape), t.data.data(), vec.data.data(),
                       out);
  price_compute(in, ComputeClass::Expand, t.dtype, t.elements());
  commit_result(in, t.dtype, t.shape);
}

void RankVm::tile_matmul(const Instr& in) {
  const TileReg &a = t_[in.a], &b = t_[in.b];
  const auto init = static_cast<ir::MatmulInit>(in.sub);
  const Matrices ma = Matrices::of(a.shape), mb = Matrices::of(b.shape);
  ANYP_CHECK(a.dtype == b.dtype && a.shape.size() == b.shape.size() && a.shape.size() >= 2 &&
                 ma.batch == mb.batch && ma.cols == mb.rows,
             "matmul operands do not chain");
  const MatmulDims d{ma.batch, ma.rows, ma.cols, mb.cols};
  std::vector<std::int64_t> shape = a.shape;
  shape.back() = d.n;
  const std::size_t bytes = static_cast<std::size_t>(element_count(shape)) * dtype_bytes(in.dtype);
  const TileReg* c = init == ir::MatmulInit::Zero ? nullptr : &t_[in.c];
  ANYP_CHECK(!c || (init == ir::MatmulInit::Acc
                        ? c->dtype == in.dtype && c->elements() == d.batch * d.m * d.n
                        : c->elements() == d.n),
             "matmul with an accumulator or bias that does not fit the product");
  std::byte* out = result_storage(bytes);
  runtime::tile_matmul(a.dtype, in.dtype, d, a.data.data(), b.data.data(), init,
                       c ? c->data.data() : nullptr, c ? c->dtype : in.dtype, out);
  price_compute(in, ComputeClass::Matmul, a.dtype, d.batch * d.m * d.n * d.k);
  commit_result(in, in.dtype, std::move(shape));
}

void RankVm::tile_transpose(const Instr& in) {
  const TileReg& a = t_[in.a];
  const int axis1 = static_cast<int>(in.imm), axis2 = in.count;
  ANYP_CHECK(axis1 >= 0 && axis1 < axis2 && static_cast<std::size_t>(axis2) < a.shape.size(),
             "transpose.tile axes outside the tile");
  std::vector<std::int64_t> shape = a.shape;
  std::swap(shape[static_cast<std::size_t>(axis1)], shape[static_cast<std::size_t>(axis2)]);
  std::byte* out = result_storage(a.data.size());
  runtime::tile_transpose(a.shape, dtype_bytes(a.dtype), axis1, axis2, a.data.data(), out);
  price_compute(in, ComputeClass::Move, a.dtype, a.elements());
  commit_result(in, a.dtype, std::move(shape));
}

void RankVm::tile_slice(const Instr& in) {
  const TileReg& a = t_[in.a];
  const std::size_t r = a.shape.size();
  ANYP_CHECK(in.idx.size() == r && in.shape.size() == r, "slice.tile of another rank");
  std::vector<std::int64_t> offs(r);
  for (std::size_t d = 0; d < r; ++d) offs[d] = s_[in.idx[d]].as_int();
  for (std::size_t d = 0; d < r; ++d) {
    if (offs[d] < 0 || offs[d] > a.shape[d] - in.shape[d]) {
      fail(in, "slice out of bounds in dim " + std::to_string(d) + ": offsets " + list_text(offs) +
                   " + shape " + list_text(in.shape) + " exceeds " + tile_text(a));
    }
  }
  const std::int64_t n = element_count(in.shape);
  std::byte* out = result_storage(static_cast<std::size_t>(n) * dtype_bytes(a.dtype));
  runtime::tile_slice(a.shape, dtype_bytes(a.dtype), offs, in.shape, a.data.data(), out);
  price_compute(in, ComputeClass::Move, a.dtype, n);
  commit_result(in, a.dtype, in.shape);
}

void RankVm::tile_concat(const Instr& in) {
  const TileReg &a = t_[in.a], &b = t_[in.b];
  ANYP_CHECK(
      a.shape.size() == 2 && b.shape.size() == 2 && a.shape[0] == b.shape[0] && a.dtype == b.dtype,
      "concat.tile of tiles with different row counts");
  std::vector<std::int64_t> shape = {a.shape[0], a.shape[1] + b.shape[1]};
  std::byte* out = result_storage(a.data.size() + b.data.size());
  runtime::tile_concat(a.shape[0], a.shape[1], b.shape[1], dtype_bytes(a.dtype), a.data.data(),
                       b.data.data(), out);
  price_compute(in, ComputeClass::Move, a.dtype, a.elements() + b.elements());
  commit_result(in, a.dtype, std::move(shape));
}

void RankVm::tile_arange(const Instr& in) {
  const ScalarValue& start = s_[in.a];
  ANYP_CHECK(!start.is_float, "pl.arange of a floating start");
  const std::int64_t n = element_count(in.shape);
  std::byte* out = result_storage(static_cast<std::size_t>(n) * dtype_bytes(in.dtype));
  if (const auto bad = runtime::tile_arange(in.dtype, start.i, in.imm == 1, out, n)) {
    fail(in, "element " + std::to_string(*bad) + " (start " + std::to_string(start.i) +
                 (in.imm == 1 ? " - " : " + ") + std::to_string(*bad) + ") does not fit the " +
                 std::string(dtype_name(in.dtype)) + " tile " + list_text(in.shape) +
                 (dtype_is_float(in.dtype) ? " exactly" : ""));
  }
  price_compute(in, ComputeClass::Fill, in.dtype, n);
  commit_result(in, in.dtype, in.shape);
}

}  // namespace anyp::runtime
