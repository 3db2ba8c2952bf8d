// rank_vm.cpp — the rank interpreter: one dispatch loop over lowered code.
// Memory and signals are reached only through the Fabric (the door).
#include "runtime/rank_vm.hpp"

#include <algorithm>
#include <cstdint>
#include <new>

#include "common/element_codec.hpp"
#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/out_of_memory.hpp"
#include "runtime/tile_structured.hpp"

namespace anyp::runtime {
namespace {

struct VmFailure {
  std::string message;
};

bool is_atomic(const Instr& in) {
  return static_cast<ir::AtomicKind>(in.sub) == ir::AtomicKind::Add;
}

}  // namespace

RankVm::RankVm(std::int64_t agent, const RunContext* ctx)
    : agent_(agent),
      rank_(ctx->exec->rank_of_agent(agent)),
      block_(ctx->exec->block_of_agent(agent)),
      ctx_(ctx),
      dispatches_(&ctx->exec->ranks[static_cast<std::size_t>(rank_)]) {
  ANYP_CHECK(block_ == 0 || ctx->launches != nullptr, "a block agent without launch slots");
}

void RankVm::fail(const Instr& in, const std::string& what) const {
  std::string where = run_error_where(*ctx_->exec, rank_, site(in));
  if (launch_blocks_ > 1) {  // "run error: rank 1 (device 1), block 2 of 4, function ..."
    const std::size_t at = where.find(')') + 1;
    where.insert(
        at, ", block " + std::to_string(launch_index_) + " of " + std::to_string(launch_blocks_));
  }
  throw VmFailure{where + ": " + what};
}

RankVm::LaunchEntry RankVm::enter_launch() {
  const Cell cell = launch_cell(block_);
  auto describe = [this] {
    return "block " + std::to_string(block_) +
           " is idle: waits for a launch (the block launch "
           "cells)";
  };
  if (!ctx_->fabric->wait(agent_, SiteRef{}, cell, ir::WaitKind::Ge, 1, describe))
    return LaunchEntry::Parked;
  const LaunchSlot& slot = ctx_->launches[static_cast<std::size_t>(rank_)];
  // The cell back to 0 (self-clearing): the next launch sets it again.
  ctx_->fabric->notify(agent_, slot.quit ? SiteRef{} : slot.site, cell, ir::NotifyKind::Set, 0);
  if (slot.quit) return LaunchEntry::Quit;
  ANYP_CHECK(slot.code >= 0, "a block launched without a launch slot");
  code_index_ = slot.code;
  code_ = &ctx_->exec->codes[static_cast<std::size_t>(slot.code)];
  s_ = slot.s;
  v_ = slot.v;
  t_.resize(static_cast<std::size_t>(code_->num_tiles));
  pc_ = slot.pc;
  in_dispatch_ = true;
  launch_index_ = block_;
  launch_blocks_ = slot.blocks;
  return LaunchEntry::Entered;
}

void RankVm::block_launch(const Instr& in) {
  LaunchSlot& slot = ctx_->launches[static_cast<std::size_t>(rank_)];
  slot.code = code_index_;
  slot.pc = static_cast<std::size_t>(&in - code_->instrs.data()) + 1;
  slot.blocks = in.imm;
  slot.site = site(in);
  slot.quit = false;
  slot.s = s_;
  slot.v = v_;
  for (std::int64_t b = 1; b < in.imm; ++b)
    ctx_->fabric->notify(agent_, site(in), launch_cell(b), ir::NotifyKind::Set, 1);
  launch_index_ = 0;
  launch_blocks_ = in.imm;
}

bool RankVm::block_end(const Instr& in) {
  const Cell joined = launch_cell(0);
  if (block_ != 0) {
    ctx_->fabric->notify(agent_, site(in), joined, ir::NotifyKind::AtomicAdd, 1);
    in_dispatch_ = false;
    launch_index_ = 0;
    launch_blocks_ = 1;
    return true;
  }
  auto describe = [this, &in] {
    const Site& s = code_->sites[in.site];
    const std::string others = in.imm == 2 ? "block 1" : "blocks 1-" + std::to_string(in.imm - 1);
    return "function '" + s.function + "', op " + s.op + ": waits for " + others +
           " of its launch to finish (the block join cell)";
  };
  if (!ctx_->fabric->wait(agent_, site(in), joined, ir::WaitKind::Ge, in.imm - 1, describe))
    return false;
  ctx_->fabric->notify(agent_, site(in), joined, ir::NotifyKind::Set, 0);
  launch_blocks_ = 1;
  return true;
}

void RankVm::release_blocks() {
  released_ = true;
  if (ctx_->exec->blocks <= 1) return;
  ctx_->launches[static_cast<std::size_t>(rank_)].quit = true;
  for (std::int64_t b = 1; b < ctx_->exec->blocks; ++b)
    ctx_->fabric->notify(agent_, SiteRef{}, launch_cell(b), ir::NotifyKind::Set, 1);
}

RankVm::DispatchEntry RankVm::enter_dispatch() {
  if (dispatch_ >= dispatches_->size()) return DispatchEntry::Done;
  const Dispatch& d = (*dispatches_)[dispatch_];
  // PyPTO's task dependencies (compiler/order_dispatches.hpp): wait for the
  // other ranks' dispatches that last wrote what this one reads.
  while (order_waits_done_ < d.waits.size()) {
    const DispatchWait w = d.waits[order_waits_done_];
    const std::size_t me = dispatch_;
    auto describe = [this, w, me] {
      const Executable& exec = *ctx_->exec;
      const auto& source = exec.ranks[static_cast<std::size_t>(w.source_rank)]
                                     [static_cast<std::size_t>(w.source_dispatch)];
      const auto& mine = exec.ranks[static_cast<std::size_t>(rank_)][me];
      return "dispatch " + std::to_string(me) + " (" +
             exec.codes[static_cast<std::size_t>(mine.code)].function + ") waits for dispatch " +
             std::to_string(w.source_dispatch) + " of rank " + std::to_string(w.source_rank) +
             " (" + exec.codes[static_cast<std::size_t>(source.code)].function +
             "), the last writer of host tensor '" +
             exec.host_args[static_cast<std::size_t>(w.host_param)].name + "' at byte " +
             std::to_string(w.byte_offset) +
             ", which it takes as In or InOut (the dispatch order cells: PyPTO's task "
             "dependencies; give each rank its own view of the tensor, or pass it Out)";
    };
    if (!ctx_->fabric->wait(agent_, SiteRef{}, order_cell(rank_, w.cell), ir::WaitKind::Ge, w.count,
                            describe))
      return DispatchEntry::Parked;
    ++order_waits_done_;
  }
  order_waits_done_ = 0;
  code_index_ = d.code;
  code_ = &ctx_->exec->codes[static_cast<std::size_t>(d.code)];
  s_.assign(static_cast<std::size_t>(code_->num_scalars), ScalarValue{});
  t_.resize(static_cast<std::size_t>(code_->num_tiles));
  v_.assign(static_cast<std::size_t>(code_->num_views), ViewReg{});
  for (const Instr& c : code_->constants)
    s_[c.dst] = c.is_float ? float_scalar(c.fimm) : int_scalar(c.imm);
  for (std::size_t i = 0; i < d.args.size(); ++i) {
    const ArgBinding& a = d.args[i];
    const std::int32_t reg = code_->param_regs[i];
    switch (a.kind) {
      case ArgBinding::Kind::Int:
        s_[reg] = int_scalar(a.int_value);
        break;
      case ArgBinding::Kind::Float:
        s_[reg] = float_scalar(a.float_value);
        break;
      case ArgBinding::Kind::HostTensor:
        v_[reg] = ViewReg{Space::Host, a.host_param, a.byte_offset,
                          a.dtype,     a.shape,      element_count(a.shape)};
        v_[reg].extent = a.shape;
        break;
      case ArgBinding::Kind::Window: {
        ViewReg& v = v_[reg];
        v = ViewReg{Space::Window, a.buffer, a.byte_offset,
                    a.dtype,       a.shape,  element_count(a.shape)};
        v.extent = a.shape;
        v.domain = ctx_->exec->buffers[static_cast<std::size_t>(a.buffer)].domain;
        if (v.domain >= 0) {
          v.group = ctx_->exec->domains[static_cast<std::size_t>(v.domain)]
                        .group_of[static_cast<std::size_t>(rank_)];
          ANYP_CHECK(v.group >= 0, "a view of a comm_domain buffer dispatched outside its domain");
        }
        break;
      }
    }
  }
  ctx_->fabric->begin_dispatch(rank_, dispatch_);
  pc_ = 0;
  in_dispatch_ = true;
  return DispatchEntry::Entered;
}

void RankVm::release_dispatch(const Dispatch& d) {
  for (const DispatchRelease& r : d.releases)
    ctx_->fabric->notify(agent_, SiteRef{}, order_cell(r.peer, r.cell), ir::NotifyKind::AtomicAdd,
                         1);
}

RankVm::Outcome RankVm::run(std::int64_t budget, bool stop_after_visible) {
  // pc and the instruction count live in registers here; save() puts them
  // back before every way out of the loop (a failure included), and before
  // a wait: a wait that parks the rank may hand it to another worker at
  // once, so the VM must touch no member after it.
  std::size_t pc = pc_;
  std::int64_t ran = 0;
  auto save = [&] {
    pc_ = pc;
    executed_ += ran;
    ran = 0;
  };
  try {
    for (;;) {
      if (!in_dispatch_ && block_ == 0) {
        save();  // a wait for another rank's dispatch may park the rank
        const DispatchEntry entry = enter_dispatch();
        if (entry == DispatchEntry::Parked) return Outcome::Parked;
        if (entry == DispatchEntry::Done) {
          if (!released_) release_blocks();
          return Outcome::Done;
        }
      }
      if (!in_dispatch_) {  // a block other than 0, between launches
        const LaunchEntry entry = enter_launch();
        if (entry == LaunchEntry::Parked) return Outcome::Parked;
        if (entry == LaunchEntry::Quit) return Outcome::Done;
      }
      const Instr* const code = code_->instrs.data();
      const std::size_t size = code_->instrs.size();
      ScalarValue* const s = s_.data();  // not resized within a dispatch
      pc = pc_;
      while (pc < size) {
        if (budget-- <= 0) {
          save();
          return Outcome::Yield;
        }
        ++ran;
        const Instr& in = code[pc];
        switch (in.op) {
          case Opcode::Const:
            s[in.dst] = in.is_float ? float_scalar(in.fimm) : int_scalar(in.imm);
            break;
          case Opcode::Mov:
            s[in.dst] = s[in.a];
            break;
          case Opcode::MovTile:
            t_[in.dst] = t_[in.a];
            break;
          case Opcode::MovView:
            v_[in.dst] = v_[in.a];
            break;
          case Opcode::ScalarBin: {
            const ScalarValue& x = s[in.a];
            const ScalarValue& y = s[in.b];
            // Integers inline (loop counters, offsets, peers); floats and
            // a division by zero's message in scalar_bin.
            std::optional<std::int64_t> v;
            if (!x.is_float && !y.is_float)
              v = integer_binary(static_cast<ir::BinaryOp>(in.sub), x.i, y.i, in.dtype);
            if (v) {
              s[in.dst] = int_scalar(*v);
            } else {
              scalar_bin(in);
            }
            break;
          }
          case Opcode::ScalarNot:
            s[in.dst] = int_scalar(s[in.a].as_double() == 0);
            break;
          case Opcode::ScalarCast:
            s[in.dst] = scalar_cast(s[in.a], in.dtype);
            break;
          case Opcode::Jump:
            pc = static_cast<std::size_t>(in.imm);
            continue;
          case Opcode::JumpIfZero:
            if (s[in.a].as_double() == 0) {
              pc = static_cast<std::size_t>(in.imm);
              continue;
            }
            break;
          case Opcode::JumpIfGe:
            if (s[in.a].as_int() >= s[in.b].as_int()) {
              pc = static_cast<std::size_t>(in.imm);
              continue;
            }
            break;
          case Opcode::Load:
          case Opcode::RemoteLoad:
            load(in);
            break;
          case Opcode::Store:
          case Opcode::RemoteStore:
            store(in);
            break;
          case Opcode::Read:
          case Opcode::Write:
            read_or_write(in);
            break;
          case Opcode::TileBin:
            tile_binary(in);
            break;
          case Opcode::TileCast:
            tile_cast(in);
            break;
          case Opcode::FullTile:
            full_tile(in);
            break;
          case Opcode::ReshapeTile:
            reshape_tile(in);
            break;
          case Opcode::TileUnary:
            tile_unary(in);
            break;
          case Opcode::TileCmp:
            tile_cmp(in);
            break;
          case Opcode::Select:
            tile_select(in);
            break;
          case Opcode::TileReduce:
            tile_reduce(in);
            break;
          case Opcode::TileExpand:
            tile_expand(in);
            break;
          case Opcode::Matmul:
            tile_matmul(in);
            break;
          case Opcode::Transpose:
            tile_transpose(in);
            break;
          case Opcode::SliceTile:
            tile_slice(in);
            break;
          case Opcode::ConcatTile:
            tile_concat(in);
            break;
          case Opcode::Arange:
            tile_arange(in);
            break;
          case Opcode::Rank:
            s[in.dst] =
                int_scalar(in.a >= 0 && v_[in.a].domain >= 0
                               ? domain_of(v_[in.a]).index_of[static_cast<std::size_t>(rank_)]
                               : rank_);
            break;
          case Opcode::BlockIdx:
            s[in.dst] = int_scalar(launch_index_);
            break;
          case Opcode::BlockNum:
            s[in.dst] = int_scalar(launch_blocks_);
            break;
          case Opcode::BlockLaunch:
            block_launch(in);
            break;
          case Opcode::BlockEnd:
            // Block 0 parks until the others are done (pc stays on the
            // end, which re-checks); another block's part is over.
            save();
            if (!block_end(in)) return Outcome::Parked;
            if (block_ != 0) {
              if (stop_after_visible) return Outcome::Yield;
              goto next_launch;
            }
            break;
          case Opcode::NRanks:
            s[in.dst] =
                int_scalar(in.a >= 0 && v_[in.a].domain >= 0 ? domain_of(v_[in.a]).group_size
                                                             : ctx_->exec->world_size);
            break;
          case Opcode::Notify:
            notify(in);
            break;
          case Opcode::Wait:
            // Parked: pc stays on the wait, which re-checks on resume.
            save();
            if (!wait(in)) return Outcome::Parked;
            break;
          case Opcode::Put:
          case Opcode::Get:
            transfer(in, in.op == Opcode::Put);
            break;
          case Opcode::PutAsync:
            put_async(in);
            break;
          case Opcode::WaitAsync:
            wait_async(in);
            break;
          case Opcode::CheckAsync:
            check_no_puts_in_flight();
            break;
          case Opcode::LoadFlat:
          case Opcode::StoreFlat:
          case Opcode::PutFlat:
            flat_op(in);
            break;
          case Opcode::SliceView:
            slice_view(in);
            break;
          case Opcode::CopyView:
            copy_view(in);
            break;
          case Opcode::TensorBin:
            tensor_binary(in);
            break;
          case Opcode::CheckCount:
            check_count(in);
            break;
          case Opcode::LoopStep: {
            std::int64_t next = 0;
            if (__builtin_add_overflow(s[in.a].i, s[in.b].i, &next)) {
              pc = static_cast<std::size_t>(in.imm);
              continue;
            }
            s[in.a] = int_scalar(next);
            break;
          }
          case Opcode::CheckStep:
            if (s[in.a].as_int() == 0) fail(in, "the step is 0 (read at run time)");
            break;
          case Opcode::Collective:
            enter_collective(in);
            break;
        }
        ++pc;
        // A visible op (vm_opcodes.hpp): a data access, a notify, a
        // satisfied wait (a parked one returned above), a launch or join.
        if (stop_after_visible && opcode_has(in.op, kVisible)) {
          save();
          if (pc >= size) end_dispatch();
          return Outcome::Yield;
        }
      }
      save();
      end_dispatch();
    next_launch:;
    }
  } catch (const VmFailure& f) {
    save();
    error_ = f.message;
    return Outcome::Failed;
  } catch (const std::bad_alloc& e) {
    save();
    // Name the instruction that needed the memory when there is one.
    std::string where = "run error: " + agent_text(*ctx_->exec, agent_);
    if (in_dispatch_ && code_ && pc_ < code_->instrs.size())
      where = run_error_where(*ctx_->exec, rank_, site(code_->instrs[pc_]));
    const auto* refused = dynamic_cast<const OutOfMemory*>(&e);
    error_ = where + ": " +
             (refused ? std::string(refused->what())
                      : "out of memory (std::bad_alloc); the run (or its race checker) needs more "
                        "memory than this machine has at this P");
    return Outcome::Failed;
  } catch (const std::exception& e) {  // an InternalError, or anything else unexpected
    save();
    error_ = e.what();
    return Outcome::Failed;
  }
}

std::int64_t RankVm::peer_of(const Instr& in, std::int32_t reg, const ViewReg& v) const {
  const std::int64_t p = s_[reg].as_int();
  if (v.domain < 0) {
    if (p < 0 || p >= ctx_->exec->world_size) [[unlikely]]
      peer_out_of_range(in, p, v);
    return p;
  }
  const std::vector<std::int64_t>& group = domain_of(v).groups[static_cast<std::size_t>(v.group)];
  if (p < 0 || p >= static_cast<std::int64_t>(group.size())) [[unlikely]]
    peer_out_of_range(in, p, v);
  return group[static_cast<std::size_t>(p)];
}

void RankVm::peer_out_of_range(const Instr& in, std::int64_t p, const ViewReg& v) const {
  std::string msg = "peer " + std::to_string(p) + " is out of range [0, ";
  if (v.domain < 0) {
    msg += std::to_string(ctx_->exec->world_size) + ")";
  } else {
    const CommDomain& d = domain_of(v);
    msg += std::to_string(d.group_size) + ") of this rank's group " +
           group_text(d.groups[static_cast<std::size_t>(v.group)]) + " in domain '" + d.name +
           "' (window '" + ctx_->exec->buffers[static_cast<std::size_t>(v.id)].name +
           "'; a peer is an index into the group)";
  }
  if (p < 0) {
    const char* n = v.domain < 0 ? "P" : "G";  // a group's size: pld::nranks of its view
    msg += std::string("\n  hint: a negative peer usually comes from (r - 1) % ") + n +
           ", which C++ truncates to -1 at r = 0; write (r + " + n + " - 1) % " + n;
  }
  fail(in, msg);
}

RankVm::Index RankVm::offsets(const Instr& in, std::size_t from, std::size_t count) const {
  ANYP_CHECK(count <= kMaxRank, "more than kMaxRank offsets");
  Index out;
  for (std::size_t i = 0; i < count; ++i) out[i] = s_[in.idx[from + i]].as_int();
  return out;
}

std::string RankVm::memory_text(const ViewReg& v, std::int64_t owner) const {
  if (v.space == Space::Host)
    return "host tensor '" + ctx_->exec->host_args[static_cast<std::size_t>(v.id)].name + "'";
  return "rank " + std::to_string(owner) + "'s window '" +
         ctx_->exec->buffers[static_cast<std::size_t>(v.id)].name + "'";
}

void RankVm::check_region(const Instr& in, const ViewReg& v, std::int64_t owner,
                          std::span<const std::int64_t> offs, std::span<const std::int64_t> extent,
                          const char* role) const {
  for (std::size_t d = 0; d < v.extent.size(); ++d) {
    // (offs > shape - extent, not offs + extent > shape: a huge offset must
    // not overflow past the check)
    if (offs[d] < 0 || extent[d] > v.extent[d] || offs[d] > v.extent[d] - extent[d]) [[unlikely]]
      region_out_of_bounds(in, v, owner, offs, extent, role, d);
  }
}

void RankVm::region_out_of_bounds(const Instr& in, const ViewReg& v, std::int64_t owner,
                                  std::span<const std::int64_t> offs,
                                  std::span<const std::int64_t> extent, const char* role,
                                  std::size_t dim) const {
  fail(in, std::string("region out of bounds: offsets ") + list_text(offs) + " + shape " +
               list_text(extent) + " exceeds the " + role + " " + list_text(v.extent) + " (" +
               memory_text(v, owner) + (v.sliced ? ", a slice" : "") + ") in dim " +
               std::to_string(dim));
}

void RankVm::check_flat(const Instr& in, const ViewReg& v, std::int64_t owner, std::int64_t offset,
                        std::int64_t len) const {
  const std::int64_t n = v.elements;
  if (offset < 0 || len < 0 || len > n || offset > n - len) [[unlikely]]
    flat_out_of_bounds(in, v, owner, offset, len);
}

void RankVm::flat_out_of_bounds(const Instr& in, const ViewReg& v, std::int64_t owner,
                                std::int64_t offset, std::int64_t len) const {
  fail(in, "elements [" + std::to_string(offset) + ", " + std::to_string(offset + len) +
               ") are outside the " + std::to_string(v.elements) + "-element view " +
               list_text(v.shape) + " (" + memory_text(v, owner) + ")");
}

Region RankVm::flat_region(const Instr& in, const ViewReg& v, std::int64_t owner,
                           std::span<const std::int64_t, 1> flat_shape,
                           std::span<const std::int64_t, 1> offset,
                           std::span<const std::int64_t, 1> len) const {
  if (v.space == Space::Host && owner != rank_) [[unlikely]]
    fail(in, "a host tensor is not reachable from another rank");
  return Region::flat(v.space, v.id, v.space == Space::Window ? owner : -1, v.base, v.dtype,
                      flat_shape, offset, len);
}

Region RankVm::region(const Instr& in, const ViewReg& v, std::int64_t owner,
                      std::span<const std::int64_t> offs, std::span<const std::int64_t> extent,
                      std::span<const std::int64_t> shape) const {
  if (v.space == Space::Host && owner != rank_)
    fail(in, "a host tensor is not reachable from another rank");
  std::span<const std::int64_t> at = offs;
  if (v.sliced) {  // offsets in the slice: shift them to the memory's
    ANYP_CHECK(shape.empty(), "a reshaped region of a slice");
    std::array<std::int64_t, kMaxRank>& abs = absolute_[next_absolute_++ % absolute_.size()];
    for (std::size_t d = 0; d < offs.size(); ++d) abs[d] = v.origin[d] + offs[d];
    at = std::span<const std::int64_t>(abs.data(), offs.size());
  }
  return Region{v.space, v.id,    v.space == Space::Window ? owner : -1,
                v.base,  v.dtype, shape.empty() ? std::span<const std::int64_t>(v.shape) : shape,
                at,      extent};
}

Region RankVm::whole_region(const Instr& in, const ViewReg& v, std::int64_t owner) const {
  if (v.space == Space::Host && owner != rank_) [[unlikely]]
    fail(in, "a host tensor is not reachable from another rank");
  if (v.sliced) {
    return Region{v.space,
                  v.id,
                  v.space == Space::Window ? owner : -1,
                  v.base,
                  v.dtype,
                  v.shape,
                  std::span<const std::int64_t>(v.origin.data(), v.shape.size()),
                  v.extent};
  }
  return Region::whole(v.space, v.id, v.space == Space::Window ? owner : -1, v.base, v.dtype,
                       v.shape, v.elements);
}

std::string RankVm::cell_text(const ViewReg& v, const std::vector<std::int64_t>& idx) const {
  const std::string name = v.space == Space::Window
                               ? ctx_->exec->buffers[static_cast<std::size_t>(v.id)].name
                               : std::string("?");
  return "signal '" + name + "' cell " + list_text(idx) +
         (v.sliced ? " of a slice at " + list_text(std::span(v.origin.data(), v.shape.size()))
                   : "");
}

Cell RankVm::signal_cell(const Instr& in, const ViewReg& v, std::int64_t owner) const {
  if (v.space != Space::Window) [[unlikely]]
    fail(in, "a signal must be a window view, not a host tensor");
  std::int64_t flat = 0;
  const std::size_t n = in.idx.size();
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t i = s_[in.idx[d]].as_int();
    if (i < 0 || i >= v.extent[d]) [[unlikely]]
      cell_out_of_bounds(in, v, owner, d);
    flat = flat * v.shape[d] + v.origin[d] + i;
  }
  return Cell{owner, v.id, v.base + flat * 4};
}

