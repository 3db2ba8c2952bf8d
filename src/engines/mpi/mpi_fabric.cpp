// mpi_fabric.cpp — region accesses, notifies and waits over one MPI window.
#include "engines/mpi/mpi_fabric.hpp"

#include <sched.h>

#include <algorithm>
#include <cstring>

#include "common/internal_check.hpp"
#include "engines/mpi/mpi_world.hpp"
#include "runtime/scalar_math.hpp"
#include "runtime/tile_math.hpp"

namespace anyp::mpi {

using runtime::Region;
using runtime::Space;

namespace {

constexpr int kPollsPerProbe = 64;  // polls between MPI_Iprobe progress pokes
constexpr int kPollsPerWave = 16;   // polls between wave ticks, once past the grace period
constexpr std::int64_t kStageBytes = 64 * 1024;            // larger puts complete at once
constexpr std::int64_t kStagedBytesMax = 4 * 1024 * 1024;  // staged before a forced flush
constexpr std::size_t kPendingRanges = 16;   // unflushed ranges kept per peer before merging
constexpr std::size_t kNotifyValues = 1024;  // notifies outstanding before a forced flush
constexpr std::size_t kHostRangesBeforeMerge = 4096;  // host ranges kept before coalescing

void add_elements(std::byte* p, const std::byte* in, DType dtype, std::int64_t n) {
  runtime::tile_elementwise(ir::BinaryOp::Add, dtype, p, in, false, p, static_cast<std::size_t>(n));
}

}  // namespace

MpiFabric::MpiFabric(const runtime::Executable& exec, std::span<const HostTensor* const> host_args,
                     std::int64_t rank, MPI_Win win, std::byte* local, Quiescence& waves,
                     FabricSettings settings)
    : exec_(exec),
      host_args_(host_args),
      rank_(rank),
      win_(win),
      local_(local),
      waves_(waves),
      settings_(settings),
      outstanding_(static_cast<std::size_t>(exec.world_size)),
      host_writes_(host_args.size()),
      host_reads_(host_args.size()) {
  notify_values_.reserve(kNotifyValues);
}

std::byte* MpiFabric::memory(const Region& r) const {
  if (r.space == Space::Host) {
    const HostTensor* t = host_args_[static_cast<std::size_t>(r.id)];
    ANYP_CHECK(t != nullptr, "a host view of a scalar argument");
    return t->data();
  }
  ANYP_CHECK(r.owner == rank_, "direct access to another process's window");
  return local_ + exec_.buffers[static_cast<std::size_t>(r.id)].offset;
}

MPI_Aint MpiFabric::displacement(const Region& r, std::int64_t offset) const {
  return static_cast<MPI_Aint>(exec_.buffers[static_cast<std::size_t>(r.id)].offset + offset);
}

std::int32_t* MpiFabric::cell_address(const runtime::Cell& c) const {
  return reinterpret_cast<std::int32_t*>(
      local_ + exec_.buffers[static_cast<std::size_t>(c.buffer)].offset + c.offset);
}

void MpiFabric::poke() {
  int flag = 0;
  MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  if (settings_.heartbeat) settings_.heartbeat->fetch_add(1, std::memory_order_relaxed);
}

const std::byte* MpiFabric::stage(const std::byte* in, std::int64_t bytes) {
  if (bytes > kStageBytes) return nullptr;
  // Allocated on first use, not zeroed (the pages are touched only as used).
  if (!staging_) staging_.reset(new std::byte[static_cast<std::size_t>(kStagedBytesMax)]);
  if (staged_bytes_ + bytes > kStagedBytesMax) flush_data();  // releases what is staged
  std::byte* copy = staging_.get() + staged_bytes_;
  std::memcpy(copy, in, static_cast<std::size_t>(bytes));
  staged_bytes_ += (bytes + 15) / 16 * 16;
  return copy;
}

std::pair<std::int64_t, std::int64_t> MpiFabric::window_range(const Region& r) const {
  const std::int64_t buffer = exec_.buffers[static_cast<std::size_t>(r.id)].offset;
  return {buffer + r.first, buffer + r.end};
}

void MpiFabric::order_after_pending(const Region& r) {
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

void MpiFabric::flush_peer(std::int64_t peer) {
  check_mpi(MPI_Win_flush(static_cast<int>(peer), win_), "MPI_Win_flush");
  settled(peer);
}

void MpiFabric::settled(std::int64_t peer) {
  Outstanding& o = outstanding_[static_cast<std::size_t>(peer)];
  o.data = o.signals = false;
  o.ranges.clear();
}

void MpiFabric::note_outstanding(std::int64_t peer, std::pair<std::int64_t, std::int64_t> range,
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

void MpiFabric::issued(const Region& dst, Origin origin) {
  note_outstanding(dst.owner, window_range(dst), true);
  if (origin == Origin::Caller) {
    // The caller's buffer may change as soon as we return.
    check_mpi(MPI_Win_flush_local(static_cast<int>(dst.owner), win_), "MPI_Win_flush_local");
  } else if (origin == Origin::LocalMemory) {
    local_pending_ = true;  // complete before this rank next writes local memory
  }
}

void MpiFabric::complete_local() {
  if (!local_pending_) return;
  check_mpi(MPI_Win_flush_local_all(win_), "MPI_Win_flush_local_all");
  local_pending_ = false;
}

void MpiFabric::flush_data() {
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

void MpiFabric::settle_own_signals() {
  if (!own_signals_pending_) return;
  check_mpi(MPI_Win_flush(static_cast<int>(rank_), win_), "MPI_Win_flush");
  own_signals_pending_ = false;
}

void MpiFabric::before_own_access(const Region& r) {
  if (own_signals_pending_ && r.space == Space::Window && r.owner == rank_ &&
      exec_.buffers[static_cast<std::size_t>(r.id)].signal)
    settle_own_signals();
}

void MpiFabric::flush_outstanding() {
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

void MpiFabric::flush_all() {
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

void MpiFabric::note_host(HostRanges& ranges, const Region& r) {
  auto& list = ranges[static_cast<std::size_t>(r.id)];
  r.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    if (!list.empty() && list.back().first + list.back().second == offset) {
      list.back().second += bytes;  // rows of one region are often adjacent
    } else if (list.empty() || list.back() != std::pair{offset, bytes}) {
      list.emplace_back(offset, bytes);
    }
  });
  if (list.size() > kHostRangesBeforeMerge) list = coalesce(std::move(list));
}

std::vector<std::pair<std::int64_t, std::int64_t>> MpiFabric::coalesce(
    std::vector<std::pair<std::int64_t, std::int64_t>> list) {
  std::sort(list.begin(), list.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (const auto& [offset, bytes] : list) {
    if (!out.empty() && out.back().first + out.back().second >= offset) {
      out.back().second = std::max(out.back().second, offset + bytes - out.back().first);
    } else {
      out.emplace_back(offset, bytes);
    }
  }
  return out;
}

void MpiFabric::note_writes(const Region& dst) {
  if (dst.space == Space::Host) return note_host(host_writes_, dst);
  own_stores_ = own_stores_ || dst.owner == rank_;
  if (!exec_.buffers[static_cast<std::size_t>(dst.id)].signal) return;
  dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    for (std::int64_t at = offset / 4 * 4; at < offset + bytes; at += 4)
      data_writes_.insert(runtime::Cell{dst.owner, dst.id, at});
  });
}

void MpiFabric::read_local(const Region& src, std::byte* out) {
  before_own_access(src);
  const std::byte* base = memory(src);
  std::size_t at = 0;
  src.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    std::memcpy(out + at, base + offset, static_cast<std::size_t>(bytes));
    at += static_cast<std::size_t>(bytes);
  });
}

void MpiFabric::write_local(const Region& dst, const std::byte* in, bool atomic_add) {
  if (atomic_add && dst.space == Space::Window) return accumulate(dst, in);  // peers may add too
  complete_local();  // the memory may be the origin of a put still in flight
  before_own_access(dst);
  std::byte* base = memory(dst);
  const auto esize = static_cast<std::int64_t>(dtype_bytes(dst.dtype));
  std::size_t at = 0;
  dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    if (atomic_add) {
      add_elements(base + offset, in + at, dst.dtype, bytes / esize);
    } else {
      std::memcpy(base + offset, in + at, static_cast<std::size_t>(bytes));
    }
    at += static_cast<std::size_t>(bytes);
  });
  note_writes(dst);
}

