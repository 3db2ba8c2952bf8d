// mpi_fabric.cpp — region accesses, notifies and waits over one MPI window
// (when they complete: rma_epochs.cpp; what the run records: run_record.cpp).
#include "engines/mpi/mpi_fabric.hpp"

#include <sched.h>

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
      epochs_(exec, rank, win),
      record_(exec, rank, host_args.size()) {}

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

void MpiFabric::read_local(const Region& src, std::byte* out) {
  epochs_.before_own_access(src);
  const std::byte* base = memory(src);
  std::size_t at = 0;
  src.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    std::memcpy(out + at, base + offset, static_cast<std::size_t>(bytes));
    at += static_cast<std::size_t>(bytes);
  });
}

void MpiFabric::write_local(const Region& dst, const std::byte* in, bool atomic_add) {
  if (atomic_add && dst.space == Space::Window) return accumulate(dst, in);  // peers may add too
  epochs_.complete_local();  // the memory may be the origin of a put still in flight
  epochs_.before_own_access(dst);
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
  if (own) epochs_.complete_local();
  epochs_.order_after_pending(dst);
  const std::byte* staged = own ? nullptr : epochs_.stage(in, dst.bytes());
  check_mpi(MPI_Accumulate(staged ? staged : in, static_cast<int>(dst.elements()), element,
                           static_cast<int>(dst.owner), displacement(dst, t.first), t.count, t.type,
                           MPI_SUM, win_),
            "MPI_Accumulate");
  if (own) {
    // The rank may read its own window next, directly.
    check_mpi(MPI_Win_flush(static_cast<int>(rank_), win_), "MPI_Win_flush");
  } else {
    epochs_.issued(dst, staged ? Origin::Staged : Origin::Caller);
  }
  note_writes(dst);
}

void MpiFabric::accumulate_by_swap(const Region& dst, const std::byte* in) {
  if (dst.owner == rank_) epochs_.complete_local();
  epochs_.order_after_pending(dst);
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
  record_.note_read(src);
  if (is_local(src)) return read_local(src, out);
  if (src.bytes() == 0) return;
  epochs_.order_after_pending(src);
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
  epochs_.order_after_pending(dst);
  const RegionType t = types_.of(dst, MPI_BYTE);
  const std::byte* staged = epochs_.stage(in, dst.bytes());
  check_mpi(MPI_Put(staged ? staged : in, static_cast<int>(dst.bytes()), MPI_BYTE,
                    static_cast<int>(dst.owner), displacement(dst, t.first), t.count, t.type, win_),
            "MPI_Put");
  epochs_.issued(dst, staged ? Origin::Staged : Origin::Caller);
  note_writes(dst);
}

void MpiFabric::do_copy(std::int64_t agent, const Region& dst, const Region& src, bool atomic_add) {
  const bool dst_local = is_local(dst), src_local = is_local(src);
  ANYP_CHECK(dst_local || src_local, "a copy between two other ranks' windows");
  if (src.bytes() == 0) return;
  const bool direct = !atomic_add && !(dst_local && src_local && dst.same_memory(src));
  if (direct) record_.note_read(src);                 // (staged: do_read)
  if (direct && dst_local) epochs_.complete_local();  // dst may be the origin of a put in flight
  if (direct) {
    epochs_.before_own_access(dst);
    epochs_.before_own_access(src);
  }
  if (direct && dst_local && src_local) {
    runtime::copy_region(memory(dst), dst, memory(src), src);
    note_writes(dst);
    return;
  }
  if (direct && src_local) {  // put: straight from the local rows
    epochs_.order_after_pending(dst);
    const RegionType s = types_.of(src, MPI_BYTE), d = types_.of(dst, MPI_BYTE);
    check_mpi(MPI_Put(memory(src) + s.first, s.count, s.type, static_cast<int>(dst.owner),
                      displacement(dst, d.first), d.count, d.type, win_),
              "MPI_Put");
    epochs_.issued(dst, Origin::LocalMemory);
    note_writes(dst);
    return;
  }
  if (direct) {  // get: straight into the local rows
    epochs_.order_after_pending(src);
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
  epochs_.notify(cell, kind, value);
  observe_notify(agent, site, cell, kind, value, std::nullopt);
  record_.note_notify(cell, kind, value);
}

bool MpiFabric::do_wait(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
                        ir::WaitKind cmp, std::int64_t expected,
                        const std::function<std::string()>& describe) {
  ANYP_CHECK(cell.owner == rank_, "a wait on another rank's cell");
  epochs_.settle_own_signals();  // the rank's own notifies, before it reads its cells
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

}  // namespace anyp::mpi
