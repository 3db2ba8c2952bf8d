// timeline_output.cpp — the timeline as text and as a Chrome trace
// (nlohmann-json writes the JSON).
#include "anyp/timeline_output.hpp"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace anyp {

namespace cli {
namespace {

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
  if (op.kind == TimelineOp::Kind::Wait && op.blocked_ns > 0)
    s += ", blocked " + us(op.blocked_ns) + " us";
  if (op.function != 0) s += " (" + t.name(op.function) + ": " + t.name(op.op) + ")";
  return s;
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

void write_chrome_trace(const Timeline& t, const std::string& path) {
  using nlohmann::json;
  json events = json::array();
  events.push_back({{"ph", "M"},
                    {"name", "process_name"},
                    {"pid", 0},
                    {"args", {{"name", "anyp (model " + t.model + ")"}}}});
  // One track per rank, and per block of a rank that ran a multi-block
  // launch: track block * P + rank, sorted by rank, then block.
  const auto world = static_cast<std::int64_t>(t.ranks.size());
  auto track = [world](const TimelineOp& op) { return op.block * world + op.rank; };
  std::int64_t blocks = 1;
  for (const TimelineOp& op : t.ops) blocks = std::max(blocks, op.block + 1);
  for (std::int64_t b = 0; b < blocks; ++b) {
    for (std::int64_t r = 0; r < world; ++r) {
      const std::string name =
          "rank " + std::to_string(r) + (b > 0 ? " block " + std::to_string(b) : "");
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", 0},
                        {"tid", b * world + r},
                        {"args", {{"name", name}}}});
      events.push_back({{"ph", "M"},
                        {"name", "thread_sort_index"},
                        {"pid", 0},
                        {"tid", b * world + r},
                        {"args", {{"sort_index", r * blocks + b}}}});
    }
  }
  // Trace timestamps are microseconds.
  for (const TimelineOp& op : t.ops) {
    json args = {{"kind", timeline_op_kind_name(op.kind)}};
    if (op.function != 0) args["function"] = t.name(op.function);
    if (op.memory != 0)
      args[op.kind == TimelineOp::Kind::Notify || op.kind == TimelineOp::Kind::Wait ? "cell"
                                                                                    : "buffer"] =
          t.name(op.memory);
    if (op.peer >= 0) args["peer"] = op.peer;
    if (op.bytes > 0) args["bytes"] = op.bytes;
    if (op.elements > 0) args["elements"] = op.elements;
    if (op.kind == TimelineOp::Kind::Wait) args["blocked_us"] = op.blocked_ns / 1000.0;
    events.push_back({{"ph", "X"},
                      {"name", op.op != 0 ? t.name(op.op) : timeline_op_kind_name(op.kind)},
                      {"cat", timeline_op_kind_name(op.kind)},
                      {"pid", 0},
                      {"tid", track(op)},
                      {"ts", op.start_ns / 1000.0},
                      {"dur", (op.end_ns - op.start_ns) / 1000.0},
                      {"args", std::move(args)}});
  }
  // A flow from each notify to the wait it satisfied (each end inside its
  // slice, so that Perfetto binds it).
  for (std::size_t f = 0; f < t.flows.size(); ++f) {
    const TimelineOp& from = t.ops[t.flows[f].notify];
    const TimelineOp& to = t.ops[t.flows[f].wait];
    events.push_back({{"ph", "s"},
                      {"name", "notify"},
                      {"cat", "signal"},
                      {"id", f},
                      {"pid", 0},
                      {"tid", track(from)},
                      {"ts", (from.start_ns + from.end_ns) / 2000.0}});
    events.push_back({{"ph", "f"},
                      {"bp", "e"},
                      {"name", "notify"},
                      {"cat", "signal"},
                      {"id", f},
                      {"pid", 0},
                      {"tid", track(to)},
                      {"ts", (to.start_ns + to.end_ns) / 2000.0}});
  }
  const json trace = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ns"},
      {"otherData",
       {{"model", t.model}, {"makespan_us", t.makespan_ns / 1000.0}, {"rounds", t.rounds}}}};
  std::ofstream file(path);
  if (!file) throw std::runtime_error("--trace: cannot write '" + path + "'");
  file << trace.dump(1) << '\n';
  if (!file) throw std::runtime_error("--trace: cannot write '" + path + "'");
}

}  // namespace cli
}  // namespace anyp
