// collective_report.hpp — what a plan's builtin collectives run, as text:
// the AllreduceMode::Auto choices (CompiledProgram::collective_choices(),
// printed by --cost and --timeline) and the table of every call with each
// candidate algorithm's modeled time (collective_table(),
// --explain-collectives); docs/collectives.md §3.3d.
#pragma once

#include <string>

#include "compiler/plan.hpp"

namespace anyp::compiler {

// One line per Auto call, in code order:
// "f: pld.tensor.allreduce (Sum, Tree, data FP32 [1, 16]): Auto chose Tree:
// Tree 3.100 us, Mesh 4.000 us, ..." (the candidates fastest first).
std::string collective_choices_text(const detail::Plan& plan);

// Every collective call, in code order: the call, the algorithm it runs and
// why (pinned, chosen by Auto, the op's only algorithm), then each
// candidate's modeled time on the plan's cost model, fastest first; ""
// without calls.
std::string collective_table_text(const detail::Plan& plan);

}  // namespace anyp::compiler
