// check_tile_ops.cpp — extent checks of tile compute ops (check_tile_ops.hpp).
#include "compiler/check_tile_ops.hpp"

#include "ir/op_attrs.hpp"
#include "ir/tile_rules.hpp"

namespace anyp::compiler {
namespace {

constexpr std::int64_t kTileRowAlign = 32;

bool is_tile(const ir::Function& fn, const ir::Operand& o) {
  return o.is_var() && fn.vars[o.var].type.kind == ir::TypeKind::Tile;
}

std::string named(const char* role, const ir::Operand& o, const std::vector<Shape>& shapes) {
  return std::string(role) + " " + shape_text(shapes[o.var]);
}

std::string matmul_error(const ir::Op& op, const std::vector<Shape>& shapes) {
  const ir::MatmulForm form = ir::attr_of<ir::MatmulForm>(op);
  const ir::MatmulInit init = ir::matmul_form_init(form);
  const std::size_t first = init == ir::MatmulInit::Acc ? 1 : 0;
  const Shape& lhs = shapes[op.args[first].var];
  const Shape& rhs = shapes[op.args[first + 1].var];
  const std::size_t r = lhs.size();
  if (ir::matmul_form_batched(form) && lhs[0] != rhs[0]) {
    return "batch sizes differ: lhs " + shape_text(lhs) + " and rhs " + shape_text(rhs) +
           " (dim 0 is the batch)";
  }
  if (lhs[r - 1] != rhs[r - 2]) {
    return "inner dims differ: lhs " + shape_text(lhs) + " and rhs " + shape_text(rhs) +
           "; lhs's columns (" + std::to_string(lhs[r - 1]) + ") must equal rhs's rows (" +
           std::to_string(rhs[r - 2]) + ")";
  }
  if (ir::matmul_form_single_row(form) && lhs[0] != 1) {
    return "lhs " + shape_text(lhs) + " must be a single row [1, K]; use pl.matmul for " +
           std::to_string(lhs[0]) + " rows";
  }
  const Shape& result = shapes[op.result];
  if (init == ir::MatmulInit::Acc && shapes[op.args[0].var] != result) {
    return named("acc", op.args[0], shapes) + " must have the product's shape " +
           shape_text(result);
  }
  if (init == ir::MatmulInit::Bias) {
    const Shape& bias = shapes[op.args[2].var];
    const Shape want = {1, result.back()};
    if (bias != want) {
      return "bias " + shape_text(bias) + " must be one row of the product's width, " +
             shape_text(want);
    }
  }
  return "";
}

std::string expand_error(const ir::Op& op, const std::vector<Shape>& shapes) {
  const bool row = ir::attr_of<ir::AxisExpand>(op).row;
  const Shape& tile = shapes[op.args[0].var];
  const Shape& vec = shapes[op.args[1].var];
  Shape want = tile;
  want[want.size() - (row ? 1 : 2)] = 1;
  if (vec == want) return "";
  const bool broadcast = ir::attr_of<ir::AxisExpand>(op).kind == ir::ExpandKind::Broadcast;
  return std::string(row ? "row_vec " : "col_vec ") + shape_text(vec) + " must be " +
         shape_text(want) + ", one value per " + (row ? "row" : "column") + " of " +
         (broadcast ? "the target " : "the tile ") + shape_text(tile);
}

std::string slice_error(const ir::Op& op, const std::vector<Shape>& shapes,
                        const ir::DimBindings& bindings) {
  const Shape& tile = shapes[op.args[0].var];
  const Shape& part = shapes[op.result];
  for (std::size_t d = 0; d < tile.size(); ++d) {
    if (part[d] > tile[d]) {
      return "the slice " + shape_text(part) + " is larger than the tile " + shape_text(tile) +
             " in dim " + std::to_string(d);
    }
    const ir::Operand& o = op.args[1 + d];
    if (o.is_var()) continue;  // checked at run time
    const ir::EvalResult r = ir::evaluate(o.int_imm, bindings);
    if (r.value && *r.value < 0) {
      return "the slice offset " + std::to_string(*r.value) + " in dim " + std::to_string(d) +
             " is negative";
    }
    if (r.value && *r.value > tile[d] - part[d]) {
      return "the slice is out of bounds in dim " + std::to_string(d) + ": offset " +
             std::to_string(*r.value) + " + extent " + std::to_string(part[d]) +
             " exceeds the tile " + shape_text(tile);
    }
  }
  return "";
}

}  // namespace

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string tile_row_error(const Shape& shape, DType dtype, TileUse use) {
  const std::int64_t width = static_cast<std::int64_t>(dtype_bytes(dtype));
  const std::int64_t per_unit = kTileRowAlign / width;  // elements in 32 bytes
  // A column vector [.., M, 1] (PyPTO's column tiles: a [8, 1] FP32 tile
  // for one element with valid_shape [1, 1]) counts its column instead.
  const bool column = shape.size() >= 2 && shape.back() == 1;
  const std::int64_t extent = column ? shape[shape.size() - 2] : shape.back();
  const std::int64_t bytes = extent * width;
  if (bytes % kTileRowAlign == 0) return "";
  const std::string type = std::string(dtype_name(dtype));
  const std::string what = std::string(column ? "a column vector of " : "a tile row of ") +
                           std::to_string(extent) + " x " + type + " = " + std::to_string(bytes) +
                           " B is not a whole number of 32-byte units (tile " + shape_text(shape) +
                           ")";
  const std::string whole = std::to_string(per_unit) + (column ? " rows" : " elements per row");
  if (use == TileUse::Computed)
    return what + "; use a multiple of " + std::to_string(per_unit) + " " + type +
           (column ? " rows" : " elements per row");
  // Memory moves whole units: a smaller part is a partial tile.
  return what + "; " + (use == TileUse::Loaded ? "load" : "store") + " a tile of a multiple of " +
         whole + " with a valid_shape of the part " +
         (use == TileUse::Loaded ? "you need (only that part is read), or pl::read one element"
                                 : "to write (only that part is written), or pl::write one "
                                   "element");
}

namespace {

// The values start, start +- 1, ... of an arange with a constant start, for
// an integer dtype: the first and the last must fit.
std::string arange_error(const ir::Op& op, const Shape& shape, const ir::DimBindings& bindings) {
  if (op.args[0].is_var()) return "";
  const ir::EvalResult start = ir::evaluate(op.args[0].int_imm, bindings);
  if (!start.value) return "";
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  const std::int64_t s = *start.value;
  std::int64_t last = 0;
  const bool descending = ir::attr_of<ir::ArangeDirection>(op).descending;
  const bool overflow = descending ? __builtin_sub_overflow(s, n - 1, &last)
                                   : __builtin_add_overflow(s, n - 1, &last);
  const std::string values = "the values " + std::to_string(s) +
                             (descending ? " down to " : " up to ") +
                             (overflow ? std::string("beyond INT64") : std::to_string(last)) +
                             " of the tile " + shape_text(shape);
  const std::string type(dtype_name(op.dtype));
  if (dtype_is_float(op.dtype)) {
    // Every integer of magnitude up to 2^(significand bits) is exact.
    const int digits = op.dtype == DType::FP32 ? 24 : op.dtype == DType::FP16 ? 11 : 8;
    const std::int64_t exact = std::int64_t{1} << digits;
    if (!overflow && s >= -exact && s <= exact && last >= -exact && last <= exact) return "";
    return values + " are not all exact in " + type + " (its integers are exact up to " +
           std::to_string(exact) + " in magnitude)";
  }
  const auto [lo, hi] = ir::integer_range(op.dtype);
  if (!overflow && s >= lo && s <= hi && last >= lo && last <= hi) return "";
  return values + " do not fit " + type + " (range [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "])";
}

}  // namespace

