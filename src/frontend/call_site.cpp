// call_site.cpp — the thread's current call site (call_site.hpp).
#include "frontend/call_site.hpp"

#include <string>

namespace anyp::detail {
namespace {
thread_local ir::SourceLoc open_site;  // of the outermost open CallSite
thread_local int open_depth = 0;
thread_local ir::SourceLoc pinned_site;  // the Python front-end's
}  // namespace

CallSite::CallSite(const std::source_location& where) {
  if (open_depth++ == 0) {
    // file_name() has static storage duration: no copy needed.
    open_site = ir::SourceLoc{where.file_name(), where.line(), where.column()};
  }
}

CallSite::~CallSite() {
  if (--open_depth == 0) open_site = {};
}

CallSiteSuspension::CallSiteSuspension()
    : saved_open_(open_site), saved_pinned_(pinned_site), saved_depth_(open_depth) {
  open_site = {};
  pinned_site = {};
  open_depth = 0;
}

CallSiteSuspension::~CallSiteSuspension() {
  open_site = saved_open_;
  pinned_site = saved_pinned_;
  open_depth = saved_depth_;
}

ir::SourceLoc current_call_site() { return pinned_site.known() ? pinned_site : open_site; }

void pin_call_site(const std::string& file, std::uint32_t line, std::uint32_t column) {
  pinned_site = ir::SourceLoc{ir::intern_file_name(file), line, column};
}

void unpin_call_site() { pinned_site = {}; }

}  // namespace anyp::detail
