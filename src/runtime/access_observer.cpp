// access_observer.cpp — names of access kinds.
#include "runtime/access_observer.hpp"

namespace anyp::runtime {

const char* access_kind_name(AccessKind k) {
  switch (k) {
    case AccessKind::Read:
      return "read";
    case AccessKind::Write:
      return "write";
    case AccessKind::AtomicAdd:
      return "atomic add";
  }
  return "?";
}

}  // namespace anyp::runtime
