// timeline_output.hpp — a run's modeled timeline (anyp/timeline.hpp) as
// text and as a Chrome trace (part of anyp::cli):
//
//   timeline_text(t)         the per-rank table, the DMA engines' and the
//                            shared links' use (a model with them) and the
//                            critical path (the examples' --timeline)
//   write_chrome_trace(t, f) Chrome Trace Event Format JSON: one track per
//                            rank and per DMA engine, a slice per op, a flow
//                            arrow from each notify to the wait it
//                            satisfied and from each transfer's issue to the
//                            transfer, modeled time
//                            on the axis; opens in Perfetto (ui.perfetto.dev)
//                            and chrome://tracing (the examples' --trace)
#pragma once

#include <cstdint>
#include <string>

#include "anyp/timeline.hpp"

namespace anyp::cli {

std::string timeline_text(const Timeline& timeline);
// A trace of more than this is refused: Perfetto's UI and chrome://tracing
// load a JSON trace whole into the browser's memory.
inline constexpr std::int64_t kMaxTraceBytes = std::int64_t{1} << 30;  // 1 GiB

// Throws std::runtime_error naming the file when it cannot be written, and
// (writing nothing) when the trace would be larger than max_bytes, with
// its estimated size. The events are streamed to the file one per line.
void write_chrome_trace(const Timeline& timeline, const std::string& path,
                        std::int64_t max_bytes = kMaxTraceBytes);

}  // namespace anyp::cli
