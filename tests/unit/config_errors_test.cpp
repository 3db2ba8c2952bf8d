// config_errors_test.cpp — RunConfig validation at compile(): platforms (the
// simulators are accepted, real Ascend hardware and unknown names are
// refused), device lists (non-empty, non-negative, distinct), engines; and
// the runtime's acceptance of P = 1 (docs/api.md §16: only the examples insist
// on P >= 2). Every refusal is an anyp::ConfigError whose whole what() is
// checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <anyp/engines.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

// Each rank adds its rank to x[r] through a window: y[r] = x[r] + r.
const auto add_rank = pl::jit::incore(
    "add_rank",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))},
    [](pl::Value x, pl::Value y, pl::Value data) {
      pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
      y = pl::store(pl::add(pl::load(data, {0, 0}, {1, SIZE}), pl::cast(r, pl::FP32)), {0, 0}, y);
    });

const auto per_rank = pl::jit::orchestration(
    "per_rank",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))},
    [](pl::Value x, pl::Value y, pl::Value data) { add_rank(x, y, data); });

const pl::HostFunction program =
    pl::jit::host("program",
                  {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      pl::Value xr = x[r];
                      pl::Value yr = y[r];
                      per_rank(xr, yr, pld::window(data_buf, {1, SIZE}, pl::FP32), pl::device(r));
                    });
                  });

anyp::RunConfig with_devices(std::vector<std::int64_t> ids) {
  anyp::RunConfig config;
  config.distributed.device_ids = std::move(ids);
  return config;
}

anyp::RunConfig with_platform(std::string platform) {
  anyp::RunConfig config;
  config.platform = std::move(platform);
  return config;
}

// Compiles the program for 2 ranks' worth of arguments; returns the
// ConfigError's what(), or what happened instead.
std::string config_error(const anyp::RunConfig& config) {
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  try {
    program.compile({x, y}, config);
  } catch (const anyp::ConfigError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return "compiled without error";
}

TEST(ConfigErrors, SimulatedPlatformsAreAccepted) {
  EXPECT_EQ(config_error(anyp::RunConfig{}), "compiled without error");
  EXPECT_EQ(config_error(with_platform("a2a3sim")), "compiled without error");
  EXPECT_EQ(config_error(with_platform("a5sim")), "compiled without error");
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  EXPECT_EQ(program.compile({x, y}, with_platform("a5sim")).platform(), "a5sim");
  EXPECT_EQ(program.compile({x, y}, anyp::RunConfig{}).platform(), "a2a3sim");
}

TEST(ConfigErrors, RealHardwarePlatformA2a3) {
  EXPECT_EQ(config_error(with_platform("a2a3")),
            "platform 'a2a3' is real Ascend hardware, which anyp does not drive; supported "
            "platforms: a2a3sim, a5sim");
}

TEST(ConfigErrors, RealHardwarePlatformA5) {
  EXPECT_EQ(config_error(with_platform("a5")),
            "platform 'a5' is real Ascend hardware, which anyp does not drive; supported "
            "platforms: a2a3sim, a5sim");
}

TEST(ConfigErrors, UnknownPlatform) {
  EXPECT_EQ(config_error(with_platform("foo")),
            "unknown platform 'foo'; supported platforms: a2a3sim, a5sim");
  EXPECT_EQ(config_error(with_platform("")),
            "unknown platform ''; supported platforms: a2a3sim, a5sim");
}

TEST(ConfigErrors, EmptyDeviceList) {
  EXPECT_EQ(config_error(with_devices({})),
            "the device list is empty: give at least one device id");
}

TEST(ConfigErrors, NegativeDeviceId) {
  EXPECT_EQ(config_error(with_devices({0, -1})), "device id -1 is negative");
  EXPECT_EQ(config_error(with_devices({-7})), "device id -7 is negative");
}

TEST(ConfigErrors, DuplicateDeviceId) {
  EXPECT_EQ(config_error(with_devices({0, 1, 1})), "device 1 is listed twice");
  EXPECT_EQ(config_error(with_devices({3, 0, 3})), "device 3 is listed twice");
  // The first repeat in list order, not the smallest repeated id.
  EXPECT_EQ(config_error(with_devices({5, 3, 5, 3})), "device 5 is listed twice");
  EXPECT_EQ(config_error(with_devices({0, 1, 2, 2})), "device 2 is listed twice");
}

std::string engines_text() {
  std::string names;
  for (const auto& e : anyp::available_engines()) names += (names.empty() ? "" : ", ") + e;
  return names;
}

bool have_mpi() {
  const auto engines = anyp::available_engines();
  return std::find(engines.begin(), engines.end(), "mpi") != engines.end();
}

TEST(ConfigErrors, MpiEngineNotInThisBuild) {
  if (have_mpi()) GTEST_SKIP() << "this build has the MPI engine";
  anyp::RunConfig config;
  config.engine = "mpi";
  EXPECT_EQ(config_error(config),
            "engine 'mpi' is not in this build: Open MPI was not found when it was configured "
            "(install libopenmpi-dev and openmpi-bin, e.g. with scripts/setup.sh, and configure "
            "again); engines in this build: threads");
}

TEST(ConfigErrors, UnknownEngine) {
  anyp::RunConfig config;
  config.engine = "fibers";
  EXPECT_EQ(config_error(config),
            "engine 'fibers' is not available; supported engines: " + engines_text());
}

// Options that need every rank in one process are refused on the MPI engine.
TEST(ConfigErrors, MpiEngineRefusesThreadsOnlyOptions) {
  if (!have_mpi()) GTEST_SKIP() << "this build has no MPI engine";
  anyp::RunConfig config;
  config.engine = "mpi";
  config.check_races = true;
  EXPECT_EQ(config_error(config),
            "check_races: the race checker needs every rank in one process (engine 'threads'); "
            "engine 'mpi' runs one rank per process: check the program on the threads engine, "
            "then run it here");
  config.check_races = false;
  config.deterministic = true;
  EXPECT_EQ(config_error(config),
            "deterministic, pct and replayed schedules pick which rank runs next, on engine "
            "'threads' only; engine 'mpi' runs one rank per process: the operating system "
            "schedules them");
  config.deterministic = false;
  config.pct.enabled = true;
  EXPECT_EQ(config_error(config),
            "deterministic, pct and replayed schedules pick which rank runs next, on engine "
            "'threads' only; engine 'mpi' runs one rank per process: the operating system "
            "schedules them");
  config.pct.enabled = false;
  config.replay_schedule = "0,1";
  EXPECT_EQ(config_error(config),
            "deterministic, pct and replayed schedules pick which rank runs next, on engine "
            "'threads' only; engine 'mpi' runs one rank per process: the operating system "
            "schedules them");
  config.replay_schedule = "";
  config.workers = 2;
  EXPECT_EQ(config_error(config),
            "workers: engine 'mpi' runs one rank per process: no worker pool to size");
}

TEST(ConfigErrors, TimelineDetailIsOneOfItsNames) {
  anyp::RunConfig config;
  config.timeline_detail = "all";
  EXPECT_EQ(config_error(config), "timeline_detail must be ops, path or figures, got 'all'");
  for (const char* detail : anyp::kTimelineDetails) {
    config.timeline_detail = detail;
    EXPECT_EQ(config_error(config), "compiled without error") << detail;
  }
}

TEST(ConfigErrors, PreemptBudgetMustBePositive) {
  anyp::RunConfig config;
  config.preempt_budget = 0;
  EXPECT_EQ(config_error(config), "preempt_budget must be positive, got 0");
  config.preempt_budget = -5;
  EXPECT_EQ(config_error(config), "preempt_budget must be positive, got -5");
  config.preempt_budget = 1;
  EXPECT_EQ(config_error(config), "compiled without error");
}

TEST(ConfigErrors, WorkersMustNotBeNegative) {
  anyp::RunConfig config;
  config.workers = -1;
  EXPECT_EQ(config_error(config), "workers must be 0 (automatic) or positive, got -1");
  config.workers = 0;
  EXPECT_EQ(config_error(config), "compiled without error");
}

// The configuration is checked before the program: a bad platform is
// reported even when the arguments do not fit the program.
TEST(ConfigErrors, ConfigIsCheckedBeforeTheProgram) {
  anyp::HostTensor x = anyp::HostTensor::zeros({5}, pl::INT8);
  try {
    program.compile({x}, with_platform("a5"));
    FAIL() << "no exception";
  } catch (const anyp::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "platform 'a5' is real Ascend hardware, which anyp does not drive; supported "
              "platforms: a2a3sim, a5sim");
  }
}

