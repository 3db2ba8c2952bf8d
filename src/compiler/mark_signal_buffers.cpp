// mark_signal_buffers.cpp — which window buffers hold signal cells.
#include "compiler/mark_signal_buffers.hpp"

#include <vector>

#include "ir/op_attrs.hpp"

namespace anyp::compiler {
namespace {

using runtime::Opcode;

// How a program uses a view.
enum Use : unsigned {
  kSignal = 1,     // the signal of a notify or wait
  kNotCredit = 2,  // a Set notify, or a wait other than Ge
  kData = 4,       // a data operand (load, store, read, write, put, get, flat ops)
};

// Per code: the uses of each parameter (0 for scalars).
std::vector<unsigned> param_uses(const runtime::LoweredCode& code) {
  std::vector<unsigned> use(static_cast<std::size_t>(code.num_views), 0);
  for (const auto& in : code.instrs) {
    // Which registers are views, and how the op uses them: the opcode
    // table's traits (vm_opcodes.hpp).
    if (runtime::opcode_has(in.op, runtime::kSignalA)) {
      use[in.a] |= kSignal;
      const bool credit = in.op == Opcode::Notify
                              ? static_cast<ir::NotifyKind>(in.sub) == ir::NotifyKind::AtomicAdd
                              : static_cast<ir::WaitKind>(in.sub) == ir::WaitKind::Ge;
      if (!credit) use[in.a] |= kNotCredit;
    }
    if (runtime::opcode_has(in.op, runtime::kDataA)) use[in.a] |= kData;
    if (runtime::opcode_has(in.op, runtime::kDataB)) use[in.b] |= kData;
    if (runtime::opcode_has(in.op, runtime::kDataC) ||
        (runtime::opcode_has(in.op, runtime::kDataCView) && in.count == 0))
      use[in.c] |= kData;
  }
  // A view copied into another register is used as that register is.
  for (bool changed = true; changed;) {
    changed = false;
    for (const auto& in : code.instrs) {
      const bool derived = runtime::opcode_has(in.op, runtime::kViewOfA);
      if (derived && (use[in.a] | use[in.dst]) != use[in.a]) {
        use[in.a] |= use[in.dst];
        changed = true;
      }
    }
  }
  std::vector<unsigned> params(code.param_regs.size(), 0);
  for (std::size_t i = 0; i < params.size(); ++i)
    if (code.param_files[i] == 'v') params[i] = use[code.param_regs[i]];
  return params;
}

}  // namespace

void mark_signal_buffers(runtime::Executable& exec) {
  std::vector<std::vector<unsigned>> params;
  for (const auto& code : exec.codes) params.push_back(param_uses(code));
  std::vector<unsigned> uses(exec.buffers.size(), 0);
  for (const auto& rank : exec.ranks) {
    for (const auto& d : rank) {
      for (std::size_t i = 0; i < d.args.size(); ++i) {
        const auto& a = d.args[i];
        if (a.kind == runtime::ArgBinding::Kind::Window) uses[a.buffer] |= params[d.code][i];
      }
    }
  }
  for (std::size_t b = 0; b < uses.size(); ++b) {
    exec.buffers[b].signal = (uses[b] & kSignal) != 0;
    exec.buffers[b].credit_only = uses[b] == kSignal;
  }
}

}  // namespace anyp::compiler
