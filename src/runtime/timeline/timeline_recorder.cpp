// timeline_recorder.cpp — recording each rank's events (see the header).
#include "runtime/timeline/timeline_recorder.hpp"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "common/internal_check.hpp"

namespace anyp::runtime {

static_assert(std::is_trivially_copyable_v<EventRun> && std::is_trivially_copyable_v<RunSlot>);

TimelineRecorder::TimelineRecorder(std::int64_t world_size)
    : events_(static_cast<std::size_t>(world_size)), async_(static_cast<std::size_t>(world_size)) {}

void TimelineRecorder::on_access(const Access& a) {
  TimelineEvent e;
  e.kind = TimelineEvent::Kind::Access;
  e.sub = static_cast<std::uint8_t>(a.kind);
  e.dtype = a.region.dtype;
  e.space = a.region.space;
  e.site = a.site;
  e.id = a.region.id;
  e.owner = static_cast<std::int32_t>(a.region.owner);
  e.first = a.region.first;
  e.end = a.region.end;
  e.amount = a.region.bytes();
  AsyncPuts& async = async_[static_cast<std::size_t>(a.agent)];
  if (async.tagged > 0) {  // a put_async's source read, then its remote write
    e.issued_before = async.tag;
    --async.tagged;
  }
  events_[static_cast<std::size_t>(a.agent)].push_back(e);
}

void TimelineRecorder::on_async_put(std::int64_t agent, std::int64_t event, bool issued) {
  AsyncPuts& async = async_[static_cast<std::size_t>(agent)];
  if (issued) {
    const auto at = static_cast<std::uint32_t>(events_[static_cast<std::size_t>(agent)].size());
    async.in_flight.emplace_back(event, at + 1);
    return;
  }
  const auto it = std::find_if(async.in_flight.begin(), async.in_flight.end(),
                               [&](const auto& p) { return p.first == event; });
  ANYP_CHECK(it != async.in_flight.end(), "a put_async carried out that was never issued");
  async.tag = it->second;
  async.tagged = 2;
  async.in_flight.erase(it);
}

namespace {

// A notify or a wait: `sub` its NotifyKind or WaitKind, `amount` its value
// or expected value, on one INT32 cell.
TimelineEvent cell_event(TimelineEvent::Kind kind, std::uint8_t sub, SiteRef site, const Cell& cell,
                         std::int64_t amount) {
  TimelineEvent e;
  e.kind = kind;
  e.sub = sub;
  e.dtype = DType::INT32;
  e.site = site;
  e.id = cell.buffer;
  e.owner = static_cast<std::int32_t>(cell.owner);
  e.first = cell.offset;
  e.amount = amount;
  return e;
}

}  // namespace

void TimelineRecorder::on_notify(std::int64_t agent, SiteRef site, const Cell& cell,
                                 ir::NotifyKind kind, std::int32_t value,
                                 std::optional<std::int32_t>) {
  events_[static_cast<std::size_t>(agent)].push_back(
      cell_event(TimelineEvent::Kind::Notify, static_cast<std::uint8_t>(kind), site, cell, value));
}

void TimelineRecorder::on_wait(std::int64_t agent, SiteRef site, const Cell& cell, ir::WaitKind cmp,
                               std::int64_t expected, std::int32_t) {
  events_[static_cast<std::size_t>(agent)].push_back(
      cell_event(TimelineEvent::Kind::Wait, static_cast<std::uint8_t>(cmp), site, cell, expected));
}

void TimelineRecorder::on_compute(std::int64_t agent, SiteRef site, ComputeClass cls, DType dtype,
                                  std::int64_t elements) {
  TimelineEvent e;
  e.kind = TimelineEvent::Kind::Compute;
  e.sub = static_cast<std::uint8_t>(cls);
  e.dtype = dtype;
  e.site = site;
  e.amount = elements;
  events_[static_cast<std::size_t>(agent)].push_back(e);
}

std::string TimelineRecorder::serialize() const {
  std::string out;
  for (std::size_t r = 0; r < events_.size(); ++r) {
    if (events_[r].empty()) continue;
    const std::vector<EventRun>& runs = events_[r].runs();
    const std::vector<RunSlot>& slots = events_[r].slots();
    const std::uint64_t header[3] = {r, runs.size(), slots.size()};
    out.append(reinterpret_cast<const char*>(header), sizeof header);
    out.append(reinterpret_cast<const char*>(runs.data()), runs.size() * sizeof(EventRun));
    out.append(reinterpret_cast<const char*>(slots.data()), slots.size() * sizeof(RunSlot));
  }
  return out;
}

void TimelineRecorder::merge(const std::string& bytes) {
  std::size_t at = 0;
  while (at < bytes.size()) {
    std::uint64_t header[3];
    ANYP_CHECK(at + sizeof header <= bytes.size(), "a timeline exchange ended early");
    std::memcpy(header, bytes.data() + at, sizeof header);
    at += sizeof header;
    const std::size_t n = header[1] * sizeof(EventRun), m = header[2] * sizeof(RunSlot);
    ANYP_CHECK(header[0] < events_.size() && at + n + m <= bytes.size(),
               "a timeline exchange names a rank out of range or ended early");
    std::vector<EventRun> runs(header[1]);
    std::vector<RunSlot> slots(header[2]);
    std::memcpy(runs.data(), bytes.data() + at, n);
    std::memcpy(slots.data(), bytes.data() + at + n, m);
    events_[header[0]].assign(std::move(runs), std::move(slots));
    at += n + m;
  }
}

}  // namespace anyp::runtime
