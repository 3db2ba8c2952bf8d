// executable_text.cpp — the names of agents and run-error sites
// (executable_text.hpp).
#include "runtime/executable_text.hpp"

namespace anyp::runtime {

std::string agent_text(const Executable& exec, std::int64_t agent) {
  const std::int64_t block = exec.block_of_agent(agent);
  return "rank " + std::to_string(exec.rank_of_agent(agent)) +
         (block > 0 ? " block " + std::to_string(block) : "");
}

std::string memory_text(const Executable& exec, Space space, std::int32_t id, std::int64_t owner) {
  if (space == Space::Host)
    return "host tensor '" + exec.host_args[static_cast<std::size_t>(id)].name + "'";
  const WindowBuffer& b = exec.buffers[static_cast<std::size_t>(id)];
  if (b.local)
    return "rank " + std::to_string(owner) + "'s tensor '" + b.name + "' (pl.create_tensor)";
  return "rank " + std::to_string(owner) + "'s window '" + b.name + "'";
}

std::string run_error_where(const Executable& exec, std::int64_t rank, SiteRef site) {
  std::string where = "run error: rank " + std::to_string(rank) + " (device " +
                      std::to_string(exec.device_ids[static_cast<std::size_t>(rank)]) + ")";
  if (site.code >= 0 && site.site >= 0) {
    const Site& s = exec.codes[static_cast<std::size_t>(site.code)].sites[site.site];
    where += ", function '" + s.function + "', op " + s.located_op();
  }
  return where;
}

}  // namespace anyp::runtime
