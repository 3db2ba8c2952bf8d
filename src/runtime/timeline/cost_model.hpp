// cost_model.hpp — what each kind of op costs in modeled time on a
// platform: the shipped models/<platform>.model (a2a3sim, a5sim, embedded
// in the library when it is built), or a file of the user's (--model FILE,
// RunConfig::model_file). The text is one `key = value   # source: ...`
// per line; docs/timeline.md lists the keys. A remote data access costs
// alpha + bytes * beta, a local one local_alpha + bytes * local_beta, tile
// math elements / compute.<class>.<dtype>; a notify occupies its issuer for
// notify_issue and reaches its cell notify after it was issued; a
// satisfied wait costs wait. Optional keys add asynchronous transfers on
// DMA engines and links shared by the transfers on them; a model without
// them is the simple model, which prices every run as before.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "anyp/dtype.hpp"
#include "runtime/compute_class.hpp"

namespace anyp::runtime {

inline constexpr std::size_t kDTypes = 7;  // FP32 ... INT64 (anyp/dtype.hpp)

struct CostModel {
  std::string name;
  double alpha_ns = 0, beta_ns_per_byte = 0;
  double local_alpha_ns = 0, local_beta_ns_per_byte = 0;
  double notify_issue_ns = 0, notify_ns = 0, wait_ns = 0;
  // Asynchronous transfers (docs/timeline.md §2a): a rank issues a remote
  // transfer in dma_issue_ns and one of its dma_engines carries it out
  // while the rank goes on. 0 engines: every transfer occupies its issuer
  // until it completes (the simple model, the only one before issue 26).
  std::int64_t dma_engines = 0;
  double dma_issue_ns = 0;
  // Links (docs/timeline.md §2b). links_shared = false: every transfer
  // moves at 1 / beta as if alone. True: each device has a link port in and
  // a port out of 1 / beta bytes per ns within its node (the devices of a
  // node are a full mesh behind their ports) and an inter-node port each
  // way of 1 / inter_node_beta; the transfers on a port share it max-min
  // fairly. devices_per_node = 0: one node of all devices.
  bool links_shared = false;
  std::int64_t devices_per_node = 0;
  double inter_node_alpha_ns = 0, inter_node_beta_ns_per_byte = 0;
  // The vector cores of a device (0: not given). A collective over core_num
  // blocks runs its blocks at once (each waits for its peers' same block),
  // so it may not have more blocks than this.
  std::int64_t vector_cores = 0;
  // [class][dtype]: elements per ns; +infinity prices the op at 0.
  std::array<std::array<double, kDTypes>, kComputeClasses> elements_per_ns{};

  double remote_ns(std::int64_t bytes) const {
    return alpha_ns + static_cast<double>(bytes) * beta_ns_per_byte;
  }
  double local_ns(std::int64_t bytes) const {
    return local_alpha_ns + static_cast<double>(bytes) * local_beta_ns_per_byte;
  }
  double compute_ns(ComputeClass c, DType dtype, std::int64_t elements) const {
    return static_cast<double>(elements) /
           elements_per_ns[static_cast<std::size_t>(c)][static_cast<std::size_t>(dtype)];
  }
};

// Parses a model's text; `origin` names it in errors. Throws ConfigError
// naming the origin, the line and what is wrong (an unknown or repeated
// key, a value that is not a non-negative number, a key without a
// "# source:" comment, a key or a compute class the model does not give).
CostModel parse_cost_model(const std::string& text, const std::string& origin);
// The model shipped for `platform` ("a2a3sim", "a5sim"); ConfigError for
// another.
const CostModel& platform_cost_model(const std::string& platform);
// parse_cost_model of a file; ConfigError when it cannot be read.
CostModel load_cost_model(const std::string& path);

}  // namespace anyp::runtime
