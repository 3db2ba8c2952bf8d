// check_functions.cpp — shape, tile-alignment and call checks after binding.
#include "compiler/check_functions.hpp"

#include <cstdint>
#include <set>

#include "anyp/errors.hpp"
#include "compiler/check_tile_ops.hpp"
#include "compiler/lower_collectives.hpp"
#include "compiler/specialize_host.hpp"
#include "ir/tile_rules.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::compiler {
namespace {

// How op kind `k` makes its result tile.
TileUse result_use(ir::OpKind k) {
  return k == ir::OpKind::Load || k == ir::OpKind::RemoteLoad ? TileUse::Loaded : TileUse::Computed;
}

using CheckedSet = std::set<DispatchedFunction>;

class FunctionChecker {
 public:
  FunctionChecker(const ir::Function& fn, const ir::DimBindings& bindings, const CommScope& scope,
                  const ParamDomains& params, CheckedSet& checked)
      : fn_(fn),
        bindings_(bindings),
        scope_(scope),
        checked_(checked),
        shapes_(fn.vars.size()),
        domains_(fn.vars.size(), -1),
        view_of_(fn.vars.size(), -1),
        assigned_(fn.vars.size(), 0) {
    for (std::size_t i = 0; i < fn.params.size() && i < params.size(); ++i)
      domains_[fn.params[i].var] = params[i];
    for (const auto& p : fn.params) assigned_[p.var] = 1;
  }

  void run() {
    for (const auto& p : fn_.params) {
      const ir::Var& v = fn_.vars[p.var];
      shapes_[p.var] =
          eval_shape(v.type.shape, bindings_, where() + ", parameter '" + v.name + "'");
    }
    block(fn_.body);
  }

  // Checks `fn` with these parameter domains unless that was done already.
  static void check_once(const ir::Function& fn, const ir::DimBindings& bindings,
                         const CommScope& scope, const ParamDomains& params, CheckedSet& checked) {
    if (!checked.insert({&fn, params}).second) return;
    FunctionChecker(fn, bindings, scope, params, checked).run();
  }

 private:
  std::string where() const {
    return "function '" + fn_.name + "' (" + ir::level_name(fn_.level) + ")";
  }
  [[noreturn]] void fail(const ir::Op& op, const std::string& what) const {
    throw CompileError("compile error: " + where() + ", op " + ir::op_site_name(op) + ": " + what);
  }

  const std::vector<std::int64_t>& shape_of(const ir::Operand& o) const { return shapes_[o.var]; }

  void block(const ir::Block& b) {
    for (const ir::Stmt& s : b) {
      if (const auto* op = std::get_if<ir::Op>(&s.node)) {
        this->op(*op);
      } else if (const auto* f = std::get_if<ir::ForStmt>(&s.node)) {
        const std::string range = ir::site_name("pl.range", f->loc);
        check_immediate(range, "the start", f->start);
        check_immediate(range, "the stop", f->stop);
        check_immediate(range, "the step", f->step);
        block(f->body);
      } else if (const auto* c = std::get_if<ir::IfStmt>(&s.node)) {
        check_immediate(ir::site_name("pl.if_", c->loc), "the condition", c->cond);
        block(c->then_body);
        block(c->else_body);
      }
    }
  }

  // An integer immediate (a constant, or an extent of dims) must evaluate to
  // an INT64 for this P ("op pl.range: the stop 9223372036854775806 + NR:
  // 9223372036854775806 + 2 overflows INT64"), and one that mentions a dim,
  // an INT32 value, must fit in INT32 (else arithmetic on it would wrap).
  void check_immediate(const std::string& op, const std::string& role, const ir::Operand& o,
                       bool converted = false) const {
    if (o.is_var() || o.is_float_imm || !o.int_imm) return;
    const ir::EvalResult r = ir::evaluate(o.int_imm, bindings_);
    const std::string what =
        "compile error: " + where() + ", op " + op + ": " + role + " " + ir::to_string(o.int_imm);
    if (!r.value) throw CompileError(what + ": " + r.error);
    if (!converted && !ir::is_const(o.int_imm) && (*r.value < INT32_MIN || *r.value > INT32_MAX)) {
      throw CompileError(what + " is " + std::to_string(*r.value) +
                         " here, outside INT32 (an extent of dims is an INT32 value); make it "
                         "INT64 with pl::cast(..., pl::INT64)");
    }
  }

