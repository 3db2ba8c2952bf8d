// executable_text.hpp — how reports name the parts of an Executable: an
// agent ("rank 1 block 2") and where a run error happened ("run error:
// rank 1 (device 1), function 'f', op pld.tensor.put"). Shared by the rank
// VM, the race report and the modeled timeline, which stand beside the VM
// (observers include no VM header).
#pragma once

#include <cstdint>
#include <string>

#include "runtime/executable.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime {

// "rank 1" or, for an agent of a multi-block program that is not block 0,
// "rank 1 block 2": an agent (Executable::agents) in reports.
std::string agent_text(const Executable& exec, std::int64_t agent);

// "host tensor 'x'", "rank 1's window 'dst'" or "rank 1's tensor 't'
// (pl.create_tensor)": whose memory a view of `space` and `id` is, on
// `owner` (windows only).
std::string memory_text(const Executable& exec, Space space, std::int32_t id, std::int64_t owner);

// "run error: rank 1 (device 1), function 'f', op pld.tensor.put": where a
// rank's run error happened (the site may be {-1, -1}: no op).
std::string run_error_where(const Executable& exec, std::int64_t rank, SiteRef site);

}  // namespace anyp::runtime
