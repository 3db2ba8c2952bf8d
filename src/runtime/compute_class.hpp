// compute_class.hpp — the classes of tile math as observers and the cost
// model see them (one list: the enum and its names in model files).
#pragma once

#include <cstddef>
#include <cstdint>

namespace anyp::runtime {

#define ANYP_COMPUTE_CLASSES(X)                                           \
  X(Add, "add")         /* add, sub */                                    \
  X(Mul, "mul")         /* mul */                                         \
  X(MinMax, "minmax")   /* maximum, minimum */                            \
  X(Cast, "cast")       /* cast to a dtype */                             \
  X(Fill, "fill")       /* pl.full, pl.arange */                          \
  X(Div, "div")         /* div */                                         \
  X(Unary, "unary")     /* neg, abs, relu, not_ */                        \
  X(Math, "math")       /* exp, log, sqrt, rsqrt, recip */                \
  X(Bitwise, "bitwise") /* and_, or_, xor_, shl, shr */                   \
  X(Compare, "cmp")     /* cmp, sel */                                    \
  X(Reduce, "reduce")   /* row_ and col_ sum/max/min: input elements */   \
  X(Expand, "expand")   /* row_ and col_expand (and their fused forms) */ \
  X(Move, "move")       /* transpose, slice, concat */                    \
  X(Matmul, "matmul")   /* the matmul family: multiply-adds, on the cube */

enum class ComputeClass : std::uint8_t {
#define ANYP_X(name, key) name,
  ANYP_COMPUTE_CLASSES(ANYP_X)
#undef ANYP_X
};

inline constexpr std::size_t kComputeClasses = 0
#define ANYP_X(name, key) +1
    ANYP_COMPUTE_CLASSES(ANYP_X)
#undef ANYP_X
    ;

// "add, mul, ..., matmul": every key, for messages.
const char* compute_class_keys_text();

}  // namespace anyp::runtime