  bool is_memory_operand(const ir::Operand& o) const {
    return o.is_var() && ir::is_memory(fn_.vars[o.var].type.kind);
  }
  bool is_window(const ir::Operand& o) const { return compiler::is_window(fn_, o); }

  // A window variable keeps the domain of the view it first held: its
  // collectives and peers were checked against that domain's size.
  void track_domain(const ir::Op& op) {
    if (op.result < 0 || fn_.vars[op.result].type.kind != ir::TypeKind::DistTensor) return;
    const ir::Operand* w = first_window(fn_, op);
    if (!w) return;
    const std::int32_t d = domains_[w->var];
    if (assigned_[op.result] && domains_[op.result] != d) {
      fail(op, "'" + fn_.vars[op.result].name + "' is a view in " +
                   scope_.name(domains_[op.result]) + ", and a view in " + scope_.name(d) +
                   " is assigned to it; a window variable keeps its comm domain");
    }
    domains_[op.result] = d;
    assigned_[op.result] = 1;
  }

  // "'x'", or for a temporary the variable it is a view of: "(a view of 'x')".
  std::string var_text(ir::VarId v) const {
    if (!fn_.vars[v].name.empty()) return "'" + fn_.vars[v].name + "'";
    const ir::VarId of = view_of_[v];
    return of >= 0 && of != v ? "(a view of " + var_text(of) + ")" : "%" + std::to_string(v);
  }