void MpiFabric::accumulate(const Region& dst, const std::byte* in) {
  if (dst.bytes() == 0) return;
  const MPI_Datatype element = sum_type(dst.dtype);
  if (element == MPI_DATATYPE_NULL) return accumulate_by_swap(dst, in);
  const RegionType t = types_.of(dst, element);
  const bool own = dst.owner == rank_;
  if (own) complete_local();
  order_after_pending(dst);
  const std::byte* staged = own ? nullptr : stage(in, dst.bytes());
  check_mpi(MPI_Accumulate(staged ? staged : in, static_cast<int>(dst.elements()), element,
                           static_cast<int>(dst.owner), displacement(dst, t.first), t.count, t.type,
                           MPI_SUM, win_),
            "MPI_Accumulate");
  if (own) {
    // The rank may read its own window next, directly.
    check_mpi(MPI_Win_flush(static_cast<int>(rank_), win_), "MPI_Win_flush");
  } else {
    issued(dst, staged ? Origin::Staged : Origin::Caller);
  }
  note_writes(dst);
}

void MpiFabric::accumulate_by_swap(const Region& dst, const std::byte* in) {
  if (dst.owner == rank_) complete_local();
  order_after_pending(dst);
  const int owner = static_cast<int>(dst.owner);
  std::size_t at = 0;
  dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    for (std::int64_t e = 0; e < bytes; e += 2, at += 2) {
      const MPI_Aint disp = displacement(dst, offset + e);
      std::uint16_t seen = 0;
      check_mpi(MPI_Fetch_and_op(nullptr, &seen, MPI_UINT16_T, owner, disp, MPI_NO_OP, win_),
                "MPI_Fetch_and_op");
      check_mpi(MPI_Win_flush(owner, win_), "MPI_Win_flush");
      for (;;) {
        std::uint16_t sum = seen, before = 0;
        add_elements(reinterpret_cast<std::byte*>(&sum), in + at, dst.dtype, 1);
        check_mpi(MPI_Compare_and_swap(&sum, &seen, &before, MPI_UINT16_T, owner, disp, win_),
                  "MPI_Compare_and_swap");
        check_mpi(MPI_Win_flush(owner, win_), "MPI_Win_flush");
        if (before == seen) break;
        seen = before;
      }
    }
  });
  note_writes(dst);
}

