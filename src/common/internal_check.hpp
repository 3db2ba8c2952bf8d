// internal_check.hpp — ANYP_CHECK(cond, message): an invariant of anyp
// itself. When it fails, anyp::InternalError is thrown with the message, the
// condition and the source location — a bug in anyp, never a user's mistake
// (user mistakes get CompileError / RunError with their own messages). Used
// instead of silent `default:` branches and unchecked assumptions.
//
//   ANYP_CHECK(in.a >= 0, "store without a source tile");
//   ANYP_UNREACHABLE("unknown opcode " + std::to_string(op));
#pragma once

#include <string>

namespace anyp::detail {

[[noreturn]] void internal_error(const char* file, int line, const char* condition,
                                 const std::string& message);

}  // namespace anyp::detail

#define ANYP_CHECK(cond, message)                                                    \
  do {                                                                               \
    if (!(cond)) ::anyp::detail::internal_error(__FILE__, __LINE__, #cond, message); \
  } while (0)

#define ANYP_UNREACHABLE(message) \
  ::anyp::detail::internal_error(__FILE__, __LINE__, nullptr, message)
