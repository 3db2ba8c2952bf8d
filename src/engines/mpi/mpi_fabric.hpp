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
// add flushes that peer first). The fabric also keeps what the end of the run needs:
// the host bytes this rank wrote, and what its notifies did to each cell.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anyp/host_tensor.hpp"
#include "engines/mpi/quiescence.hpp"
#include "engines/mpi/region_types.hpp"
#include "runtime/deadlock_report.hpp"
#include "runtime/executable.hpp"
#include "runtime/fabric.hpp"

namespace anyp::mpi {

// Bytes of a host argument: [offset, offset + bytes).
struct HostRange {
  std::int32_t arg = -1;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
};

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
  void flush_outstanding();
  // Completes every put, atomic add and notify this rank issued.
  void flush_all();
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
  // What this rank's notifies did to `cell` (rank = this rank).
  runtime::NotifierTally notified(const runtime::Cell& cell) const;
  // True when this rank wrote `cell`'s bytes as data (a put, a store).
  bool wrote_as_data(const runtime::Cell& cell) const { return data_writes_.count(cell) != 0; }
  // The host-tensor bytes this rank wrote, and read, sorted and coalesced.
  std::vector<HostRange> host_writes() const { return ranges(host_writes_); }
  std::vector<HostRange> host_reads() const { return ranges(host_reads_); }

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
  // Where an outgoing put's (or atomic add's) bytes come from, and so when
  // MPI may still be reading them.
  enum class Origin : std::uint8_t {
    Caller,       // the caller's buffer (a tile): complete locally before returning
    Staged,       // a copy the fabric keeps until the peer is flushed
    LocalMemory,  // the rank's window or a host tensor: complete before it is next written
  };
  // A copy of `in` that lives until the next flush; nullptr above 64 KiB.
  const std::byte* stage(const std::byte* in, std::int64_t bytes);
  // After a put or atomic add into `dst` (a peer's window): its completion,
  // per its origin; the peer stays dirty until flushed.
  void issued(const runtime::Region& dst, Origin origin);
  // Before a put, get or atomic add on `r` in a peer's window: MPI orders
  // none of them against an earlier put, atomic add or notify to the same
  // bytes in the epoch, so flush the peer if one is outstanding there.
  void order_after_pending(const runtime::Region& r);
  void flush_peer(std::int64_t peer);
  void settled(std::int64_t peer);  // nothing outstanding to `peer` any more
  // Records window bytes [range) of an operation issued to `peer`: data (a
  // put or atomic add) or a notify.
  void note_outstanding(std::int64_t peer, std::pair<std::int64_t, std::int64_t> range, bool data);
  // [begin, end) bytes of window region r in its owner's window.
  std::pair<std::int64_t, std::int64_t> window_range(const runtime::Region& r) const;
  // Completes the puts whose origin is local memory (before that memory is written).
  void complete_local();
  void flush_data();  // remote completion of every put and atomic add issued
  // Completes this rank's notifies to its own cells (before it reads them).
  void settle_own_signals();
  // Before a direct access of region r: settle_own_signals() when r lies in
  // one of this rank's own signal buffers.
  void before_own_access(const runtime::Region& r);
  void note_writes(const runtime::Region& dst);  // host bytes and signal cells written as data
  // Per host argument: byte ranges [offset, offset + bytes).
  using HostRanges = std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>>;
  static void note_host(HostRanges& ranges, const runtime::Region& r);
  static std::vector<std::pair<std::int64_t, std::int64_t>> coalesce(
      std::vector<std::pair<std::int64_t, std::int64_t>> list);
  static std::vector<HostRange> ranges(const HostRanges& by_arg);
  std::int32_t* cell_address(const runtime::Cell& c) const;

  const runtime::Executable& exec_;
  std::span<const HostTensor* const> host_args_;
  std::int64_t rank_;
  MPI_Win win_;
  std::byte* local_;
  Quiescence& waves_;
  FabricSettings settings_;
  RegionTypes types_;
  // Per peer: what this rank issued to it and has not flushed. Data must be
  // complete before this rank's next notify (to any peer: a third rank may
  // learn of the data through it); notifies before the rank blocks.
  struct Outstanding {
    bool data = false;
    bool signals = false;
    bool in_data_peers = false, in_signal_peers = false;        // listed below
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges;  // window bytes of both
  };
  std::vector<Outstanding> outstanding_;
  // The peers that got data / credits since the last flush of that kind,
  // each once (a peer flushed since is skipped).
  std::vector<std::int64_t> data_peers_, signal_peers_;
  // The values of notifies not yet flushed (MPI reads them until then);
  // never grows past its capacity, so the addresses stay put.
  std::vector<std::int32_t> notify_values_;
  std::unique_ptr<std::byte[]> staging_;  // Origin::Staged copies
  std::int64_t staged_bytes_ = 0;         // in use, from the start
  bool local_pending_ = false;            // an Origin::LocalMemory put not yet complete
  bool own_stores_ = false;               // stores into the own window since the last MPI_Win_sync
  bool own_signals_pending_ = false;      // notifies to own cells not yet flushed
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
  std::unordered_map<runtime::Cell, runtime::NotifierTally, runtime::CellHash> notified_;
  std::set<runtime::Cell> data_writes_;
  HostRanges host_writes_, host_reads_;
};

}  // namespace anyp::mpi
