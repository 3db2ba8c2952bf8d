// timing.hpp — wall-clock helpers shared by the benchmarks: one timed call,
// and the median of repeated measurements.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

namespace anyp_bench {

// Seconds f() takes.
inline double seconds(const std::function<void()>& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The median of `rounds` values of f().
inline double median_of(int rounds, const std::function<double()>& f) {
  std::vector<double> v;
  for (int i = 0; i < rounds; ++i) v.push_back(f());
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace anyp_bench
