// timeline_output.cpp — the timeline as text and as a Chrome trace
// (nlohmann-json writes the JSON).
#include "anyp/timeline_output.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "common/memory_available.hpp"

namespace anyp {

namespace cli {
namespace {

// A slice's start and duration in microseconds (the trace's unit), the
// duration rounded down until start + duration, added in doubles as a
// viewer adds them, does not pass end / 1000 — where the next slice on the
// track starts; else a viewer sees the two overlap and nests the next one
// inside (speedscope does).
std::pair<double, double> slice_us(double start_ns, double end_ns) {
  const double ts = start_ns / 1000.0, end = end_ns / 1000.0;
  double dur = std::max(0.0, end - ts);
  while (dur > 0 && ts + dur > end) dur = std::nextafter(dur, 0.0);
  return {ts, dur};
}

std::string us(double ns) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(3) << ns / 1000.0;
  return s.str();
}

// "remote read 3840 B of rank 1's window 'data' (mesh_kernel: pld.tile.remote_load)"
std::string op_text(const Timeline& t, const TimelineOp& op) {
  std::string s = timeline_op_kind_name(op.kind);
  if (op.bytes > 0) s += " " + std::to_string(op.bytes) + " B";
  if (op.elements > 0) s += " of " + std::to_string(op.elements) + " elements";
  if (op.memory != 0)
    s += (op.kind == TimelineOp::Kind::Compute ? " " : " of ") + t.name(op.memory);
  if (op.kind == TimelineOp::Kind::Wait && op.blocked_ns > 0) {
    s += ", blocked " + us(op.blocked_ns) + " us";
  } else if (op.blocked_ns > 0) {
    // An access held by a transfer of its rank in flight, or a remote read
    // waiting for an engine (docs/timeline.md §2a).
    s += ", held " + us(op.blocked_ns) + " us";
  }
  if (op.function != 0) s += " (" + t.name(op.function) + ": " + t.name(op.op) + ")";
  return s;
}

std::string percent(double part, double whole) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << (whole > 0 ? 100 * part / whole : 0) << " %";
  return s.str();
}

// The DMA engines' and links' lines of timeline_text (a model with them).
void transfer_text(const Timeline& t, std::ostream& out) {
  if (t.dma_engines > 0) {
    out << "dma engines (" << t.dma_engines << " per rank, issue " << us(t.dma_issue_ns)
        << " us):\n  rank   transfers   engine_busy_us   utilisation\n";
    for (std::size_t r = 0; r < t.ranks.size(); ++r) {
      const RankTimeline& rt = t.ranks[r];
      out << std::setw(6) << r << std::setw(12) << rt.transfers << std::setw(17)
          << us(rt.engine_busy_ns) << std::setw(14)
          << percent(rt.engine_busy_ns, static_cast<double>(t.dma_engines) * t.makespan_ns) << '\n';
    }
  }
  if (!t.links.empty()) {
    constexpr std::size_t kShown = 8;
    std::vector<TimelineLink> links = t.links;
    std::stable_sort(links.begin(), links.end(), [](const TimelineLink& a, const TimelineLink& b) {
      return a.busy_ns > b.busy_ns;
    });
    const std::size_t shown = std::min(kShown, links.size());
    out << "links (shared; the " << shown << " busiest of " << links.size()
        << " ports that carried data):\n";
    for (std::size_t i = 0; i < shown; ++i) {
      const TimelineLink& l = links[i];
      out << "  rank " << l.rank << " " << timeline_port_name(l.port) << ": "
          << static_cast<std::int64_t>(l.bytes + 0.5) << " B, busy " << us(l.busy_ns) << " us ("
          << percent(l.busy_ns, t.makespan_ns) << " of the makespan)\n";
    }
  }
}

// Bytes of JSON per trace event, about (measured on the ladder's traces:
// 200 for a slice with its arguments, 85 for a flow end), rounded up.
constexpr double kBytesPerSlice = 230, kBytesPerFlowEnd = 100;

void check_trace_size(const Timeline& t, std::int64_t max_bytes) {
  std::size_t transfers = 0;
  for (const TimelineOp& op : t.ops)
    if (op.engine >= 0 && !op.continues_transfer) ++transfers;
  // A slice per op and per transfer's issue; two flow ends per notify ->
  // wait and per transfer.
  const double slices = static_cast<double>(t.ops.size() + transfers);
  const double flow_ends = 2.0 * static_cast<double>(t.flows.size() + transfers);
  const double bytes = slices * kBytesPerSlice + flow_ends * kBytesPerFlowEnd;
  if (bytes <= static_cast<double>(max_bytes)) return;
  throw std::runtime_error(
      "--trace: the trace would be about " + bytes_text(bytes) + " (" +
      std::to_string(t.ops.size()) + " ops of " + std::to_string(t.ranks.size()) + " ranks, " +
      std::to_string(t.flows.size()) + " notify -> wait arrows), more than the " +
      bytes_text(static_cast<double>(max_bytes)) +
      " a trace viewer is given; nothing was written. Trace a smaller P, or use --timeline "
      "(per-rank figures and the critical path)");
}

}  // namespace

