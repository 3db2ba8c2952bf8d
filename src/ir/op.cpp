// op.cpp — the op table's lookups (ANYP_OP_KINDS in op.hpp) and op names.
#include "ir/op.hpp"

#include <sstream>

#include "common/internal_check.hpp"
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

namespace {

// One row of ANYP_OP_KINDS.
struct OpRow {
  const char* name;
  unsigned levels;
  OpFamily family;
  int view_of;
  unsigned writes;
  const char* roles;
};

constexpr OpRow kOps[] = {
#define ANYP_X(kind, name, levels, family, view_of, writes, roles) \
  {name, levels, OpFamily::family, view_of, writes, roles},
    ANYP_OP_KINDS(ANYP_X)
#undef ANYP_X
};

const OpRow& row(OpKind k) { return kOps[static_cast<std::size_t>(k)]; }

}  // namespace

const char* op_kind_name(OpKind k) { return row(k).name; }
unsigned op_levels(OpKind k) { return row(k).levels; }
OpFamily op_family(OpKind k) { return row(k).family; }

std::string op_display_name(const Op& op) {
  switch (op.kind) {
    case OpKind::TileBinary:
      return tile_binary_name(attr_of<BinaryOp>(op));
    case OpKind::TensorBinary:  // pl.add -> pl.tensor.add
      return "pl.tensor." + std::string(tile_binary_name(attr_of<BinaryOp>(op))).substr(3);
    case OpKind::ScalarBinary:
      return std::string("scalar ") + binary_op_name(attr_of<BinaryOp>(op));
    case OpKind::TileUnary:
      return unary_op_name(attr_of<UnaryOp>(op));
    case OpKind::TileReduce: {
      const auto& r = attr_of<AxisReduce>(op);
      return tile_reduce_name(r.kind, r.row);
    }
    case OpKind::TileExpand: {
      const auto& e = attr_of<AxisExpand>(op);
      return expand_name(e.kind, e.row);
    }
    case OpKind::Matmul:
      return matmul_form_name(attr_of<MatmulForm>(op));
    case OpKind::Call:
      return "call @" + (op.callee ? op.callee->name : std::string("?"));
    default:
      return op_kind_name(op.kind);
  }
}

bool has_run_time_valid(const Op& op) {
  switch (op.kind) {
    case OpKind::Load:
    case OpKind::Store:
    case OpKind::RemoteLoad:
    case OpKind::RemoteStore:
      return op.count > 0;
    default:
      return false;
  }
}

std::size_t operands_before_valid(const Op& op) {
  return op.args.size() - (has_run_time_valid(op) ? static_cast<std::size_t>(op.count) : 0);
}

std::string op_site_name(const Op& op) { return site_name(op_display_name(op), op.loc); }

void wrong_attr(const Op& op) {
  ANYP_UNREACHABLE("op " + std::string(op_kind_name(op.kind)) +
                   " carries another attribute (variant index " + std::to_string(op.attr.index()) +
                   ")");
}

const std::vector<std::string>& collective_roles(OpKind k) {
  // Split once from the table's "data signal" strings.
  static const std::vector<std::vector<std::string>> kRoles = [] {
    std::vector<std::vector<std::string>> all;
    for (const OpRow& r : kOps) {
      std::vector<std::string> roles;
      std::istringstream words(r.roles);
      for (std::string w; words >> w;) roles.push_back(w);
      all.push_back(std::move(roles));
    }
    return all;
  }();
  return kRoles[static_cast<std::size_t>(k)];
}

std::vector<std::size_t> written_memory_operands(const Op& op) {
  std::vector<std::size_t> written;
  const unsigned writes = row(op.kind).writes;
  for (std::size_t i = 0; i < op.args.size() && i < 32; ++i)
    if (writes & (1u << i)) written.push_back(i);
  return written;
}

int result_view_operand(const Op& op) {
  const int v = row(op.kind).view_of;
  return v >= 0 && static_cast<std::size_t>(v) < op.args.size() ? v : -1;
}

}  // namespace anyp::ir
