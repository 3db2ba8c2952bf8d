// pl.hpp — the single-device half of the user API (PyPTO's `pl`), traced.
//
//   constexpr int64_t SIZE = 64;
//   const pl::Dim NR = pl::dynamic("NR");
//   const auto k = pl::jit::incore("k",
//       {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
//        pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
//        pl::In("r", pl::INT32)},
//       [](pl::Value x, pl::Value y, pl::Scalar r) {
//         pl::Tile t = pl::load(x, {0, 0}, {1, SIZE});
//         y = pl::store(pl::add(t, pl::cast(r, pl::FP32)), {0, 0}, y);
//       });
//
// Nothing here computes: every call records an op into the function being
// traced. Bodies are traced lazily, once, the first time a program that uses
// them is compiled; tracing errors surface as anyp::CompileError there.
//
// Handles (Value, Tile, Scalar) name a variable of the traced function.
// Assigning to a handle (`acc = pl::add(acc, t)`) writes that variable, so
// loop-carried values work as in Python. Values are tensors and windows
// (references: `pl::store` returns the same tensor, re-binding is harmless).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "anyp/dtype.hpp"
#include "anyp/errors.hpp"
#include "anyp/host_worker.hpp"

namespace anyp {
class CompiledProgram;
struct RunConfig;
class ArgRef;
namespace ir {
struct ExprNode;
}
namespace detail {
class FunctionDef;
// A variable of the function currently being traced.
struct VarRef {
  const void* owner = nullptr;  // the trace that made it
  std::int32_t id = -1;
  bool valid() const { return id >= 0; }
};
}  // namespace detail
}  // namespace anyp

namespace pl {

using anyp::DType;
inline constexpr DType FP32 = DType::FP32;
inline constexpr DType FP16 = DType::FP16;
inline constexpr DType BF16 = DType::BF16;
inline constexpr DType INT8 = DType::INT8;
inline constexpr DType INT16 = DType::INT16;
inline constexpr DType INT32 = DType::INT32;
inline constexpr DType INT64 = DType::INT64;

// An integer extent expression over constants and named dynamic dims:
// `NR`, `NR * SIZE`, `SIZE / NR`, `2 * (NR - 1)`. Resolved by compile().
class Dim {
 public:
  Dim(std::int64_t value);  // NOLINT: a constant extent converts implicitly
  Dim(int value) : Dim(static_cast<std::int64_t>(value)) {}  // NOLINT
  explicit Dim(std::shared_ptr<const anyp::ir::ExprNode> node);
  const std::shared_ptr<const anyp::ir::ExprNode>& node() const { return node_; }
  std::string to_string() const;

 private:
  std::shared_ptr<const anyp::ir::ExprNode> node_;
};
Dim operator+(const Dim& a, const Dim& b);
Dim operator-(const Dim& a, const Dim& b);
Dim operator*(const Dim& a, const Dim& b);
Dim operator/(const Dim& a, const Dim& b);  // must divide exactly
Dim operator%(const Dim& a, const Dim& b);

// A named runtime dimension. Dims are named: every pl::dynamic("NR") in a
// program is the same dim and binds to one value.
Dim dynamic(std::string name);

using Shape = std::vector<Dim>;

// The caller's place in its source file. Every function below that records
// an op takes one as its last, defaulted argument, so that compile errors,
// run errors, deadlock and race reports name the user's file:line ("op
// pl.store at kernel.cpp:42"); callers never pass it.
using Here = std::source_location;

// ---- parameter declarations ------------------------------------------------

enum class Intent { In, Out, InOut };

struct TypeSpec {
  enum class Kind { Tensor, DistributedTensor, Scalar };
  Kind kind = Kind::Tensor;
  Shape shape;
  DType dtype = DType::FP32;
};

// A tensor in private (non-window) memory.
TypeSpec Tensor(Shape shape, DType dtype);

struct Param {
  std::string name;
  TypeSpec type;
  Intent intent = Intent::In;
};
Param In(std::string name, TypeSpec type);
Param In(std::string name, DType scalar_dtype);  // a scalar parameter
Param Out(std::string name, TypeSpec type);
Param InOut(std::string name, TypeSpec type);

// ---- traced handles ----------------------------------------------------------

class Scalar;

// Anything usable where a scalar operand is expected: an integer or floating
// constant, a Dim (resolved at compile time), or a traced Scalar.
class ScalarArg {
 public:
  ScalarArg(int v);            // NOLINT
  ScalarArg(std::int64_t v);   // NOLINT
  ScalarArg(double v);         // NOLINT
  ScalarArg(const Dim& d);     // NOLINT
  ScalarArg(const Scalar& s);  // NOLINT

