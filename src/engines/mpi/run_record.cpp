// run_record.cpp — the MPI fabric's record of a rank's run: host byte
// ranges (kept coalesced), notify tallies, signal cells written as data.
#include "engines/mpi/run_record.hpp"

#include <algorithm>

namespace anyp::mpi {

using runtime::Region;
using runtime::Space;

namespace {

constexpr std::size_t kHostRangesBeforeMerge = 4096;  // host ranges kept before coalescing

}  // namespace

RunRecord::RunRecord(const runtime::Executable& exec, std::int64_t rank, std::size_t host_args)
    : exec_(exec), rank_(rank), host_writes_(host_args), host_reads_(host_args) {}

void RunRecord::note_host(HostRanges& ranges, const Region& r) {
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

std::vector<std::pair<std::int64_t, std::int64_t>> RunRecord::coalesce(
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

void RunRecord::note_write(const Region& dst) {
  if (dst.space == Space::Host) return note_host(host_writes_, dst);
  if (!exec_.buffers[static_cast<std::size_t>(dst.id)].signal) return;
  dst.for_each_row([&](std::int64_t offset, std::int64_t bytes) {
    for (std::int64_t at = offset / 4 * 4; at < offset + bytes; at += 4)
      data_writes_.insert(runtime::Cell{dst.owner, dst.id, at});
  });
}

void RunRecord::note_notify(const runtime::Cell& cell, ir::NotifyKind kind, std::int32_t value) {
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

runtime::NotifierTally RunRecord::notified(const runtime::Cell& cell) const {
  auto it = notified_.find(cell);
  if (it != notified_.end()) return it->second;
  runtime::NotifierTally none;
  none.rank = rank_;
  return none;
}

std::vector<HostRange> RunRecord::ranges(const HostRanges& by_arg) {
  std::vector<HostRange> out;
  for (std::size_t arg = 0; arg < by_arg.size(); ++arg) {
    for (const auto& [offset, bytes] : coalesce(by_arg[arg]))
      out.push_back(HostRange{static_cast<std::int32_t>(arg), offset, bytes});
  }
  return out;
}

}  // namespace anyp::mpi
