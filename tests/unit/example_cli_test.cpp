// example_cli_test.cpp — unit tests for the ladder examples' command line
// (anyp::cli::parse, run_example), the golden checks and report()
// (include/anyp/example_cli.hpp; docs/api.md §18, docs/ladder-steps.md §1).
#include "anyp/example_cli.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "anyp/errors.hpp"
#include "anyp/timeline_output.hpp"
#include "support/step07_program.hpp"

namespace anyp::cli {
namespace {

using ::testing::internal::CaptureStderr;
using ::testing::internal::CaptureStdout;
using ::testing::internal::GetCapturedStderr;
using ::testing::internal::GetCapturedStdout;

// Every field is spelled out: GCC 12's -Wextra warns about members a
// designated initializer leaves out, even those with default initializers.
const ExampleSpec kStep7{.name = "07_dynamic_rank_count",
                         .step = 7,
                         .modes = {"put", "get"},
                         .ops = {},
                         .default_devices = {0, 1}};
const ExampleSpec kStep11{.name = "11_allreduce_reveal",
                          .step = 11,
                          .modes = {"mesh", "ring"},
                          .ops = {"sum", "max", "min", "prod"},
                          .default_devices = {0, 1, 2, 3}};
const ExampleSpec kStep3{
    .name = "03_window_buffer", .step = 3, .modes = {}, .ops = {}, .default_devices = {0, 1}};

// argv for `args`, with a program name in front.
struct Argv {
  explicit Argv(std::vector<std::string> args) : strings(std::move(args)) {
    strings.insert(strings.begin(), "example");
    for (const std::string& s : strings) pointers.push_back(s.c_str());
  }
  int argc() const { return static_cast<int>(pointers.size()); }
  const char* const* argv() const { return pointers.data(); }
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
};

Options parse_args(std::vector<std::string> args, const ExampleSpec& spec = kStep7) {
  const Argv a(std::move(args));
  return parse(a.argc(), a.argv(), spec);
}

// The UsageError message parse() throws for `args` ("" if it does not throw).
std::string usage_error(std::vector<std::string> args, const ExampleSpec& spec = kStep7) {
  try {
    parse_args(std::move(args), spec);
  } catch (const UsageError& e) {
    return e.message;
  }
  return "";
}

// ---- defaults ----------------------------------------------------------------------

TEST(Parse, Defaults) {
  const Options o = parse_args({});
  EXPECT_EQ(o.run.platform, "a2a3sim");
  EXPECT_EQ(o.run.distributed.device_ids, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(o.world_size(), 2);
  EXPECT_EQ(o.mode, "put");
  EXPECT_EQ(o.op, "");
  EXPECT_FALSE(o.compile_only);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_EQ(o.run.workers, 0);
  EXPECT_FALSE(o.run.deterministic);
  EXPECT_EQ(o.run.schedule_seed, 0u);
  EXPECT_EQ(o.output_dir, "anyp_out/07_dynamic_rank_count/P2-a2a3sim");
}

TEST(Parse, SpecDefaultsForDevicesModeAndOp) {
  const Options o = parse_args({}, kStep11);
  EXPECT_EQ(o.run.distributed.device_ids, (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(o.mode, "mesh");
  EXPECT_EQ(o.op, "sum");
  EXPECT_EQ(o.seed, 11u);
  EXPECT_EQ(o.output_dir, "anyp_out/11_allreduce_reveal/P4-a2a3sim");

  const Options plain = parse_args({}, kStep3);
  EXPECT_EQ(plain.mode, "");
  EXPECT_EQ(plain.seed, 3u);
}

TEST(Parse, AllFlags) {
  const Options o = parse_args(
      {"-p", "a5sim", "-d", "4,2,7", "--mode", "ring", "--op", "max", "--compile-only", "--seed",
       "42", "--workers", "3", "--schedule-seed", "99", "--output-dir", "/tmp/artifacts"},
      kStep11);
  EXPECT_EQ(o.run.platform, "a5sim");
  EXPECT_EQ(o.run.distributed.device_ids, (std::vector<std::int64_t>{4, 2, 7}));
  EXPECT_EQ(o.world_size(), 3);
  EXPECT_EQ(o.mode, "ring");
  EXPECT_EQ(o.op, "max");
  EXPECT_TRUE(o.compile_only);
  EXPECT_EQ(o.seed, 42u);
  EXPECT_EQ(o.run.workers, 3);
  EXPECT_TRUE(o.run.deterministic);
  EXPECT_EQ(o.run.schedule_seed, 99u);
  EXPECT_EQ(o.output_dir, "/tmp/artifacts");
}

TEST(Parse, LongFormsAndEquals) {
  const Options o = parse_args({"--platform=a5sim", "--device=0,1,2,3,4", "--mode=get"});
  EXPECT_EQ(o.run.platform, "a5sim");
  EXPECT_EQ(o.world_size(), 5);
  EXPECT_EQ(o.mode, "get");
  EXPECT_EQ(o.output_dir, "anyp_out/07_dynamic_rank_count/P5-a5sim");
}

TEST(Parse, LargeDeviceList) {
  std::string ids;
  for (int i = 0; i < 1024; ++i) ids += (i == 0 ? "" : ",") + std::to_string(i);
  const Options o = parse_args({"-d", ids});
  EXPECT_EQ(o.world_size(), 1024);
  EXPECT_EQ(o.run.distributed.device_ids.back(), 1023);
}

TEST(Parse, DeviceRanges) {
  EXPECT_EQ(parse_args({"-d", "0-3,7, 9 - 10"}).run.distributed.device_ids,
            (std::vector<std::int64_t>{0, 1, 2, 3, 7, 9, 10}));
  const Options o = parse_args({"-d", "0-65535"});
  EXPECT_EQ(o.world_size(), 65536);
  EXPECT_EQ(o.run.distributed.device_ids[65535], 65535);
}

TEST(Parse, SeedsAreDecimal) {
  EXPECT_EQ(parse_args({"--seed", "010"}).seed, 10u);  // not octal
  EXPECT_EQ(parse_args({"--seed", "4294967295"}).seed, 4294967295u);
  EXPECT_EQ(parse_args({"--schedule-seed", "18446744073709551615"}).run.schedule_seed,
            18446744073709551615u);
  EXPECT_EQ(parse_args({"--schedule-seed", "0"}).run.deterministic, true);
}

TEST(Parse, Config) {
  const RunConfig c =
      parse_args({"-p", "a5sim", "-d", "3,1", "--workers", "2", "--schedule-seed", "5"}).config();
  EXPECT_EQ(c.platform, "a5sim");
  EXPECT_EQ(c.distributed.device_ids, (std::vector<std::int64_t>{3, 1}));
  EXPECT_EQ(c.workers, 2);
  EXPECT_TRUE(c.deterministic);
  EXPECT_EQ(c.schedule_seed, 5u);
  EXPECT_EQ(c.engine, "threads");
  EXPECT_EQ(c.output_dir, "");  // --compile-only writes via finish_compile_only
  EXPECT_FALSE(parse_args({}).config().deterministic);
}

// --cost keeps the figures, --timeline the critical path too, --trace every
// op (RunConfig::timeline_detail).
TEST(Parse, ConfigKeepsEveryTimelineOpOnlyForATrace) {
  EXPECT_FALSE(parse_args({}).config().timeline);
  EXPECT_EQ(parse_args({"--cost"}).config().timeline_detail, "figures");
  EXPECT_EQ(parse_args({"--timeline"}).config().timeline_detail, "path");
  EXPECT_EQ(parse_args({"--cost", "--timeline"}).config().timeline_detail, "path");
  for (const char* flag : {"--cost", "--timeline"})
    EXPECT_TRUE(parse_args({flag}).config().timeline);
  const std::string trace = (std::filesystem::temp_directory_path() / "anyp_cfg_trace.json");
  std::filesystem::remove(trace);
  const RunConfig c = parse_args({"--timeline", "--trace", trace.c_str()}).config();
  EXPECT_FALSE(std::filesystem::exists(trace));  // checked writable, and left as it was
  EXPECT_TRUE(c.timeline);
  EXPECT_EQ(c.timeline_detail, "ops");
  EXPECT_EQ(RunConfig{}.timeline_detail, "ops");  // the API keeps every op
}

// ---- errors (docs/diagnostics.md §1; the texts are the contract) ------------------

TEST(ParseErrors, Platform) {
  EXPECT_EQ(usage_error({"-p", "a2a3"}),
            "platform 'a2a3' is real Ascend hardware, which anyp does not drive; supported "
            "platforms: a2a3sim, a5sim");
  EXPECT_EQ(usage_error({"--platform", "a5"}),
            "platform 'a5' is real Ascend hardware, which anyp does not drive; supported "
            "platforms: a2a3sim, a5sim");
  EXPECT_EQ(usage_error({"-p", "cuda"}),
            "unknown platform 'cuda'; supported platforms: a2a3sim, a5sim");
}

TEST(ParseErrors, Devices) {
  EXPECT_EQ(usage_error({"-d", ""}), "-d/--device: empty device list");
  EXPECT_EQ(usage_error({"-d", "0,x"}),
            "-d/--device: 'x' is not a device id (a non-negative integer)");
  EXPECT_EQ(usage_error({"-d", "0,,1"}),
            "-d/--device: '' is not a device id (a non-negative integer)");
  EXPECT_EQ(usage_error({"-d", "1.5,2"}),
            "-d/--device: '1.5' is not a device id (a non-negative integer)");
  EXPECT_EQ(usage_error({"-d", "0,99999999999999999999"}),
            "-d/--device: '99999999999999999999' is not a device id (a non-negative integer)");
  EXPECT_EQ(usage_error({"-d", "-1"}), "-d/--device: device id -1 is negative");
  EXPECT_EQ(usage_error({"-d", "0,-3,1"}), "-d/--device: device id -3 is negative");
  EXPECT_EQ(usage_error({"-d", "0,2,1,2"}), "-d/--device: device 2 is listed twice");
  EXPECT_EQ(usage_error({"-d", "0"}), "need at least 2 devices, got [0]");
  EXPECT_EQ(usage_error({"--device", "5"}), "need at least 2 devices, got [5]");
  EXPECT_EQ(usage_error({"-d", "3-1"}), "-d/--device: range '3-1' is empty (3 is above 1)");
  EXPECT_EQ(usage_error({"-d", "0-x"}),
            "-d/--device: 'x' is not a device id (a non-negative integer)");
  EXPECT_EQ(usage_error({"-d", "1-"}),
            "-d/--device: '' is not a device id (a non-negative integer)");
  EXPECT_EQ(usage_error({"-d", "0-2,2"}), "-d/--device: device 2 is listed twice");
  EXPECT_EQ(usage_error({"-d", "4-4"}), "need at least 2 devices, got [4]");
  EXPECT_EQ(usage_error({"-d", "0-99999999999"}),
            "-d/--device: range '0-99999999999' makes more than 16777216 devices");
}

TEST(ParseErrors, ModeAndOp) {
  EXPECT_EQ(usage_error({"--mode", "x"}), "--mode: 'x' is not one of put, get");
  EXPECT_EQ(usage_error({"--op", "avg"}, kStep11), "--op: 'avg' is not one of sum, max, min, prod");
  // Steps without modes/ops do not accept the flags at all.
  const std::string mode = usage_error({"--mode", "put"}, kStep3);
  EXPECT_NE(mode.find("--mode"), std::string::npos) << mode;
  EXPECT_TRUE(mode.ends_with("\nrun with --help for usage")) << mode;
  const std::string op = usage_error({"--op", "sum"}, kStep7);
  EXPECT_NE(op.find("--op"), std::string::npos) << op;
  EXPECT_TRUE(op.ends_with("\nrun with --help for usage")) << op;
}

TEST(ParseErrors, UnknownFlagAndExtraArguments) {
  EXPECT_EQ(usage_error({"--bogus"}),
            "The following argument was not expected: --bogus\nrun with --help for usage");
  EXPECT_EQ(usage_error({"stray"}),
            "The following argument was not expected: stray\nrun with --help for usage");
  EXPECT_EQ(usage_error({"-d"}), "--device: 1 required IDS missing\nrun with --help for usage");
}

TEST(ParseErrors, Numbers) {
  EXPECT_EQ(usage_error({"--workers", "0"}),
            "--workers: must be at least 1, got 0\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--workers", "-2"}),
            "--workers: '-2' is not a non-negative integer\nrun with --help for usage");
  EXPECT_EQ(
      usage_error({"--workers", "2147483648"}),
      "--workers: 2147483648 is out of range (at most 2147483647)\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--seed", "abc"}),
            "--seed: 'abc' is not a non-negative integer\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--seed", "0x10"}),
            "--seed: '0x10' is not a non-negative integer\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--seed", "4294967296"}),
            "--seed: 4294967296 is out of range (at most 4294967295)\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--schedule-seed", "18446744073709551616"}),
            "--schedule-seed: 18446744073709551616 is out of range (at most "
            "18446744073709551615)\nrun with --help for usage");
}

