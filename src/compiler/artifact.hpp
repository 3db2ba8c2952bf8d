// artifact.hpp — the texts of the compile artifact of a plan (written by
// --compile-only, RunConfig::output_dir, or CompiledProgram::write_artifact):
//   symbolic.ir        the program as traced (NR, world_size as written)
//   specialized.ir     the same with every extent evaluated for this P
//   window_layout.txt  bytes per rank, then each buffer's offset and slot
//   lowered.txt        each orchestration function's VM code, then the dispatch list
//   manifest.json      program, platform, P, devices, dims, buffers, codes, files
#pragma once

#include <string>
#include <vector>

#include "compiler/plan.hpp"

namespace anyp::compiler {

std::string symbolic_ir_text(const detail::Plan& plan);
std::string specialized_ir_text(const detail::Plan& plan);
std::string window_layout_text(const detail::Plan& plan);
std::string lowered_code_text(const detail::Plan& plan);
// The dispatch list alone (lowered.txt's end): each rank's dispatches with
// their arguments and the dispatch order's waits and releases; window
// buffers are named from `buffers`.
std::string dispatch_list_text(const detail::Plan& plan,
                               const std::vector<runtime::WindowBuffer>& buffers);
// One dispatch argument: "x+64B", "window:data+32B", "3"; window buffers
// are named from `buffers` (the plan's, or a pass's before they are).
std::string dispatch_arg_text(const runtime::ArgBinding& a, const detail::Plan& plan,
                              const std::vector<runtime::WindowBuffer>& buffers);
std::string manifest_json_text(const detail::Plan& plan);
// Writes the five files into `dir` (created if needed); throws anyp::Error.
void write_artifact(const detail::Plan& plan, const std::string& dir);

}  // namespace anyp::compiler
