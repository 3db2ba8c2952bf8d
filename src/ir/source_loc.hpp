// source_loc.hpp — where in the user's source an op was recorded: the file
// (interned, so an op carries a pointer, not a string), the line and the
// column. C++ programs get it from std::source_location at each pl/pld
// call; the Python front-end sets it per statement. Diagnostics name it as
// "op pl.store at step.py:42".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace anyp::ir {

struct SourceLoc {
  const char* file = nullptr;  // from intern_file_name (lives for the process)
  std::uint32_t line = 0;
  std::uint32_t column = 0;  // 1-based; 0: unknown
  bool known() const { return file != nullptr && line > 0; }
};

// A stable copy of `path` (one per distinct path; never freed).
const char* intern_file_name(std::string_view path);

// "step.py:42" (the file's base name and the line), or "" when unknown.
std::string to_string(const SourceLoc& loc);

// `name`, and " at step.py:42" when `loc` is known: how diagnostics name
// an op or a statement.
std::string site_name(std::string_view name, const SourceLoc& loc);

}  // namespace anyp::ir