void RankVm::cell_out_of_bounds(const Instr& in, const ViewReg& v, std::int64_t owner,
                                std::size_t dim) const {
  const std::size_t n = in.idx.size();
  const Index idx = offsets(in, 0, n);  // reported with the whole index
  Index one;
  one.fill(1);
  region_out_of_bounds(in, v, owner, std::span(idx.data(), n), std::span(one.data(), n), "signal",
                       dim);
}

std::byte* RankVm::shape_tile(TileReg& t, DType dtype, std::span<const std::int64_t> shape,
                              std::int64_t n) {
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.data.resize(static_cast<std::size_t>(n) * dtype_bytes(dtype));
  return t.data.data();
}

void RankVm::load(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const std::int64_t owner = in.op == Opcode::Load ? rank_ : peer_of(in, in.b, v);
  const Index offs = offsets(in, 0, in.idx.size());
  const std::span<const std::int64_t> at(offs.data(), in.idx.size());
  if (!in.valid.empty()) {  // a partial tile: read the valid region, pad with 0
    check_region(in, v, owner, at, in.valid, "source");
    const Region r = region(in, v, owner, at, in.valid);
    scratch_.resize(static_cast<std::size_t>(r.nbytes));
    ctx_->fabric->read(agent_, site(in), r, scratch_.data());
    std::byte* out = shape_tile(t_[in.dst], v.dtype, in.shape, element_count(in.shape));
    tile_embed(in.shape, dtype_bytes(v.dtype), in.valid, scratch_.data(), out);
    return;
  }
  check_region(in, v, owner, at, in.shape, "source");
  const Region r = region(in, v, owner, at, in.shape);
  ctx_->fabric->read(agent_, site(in), r, shape_tile(t_[in.dst], v.dtype, in.shape, r.elements()));
}

