// lowered_code.cpp — opcode names and meanings, from the one table in
// vm_opcodes.hpp.
#include "runtime/lowered_code.hpp"

#include "common/internal_check.hpp"

namespace anyp::runtime {

const char* opcode_name(Opcode op) {
  switch (op) {
#define ANYP_X(name, text, traits, meaning) \
  case Opcode::name:                        \
    return text;
    ANYP_VM_OPCODES(ANYP_X)
#undef ANYP_X
  }
  ANYP_UNREACHABLE("opcode " + std::to_string(static_cast<int>(op)) + " has no name");
}

std::string group_text(const std::vector<std::int64_t>& group) {
  constexpr std::size_t kShown = 16;
  std::string s = "{";
  for (std::size_t i = 0; i < group.size() && i < kShown; ++i)
    s += (i ? ", " : "") + std::to_string(group[i]);
  if (group.size() > kShown) s += " and " + std::to_string(group.size() - kShown) + " more";
  return s + "}";
}

const char* opcode_meaning(Opcode op) {
  switch (op) {
#define ANYP_X(name, text, traits, meaning) \
  case Opcode::name:                        \
    return meaning;
    ANYP_VM_OPCODES(ANYP_X)
#undef ANYP_X
  }
  ANYP_UNREACHABLE("opcode " + std::to_string(static_cast<int>(op)) + " has no meaning");
}

}  // namespace anyp::runtime