TEST(ParseErrors, ModeledTimeOptions) {
  EXPECT_EQ(
      usage_error({"--model", "my.model"}),
      "--model: only meaningful with --cost, --timeline, --trace or --explain-collectives (it "
      "prices the modeled "
      "timeline)");
  EXPECT_EQ(usage_error({"--trace", "/nonexistent/dir/t.json"}),
            "--trace: cannot write '/nonexistent/dir/t.json'");
  EXPECT_EQ(usage_error({"--trace"}),
            "--trace: 1 required FILE missing\nrun with --help for usage");
}

// ---- help ------------------------------------------------------------------------

TEST(Help, ParseThrowsHelpRequested) {
  try {
    parse_args({"--help"}, kStep11);
    FAIL() << "no HelpRequested";
  } catch (const HelpRequested& help) {
    for (const char* flag : {"Usage:", "--platform", "--device", "--mode", "--op", "--compile-only",
                             "--seed", "--workers", "--schedule-seed", "--output-dir", "--cost",
                             "--timeline", "--trace", "--model"}) {
      EXPECT_NE(help.usage.find(flag), std::string::npos) << flag;
    }
  }
}

TEST(Help, RunExamplePrintsUsageAndReturnsZero) {
  const Argv a({"-h"});
  bool called = false;
  CaptureStdout();
  CaptureStderr();
  const int rc = run_example(a.argc(), a.argv(), kStep7, [&](const Options&) {
    called = true;
    return 0;
  });
  const std::string out = GetCapturedStdout();
  const std::string err = GetCapturedStderr();
  EXPECT_EQ(rc, 0);
  EXPECT_FALSE(called);
  EXPECT_NE(out.find("Usage:"), std::string::npos) << out;
  EXPECT_NE(out.find("--mode"), std::string::npos) << out;
  EXPECT_EQ(out.find("--op"), std::string::npos) << out;  // step 7 has no --op
  EXPECT_EQ(err, "");
}

