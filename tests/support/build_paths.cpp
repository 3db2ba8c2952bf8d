// build_paths.cpp — the two absolute paths the tests need, from the
// compile definitions tests/CMakeLists.txt gives this one file.
#include "support/build_paths.hpp"

#ifndef ANYP_SOURCE_DIR
#error "ANYP_SOURCE_DIR must name the repository root"
#endif
#ifndef ANYP_EXAMPLES_DIR
#error "ANYP_EXAMPLES_DIR must name the directory of the example executables"
#endif

namespace anyp_test {

const std::string& source_dir() {
  static const std::string dir = ANYP_SOURCE_DIR;
  return dir;
}

const std::string& examples_dir() {
  static const std::string dir = ANYP_EXAMPLES_DIR;
  return dir;
}

}  // namespace anyp_test