void RankVm::store(const Instr& in) {
  const bool remote = in.op == Opcode::RemoteStore;
  const TileReg& t = t_[remote ? in.c : in.a];
  const ViewReg& v = v_[remote ? in.a : in.b];
  const std::int64_t owner = remote ? peer_of(in, in.b, v) : rank_;
  const Index offs = offsets(in, 0, in.idx.size());
  const std::span<const std::int64_t> at(offs.data(), in.idx.size());
  ANYP_CHECK(t.dtype == v.dtype, "store of a tile into a view of another dtype");
  if (!in.valid.empty()) {  // a partial tile: write its top-left valid corner
    ANYP_CHECK(in.valid.size() == t.shape.size(), "store.valid of another rank");
    check_region(in, v, owner, at, in.valid, "target");
    const Region r = region(in, v, owner, at, in.valid);
    if (owner == rank_) guard_sources(in, r);
    scratch_.resize(static_cast<std::size_t>(r.nbytes));
    const std::vector<std::int64_t> origin(t.shape.size(), 0);
    runtime::tile_slice(t.shape, dtype_bytes(t.dtype), origin, in.valid, t.data.data(),
                        scratch_.data());
    ctx_->fabric->write(agent_, site(in), r, scratch_.data(), remote && is_atomic(in));
    return;
  }
  check_region(in, v, owner, at, t.shape, "target");
  const Region r = region(in, v, owner, at, t.shape);
  if (owner == rank_) guard_sources(in, r);
  ctx_->fabric->write(agent_, site(in), r, t.data.data(), remote && is_atomic(in));
}