  void op(const ir::Op& op) {
    if (const int from = ir::result_view_operand(op);
        op.result >= 0 && from >= 0 && op.args[from].is_var() && op.args[from].var != op.result)
      view_of_[op.result] = op.args[from].var;
    // pl.cast and pl.full convert their value (pl.full checks its range itself).
    const bool converted = op.kind == ir::OpKind::ScalarCast || op.kind == ir::OpKind::Full;
    for (std::size_t i = 0; i < op.args.size(); ++i)
      check_immediate(ir::op_site_name(op), "operand " + std::to_string(i), op.args[i], converted);
    track_domain(op);
    if (op.result >= 0) {
      const ir::Type& t = fn_.vars[op.result].type;
      const std::string ctx = where() + ", op " + ir::op_site_name(op) +
                              (t.kind == ir::TypeKind::Tile ? ", tile shape" : ", result shape");
      shapes_[op.result] = eval_shape(t.shape, bindings_, ctx);
      if (t.kind == ir::TypeKind::Tile)
        check_tile_row(op, shapes_[op.result], t.dtype, result_use(op.kind));
    }
    if (op.kind == ir::OpKind::Store || op.kind == ir::OpKind::RemoteStore) {
      check_tile_row(op, shape_of(op.args[0]), fn_.vars[op.args[0].var].type.dtype,
                     TileUse::Stored);
    }
    if (const std::string error = tile_op_error(fn_, op, shapes_, bindings_); !error.empty()) {
      fail(op, error);
    }
    switch (op.kind) {
      case ir::OpKind::Assign:
        if (op.args[0].is_var() && fn_.vars[op.result].type.kind != ir::TypeKind::Scalar &&
            shape_of(op.args[0]) != shapes_[op.result]) {
          fail(op, "assignment of a " + shape_text(shape_of(op.args[0])) +
                       " value to a variable of shape " + shape_text(shapes_[op.result]) +
                       ": a variable keeps its shape; give the new shape a new variable");
        }
        break;
      case ir::OpKind::Full:
        if (!op.args[0].is_var() && !op.args[0].is_float_imm) {
          ir::EvalResult v = ir::evaluate(op.args[0].int_imm, bindings_);
          if (!v.value) fail(op, "value " + ir::to_string(op.args[0].int_imm) + ": " + v.error);
          const std::string error = ir::full_value_error(op.dtype, *v.value);
          if (!error.empty()) fail(op, error.substr(error.find(": ") + 2));
        }
        break;
      case ir::OpKind::Reshape: {
        const std::string error =
            ir::reshape_count_error(shape_text(shape_of(op.args[0])), numel(shape_of(op.args[0])),
                                    shape_text(shapes_[op.result]), numel(shapes_[op.result]));
        if (!error.empty()) fail(op, error.substr(error.find(": ") + 2));
        break;
      }
      case ir::OpKind::Load:
      case ir::OpKind::RemoteLoad: {
        if (ir::has_run_time_valid(op)) break;  // the region is known when the op runs
        const std::size_t first = op.kind == ir::OpKind::Load ? 1 : 2;
        check_region(op, op.args[0], first, moved_extent(op, shapes_[op.result]), "source");
        break;
      }
      case ir::OpKind::Store:
        if (ir::has_run_time_valid(op)) break;
        check_region(op, op.args[1], 2, moved_extent(op, shape_of(op.args[0])), "target");
        break;
      case ir::OpKind::RemoteStore:
        if (ir::has_run_time_valid(op)) break;
        check_region(op, op.args[1], 3, moved_extent(op, shape_of(op.args[0])), "target");
        break;
      case ir::OpKind::TensorSlice:
        check_region(op, op.args[0], 1, shapes_[op.result], "tensor");
        break;
      case ir::OpKind::TensorCopy:
      case ir::OpKind::TensorBinary: {
        const bool binary = op.kind == ir::OpKind::TensorBinary;
        const auto& dst = shape_of(op.args[0]);
        for (std::size_t i = 1; i < op.args.size(); ++i) {
          if (!is_memory_operand(op.args[i]) || shape_of(op.args[i]) == dst) continue;
          fail(op, std::string(binary ? "the operand " : "the source ") +
                       shape_text(shape_of(op.args[i])) + " and the destination " +
                       shape_text(dst) + " differ; " +
                       (binary ? "a tensor op takes one shape" : "copy takes one shape") +
                       " (pl::tensor::slice the larger one)");
        }
        break;
      }
      case ir::OpKind::Put:
      case ir::OpKind::Get:
      case ir::OpKind::PutAsync:
        check_transfer(op);
        break;
      case ir::OpKind::Barrier:
        collective_domain_ = collective_domain(op);
        check_signal(op, 0, mesh_signal(), collective_domain_ < 0 ? "[P, 1]" : "[G, 1]");
        break;
      case ir::OpKind::Call:
        check_call(op);
        break;
      default:  // the other collectives (the barrier's signal is checked above)
        if (ir::is_collective(op.kind)) check_collective(op);
        break;
    }
  }

  // The region a load or store moves: the tile's shape, or a partial
  // tile's valid_shape (each extent in [1, the tile's]).
  std::vector<std::int64_t> moved_extent(const ir::Op& op, const std::vector<std::int64_t>& tile) {
    if (op.valid.empty()) return tile;
    const auto valid =
        eval_shape(op.valid, bindings_, where() + ", op " + ir::op_site_name(op) + ", valid_shape");
    for (std::size_t d = 0; d < valid.size(); ++d) {
      if (valid[d] > tile[d]) {
        fail(op, "valid_shape " + shape_text(valid) + " is larger than the tile " +
                     shape_text(tile) + " in dim " + std::to_string(d));
      }
    }
    return valid;
  }

  void check_tile_row(const ir::Op& op, const std::vector<std::int64_t>& shape, DType dtype,
                      TileUse use) {
    const std::string error = tile_row_error(shape, dtype, use);
    if (!error.empty()) fail(op, error);
  }

