// op_recording.hpp — shared checks used while recording pl/pld ops: the
// kind of a handle's variable, index lists, and result variables.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anyp/pl.hpp"
#include "frontend/trace.hpp"

namespace anyp::detail {

// The variable of `h`, checked to be of one of `kinds` (else a CompileError
// naming the op, the role and the actual type).
ir::VarId expect_kind(Trace& t, const pl::Handle& h, std::string_view op, std::string_view role,
                      std::initializer_list<ir::TypeKind> kinds);
// Offsets/indices, checked to have as many entries as `rank`.
std::vector<ir::Operand> index_operands(Trace& t, const pl::Index& index, std::size_t rank,
                                        std::string_view op, std::string_view role);
std::vector<ir::Expr> shape_exprs(const pl::Shape& shape);
// Records a partial tile's valid_shape on `out` (a load, store or remote
// load of a `rank`-dim tile): constants and dims as out.valid, checked when
// compiled; with a run-time scalar among them, every extent as one of the
// last out.count operands (ir/op.hpp), checked when the op runs.
void record_valid(Trace& t, std::string_view op, const pl::Index& valid, std::size_t rank,
                  ir::Op& out);
// A new tensor of `type` (pl::create_tensor): records it and marks it
// created (a value, pl_values.cpp).
ir::VarId record_created_tensor(Trace& t, const ir::Type& type);
// dst <- src element by element (pl::tensor::copy), shapes checked later.
void record_tensor_copy(Trace& t, ir::VarId dst, ir::VarId src);
// A signal operand: an INT32 window view (else a failure naming `op`).
ir::VarId expect_signal(Trace& t, const pl::Value& signal, std::string_view op);
// A peer operand: an integer scalar or constant (else a failure naming `op`).
ir::Operand peer_operand(Trace& t, const pl::ScalarArg& peer, std::string_view op);
// An integer operand (a signal's value or expected count: the cells are
// INT32): a float one fails naming `op` and `what` ("the value").
ir::Operand integer_operand(Trace& t, const pl::ScalarArg& value, std::string_view op,
                            std::string_view what);
// "1 dim", "3 dims", "1 entry", "2 entries": a count with its noun.
std::string counted(std::size_t n, std::string_view singular, std::string_view plural);
// "an FP32", "an INT32", "a BF16": a dtype name with its indefinite article.
std::string dtype_with_article(DType dtype);

}  // namespace anyp::detail