void RankVm::read_or_write(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const Index idx = offsets(in, 0, in.idx.size());
  const std::span<const std::int64_t> at(idx.data(), in.idx.size());
  Index ones{};
  ones.fill(1);
  const std::span<const std::int64_t> one(ones.data(), in.idx.size());
  check_region(in, v, rank_, at, one, "tensor");
  const Region r = region(in, v, rank_, at, one);
  std::byte cell[8];
  if (in.op == Opcode::Read) {
    ctx_->fabric->read(agent_, site(in), r, cell);
    s_[in.dst] = dtype_is_float(v.dtype) ? float_scalar(decode_element(cell, v.dtype))
                                         : int_scalar(decode_integer(cell, v.dtype));
  } else {
    guard_sources(in, r);
    const ScalarValue& x = s_[in.b];
    if (x.is_float) {
      encode_element(cell, v.dtype, x.f);
    } else {
      encode_integer(cell, v.dtype, x.i);
    }
    ctx_->fabric->write(agent_, site(in), r, cell, false);
  }
}

void RankVm::transfer(const Instr& in, bool is_put) {
  const ViewReg& dst = v_[in.a];
  const ViewReg& src = v_[in.c];
  const std::int64_t peer = peer_of(in, in.b, is_put ? dst : src);  // the remote side's view
  const std::int64_t dst_owner = is_put ? peer : rank_, src_owner = is_put ? rank_ : peer;
  if (in.shape.empty()) {  // whole views, of one shape (checked when compiled)
    ANYP_CHECK(
        std::equal(dst.extent.begin(), dst.extent.end(), src.extent.begin(), src.extent.end()),
        "a whole-view put/get between views of different shapes");
    const Region d = whole_region(in, dst, dst_owner);
    if (dst_owner == rank_) guard_sources(in, d);
    ctx_->fabric->copy(agent_, site(in), d, whole_region(in, src, src_owner), is_atomic(in));
    return;
  }
  const std::size_t nd = dst.shape.size(), ns = src.shape.size();
  const Index doff = offsets(in, 0, nd), soff = offsets(in, nd, ns);
  const std::span<const std::int64_t> dat(doff.data(), nd), sat(soff.data(), ns);
  check_region(in, dst, dst_owner, dat, in.shape, "destination");
  check_region(in, src, src_owner, sat, in.shape, "source");
  const Region d = region(in, dst, dst_owner, dat, in.shape);
  if (dst_owner == rank_) guard_sources(in, d);
  ctx_->fabric->copy(agent_, site(in), d, region(in, src, src_owner, sat, in.shape), is_atomic(in));
}