void MpiFabric::do_read(const Region& src, std::byte* out) {
  if (src.space == Space::Host) note_host(host_reads_, src);
  if (is_local(src)) return read_local(src, out);
  if (src.bytes() == 0) return;
  order_after_pending(src);
  const RegionType t = types_.of(src, MPI_BYTE);
  check_mpi(MPI_Get(out, static_cast<int>(src.bytes()), MPI_BYTE, static_cast<int>(src.owner),
                    displacement(src, t.first), t.count, t.type, win_),
            "MPI_Get");
  check_mpi(MPI_Win_flush_local(static_cast<int>(src.owner), win_), "MPI_Win_flush_local");
}

void MpiFabric::do_write(std::int64_t, const Region& dst, const std::byte* in, bool atomic_add) {
  if (is_local(dst)) return write_local(dst, in, atomic_add);
  if (atomic_add) return accumulate(dst, in);
  if (dst.bytes() == 0) return;
  order_after_pending(dst);
  const RegionType t = types_.of(dst, MPI_BYTE);
  const std::byte* staged = stage(in, dst.bytes());
  check_mpi(MPI_Put(staged ? staged : in, static_cast<int>(dst.bytes()), MPI_BYTE,
                    static_cast<int>(dst.owner), displacement(dst, t.first), t.count, t.type, win_),
            "MPI_Put");
  issued(dst, staged ? Origin::Staged : Origin::Caller);
  note_writes(dst);
}

void MpiFabric::do_copy(std::int64_t agent, const Region& dst, const Region& src, bool atomic_add) {
  const bool dst_local = is_local(dst), src_local = is_local(src);
  ANYP_CHECK(dst_local || src_local, "a copy between two other ranks' windows");
  if (src.bytes() == 0) return;
  const bool direct = !atomic_add && !(dst_local && src_local && dst.same_memory(src));
  if (direct && src.space == Space::Host) note_host(host_reads_, src);  // (staged: do_read)
  if (direct && dst_local) complete_local();  // dst may be the origin of a put in flight
  if (direct) {
    before_own_access(dst);
    before_own_access(src);
  }
  if (direct && dst_local && src_local) {
    runtime::copy_region(memory(dst), dst, memory(src), src);
    note_writes(dst);
    return;
  }
  if (direct && src_local) {  // put: straight from the local rows
    order_after_pending(dst);
    const RegionType s = types_.of(src, MPI_BYTE), d = types_.of(dst, MPI_BYTE);
    check_mpi(MPI_Put(memory(src) + s.first, s.count, s.type, static_cast<int>(dst.owner),
                      displacement(dst, d.first), d.count, d.type, win_),
              "MPI_Put");
    issued(dst, Origin::LocalMemory);
    note_writes(dst);
    return;
  }
  if (direct) {  // get: straight into the local rows
    order_after_pending(src);
    const RegionType d = types_.of(dst, MPI_BYTE), s = types_.of(src, MPI_BYTE);
    check_mpi(MPI_Get(memory(dst) + d.first, d.count, d.type, static_cast<int>(src.owner),
                      displacement(src, s.first), s.count, s.type, win_),
              "MPI_Get");
    check_mpi(MPI_Win_flush_local(static_cast<int>(src.owner), win_), "MPI_Win_flush_local");
    note_writes(dst);
    return;
  }
  // An atomic add needs the whole source, and regions of one buffer may
  // overlap: stage through a buffer.
  std::vector<std::byte> staged(static_cast<std::size_t>(src.bytes()));
  do_read(src, staged.data());
  do_write(agent, dst, staged.data(), atomic_add);
}