  // A stored column vector ([.., M, 1], as a row reduction makes it) that
  // does not fit: the hint to store it as the row it usually is meant to be.
  static std::string column_vector_hint(const ir::Op& op, const std::vector<std::int64_t>& extent) {
    const bool store = op.kind == ir::OpKind::Store || op.kind == ir::OpKind::RemoteStore;
    if (!store || extent.size() < 2 || extent.back() != 1 || extent[extent.size() - 2] == 1)
      return "";
    std::vector<std::int64_t> row = extent;
    std::swap(row[row.size() - 1], row[row.size() - 2]);
    return "\n  hint: the tile is a column vector " + shape_text(extent) + "; pl::reshape it to " +
           shape_text(row) + " before storing it as a row";
  }

  // A region [offsets, offsets + extent) inside the tensor, when offsets are constants.
  void check_region(const ir::Op& op, const ir::Operand& tensor, std::size_t first,
                    const std::vector<std::int64_t>& extent, const char* role) {
    const auto& shape = shape_of(tensor);
    // "the source 'data' [1, 64]": the role, the variable and its shape.
    const std::string what = std::string(role) +
                             (tensor.is_var() ? " " + var_text(tensor.var) : "") + " " +
                             shape_text(shape);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (extent[d] > shape[d]) {
        fail(op, "the region " + shape_text(extent) + " is larger than the " + what + " in dim " +
                     std::to_string(d) + column_vector_hint(op, extent));
      }
      const ir::Operand& o = op.args[first + d];
      if (o.is_var()) continue;
      ir::EvalResult r = ir::evaluate(o.int_imm, bindings_);
      // offset + extent > shape, without overflow for offsets near INT64's limit
      if (r.value && (*r.value < 0 || *r.value > shape[d] - extent[d])) {
        fail(op, "region out of bounds in dim " + std::to_string(d) + ": offset " +
                     std::to_string(*r.value) + " + extent " + std::to_string(extent[d]) +
                     " exceeds the " + what);
      }
    }
  }

  void check_transfer(const ir::Op& op) {
    const auto& dst = shape_of(op.args[0]);
    const auto& src = shape_of(op.args[2]);
    if (op.shape.empty()) {
      if (dst != src) {
        fail(op, "destination " + shape_text(dst) + " and source " + shape_text(src) +
                     " differ; use the region form (dst_offsets, src_offsets, shape)");
      }
      return;
    }
    auto region = eval_shape(op.shape, bindings_,
                             where() + ", op " + ir::op_site_name(op) + ", region shape");
    check_region(op, op.args[0], 3, region, "destination");
    check_region(op, op.args[2], 3 + static_cast<std::size_t>(op.count), region, "source");
  }

  // The ranks the current collective spans: P, or its domain's group size.
  std::int64_t world() const { return scope_.size(collective_domain_); }
  std::string count_text() const { return scope_.count_text(collective_domain_); }
  std::vector<std::int64_t> mesh_signal() const { return {world(), 1}; }

  // The one domain of a collective's window operands.
  std::int32_t collective_domain(const ir::Op& op) const {
    const std::vector<std::string>& roles = ir::collective_roles(op.kind);
    std::int32_t domain = -2;
    std::size_t role = 0, first_role = 0;
    for (const ir::Operand& a : op.args) {
      if (!a.is_var()) continue;
      const std::size_t r = role++;
      if (!is_window(a)) continue;
      if (domain == -2) {
        domain = domains_[a.var];
        first_role = r;
      } else if (domains_[a.var] != domain) {
        const bool inferred = scope_.inferred(domain) || scope_.inferred(domains_[a.var]);
        fail(op, "the " + roles.at(first_role) + " is a view in " + scope_.name(domain) +
                     ", but the " + roles.at(r) + " is a view in " + scope_.name(domains_[a.var]) +
                     "; a collective's windows must be in one domain" +
                     (inferred ? " (a buffer whose views are dispatched to some ranks only is "
                                 "theirs alone, a domain inferred as PyPTO does: pass every "
                                 "rank views of the same buffers, or declare the domain)"
                               : ""));
      }
    }
    return domain == -2 ? -1 : domain;
  }

