// tile_recording.hpp — what recording a tile compute op shares: operand
// checks whose messages name the op, the operand and the mismatch, and the
// emission of the op with its result tile. Extents that only dims make
// known are checked once they are bound (compiler/check_tile_ops).
#pragma once

#include <string>
#include <string_view>

#include "anyp/pl.hpp"
#include "frontend/op_recording.hpp"
#include "frontend/trace.hpp"
#include "ir/op_attrs.hpp"

namespace anyp::detail {

// The tile variable behind `h` (a CompileError naming op and role otherwise).
ir::VarId tile_operand(Trace& t, const pl::Handle& h, std::string_view op, std::string_view role);
// `dtype` satisfies `rule`, else "pl.exp: the operand is an INT32 tile; pl.exp
// takes FP32, FP16 or BF16 tiles (pl::cast it first)".
void expect_dtype_rule(Trace& t, std::string_view op, std::string_view role, DType dtype,
                       ir::DTypeRule rule);
// "pl.sel: dtype mismatch: a is FP32 and b is FP16; convert one side with pl::cast".
void expect_same_dtype(Trace& t, std::string_view op, std::string_view role_a, DType a,
                       std::string_view role_b, DType b);
// The tile has exactly `rank` dims (or at least, with at_least).
void expect_rank(Trace& t, std::string_view op, std::string_view role, const ir::Type& type,
                 std::size_t rank, bool at_least = false);
// An integer immediate that is a constant, or nullptr.
const ir::ExprNode* constant_int(const ir::Operand& o);
// Emits `op` with a new result variable of `type` and returns its tile.
pl::Tile emit_tile(Trace& t, ir::Op op, const ir::Type& type);
// The integer dtype of `dtype`'s width: a comparison mask's dtype.
DType mask_dtype(DType dtype);
// "1 dim", "3 dims".
std::string dims_text(std::size_t n);

}  // namespace anyp::detail
