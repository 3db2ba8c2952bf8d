// device_list.hpp — the example command line's device lists (-d/--device,
// example_cli.cpp): "0,1,2" or ranges such as "0-7" parsed into device ids,
// checked (distinct, at least 2), matched to an MPI world's size, and
// printed back. Every refusal is an anyp::cli::UsageError naming -d/--device.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace anyp::cli {

// The ids of a -d list: comma-separated items, each an id or an inclusive
// range "first-last" (blanks around items and dashes are ignored). Refuses
// an empty list or item, a non-integer, a negative id, an empty range and
// more than 2^24 devices.
std::vector<std::int64_t> parse_device_list(const std::string& text);
// Refuses a device listed twice, and fewer than 2 devices.
void check_device_ids(const std::vector<std::int64_t>& ids);
// The devices of a run on a multi-process engine whose world has
// `world_size` processes: 0, ..., world_size - 1 when `text` is empty, else
// parse_device_list(text), which must name world_size devices.
std::vector<std::int64_t> world_device_list(const std::string& text, int world_size);
// The ids, joined by `separator`: "0, 1, 2".
std::string device_ids_text(const std::vector<std::int64_t>& ids, const char* separator = ", ");

}  // namespace anyp::cli