  void check_signal(const ir::Op& op, std::size_t arg, const std::vector<std::int64_t>& want,
                    const std::string& decl, const std::string& role = "the signal") {
    const auto& got = shape_of(op.args[arg]);
    // A one-cell-per-rank window may also have one dim, [P] (PyPTO's form).
    const bool one_dim_form =
        want.size() == 2 && want[1] == 1 && got.size() == 1 && got[0] == want[0];
    if (got != want && !one_dim_form) {
      fail(op, role + " must be " + decl + " INT32, which is " + shape_text(want) + " at " +
                   count_text() + ", got " + shape_text(got));
    }
  }

  // The block count of a launch or a core_num, in [1, kMaxBlocks]:
  // "<before>4<after> 1 to 256 blocks" names a bad one.
  std::int64_t block_count(const ir::Op& op, const std::string& before, const std::string& after) {
    const ir::EvalResult n = ir::evaluate(op.blocks, bindings_);
    if (!n.value) fail(op, before + ir::to_string(op.blocks) + after.substr(0, 1) + " " + n.error);
    if (*n.value < 1 || *n.value > runtime::kMaxBlocks) {
      fail(op, before + std::to_string(*n.value) + after + " 1 to " +
                   std::to_string(runtime::kMaxBlocks) + " blocks");
    }
    return *n.value;
  }

  // A multi-block collective's signal: [P, S] with S >= its blocks
  // (collective_blocks: core_num, or an all_to_all(_v)'s admitted count), a
  // lane (column) per block. Returns the block count.
  std::int64_t check_lanes(const ir::Op& op, std::size_t arg, const std::string& n,
                           const std::string& role) {
    const std::int64_t core_num = block_count(op, "core_num ", ": a collective runs on");
    const std::int64_t blocks = collective_blocks(op.kind, world(), core_num);
    const std::string over = blocks == core_num
                                 ? "core_num = " + std::to_string(blocks) + " blocks"
                                 : "core_num = " + std::to_string(core_num) + " runs on " +
                                       std::to_string(blocks) + " blocks at " + count_text() +
                                       " (core_num rounded down to a multiple of " + n +
                                       ", a part of every destination's rows each)";
    const auto& got = shape_of(op.args[arg]);
    if (got.size() != 2 || got[0] != world() || got[1] < blocks) {
      fail(op, role + " of a collective over " + over + " must be [" + n + ", S] INT32 with S >= " +
                   std::to_string(blocks) + " (a lane per block), which is [" +
                   std::to_string(world()) + ", >= " + std::to_string(blocks) + "] at " +
                   count_text() + ", got " + shape_text(got));
    }
    return blocks;
  }

