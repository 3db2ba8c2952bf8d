// recruit_at_start.cpp — the runtime tests' recruiting mode (see
// recruit_at_start.hpp): read from ANYP_TEST_RECRUIT_AT_START once, before
// the first test, through a gtest environment.
#include "support/recruit_at_start.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "engines/threads/runner.hpp"

namespace anyp_test {

RecruitAtStart::RecruitAtStart(bool on) : previous_(anyp::threads::set_recruit_at_start(on)) {}
RecruitAtStart::~RecruitAtStart() { anyp::threads::set_recruit_at_start(previous_); }

bool recruiting_at_start() { return anyp::threads::recruits_at_start(); }

namespace {

class RecruitingFromEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const char* value = std::getenv("ANYP_TEST_RECRUIT_AT_START");
    anyp::threads::set_recruit_at_start(value != nullptr && std::string(value) == "1");
  }
};

[[maybe_unused]] ::testing::Environment* const environment =
    ::testing::AddGlobalTestEnvironment(new RecruitingFromEnvironment);

}  // namespace
}  // namespace anyp_test
