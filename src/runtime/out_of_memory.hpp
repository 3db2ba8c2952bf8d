// out_of_memory.hpp — an allocation a run refuses because it would pass the
// memory available (the race checker's budget, say): a std::bad_alloc that
// says what needed the memory, so the rank VM's run error can name it.
#pragma once

#include <new>
#include <string>

namespace anyp::runtime {

class OutOfMemory : public std::bad_alloc {
 public:
  explicit OutOfMemory(std::string what) : what_(std::move(what)) {}
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  std::string what_;
};

}  // namespace anyp::runtime
