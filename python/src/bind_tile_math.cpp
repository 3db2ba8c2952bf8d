// bind_tile_math.cpp — anyp._core's tile compute: matmul and its forms,
// reductions, expansions, unary, elementwise and comparison ops, casts,
// fills, reshapes, transposes, slices, concat, arange, pl.read/pl.write,
// the block queries and multi-block calls (pl in the Python package,
// anyp/language/_tile_ops.py). Each op is looked up by its pl:: name and
// called through a lambda.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "bindings.hpp"
#include "frontend/trace.hpp"
#include "operands.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

using pl::Tile;

[[noreturn]] void unknown(const std::string& kind, const std::string& op) {
  throw InternalError("internal error: anyp._core has no " + kind + " op '" + op + "'");
}

template <class F>
const F& find(const std::map<std::string, F>& table, const std::string& kind,
              const std::string& op) {
  const auto it = table.find(op);
  if (it == table.end()) unknown(kind, op);
  return it->second;
}

// ---- elementwise: a tile and a tile or a scalar ---------------------------------

using TileTile = std::function<Tile(const Tile&, const Tile&)>;
using TileScalar = std::function<Tile(const Tile&, const pl::ScalarArg&)>;

const std::map<std::string, TileTile>& tile_tile_ops() {
  static const std::map<std::string, TileTile> ops = {
      {"add", [](const Tile& a, const Tile& b) { return pl::add(a, b); }},
      {"sub", [](const Tile& a, const Tile& b) { return pl::sub(a, b); }},
      {"mul", [](const Tile& a, const Tile& b) { return pl::mul(a, b); }},
      {"maximum", [](const Tile& a, const Tile& b) { return pl::maximum(a, b); }},
      {"minimum", [](const Tile& a, const Tile& b) { return pl::minimum(a, b); }},
      {"div", [](const Tile& a, const Tile& b) { return pl::div(a, b); }},
      {"and_", [](const Tile& a, const Tile& b) { return pl::and_(a, b); }},
      {"or_", [](const Tile& a, const Tile& b) { return pl::or_(a, b); }},
      {"xor_", [](const Tile& a, const Tile& b) { return pl::xor_(a, b); }},
      {"shl", [](const Tile& a, const Tile& b) { return pl::shl(a, b); }},
      {"shr", [](const Tile& a, const Tile& b) { return pl::shr(a, b); }},
  };
  return ops;
}

const std::map<std::string, TileScalar>& tile_scalar_ops() {
  static const std::map<std::string, TileScalar> ops = {
      {"add", [](const Tile& a, const pl::ScalarArg& b) { return pl::add(a, b); }},
      {"sub", [](const Tile& a, const pl::ScalarArg& b) { return pl::sub(a, b); }},
      {"mul", [](const Tile& a, const pl::ScalarArg& b) { return pl::mul(a, b); }},
      {"maximum", [](const Tile& a, const pl::ScalarArg& b) { return pl::maximum(a, b); }},
      {"minimum", [](const Tile& a, const pl::ScalarArg& b) { return pl::minimum(a, b); }},
      {"div", [](const Tile& a, const pl::ScalarArg& b) { return pl::div(a, b); }},
      {"and_", [](const Tile& a, const pl::ScalarArg& b) { return pl::and_(a, b); }},
      {"or_", [](const Tile& a, const pl::ScalarArg& b) { return pl::or_(a, b); }},
      {"xor_", [](const Tile& a, const pl::ScalarArg& b) { return pl::xor_(a, b); }},
      {"shl", [](const Tile& a, const pl::ScalarArg& b) { return pl::shl(a, b); }},
      {"shr", [](const Tile& a, const pl::ScalarArg& b) { return pl::shr(a, b); }},
  };
  return ops;
}

Tile elementwise(const std::string& op, const Tile& a, const py::handle& b) {
  if (py::isinstance<Tile>(b))
    return find(tile_tile_ops(), "tile-tile", op)(a, b.cast<const Tile&>());
  return find(tile_scalar_ops(), "tile-scalar", op)(a, scalar_arg(b));
}