std::string tile_op_error(const ir::Function& fn, const ir::Op& op,
                          const std::vector<Shape>& shapes, const ir::DimBindings& bindings) {
  const auto& a = op.args;
  switch (op.kind) {
    case ir::OpKind::TileBinary:
      if (!a[1].is_var() && !a[1].is_float_imm) {  // a constant that may mention dims
        const ir::EvalResult v = ir::evaluate(a[1].int_imm, bindings);
        const std::string error =
            v.value ? ir::binary_constant_error(ir::attr_of<ir::BinaryOp>(op),
                                                fn.vars[a[0].var].type.dtype, *v.value)
                    : "";
        if (!error.empty()) return error.substr(error.find(": ") + 2);
      }
      [[fallthrough]];
    case ir::OpKind::TileCmp:
      if (op.kind == ir::OpKind::TileCmp && !a[1].is_var() && !a[1].is_float_imm) {
        const ir::EvalResult v = ir::evaluate(a[1].int_imm, bindings);
        const std::string error =
            v.value ? ir::constant_operand_error("pl.cmp", fn.vars[a[0].var].type.dtype, *v.value)
                    : "";
        if (!error.empty()) return error.substr(error.find(": ") + 2);
      }
      if (is_tile(fn, a[1]) && shapes[a[0].var] != shapes[a[1].var]) {
        return "shape mismatch: " + shape_text(shapes[a[0].var]) + " and " +
               shape_text(shapes[a[1].var]);
      }
      return "";
    case ir::OpKind::Select:
      if (shapes[a[0].var] != shapes[a[1].var] || shapes[a[1].var] != shapes[a[2].var]) {
        return "shape mismatch: the mask " + shape_text(shapes[a[0].var]) + ", a " +
               shape_text(shapes[a[1].var]) + " and b " + shape_text(shapes[a[2].var]) +
               " must agree";
      }
      return "";
    case ir::OpKind::TileReduce:
      if (a.size() > 1) {
        const Shape &tile = shapes[a[0].var], &tmp = shapes[a[1].var];
        for (std::size_t d = 0; d < tile.size(); ++d) {
          if (tmp[d] < tile[d]) {
            return "tmp " + shape_text(tmp) + " is smaller than the operand " + shape_text(tile) +
                   " in dim " + std::to_string(d);
          }
        }
      }
      return "";
    case ir::OpKind::TileExpand:
      return expand_error(op, shapes);
    case ir::OpKind::Matmul:
      return matmul_error(op, shapes);
    case ir::OpKind::TileSlice:
      return slice_error(op, shapes, bindings);
    case ir::OpKind::Arange:
      return arange_error(op, shapes[op.result], bindings);
    case ir::OpKind::Concat:
      if (shapes[a[0].var][0] != shapes[a[1].var][0]) {
        return "row counts differ: src0 " + shape_text(shapes[a[0].var]) + " and src1 " +
               shape_text(shapes[a[1].var]) + "; concat appends columns to rows of one count";
      }
      return "";
    default:
      return "";
  }
}

}  // namespace anyp::compiler
