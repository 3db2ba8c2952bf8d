// openmpi_tuned_rules.hpp — the allreduce algorithm Open MPI 4.1's coll/tuned
// component runs by default (its fixed decision rules, no rules file) for a
// commutative op on a communicator of P processes and a message of `bytes`
// per process: the switch points of ompi_coll_tuned_allreduce_intra_dec_fixed
// in Open MPI 4.1 (ompi/mca/coll/tuned/coll_tuned_decision_fixed.c), which
// that project generated from measurements averaged over its developers'
// clusters. bench/openmpi_choice_probe.c checks them against the Open MPI
// installed here (bench/run_decision_curves.sh runs it), so a transcription
// error shows.
#pragma once

#include <cstdint>
#include <string>

namespace anyp_bench {

// Open MPI's numbering: 1 basic_linear, 2 nonoverlapping (reduce + bcast),
// 3 recursive_doubling, 4 ring, 5 segmented_ring, 6 rabenseifner.
inline int openmpi_allreduce_algorithm(std::int64_t P, std::int64_t bytes) {
  struct Band {
    std::int64_t below;  // the rule applies to bytes < below
    int algorithm;
  };
  auto pick = [bytes](std::initializer_list<Band> bands, int otherwise) {
    for (const Band& b : bands)
      if (bytes < b.below) return b.algorithm;
    return otherwise;
  };
  if (P < 4) return pick({{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6);
  if (P < 8) return pick({{16, 4}, {8192, 3}}, 6);
  if (P < 16) return pick({{8192, 3}}, 6);
  if (P < 32) return pick({{64, 5}, {4096, 3}}, 6);
  if (P < 64) return pick({{128, 5}}, 6);
  if (P < 128) return pick({{262144, 3}}, 6);
  if (P < 256) return pick({{131072, 2}, {262144, 3}}, 6);
  if (P < 512) return pick({{4096, 2}}, 6);
  if (P < 2048) return pick({{2048, 2}, {16384, 3}}, 6);
  if (P < 4096) return pick({{2048, 2}, {4096, 5}, {16384, 3}}, 6);
  return pick({{2048, 2}, {16384, 5}, {32768, 3}}, 6);
}

inline std::string openmpi_allreduce_name(int algorithm) {
  switch (algorithm) {
    case 1:
      return "basic_linear";
    case 2:
      return "nonoverlapping";
    case 3:
      return "recursive_doubling";
    case 4:
      return "ring";
    case 5:
      return "segmented_ring";
    default:
      return "rabenseifner";
  }
}

}  // namespace anyp_bench
