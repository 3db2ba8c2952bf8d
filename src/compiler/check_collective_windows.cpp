// check_collective_windows.cpp — distinct window buffers per collective call
// (see check_collective_windows.hpp).
#include "compiler/check_collective_windows.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anyp/errors.hpp"
#include "runtime/collective_tracker.hpp"

namespace anyp::compiler {
namespace {

using runtime::Opcode;

constexpr std::int32_t kUnassigned = -1;
constexpr std::int32_t kMixed = -2;  // different parameters on different paths

std::int32_t join(std::int32_t a, std::int32_t b) {
  if (a == kUnassigned) return b;
  if (b == kUnassigned || a == b) return a;
  return kMixed;
}

// Per view register: the parameter index whose view it holds on every path,
// kUnassigned or kMixed.
std::vector<std::int32_t> view_origins(const runtime::LoweredCode& code) {
  std::vector<std::int32_t> origin(static_cast<std::size_t>(code.num_views), kUnassigned);
  for (std::size_t i = 0; i < code.param_regs.size(); ++i) {
    if (code.param_files[i] == 'v') origin[code.param_regs[i]] = static_cast<std::int32_t>(i);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& in : code.instrs) {
      if (in.op != Opcode::MovView) continue;
      const std::int32_t joined = join(origin[in.dst], origin[in.a]);
      if (joined != origin[in.dst]) {
        origin[in.dst] = joined;
        changed = true;
      }
    }
  }
  return origin;
}

std::string function_text(const ir::Program& program, const std::string& name) {
  for (const auto& fn : program.functions) {
    // (a pl::Program entry's host has the entry's name: codes are never a host's)
    if (fn->name == name && fn->level != ir::Level::Host)
      return "function '" + name + "' (" + ir::level_name(fn->level) + ")";
  }
  return "function '" + name + "'";
}

}  // namespace

void check_collective_windows(const ir::Program& program, const runtime::Executable& exec) {
  std::vector<std::vector<std::int32_t>> origins;
  for (const auto& code : exec.codes) origins.push_back(view_origins(code));
  for (const auto& rank : exec.ranks) {
    for (const auto& d : rank) {
      const runtime::LoweredCode& code = exec.codes[static_cast<std::size_t>(d.code)];
      const std::vector<std::int32_t>& origin = origins[static_cast<std::size_t>(d.code)];
      for (const auto& in : code.instrs) {
        if (in.op != Opcode::Collective) continue;
        const runtime::CollectiveDesc& desc = code.collectives[static_cast<std::size_t>(in.imm)];
        // The bytes operand k covers, when its window is known statically.
        auto span_of = [&](std::size_t k) -> std::optional<runtime::WindowSpan> {
          const std::int32_t o = origin[desc.views[k]];
          if (o < 0) return std::nullopt;
          const runtime::ArgBinding& a = d.args[static_cast<std::size_t>(o)];
          if (a.kind != runtime::ArgBinding::Kind::Window) return std::nullopt;
          return runtime::window_span(a.buffer, a.byte_offset, a.dtype, a.shape);
        };
        for (std::size_t i = 0; i < desc.views.size(); ++i) {
          const auto si = span_of(i);
          if (!si) continue;
          const std::int32_t bi = si->buffer;
          for (std::size_t j = i + 1; j < desc.views.size(); ++j) {
            const auto sj = span_of(j);
            if (!sj || !si->overlaps(*sj)) continue;
            const runtime::Site& site = code.sites[static_cast<std::size_t>(in.site)];
            throw CompileError(
                "compile error: " + function_text(program, site.function) + ", op " +
                site.located_op() + ": " +
                runtime::shared_window_message(desc.roles[i], desc.roles[j],
                                               exec.buffers[static_cast<std::size_t>(bi)].name));
          }
        }
      }
    }
  }
}

}  // namespace anyp::compiler
