// solve_extent.hpp — solving a declared extent for its one unknown dim:
// a host parameter declared [M * 2, N] binds M from the argument's dim 0
// (M = actual / 2), as [NR * 8], [M + 1], [(M - 1) * 4] or [M / 2] do. The
// extent must mention one unbound dim, once, through + - * and exact /
// with operands that are known; the solution must be a positive integer.
#pragma once

#include <cstdint>
#include <string>

#include "ir/expr.hpp"

namespace anyp::ir {

struct ExtentSolution {
  enum class Kind {
    NoUnknown,  // every dim of the extent is bound already
    Solved,     // dim_id = value
    Ambiguous,  // not solvable for one dim (two unknowns, % ...): `why`
    NoInteger,  // no positive integer solution: `why`
  };
  Kind kind = Kind::NoUnknown;
  std::int64_t dim_id = 0;
  std::string dim_name;
  std::int64_t value = 0;
  std::string why;  // "M * N has two unknown dims, M and N"; "7 is not a multiple of 2"
};

// Solves `extent = actual` for the extent's unbound dim.
ExtentSolution solve_extent(const Expr& extent, std::int64_t actual, const DimBindings& bindings);

}  // namespace anyp::ir
