// comm_scope.hpp — which ranks a window view's collectives and peers span:
// the world (P ranks), or the groups of a pld::comm_domain. The checks and
// the lowering of a function depend on it only through the group size that
// replaces P, so each orchestration function is checked and lowered once per
// distinct list of its window parameters' domains (ParamDomains).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/function.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::compiler {

// Per parameter of a dispatched function: the domain of the window bound
// to it (an index into the program's domains), or -1 (the world, or not a
// window).
using ParamDomains = std::vector<std::int32_t>;

struct CommScope {
  std::int64_t world = 0;
  const std::vector<runtime::CommDomain>* domains = nullptr;

  // The number of ranks a collective on a view of domain d spans.
  std::int64_t size(std::int32_t d) const {
    return d < 0 ? world : (*domains)[static_cast<std::size_t>(d)].group_size;
  }
  // "P = 4", or "G = 2 (the group size of domain 'tp')": the count that a
  // collective's shapes are checked against.
  std::string count_text(std::int32_t d) const;
  // "the world", or "domain 'tp'".
  std::string name(std::int32_t d) const;
  // Whether domain d was inferred from the dispatched ranks.
  bool inferred(std::int32_t d) const {
    return d >= 0 && (*domains)[static_cast<std::size_t>(d)].inferred;
  }
};

// Operand `o` of a function of `fn` is a window view.
bool is_window(const ir::Function& fn, const ir::Operand& o);
// The first window operand of `op` (a collective's data, dst or signal;
// the view a window result takes its domain from), or nullptr.
const ir::Operand* first_window(const ir::Function& fn, const ir::Op& op);

// The domains of a dispatch's arguments.
ParamDomains dispatch_domains(const std::vector<runtime::ArgBinding>& args,
                              const std::vector<runtime::WindowBuffer>& buffers);

}  // namespace anyp::compiler
