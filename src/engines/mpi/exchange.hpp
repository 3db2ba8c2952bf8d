// exchange.hpp — what the MPI engine's processes tell each other at the
// start and end of a run: bytes packed by a Packer, gathered to every
// process (MPI_Allgatherv on the engine's control communicator) and read
// back by an Unpacker, and a check that every process holds the same value.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/internal_check.hpp"

namespace anyp::mpi {

class Packer {
 public:
  template <class T>
  Packer& put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  Packer& put_string(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    bytes_.append(s);
    return *this;
  }
  Packer& put_bytes(const void* p, std::size_t n) {
    bytes_.append(static_cast<const char*>(p), n);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class Unpacker {
 public:
  explicit Unpacker(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    ANYP_CHECK(at_ + sizeof v <= bytes_.size(), "an MPI engine exchange ended early");
    std::memcpy(&v, bytes_.data() + at_, sizeof v);
    at_ += sizeof v;
    return v;
  }
  std::string get_string() {
    const auto n = static_cast<std::size_t>(get<std::uint64_t>());
    ANYP_CHECK(at_ + n <= bytes_.size(), "an MPI engine exchange ended early");
    std::string s = bytes_.substr(at_, n);
    at_ += n;
    return s;
  }
  const char* take(std::size_t n) {
    ANYP_CHECK(at_ + n <= bytes_.size(), "an MPI engine exchange ended early");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  const std::string& bytes_;
  std::size_t at_ = 0;
};

// Every process's `mine`, by rank.
std::vector<std::string> allgather(MPI_Comm comm, const std::string& mine);

// True when every process passed the same value.
bool same_everywhere(MPI_Comm comm, std::uint64_t value);

}  // namespace anyp::mpi
