// run_command.hpp — runs a shell command (an example executable) for the
// tests that check what an example prints or writes.
#pragma once

#include <string>

namespace anyp_test {

struct CommandOutput {
  std::string out;  // its stdout (redirect stderr into it with 2>&1)
  bool ok = false;  // it exited with status 0
};

CommandOutput run_command(const std::string& command);

}  // namespace anyp_test
