// collective_tracker.cpp — cross-rank matching of builtin collective calls.
#include "runtime/collective_tracker.hpp"

#include <algorithm>

#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"

namespace anyp::runtime {

void CallWindows::add(const Operand& o) {
  ANYP_CHECK(size < kMax, "a collective with more window operands than CallWindows holds");
  operands[size++] = o;
}

bool CallWindows::operator==(const CallWindows& o) const {
  return size == o.size && std::equal(operands.begin(), operands.begin() + static_cast<long>(size),
                                      o.operands.begin());
}

CollectiveTracker::CollectiveTracker(const Executable& exec) : exec_(exec) {
  std::vector<std::int64_t> world(static_cast<std::size_t>(exec.world_size));
  for (std::size_t r = 0; r < world.size(); ++r) world[r] = static_cast<std::int64_t>(r);
  for (std::size_t b = 0; b < exec.buffers.size(); ++b) {
    const WindowBuffer& buf = exec.buffers[b];
    first_signal_.push_back(signals_.size());
    if (buf.domain < 0) {
      Signal sig;
      sig.buffer = static_cast<std::int32_t>(b);
      sig.members = world;
      sig.label = "'" + buf.name + "'";
      signals_.push_back(std::move(sig));
      continue;
    }
    const CommDomain& d = exec.domains[static_cast<std::size_t>(buf.domain)];
    for (const auto& g : d.groups) {
      Signal sig;
      sig.buffer = static_cast<std::int32_t>(b);
      sig.members = g;
      sig.label = "'" + buf.name + "' (group " + group_text(g) + " of domain '" + d.name + "')";
      signals_.push_back(std::move(sig));
    }
  }
}

CollectiveTracker::Signal& CollectiveTracker::signal_of(std::int32_t buffer, std::int64_t rank) {
  const WindowBuffer& buf = exec_.buffers[static_cast<std::size_t>(buffer)];
  std::size_t i = first_signal_[static_cast<std::size_t>(buffer)];
  if (buf.domain >= 0) {
    const std::int32_t g = exec_.domains[static_cast<std::size_t>(buf.domain)]
                               .group_of[static_cast<std::size_t>(rank)];
    ANYP_CHECK(g >= 0, "a collective on a comm_domain buffer from a rank outside the domain");
    i += static_cast<std::size_t>(g);
  }
  return signals_[i];
}

std::string CollectiveTracker::call_text(const Call& c) const {
  const std::string sig = c.desc->signature.empty() ? "" : " (" + c.desc->signature + ")";
  return c.desc->op + sig + " in function '" +
         exec_.codes[c.site.code].sites[c.site.site].function + "'";
}

std::string CollectiveTracker::windows_text(const Call& c) const {
  std::string t;
  for (std::size_t i = 0; i < c.windows.size; ++i) {
    const CallWindows::Operand& o = c.windows.operands[i];
    t += (t.empty() ? "" : ", ") + c.desc->roles[static_cast<std::size_t>(o.role)] + " '" +
         exec_.buffers[static_cast<std::size_t>(o.buffer)].name + "'";
    if (o.base != 0) t += " at byte " + std::to_string(o.base);
  }
  return t;
}

std::string CollectiveTracker::enter(std::int64_t rank, std::int32_t buffer,
                                     const CollectiveDesc& desc, const CallWindows& windows,
                                     SiteRef site) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (journal_only_) {
    const auto& descs = exec_.codes[static_cast<std::size_t>(site.code)].collectives;
    const auto index = static_cast<std::int32_t>(&desc - descs.data());
    Entry* last = journal_.empty() ? nullptr : &journal_.back();
    if (last != nullptr && last->rank == rank && last->buffer == buffer && last->desc == index &&
        last->site.code == site.code && last->site.site == site.site && last->windows == windows) {
      ++last->repeat;
    } else {
      journal_.push_back(Entry{rank, buffer, index, windows, site, 1});
    }
    return "";
  }
  return enter_locked(rank, buffer, desc, windows, site);
}

