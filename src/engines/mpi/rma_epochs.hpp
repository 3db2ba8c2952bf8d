// rma_epochs.hpp — the MPI fabric's epoch policy (mpi_fabric.hpp): when
// what one rank issued into the MPI window completes. It tracks, per peer,
// the puts, atomic adds and credits not yet flushed (and the window bytes
// they touch), keeps the origins MPI may still read (staged copies of
// small puts, deferred notify values), and decides every MPI_Win_flush:
//
//   data before signal  every peer with puts or adds outstanding is flushed
//                       before a notify (MPI_Win_sync first if the rank
//                       stored into its own window since the last one)
//   program order       a put, get or add touching bytes of an unflushed
//                       put, add or credit to one peer flushes that peer
//   credits             an AtomicAdd into a credit-only buffer (positive to
//                       a peer, any to the own cell) completes only before
//                       the rank reads its own cells (its own) or blocks (a
//                       peer's), so the P - 1 credits of a barrier complete
//                       together; any other notify completes at once
//   origins             a put from the caller's buffer completes locally
//                       before it returns; one from local memory before that
//                       memory is next written; a staged copy lives until
//                       its peer is flushed
#pragma once

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "ir/op_attrs.hpp"
#include "runtime/executable.hpp"
#include "runtime/region.hpp"

namespace anyp::mpi {

class RmaEpochs {
 public:
  RmaEpochs(const runtime::Executable& exec, std::int64_t rank, MPI_Win win);

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
  // Completes the puts whose origin is local memory (before that memory is written).
  void complete_local() {
    if (local_pending_) complete_local_now();
  }
  // After a write of window region dst: a store into the own window is
  // synced (MPI_Win_sync) before the rank's next notify.
  void wrote(const runtime::Region& dst) {
    own_stores_ = own_stores_ || (dst.space != runtime::Space::Host && dst.owner == rank_);
  }
  // Issues a notify to `cell`: data before signal, then the MPI_Accumulate
  // (SUM or REPLACE), completed now or, for a credit, deferred.
  void notify(const runtime::Cell& cell, ir::NotifyKind kind, std::int32_t value);
  // Completes this rank's notifies to its own cells (before it reads them).
  void settle_own_signals() {
    if (own_signals_pending_) settle_own_signals_now();
  }
  // Before a direct access of region r: settle_own_signals() when r lies in
  // one of this rank's own signal buffers.
  void before_own_access(const runtime::Region& r) {
    if (own_signals_pending_ && r.space == runtime::Space::Window && r.owner == rank_ &&
        exec_.buffers[static_cast<std::size_t>(r.id)].signal)
      settle_own_signals_now();
  }
  // Completes everything outstanding (between VM slices, so that a rank
  // that computes for long delays no peer's credit).
  void flush_outstanding();
  // Completes every put, atomic add and notify this rank issued.
  void flush_all();

 private:
  void flush_peer(std::int64_t peer);
  void settled(std::int64_t peer);  // nothing outstanding to `peer` any more
  // Records window bytes [range) of an operation issued to `peer`: data (a
  // put or atomic add) or a notify.
  void note_outstanding(std::int64_t peer, std::pair<std::int64_t, std::int64_t> range, bool data);
  // [begin, end) bytes of window region r in its owner's window.
  std::pair<std::int64_t, std::int64_t> window_range(const runtime::Region& r) const;
  void complete_local_now();
  void flush_data();  // remote completion of every put and atomic add issued
  void settle_own_signals_now();

  const runtime::Executable& exec_;
  std::int64_t rank_;
  MPI_Win win_;
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
};

}  // namespace anyp::mpi
