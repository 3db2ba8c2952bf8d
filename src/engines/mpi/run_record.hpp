// run_record.hpp — what the MPI fabric (mpi_fabric.hpp) records of one
// rank's run for the end of it: the host-tensor bytes the rank wrote and
// read (merged into every process's copies), what its notifies did to each
// cell, and which signal cells it wrote as data (both for a deadlock report).
#pragma once

#include <cstdint>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/op_attrs.hpp"
#include "runtime/deadlock_report.hpp"
#include "runtime/executable.hpp"
#include "runtime/region.hpp"

namespace anyp::mpi {

// Bytes of a host argument: [offset, offset + bytes).
struct HostRange {
  std::int32_t arg = -1;
  std::int64_t offset = 0;
  std::int64_t bytes = 0;
};

class RunRecord {
 public:
  RunRecord(const runtime::Executable& exec, std::int64_t rank, std::size_t host_args);

  // A write of region dst (host bytes and signal cells written as data).
  void note_write(const runtime::Region& dst);
  // A read of region src (host bytes).
  void note_read(const runtime::Region& src) {
    if (src.space == runtime::Space::Host) note_host(host_reads_, src);
  }
  // A notify of this rank to `cell`.
  void note_notify(const runtime::Cell& cell, ir::NotifyKind kind, std::int32_t value);

  // What this rank's notifies did to `cell` (rank = this rank).
  runtime::NotifierTally notified(const runtime::Cell& cell) const;
  // True when this rank wrote `cell`'s bytes as data (a put, a store).
  bool wrote_as_data(const runtime::Cell& cell) const { return data_writes_.count(cell) != 0; }
  // The host-tensor bytes this rank wrote, and read, sorted and coalesced.
  std::vector<HostRange> host_writes() const { return ranges(host_writes_); }
  std::vector<HostRange> host_reads() const { return ranges(host_reads_); }

 private:
  // Per host argument: byte ranges [offset, offset + bytes).
  using HostRanges = std::vector<std::vector<std::pair<std::int64_t, std::int64_t>>>;
  static void note_host(HostRanges& ranges, const runtime::Region& r);
  static std::vector<std::pair<std::int64_t, std::int64_t>> coalesce(
      std::vector<std::pair<std::int64_t, std::int64_t>> list);
  static std::vector<HostRange> ranges(const HostRanges& by_arg);

  const runtime::Executable& exec_;
  std::int64_t rank_;
  std::unordered_map<runtime::Cell, runtime::NotifierTally, runtime::CellHash> notified_;
  std::set<runtime::Cell> data_writes_;
  HostRanges host_writes_, host_reads_;
};

}  // namespace anyp::mpi