  static std::int64_t numel(const std::vector<std::int64_t>& shape) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }

  void expect_rows(const ir::Op& op, std::size_t arg, const char* role) {
    const auto& shape = shape_of(op.args[arg]);
    if (shape.empty() || shape[0] != world()) {
      fail(op, std::string(role) + " must have " + count_text() +
                   " rows (one per rank) in dim 0, got " + shape_text(shape));
    }
  }

  // all_to_all(_v): a block of rows per destination (one row each, or
  // PyPTO's MAX_RECV rows: a [NR * MAX_RECV, C] source).
  void expect_row_blocks(const ir::Op& op, std::size_t arg, const char* role) {
    const auto& shape = shape_of(op.args[arg]);
    if (shape.empty() || shape[0] % world() != 0) {
      fail(op, std::string(role) + " must have a multiple of " + count_text() +
                   " rows in dim 0 (a block of rows per rank), got " + shape_text(shape));
    }
  }

  void check_collective(const ir::Op& op) {
    collective_domain_ = collective_domain(op);
    const bool world_wide = collective_domain_ < 0;
    const std::string n = world_wide ? "P" : "G";  // the rank count, in declared shapes
    const std::string cells = "[" + n + ", 1]";
    switch (op.kind) {
      case ir::OpKind::Allreduce:
        if (const ir::Algorithm mode = ir::attr_of<ir::AllreduceAttr>(op).mode;
            mode == ir::Algorithm::Ring) {
          if (world() < 2) fail(op, "a Ring allreduce needs " + n + " >= 2, got " + count_text());
          // PyPTO's host ring allocates one row more, [2 (P - 1) + 1, P]: taken too,
          // and so is the mesh's [P, 1] (its compact form, collectives.md §3.3).
          const std::vector<std::int64_t> pypto = {2 * (world() - 1) + 1, world()};
          const auto& got = shape_of(op.args[1]);
          const bool compact = got == mesh_signal() || got == std::vector<std::int64_t>{world()};
          if (got != pypto && !compact) {
            check_signal(op, 1, {2 * (world() - 1), world()},
                         "[2 * (" + n + " - 1), " + n + "] (or PyPTO's [2 * (" + n + " - 1) + 1, " +
                             n + "], or " + cells + ")",
                         "the Ring signal");
          }
        } else if (mode != ir::Algorithm::Mesh) {
          check_signal(op, 1, mesh_signal(), cells,
                       std::string("the ") + ir::algorithm_name(mode) + " signal");
        } else if (op.blocks) {
          check_lanes(op, 1, n, "the Mesh signal");
        } else {
          check_signal(op, 1, mesh_signal(), cells, "the Mesh signal");
        }
        break;
      case ir::OpKind::Broadcast: {
        check_signal(op, 1, mesh_signal(), cells);
        ir::EvalResult root = ir::evaluate(op.args[2].int_imm, bindings_);
        if (!root.value) fail(op, "root " + ir::to_string(op.args[2].int_imm) + ": " + root.error);
        if (*root.value < 0 || *root.value >= world()) {
          fail(op, "root " + std::to_string(*root.value) + " is out of range [0, " +
                       std::to_string(world()) + ") for " + count_text());
        }
        break;
      }
      case ir::OpKind::Allgather: {
        check_signal(op, 2, mesh_signal(), cells);
        const auto& src = shape_of(op.args[0]);
        const auto& dst = shape_of(op.args[1]);
        if (numel(dst) != world() * numel(src)) {
          fail(op, "the target " + shape_text(dst) + " must hold " + count_text() +
                       " copies of the source " + shape_text(src) + " (" +
                       std::to_string(world() * numel(src)) + " elements), got " +
                       std::to_string(numel(dst)));
        }
        break;
      }
      case ir::OpKind::ReduceScatter:
        check_signal(op, 1, mesh_signal(), cells);
        expect_rows(op, 0, "the data");
        break;
      case ir::OpKind::AllToAll:
      case ir::OpKind::AllToAllV: {
        const bool v = op.kind == ir::OpKind::AllToAllV;
        const std::size_t src = 0, dst = v ? 2 : 1, sig = v ? 4 : 2;
        if (op.blocks) {
          check_lanes(op, sig, n, "the signal");
        } else {
          check_signal(op, sig, mesh_signal(), cells);
        }
        expect_row_blocks(op, src, "the source");
        if (shape_of(op.args[src]) != shape_of(op.args[dst])) {
          fail(op, "the source " + shape_text(shape_of(op.args[src])) + " and the target " +
                       shape_text(shape_of(op.args[dst])) + " must have the same shape");
        }
        if (v) {
          check_signal(op, 1, mesh_signal(), cells, "send_counts");
          check_signal(op, 3, mesh_signal(), cells, "recv_counts");
        }
        break;
      }
      default:
        break;
    }
  }

  void check_call(const ir::Op& op) {
    const ir::Function& callee = *op.callee;
    ParamDomains callee_domains;
    for (std::size_t i = 0; i < callee.params.size(); ++i)
      callee_domains.push_back(is_window(op.args[i]) ? domains_[op.args[i].var] : -1);
    for (std::size_t i = 0; i < callee.params.size(); ++i) {
      const ir::Var& param = callee.vars[callee.params[i].var];
      if (param.type.kind == ir::TypeKind::Scalar) {
        // An extent of dims passed as a scalar: its value must fit too.
        const ir::Operand& a = op.args[i];
        if (a.is_var() || a.is_float_imm || dtype_is_float(param.type.dtype)) continue;
        const ir::EvalResult v = ir::evaluate(a.int_imm, bindings_);
        const auto [lo, hi] = ir::integer_range(param.type.dtype);
        if (v.value && (*v.value < lo || *v.value > hi)) {
          fail(op, "argument " + std::to_string(i) + " ('" + param.name + "') " +
                       ir::to_string(a.int_imm) + " is " + std::to_string(*v.value) +
                       " here, which does not fit Scalar " +
                       std::string(dtype_name(param.type.dtype)) + " (range [" +
                       std::to_string(lo) + ", " + std::to_string(hi) + "])");
        }
        continue;
      }
      auto want = eval_shape(param.type.shape, bindings_,
                             "function '" + callee.name + "' (" + ir::level_name(callee.level) +
                                 "), parameter '" + param.name + "'");
      const ir::Type& got = fn_.vars[op.args[i].var].type;
      if (want != shape_of(op.args[i]) || got.dtype != param.type.dtype) {
        fail(op, "argument " + std::to_string(i) + " ('" + param.name + "'): expected " +
                     ir::type_kind_name(param.type.kind) + shape_text(want) + " " +
                     std::string(dtype_name(param.type.dtype)) + ", got " +
                     ir::type_kind_name(got.kind) + shape_text(shape_of(op.args[i])) + " " +
                     std::string(dtype_name(got.dtype)));
      }
    }
    if (op.blocks) block_count(op, "pl::blocks(", "): a launch has");
    check_once(callee, bindings_, scope_, callee_domains, checked_);
  }

  const ir::Function& fn_;
  const ir::DimBindings& bindings_;
  const CommScope& scope_;
  CheckedSet& checked_;
  std::vector<std::vector<std::int64_t>> shapes_;
  std::vector<std::int32_t> domains_;    // per window variable: its domain (-1: the world)
  std::vector<ir::VarId> view_of_;       // per variable: the one it was last made a view of
  std::vector<char> assigned_;           // per variable: has it held a view yet?
  std::int32_t collective_domain_ = -1;  // of the collective being checked
};

}  // namespace