// ---- run_example exit codes ----------------------------------------------------------

struct RunResult {
  int rc;
  std::string out;
  std::string err;
};

RunResult run(std::vector<std::string> args, const std::function<int(const Options&)>& body) {
  const Argv a(std::move(args));
  CaptureStdout();
  CaptureStderr();
  const int rc = run_example(a.argc(), a.argv(), kStep7, body);
  std::string out = GetCapturedStdout();
  return {rc, std::move(out), GetCapturedStderr()};
}

TEST(RunExample, BodyResultIsTheExitCode) {
  int seen_p = 0;
  RunResult r = run({"-d", "0,1,2"}, [&](const Options& o) {
    seen_p = static_cast<int>(o.world_size());
    return 0;
  });
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(seen_p, 3);
  r = run({}, [](const Options&) { return 1; });
  EXPECT_EQ(r.rc, 1);
}

TEST(RunExample, UsageErrorFromArgvExitsTwoWithoutRunningTheBody) {
  bool called = false;
  const RunResult r = run({"-d", "0"}, [&](const Options&) {
    called = true;
    return 0;
  });
  EXPECT_EQ(r.rc, 2);
  EXPECT_FALSE(called);
  EXPECT_EQ(r.err, "need at least 2 devices, got [0]\n");
  EXPECT_EQ(r.out, "");
}