std::string CollectiveTracker::enter_locked(std::int64_t rank, std::int32_t buffer,
                                            const CollectiveDesc& desc, const CallWindows& windows,
                                            SiteRef site) {
  const auto world = static_cast<std::size_t>(exec_.world_size);
  Signal& sig = signal_of(buffer, rank);
  if (sig.made.empty()) sig.made.assign(world, 0);
  const std::size_t n = sig.made[static_cast<std::size_t>(rank)]++;
  const std::size_t i = sig.head + (n - sig.retired);
  if (i == sig.calls.size()) {
    std::vector<char> entered;
    if (spare_entered_.empty()) {
      entered.assign(world, 0);
    } else {
      entered = std::move(spare_entered_.back());
      spare_entered_.pop_back();
      std::fill(entered.begin(), entered.end(), 0);
    }
    sig.calls.push_back(Call{&desc, rank, site, windows, std::move(entered), 0});
  }
  Call& first = sig.calls[i];
  first.entered[static_cast<std::size_t>(rank)] = 1;
  ++first.entered_count;
  if (first.first_rank == rank) {  // a new call: nothing to compare with yet
    retire(sig);
    return "";
  }
  const bool same_call = first.desc->op == desc.op && first.desc->signature == desc.signature;
  std::string mismatch;
  if (!same_call || !(first.windows == windows)) {
    const Call mine{&desc, rank, site, windows, {}, 0};
    const bool first_is_lower = first.first_rank < rank;
    const Call& lo = first_is_lower ? first : mine;
    const Call& hi = first_is_lower ? mine : first;
    const std::string head = "collective mismatch on signal " + sig.label + ": call #" +
                             std::to_string(n + 1) + " on it is " + call_text(lo);
    if (same_call) {
      mismatch = head + " with " + windows_text(lo) + " on rank " + std::to_string(lo.first_rank) +
                 ", but with " + windows_text(hi) + " on rank " + std::to_string(hi.first_rank) +
                 "; every rank must pass views of the same window buffers to a builtin collective";
    } else {
      mismatch = head + " on rank " + std::to_string(lo.first_rank) + ", but " + call_text(hi) +
                 " on rank " + std::to_string(hi.first_rank) +
                 "; every rank must make the same builtin collective calls on a signal, in the "
                 "same order";
    }
  }
  retire(sig);
  return mismatch;
}

void CollectiveTracker::retire(Signal& sig) {
  const auto members = static_cast<std::int64_t>(sig.members.size());
  while (sig.head < sig.calls.size() && sig.calls[sig.head].entered_count == members) {
    spare_entered_.push_back(std::move(sig.calls[sig.head].entered));
    ++sig.head;
    ++sig.retired;
  }
  if (sig.head == sig.calls.size()) {
    sig.calls.clear();  // keeps the capacity
    sig.head = 0;
  } else if (sig.head >= 64 && 2 * sig.head >= sig.calls.size()) {
    sig.calls.erase(sig.calls.begin(), sig.calls.begin() + static_cast<long>(sig.head));
    sig.head = 0;
  }
}

std::string CollectiveTracker::replay(const Entry& e) {
  const auto& descs = exec_.codes[static_cast<std::size_t>(e.site.code)].collectives;
  const CollectiveDesc& desc = descs[static_cast<std::size_t>(e.desc)];
  std::lock_guard<std::mutex> lock(mutex_);
  std::string first;
  for (std::int64_t k = 0; k < e.repeat; ++k) {
    std::string m = enter_locked(e.rank, e.buffer, desc, e.windows, e.site);
    if (first.empty()) first = std::move(m);
  }
  return first;
}

std::string CollectiveTracker::unfinished_calls(std::span<const char> finished) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  for (const Signal& sig : signals_) {
    for (std::size_t i = sig.head; i < sig.calls.size(); ++i) {
      const Call& c = sig.calls[i];
      std::vector<std::int64_t> in, out_finished, out_waiting;
      for (const std::int64_t rank : sig.members) {
        const auto r = static_cast<std::size_t>(rank);
        if (c.entered[r]) {
          in.push_back(rank);
        } else if (finished[r]) {
          out_finished.push_back(rank);
        } else {
          out_waiting.push_back(rank);
        }
      }
      if (out_finished.empty() && out_waiting.empty()) continue;
      out += "  collective call #" + std::to_string(sig.retired + (i - sig.head) + 1) +
             " on signal " + sig.label + ", " + call_text(c) + ": entered by " + rank_set_text(in);
      if (!out_finished.empty())
        out += "; never entered by " + rank_set_text(out_finished) + " (finished)";
      if (!out_waiting.empty())
        out += "; not entered by " + rank_set_text(out_waiting) + " (waiting elsewhere)";
      out += "\n";
    }
  }
  return out;
}

std::string CollectiveTracker::unbalanced_calls() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Signal& sig : signals_) {
    if (sig.made.empty()) continue;
    // The first member with the fewest calls, and the first with the most.
    std::int64_t lo = sig.members.front(), hi = lo;
    for (const std::int64_t r : sig.members) {
      const std::size_t made = sig.made[static_cast<std::size_t>(r)];
      if (made < sig.made[static_cast<std::size_t>(lo)]) lo = r;
      if (made > sig.made[static_cast<std::size_t>(hi)]) hi = r;
    }
    const std::size_t made_lo = sig.made[static_cast<std::size_t>(lo)];
    const std::size_t made_hi = sig.made[static_cast<std::size_t>(hi)];
    if (made_lo != made_hi) {
      return "collective mismatch on signal " + sig.label + ": rank " + std::to_string(hi) +
             " made " + std::to_string(made_hi) + " builtin collective calls on it, rank " +
             std::to_string(lo) + " made " + std::to_string(made_lo) +
             "; every rank must make the same calls";
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