// ---- unary ----------------------------------------------------------------------

using Unary = std::function<Tile(const Tile&)>;

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> ops = {
      {"neg", [](const Tile& t) { return pl::neg(t); }},
      {"abs", [](const Tile& t) { return pl::abs(t); }},
      {"relu", [](const Tile& t) { return pl::relu(t); }},
      {"exp", [](const Tile& t) { return pl::exp(t); }},
      {"log", [](const Tile& t) { return pl::log(t); }},
      {"sqrt", [](const Tile& t) { return pl::sqrt(t); }},
      {"rsqrt", [](const Tile& t) { return pl::rsqrt(t); }},
      {"recip", [](const Tile& t) { return pl::recip(t); }},
      {"not_", [](const Tile& t) { return pl::not_(t); }},
      {"row_sum", [](const Tile& t) { return pl::row_sum(t); }},
      {"row_max", [](const Tile& t) { return pl::row_max(t); }},
      {"row_min", [](const Tile& t) { return pl::row_min(t); }},
      {"col_sum", [](const Tile& t) { return pl::col_sum(t); }},
      {"col_max", [](const Tile& t) { return pl::col_max(t); }},
      {"col_min", [](const Tile& t) { return pl::col_min(t); }},
  };
  return ops;
}

// ---- two tiles: reductions with scratch, expansions, products, concat -----------

const std::map<std::string, TileTile>& binary_ops() {
  static const std::map<std::string, TileTile> ops = {
      {"row_sum", [](const Tile& t, const Tile& tmp) { return pl::row_sum(t, tmp); }},
      {"row_max", [](const Tile& t, const Tile& tmp) { return pl::row_max(t, tmp); }},
      {"row_min", [](const Tile& t, const Tile& tmp) { return pl::row_min(t, tmp); }},
      {"col_sum", [](const Tile& t, const Tile& tmp) { return pl::col_sum(t, tmp); }},
      {"row_expand", [](const Tile& t, const Tile& v) { return pl::row_expand(t, v); }},
      {"row_expand_add", [](const Tile& t, const Tile& v) { return pl::row_expand_add(t, v); }},
      {"row_expand_sub", [](const Tile& t, const Tile& v) { return pl::row_expand_sub(t, v); }},
      {"row_expand_mul", [](const Tile& t, const Tile& v) { return pl::row_expand_mul(t, v); }},
      {"row_expand_div", [](const Tile& t, const Tile& v) { return pl::row_expand_div(t, v); }},
      {"col_expand", [](const Tile& t, const Tile& v) { return pl::col_expand(t, v); }},
      {"col_expand_add", [](const Tile& t, const Tile& v) { return pl::col_expand_add(t, v); }},
      {"col_expand_sub", [](const Tile& t, const Tile& v) { return pl::col_expand_sub(t, v); }},
      {"col_expand_mul", [](const Tile& t, const Tile& v) { return pl::col_expand_mul(t, v); }},
      {"col_expand_div", [](const Tile& t, const Tile& v) { return pl::col_expand_div(t, v); }},
      {"matmul", [](const Tile& a, const Tile& b) { return pl::matmul(a, b); }},
      {"batch_matmul", [](const Tile& a, const Tile& b) { return pl::batch_matmul(a, b); }},
      {"gemv", [](const Tile& a, const Tile& b) { return pl::gemv(a, b); }},
      {"concat", [](const Tile& a, const Tile& b) { return pl::concat(a, b); }},
  };
  return ops;
}

// ---- three tiles: accumulating and biased products, select -----------------------

using Ternary = std::function<Tile(const Tile&, const Tile&, const Tile&)>;

