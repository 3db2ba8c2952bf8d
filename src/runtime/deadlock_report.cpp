// deadlock_report.cpp — formats a deadlock report (see deadlock_report.hpp).
#include "runtime/deadlock_report.hpp"

#include <unordered_map>
#include <utility>

#include "runtime/diagnostic_text.hpp"

namespace anyp::runtime {

namespace {

// Ranks that share one text, in rank order; groups in order of their first rank.
struct Group {
  std::string text;
  std::vector<std::int64_t> ranks;
};

class Grouper {
 public:
  void add(std::int64_t rank, std::string text) {
    auto [it, inserted] = index_.try_emplace(text, groups_.size());
    if (inserted) groups_.push_back(Group{std::move(text), {}});
    groups_[it->second].ranks.push_back(rank);
  }
  const std::vector<Group>& groups() const { return groups_; }

 private:
  std::vector<Group> groups_;
  std::unordered_map<std::string, std::size_t> index_;
};

std::string signed_text(std::int64_t v) { return (v >= 0 ? "+" : "") + std::to_string(v); }

// "AtomicAdd +1", "2 AtomicAdds totalling +2", "Set 1", "3 Sets, the last to 1", joined by ", ".
std::string effect_text(const NotifierTally& t) {
  std::string s;
  auto part = [&s](const std::string& text) { s += (s.empty() ? "" : ", ") + text; };
  for (auto [n, total] : {std::pair{t.adds_up, t.up_total}, std::pair{t.adds_down, t.down_total}}) {
    if (n == 1) part("AtomicAdd " + signed_text(total));
    if (n > 1) part(std::to_string(n) + " AtomicAdds totalling " + signed_text(total));
  }
  if (t.sets == 1) part("Set " + std::to_string(t.last_set));
  if (t.sets > 1) part(std::to_string(t.sets) + " Sets, the last to " + std::to_string(t.last_set));
  return s;
}

// One rank's wait, after "rank <r>: ", with its hint line if any.
std::string wait_text(const ParkedWait& p) {
  std::string s = p.where + " " + ir::wait_name(p.cmp) + " " + std::to_string(p.expected) +
                  "; current value " + std::to_string(p.current);
  s += p.notifiers.empty() ? "; never notified" : "; notified by " + notifiers_text(p.notifiers);
  if (!p.data_writers.empty()) s += "; written as data by " + rank_set_text(p.data_writers);
  if (p.cmp == ir::WaitKind::Eq && p.expected > 0 && p.current > p.expected) {
    s += "\n    hint: the cell is already past " + std::to_string(p.expected) +
         "; if it counts AtomicAdd credits it only grows, so Eq can never hold again: "
         "wait with Ge, or use a fresh cell (row) per round";
  }
  return s;
}

}  // namespace

std::string notifiers_text(const std::vector<NotifierTally>& notifiers) {
  constexpr std::size_t kGroupsShown = 8;
  Grouper grouper;
  for (const NotifierTally& t : notifiers) grouper.add(t.rank, effect_text(t));
  std::string s;
  std::size_t shown = 0;
  for (const Group& g : grouper.groups()) {
    if (shown == kGroupsShown) {
      s += " and " + std::to_string(notifiers.size() - shown) + " more ranks";
      break;
    }
    if (!s.empty()) s += ", ";
    if (g.ranks.size() == 1) {
      s += "rank " + std::to_string(g.ranks[0]) + " (" + g.text + ")";
    } else {
      s += "ranks " + rank_ranges_text(g.ranks) + " (" + std::to_string(g.ranks.size()) +
           " ranks, each " + g.text + ")";
    }
    shown += g.ranks.size();
  }
  return s;
}

std::string deadlock_report(std::span<const ParkedWait* const> parked,
                            const std::string& unfinished_collectives,
                            std::span<const BlockWait> blocks) {
  Grouper waiting;
  std::vector<std::int64_t> finished;
  for (std::size_t r = 0; r < parked.size(); ++r) {
    const auto rank = static_cast<std::int64_t>(r);
    if (parked[r] == nullptr) {
      finished.push_back(rank);
    } else {
      waiting.add(rank, wait_text(*parked[r]));
    }
  }
  std::string s = "deadlock: no rank can make progress (" +
                  std::to_string(parked.size() - finished.size()) + " of " +
                  std::to_string(parked.size()) + " ranks waiting)";
  auto line = [&s](const std::vector<std::int64_t>& ranks, const std::string& text) {
    if (ranks.size() == 1) {
      s += "\n  rank " + std::to_string(ranks[0]) + ": " + text;
    } else {
      s += "\n  ranks " + rank_ranges_text(ranks) + " (" + std::to_string(ranks.size()) +
           " ranks): " + text;
    }
  };
  for (const BlockWait& b : blocks)
    waiting.add(b.rank, "block " + std::to_string(b.block) + ": " + wait_text(*b.wait));
  for (const Group& g : waiting.groups()) line(g.ranks, g.text);
  if (!finished.empty()) line(finished, "finished");
  if (!unfinished_collectives.empty()) {
    s += "\nbuiltin collective calls not entered by every rank:\n" + unfinished_collectives;
    while (!s.empty() && s.back() == '\n') s.pop_back();
  }
  return s;
}

}  // namespace anyp::runtime