void RankVm::check_no_puts_in_flight() {
  if (!pending_.empty()) {
    const PendingPut p = pending_.front();
    pending_.clear();
    fail(*p.issued, "the kernel ended with this put in flight (event " + std::to_string(p.event) +
                        "); wait for it with pld::system::wait_async before the kernel returns");
  }
}

void RankVm::end_dispatch() {
  check_no_puts_in_flight();
  in_dispatch_ = false;
  if (block_ == 0) release_dispatch((*dispatches_)[dispatch_]);
  ++dispatch_;
}

void RankVm::put_async(const Instr& in) {
  PendingPut p;
  p.dst = v_[in.a];
  p.src = v_[in.c];
  p.peer = peer_of(in, in.b, p.dst);
  p.issued = &in;
  const std::size_t nd = p.dst.shape.size(), ns = p.src.shape.size();
  if (!in.shape.empty()) {
    p.dst_offsets = offsets(in, 0, nd);
    p.src_offsets = offsets(in, nd, ns);
  }
  const auto [dst, src] = put_regions(p, true);
  src.for_each_row([&](std::int64_t at, std::int64_t n) { p.src_bytes.emplace_back(at, at + n); });
  if (p.peer == rank_) guard_sources(in, dst);
  p.event = next_event_++;
  s_[in.dst] = int_scalar(p.event);
  pending_.push_back(std::move(p));
}

