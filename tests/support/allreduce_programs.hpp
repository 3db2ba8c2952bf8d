// allreduce_programs.hpp — the all-reduce algorithms of ladder steps 08-11
// for any vector length n (FP32), through the public API, for the modeled
// timeline's tests and bench/model_sweep: the examples stay standalone
// lessons at n = 960, these are their kernels with n as a parameter.
//
//   Mesh      step 08: stage, a hand-rolled barrier, pull every peer's row
//   TwoPhase  step 09: reduce-scatter by pulls, barrier, all-gather by pulls
//   Ring      step 10: 2(P - 1) neighbour hops
//   BuiltinMesh, BuiltinRing  step 11: pld::tensor::allreduce
//   BuiltinRecursiveDoubling, BuiltinRabenseifner, BuiltinTree  the
//     logarithmic builtins (docs/collectives.md §3.3a-c), on the [NR, 1] signal
//
// Every program maps x [NR, 1, n] to y [NR, 1, n] = the sum over ranks. The
// hand-written ones need n divisible by 8 P (a chunk is a whole number of
// 32-byte tile rows); the builtins take any n.
#pragma once

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

namespace anyp_test {

enum class Allreduce {
  Mesh,
  TwoPhase,
  Ring,
  BuiltinMesh,
  BuiltinRing,
  BuiltinRecursiveDoubling,
  BuiltinRabenseifner,
  BuiltinTree,
  BuiltinAuto  // AllreduceMode::Auto
};
const char* allreduce_name(Allreduce a);  // "mesh", "two_phase", "ring", "builtin_mesh", ...

// The program for vector length n (one per (algorithm, n), made once).
const pl::HostFunction& allreduce_program(Allreduce algorithm, std::int64_t n);

// Compiles it for P ranks with `config` (devices replaced) and runs it on
// inputs x[r][0][j] = r + 1; the stats of the run. Throws on a wrong sum.
anyp::RunStats run_allreduce(Allreduce algorithm, std::int64_t n, std::int64_t P,
                             anyp::RunConfig config = {});

}  // namespace anyp_test
