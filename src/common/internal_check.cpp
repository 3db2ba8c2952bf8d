// internal_check.cpp — builds the InternalError of a failed ANYP_CHECK.
#include "common/internal_check.hpp"

#include <string_view>

#include "anyp/errors.hpp"

namespace anyp::detail {

[[noreturn]] void internal_error(const char* file, int line, const char* condition,
                                 const std::string& message) {
  std::string_view path(file);
  const auto src = path.rfind("src/");
  if (src != std::string_view::npos) path.remove_prefix(src);
  std::string text = "internal error: " + message + " (";
  if (condition != nullptr) text += std::string("check '") + condition + "' failed at ";
  text += std::string(path) + ":" + std::to_string(line) +
          "); this is a bug in anyp, please report it with the command that produced it";
  throw InternalError(text);
}

}  // namespace anyp::detail
