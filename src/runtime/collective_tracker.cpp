// collective_tracker.cpp — cross-rank matching of builtin collective calls.
#include "runtime/collective_tracker.hpp"

#include <algorithm>

#include "runtime/diagnostic_text.hpp"

namespace anyp::runtime {

CollectiveTracker::CollectiveTracker(const Executable& exec)
    : exec_(exec), count_(static_cast<std::size_t>(exec.world_size)) {}

std::string CollectiveTracker::call_text(const Call& c) const {
  const std::string sig = c.desc->signature.empty() ? "" : " (" + c.desc->signature + ")";
  return c.desc->op + sig + " in function '" +
         exec_.codes[c.site.code].sites[c.site.site].function + "'";
}

std::string CollectiveTracker::enter(std::int64_t rank, std::int32_t buffer,
                                     const CollectiveDesc& desc, const std::string& windows,
                                     SiteRef site) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (keep_journal_) {
    const auto& descs = exec_.codes[static_cast<std::size_t>(site.code)].collectives;
    journal_.push_back(
        Entry{rank, buffer, static_cast<std::int32_t>(&desc - descs.data()), windows, site});
  }
  const std::size_t n = count_[static_cast<std::size_t>(rank)][buffer]++;
  std::vector<Call>& calls = calls_[buffer];
  if (n == calls.size()) {
    Call c{&desc, rank, site, windows,
           std::vector<char>(static_cast<std::size_t>(exec_.world_size), 0)};
    c.entered[static_cast<std::size_t>(rank)] = 1;
    calls.push_back(std::move(c));
    return "";
  }
  Call& first = calls[n];
  first.entered[static_cast<std::size_t>(rank)] = 1;
  const bool same_call = first.desc->op == desc.op && first.desc->signature == desc.signature;
  if (same_call && first.windows == windows) return "";
  Call mine{&desc, rank, site, windows, {}};
  const bool first_is_lower = first.first_rank < rank;
  const Call& lo = first_is_lower ? first : mine;
  const Call& hi = first_is_lower ? mine : first;
  const std::string number = "#" + std::to_string(n + 1);
  if (same_call) {
    return "collective mismatch on signal '" + exec_.buffers[buffer].name + "': call " + number +
           " on it is " + call_text(lo) + " with " + lo.windows + " on rank " +
           std::to_string(lo.first_rank) + ", but with " + hi.windows + " on rank " +
           std::to_string(hi.first_rank) +
           "; every rank must pass views of the same window buffers to a builtin collective";
  }
  return "collective mismatch on signal '" + exec_.buffers[buffer].name + "': call " + number +
         " on it is " + call_text(lo) + " on rank " + std::to_string(lo.first_rank) + ", but " +
         call_text(hi) + " on rank " + std::to_string(hi.first_rank) +
         "; every rank must make the same builtin collective calls on a signal, in the same "
         "order";
}

std::string CollectiveTracker::replay(const Entry& e) {
  const auto& descs = exec_.codes[static_cast<std::size_t>(e.site.code)].collectives;
  return enter(e.rank, e.buffer, descs[static_cast<std::size_t>(e.desc)], e.windows, e.site);
}

std::string CollectiveTracker::unfinished_calls(std::span<const char> finished) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const auto& [buffer, calls] : calls_) {
    for (std::size_t n = 0; n < calls.size(); ++n) {
      const Call& c = calls[n];
      std::vector<std::int64_t> in, out_finished, out_waiting;
      for (std::size_t r = 0; r < c.entered.size(); ++r) {
        const auto rank = static_cast<std::int64_t>(r);
        if (c.entered[r]) {
          in.push_back(rank);
        } else if (finished[r]) {
          out_finished.push_back(rank);
        } else {
          out_waiting.push_back(rank);
        }
      }
      if (out_finished.empty() && out_waiting.empty()) continue;
      out += "  collective call #" + std::to_string(n + 1) + " on signal '" +
             exec_.buffers[buffer].name + "', " + call_text(c) + ": entered by " + ranks_text(in);
      if (!out_finished.empty())
        out += "; never entered by " + ranks_text(out_finished) + " (finished)";
      if (!out_waiting.empty())
        out += "; not entered by " + ranks_text(out_waiting) + " (waiting elsewhere)";
      out += "\n";
    }
  }
  return out;
}

std::string CollectiveTracker::unbalanced_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [buffer, calls] : calls_) {
    std::size_t lo = SIZE_MAX, hi = 0;
    std::int64_t lo_rank = 0, hi_rank = 0;
    for (std::size_t r = 0; r < count_.size(); ++r) {
      auto it = count_[r].find(buffer);
      const std::size_t n = it == count_[r].end() ? 0 : it->second;
      if (n < lo) lo = n, lo_rank = static_cast<std::int64_t>(r);
      if (n > hi) hi = n, hi_rank = static_cast<std::int64_t>(r);
    }
    if (lo != hi) {
      return "collective mismatch on signal '" + exec_.buffers[buffer].name + "': rank " +
             std::to_string(hi_rank) + " made " + std::to_string(hi) +
             " builtin collective calls on it, rank " + std::to_string(lo_rank) + " made " +
             std::to_string(lo) + "; every rank must make the same calls";
    }
  }
  return "";
}

WindowSpan window_span(std::int32_t buffer, std::int64_t byte_offset, DType dtype,
                       std::span<const std::int64_t> shape) {
  std::int64_t n = static_cast<std::int64_t>(dtype_bytes(dtype));
  for (const std::int64_t e : shape) n *= e;
  return WindowSpan{buffer, byte_offset, byte_offset + n};
}

std::string shared_window_message(const std::string& role_a, const std::string& role_b,
                                  const std::string& buffer) {
  return "the " + role_a + " and the " + role_b + " are views of one window buffer '" + buffer +
         "'; a collective's windows must be distinct buffers";
}

}  // namespace anyp::runtime
