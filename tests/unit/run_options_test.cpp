// run_options_test.cpp — the run-option table (ANYP_RUN_CONFIG_FIELDS in
// include/anyp/run_config.hpp) reaches every place that reads it: each row
// with a flag is a flag of the example command line with its help line,
// each row's flag and side-effect flags are the ones named when a
// program's own RunConfig does not take them, and each one-process row's
// flags are the ones the MPI engine refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "anyp/example_cli.hpp"
#include "anyp/run_config.hpp"

namespace anyp::cli {
namespace {

const ExampleSpec kSpec{
    .name = "07_dynamic_rank_count", .step = 7, .modes = {}, .ops = {}, .default_devices = {0, 1}};

// A value of `v`'s type that differs from `v`.
template <class T>
T changed(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return !v;
  } else if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<T>(v + 1);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return v + "x";
  } else {
    T c = v;
    c.push_back(99);
    return c;
  }
}

std::vector<std::string> words(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(' ', at), text.size());
    out.emplace_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// "--device" of "--device,-d"; "--platform" of "-p,--platform".
std::string long_name(std::string_view names) {
  const std::string text(names);
  const std::size_t at = text.find("--");
  return at == std::string::npos ? "" : text.substr(at, text.find(',', at) - at);
}

// The name messages use: the last ("-d" of "--device,-d").
std::string message_name(std::string_view names) {
  const auto comma = names.rfind(',');
  return std::string(comma == std::string_view::npos ? names : names.substr(comma + 1));
}

TEST(RunOptionTable, EveryRowWithAFlagIsAFlagOfTheCommandLineWithItsHelp) {
  const std::vector<FlagHelp> flags = flag_help(kSpec);
  const auto find = [&](const std::string& name) {
    return std::find_if(flags.begin(), flags.end(),
                        [&](const FlagHelp& f) { return f.name == name; });
  };
  int rows = 0;
#define ANYP_CHECK_FLAG(key, member, flag_, set_by, one_process, metavar_, kind, help_) \
  if (std::string_view(flag_) != "") {                                                  \
    ++rows;                                                                             \
    const auto it = find(long_name(flag_));                                             \
    ASSERT_NE(it, flags.end()) << #key;                                                 \
    EXPECT_EQ(it->help.rfind(help_, 0), 0u) << #key << ": " << it->help;                \
    EXPECT_EQ(it->takes_value, std::string_view(#kind) != "Switch") << #key;            \
    if (std::string_view(metavar_) != "") {                                             \
      EXPECT_EQ(it->metavar.rfind(metavar_, 0), 0u) << #key;                            \
    }                                                                                   \
  }
  ANYP_RUN_CONFIG_FIELDS(ANYP_CHECK_FLAG)
#undef ANYP_CHECK_FLAG
  EXPECT_EQ(rows, 17);  // platform, devices, engine, workers, schedule seed and replay, PCT x 3,
                        // budget, DFX x 3, ...
}

TEST(RunOptionTable, AFieldTheRunDidNotTakeNamesTheFlagThatSetsIt) {
  int checked = 0;
#define ANYP_CHECK_NOT_TAKEN(key, member, flag, set_by, one_process, metavar, kind, help) \
  {                                                                                       \
    std::vector<std::string> setters = words(set_by);                                     \
    if (std::string_view(flag) != "") setters.insert(setters.begin(), flag);              \
    for (const std::string& setter : setters) {                                           \
      const RunConfig want;                                                               \
      RunConfig got = want;                                                               \
      got.member = changed(want.member);                                                  \
      EXPECT_EQ(flag_not_taken({long_name(setter)}, got, want), message_name(setter))     \
          << #key << " set by " << setter;                                                \
      EXPECT_EQ(flag_not_taken({"--verbose"}, got, want), "") << #key;                    \
      EXPECT_EQ(flag_not_taken({long_name(setter)}, want, want), "") << #key;             \
      ++checked;                                                                          \
    }                                                                                     \
  }
  ANYP_RUN_CONFIG_FIELDS(ANYP_CHECK_NOT_TAKEN)
#undef ANYP_CHECK_NOT_TAKEN
  EXPECT_EQ(checked, 32);  // each row's flag and side-effect flags
}

TEST(RunOptionTable, TheFirstFieldInTableOrderNamesItsFlag) {
  const RunConfig want;
  RunConfig got = want;
  got.memory_limit = 1;
  got.check_races = true;
  EXPECT_EQ(flag_not_taken({"--memory-limit", "--check-races"}, got, want), "--check-races");
  EXPECT_EQ(flag_not_taken({"--memory-limit"}, got, want), "--memory-limit");
}

}  // namespace
}  // namespace anyp::cli
