// heap_fabric.cpp — region reads, writes, copies and signal operations on
// the threads engine's symmetric heap.
#include "engines/threads/heap_fabric.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>

#include "common/internal_check.hpp"
#include "runtime/tile_math.hpp"

namespace anyp::threads {

using runtime::Region;
using runtime::Space;

namespace {

// The block: the heap; the notify record, one 4-byte slot per word of the
// signal buffers (rank r's at r * signal_words, each signal buffer's at
// its slot base, in buffer order); one bit per 64-byte line of the heap;
// one bit per 64-byte line of the record. Each part starts on a line.
constexpr std::int64_t kLine = 64;
std::int64_t lines_of(std::int64_t bytes) { return (bytes + kLine - 1) / kLine; }
// Each signal buffer's first slot within a rank's record (-1: not a
// signal buffer), and the slots of a rank.
struct SlotNumbering {
  std::vector<std::int64_t> base;
  std::int64_t words = 0;
  explicit SlotNumbering(const runtime::Executable& exec) : base(exec.buffers.size(), -1) {
    for (std::size_t b = 0; b < exec.buffers.size(); ++b) {
      if (!exec.buffers[b].signal) continue;
      base[b] = words;
      words += (exec.buffers[b].used + 3) / 4;
    }
  }
};
struct BlockLayout {
  std::int64_t heap_lines, slot_lines;
  std::size_t slots, heap_bits, slot_bits, end;  // byte offsets
  explicit BlockLayout(const runtime::Executable& exec)
      : heap_lines(lines_of(exec.world_size * exec.window_bytes)),
        slot_lines(lines_of(exec.world_size * SlotNumbering(exec).words * 4)),
        slots(static_cast<std::size_t>(heap_lines * kLine)),
        heap_bits(slots + static_cast<std::size_t>(slot_lines * kLine)),
        slot_bits(heap_bits + 8 * bit_words(heap_lines)),
        end(slot_bits + 8 * bit_words(slot_lines)) {}
  static std::size_t bit_words(std::int64_t lines) {
    return static_cast<std::size_t>((lines + 63) / 64);
  }
};

// Calls zero(first, last) for every run [first, last) of adjacent lines
// marked in `bits` (`lines` of them), clearing the marks when `clear`.
template <class Zero>
void for_marked_runs(std::uint64_t* bits, std::int64_t lines, bool clear, Zero&& zero) {
  std::int64_t run_start = -1;  // the first line of the run being gathered
  const std::size_t words = BlockLayout::bit_words(lines);
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t word = bits[w];
    if (word == 0 && run_start < 0) continue;
    if (clear) bits[w] = 0;
    const auto base = static_cast<std::int64_t>(w) * 64;
    for (int bit = 0; bit < 64;) {
      const bool on = (word >> bit & 1u) != 0;
      // The length of this stretch of equal bits.
      const std::uint64_t rest = on ? ~word >> bit : word >> bit;
      const int len = rest == 0 ? 64 - bit : std::min(64 - bit, std::countr_zero(rest));
      if (on && run_start < 0) run_start = base + bit;
      if (!on && run_start >= 0) {
        zero(run_start, base + bit);
        run_start = -1;
      }
      bit += len;
    }
  }
  if (run_start >= 0) zero(run_start, lines);
}

}  // namespace

std::size_t HeapFabric::block_bytes(const runtime::Executable& exec) {
  return BlockLayout(exec).end;
}

std::size_t HeapFabric::notify_record_bytes(const runtime::Executable& exec) {
  const BlockLayout layout(exec);
  return layout.end - layout.slots;
}

HeapFabric::HeapFabric(const runtime::Executable& exec,
                       std::span<const HostTensor* const> host_args, std::byte* persistent)
    : exec_(exec),
      host_args_(host_args),
      block_(persistent ? nullptr : std::make_unique<PooledBlock>(block_bytes(exec))),
      persistent_(persistent != nullptr),
      heap_(persistent ? persistent : block_->data()),
      written_lines_(reinterpret_cast<std::uint64_t*>(heap_ + BlockLayout(exec).heap_bits)),
      atomic_locks_(static_cast<std::size_t>(std::clamp<std::int64_t>(exec.world_size, 1, 64))),
      signals_(exec.world_size, exec.agents(), heap_,
               reinterpret_cast<std::uint32_t*>(heap_ + BlockLayout(exec).slots),
               reinterpret_cast<std::uint64_t*>(heap_ + BlockLayout(exec).slot_bits)) {
  SlotNumbering numbering(exec);
  slot_words_ = numbering.words;
  slot_base_ = std::move(numbering.base);
}

