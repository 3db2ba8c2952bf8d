// mpi_fabric.hpp — the MPI engine's door (runtime::Fabric) for the one rank
// this process runs. Every rank's window is one MPI window (window.hpp);
// host arguments are this process's own copies.
//
//   own window        plain loads and stores on the local memory
//   a peer's window   MPI_Get / MPI_Put, strided regions as one derived
//                     datatype (region_types.hpp); a put of a tile up to
//                     64 KiB is copied and completes at the next flush, a
//                     put from local memory before that memory is written
//   atomic add        MPI_Accumulate(MPI_SUM) (FP16/BF16: compare-and-swap)
//   notify            flush every peer with puts outstanding, MPI_Win_sync
//                     if the rank stored into its own window since the last
//                     one, MPI_Accumulate (SUM or REPLACE) on the cell and
//                     a flush of it; a credit (an AtomicAdd into a
//                     credit-only buffer: positive to a peer, any to the own
//                     cell) is flushed only before the rank reads its own
//                     cells (its own) or blocks (a peer's), so the P - 1
//                     credits of a barrier complete together
//   wait              MPI_Win_sync + an acquire load of the own cell until
//                     the comparison holds; MPI_Iprobe every 64 polls to
//                     drive progress, sched_yield when oversubscribed; past
//                     a grace period the rank joins quiescence waves and
//                     gives up when they find the run over (deadlock or a
//                     failure elsewhere)
// So a rank's data reaches a peer before any signal it sends after it
// (docs/ladder-steps.md §7), and a rank's own accesses to one peer location stay in
// program order (a put, get or add touching bytes of an unflushed put or
// add flushes that peer first): the epoch policy, rma_epochs.hpp. The fabric also
// keeps what the end of the run needs (run_record.hpp): the host bytes this rank
// wrote, and what its notifies did to each cell.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "anyp/host_tensor.hpp"
#include "engines/mpi/quiescence.hpp"
#include "engines/mpi/region_types.hpp"
#include "engines/mpi/rma_epochs.hpp"
#include "engines/mpi/run_record.hpp"
#include "runtime/executable.hpp"
#include "runtime/fabric.hpp"

namespace anyp::mpi {

// The wait a rank was blocked in when the run stopped.
struct BlockedWait {
  std::string where;
  ir::WaitKind cmp = ir::WaitKind::Eq;
  std::int64_t expected = 0;
  std::int32_t current = 0;
  runtime::Cell cell;
};

struct FabricSettings {
  bool oversubscribed = false;
  std::chrono::milliseconds grace{50};  // blocked this long before joining waves
  std::atomic<std::uint64_t>* heartbeat = nullptr;
};

class MpiFabric final : public runtime::Fabric {
 public:
  MpiFabric(const runtime::Executable& exec, std::span<const HostTensor* const> host_args,
            std::int64_t rank, MPI_Win win, std::byte* local, Quiescence& waves,
            FabricSettings settings);

  // Drives MPI progress (between VM slices, and while finished).
  void poke();
  // Completes everything outstanding (between VM slices, so that a rank
  // that computes for long delays no peer's credit).
  void flush_outstanding() { epochs_.flush_outstanding(); }
  // Completes every put, atomic add and notify this rank issued.
  void flush_all() { epochs_.flush_all(); }
  // Sets this rank's copy of window buffer `id` to 0 (the launch cells of a
  // multi-block program, before its VMs run: only this rank's blocks use
  // them, and a failed run of a session may have left them set).
  void zero_own_buffer(std::int32_t id);
  // Bumped whenever a wait of this rank is satisfied.
  std::uint64_t progress() const { return progress_; }
  // Set when a wait gave up because the waves ended the run.
  Quiescence::Verdict verdict() const { return verdict_; }
  const std::optional<BlockedWait>& blocked() const { return blocked_; }
  std::int64_t blocked_waits() const { return blocked_waits_; }

