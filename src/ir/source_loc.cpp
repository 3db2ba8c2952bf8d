// source_loc.cpp — interned file names and the printed form of a SourceLoc.
#include "ir/source_loc.hpp"

#include <mutex>
#include <set>

namespace anyp::ir {

const char* intern_file_name(std::string_view path) {
  static std::mutex mutex;
  static std::set<std::string, std::less<>> names;  // node-based: c_str() stays valid
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = names.find(path);
  if (it == names.end()) it = names.emplace(path).first;
  return it->c_str();
}

std::string to_string(const SourceLoc& loc) {
  if (!loc.known()) return "";
  const std::string_view path(loc.file);
  const std::size_t slash = path.find_last_of("/\\");
  const std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return std::string(base) + ":" + std::to_string(loc.line);
}

std::string site_name(std::string_view name, const SourceLoc& loc) {
  std::string out(name);
  if (loc.known()) out += " at " + to_string(loc);
  return out;
}

}  // namespace anyp::ir