HeapFabric::~HeapFabric() {
  // A pooled block goes back zeroed; a persistent one keeps its windows
  // (and the bitmap of what they hold) but not this run's notify record.
  zero_written(exec_, heap_, !persistent_);
}

void HeapFabric::zero_written(const runtime::Executable& exec, std::byte* block, bool heap_too) {
  // One memset per run of adjacent written lines: the heap's (a persistent
  // heap keeps them, and their marks), and always the notify record's.
  const BlockLayout layout(exec);
  auto zeroer = [](std::byte* part) {
    return [part](std::int64_t first, std::int64_t last) {
      std::memset(part + first * kLine, 0, static_cast<std::size_t>((last - first) * kLine));
    };
  };
  if (heap_too) {
    for_marked_runs(reinterpret_cast<std::uint64_t*>(block + layout.heap_bits), layout.heap_lines,
                    true, zeroer(block));
  }
  for_marked_runs(reinterpret_cast<std::uint64_t*>(block + layout.slot_bits), layout.slot_lines,
                  true, zeroer(block + layout.slots));
}

std::uint64_t HeapFabric::slot_of(const runtime::Cell& c) const {
  const std::int64_t base = slot_base_[static_cast<std::size_t>(c.buffer)];
  ANYP_CHECK(base >= 0, "a signal operation on a buffer not marked as a signal buffer");
  return static_cast<std::uint64_t>(c.owner * slot_words_ + base + c.offset / 4);
}

void HeapFabric::mark_written(std::int64_t owner, std::int32_t id, std::int64_t begin,
                              std::int64_t end) {
  if (begin >= end) return;
  const std::int64_t base =
      owner * exec_.window_bytes + exec_.buffers[static_cast<std::size_t>(id)].offset;
  const std::int64_t first = (base + begin) / kLine, last = (base + end - 1) / kLine;
  for (std::int64_t w = first / 64; w <= last / 64; ++w) {
    const std::int64_t lo = std::max(first, w * 64) - w * 64,
                       hi = std::min(last, w * 64 + 63) - w * 64;
    const std::uint64_t mask =
        (hi - lo == 63 ? ~std::uint64_t{0} : ((std::uint64_t{1} << (hi - lo + 1)) - 1)) << lo;
    std::atomic_ref<std::uint64_t> word(written_lines_[w]);
    if ((word.load(std::memory_order_relaxed) & mask) != mask)
      word.fetch_or(mask, std::memory_order_relaxed);
  }
}

void HeapFabric::zero_buffer(std::int32_t id) {
  const runtime::WindowBuffer& b = exec_.buffers[static_cast<std::size_t>(id)];
  for (std::int64_t r = 0; r < exec_.world_size; ++r)
    std::memset(heap_ + r * exec_.window_bytes + b.offset, 0, static_cast<std::size_t>(b.used));
}

std::byte* HeapFabric::memory(const Region& r) const {
  if (r.space == Space::Host) {
    const HostTensor* t = host_args_[static_cast<std::size_t>(r.id)];
    ANYP_CHECK(t != nullptr, "a host view of a scalar argument");
    return t->data();
  }
  return heap_ + r.owner * exec_.window_bytes +
         exec_.buffers[static_cast<std::size_t>(r.id)].offset;
}

std::int32_t* HeapFabric::cell_address(const runtime::Cell& c) const {
  return reinterpret_cast<std::int32_t*>(heap_ + c.owner * exec_.window_bytes +
                                         exec_.buffers[static_cast<std::size_t>(c.buffer)].offset +
                                         c.offset);
}

std::mutex& HeapFabric::atomic_lock(const Region& r) {
  const std::size_t stripe =
      r.space == Space::Window ? static_cast<std::size_t>(r.owner) : atomic_locks_.size() - 1;
  return atomic_locks_[stripe % atomic_locks_.size()];
}

void HeapFabric::add_elements(std::byte* p, const std::byte* in, DType dtype, std::int64_t n) {
  runtime::tile_elementwise(ir::BinaryOp::Add, dtype, p, in, false, p, static_cast<std::size_t>(n));
}