const std::map<std::string, Ternary>& ternary_ops() {
  static const std::map<std::string, Ternary> ops = {
      {"matmul_acc",
       [](const Tile& acc, const Tile& a, const Tile& b) { return pl::matmul_acc(acc, a, b); }},
      {"matmul_bias",
       [](const Tile& a, const Tile& b, const Tile& bias) { return pl::matmul_bias(a, b, bias); }},
      {"batch_matmul_acc", [](const Tile& acc, const Tile& a,
                              const Tile& b) { return pl::batch_matmul_acc(acc, a, b); }},
      {"gemv_acc",
       [](const Tile& acc, const Tile& a, const Tile& b) { return pl::gemv_acc(acc, a, b); }},
      {"gemv_bias",
       [](const Tile& a, const Tile& b, const Tile& bias) { return pl::gemv_bias(a, b, bias); }},
      {"sel", [](const Tile& m, const Tile& a, const Tile& b) { return pl::sel(m, a, b); }},
  };
  return ops;
}

// ---- the rest -------------------------------------------------------------------

Tile cmp(const Tile& a, const py::handle& b, int cmp_type) {
  if (py::isinstance<Tile>(b)) return pl::cmp(a, b.cast<const Tile&>(), cmp_type);
  return pl::cmp(a, scalar_arg(b), cmp_type);
}

void call_blocks(const pl::Function& fn, const py::sequence& args, const py::handle& count) {
  std::vector<detail::CallArg> out;
  for (const py::handle a : args) out.push_back(call_arg(a));
  out.push_back(detail::CallArg(pl::blocks(scalar_arg(count))));
  detail::record_call(*fn.def(), out);
}

void bind_shapes(py::module_& m) {
  m.def("tile_cast", [](const Tile& t, DType d) { return pl::cast(t, d); });
  m.def("cast_scalar", [](const py::handle& s, DType d) { return pl::cast(scalar_arg(s), d); });
  m.def("tile_full", [](const py::sequence& s, const py::handle& v, DType d) {
    return pl::full(shape(s), scalar_arg(v), d);
  });
  m.def("tile_zeros", [](const py::sequence& s, DType d) { return pl::zeros(shape(s), d); });
  m.def("tile_reshape",
        [](const Tile& t, const py::sequence& s) { return pl::reshape(t, shape(s)); });
  m.def("tile_transpose", [](const Tile& t, int a1, int a2) { return pl::transpose(t, a1, a2); });
  m.def("tile_slice", [](const Tile& t, const py::sequence& s, const py::sequence& offsets) {
    return pl::slice(t, shape(s), index(offsets));
  });
  m.def("tensor_slice", [](const pl::Value& t, const py::sequence& s, const py::sequence& offsets) {
    return pl::tensor::slice(t, index(offsets), shape(s));
  });
  m.def("tile_arange", [](const py::handle& start, const py::sequence& s, DType d, bool desc) {
    return pl::arange(scalar_arg(start), shape(s), d, desc);
  });
}

}  // namespace

void bind_tile_math(py::module_& m) {
  m.def("tile_elementwise", &elementwise);
  m.def("tile_unary",
        [](const std::string& op, const Tile& t) { return find(unary_ops(), "unary", op)(t); });
  m.def("tile_binary2", [](const std::string& op, const Tile& a, const Tile& b) {
    return find(binary_ops(), "binary", op)(a, b);
  });
  m.def("tile_ternary", [](const std::string& op, const Tile& a, const Tile& b, const Tile& c) {
    return find(ternary_ops(), "ternary", op)(a, b, c);
  });
  m.def("tile_cmp", &cmp);
  bind_shapes(m);
  m.def("cell_read", [](const pl::Value& t, const py::sequence& indices) {
    return pl::read(t, index(indices));
  });
  m.def("cell_write", [](const pl::Value& t, const py::sequence& indices, const py::handle& v) {
    pl::write(t, index(indices), scalar_arg(v));
  });
  m.def("get_block_idx", [] { return pl::get_block_idx(); });
  m.def("get_block_num", [] { return pl::get_block_num(); });
  m.def("call_blocks", &call_blocks);
}

}  // namespace anyp::python
