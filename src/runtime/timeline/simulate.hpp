// simulate.hpp — the modeled timeline of a run: each rank's recorded
// events (timeline_recorder.hpp) replayed on the cost model's clock
// (cost_model.hpp) by a discrete-event simulation. Ranks advance in
// program order, each op costing what the model says; a notify becomes an
// arrival at its cell notify_ns later; a wait ends once the cell's modeled
// value satisfies it (arrivals applied in modeled-time order), plus
// wait_ns. Ties go to arrivals, then to the lower rank, so the result is a
// function of the events and the model only: the same for every schedule,
// worker count and engine that produced the same events.
#pragma once

#include <vector>

#include "anyp/timeline.hpp"
#include "runtime/executable.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "runtime/timeline/timeline_recorder.hpp"

namespace anyp::runtime {

// What the timeline keeps (RunConfig::timeline_detail):
//   Ops      Timeline::ops holds every op, Timeline::flows every notify ->
//            wait;
//   Path     the figures and the critical path: ops holds the path's ops,
//            in order, flows is empty. The simulation keeps no per-op
//            record but 8 bytes for the path, and runs a second time to
//            collect the path's ops;
//   Figures  the figures only, in one run and no per-op memory.
// In the order of kTimelineDetails (anyp/run_config.hpp), which names them.
enum class TimelineDetail { Ops, Path, Figures };
// RunConfig::timeline_detail's text (one of kTimelineDetails; checked).
TimelineDetail timeline_detail(const std::string& name);

Timeline simulate_timeline(const Executable& exec, const std::vector<EventStream>& events,
                           const CostModel& model, TimelineDetail detail = TimelineDetail::Ops);

}  // namespace anyp::runtime
