// lowered_code.cpp — opcode names for listings.
#include "runtime/lowered_code.hpp"

namespace anyp::runtime {

const char* opcode_name(Opcode op) {
  static const char* names[] = {
      "const", "mov",         "mov.tile",     "mov.view",  "scalar",     "not",      "cast",
      "jump",  "jump.zero",   "jump.ge",      "load",      "store",      "read",     "write",
      "tile",  "cast.tile",   "rank",         "nranks",    "notify",     "wait",     "put",
      "get",   "remote_load", "remote_store", "load.flat", "store.flat", "put.flat", "check.count"};
  return names[static_cast<int>(op)];
}

}  // namespace anyp::runtime