  enum class Kind { Var, Int, Float };
  Kind kind() const { return kind_; }
  anyp::detail::VarRef var() const { return var_; }
  const std::shared_ptr<const anyp::ir::ExprNode>& int_expr() const { return expr_; }
  double float_value() const { return fvalue_; }

 private:
  Kind kind_ = Kind::Int;
  anyp::detail::VarRef var_;
  std::shared_ptr<const anyp::ir::ExprNode> expr_;
  double fvalue_ = 0;
};

// A traced variable. Copying makes a new variable holding the same value;
// assigning writes this variable (emits an assignment op).
class Handle {
 public:
  explicit Handle(anyp::detail::VarRef v) : var_(v) {}
  Handle(const Handle& other);
  Handle(Handle&& other) noexcept : var_(other.var_) { other.var_ = {}; }
  Handle& operator=(const Handle& other);
  Handle& operator=(Handle&& other);
  ~Handle() = default;
  anyp::detail::VarRef var() const { return var_; }

 private:
  anyp::detail::VarRef var_;
};

// A runtime scalar (INT32 index math, or a floating value after pl::cast).
class Scalar : public Handle {
 public:
  using Handle::Handle;
  Scalar(int v);           // NOLINT
  Scalar(std::int64_t v);  // NOLINT
  Scalar(double v);        // NOLINT
  Scalar(const Dim& d);    // NOLINT

  // Compound assignment writes this variable, like `=`: `s += b` is
  // `s = s + b`, converted back to s's dtype (as C does for `int8_t += int`).
  Scalar& operator+=(const ScalarArg& b);
  Scalar& operator-=(const ScalarArg& b);
  Scalar& operator*=(const ScalarArg& b);
  Scalar& operator/=(const ScalarArg& b);
  Scalar& operator%=(const ScalarArg& b);

  // Unary minus (`s * -1`, in the dtype `s * -1` has) and unary plus (a new
  // variable holding s). Hidden friends: found only for a Scalar operand, so
  // `-NR` stays a C++ error instead of recording a constant.
  friend Scalar operator-(const Scalar& a);
  friend Scalar operator+(const Scalar& a);
};

// A tile: an on-core block of elements with a static shape.
class Tile : public Handle {
 public:
  using Handle::Handle;

