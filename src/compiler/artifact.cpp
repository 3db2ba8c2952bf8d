// artifact.cpp — the compile artifact of a plan: symbolic IR, specialised
// IR, window layout, per-rank lowered code and manifest.json.
#include "compiler/artifact.hpp"

#include <filesystem>
#include <fstream>

#include "anyp/errors.hpp"
#include "common/json_text.hpp"
#include "compiler/bind_dims.hpp"
#include "compiler/layout_windows.hpp"
#include "compiler/lower.hpp"
#include "compiler/plan.hpp"
#include "ir/printer.hpp"

namespace anyp::compiler {

std::string dispatch_arg_text(const runtime::ArgBinding& a, const detail::Plan& plan,
                              const std::vector<runtime::WindowBuffer>& buffers) {
  switch (a.kind) {
    case runtime::ArgBinding::Kind::HostTensor:
      return plan.host_params[a.host_param].name + "+" + std::to_string(a.byte_offset) + "B";
    case runtime::ArgBinding::Kind::Window:
      return "window:" + buffers[a.buffer].name +
             (a.byte_offset ? "+" + std::to_string(a.byte_offset) + "B" : "");
    case runtime::ArgBinding::Kind::Int:
      return std::to_string(a.int_value);
    case runtime::ArgBinding::Kind::Float:
      return std::to_string(a.float_value);
  }
  return "?";
}

namespace {

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path.string());
}

}  // namespace

std::string symbolic_ir_text(const detail::Plan& plan) { return ir::print_program(plan.program); }

std::string specialized_ir_text(const detail::Plan& plan) {
  std::string s = "; specialised for P = " + std::to_string(plan.exec.world_size);
  const std::string dims = describe_bindings(plan.bindings, plan.program);
  if (!dims.empty()) s += ", " + dims;
  s += "\n" + ir::print_program(plan.program, &plan.bindings);
  for (const auto& fn : plan.synthesized) {
    s += "\n; synthesized for a host-level collective\n" + ir::print_function(*fn, &plan.bindings);
  }
  return s;
}

std::string window_layout_text(const detail::Plan& plan) {
  return window_layout_text(plan.exec.buffers, plan.exec.window_bytes);
}

std::string lowered_code_text(const detail::Plan& plan) {
  std::string s;
  for (const auto& code : plan.exec.codes) s += lowered_code_text(code) + "\n";
  return s + dispatch_list_text(plan, plan.exec.buffers);
}

std::string dispatch_list_text(const detail::Plan& plan,
                               const std::vector<runtime::WindowBuffer>& buffers) {
  std::string s = "dispatch list:\n";
  for (std::size_t r = 0; r < plan.exec.ranks.size(); ++r) {
    for (const auto& d : plan.exec.ranks[r]) {
      s += "  rank " + std::to_string(r) + " (device " + std::to_string(plan.exec.device_ids[r]) +
           "): " + plan.exec.codes[d.code].function + "(";
      for (std::size_t i = 0; i < d.args.size(); ++i)
        s += (i ? ", " : "") + dispatch_arg_text(d.args[i], plan, buffers);
      s += ")";
      // The dispatch order across ranks (compiler/order_dispatches.hpp).
      for (const auto& w : d.waits()) {
        if (w.buffer >= 0) {
          s += ", after the earlier group on '" + buffers[w.buffer].name + "' (" +
               std::to_string(w.count) + (w.count == 1 ? " dispatch" : " dispatches") +
               " of other ranks, order cell " + std::to_string(w.cell) + " Ge " +
               std::to_string(w.count) + ")";
          continue;
        }
        s += ", after rank " + std::to_string(w.source_rank) + "'s dispatch " +
             std::to_string(w.source_dispatch) + " (order cell " + std::to_string(w.cell) + " Ge " +
             std::to_string(w.count) + ")";
      }
      for (std::int64_t e : d.edge_releases()) {
        s += ", then releases the next group (order cell " +
             std::to_string(plan.exec.order_edges[static_cast<std::size_t>(e)].cell) + ")";
      }
      for (const auto& rel : d.releases()) {
        s += ", then releases rank " + std::to_string(rel.peer) + " (order cell " +
             std::to_string(rel.cell) + ")";
      }
      s += "\n";
    }
  }
  return s;
}

std::string manifest_json_text(const detail::Plan& plan) {
  const auto& p = plan.exec;
  std::string s = "{\n  \"program\": " + json_string(p.program) + ",\n";
  s += "  \"platform\": " + json_string(plan.platform) + ",\n";
  s += "  \"world_size\": " + std::to_string(p.world_size) + ",\n  \"device_ids\": [";
  for (std::size_t i = 0; i < p.device_ids.size(); ++i)
    s += (i ? ", " : "") + std::to_string(p.device_ids[i]);
  s += "],\n  \"dims\": " + json_string(describe_bindings(plan.bindings, plan.program)) + ",\n";
  s += "  \"window_bytes_per_rank\": " + std::to_string(p.window_bytes) + ",\n  \"buffers\": [";
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    s += std::string(i ? ", " : "") + "{\"name\": " + json_string(b.name) +
         ", \"offset\": " + std::to_string(b.offset) + ", \"bytes\": " + std::to_string(b.bytes) +
         "}";
  }
  s += "],\n  \"codes\": [";
  for (std::size_t i = 0; i < p.codes.size(); ++i) {
    s += std::string(i ? ", " : "") + "{\"function\": " + json_string(p.codes[i].function) +
         ", \"instructions\": " + std::to_string(p.codes[i].instrs.size()) + "}";
  }
  s += "],\n  \"files\": [\"symbolic.ir\", \"specialized.ir\", \"window_layout.txt\", "
       "\"lowered.txt\", \"manifest.json\"]\n}\n";
  return s;
}

void write_artifact(const detail::Plan& plan, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error("cannot create output directory " + dir + ": " + ec.message());
  const std::filesystem::path base(dir);
  write_file(base / "symbolic.ir", symbolic_ir_text(plan));
  write_file(base / "specialized.ir", specialized_ir_text(plan));
  write_file(base / "window_layout.txt", window_layout_text(plan));
  write_file(base / "lowered.txt", lowered_code_text(plan));
  write_file(base / "manifest.json", manifest_json_text(plan));
}

}  // namespace anyp::compiler