void MpiFabric::do_notify(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
                          ir::NotifyKind kind, std::int32_t value) {
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
  observe_notify(agent, site, cell, kind, value, std::nullopt);
  runtime::NotifierTally& t = notified_[cell];
  t.rank = rank_;  // every block's notifies count as the rank's
  if (kind == ir::NotifyKind::Set) {
    ++t.sets;
    t.last_set = value;
  } else if (value >= 0) {
    ++t.adds_up;
    t.up_total += value;
  } else {
    ++t.adds_down;
    t.down_total += value;
  }
}

bool MpiFabric::do_wait(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
                        ir::WaitKind cmp, std::int64_t expected,
                        const std::function<std::string()>& describe) {
  ANYP_CHECK(cell.owner == rank_, "a wait on another rank's cell");
  settle_own_signals();  // the rank's own notifies, before it reads its cells
  std::atomic_ref<std::int32_t> value(*cell_address(cell));
  auto holds = [&](std::int32_t& v) {
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");
    v = value.load(std::memory_order_acquire);
    return runtime::compare(cmp, v, expected);
  };
  auto satisfied = [&](std::int32_t v) {
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");  // before the agent reads the data
    observe_wait(agent, site, cell, cmp, expected, v);
    ++progress_;
    return true;
  };
  std::int32_t v = 0;
  if (holds(v)) {
    if (has_blocks()) forget_block_wait(exec_.block_of_agent(agent));
    return satisfied(v);
  }
  flush_outstanding();  // before blocking: a peer may be waiting for these
  if (has_blocks()) {   // the engine runs the other blocks, and polls again
    // The text only once the stall is long (a deadlock report needs it).
    block_waits_[static_cast<std::size_t>(exec_.block_of_agent(agent))] =
        BlockedWait{in_waves_ ? describe() : std::string(), cmp, expected, v, cell};
    return false;
  }
  // Poll until the cell holds, or the waves end the run.
  unstalled();
  for (;;) {
    if (holds(v)) {
      unstalled();
      return satisfied(v);
    }
    if (stalled() != Quiescence::Verdict::Continue) {
      holds(v);
      unstalled();
      blocked_ = BlockedWait{describe(), cmp, expected, v, cell};
      return false;
    }
  }
}

void MpiFabric::zero_own_buffer(std::int32_t id) {
  const runtime::WindowBuffer& b = exec_.buffers[static_cast<std::size_t>(id)];
  std::memset(local_ + b.offset, 0, static_cast<std::size_t>(b.used));
  check_mpi(MPI_Win_sync(win_), "MPI_Win_sync");  // the stores, before any accumulate on them
}

Quiescence::Verdict MpiFabric::stalled() {
  flush_outstanding();
  if (stall_polls_++ == 0) {
    ++blocked_waits_;
    stall_since_ = std::chrono::steady_clock::now();
  }
  if (stall_polls_ % kPollsPerProbe == 0) {
    poke();
    in_waves_ = in_waves_ || std::chrono::steady_clock::now() - stall_since_ >= settings_.grace;
  }
  if (in_waves_ && stall_polls_ % kPollsPerWave == 0) {
    const Quiescence::Verdict verdict = waves_.tick(Quiescence::State::Blocked, progress_);
    if (verdict != Quiescence::Verdict::Continue) {
      verdict_ = verdict;
      return verdict;
    }
  }
  if (settings_.oversubscribed) sched_yield();
  return Quiescence::Verdict::Continue;
}

runtime::NotifierTally MpiFabric::notified(const runtime::Cell& cell) const {
  auto it = notified_.find(cell);
  if (it != notified_.end()) return it->second;
  runtime::NotifierTally none;
  none.rank = rank_;
  return none;
}

std::vector<HostRange> MpiFabric::ranges(const HostRanges& by_arg) {
  std::vector<HostRange> out;
  for (std::size_t arg = 0; arg < by_arg.size(); ++arg) {
    for (const auto& [offset, bytes] : coalesce(by_arg[arg]))
      out.push_back(HostRange{static_cast<std::int32_t>(arg), offset, bytes});
  }
  return out;
}

}  // namespace anyp::mpi