TEST(RunExample, ExceptionsMapToExitCodes) {
  RunResult r = run({}, [](const Options&) -> int {
    throw UsageError{"SIZE=960 cannot be split into 32-byte-aligned chunks for P=7"};
  });
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "SIZE=960 cannot be split into 32-byte-aligned chunks for P=7\n");

  r = run({}, [](const Options&) -> int { throw ConfigError("bad device list"); });
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, "bad device list\n");

  r = run({}, [](const Options&) -> int { throw CompileError("compile failed"); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "compile failed\n");

  r = run({}, [](const Options&) -> int { throw RunError("rank 1 failed in put"); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "rank 1 failed in put\n");

  r = run({}, [](const Options&) -> int { throw DeadlockError("deadlock: rank 0 waits"); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "deadlock: rank 0 waits\n");

  r = run({}, [](const Options&) -> int { throw std::runtime_error("boom"); });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: boom\n");

  r = run({}, [](const Options&) -> int { throw 42; });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: unknown exception\n");
}

// ---- checks and report ----------------------------------------------------------------

HostTensor filled(std::vector<std::int64_t> shape, double value) {
  HostTensor t = HostTensor::zeros(std::move(shape), DType::FP32);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, value);
  return t;
}

TEST(Checks, ExactPassesSilently) {
  const HostTensor golden = HostTensor::arange({4, 1, 8}, DType::FP32);
  CaptureStderr();
  EXPECT_TRUE(check_exact("y", golden.clone(), golden, 4));
  EXPECT_EQ(GetCapturedStderr(), "");
}

TEST(Checks, ExactFailurePrintsMaxDiff) {
  const HostTensor golden = HostTensor::arange({4, 1, 8}, DType::FP32);
  HostTensor out = golden.clone();
  out.set(3, 3.25);
  out.set(9, 9.125);
  CaptureStderr();
  EXPECT_FALSE(check_exact("y", out, golden, 4));
  EXPECT_EQ(GetCapturedStderr(), "y mismatch: max diff = 0.25 (P=4)\n");

  // A lost contribution (a zero read) shows up too.
  out = golden.clone();
  out.set(31, 0.0);
  CaptureStderr();
  EXPECT_FALSE(check_exact("gathered", out, golden, 4));
  EXPECT_EQ(GetCapturedStderr(), "gathered mismatch: max diff = 31 (P=4)\n");
}

TEST(Checks, CloseToleranceIsOneEMinusFivePlusRelative) {
  const HostTensor golden = filled({2, 4}, 1.0);
  CaptureStderr();
  EXPECT_TRUE(check_close("allred", filled({2, 4}, 1.0 + 0x1p-17), golden, 2));  // 7.6e-6
  EXPECT_EQ(GetCapturedStderr(), "");

  CaptureStderr();
  EXPECT_FALSE(check_close("allred", filled({2, 4}, 1.0 + 0x1p-10), golden, 3));
  EXPECT_EQ(GetCapturedStderr(), "allred mismatch: max diff = 0.0009765625 (P=3)\n");

  // Shortest round-trip decimal of a non-dyadic-looking difference.
  HostTensor out = golden.clone();
  out.set(5, 1.1);  // stored as the float 1.10000002384185791015625
  CaptureStderr();
  EXPECT_FALSE(check_close("allred", out, golden, 8));
  EXPECT_EQ(GetCapturedStderr(), "allred mismatch: max diff = 0.10000002384185791 (P=8)\n");

  // Relative part: golden 1000 allows 1e-5 + 1e-2; a diff of 2^-7 passes.
  CaptureStderr();
  EXPECT_TRUE(check_close("allred", filled({1}, 1000.0 + 0x1p-7), filled({1}, 1000.0), 2));
  EXPECT_EQ(GetCapturedStderr(), "");
}

TEST(Checks, NanFails) {
  CaptureStderr();
  EXPECT_FALSE(check_close("y", filled({2}, std::nan("")), filled({2}, 1.0), 2));
  EXPECT_EQ(GetCapturedStderr(), "y mismatch: max diff = nan (P=2)\n");
}

TEST(Report, OkOnlyWhenEveryCheckPassed) {
  CaptureStdout();
  EXPECT_EQ(report({true, true}), 0);
  EXPECT_EQ(GetCapturedStdout(), "OK\n");
  CaptureStdout();
  EXPECT_EQ(report({}), 0);
  EXPECT_EQ(GetCapturedStdout(), "OK\n");
  CaptureStdout();
  EXPECT_EQ(report({true, false}), 1);
  EXPECT_EQ(GetCapturedStdout(), "");
}

// ---- race checking and schedule exploration flags ---------------------------------------

TEST(Parse, RaceAndScheduleFlags) {
  const Options o = parse_args(
      {"--check-races", "--preempt-budget", "64", "--explore", "100", "--explore-depth", "2"});
  EXPECT_TRUE(o.run.check_races);
  EXPECT_EQ(o.run.preempt_budget, 64);
  EXPECT_EQ(o.explore, 100);
  EXPECT_EQ(o.run.pct.depth, 2);
  EXPECT_FALSE(o.run.pct.enabled);
  const RunConfig c = o.config();
  EXPECT_TRUE(c.check_races);
  EXPECT_EQ(c.preempt_budget, 64);
  EXPECT_FALSE(c.pct.enabled);

  const Options replay =
      parse_args({"--pct-seed", "7", "--explore-depth", "3", "--pct-steps", "41"});
  EXPECT_TRUE(replay.run.pct.enabled);
  const RunConfig r = replay.config();
  EXPECT_TRUE(r.pct.enabled);
  EXPECT_EQ(r.pct.seed, 7u);
  EXPECT_EQ(r.pct.depth, 3);
  EXPECT_EQ(r.pct.steps, 41);
  EXPECT_FALSE(r.deterministic);
}

TEST(ParseErrors, ScheduleFlagCombinations) {
  EXPECT_EQ(
      usage_error({"--explore", "10", "--schedule-seed", "3"}),
      "--schedule-seed, --explore, --pct-seed, --replay-schedule and --verify each choose the "
      "schedule; give one");
  EXPECT_EQ(
      usage_error({"--explore", "10", "--pct-seed", "3"}),
      "--schedule-seed, --explore, --pct-seed, --replay-schedule and --verify each choose the "
      "schedule; give one");
  EXPECT_EQ(
      usage_error({"--verify", "--explore", "3"}),
      "--schedule-seed, --explore, --pct-seed, --replay-schedule and --verify each choose the "
      "schedule; give one");
  EXPECT_EQ(
      usage_error({"--verify", "--replay-schedule", "0,1"}),
      "--schedule-seed, --explore, --pct-seed, --replay-schedule and --verify each choose the "
      "schedule; give one");
  EXPECT_EQ(usage_error({"--verify-budget", "10"}),
            "--verify-budget: only meaningful with --verify");
  EXPECT_EQ(usage_error({"--float-adds-commute"}),
            "--float-adds-commute: only meaningful with --verify");
  EXPECT_EQ(usage_error({"--verify", "--verify-budget", "0"}),
            "--verify-budget: must be at least 1, got 0\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--pct-steps", "10"}), "--pct-steps: only meaningful with --pct-seed");
  EXPECT_EQ(usage_error({"--explore-depth", "2"}),
            "--explore-depth: only meaningful with --explore or --pct-seed");
  EXPECT_EQ(usage_error({"--explore", "0"}),
            "--explore: must be at least 1, got 0\nrun with --help for usage");
  EXPECT_EQ(usage_error({"--preempt-budget", "0"}),
            "--preempt-budget: must be at least 1, got 0\nrun with --help for usage");
}

