// rank_vm_blocks.cpp — the rank VM's block launches (pl::blocks(n)): block
// 0 fills the rank's launch slot and Sets each block's launch cell; a block
// between launches waits on its cell, enters the launched code with a copy
// of block 0's registers and Adds into the join cell at the end; block 0
// waits for the join and clears it. The cells are real notifies and waits
// at the door, so the race checker, the threads engine's signal table and the timeline
// see them.
#include "common/internal_check.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::runtime {

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
    return "function '" + s.function + "', op " + s.located_op() + ": waits for " + others +
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

}  // namespace anyp::runtime
