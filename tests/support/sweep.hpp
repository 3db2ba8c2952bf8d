// sweep.hpp — the values a test sweeps over, with a smaller set under a
// sanitizer. The release stage runs every value of every sweep; the ASan/UBSan
// and TSan stages run every test too, over the smaller set, which still has
// each case the sweep exists for (an odd and an even P, a P where rows wrap)
// at a fraction of the instrumented cost (docs/development.md lists them).
#pragma once

#include <cstdint>
#include <vector>

namespace anyp_test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// sweep({every value}, {the values run under a sanitizer}).
inline std::vector<std::int64_t> sweep(std::vector<std::int64_t> full,
                                       std::vector<std::int64_t> sanitized) {
  return kSanitizedBuild ? sanitized : full;
}

// Every P from `first` to `last`, both included.
inline std::vector<std::int64_t> every_p(std::int64_t first, std::int64_t last) {
  std::vector<std::int64_t> ps;
  for (std::int64_t p = first; p <= last; ++p) ps.push_back(p);
  return ps;
}

}  // namespace anyp_test
