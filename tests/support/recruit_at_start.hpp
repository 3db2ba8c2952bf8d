// recruit_at_start.hpp — when the threads engine recruits a run's other
// workers, for the tests that depend on it: adaptively (the default: only
// once the ranks show enough tile compute, runner.hpp), or before the first
// slice. The runtime test executable starts in the mode its environment
// names: ANYP_TEST_RECRUIT_AT_START=1 (the TSan stage, scripts/test.sh) runs
// every test's signal-bound programs on two workers at once.
#pragma once

namespace anyp_test {

// For a test's scope: recruiting at the start on or off, restored after.
class RecruitAtStart {
 public:
  explicit RecruitAtStart(bool on);
  ~RecruitAtStart();
  RecruitAtStart(const RecruitAtStart&) = delete;
  RecruitAtStart& operator=(const RecruitAtStart&) = delete;

 private:
  bool previous_;
};

// The process's current mode.
bool recruiting_at_start();

}  // namespace anyp_test
