// mark_signal_buffers.cpp — which window buffers hold signal cells.
#include "compiler/mark_signal_buffers.hpp"

#include <vector>

namespace anyp::compiler {
namespace {

using runtime::Opcode;

// Per code: is parameter i a signal view?
std::vector<bool> signal_params(const runtime::LoweredCode& code) {
  std::vector<bool> is_signal(static_cast<std::size_t>(code.num_views), false);
  for (const auto& in : code.instrs) {
    if (in.op == Opcode::Notify || in.op == Opcode::Wait) is_signal[in.a] = true;
  }
  // A view copied into a signal register is a signal too.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& in : code.instrs) {
      if (in.op == Opcode::MovView && is_signal[in.dst] && !is_signal[in.a]) {
        is_signal[in.a] = true;
        changed = true;
      }
    }
  }
  std::vector<bool> params(code.param_regs.size(), false);
  for (std::size_t i = 0; i < params.size(); ++i)
    params[i] = code.param_files[i] == 'v' && is_signal[code.param_regs[i]];
  return params;
}

}  // namespace

void mark_signal_buffers(runtime::Executable& exec) {
  std::vector<std::vector<bool>> params;
  for (const auto& code : exec.codes) params.push_back(signal_params(code));
  for (const auto& rank : exec.ranks) {
    for (const auto& d : rank) {
      for (std::size_t i = 0; i < d.args.size(); ++i) {
        const auto& a = d.args[i];
        if (a.kind == runtime::ArgBinding::Kind::Window && params[d.code][i])
          exec.buffers[a.buffer].signal = true;
      }
    }
  }
}

}  // namespace anyp::compiler
