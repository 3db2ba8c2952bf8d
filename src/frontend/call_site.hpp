// call_site.hpp — the user's source location that recorded ops carry. Each
// public pl/pld function opens a CallSite from its defaulted
// std::source_location parameter: the outermost open one on the thread
// wins, so a pl function built on another (pl::zeros on pl::full) keeps
// its caller's line. Functions that run user bodies (pl::range, pl::if_,
// tracing a callee) suspend it while the body runs, so the body's own calls
// name their own lines. The Python front-end pins a location per
// statement instead; a pinned location wins over every CallSite.
#pragma once

#include <source_location>

#include "ir/source_loc.hpp"

namespace anyp::detail {

class CallSite {
 public:
  explicit CallSite(const std::source_location& where);
  ~CallSite();
  CallSite(const CallSite&) = delete;
  CallSite& operator=(const CallSite&) = delete;
};

// While alive, no CallSite is open and no location is pinned (user code
// runs: a pl::range body, a callee's body being traced); restores both after.
class CallSiteSuspension {
 public:
  CallSiteSuspension();
  ~CallSiteSuspension();
  CallSiteSuspension(const CallSiteSuspension&) = delete;
  CallSiteSuspension& operator=(const CallSiteSuspension&) = delete;

 private:
  ir::SourceLoc saved_open_, saved_pinned_;
  int saved_depth_;
};

// The location an op recorded now carries (unknown outside every CallSite
// and without a pinned location).
ir::SourceLoc current_call_site();

// The Python front-end's per-statement location (file interned here); it
// stays until pinned again or unpinned.
void pin_call_site(const std::string& file, std::uint32_t line, std::uint32_t column);
void unpin_call_site();

}  // namespace anyp::detail
