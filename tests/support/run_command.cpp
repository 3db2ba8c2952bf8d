// run_command.cpp — popen(3) of a command, its stdout and exit status.
#include "support/run_command.hpp"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace anyp_test {

CommandOutput run_command(const std::string& command) {
  CommandOutput result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return result;
}

}  // namespace anyp_test
