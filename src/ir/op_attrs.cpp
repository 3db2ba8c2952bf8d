// op_attrs.cpp — names of the op attribute enums (declared in op_attrs.hpp).
#include "ir/op_attrs.hpp"

namespace anyp::ir {

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

}  // namespace anyp::ir
