// op.cpp — names and level masks of IR ops and their enum attributes.
#include "ir/op.hpp"

#include <map>

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

std::string op_display_name(const Op& op) {
  switch (op.kind) {
    case OpKind::TileBinary:
      return tile_binary_name(static_cast<BinaryOp>(op.attr));
    case OpKind::TensorBinary:  // pl.add -> pl.tensor.add
      return "pl.tensor." + std::string(tile_binary_name(static_cast<BinaryOp>(op.attr))).substr(3);
    case OpKind::ScalarBinary:
      return std::string("scalar ") + binary_op_name(static_cast<BinaryOp>(op.attr));
    case OpKind::TileUnary:
      return unary_op_name(static_cast<UnaryOp>(op.attr));
    case OpKind::TileReduce:
      return tile_reduce_name(static_cast<ReduceKind>(op.attr), op.count == 1);
    case OpKind::TileExpand:
      return expand_name(static_cast<ExpandKind>(op.attr), op.count == 1);
    case OpKind::Matmul:
      return matmul_form_name(static_cast<MatmulForm>(op.attr));
    case OpKind::Call:
      return "call @" + (op.callee ? op.callee->name : std::string("?"));
    default:
      return op_kind_name(op.kind);
  }
}

const std::vector<std::string>& collective_roles(OpKind k) {
  static const std::map<OpKind, std::vector<std::string>> kRoles = {
      {OpKind::Barrier, {"signal"}},
      {OpKind::Allreduce, {"data", "signal"}},
      {OpKind::Broadcast, {"data", "signal"}},
      {OpKind::Allgather, {"src", "dst", "signal"}},
      {OpKind::ReduceScatter, {"data", "signal"}},
      {OpKind::AllToAll, {"src", "dst", "signal"}},
      {OpKind::AllToAllV, {"src", "send_counts", "dst", "recv_counts", "signal"}}};
  static const std::vector<std::string> kNone;
  const auto it = kRoles.find(k);
  return it == kRoles.end() ? kNone : it->second;
}

std::vector<std::size_t> written_memory_operands(const Op& op) {
  switch (op.kind) {
    case OpKind::Store:
    case OpKind::RemoteStore:
      return {1};
    case OpKind::Write:
    case OpKind::TensorCopy:
    case OpKind::TensorBinary:
    case OpKind::Get:
    case OpKind::Put:
    case OpKind::PutAsync:
    case OpKind::Notify:
    case OpKind::Barrier:
      return op.args.empty() ? std::vector<std::size_t>{} : std::vector<std::size_t>{0};
    case OpKind::Allreduce:
    case OpKind::Broadcast:
    case OpKind::ReduceScatter:
      return op.args.size() > 1 ? std::vector<std::size_t>{0, 1} : std::vector<std::size_t>{0};
    case OpKind::Allgather:
    case OpKind::AllToAll:
      return {1, 2};
    case OpKind::AllToAllV:
      return {2, 3, 4};
    default:
      return {};
  }
}

int result_view_operand(const Op& op) {
  switch (op.kind) {
    case OpKind::Assign:
    case OpKind::Index:
    case OpKind::TensorSlice:
      return 0;
    case OpKind::Store:
      return 1;
    case OpKind::Barrier:
      return op.args.empty() ? -1 : 0;
    case OpKind::Allreduce:
    case OpKind::Broadcast:
    case OpKind::ReduceScatter:
      return 0;
    case OpKind::Allgather:
    case OpKind::AllToAll:
      return 1;
    case OpKind::AllToAllV:
      return 2;
    default:
      return -1;
  }
}

}  // namespace anyp::ir
