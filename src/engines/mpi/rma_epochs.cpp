// rma_epochs.cpp — when the MPI fabric's puts, atomic adds and notifies
// complete: outstanding operations per peer, staged origins, the flushes.
#include "engines/mpi/rma_epochs.hpp"

#include <algorithm>
#include <cstring>

#include "engines/mpi/mpi_world.hpp"

namespace anyp::mpi {

using runtime::Region;

namespace {

constexpr std::int64_t kStageBytes = 64 * 1024;            // larger puts complete at once
constexpr std::int64_t kStagedBytesMax = 4 * 1024 * 1024;  // staged before a forced flush
constexpr std::size_t kPendingRanges = 16;   // unflushed ranges kept per peer before merging
constexpr std::size_t kNotifyValues = 1024;  // notifies outstanding before a forced flush

}  // namespace

RmaEpochs::RmaEpochs(const runtime::Executable& exec, std::int64_t rank, MPI_Win win)
    : exec_(exec), rank_(rank), win_(win), outstanding_(static_cast<std::size_t>(exec.world_size)) {
  notify_values_.reserve(kNotifyValues);
}

const std::byte* RmaEpochs::stage(const std::byte* in, std::int64_t bytes) {
  if (bytes > kStageBytes) return nullptr;
  // Allocated on first use, not zeroed (the pages are touched only as used).
  if (!staging_) staging_.reset(new std::byte[static_cast<std::size_t>(kStagedBytesMax)]);
  if (staged_bytes_ + bytes > kStagedBytesMax) flush_data();  // releases what is staged
  std::byte* copy = staging_.get() + staged_bytes_;
  std::memcpy(copy, in, static_cast<std::size_t>(bytes));
  staged_bytes_ += (bytes + 15) / 16 * 16;
  return copy;
}

std::pair<std::int64_t, std::int64_t> RmaEpochs::window_range(const Region& r) const {
  const std::int64_t buffer = exec_.buffers[static_cast<std::size_t>(r.id)].offset;
  return {buffer + r.first, buffer + r.end};
}

void RmaEpochs::order_after_pending(const Region& r) {
  const Outstanding& o = outstanding_[static_cast<std::size_t>(r.owner)];
  if (!o.data && !o.signals) return;
  const auto [lo, hi] = window_range(r);
  for (const auto& [plo, phi] : o.ranges) {
    if (plo < hi && lo < phi) {
      flush_peer(r.owner);
      return;
    }
  }
}

void RmaEpochs::flush_peer(std::int64_t peer) {
  check_mpi(MPI_Win_flush(static_cast<int>(peer), win_), "MPI_Win_flush");
  settled(peer);
}

void RmaEpochs::settled(std::int64_t peer) {
  Outstanding& o = outstanding_[static_cast<std::size_t>(peer)];
  o.data = o.signals = false;
  o.ranges.clear();
}

void RmaEpochs::note_outstanding(std::int64_t peer, std::pair<std::int64_t, std::int64_t> range,
                                 bool data) {
  Outstanding& o = outstanding_[static_cast<std::size_t>(peer)];
  if (o.ranges.size() < kPendingRanges) {
    o.ranges.push_back(range);
  } else {  // many: one bounding range (flushes more often, never less)
    for (const auto& [lo, hi] : o.ranges)
      range = {std::min(range.first, lo), std::max(range.second, hi)};
    o.ranges.assign(1, range);
  }
  (data ? o.data : o.signals) = true;
  bool& listed = data ? o.in_data_peers : o.in_signal_peers;
  if (!listed) {
    listed = true;
    (data ? data_peers_ : signal_peers_).push_back(peer);
  }
}

void RmaEpochs::issued(const Region& dst, Origin origin) {
  note_outstanding(dst.owner, window_range(dst), true);
  if (origin == Origin::Caller) {
    // The caller's buffer may change as soon as we return.
    check_mpi(MPI_Win_flush_local(static_cast<int>(dst.owner), win_), "MPI_Win_flush_local");
  } else if (origin == Origin::LocalMemory) {
    local_pending_ = true;  // complete before this rank next writes local memory
  }
}

void RmaEpochs::complete_local_now() {
  check_mpi(MPI_Win_flush_local_all(win_), "MPI_Win_flush_local_all");
  local_pending_ = false;
}

void RmaEpochs::flush_data() {
  for (const std::int64_t peer : data_peers_) {
    Outstanding& o = outstanding_[static_cast<std::size_t>(peer)];
    if (o.data) flush_peer(peer);
    o.in_data_peers = false;
  }
  data_peers_.clear();
  // Every put went to a peer just flushed: their origins are free.
  staged_bytes_ = 0;
  local_pending_ = false;
}

void RmaEpochs::settle_own_signals_now() {
  check_mpi(MPI_Win_flush(static_cast<int>(rank_), win_), "MPI_Win_flush");
  own_signals_pending_ = false;
}

void RmaEpochs::notify(const runtime::Cell& cell, ir::NotifyKind kind, std::int32_t value) {
  flush_data();       // data before signal
  if (own_stores_) {  // and this agent's stores into its own window, which peers may get
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    own_stores_ = false;
  }
  const int owner = static_cast<int>(cell.owner);
  const MPI_Aint disp = static_cast<MPI_Aint>(
      exec_.buffers[static_cast<std::size_t>(cell.buffer)].offset + cell.offset);
  const MPI_Op op = kind == ir::NotifyKind::Set ? MPI_REPLACE : MPI_SUM;
  const bool own = cell.owner == rank_;
  // A credit (an AtomicAdd into a buffer the program uses only for credits:
  // a positive one to a peer, any to the own cell) can only make waits
  // true, whatever order it lands in: it completes with the rank's other
  // outstanding operations before the rank blocks or ends (the own cell's
  // before the rank reads its cells), so the P - 1 credits of a barrier
  // complete together. Any other notify may be read as data through a
  // later notify (a Set count, a counter read after a barrier), so it
  // completes now, before anything the rank does next.
  const bool credit = kind == ir::NotifyKind::AtomicAdd &&
                      exec_.buffers[static_cast<std::size_t>(cell.buffer)].credit_only &&
                      (own || value > 0);
  if (!credit) {
    check_mpi(MPI_Accumulate(&value, 1, MPI_INT32_T, owner, disp, 1, MPI_INT32_T, op, win_),
              "MPI_Accumulate");
    check_mpi(MPI_Win_flush(owner, win_), "MPI_Win_flush");
    if (own) {
      own_signals_pending_ = false;  // the flush completed those too
    } else {
      settled(cell.owner);
    }
  } else {
    // The value must outlive the call until the flush.
    if (notify_values_.size() == notify_values_.capacity()) flush_outstanding();
    notify_values_.push_back(value);
    check_mpi(MPI_Accumulate(&notify_values_.back(), 1, MPI_INT32_T, owner, disp, 1, MPI_INT32_T,
                             op, win_),
              "MPI_Accumulate");
    if (own) {
      own_signals_pending_ = true;
    } else {
      note_outstanding(cell.owner, {disp, disp + 4}, false);
    }
  }
}

void RmaEpochs::flush_outstanding() {
  settle_own_signals();
  flush_data();
  for (const std::int64_t peer : signal_peers_) {
    Outstanding& o = outstanding_[static_cast<std::size_t>(peer)];
    if (o.signals) flush_peer(peer);
    o.in_signal_peers = false;
  }
  signal_peers_.clear();
  notify_values_.clear();  // every notify is complete: its origin is free
}

void RmaEpochs::flush_all() {
  check_mpi(MPI_Win_flush_all(win_), "MPI_Win_flush_all");
  own_signals_pending_ = false;
  for (auto* list : {&data_peers_, &signal_peers_}) {
    for (const std::int64_t peer : *list) {
      Outstanding& o = outstanding_[static_cast<std::size_t>(peer)];
      settled(peer);
      o.in_data_peers = o.in_signal_peers = false;
    }
  }
  data_peers_.clear();
  signal_peers_.clear();
  notify_values_.clear();
  staged_bytes_ = 0;
  local_pending_ = false;
}

}  // namespace anyp::mpi