void HeapFabric::signal_written(std::int64_t rank, const Region& dst) {
  std::int64_t lo = INT64_MAX, hi = 0;
  dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    lo = std::min(lo, offset);
    hi = std::max(hi, offset + bytes);
  });
  if (lo >= hi) return;
  const std::byte* base = memory(dst);
  signals_.on_signal_write_locked(rank, dst.owner, base + lo, base + hi);
}

void HeapFabric::read_rows(const Region& src, std::byte* out) const {
  const std::byte* base = memory(src);
  std::size_t at = 0;
  src.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    std::memcpy(out + at, base + offset, static_cast<std::size_t>(bytes));
    at += static_cast<std::size_t>(bytes);
  });
}

void HeapFabric::write_rows(const Region& dst, const std::byte* in, bool atomic_add) {
  std::byte* base = memory(dst);
  std::size_t at = 0;
  if (atomic_add) {
    std::lock_guard<std::mutex> lock(atomic_lock(dst));
    const auto esize = static_cast<std::int64_t>(dtype_bytes(dst.dtype));
    dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
      add_elements(base + offset, in + at, dst.dtype, bytes / esize);
      at += static_cast<std::size_t>(bytes);
    });
    return;
  }
  dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    std::memcpy(base + offset, in + at, static_cast<std::size_t>(bytes));
    at += static_cast<std::size_t>(bytes);
  });
}

void HeapFabric::copy_rows(const Region& dst, const Region& src) {
  runtime::copy_region(memory(dst), dst, memory(src), src);
}

void HeapFabric::do_read(const Region& src, std::byte* out) {
  if (is_signal(src)) return signals_.with_signal_lock(src.owner, [&] { read_rows(src, out); });
  read_rows(src, out);
}

void HeapFabric::do_write(std::int64_t agent, const Region& dst, const std::byte* in,
                          bool atomic_add) {
  if (dst.space == Space::Window) mark_written(dst.owner, dst.id, dst.first, dst.end);
  if (!is_signal(dst)) return write_rows(dst, in, atomic_add);
  signals_.with_signal_lock(dst.owner, [&] {
    write_rows(dst, in, atomic_add);
    signal_written(agent, dst);
  });
}

void HeapFabric::do_copy(std::int64_t agent, const Region& dst, const Region& src,
                         bool atomic_add) {
  if (atomic_add || dst.same_memory(src) || is_signal(dst) || is_signal(src)) {
    // Stage through a buffer: the add needs the whole source, regions of one
    // buffer may overlap, and signal memory is touched only under its lock.
    std::vector<std::byte> staged(static_cast<std::size_t>(src.bytes()));
    do_read(src, staged.data());
    do_write(agent, dst, staged.data(), atomic_add);
    return;
  }
  if (dst.space == Space::Window) mark_written(dst.owner, dst.id, dst.first, dst.end);
  copy_rows(dst, src);
}

void HeapFabric::do_notify(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
                           ir::NotifyKind kind, std::int32_t value) {
  mark_written(cell.owner, cell.buffer, cell.offset, cell.offset + 4);
  signals_.notify(
      agent, cell.owner, cell_address(cell), slot_of(cell), kind, value,
      [&](std::int32_t result) { observe_notify(agent, site, cell, kind, value, result); });
}

bool HeapFabric::do_wait(std::int64_t agent, runtime::SiteRef site, const runtime::Cell& cell,
                         ir::WaitKind cmp, std::int64_t expected,
                         const std::function<std::string()>& describe) {
  // A rank waits only on its own window (the signal table's stripes rely on
  // it); `agent` is the waiting VM, one of the rank's blocks.
  ANYP_CHECK(cell.owner == exec_.rank_of_agent(agent), "a wait on another agent's cell");
  std::int32_t* at = cell_address(cell);
  // Both observers run under the cell's stripe lock (they read the cell).
  return signals_.wait_or_park(
      agent, cell.owner, at, slot_of(cell), cmp, expected, describe,
      [&] { observe_wait(agent, site, cell, cmp, expected, *at); },
      [&](std::int32_t value) { observe_wait_blocked(agent, site, cell, cmp, expected, value); });
}

}  // namespace anyp::threads
