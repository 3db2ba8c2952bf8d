// layout_windows.hpp — pass 4: place every window buffer in the symmetric
// window: the same offset on every rank, each slot rounded up to 32 bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/lowered_code.hpp"

namespace anyp::compiler {

inline constexpr std::int64_t kWindowSlotAlign = 32;

// Assigns offsets and slot sizes in allocation order; returns bytes per rank.
std::int64_t layout_windows(std::vector<runtime::WindowBuffer>& buffers);
// One line per buffer: "src_buf: offset 0, slot 256 B, used 256 B", with
// ", signal" or ", signal (credits only)" for signal buffers.
std::string window_layout_text(const std::vector<runtime::WindowBuffer>& buffers,
                               std::int64_t window_bytes);

}  // namespace anyp::compiler
