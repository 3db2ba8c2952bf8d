// fidelity_model.cpp — the fidelity tests' model files (fidelity_model.hpp).
#include "support/fidelity_model.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace anyp_test {

std::string model_text(const Constants& c) {
  auto line = [](const std::string& key, double v) {
    return key + " = " + (std::isinf(v) ? std::string("inf") : std::to_string(v)) +
           "   # source: assumed\n";
  };
  return "name = fidelity\n" + line("alpha_ns", c.alpha) + line("beta_ns_per_byte", c.beta) +
         line("local_alpha_ns", c.local_alpha) + line("local_beta_ns_per_byte", c.local_beta) +
         line("notify_issue_ns", c.issue) + line("notify_ns", c.latency) + line("wait_ns", c.wait) +
         line("compute.add.FP32", c.add_per_ns) + line("compute.matmul.FP32", c.matmul_per_ns) +
         line("compute.*.*", INFINITY) +
         (c.dma_engines > 0 ? line("dma_engines", c.dma_engines) + line("dma_issue_ns", c.dma_issue)
                            : "") +
         (c.links_shared ? line("links_shared", 1) : "") +
         (c.devices_per_node > 0 ? line("devices_per_node", c.devices_per_node) +
                                       line("inter_node_alpha_ns", c.inter_alpha) +
                                       line("inter_node_beta_ns_per_byte", c.inter_beta)
                                 : "");
}

std::string model_file(const Constants& c, const std::string& tag) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("anyp_fidelity_" + std::to_string(getpid()) + "_" + tag + ".model");
  std::ofstream(path) << model_text(c);
  return path.string();
}

ScopedModel::ScopedModel(const Constants& c, const std::string& tag) : path(model_file(c, tag)) {}
ScopedModel::~ScopedModel() { std::filesystem::remove(path); }

}  // namespace anyp_test
