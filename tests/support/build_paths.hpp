// build_paths.hpp — where the tests find the source tree (model files) and
// the example executables. Compiled into one small file (build_paths.cpp)
// so that no other test file's command line carries an absolute path: the
// compiler cache then serves a fresh clone in another folder
// (cmake/build_speed.cmake).
#pragma once

#include <string>

namespace anyp_test {

// The repository root (models/, models/simple/).
const std::string& source_dir();
// The directory of the ladder and kernel example executables.
const std::string& examples_dir();

}  // namespace anyp_test
