// task_records_test.cpp — PyPTO's DFX records (RunConfig::enable_dep_gen,
// enable_scope_stats, enable_chip_swimlane): per rank and dispatch, the
// tasks of an orchestration function in order, each with the earlier tasks
// whose bytes conflict with its own (read after write, write after write,
// write after read), the dispatch's totals and each task's span, under
// <output_dir>/dfx_outputs/rank<r>/d<k>/; nothing is written without a
// switch, and a switch without output_dir is a ConfigError.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t C = 16;

// One kernel per task: out = in * scale (+ shift).
pl::Function scaled(const std::string& name, double scale) {
  return pl::jit::incore(
      name,
      {pl::In("in", pl::Tensor({1, C}, pl::FP32)), pl::Out("out", pl::Tensor({1, C}, pl::FP32))},
      [scale](pl::Value in, pl::Value out) {
        out = pl::store(pl::mul(pl::load(in, {0, 0}, {1, C}), scale), {0, 0}, out);
      });
}

// Per rank: produce a = 2x; consume b = 3a (reads a); other c = 5x (no
// conflict); overwrite a = 7x (writes what produce wrote and consume read).
pl::HostFunction program(int dispatches) {
  const auto produce = scaled("produce", 2), consume = scaled("consume", 3),
             other = scaled("other", 5), overwrite = scaled("overwrite", 7);
  const std::vector<pl::Param> row = {
      pl::In("x", pl::Tensor({1, C}, pl::FP32)), pl::Out("a", pl::Tensor({1, C}, pl::FP32)),
      pl::Out("b", pl::Tensor({1, C}, pl::FP32)), pl::Out("c", pl::Tensor({1, C}, pl::FP32))};
  const auto per_rank = pl::jit::orchestration(
      "four_tasks", row, [=](pl::Value x, pl::Value a, pl::Value b, pl::Value c) {
        produce(x, a);
        consume(a, b);
        other(x, c);
        overwrite(x, a);
      });
  return pl::jit::host("task_records",
                       {pl::In("x", pl::Tensor({NR, 1, C}, pl::FP32)),
                        pl::Out("a", pl::Tensor({NR, 1, C}, pl::FP32)),
                        pl::Out("b", pl::Tensor({NR, 1, C}, pl::FP32)),
                        pl::Out("c", pl::Tensor({NR, 1, C}, pl::FP32))},
                       [=](pl::Value x, pl::Value a, pl::Value b, pl::Value c) {
                         for (int k = 0; k < dispatches; ++k) {
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             per_rank(x[r], a[r], b[r], c[r], pl::device(r));
                           });
                         }
                       });
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every match of `pattern`'s first group, in order.
std::vector<std::string> all_of(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back((*it)[1].str());
  return out;
}

class TaskRecords : public testing::TestWithParam<std::int64_t> {
 protected:
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() /
                               ("anyp_task_records_" + std::to_string(GetParam()) + "_" +
                                testing::UnitTest::GetInstance()->current_test_info()->name());
  void SetUp() override { std::filesystem::remove_all(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void run(anyp::RunConfig config, int dispatches = 2) {
    const std::int64_t P = GetParam();
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, C}, pl::FP32);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i % 97) - 40.0);
    anyp::HostTensor a = anyp::HostTensor::zeros({P, 1, C}, pl::FP32);
    anyp::HostTensor b = anyp::HostTensor::zeros({P, 1, C}, pl::FP32);
    anyp::HostTensor c = anyp::HostTensor::zeros({P, 1, C}, pl::FP32);
    config.distributed.device_ids = anyp::RunConfig::for_world_size(P).distributed.device_ids;
    program(dispatches).compile({x, a, b, c}, config)(x, a, b, c);
    for (std::int64_t i = 0; i < x.numel(); ++i) {  // the records change no result
      ASSERT_EQ(a.get(i), 7 * x.get(i));
      ASSERT_EQ(b.get(i), 6 * x.get(i));
      ASSERT_EQ(c.get(i), 5 * x.get(i));
    }
  }
  std::filesystem::path at(std::int64_t rank, int dispatch) const {
    return dir_ / "dfx_outputs" / ("rank" + std::to_string(rank)) /
           ("d" + std::to_string(dispatch));
  }
};