TEST(Parse, FixedOnlyForPitfalls) {
  ExampleSpec pitfall = kStep3;
  pitfall.has_fixed = true;
  EXPECT_TRUE(parse_args({"--fixed"}, pitfall).fixed);
  EXPECT_FALSE(parse_args({}, pitfall).fixed);
  EXPECT_EQ(usage_error({"--fixed"}, kStep3),
            "The following argument was not expected: --fixed\nrun with --help for usage");
}

// The body fails on PCT seed 3: exploration stops there and prints the
// command that replays that schedule, with the calibrated step count.
TEST(Explore, StopsAtTheFirstFailingScheduleAndPrintsTheReplay) {
  std::vector<std::uint64_t> seeds;
  std::vector<int> depths;
  const RunResult r =
      run({"-d", "0,1,2", "--explore", "5", "--check-races"}, [&](const Options& o) {
        seeds.push_back(o.run.pct.seed);
        depths.push_back(o.run.pct.depth);
        EXPECT_TRUE(o.run.pct.enabled);
        EXPECT_TRUE(o.quiet);
        EXPECT_TRUE(o.config().check_races);
        if (o.run.pct.seed == 0) {  // the calibration run records its step count
          RunStats stats;
          stats.schedule_steps = 41;
          return report({true}, o, stats);
        }
        EXPECT_EQ(o.run.pct.steps, 41);
        if (o.run.pct.seed == 3) throw RaceError("race report: (the report)");
        return report({true}, o, RunStats{});
      });
  EXPECT_EQ(seeds, (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(depths, (std::vector<int>{1, 3, 3, 3}));
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "race report: (the report)\n"
            "explore: schedule 3 of 5 (PCT seed 3, depth 3, 41 steps) failed; replay it with:\n"
            "  example -d 0,1,2 --check-races --pct-seed 3 --explore-depth 3 --pct-steps 41\n");
}

TEST(Explore, AllSchedulesPassPrintsOkOnce) {
  int runs = 0;
  const RunResult r = run({"--explore=4", "--explore-depth=2"}, [&](const Options& o) {
    ++runs;
    return report({true}, o, RunStats{});
  });
  EXPECT_EQ(runs, 5);  // calibration + 4
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "OK\n");
  EXPECT_EQ(r.err, "");
}

