// internal_check_test.cpp — ANYP_CHECK / ANYP_UNREACHABLE throw
// anyp::InternalError naming the invariant, the source location (from src/)
// and saying it is a bug in anyp.
#include "common/internal_check.hpp"

#include <gtest/gtest.h>

#include <anyp/errors.hpp>
#include <string>

#include "support/source_locations.hpp"

namespace {

std::string message_of(void (*f)()) {
  try {
    f();
  } catch (const anyp::InternalError& e) {
    return anyp_test::without_locations(e.what());
  }
  return "no InternalError";
}

TEST(InternalCheck, FailedCheckNamesTheConditionAndIsAnInternalError) {
  const std::string m = message_of([] { ANYP_CHECK(1 + 1 == 3, "arithmetic broke"); });
  EXPECT_EQ(m.rfind("internal error: arithmetic broke (check '1 + 1 == 3' failed at ", 0), 0u) << m;
  EXPECT_NE(m.find("internal_check_test.cpp:"), std::string::npos) << m;
  EXPECT_NE(m.find("); this is a bug in anyp, please report it with the command that produced it"),
            std::string::npos)
      << m;
}

TEST(InternalCheck, PassingCheckDoesNothing) {
  EXPECT_EQ(message_of([] { ANYP_CHECK(2 > 1, "never"); }), "no InternalError");
}

TEST(InternalCheck, Unreachable) {
  const std::string m = message_of([] { ANYP_UNREACHABLE("opcode 99 has no name"); });
  EXPECT_EQ(m.rfind("internal error: opcode 99 has no name (", 0), 0u) << m;
  EXPECT_EQ(m.find("check '"), std::string::npos) << m;
}

TEST(InternalCheck, IsAnAnypErrorButNotARunError) {
  try {
    ANYP_UNREACHABLE("x");
  } catch (const anyp::RunError&) {
    FAIL() << "an internal error is not a run error";
  } catch (const anyp::Error&) {
    SUCCEED();
  }
}

}  // namespace