TEST_P(TaskRecords, EachDispatchListsItsTasksAndTheirDependencies) {
  anyp::RunConfig config;
  config.output_dir = dir_.string();
  config.enable_dep_gen = true;
  run(config);
  const std::int64_t row_bytes = C * 4;
  for (std::int64_t r = 0; r < GetParam(); ++r) {
    for (int k = 0; k < 2; ++k) {
      const std::string deps = read_file(at(r, k) / "deps.json");
      ASSERT_NE(deps.find("{\"rank\": " + std::to_string(r) + ", \"dispatch\": " +
                          std::to_string(k) + ", \"function\": \"four_tasks\""),
                std::string::npos)
          << deps;
      EXPECT_EQ(all_of(deps, "\"function\": \"(\\w+)\", \"called_at\""),
                (std::vector<std::string>{"produce", "consume", "other", "overwrite"}));
      EXPECT_EQ(all_of(deps, "\"deps\": (\\[[0-9, ]*\\])"),
                (std::vector<std::string>{"[]", "[0]", "[]", "[0, 1]"}))
          << deps;
      // produce reads row r of x and writes row r of a.
      const std::string first = std::to_string(r * row_bytes),
                        end = std::to_string((r + 1) * row_bytes);
      EXPECT_NE(deps.find("\"reads\": [{\"memory\": \"host tensor 'x'\", \"bytes\": [" + first +
                          ", " + end +
                          "]}], \"writes\": [{\"memory\": \"host tensor 'a'\", "
                          "\"bytes\": [" +
                          first + ", " + end + "]}]"),
                std::string::npos)
          << deps;
      EXPECT_FALSE(std::filesystem::exists(at(r, k) / "scope_stats"));
      EXPECT_FALSE(std::filesystem::exists(at(r, k) / "chip_swimlane_records.json"));
    }
    EXPECT_FALSE(std::filesystem::exists(at(r, 2)));
  }
}

TEST_P(TaskRecords, ScopeStatsAndSwimlaneRecordsPerDispatch) {
  anyp::RunConfig config;
  config.output_dir = dir_.string();
  config.enable_scope_stats = true;
  config.enable_chip_swimlane = true;  // writes deps.json too, as on PyPTO
  run(config);
  for (std::int64_t r = 0; r < GetParam(); ++r) {
    for (int k = 0; k < 2; ++k) {
      const std::string stats = read_file(at(r, k) / "scope_stats" / "scope_stats.jsonl");
      EXPECT_NE(stats.find("\"scope\": \"dispatch\", \"tasks\": 4, \"dependencies\": 3, "),
                std::string::npos)
          << stats;
      EXPECT_EQ(std::count(stats.begin(), stats.end(), '\n'), 1);
      const std::string lanes = read_file(at(r, k) / "chip_swimlane_records.json");
      const auto starts = all_of(lanes, "\"start_ns\": (\\d+)");
      const auto ends = all_of(lanes, "\"end_ns\": (\\d+)");
      ASSERT_EQ(starts.size(), 4u) << lanes;
      ASSERT_EQ(ends.size(), 4u);
      for (std::size_t t = 0; t < 4; ++t) {
        EXPECT_LE(std::stoll(starts[t]), std::stoll(ends[t]));
        if (t > 0) {
          EXPECT_LE(std::stoll(ends[t - 1]), std::stoll(starts[t]));  // in order
        }
      }
      EXPECT_TRUE(std::filesystem::exists(at(r, k) / "deps.json"));
    }
  }
}

TEST_P(TaskRecords, NoSwitchWritesNothing) {
  anyp::RunConfig config;
  config.output_dir = dir_.string();
  run(config, 1);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "dfx_outputs"));
}

INSTANTIATE_TEST_SUITE_P(P, TaskRecords, testing::Values(1, 2, 3, 8));

TEST(TaskRecordMistakes, ASwitchWithoutOutputDirIsAConfigError) {
  for (const auto& [field, set] : std::vector<std::pair<std::string, bool anyp::RunConfig::*>>{
           {"enable_dep_gen", &anyp::RunConfig::enable_dep_gen},
           {"enable_scope_stats", &anyp::RunConfig::enable_scope_stats},
           {"enable_chip_swimlane", &anyp::RunConfig::enable_chip_swimlane}}) {
    anyp::RunConfig config;
    config.*set = true;
    anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, C}, pl::FP32);
    anyp::HostTensor a = anyp::HostTensor::zeros({2, 1, C}, pl::FP32);
    anyp::HostTensor b = anyp::HostTensor::zeros({2, 1, C}, pl::FP32);
    anyp::HostTensor c = anyp::HostTensor::zeros({2, 1, C}, pl::FP32);
    try {
      program(1).compile({x, a, b, c}, config);
      ADD_FAILURE() << field << ": compiled";
    } catch (const anyp::ConfigError& e) {
      EXPECT_EQ(std::string(e.what()),
                field +
                    " writes its records under output_dir "
                    "(<output_dir>/dfx_outputs/rank<r>/d<k>/), which is empty: set output_dir");
    }
  }
}

}  // namespace