// ConfigError is an anyp::Error, distinct from CompileError.
TEST(ConfigErrors, ConfigErrorIsAnAnypError) {
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, SIZE}, pl::FP32);
  EXPECT_THROW(program.compile({x, y}, with_devices({})), anyp::Error);
  try {
    program.compile({x, y}, with_devices({}));
  } catch (const anyp::CompileError&) {
    ADD_FAILURE() << "a ConfigError must not be a CompileError";
  } catch (const anyp::ConfigError&) {
  }
}

// The runtime accepts P = 1; only the examples require P >= 2.
TEST(ConfigErrors, OneRankProgramRuns) {
  anyp::InputGenerator gen(3);
  anyp::HostTensor x = gen.uniform({1, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({1, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = program.compile({x, y}, with_devices({5}));
  EXPECT_EQ(compiled.world_size(), 1);
  compiled(x, y);
  EXPECT_TRUE(anyp::equal_exact(x, y));  // y[0] = x[0] + 0
}

// Device ids need not be 0..P-1: rank r runs on device_ids[r].
TEST(ConfigErrors, AnyDistinctNonNegativeIdsAreAccepted) {
  anyp::InputGenerator gen(3);
  anyp::HostTensor x = gen.uniform({3, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({3, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = program.compile({x, y}, with_devices({9, 0, 4}));
  EXPECT_EQ(compiled.world_size(), 3);
  compiled(x, y);
  for (std::int64_t r = 0; r < 3; ++r) {
    for (std::int64_t j = 0; j < SIZE; ++j) {
      ASSERT_EQ(y.at({r, 0, j}), static_cast<float>(x.at({r, 0, j}) + static_cast<double>(r)))
          << "r=" << r << " j=" << j;
    }
  }
}

}  // namespace