void RankVm::wait_async(const Instr& in) {
  const std::int64_t event = s_[in.a].as_int();
  const auto it = std::find_if(pending_.begin(), pending_.end(),
                               [&](const PendingPut& p) { return p.event == event; });
  if (it == pending_.end()) {
    fail(in, "event " + std::to_string(event) +
                 " is not a put_async in flight: it was waited for already, or it is not the "
                 "event of a pld::tensor::put_async of this kernel");
  }
  const PendingPut p = *it;
  pending_.erase(it);
  // The transfer itself, at the latest moment the program allows, in the
  // put's name.
  const auto [dst, src] = put_regions(p, false);
  if (p.peer == rank_) guard_sources(*p.issued, dst);  // the source of another put in flight
  ctx_->fabric->copy(agent_, site(*p.issued), dst, src, false);
}

std::pair<Region, Region> RankVm::put_regions(const PendingPut& p, bool check) const {
  const Instr& put = *p.issued;
  const std::size_t nd = p.dst.shape.size(), ns = p.src.shape.size();
  const std::span<const std::int64_t> dat(p.dst_offsets.data(), nd), sat(p.src_offsets.data(), ns);
  const std::span<const std::int64_t> dext = put.shape.empty() ? p.dst.extent : put.shape;
  const std::span<const std::int64_t> sext = put.shape.empty() ? p.src.extent : put.shape;
  if (check) {
    ANYP_CHECK(element_count(dext) == element_count(sext), "a put_async of unequal extents");
    check_region(put, p.dst, p.peer, dat, dext, "destination");
    check_region(put, p.src, rank_, sat, sext, "source");
  }
  return {region(put, p.dst, p.peer, dat, dext), region(put, p.src, rank_, sat, sext)};
}

