// dfx_files.cpp — deps.json, scope_stats/scope_stats.jsonl and
// chip_swimlane_records.json per rank and dispatch (docs/task-records.md).
#include "api/dfx_files.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "anyp/errors.hpp"
#include "common/json_text.hpp"
#include "runtime/executable_text.hpp"

namespace anyp {
namespace {

using runtime::ByteRange;
using runtime::DispatchRecord;
using runtime::Executable;
using runtime::TaskRecord;

const runtime::Site& site_of(const Executable& exec, runtime::SiteRef ref) {
  return exec.codes[static_cast<std::size_t>(ref.code)].sites[static_cast<std::size_t>(ref.site)];
}

std::string ranges_json(const Executable& exec, const std::vector<ByteRange>& ranges) {
  std::string out = "[";
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const ByteRange& r = ranges[i];
    out += (i ? ", " : "") + std::string("{\"memory\": ") +
           json_string(runtime::memory_text(exec, r.space, r.id, r.owner)) + ", \"bytes\": [" +
           std::to_string(r.first) + ", " + std::to_string(r.end) + "]}";
  }
  return out + "]";
}

std::string list_json(const std::vector<std::size_t>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

std::string header_json(const Executable& exec, std::size_t rank, const DispatchRecord& d) {
  return "\"rank\": " + std::to_string(rank) + ", \"dispatch\": " + std::to_string(d.index) +
         ", \"function\": " + json_string(exec.codes[static_cast<std::size_t>(d.code)].function);
}

std::string task_head_json(const Executable& exec, const TaskRecord& t, std::size_t id) {
  const runtime::Site& s = site_of(exec, t.site);
  return "\"id\": " + std::to_string(id) + ", \"function\": " + json_string(s.function) +
         ", \"called_at\": " + json_string(s.where);
}

std::string deps_json(const Executable& exec, std::size_t rank, const DispatchRecord& d) {
  std::string out = "{" + header_json(exec, rank, d) + ",\n \"tasks\": [";
  for (std::size_t j = 0; j < d.tasks.size(); ++j) {
    const TaskRecord& t = d.tasks[j];
    out += (j ? ",\n  " : "\n  ") + std::string("{") + task_head_json(exec, t, j) +
           ", \"reads\": " + ranges_json(exec, t.reads) +
           ", \"writes\": " + ranges_json(exec, t.writes) +
           ", \"deps\": " + list_json(runtime::TaskRecorder::dependencies(d, j)) + "}";
  }
  return out + (d.tasks.empty() ? "]}\n" : "\n ]}\n");
}

std::string scope_stats_json(const Executable& exec, std::size_t rank, const DispatchRecord& d) {
  std::size_t edges = 0;
  for (std::size_t j = 0; j < d.tasks.size(); ++j)
    edges += runtime::TaskRecorder::dependencies(d, j).size();
  return "{" + header_json(exec, rank, d) +
         ", \"scope\": \"dispatch\", \"tasks\": " + std::to_string(d.tasks.size()) +
         ", \"dependencies\": " + std::to_string(edges) +
         ", \"start_ns\": " + std::to_string(d.start_ns) +
         ", \"end_ns\": " + std::to_string(d.end_ns) + "}\n";
}

std::string swimlane_json(const Executable& exec, std::size_t rank, const DispatchRecord& d) {
  std::string out = "{" + header_json(exec, rank, d) + ",\n \"records\": [";
  for (std::size_t j = 0; j < d.tasks.size(); ++j) {
    const TaskRecord& t = d.tasks[j];
    out += (j ? ",\n  " : "\n  ") + std::string("{") + task_head_json(exec, t, j) +
           ", \"start_ns\": " + std::to_string(t.start_ns) +
           ", \"end_ns\": " + std::to_string(t.end_ns) + "}";
  }
  return out + (d.tasks.empty() ? "]}\n" : "\n ]}\n");
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream file(path, std::ios::trunc);
  file << text;
  if (!file) throw RunError("run error: cannot write the DFX record '" + path.string() + "'");
}

}  // namespace

void write_dfx_files(const RunConfig& config, const Executable& exec,
                     const std::vector<std::vector<DispatchRecord>>& ranks) {
  const std::filesystem::path base = std::filesystem::path(config.output_dir) / "dfx_outputs";
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const DispatchRecord& d : ranks[r]) {
      const std::filesystem::path dir =
          base / ("rank" + std::to_string(r)) / ("d" + std::to_string(d.index));
      if (config.enable_dep_gen || config.enable_chip_swimlane)
        write_file(dir / "deps.json", deps_json(exec, r, d));
      if (config.enable_scope_stats)
        write_file(dir / "scope_stats" / "scope_stats.jsonl", scope_stats_json(exec, r, d));
      if (config.enable_chip_swimlane)
        write_file(dir / "chip_swimlane_records.json", swimlane_json(exec, r, d));
    }
  }
}

}  // namespace anyp
