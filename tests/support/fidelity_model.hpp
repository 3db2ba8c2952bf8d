// fidelity_model.hpp — cost models for the fidelity tests: a model file
// written from a handful of constants (everything else free), so that a
// modeled makespan can be checked against a closed formula.
#pragma once

#include <cmath>
#include <string>

namespace anyp_test {

// The constants of a model (ns, bytes); a model file is written from them.
struct Constants {
  double alpha = 0, beta = 0;               // remote message
  double local_alpha = 0, local_beta = 0;   // own window, host tensors
  double issue = 0, latency = 0, wait = 0;  // notify issue, notify arrival, satisfied wait
  double add_per_ns = INFINITY;             // compute.add.FP32, elements per ns
  double matmul_per_ns = INFINITY;          // compute.matmul.FP32, multiply-adds per ns
  // Asynchronous transfers and links (docs/timeline.md §2a, §2b); written
  // only when set, so that the defaults give the simple model.
  int dma_engines = 0;
  double dma_issue = 0;
  bool links_shared = false;
  int devices_per_node = 0;
  double inter_alpha = 0, inter_beta = 0;
};

// The model's text, named "fidelity".
std::string model_text(const Constants& c);

// A model file for this test process (ctest runs cases in parallel), in the
// temporary directory, `tag` in its name; the caller removes it.
std::string model_file(const Constants& c, const std::string& tag);

// model_file's file, removed when this goes out of scope.
struct ScopedModel {
  ScopedModel(const Constants& c, const std::string& tag);
  ~ScopedModel();
  ScopedModel(const ScopedModel&) = delete;
  ScopedModel& operator=(const ScopedModel&) = delete;
  std::string path;
};

}  // namespace anyp_test