TEST(Explore, GoldenMismatchIsAFailure) {
  const RunResult r = run({"--explore", "3", "--mode", "get"}, [](const Options& o) {
    return o.run.pct.seed == 2 ? 1 : report({true}, o, RunStats{});
  });
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "explore: schedule 2 of 3 (PCT seed 2, depth 3, 0 steps) failed; replay it with:\n"
            "  example --mode get --pct-seed 2 --explore-depth 3 --pct-steps 0\n");
}

// ---- flags take effect without the body's help (issue 22) --------------------------

// Step 07 in put mode on x = arange, reported as the README's program does:
// report(checks), no stats handed over; `own` compiles with a RunConfig of
// its own instead of opt.config().
int step07_body(const Options& opt, bool own) {
  const std::int64_t P = opt.world_size();
  HostTensor x = HostTensor::arange({P, 1, anyp_test::kStep07Size}, pl::FP32);
  HostTensor y = HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  const RunConfig config = own ? RunConfig::for_world_size(P) : opt.config();
  anyp_test::ring_put().compile({x, y}, config)(x, y);
  return report({y.at({1, 0, 0}) == x.at({0, 0, 0})});
}

TEST(RunListener, CostIsPrintedWhenTheBodyReportsWithoutStats) {
  const RunResult r =
      run({"-d", "0,1,2", "--cost"}, [](const Options& o) { return step07_body(o, false); });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.rfind("OK\ncost card (P=3)\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\nmemory (this process, planned before the run): "), std::string::npos)
      << r.out;
}

