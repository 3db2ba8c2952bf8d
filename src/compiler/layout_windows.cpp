// layout_windows.cpp — symmetric window layout with 32-byte slots.
#include "compiler/layout_windows.hpp"

namespace anyp::compiler {

std::int64_t layout_windows(std::vector<runtime::WindowBuffer>& buffers) {
  std::int64_t offset = 0;
  for (auto& b : buffers) {
    b.offset = offset;
    b.bytes = (b.used + kWindowSlotAlign - 1) / kWindowSlotAlign * kWindowSlotAlign;
    offset += b.bytes;
  }
  return offset;
}

std::string window_layout_text(const std::vector<runtime::WindowBuffer>& buffers,
                               std::int64_t window_bytes) {
  std::string s = "window bytes per rank: " + std::to_string(window_bytes) + "\n";
  for (const auto& b : buffers) {
    s += "  " + b.name + ": offset " + std::to_string(b.offset) + ", slot " +
         std::to_string(b.bytes) + " B, used " + std::to_string(b.used) + " B";
    if (b.signal) s += b.credit_only ? ", signal (credits only)" : ", signal";
    s += "\n";
  }
  return s;
}

}  // namespace anyp::compiler
