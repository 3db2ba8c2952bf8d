// errors.hpp — the exceptions anyp throws to its users.
//
// Every message is complete on its own: it names the function, parameter,
// dim, rank and op involved, so a caller can print what() and exit.
//   ConfigError   bad RunConfig (platform, device ids)        -> CLI exit 2
//   CompileError  the program is wrong for these arguments/P   -> CLI exit 1
//   RunError      a rank failed while running (names the rank) -> CLI exit 1
//   DeadlockError no rank can run and some are unfinished      -> CLI exit 1
//   RaceError     RunConfig::check_races found unordered
//                 conflicting accesses (names both accesses)   -> CLI exit 1
//   InternalError an invariant of anyp itself failed: a bug in
//                 anyp, not in the program                     -> CLI exit 1
#pragma once

#include <stdexcept>
#include <string>

namespace anyp {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ConfigError : public Error {
 public:
  using Error::Error;
};

class CompileError : public Error {
 public:
  using Error::Error;
};

class RunError : public Error {
 public:
  using Error::Error;
};

class DeadlockError : public RunError {
 public:
  using RunError::RunError;
};

class RaceError : public RunError {
 public:
  using RunError::RunError;
};

class InternalError : public Error {
 public:
  using Error::Error;
};

}  // namespace anyp