TEST(RunListener, ExplorePrintsOkOnceWhenTheBodyReportsWithoutStats) {
  const RunResult r = run({"-d", "0,1,2", "--explore", "10"},
                          [](const Options& o) { return step07_body(o, false); });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
}

TEST(RunListener, AFlagTheProgramsOwnConfigWouldIgnoreIsRefused) {
  const std::string why =
      ": the program ran with a RunConfig of its own, not the command line's, so the flag would "
      "not take effect; compile with opt.config() (anyp::cli::Options::config()), or start from "
      "it and change only what the flags do not set\n";
  for (const auto& [flag, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"--check-races", {"-d", "0,1", "--check-races"}},
           {"--cost", {"-d", "0,1", "--cost"}},
           {"--timeline", {"-d", "0,1", "--timeline"}},
           {"--explore", {"-d", "0,1", "--explore", "3"}},
           {"--pct-seed", {"-d", "0,1", "--pct-seed", "3"}},
           {"--workers", {"-d", "0,1", "--workers", "1"}},
           {"--memory-limit", {"-d", "0,1", "--memory-limit", "1GiB"}}}) {
    const RunResult r = run(args, [](const Options& o) { return step07_body(o, true); });
    EXPECT_EQ(r.rc, 2) << flag;
    EXPECT_EQ(r.err, flag + why) << flag;
    EXPECT_EQ(r.out, "") << flag;
  }
  // Without such a flag the program's own config is its business.
  const RunResult r = run({"-d", "0,1"}, [](const Options& o) { return step07_body(o, true); });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
}

