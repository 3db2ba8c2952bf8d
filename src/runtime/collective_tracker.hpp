// collective_tracker.hpp — matches builtin collective calls across ranks.
// Every rank's n-th builtin call on one signal buffer must be the same call
// (kind, reduce op, mode, root, data shape and dtype): the credit protocol
// (ladder.md part C) cannot tell two different calls apart, so a mismatch
// would otherwise balance its credits and finish with garbage. The VM
// reports each call entry (its Collective instruction); the tracker answers
// with a mismatch message, and tells the deadlock report which calls some
// ranks never entered.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/executable.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime {

class CollectiveTracker {
 public:
  explicit CollectiveTracker(const Executable& exec);

  // `rank` enters its next call on signal buffer `buffer`. Returns "" or the
  // mismatch with the first rank that entered this call.
  // `windows` names the window buffers of the call's other operands
  // ("data 'A'"): every rank must pass views of the same buffers.
  std::string enter(std::int64_t rank, std::int32_t buffer, const CollectiveDesc& desc,
                    const std::string& windows, SiteRef site);
  // One enter() call, as the journal keeps it.
  struct Entry {
    std::int64_t rank = 0;
    std::int32_t buffer = -1;
    std::int32_t desc = -1;  // index into exec.codes[site.code].collectives
    std::string windows;
    SiteRef site;
  };
  // Keep a journal of every enter() (the MPI engine: each process sees only
  // its own rank's calls, and matches them all at the end of the run).
  void keep_journal() { keep_journal_ = true; }
  const std::vector<Entry>& journal() const { return journal_; }
  // enter() for a journal entry (of any process's tracker over the same
  // Executable).
  std::string replay(const Entry& e);
  // For a deadlock report: one line per call that some ranks entered and
  // others did not ("" if none). finished[r] != 0 when rank r is done.
  std::string unfinished_calls(std::span<const char> finished) const;
  // After a run that finished: "" or a message naming a signal on which the
  // ranks made different numbers of calls.
  std::string unbalanced_calls() const;

 private:
  struct Call {
    const CollectiveDesc* desc = nullptr;
    std::int64_t first_rank = -1;
    SiteRef site;
    std::string windows;
    std::vector<char> entered;  // per rank
  };
  std::string call_text(const Call& c) const;

  const Executable& exec_;
  bool keep_journal_ = false;
  std::vector<Entry> journal_;
  mutable std::mutex mutex_;
  std::map<std::int32_t, std::vector<Call>> calls_;         // signal buffer -> calls in order
  std::vector<std::map<std::int32_t, std::size_t>> count_;  // rank -> signal buffer -> calls made
};

// The bytes [begin, end) a window view covers in its buffer. Two operands of
// one collective may be views of one buffer only when their spans are
// disjoint (sub-windows, pld::window's offset).
struct WindowSpan {
  std::int32_t buffer = -1;
  std::int64_t begin = 0, end = 0;
  bool overlaps(const WindowSpan& o) const {
    return buffer == o.buffer && begin < o.end && o.begin < end;
  }
};
WindowSpan window_span(std::int32_t buffer, std::int64_t byte_offset, DType dtype,
                       std::span<const std::int64_t> shape);

// The one wording for a collective whose window operands share a buffer
// (compile time, host level and run time): "the data and the signal are
// views of one window buffer 'b'; a collective's windows must be distinct
// buffers".
std::string shared_window_message(const std::string& role_a, const std::string& role_b,
                                  const std::string& buffer);

}  // namespace anyp::runtime
