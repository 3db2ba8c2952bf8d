// comm_scope.cpp — the world or a comm domain, as the checks and the
// lowering see it.
#include "compiler/comm_scope.hpp"

namespace anyp::compiler {

std::string CommScope::count_text(std::int32_t d) const {
  if (d < 0) return "P = " + std::to_string(world);
  return "G = " + std::to_string(size(d)) + " (the group size of domain '" +
         (*domains)[static_cast<std::size_t>(d)].name + "')";
}

std::string CommScope::name(std::int32_t d) const {
  return d < 0 ? "the world" : "domain '" + (*domains)[static_cast<std::size_t>(d)].name + "'";
}

bool is_window(const ir::Function& fn, const ir::Operand& o) {
  return o.is_var() && fn.vars[o.var].type.kind == ir::TypeKind::DistTensor;
}

const ir::Operand* first_window(const ir::Function& fn, const ir::Op& op) {
  for (const ir::Operand& a : op.args)
    if (is_window(fn, a)) return &a;
  return nullptr;
}

ParamDomains dispatch_domains(const std::vector<runtime::ArgBinding>& args,
                              const std::vector<runtime::WindowBuffer>& buffers) {
  ParamDomains out;
  for (const auto& a : args) {
    out.push_back(a.kind == runtime::ArgBinding::Kind::Window
                      ? buffers[static_cast<std::size_t>(a.buffer)].domain
                      : -1);
  }
  return out;
}

}  // namespace anyp::compiler
