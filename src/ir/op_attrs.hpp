// op_attrs.hpp — the enums an op carries as its attribute (BinaryOp,
// NotifyKind, WaitKind, AtomicKind, ReduceKind, AllreduceKind) and their
// names. Shared by the IR, the compiler and the runtime: a VM instruction's
// `sub` field holds these values as is, so the two never need a mapping
// table. Self-contained on purpose: the runtime includes this header and
// never the rest of the IR.
#pragma once

#include <cstdint>

namespace anyp::ir {

// Binary operators of ScalarBinary and TileBinary.
enum class BinaryOp : std::uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Mod,
  Max,
  Min,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or
};
// Same order as pld::NotifyOp, pld::WaitCmp, pld::AtomicType.
enum class NotifyKind : std::uint8_t { AtomicAdd, Set };
enum class WaitKind : std::uint8_t { Eq, Ne, Gt, Ge, Lt, Le };
enum class AtomicKind : std::uint8_t { None, Add };
// Same order as pld::ReduceOp and pld::AllreduceMode.
enum class ReduceKind : std::uint8_t { Sum, Max, Min, Prod };
enum class AllreduceKind : std::uint8_t { Mesh, Ring };

const char* binary_op_name(BinaryOp op);           // "add", "lt", ...
const char* tile_binary_name(BinaryOp op);         // "pl.add", "pl.maximum", ...
const char* notify_name(NotifyKind k);             // "AtomicAdd"
const char* wait_name(WaitKind k);                 // "Ge"
const char* atomic_name(AtomicKind k);             // "None"
const char* reduce_name(ReduceKind k);             // "Sum"
const char* allreduce_mode_name(AllreduceKind k);  // "Mesh"

}  // namespace anyp::ir
