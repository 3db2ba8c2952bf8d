// heap_fabric.hpp — the threads engine's door (runtime::Fabric): every
// rank's window in one symmetric heap (rank r's at r * window_bytes, each
// buffer at its layout offset), host arguments in the caller's HostTensors.
// Plain accesses are memcpy's of whole rows; atomic adds take the owner's
// lock stripe; notify and wait go through the owner's stripe lock in the
// fabric's SignalTable (signal_table.hpp), which orders them (docs/ladder-steps.md §7). Data
// accesses to a signal buffer (WindowBuffer::signal) take that lock too, so a cell is only ever
// touched under it, and a data write into a peer's cell can wake the peer's parked wait.
//
// The heap and the signal table's notify record (a slot per word of the
// signal buffers) come from a pooled block (heap_pool.hpp), zero when the
// run starts. Every write marks the 64-byte lines of the heap it touched in
// a bitmap, and every notify the line of the record it touched in another;
// when the fabric is destroyed it zeroes those lines and returns the
// block, so the next run starts from zeroed windows for at most one memset
// of the lines this run wrote (a collective whose cells are spread over a
// large signal buffer zeroes the lines it touched, not the buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "anyp/host_tensor.hpp"
#include "engines/threads/heap_pool.hpp"
#include "engines/threads/signal_table.hpp"
#include "runtime/executable.hpp"
#include "runtime/fabric.hpp"

namespace anyp::threads {

class HeapFabric final : public runtime::Fabric {
 public:
  // With `persistent` (a block of block_bytes(exec), from a session) the
  // windows start with what the block holds and keep what the run wrote:
  // only the notify record is zeroed at the end.
  HeapFabric(const runtime::Executable& exec, std::span<const HostTensor* const> host_args,
             std::byte* persistent = nullptr);
  // The bytes of the heap, notify record and written-lines bitmaps of `exec`.
  static std::size_t block_bytes(const runtime::Executable& exec);
  // Those of the notify record and the bitmaps: a slot per word of the
  // signal buffers, a bit per 64-byte line of the heap and of the record.
  static std::size_t notify_record_bytes(const runtime::Executable& exec);
  // Zeroes the lines of `block` the runs on it wrote (heap and notify
  // record, or the record only) and, with the heap, clears the bitmap.
  static void zero_written(const runtime::Executable& exec, std::byte* block, bool heap_too);

  ~HeapFabric() override;

  const std::byte* heap() const { return heap_; }
  // Sets every rank's copy of window buffer `id` to 0 (before any VM runs:
  // the launch cells of a multi-block program, which a failed run of a
  // session with persistent windows may have left set).
  void zero_buffer(std::int32_t id);
  // The signal cells' table: connect it to the runner before the run.
  SignalTable& signals() { return signals_; }

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
  // The first byte of the region's buffer (window buffer on its owner) or argument.
  std::byte* memory(const runtime::Region& r) const;
  std::int32_t* cell_address(const runtime::Cell& c) const;
  // The cell's slot in the notify record.
  std::uint64_t slot_of(const runtime::Cell& c) const;
  std::mutex& atomic_lock(const runtime::Region& r);
  // Adds n contiguous elements of `in` into `p`, in dtype.
  static void add_elements(std::byte* p, const std::byte* in, DType dtype, std::int64_t n);
  bool is_signal(const runtime::Region& r) const {
    return r.space == runtime::Space::Window &&
           exec_.buffers[static_cast<std::size_t>(r.id)].signal;
  }
  void read_rows(const runtime::Region& src, std::byte* out) const;
  void write_rows(const runtime::Region& dst, const std::byte* in, bool atomic_add);
  void copy_rows(const runtime::Region& dst, const runtime::Region& src);
  // Under the signal lock, after `rank` wrote into a signal buffer: records
  // the writer for deadlock reports and lets a parked owner's wait re-check.
  void signal_written(std::int64_t rank, const runtime::Region& dst);
  // Records that bytes [begin, end) of window buffer `id` on `owner`
  // (offsets from the buffer's start) were written.
  void mark_written(std::int64_t owner, std::int32_t id, std::int64_t begin, std::int64_t end);

  const runtime::Executable& exec_;
  std::span<const HostTensor* const> host_args_;
  std::unique_ptr<PooledBlock> block_;  // the run's own block (none when persistent)
  bool persistent_;
  std::byte* heap_;
  std::uint64_t* written_lines_;  // bit i: heap bytes [64 i, 64 i + 64) written this run
  // The notify record's numbering: slots per rank, and each signal
  // buffer's first slot within a rank's (-1: not a signal buffer).
  std::int64_t slot_words_ = 0;
  std::vector<std::int64_t> slot_base_;
  std::vector<std::mutex> atomic_locks_;
  SignalTable signals_;  // after heap_, which it uses
};

}  // namespace anyp::threads