std::string timeline_text(const Timeline& t) {
  std::ostringstream out;
  out << "timeline (model " << t.model << ", P=" << t.ranks.size() << "): makespan "
      << us(t.makespan_ns) << " us, " << t.rounds << (t.rounds == 1 ? " round\n" : " rounds\n");
  out << "  rank   finish_us     busy_us     wait_us  rounds\n";
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    const RankTimeline& rt = t.ranks[r];
    out << std::setw(6) << r << std::setw(12) << us(rt.finish_ns) << std::setw(12) << us(rt.busy_ns)
        << std::setw(12) << us(rt.wait_ns) << std::setw(8) << rt.rounds << '\n';
  }
  transfer_text(t, out);
  out << "critical path (" << t.critical_path.size() << " ops, in time order):\n";
  for (const std::size_t i : t.critical_path) {
    const TimelineOp& op = t.ops[i];
    out << "  " << std::setw(10) << us(op.start_ns) << " - " << std::setw(10) << us(op.end_ns)
        << " us  rank " << op.rank << (op.block > 0 ? " block " + std::to_string(op.block) : "")
        << "  " << op_text(t, op) << '\n';
  }
  if (!t.note.empty()) out << "note: " << t.note << '\n';
  return out.str();
}

void write_chrome_trace(const Timeline& t, const std::string& path, std::int64_t max_bytes) {
  using nlohmann::json;
  check_trace_size(t, max_bytes);
  std::ofstream file(path);
  if (!file) throw std::runtime_error("--trace: cannot write '" + path + "'");
  // Streamed, one event per line: the events are never all in memory.
  file << "{\"displayTimeUnit\":\"ns\",\"otherData\":"
       << json{{"model", t.model}, {"makespan_us", t.makespan_ns / 1000.0}, {"rounds", t.rounds}}
              .dump()
       << ",\n\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&file, &first](const json& event) {
    file << (first ? "" : ",\n") << event.dump();
    first = false;
  };
  emit({{"ph", "M"},
        {"name", "process_name"},
        {"pid", 0},
        {"args", {{"name", "anyp (model " + t.model + ")"}}}});
  // One track per rank, and per block of a rank that ran a multi-block
  // launch: track block * P + rank, sorted by rank, then block.
  const auto world = static_cast<std::int64_t>(t.ranks.size());
  auto track = [world](const TimelineOp& op) { return op.block * world + op.rank; };
  std::int64_t blocks = 1, engines = 0;
  for (const TimelineOp& op : t.ops) {
    blocks = std::max(blocks, op.block + 1);
    engines = std::max(engines, static_cast<std::int64_t>(op.engine) + 1);
  }
  // A transfer's ops are on a track per DMA engine of its rank (after the
  // rank's own tracks), the rank's issue on the rank's track.
  auto engine_track = [world, blocks, engines](const TimelineOp& op) {
    return blocks * world + op.rank * engines + op.engine;
  };
  auto name_track = [&emit](std::int64_t tid, const std::string& name, std::int64_t sort) {
    emit({{"ph", "M"},
          {"name", "thread_name"},
          {"pid", 0},
          {"tid", tid},
          {"args", {{"name", name}}}});
    emit({{"ph", "M"},
          {"name", "thread_sort_index"},
          {"pid", 0},
          {"tid", tid},
          {"args", {{"sort_index", sort}}}});
  };
  const std::int64_t per_rank = blocks + engines;
  for (std::int64_t r = 0; r < world; ++r) {
    for (std::int64_t b = 0; b < blocks; ++b)
      name_track(b * world + r,
                 "rank " + std::to_string(r) + (b > 0 ? " block " + std::to_string(b) : ""),
                 r * per_rank + b);
    for (std::int64_t e = 0; e < engines; ++e) {
      TimelineOp on;
      on.rank = r;
      on.engine = static_cast<std::int32_t>(e);
      name_track(engine_track(on), "rank " + std::to_string(r) + " dma " + std::to_string(e),
                 r * per_rank + blocks + e);
    }
  }
  // Trace timestamps are microseconds.
  std::size_t flow_id = t.flows.size();
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp& op = t.ops[i];
    if (op.engine >= 0 && !op.continues_transfer) {
      // The issue on the rank's track, and a flow from it to the transfer.
      const double issue_end = op.issued_ns + t.dma_issue_ns;
      emit({{"ph", "X"},
            {"name", "issue " + (op.op != 0 ? t.name(op.op) : std::string("transfer"))},
            {"cat", "issue"},
            {"pid", 0},
            {"tid", track(op)},
            {"ts", slice_us(op.issued_ns, issue_end).first},
            {"dur", slice_us(op.issued_ns, issue_end).second},
            {"args", {{"engine", op.engine}}}});
      emit({{"ph", "s"},
            {"name", "transfer"},
            {"cat", "dma"},
            {"id", flow_id},
            {"pid", 0},
            {"tid", track(op)},
            {"ts", (op.issued_ns + issue_end) / 2000.0}});
      emit({{"ph", "f"},
            {"bp", "e"},
            {"name", "transfer"},
            {"cat", "dma"},
            {"id", flow_id++},
            {"pid", 0},
            {"tid", engine_track(op)},
            {"ts", (op.start_ns + op.end_ns) / 2000.0}});
    }
    json args = {{"kind", timeline_op_kind_name(op.kind)}};
    if (op.function != 0) args["function"] = t.name(op.function);
    if (op.memory != 0)
      args[op.kind == TimelineOp::Kind::Notify || op.kind == TimelineOp::Kind::Wait ? "cell"
                                                                                    : "buffer"] =
          t.name(op.memory);
    if (op.peer >= 0) args["peer"] = op.peer;
    if (op.bytes > 0) args["bytes"] = op.bytes;
    if (op.elements > 0) args["elements"] = op.elements;
    if (op.kind == TimelineOp::Kind::Wait || op.blocked_ns > 0)
      args["blocked_us"] = op.blocked_ns / 1000.0;
    if (op.engine >= 0) args["issued_us"] = op.issued_ns / 1000.0;
    emit({{"ph", "X"},
          {"name", op.op != 0 ? t.name(op.op) : timeline_op_kind_name(op.kind)},
          {"cat", timeline_op_kind_name(op.kind)},
          {"pid", 0},
          {"tid", op.engine >= 0 ? engine_track(op) : track(op)},
          {"ts", slice_us(op.start_ns, op.end_ns).first},
          {"dur", slice_us(op.start_ns, op.end_ns).second},
          {"args", std::move(args)}});
  }
  // A flow from each notify to the wait it satisfied (each end inside its
  // slice, so that Perfetto binds it).
  for (std::size_t f = 0; f < t.flows.size(); ++f) {
    const TimelineOp& from = t.ops[t.flows[f].notify];
    const TimelineOp& to = t.ops[t.flows[f].wait];
    emit({{"ph", "s"},
          {"name", "notify"},
          {"cat", "signal"},
          {"id", f},
          {"pid", 0},
          {"tid", track(from)},
          {"ts", (from.start_ns + from.end_ns) / 2000.0}});
    emit({{"ph", "f"},
          {"bp", "e"},
          {"name", "notify"},
          {"cat", "signal"},
          {"id", f},
          {"pid", 0},
          {"tid", track(to)},
          {"ts", (to.start_ns + to.end_ns) / 2000.0}});
  }
  file << "\n]}\n";
  if (!file) throw std::runtime_error("--trace: cannot write '" + path + "'");
}

}  // namespace cli
}  // namespace anyp
