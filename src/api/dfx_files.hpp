// dfx_files.hpp — PyPTO's DFX records of a run (RunConfig::enable_dep_gen,
// enable_scope_stats, enable_chip_swimlane), written from the task
// recorder's dispatches under <output_dir>/dfx_outputs/rank<r>/d<k>/.
#pragma once

#include <string>
#include <vector>

#include "anyp/run_config.hpp"
#include "runtime/executable.hpp"
#include "runtime/task_recorder.hpp"

namespace anyp {

// Writes the records `config` asks for, of every rank this process ran
// (a rank with no dispatch record writes nothing). Throws RunError naming
// a file that cannot be written.
void write_dfx_files(const RunConfig& config, const runtime::Executable& exec,
                     const std::vector<std::vector<runtime::DispatchRecord>>& ranks);

}  // namespace anyp