void RankVm::check_sources(const Instr& in, const Region& w) const {
  for (const PendingPut& p : pending_) {
    const bool same =
        p.src.space == w.space && p.src.id == w.id && (w.space == Space::Host || w.owner == rank_);
    if (!same || p.src_bytes.empty() || w.end <= p.src_bytes.front().first ||
        p.src_bytes.back().second <= w.first)
      continue;
    bool overlaps = false;
    w.for_each_row([&](std::int64_t at, std::int64_t n) {
      for (const auto& [b, e] : p.src_bytes) overlaps = overlaps || (at < e && b < at + n);
    });
    if (overlaps) {
      const Site& s = code_->sites[p.issued->site];
      fail(in, "it writes " + memory_text(p.src, rank_) +
                   ", the source of the pld.tensor.put_async in function '" + s.function +
                   "' (event " + std::to_string(p.event) +
                   ") still in flight; call pld::system::wait_async on its event before writing "
                   "the source");
    }
  }
}

void RankVm::flat_op(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const std::int64_t peer = peer_of(in, in.b, v);
  const std::array<std::int64_t, 1> flat_shape{v.elements};
  const std::array<std::int64_t, 1> offset{s_[in.idx[0]].as_int()};
  switch (in.op) {
    case Opcode::LoadFlat: {
      const std::array<std::int64_t, 1> len{s_[in.idx[1]].as_int()};
      check_flat(in, v, peer, offset[0], len[0]);
      const Region r = flat_region(in, v, peer, flat_shape, offset, len);
      ctx_->fabric->read(agent_, site(in), r, shape_tile(t_[in.dst], v.dtype, len, len[0]));
      return;
    }
    case Opcode::StoreFlat: {
      const TileReg& t = t_[in.c];
      ANYP_CHECK(t.dtype == v.dtype, "store.flat of a tile into a view of another dtype");
      const std::array<std::int64_t, 1> len{t.elements()};
      check_flat(in, v, peer, offset[0], len[0]);
      const Region r = flat_region(in, v, peer, flat_shape, offset, len);
      if (peer == rank_) guard_sources(in, r);
      ctx_->fabric->write(agent_, site(in), r, t.data.data(), false);
      return;
    }
    case Opcode::PutFlat: {
      const ViewReg& src = v_[in.c];
      const std::array<std::int64_t, 1> src_shape{src.elements};
      const std::array<std::int64_t, 1> src_offset{s_[in.idx[1]].as_int()};
      const std::array<std::int64_t, 1> len{s_[in.idx[2]].as_int()};
      check_flat(in, v, peer, offset[0], len[0]);
      check_flat(in, src, rank_, src_offset[0], len[0]);
      const Region d = flat_region(in, v, peer, flat_shape, offset, len);
      const Region s = flat_region(in, src, rank_, src_shape, src_offset, len);
      if (peer == rank_) guard_sources(in, d);
      ctx_->fabric->copy(agent_, site(in), d, s, false);
      return;
    }
    default:
      ANYP_UNREACHABLE(std::string("flat_op on ") + opcode_name(in.op));
  }
}

