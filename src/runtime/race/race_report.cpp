// race_report.cpp — the text of a race report: per op pair, where (window
// buffer and owner, or host tensor; elements in the buffer's own
// coordinates), both accesses (kind, rank, device, function, op), and the
// happens-before edge that is missing.
#include <algorithm>

#include "runtime/diagnostic_text.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/race/race_checker.hpp"

namespace anyp::runtime::race {
namespace {

constexpr std::size_t kShown = 4;

// "[0, 0:64]", "[2, 5]", or "[0, 32] to [2, 15] (80 elements)".
std::string elements_text(std::int64_t first, std::int64_t end,
                          std::span<const std::int64_t> shape) {
  const std::vector<std::int64_t> a = unflatten(first, shape);
  const std::vector<std::int64_t> b = unflatten(end - 1, shape);
  const bool one_row = shape.empty() || std::equal(a.begin(), a.end() - 1, b.begin());
  if (!one_row) {
    return list_text(a) + " to " + list_text(b) + " (" + std::to_string(end - first) + " elements)";
  }
  std::string s = "[";
  for (std::size_t d = 0; d + 1 < a.size(); ++d) s += std::to_string(a[d]) + ", ";
  s += std::to_string(a.empty() ? first : a.back());
  if (end - first > 1) s += ":" + std::to_string((a.empty() ? first : a.back()) + end - first);
  return s + "]";
}

}  // namespace

std::string RaceChecker::site_text(std::uint32_t site) const {
  const auto [code, index] = sites_[site];
  if (code < 0) return "the block launch protocol";
  const Site& s =
      exec_.codes[static_cast<std::size_t>(code)].sites[static_cast<std::size_t>(index)];
  return "function '" + s.function + "', op " + s.located_op();
}

std::string RaceChecker::memory_text(const Race& r) const {
  std::string name;
  DType dtype = DType::INT8;
  std::vector<std::int64_t> shape;
  if (r.space == Space::Window) {
    const WindowBuffer& b = exec_.buffers[static_cast<std::size_t>(r.id)];
    name = "window '" + b.name + "' of rank " + std::to_string(r.owner);
    dtype = b.dtype;
    shape = b.shape;
  } else {
    const HostArgSpec& a = exec_.host_args[static_cast<std::size_t>(r.id)];
    name = "host tensor '" + a.name + "'";
    dtype = a.dtype;
    shape = a.shape;
  }
  const auto esize = static_cast<std::int64_t>(dtype_bytes(dtype));
  const std::int64_t first = r.lo * r.granule / esize;
  const std::int64_t end = (r.hi * r.granule + esize - 1) / esize;
  return name + ", elements " + elements_text(first, end, shape);
}

std::string RaceChecker::missing_edge_text(const Race& r) const {
  const std::string a = agent_text(exec_, r.first.rank), b = agent_text(exec_, r.second.rank);
  const std::string kind = access_kind_name(r.first.kind);
  std::string s =
      "no wait on " + b + " observed a notify that " + a + " issued after its " + kind + "; ";
  if (r.synced == 0) return s + b + " never synchronised with " + a;
  const std::uint32_t release =
      releases_[static_cast<std::size_t>(r.first.rank)][static_cast<std::size_t>(r.synced - 1)];
  return s + b + " last synchronised with " + a + " through its " + site_text(release) +
         ", which came before the " + kind;
}

std::string RaceChecker::report() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::size_t n = races_.size();
  // Who the two sides are: ranks, blocks of one rank (a multi-block
  // kernel's agents), or some of each.
  bool across_ranks = false, within_a_rank = false;
  for (const Race& r : races_) {
    const bool same = exec_.rank_of_agent(r.first.rank) == exec_.rank_of_agent(r.second.rank);
    within_a_rank = within_a_rank || same;
    across_ranks = across_ranks || !same;
  }
  const char* sides = !within_a_rank  ? "two ranks"
                      : !across_ranks ? "two blocks of one rank"
                                      : "two ranks, or two blocks of one rank,";
  std::string s = "race report: " + std::to_string(n) +
                  (n == 1 ? " op pair accesses" : " op pairs access") + " the same elements from " +
                  sides + " with no happens-before order (at least one writes)\n";
  auto who = [&](const Stamped& x) {
    const std::int64_t rank = exec_.rank_of_agent(x.rank), block = exec_.block_of_agent(x.rank);
    return std::string(access_kind_name(x.kind)) + " by rank " + std::to_string(rank) +
           " (device " + std::to_string(exec_.device_ids[static_cast<std::size_t>(rank)]) + ")" +
           (block > 0 ? " block " + std::to_string(block) : "") + ", " + site_text(x.site);
  };
  for (std::size_t i = 0; i < n && i < kShown; ++i) {
    const Race& r = races_[i];
    s += "  race " + std::to_string(i + 1) + ": " + memory_text(r) + "\n";
    s += "    first:  " + who(r.first) + "\n";
    s += "    second: " + who(r.second) + "\n";
    s += "    missing: " + missing_edge_text(r) + "\n";
  }
  if (n > kShown) s += "  ... and " + std::to_string(n - kShown) + " more op pairs\n";
  return s;
}

}  // namespace anyp::runtime::race
