// artifact.hpp — the texts of the compile artifact of a plan (written by
// --compile-only, RunConfig::output_dir, or CompiledProgram::write_artifact):
//   symbolic.ir        the program as traced (NR, world_size as written)
//   specialized.ir     the same with every extent evaluated for this P
//   window_layout.txt  bytes per rank, then each buffer's offset and slot
//   lowered.txt        each orchestration function's VM code, then the dispatch list
//   manifest.json      program, platform, P, devices, dims, buffers, codes, files
#pragma once

#include <string>

#include "compiler/plan.hpp"

namespace anyp::compiler {

std::string symbolic_ir_text(const detail::Plan& plan);
std::string specialized_ir_text(const detail::Plan& plan);
std::string window_layout_text(const detail::Plan& plan);
std::string lowered_code_text(const detail::Plan& plan);
std::string manifest_json_text(const detail::Plan& plan);
// Writes the five files into `dir` (created if needed); throws anyp::Error.
void write_artifact(const detail::Plan& plan, const std::string& dir);

}  // namespace anyp::compiler