void RankVm::notify(const Instr& in) {
  const std::int64_t peer = peer_of(in, in.b, v_[in.a]);
  const Cell cell = signal_cell(in, v_[in.a], peer);
  if (peer == rank_ && !pending_.empty()) {  // the cell may be a put_async's source
    const ViewReg& v = v_[in.a];
    const std::array<std::int64_t, 1> all{element_count(v.shape)}, at{(cell.offset - v.base) / 4},
        one{1};
    guard_sources(in, Region::flat(Space::Window, v.id, rank_, v.base, DType::INT32, all, at, one));
  }
  const std::int64_t value = s_[in.c].as_int();
  if (value < INT32_MIN || value > INT32_MAX) {
    fail(in, "notify value " + std::to_string(value) +
                 " does not fit the INT32 signal cell (range [-2147483648, 2147483647])");
  }
  ctx_->fabric->notify(agent_, site(in), cell, static_cast<ir::NotifyKind>(in.sub),
                       static_cast<std::int32_t>(value));
}

bool RankVm::wait(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const Cell cell = signal_cell(in, v, rank_);
  // Two pointers of capture: the std::function below keeps it inline (no
  // allocation per wait).
  auto describe = [this, &in] {
    const Site& s = code_->sites[in.site];
    const Index idx = offsets(in, 0, in.idx.size());
    return "function '" + s.function + "', op " + s.op + ": waits for " +
           cell_text(v_[in.a], std::vector<std::int64_t>(idx.begin(), idx.begin() + in.idx.size()));
  };
  return ctx_->fabric->wait(agent_, site(in), cell, static_cast<ir::WaitKind>(in.sub),
                            s_[in.b].as_int(), describe);
}

void RankVm::enter_collective(const Instr& in) {
  const CollectiveDesc& d = code_->collectives[static_cast<std::size_t>(in.imm)];
  for (std::size_t i = 0; i < d.views.size(); ++i) {
    if (v_[d.views[i]].sliced) {
      fail(in, "the " + d.roles[i] +
                   " is a pl::tensor::slice; a builtin collective takes whole views (pass a "
                   "pld::window view, a sub-window at an offset if need be)");
    }
  }
  for (std::size_t i = 0; i < d.views.size(); ++i) {
    const ViewReg& a = v_[d.views[i]];
    if (a.space != Space::Window) continue;
    const WindowSpan sa = window_span(a.id, a.base, a.dtype, a.shape);
    for (std::size_t j = i + 1; j < d.views.size(); ++j) {
      const ViewReg& b = v_[d.views[j]];
      if (b.space == Space::Window && sa.overlaps(window_span(b.id, b.base, b.dtype, b.shape))) {
        fail(in, shared_window_message(d.roles[i], d.roles[j],
                                       ctx_->exec->buffers[static_cast<std::size_t>(a.id)].name));
      }
    }
  }
  const ViewReg& signal = v_[d.views.back()];
  if (signal.space != Space::Window) fail(in, "the signal must be a window view");
  // The windows every rank's matching call must name alike: buffer and, for
  // a sub-window, its byte offset (a collective addresses a peer's window
  // through this rank's view, so the views must be the same on every rank).
  CallWindows windows;
  for (std::size_t i = 0; i < d.views.size(); ++i) {
    const ViewReg& v = v_[d.views[i]];
    if (v.space != Space::Window) continue;
    const bool is_signal = i + 1 == d.views.size();
    if (is_signal && v.base == 0) continue;  // the signal buffer keys the call sequence
    windows.add(CallWindows::Operand{static_cast<std::int32_t>(i), v.id, v.base});
  }
  if (launch_index_ != 0) return;  // a multi-block collective is one call of block 0's
  const std::string mismatch = ctx_->collectives->enter(rank_, signal.id, d, windows, site(in));
  if (!mismatch.empty()) fail(in, mismatch);
}

void RankVm::scalar_bin(const Instr& in) {
  std::string error;
  const std::optional<ScalarValue> r =
      scalar_binary(static_cast<ir::BinaryOp>(in.sub), s_[in.a], s_[in.b], in.dtype, &error);
  if (!r) fail(in, error);
  s_[in.dst] = *r;
}

void RankVm::check_count(const Instr& in) const {
  const std::int64_t count = s_[in.a].as_int(), row = s_[in.b].as_int();
  if (count < 0 || count > row) {
    fail(in, "send count " + std::to_string(count) + " is out of range [0, " + std::to_string(row) +
                 "] (the row length)");
  }
}

}  // namespace anyp::runtime
