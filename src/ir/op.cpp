// op.cpp — names and level masks of IR ops and their enum attributes.
#include "ir/op.hpp"

#include "ir/function.hpp"

namespace anyp::ir {

const char* level_name(Level l) {
  switch (l) {
    case Level::Host:
      return "host";
    case Level::Orchestration:
      return "orchestration";
    case Level::Incore:
      return "incore";
  }
  return "?";
}

const char* op_kind_name(OpKind k) {
  switch (k) {
#define ANYP_X(kind, name, levels) \
  case OpKind::kind:               \
    return name;
    ANYP_OP_KINDS(ANYP_X)
#undef ANYP_X
  }
  return "?";
}

unsigned op_levels(OpKind k) {
  switch (k) {
#define ANYP_X(kind, name, levels) \
  case OpKind::kind:               \
    return levels;
    ANYP_OP_KINDS(ANYP_X)
#undef ANYP_X
  }
  return 0;
}

const char* binary_op_name(BinaryOp op) {
  static const char* names[] = {"add", "sub", "mul", "div", "mod", "max", "min", "lt",
                                "le",  "gt",  "ge",  "eq",  "ne",  "and", "or"};
  return names[static_cast<int>(op)];
}

const char* tile_binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add:
      return "pl.add";
    case BinaryOp::Sub:
      return "pl.sub";
    case BinaryOp::Mul:
      return "pl.mul";
    case BinaryOp::Max:
      return "pl.maximum";
    case BinaryOp::Min:
      return "pl.minimum";
    default:
      return "pl.tile_op";
  }
}

const char* notify_name(NotifyKind k) { return k == NotifyKind::Set ? "Set" : "AtomicAdd"; }

const char* wait_name(WaitKind k) {
  static const char* names[] = {"Eq", "Ne", "Gt", "Ge", "Lt", "Le"};
  return names[static_cast<int>(k)];
}

const char* atomic_name(AtomicKind k) { return k == AtomicKind::Add ? "Add" : "None"; }

const char* reduce_name(ReduceKind k) {
  static const char* names[] = {"Sum", "Max", "Min", "Prod"};
  return names[static_cast<int>(k)];
}

const char* allreduce_mode_name(AllreduceKind k) {
  return k == AllreduceKind::Ring ? "Ring" : "Mesh";
}

std::string op_display_name(const Op& op) {
  switch (op.kind) {
    case OpKind::TileBinary:
      return tile_binary_name(static_cast<BinaryOp>(op.attr));
    case OpKind::ScalarBinary:
      return std::string("scalar ") + binary_op_name(static_cast<BinaryOp>(op.attr));
    case OpKind::Call:
      return "call @" + (op.callee ? op.callee->name : std::string("?"));
    default:
      return op_kind_name(op.kind);
  }
}

}  // namespace anyp::ir