  // A rank of a multi-block program runs its blocks (agents) round-robin in
  // this process: a wait that does not hold returns false at once, so the
  // engine can run the rank's other blocks, and each block's last such
  // wait is kept for a deadlock report.
  void set_blocks(std::int64_t blocks) { block_waits_.resize(static_cast<std::size_t>(blocks)); }
  bool has_blocks() const { return !block_waits_.empty(); }
  // One round of a stall, between two polls of the waited cells (a blocked
  // wait's, or every unfinished block's of a multi-block rank): flush,
  // drive MPI progress, past the grace period a quiescence wave. Returns
  // the verdict (Continue: go on polling).
  Quiescence::Verdict stalled();
  // A block moved on: the next stall starts its grace period afresh.
  void unstalled() {
    stall_polls_ = 0;
    in_waves_ = false;
  }
  // The wait each block was last refused, by block (empty: none).
  const std::vector<std::optional<BlockedWait>>& block_waits() const { return block_waits_; }
  void forget_block_wait(std::int64_t block) {
    block_waits_[static_cast<std::size_t>(block)].reset();
  }
  // What the run did that its end needs: notify tallies, signal cells
  // written as data, host bytes written and read.
  const RunRecord& record() const { return record_; }

 protected:
  void do_read(const runtime::Region& src, std::byte* out) override;
  void do_write(std::int64_t agent, const runtime::Region& dst, const std::byte* in,
                bool atomic_add) override;
  void do_copy(std::int64_t agent, const runtime::Region& dst, const runtime::Region& src,
               bool atomic_add) override;
  void do_notify(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
                 ir::NotifyKind kind, std::int32_t value) override;
  bool do_wait(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
               ir::WaitKind cmp, std::int64_t expected,
               const std::function<std::string()>& describe) override;

 private:
  bool is_local(const runtime::Region& r) const {
    return r.space == runtime::Space::Host || r.owner == rank_;
  }
  // The first byte of a local region's buffer (own window) or argument.
  std::byte* memory(const runtime::Region& r) const;
  // Byte displacement of a window buffer's byte `offset` in the window.
  MPI_Aint displacement(const runtime::Region& r, std::int64_t offset) const;
  void read_local(const runtime::Region& src, std::byte* out);
  void write_local(const runtime::Region& dst, const std::byte* in, bool atomic_add);
  // Adds the contiguous elements `in` into window region dst (any owner).
  void accumulate(const runtime::Region& dst, const std::byte* in);
  // FP16/BF16: MPI cannot add them, so element by element with
  // MPI_Compare_and_swap on the 16-bit pattern.
  void accumulate_by_swap(const runtime::Region& dst, const std::byte* in);
  using Origin = RmaEpochs::Origin;
  // After a write of region dst: its epoch (own window stores) and its record.
  void note_writes(const runtime::Region& dst) {
    epochs_.wrote(dst);
    record_.note_write(dst);
  }
  std::int32_t* cell_address(const runtime::Cell& c) const;

  const runtime::Executable& exec_;
  std::span<const HostTensor* const> host_args_;
  std::int64_t rank_;
  MPI_Win win_;
  std::byte* local_;
  Quiescence& waves_;
  FabricSettings settings_;
  RegionTypes types_;
  RmaEpochs epochs_;
  RunRecord record_;
  std::uint64_t progress_ = 0;
  std::int64_t blocked_waits_ = 0;
  Quiescence::Verdict verdict_ = Quiescence::Verdict::Continue;
  std::optional<BlockedWait> blocked_;
  // Multi-block runs (set_blocks): per block, its last refused wait. Any
  // stall (stalled()): its polls, its start, and whether it joined the waves.
  std::vector<std::optional<BlockedWait>> block_waits_;
  std::uint64_t stall_polls_ = 0;
  std::chrono::steady_clock::time_point stall_since_{};
  bool in_waves_ = false;
};

}  // namespace anyp::mpi
