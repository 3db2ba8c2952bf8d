// collective_tracker.hpp — matches builtin collective calls across ranks.
// Every rank's n-th builtin call on one signal buffer must be the same call
// (for a buffer of a comm domain: every rank of one group's)
// (kind, reduce op, mode, root, data shape and dtype, window buffers): the
// credit protocol (docs/design.md §11) cannot tell two different calls apart,
// so a mismatch would otherwise balance its credits and finish with
// garbage. The VM reports each call entry (its Collective instruction); the
// tracker answers with a mismatch message, and tells the deadlock report
// which calls some ranks never entered.
//
// Per call entry it costs a lock and a few comparisons, no allocation: the
// windows are compared as (operand, buffer, byte offset) triples, rendered
// as text only for a message; a call every rank has entered is retired;
// the journal (MPI engine) keeps a run of identical calls as one entry.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/executable.hpp"
#include "runtime/region.hpp"

namespace anyp::runtime {

// The window operands a call names: every rank's matching call must name
// the same buffers at the same byte offsets.
struct CallWindows {
  struct Operand {
    std::int32_t role = -1;    // index into the CollectiveDesc's roles
    std::int32_t buffer = -1;  // window buffer
    std::int64_t base = 0;     // the view's byte offset in it
    bool operator==(const Operand&) const = default;
  };
  static constexpr std::size_t kMax = 8;
  std::array<Operand, kMax> operands{};
  std::size_t size = 0;
  void add(const Operand& o);
  bool operator==(const CallWindows& o) const;
};

class CollectiveTracker {
 public:
  explicit CollectiveTracker(const Executable& exec);

  // `rank` enters its next call on signal buffer `buffer`. Returns "" or the
  // mismatch with the first rank that entered this call.
  std::string enter(std::int64_t rank, std::int32_t buffer, const CollectiveDesc& desc,
                    const CallWindows& windows, SiteRef site);
  // `repeat` identical enter() calls in a row, as the journal keeps them.
  struct Entry {
    std::int64_t rank = 0;
    std::int32_t buffer = -1;
    std::int32_t desc = -1;  // index into exec.codes[site.code].collectives
    CallWindows windows;
    SiteRef site;
    std::int64_t repeat = 1;
  };
  // Only keep a journal of every enter(), matching nothing (the MPI engine:
  // each process sees only its own rank's calls, and the processes match
  // all the journals at the end of the run).
  void journal_only() { journal_only_ = true; }
  const std::vector<Entry>& journal() const { return journal_; }
  // The enter() calls of a journal entry (of any process's tracker over the
  // same Executable): "" or the first mismatch.
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
    CallWindows windows;
    std::vector<char> entered;  // per rank
    std::int64_t entered_count = 0;
  };
  // The calls on one signal buffer that not every rank has entered yet
  // (calls[head, end): call number retired + i is calls[head + i]), and how
  // many calls each rank made.
  // One per world buffer, and one per group of a comm_domain buffer (the
  // group's calls are matched among its ranks only).
  struct Signal {
    std::int32_t buffer = -1;
    std::vector<std::int64_t> members;  // the ranks that call on it
    std::string label;                  // "'sig'", or "'sig' (group {2, 3} of domain 'tp')"
    std::vector<Call> calls;
    std::size_t head = 0;
    std::size_t retired = 0;
    std::vector<std::size_t> made;  // per world rank
  };
  Signal& signal_of(std::int32_t buffer, std::int64_t rank);
  // Retires the calls at the head that every rank has entered, keeping
  // their `entered` vectors for new calls.
  void retire(Signal& sig);
  std::string enter_locked(std::int64_t rank, std::int32_t buffer, const CollectiveDesc& desc,
                           const CallWindows& windows, SiteRef site);
  std::string call_text(const Call& c) const;
  // "data 'A', src 'B' at byte 256"
  std::string windows_text(const Call& c) const;

  const Executable& exec_;
  bool journal_only_ = false;
  std::vector<Entry> journal_;
  mutable std::mutex mutex_;
  std::vector<Signal> signals_;            // per window buffer and group
  std::vector<std::size_t> first_signal_;  // per window buffer: its first entry in signals_
  std::vector<std::vector<char>> spare_entered_;
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