void check_parameter_shapes(const ir::Program& program, const ir::DimBindings& bindings,
                            bool skip_unbound) {
  const auto unbound = [&](const std::vector<ir::Expr>& shape) {
    bool any = false;
    for (const ir::Expr& e : shape)
      ir::for_each_dim(
          e, [&](std::int64_t id, const std::string&) { any = any || bindings.count(id) == 0; });
    return any;
  };
  for (const auto& fn : program.functions) {
    if (fn->level == ir::Level::Host) continue;
    for (const auto& p : fn->params) {
      const ir::Var& v = fn->vars[p.var];
      if (skip_unbound && unbound(v.type.shape)) continue;
      eval_shape(v.type.shape, bindings,
                 "function '" + fn->name + "' (" + ir::level_name(fn->level) + "), parameter '" +
                     v.name + "'");
    }
  }
}

void check_functions(const ir::Program& program, const ir::DimBindings& bindings,
                     const CommScope& scope, const std::vector<DispatchedFunction>& dispatched) {
  CheckedSet checked;
  for (const auto& [fn, domains] : dispatched)
    FunctionChecker::check_once(*fn, bindings, scope, domains, checked);
  std::set<const ir::Function*> reached;
  for (const auto& entry : checked) reached.insert(entry.first);
  for (const auto& fn : program.functions) {
    if (fn->level == ir::Level::Host || reached.count(fn.get())) continue;
    FunctionChecker::check_once(*fn, bindings, scope, {}, checked);
  }
}

}  // namespace anyp::compiler