  // Sugar for pl::add / pl::sub / pl::mul (same checks, same IR). Hidden
  // friends: they take part only when a Tile is an operand, so scalar
  // expressions resolve exactly as before. `-t` is pl::mul(t, -1).
  friend Tile operator+(const Tile& a, const Tile& b);
  friend Tile operator-(const Tile& a, const Tile& b);
  friend Tile operator*(const Tile& a, const Tile& b);
  friend Tile operator+(const Tile& a, const ScalarArg& b);
  friend Tile operator-(const Tile& a, const ScalarArg& b);
  friend Tile operator*(const Tile& a, const ScalarArg& b);
  friend Tile operator+(const ScalarArg& a, const Tile& b);
  friend Tile operator*(const ScalarArg& a, const Tile& b);
  friend Tile operator-(const Tile& a);
};

// A tensor, a window view (DistributedTensor) or a window buffer.
class Value : public Handle {
 public:
  using Handle::Handle;
  // Host only: drop the leading dim, x[r] of [NR, 1, S] is [1, S].
  Value operator[](const ScalarArg& index) const;
};

// Scalar arithmetic; `%` and `/` truncate like C (so (r - 1) % n is -1 at
// r = 0). Comparisons and logic give INT32 0 / 1.
Scalar operator+(const ScalarArg& a, const ScalarArg& b);
Scalar operator-(const ScalarArg& a, const ScalarArg& b);
Scalar operator*(const ScalarArg& a, const ScalarArg& b);
Scalar operator/(const ScalarArg& a, const ScalarArg& b);
Scalar operator%(const ScalarArg& a, const ScalarArg& b);
Scalar operator<(const ScalarArg& a, const ScalarArg& b);
Scalar operator<=(const ScalarArg& a, const ScalarArg& b);
Scalar operator>(const ScalarArg& a, const ScalarArg& b);
Scalar operator>=(const ScalarArg& a, const ScalarArg& b);
Scalar operator==(const ScalarArg& a, const ScalarArg& b);
Scalar operator!=(const ScalarArg& a, const ScalarArg& b);
Scalar operator&&(const ScalarArg& a, const ScalarArg& b);
Scalar operator||(const ScalarArg& a, const ScalarArg& b);
Scalar operator!(const Scalar& a);
Scalar min(const ScalarArg& a, const ScalarArg& b, Here where = Here::current());
// Python's // and % on integers: they round toward negative infinity, so
// floor_mod(r - 1, n) is n - 1 at r = 0 (where r - 1 % n is -1). The
// Python front-end records // and % with these.
Scalar floor_div(const ScalarArg& a, const ScalarArg& b, Here where = Here::current());
Scalar floor_mod(const ScalarArg& a, const ScalarArg& b, Here where = Here::current());
Scalar max(const ScalarArg& a, const ScalarArg& b, Here where = Here::current());

using Index = std::vector<ScalarArg>;

// ---- single-device ops ---------------------------------------------------------

Tile load(const Value& tensor, Index offsets, Shape shape, Here where = Here::current());
Value store(const Tile& tile, Index offsets, const Value& tensor, Here where = Here::current());
// Partial tiles (PyPTO's valid_shape), for ragged tails: load reads only the
// region [offsets, offsets + valid_shape) into the top-left corner of a tile
// of `shape` and fills the rest with 0; store writes only the tile's
// top-left valid_shape corner. The tile follows the tile rule; the region
// need not (a [1, 17] FP32 row loads into a [1, 24] tile). valid_shape has
// one extent per dim, each in [1, the tile's]: constants and dims (checked
// when compiled), or run-time scalars (PyPTO's `pl.min(TILE, n - p0)`,
// checked when the op runs).
Tile load(const Value& tensor, Index offsets, Shape shape, Index valid_shape,
          Here where = Here::current());
Value store(const Tile& tile, Index offsets, const Value& tensor, Index valid_shape,
            Here where = Here::current());
Scalar read(const Value& tensor, Index indices, Here where = Here::current());
void write(const Value& tensor, Index indices, const ScalarArg& value,
           Here where = Here::current());

Tile add(const Tile& a, const Tile& b, Here where = Here::current());
Tile sub(const Tile& a, const Tile& b, Here where = Here::current());
Tile mul(const Tile& a, const Tile& b, Here where = Here::current());
Tile maximum(const Tile& a, const Tile& b, Here where = Here::current());
Tile minimum(const Tile& a, const Tile& b, Here where = Here::current());
Tile add(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile sub(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile mul(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile maximum(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile minimum(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile cast(const Tile& t, DType dtype, Here where = Here::current());
Scalar cast(const ScalarArg& s, DType dtype, Here where = Here::current());
// A tile of `shape` whose every element is `value` converted to `dtype`
// (element codec rules). A constant that an integer dtype cannot hold, or a
// floating value for an integer dtype, is a compile error.
Tile full(Shape shape, const ScalarArg& value, DType dtype, Here where = Here::current());
Tile zeros(Shape shape, DType dtype, Here where = Here::current());  // full(shape, 0, dtype)
// The same elements, in row-major order, seen with `shape` (same element
// count; the dtype is kept).
Tile reshape(const Tile& tile, Shape shape, Here where = Here::current());

// ---- tile compute (docs/api.md lists every op with its dtype rules) ------------
//
// Tiles are typed: operands of one op share a dtype (pl::cast first); a
// constant scalar operand is converted to the tile's dtype (an integer tile
// must hold it: a compile error otherwise), a traced Scalar must have it. Shapes are checked when
// traced and, with NR in them, once dims are bound; an error names the op,
// the operand and the mismatch.

// Elementwise, like add: `div` divides (integers truncate toward zero; a zero
// divisor is a run error). Bitwise ops take integer tiles; shl/shr shift by
// 0 .. width-1 (shr is arithmetic), other counts are an error.
Tile div(const Tile& a, const Tile& b, Here where = Here::current());
Tile div(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile and_(const Tile& a, const Tile& b, Here where = Here::current());
Tile and_(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile or_(const Tile& a, const Tile& b, Here where = Here::current());
Tile or_(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile xor_(const Tile& a, const Tile& b, Here where = Here::current());
Tile xor_(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile shl(const Tile& a, const Tile& b, Here where = Here::current());
Tile shl(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile shr(const Tile& a, const Tile& b, Here where = Here::current());
Tile shr(const Tile& a, const ScalarArg& b, Here where = Here::current());
Tile operator/(const Tile& a, const Tile& b);
Tile operator/(const Tile& a, const ScalarArg& b);

// One operand, same shape and dtype. neg, abs, relu: every dtype (integers
// wrap: abs of the minimum is the minimum); exp, log, sqrt, rsqrt, recip:
// floating tiles; not_: integer tiles (bitwise).
Tile neg(const Tile& t, Here where = Here::current());
Tile abs(const Tile& t, Here where = Here::current());
Tile relu(const Tile& t, Here where = Here::current());
Tile exp(const Tile& t, Here where = Here::current());
Tile log(const Tile& t, Here where = Here::current());
Tile sqrt(const Tile& t, Here where = Here::current());
Tile rsqrt(const Tile& t, Here where = Here::current());
Tile recip(const Tile& t, Here where = Here::current());
Tile not_(const Tile& t, Here where = Here::current());

// Reductions of a [.., M, N] tile: row_* reduce each row to [.., M, 1] (a
// column vector), col_* each column to [.., 1, N]. Same dtype; sums run left
// to right (top to bottom) in float for floating tiles and wrap for
// integers. PyPTO's scratch operand `tmp` is accepted and checked (same
// dtype and rank, every extent at least the tile's), and not needed.
Tile row_sum(const Tile& t, Here where = Here::current());
Tile row_max(const Tile& t, Here where = Here::current());
Tile row_min(const Tile& t, Here where = Here::current());
Tile row_sum(const Tile& t, const Tile& tmp, Here where = Here::current());
Tile row_max(const Tile& t, const Tile& tmp, Here where = Here::current());
Tile row_min(const Tile& t, const Tile& tmp, Here where = Here::current());
Tile col_sum(const Tile& t, Here where = Here::current());
Tile col_max(const Tile& t, Here where = Here::current());
Tile col_min(const Tile& t, Here where = Here::current());
Tile col_sum(const Tile& t, const Tile& tmp, Here where = Here::current());

// Broadcasts: row_expand gives `target`'s shape with row i all row_vec[i, 0]
// (row_vec [.., M, 1]); row_expand_<op>(t, row_vec) is t[i, j] <op>
// row_vec[i, 0]. col_expand / col_expand_<op> take a [.., 1, N] col_vec.
Tile row_expand(const Tile& target, const Tile& row_vec, Here where = Here::current());
Tile row_expand_add(const Tile& t, const Tile& row_vec, Here where = Here::current());
Tile row_expand_sub(const Tile& t, const Tile& row_vec, Here where = Here::current());
Tile row_expand_mul(const Tile& t, const Tile& row_vec, Here where = Here::current());
Tile row_expand_div(const Tile& t, const Tile& row_vec, Here where = Here::current());
Tile col_expand(const Tile& target, const Tile& col_vec, Here where = Here::current());
Tile col_expand_add(const Tile& t, const Tile& col_vec, Here where = Here::current());
Tile col_expand_sub(const Tile& t, const Tile& col_vec, Here where = Here::current());
Tile col_expand_mul(const Tile& t, const Tile& col_vec, Here where = Here::current());
Tile col_expand_div(const Tile& t, const Tile& col_vec, Here where = Here::current());

// Comparison: a mask tile of the operands' shape holding 1 where `a <cmp> b`
// holds and 0 elsewhere; its dtype is the integer of the operands' width
// (INT32 for FP32, INT16 for FP16/BF16, the same dtype for integers). NaN
// compares unequal to everything. `cmp_type` is PyPTO's code.
enum CmpType : int { EQ = 0, NE = 1, LT = 2, LE = 3, GT = 4, GE = 5 };
Tile cmp(const Tile& a, const Tile& b, int cmp_type = EQ, Here where = Here::current());
Tile cmp(const Tile& a, const ScalarArg& b, int cmp_type = EQ, Here where = Here::current());
// Where mask != 0, a; elsewhere b (the mask: an integer tile of their shape).
Tile sel(const Tile& mask, const Tile& a, const Tile& b, Here where = Here::current());

// Matrix products on the cube unit: [M, K] @ [K, N] -> [M, N]. Operands
// share a dtype (FP32, FP16, BF16, INT8, INT16 or INT32); the result is the
// accumulator: FP32 for floating operands (each product exact for FP16/BF16,
// summed in FP32 by fused multiply-adds in K order), INT32 (wrapping) for
// integers. `acc` forms add into an accumulator tile [M, N]; `bias` forms
// start from a [1, N] row (of the operands' or the accumulator's dtype).
// batch_* take [B, M, K] @ [B, K, N]; gemv_* need a single-row lhs [1, K].
Tile matmul(const Tile& lhs, const Tile& rhs, Here where = Here::current());
Tile matmul_acc(const Tile& acc, const Tile& lhs, const Tile& rhs, Here where = Here::current());
Tile matmul_bias(const Tile& lhs, const Tile& rhs, const Tile& bias, Here where = Here::current());
Tile batch_matmul(const Tile& lhs, const Tile& rhs, Here where = Here::current());
Tile batch_matmul_acc(const Tile& acc, const Tile& lhs, const Tile& rhs,
                      Here where = Here::current());
Tile gemv(const Tile& lhs, const Tile& rhs, Here where = Here::current());
Tile gemv_acc(const Tile& acc, const Tile& lhs, const Tile& rhs, Here where = Here::current());
Tile gemv_bias(const Tile& lhs, const Tile& rhs, const Tile& bias, Here where = Here::current());

// Layout. transpose swaps two dims (negative counts from the end);
// transpose(t) swaps the last two. slice takes the sub-tile of `shape` at
// `offsets` (PyPTO's order: shape first; offsets may be runtime scalars,
// checked in bounds). concat puts src1's columns after src0's ([M, N0 + N1]).
Tile transpose(const Tile& t, int axis1, int axis2, Here where = Here::current());
Tile transpose(const Tile& t, Here where = Here::current());
Tile slice(const Tile& t, Shape shape, Index offsets, Here where = Here::current());
Tile concat(const Tile& src0, const Tile& src1, Here where = Here::current());
// A tile of `shape` whose element i (row-major) is start + i, or start - i
// when descending; each value must fit `dtype`, exactly for a floating one
// (a compile error for a constant start, a run error otherwise).
Tile arange(const ScalarArg& start, Shape shape, DType dtype = DType::INT32,
            bool descending = false, Here where = Here::current());

// A loop; the bound may be a runtime scalar (pld::nranks) or a Dim.
void range(const ScalarArg& stop, const std::function<void(Scalar)>& body,
           Here where = Here::current());
void range(const ScalarArg& start, const ScalarArg& stop, const std::function<void(Scalar)>& body,
           Here where = Here::current());
// With a step (an integer, != 0): step > 0 runs while i < stop, step < 0
// while i > stop, like Python's range.
void range(const ScalarArg& start, const ScalarArg& stop, const ScalarArg& step,
           const std::function<void(Scalar)>& body, Here where = Here::current());
// A branch on a runtime condition (non-zero is true).
void if_(const ScalarArg& cond, const std::function<void()>& then_body,
         const std::function<void()>& else_body = {});

// ---- functions -----------------------------------------------------------------

struct Device {
  ScalarArg rank;
};
// Dispatch target of an orchestration call inside the host's rank loop.
inline Device device(const ScalarArg& rank) { return Device{rank}; }

// A multi-block launch (PyPTO's pl.spmd): the last argument of an incore
// kernel's call in an orchestration function, `k(x, y, pl::blocks(4))`,
// runs the kernel on `count` blocks of the rank at once. The blocks share
// the rank's windows and tensors; pl::get_block_idx() / get_block_num()
// tell them apart. The call returns when every block has finished. The
// count is an integer or a Dim expression (known once dims are bound).
struct Blocks {
  ScalarArg count;
};
inline Blocks blocks(const ScalarArg& count) { return Blocks{count}; }

// In an incore kernel: this block's index in its launch, 0 .. n - 1 (0 in
// a one-block call), and the launch's block count n (1).
Scalar get_block_idx(Here where = Here::current());
Scalar get_block_num(Here where = Here::current());
namespace tile {  // PyPTO spells them pl.tile.get_block_idx / get_block_num
inline Scalar get_block_idx(Here where = Here::current()) { return pl::get_block_idx(where); }
inline Scalar get_block_num(Here where = Here::current()) { return pl::get_block_num(where); }
}  // namespace tile

}  // namespace pl

namespace pl {
struct NamedArg;
}

namespace anyp::detail {

// One argument at a call site; `name` is set when it binds by parameter name.
struct CallArg {
  enum class Kind { Var, Immediate, Device, Blocks };
  Kind kind;
  VarRef var;
  pl::ScalarArg imm = 0;
  std::string name;
  CallArg(const pl::NamedArg& named);                                 // NOLINT
  CallArg(const pl::Value& v) : kind(Kind::Var), var(v.var()) {}      // NOLINT
  CallArg(const pl::Scalar& s) : kind(Kind::Var), var(s.var()) {}     // NOLINT
  CallArg(const pl::Tile& t) : kind(Kind::Var), var(t.var()) {}       // NOLINT
  CallArg(const pl::Device& d) : kind(Kind::Device), imm(d.rank) {}   // NOLINT
  CallArg(const pl::Blocks& b) : kind(Kind::Blocks), imm(b.count) {}  // NOLINT
  CallArg(int v) : kind(Kind::Immediate), imm(v) {}                   // NOLINT
  CallArg(std::int64_t v) : kind(Kind::Immediate), imm(v) {}          // NOLINT
  CallArg(double v) : kind(Kind::Immediate), imm(v) {}                // NOLINT
  CallArg(const pl::Dim& d) : kind(Kind::Immediate), imm(d) {}        // NOLINT
};

enum class Level { Host, Orchestration, Incore };

// The traced body: receives the parameter variables.
using BodyFn = std::function<void(const std::vector<VarRef>&)>;

std::shared_ptr<FunctionDef> make_function(std::string name, Level level,
                                           std::vector<pl::Param> params, std::size_t body_arity,
                                           BodyFn body);
void record_call(const FunctionDef& callee, const std::vector<CallArg>& args);
std::string function_ir_text(const FunctionDef& fn);
const std::string& function_name(const FunctionDef& fn);

// Arity of a lambda's call operator.
template <class F>
struct lambda_traits : lambda_traits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct lambda_traits<R (C::*)(A...) const> {
  using args = std::tuple<std::decay_t<A>...>;
  static constexpr std::size_t arity = sizeof...(A);
};
template <class C, class R, class... A>
struct lambda_traits<R (C::*)(A...)> : lambda_traits<R (C::*)(A...) const> {};

template <class F>
BodyFn adapt_body(F body) {
  using traits = lambda_traits<F>;
  return [body](const std::vector<VarRef>& vars) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      body(std::tuple_element_t<I, typename traits::args>(vars[I])...);
    }
    (std::make_index_sequence<traits::arity>{});
  };
}

}  // namespace anyp::detail

namespace pl {

// An argument bound by parameter name: `k(pl::arg("x") = x, pl::arg("y") = y)`.
struct NamedArg {
  std::string name;
  anyp::detail::CallArg value;
};
class ArgName {
 public:
  explicit ArgName(std::string name) : name_(std::move(name)) {}
  template <class T>
  NamedArg operator=(T&& value) const {  // NOLINT: builds a NamedArg, assigns nothing
    return NamedArg{name_, anyp::detail::CallArg(std::forward<T>(value))};
  }

 private:
  std::string name_;
};
inline ArgName arg(std::string name) { return ArgName(std::move(name)); }

// A traced function (any level). Calling it inside another traced function
// records a call; the last argument may be pl::device(r) (host -> orchestration)
// or pl::blocks(n) (orchestration -> incore, a multi-block launch).
// Arguments are positional, or all named (pl::arg("x") = x, in any order):
// a missing, unknown or repeated name is a compile error.
class Function {
 public:
  explicit Function(std::shared_ptr<anyp::detail::FunctionDef> def) : def_(std::move(def)) {}
  template <class... A>
  void operator()(A&&... args) const {
    anyp::detail::record_call(*def_, {anyp::detail::CallArg(std::forward<A>(args))...});
  }
  const std::string& name() const { return anyp::detail::function_name(*def_); }
  // The IR text of this function and every function it calls.
  std::string ir_text() const { return anyp::detail::function_ir_text(*def_); }
  const std::shared_ptr<anyp::detail::FunctionDef>& def() const { return def_; }

 private:
  std::shared_ptr<anyp::detail::FunctionDef> def_;
};

// The host orchestrator: the entry point that compiles into a program.
class HostFunction : public Function {
 public:
  using Function::Function;
  // Binds dynamic dims from `args` and world_size from the device list,
  // specialises, checks, lays out windows and lowers. Cached per (program,
  // bound dims, devices, platform). Throws anyp::CompileError/ConfigError.
  anyp::CompiledProgram compile(const std::vector<anyp::ArgRef>& args,
                                const anyp::RunConfig& config) const;
  // The shape of each parameter, from the dims the given arguments bind
  // (an absent argument: nullopt), at P = world_size: what a caller
  // allocates for the outputs it leaves out (PyPTO's `y = compiled(x)`).
  // A scalar parameter, or one whose shape names a dim nothing bound, gets
  // nullopt.
  std::vector<std::optional<std::vector<std::int64_t>>> parameter_shapes(
      const std::vector<std::optional<anyp::ArgRef>>& args, std::int64_t world_size) const;
};

namespace jit {

template <class F>
Function incore(std::string name, std::vector<Param> params, F body) {
  return Function(anyp::detail::make_function(
      std::move(name), anyp::detail::Level::Incore, std::move(params),
      anyp::detail::lambda_traits<F>::arity, anyp::detail::adapt_body(std::move(body))));
}
template <class F>
Function orchestration(std::string name, std::vector<Param> params, F body) {
  return Function(anyp::detail::make_function(
      std::move(name), anyp::detail::Level::Orchestration, std::move(params),
      anyp::detail::lambda_traits<F>::arity, anyp::detail::adapt_body(std::move(body))));
}
// An orchestration function with `kernel`'s parameter list (names, types,
// intents) whose body calls `kernel` with its own parameters, in order.
Function orchestration_for(std::string name, const Function& kernel);
// The same, launching `kernel` over blocks.count blocks.
Function orchestration_for(std::string name, const Function& kernel, const Blocks& blocks);
// A host worker (PyPTO's HOST SubWorker, anyp/host_worker.hpp): `body`
// runs on the host when the host function calls it (`verify(y)`, no
// pl::device), with copies of its tensor arguments; those its parameters
// declare pl::Out or pl::InOut are written back. Its parameters are
// tensors. Threads engine only (the MPI engine refuses a program that has
// one).
Function host_worker(std::string name, std::vector<Param> params, anyp::HostWorkerBody body);
template <class F>
HostFunction host(std::string name, std::vector<Param> params, F body) {
  return HostFunction(anyp::detail::make_function(
      std::move(name), anyp::detail::Level::Host, std::move(params),
      anyp::detail::lambda_traits<F>::arity, anyp::detail::adapt_body(std::move(body))));
}

}  // namespace jit

// Tensor-level ops (PyPTO's pl.tensor.*): whole tensors and window views of
// this rank, memory to memory, any shape (no tile-row rule).
namespace tensor {
// The view [offsets, offsets + shape) of a tensor or window view `t`, with
// t's kind and dtype (orchestration and incore): no copy. Loads, stores,
// pl::read/write, put/get (the peer's same region), remote load/store,
// notify/wait and the tensor ops take it like any view; a builtin
// collective does not. Offsets may be run-time scalars (checked).
Value slice(const Value& t, Index offsets, Shape shape, Here where = Here::current());
// dst = src element by element (one shape), converted to dst's dtype by
// the element codec (a tensor-level cast).
void copy(const Value& dst, const Value& src, Here where = Here::current());
// Writes `src` into `target` at `offsets` (PyPTO's assemble):
// copy(slice(target, offsets, src's shape), src).
void assemble(const Value& target, const Value& src, Index offsets, Here where = Here::current());
// dst = a <op> b, element by element: one shape and one dtype (b may be a
// scalar, converted as for tiles); the tile math's semantics (integer
// division by zero is a run error).
void add(const Value& dst, const Value& a, const Value& b, Here where = Here::current());
void sub(const Value& dst, const Value& a, const Value& b, Here where = Here::current());
void mul(const Value& dst, const Value& a, const Value& b, Here where = Here::current());
void div(const Value& dst, const Value& a, const Value& b, Here where = Here::current());
void maximum(const Value& dst, const Value& a, const Value& b, Here where = Here::current());
void minimum(const Value& dst, const Value& a, const Value& b, Here where = Here::current());
void add(const Value& dst, const Value& a, const ScalarArg& b, Here where = Here::current());
void sub(const Value& dst, const Value& a, const ScalarArg& b, Here where = Here::current());
void mul(const Value& dst, const Value& a, const ScalarArg& b, Here where = Here::current());
void div(const Value& dst, const Value& a, const ScalarArg& b, Here where = Here::current());
void maximum(const Value& dst, const Value& a, const ScalarArg& b, Here where = Here::current());
void minimum(const Value& dst, const Value& a, const ScalarArg& b, Here where = Here::current());
// The value-returning forms (PyPTO's `c = pl.add(a, b)` on tensors): a new
// tensor (pl::create_tensor of a's shape and dtype) holding a <op> b.
Value add(const Value& a, const Value& b, Here where = Here::current());
Value sub(const Value& a, const Value& b, Here where = Here::current());
Value mul(const Value& a, const Value& b, Here where = Here::current());
Value div(const Value& a, const Value& b, Here where = Here::current());
Value maximum(const Value& a, const Value& b, Here where = Here::current());
Value minimum(const Value& a, const Value& b, Here where = Here::current());
Value add(const Value& a, const ScalarArg& b, Here where = Here::current());
Value sub(const Value& a, const ScalarArg& b, Here where = Here::current());
Value mul(const Value& a, const ScalarArg& b, Here where = Here::current());
Value div(const Value& a, const ScalarArg& b, Here where = Here::current());
Value maximum(const Value& a, const ScalarArg& b, Here where = Here::current());
Value minimum(const Value& a, const ScalarArg& b, Here where = Here::current());
// A new tensor of t's shape holding t converted to `dtype` (pl::tensor::copy
// into a pl::create_tensor).
Value cast(const Value& t, DType dtype, Here where = Here::current());
}  // namespace tensor

// A new tensor of `shape` and `dtype` (PyPTO's pl.create_tensor), in an
// orchestration function or a kernel: this rank's own memory, which no peer
// reaches, zeroed each time the op runs (PyPTO leaves it uninitialised).
// Pass it to kernels, slice it, load and store it, and use it in the
// pl::tensor ops. A created tensor is a value, as a tile is: copying its
// variable copies the elements into a new tensor, and assigning a tensor to
// its variable (`acc = pl::tensor::add(acc, x)`) writes the elements into
// it. Assigning a created tensor to a variable that names a parameter, a
// window view or a slice is refused (it would only rename it): write into
// that tensor with pl::tensor::copy or pl::tensor::assemble. A
// pl::create_tensor inside a pl::range gives the same storage, zeroed
// again, in every iteration.
Value create_tensor(Shape shape, DType dtype, Here where = Here::current());

// A program of orchestration functions only, each an entry point (PyPTO's
// L2 programs with several orchestrations and no host). Entry `e` compiles
// into a program whose host the compiler writes: every rank runs `e` once;
// a tensor parameter [s...] takes a host tensor [P, s...] (rank r its row
// r; at P = 1, [1, s...]), a scalar parameter a scalar, and a window
// parameter no argument: it gets a window buffer of its own (named after
// the parameter, its shape and dtype, zeroed every run).
//
//   const pl::Program chip("chip", {orch_add, orch_mul});
//   auto add = chip.compile("orch_add", {a, b, f}, config);   // a: [P, N]
class Program {
 public:
  Program(std::string name, std::vector<Function> entries);
  const std::string& name() const { return name_; }
  std::vector<std::string> entry_names() const;
  // The host function the compiler wrote for entry `entry`; a CompileError
  // naming the entries when there is none of that name.
  const HostFunction& entry(const std::string& entry) const;
  anyp::CompiledProgram compile(const std::string& entry, const std::vector<anyp::ArgRef>& args,
                                const anyp::RunConfig& config) const;

 private:
  std::string name_;
  std::vector<std::pair<std::string, HostFunction>> entries_;
};

}  // namespace pl
