// source_locations.hpp — for tests that assert a diagnostic's exact text
// apart from where the op was written: every " at <file>.cpp:<line>" (or
// .py) removed, so that the expectation does not move with the test file's
// lines. The locations themselves are asserted exactly in
// tests/unit/source_location_test.cpp and
// tests/runtime/source_location_run_test.cpp.
#pragma once

#include <string>
#include <string_view>

namespace anyp_test {

std::string without_locations(std::string_view text);

}  // namespace anyp_test