// A program whose own RunConfig turns on what no flag asked for (the
// timeline, the race checker, one worker, other devices) runs as it says,
// with no flag given: nothing is refused (issue 51's defect).
TEST(RunListener, AProgramsOwnSettingsNoFlagAskedForAreNotRefused) {
  const RunResult r = run({}, [](const Options& o) {
    const std::int64_t P = 3;
    HostTensor x = HostTensor::arange({P, 1, anyp_test::kStep07Size}, pl::FP32);
    HostTensor y = HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
    RunConfig config = RunConfig::for_world_size(P);
    config.timeline = true;
    config.check_races = true;
    config.workers = 1;
    anyp_test::ring_put().compile({x, y}, config)(x, y);
    return report({y.at({1, 0, 0}) == x.at({0, 0, 0})}, o, RunStats{});
  });
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");
  EXPECT_EQ(r.err, "");
}

TEST(RunListener, CostWithoutAnyRunIsRefused) {
  const RunResult r = run({"-d", "0,1", "--cost"}, [](const Options&) { return report({true}); });
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "--cost: the program reported its outcome, but no anyp run finished (no "
            "CompiledProgram or Session run), so there is no run to print\n");
}

// ---- the trace's size ----------------------------------------------------------

// A trace larger than the limit is refused before anything is written, with
// its estimated size (230 B per slice, 100 B per flow end) and what it
// holds; under the limit the same timeline is written, streamed, as JSON a
// viewer reads.
TEST(Trace, ATraceAboveTheLimitIsRefusedAndNothingWritten) {
  Timeline t;
  t.model = "test";
  t.ranks.resize(2);
  t.ops.resize(10);
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    t.ops[i].rank = static_cast<std::int64_t>(i % 2);
    t.ops[i].start_ns = static_cast<double>(i / 2) * 100;
    t.ops[i].end_ns = t.ops[i].start_ns + 100;
  }
  t.flows = {{0, 3}, {2, 5}, {4, 7}};
  t.names = {""};
  const auto path = std::filesystem::temp_directory_path() /
                    ("anyp_trace_limit_" + std::to_string(::getpid()) + ".json");
  std::filesystem::remove(path);
  try {
    write_chrome_trace(t, path.string(), 1000);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "--trace: the trace would be about 2.8 KiB (10 ops of 2 ranks, 3 notify -> wait "
                 "arrows), more than the 1000 B a trace viewer is given; nothing was written. "
                 "Trace a smaller P, or use --timeline (per-rank figures and the critical path)");
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  write_chrome_trace(t, path.string(), 2900);  // 10 x 230 + 6 x 100: at the limit
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::size_t slices = 0, flow_ends = 0;
  for (const nlohmann::json& e : trace["traceEvents"]) {
    slices += e["ph"] == "X";
    flow_ends += e["ph"] == "s" || e["ph"] == "f";
  }
  EXPECT_EQ(slices, 10u);
  EXPECT_EQ(flow_ends, 6u);
  EXPECT_EQ(trace["otherData"]["model"], "test");
  std::filesystem::remove(path);
}

// --verbose's line about the run: its wall time in ms (three decimals), the
// workers it had (singular for one) and its counts.
TEST(Verbose, TheRunLineGivesTheWallTimeTheWorkersAndTheCounts) {
  RunStats stats;
  stats.run_seconds = 0.0004044;
  stats.workers = 2;
  stats.instructions = 1775;
  stats.parks = 7;
  EXPECT_EQ(run_measurement_text(stats),
            "the run: 0.404 ms wall on 2 workers, 1775 VM instructions, 7 parks, 0 preemptions");
  stats.workers = 1;
  stats.run_seconds = 1.5;
  stats.preemptions = 3;
  EXPECT_EQ(run_measurement_text(stats),
            "the run: 1500.000 ms wall on 1 worker, 1775 VM instructions, 7 parks, 3 preemptions");
}

}  // namespace
}  // namespace anyp::cli
