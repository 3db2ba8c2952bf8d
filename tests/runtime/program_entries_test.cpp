// program_entries_test.cpp — pl::Program: orchestration functions as entry
// points, no host written by the user (issue 12, item 6; PyPTO's
// test_l2_multi_orch): two entries compiled and run from one program at
// P = 1 (PyPTO's) and at P = 3, 4; a tensor parameter takes a [P, ...] host
// tensor, row r for rank r; a scalar is shared; a window parameter gets a
// buffer of its own (an allreduce through one); and the errors: an unknown
// entry (naming the entries), an incore function as an entry, an entry
// given twice.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

namespace {

constexpr std::int64_t N = 16;

pl::Function binary_entry(const std::string& name, bool multiply) {
  const auto kernel = pl::jit::incore(
      name + "_kernel",
      {pl::In("a", pl::Tensor({1, N}, pl::FP32)), pl::In("b", pl::Tensor({1, N}, pl::FP32)),
       pl::Out("f", pl::Tensor({1, N}, pl::FP32)), pl::In("scale", pl::FP32)},
      [multiply](pl::Value a, pl::Value b, pl::Value f, pl::Scalar scale) {
        const pl::Tile x = pl::load(a, {0, 0}, {1, N}), y = pl::load(b, {0, 0}, {1, N});
        f = pl::store(pl::mul(multiply ? pl::mul(x, y) : pl::add(x, y), scale), {0, 0}, f);
      });
  return pl::jit::orchestration_for(name, kernel);
}

const pl::Function orch_add = binary_entry("chip_orch_add", false);
const pl::Function orch_mul = binary_entry("chip_orch_mul", true);
const pl::Function orch_sum = pl::jit::orchestration_for(
    "chip_orch_sum",
    pl::jit::incore(
        "sum_kernel",
        {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
         pl::InOut("data", pld::DistributedTensor({1, N}, pl::FP32)),
         pl::InOut("signal", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
        [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
          data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
          data = pld::tensor::allreduce(data, signal);
          y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
        }));

const pl::Program chip("chip", {orch_add, orch_mul, orch_sum});

class ProgramEntries : public testing::TestWithParam<std::int64_t> {};

TEST_P(ProgramEntries, EachEntryCompilesAndRunsOnEveryRank) {
  const std::int64_t P = GetParam();
  EXPECT_EQ(chip.entry_names(),
            (std::vector<std::string>{"chip_orch_add", "chip_orch_mul", "chip_orch_sum"}));
  anyp::InputGenerator gen(61);
  const anyp::HostTensor a = gen.uniform({P, 1, N}), b = gen.uniform({P, 1, N});
  anyp::HostTensor f = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
  const anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  chip.compile("chip_orch_add", {a, b, f, 2.0}, config)(a, b, f, 2.0);
  for (std::int64_t i = 0; i < f.numel(); ++i)
    ASSERT_EQ(f.get(i), static_cast<double>(
                            (static_cast<float>(a.get(i)) + static_cast<float>(b.get(i))) * 2.0f))
        << i;
  chip.compile("chip_orch_mul", {a, b, f, 0.5}, config)(a, b, f, 0.5);
  for (std::int64_t i = 0; i < f.numel(); ++i)
    ASSERT_EQ(f.get(i), static_cast<double>(static_cast<float>(a.get(i)) *
                                            static_cast<float>(b.get(i)) * 0.5f))
        << i;
  // A window parameter gets its own buffer: the allreduce sums over ranks.
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
  const anyp::CompiledProgram sum = chip.compile("chip_orch_sum", {a, y}, config);
  EXPECT_NE(sum.window_layout().find("  data: offset 0, slot 64 B, used 64 B"), std::string::npos)
      << sum.window_layout();
  sum(a, y);
  for (std::int64_t j = 0; j < N; ++j) {
    float total = 0;
    for (std::int64_t r = 0; r < P; ++r) total += static_cast<float>(a.at({r, 0, j}));
    for (std::int64_t r = 0; r < P; ++r) ASSERT_EQ(y.at({r, 0, j}), static_cast<double>(total));
  }
}

INSTANTIATE_TEST_SUITE_P(P, ProgramEntries, testing::Values(1, 3, 4));

std::string error_of(const std::function<void()>& f) {
  try {
    f();
    return "no error";
  } catch (const anyp::CompileError& e) {
    return e.what();
  }
}

TEST(ProgramEntriesErrors, AnUnknownEntryIsNamedWithTheEntries) {
  EXPECT_EQ(error_of([] { chip.entry("chip_orch_div"); }),
            "compile error: program 'chip' has no entry 'chip_orch_div'; its entries: "
            "chip_orch_add, chip_orch_mul, chip_orch_sum");
}

TEST(ProgramEntriesErrors, AnIncoreFunctionIsNotAnEntry) {
  const pl::Function kernel = pl::jit::incore(
      "lonely_kernel", {pl::InOut("y", pl::Tensor({1, N}, pl::FP32))}, [](pl::Value) {});
  EXPECT_EQ(error_of([&] { pl::Program("bad", {kernel}); }),
            "compile error: program 'bad': entry 'lonely_kernel' is an incore function; a "
            "program's entries are orchestration functions");
  EXPECT_EQ(error_of([] {
              pl::Program("twice", {orch_add, orch_add});
            }),
            "compile error: program 'twice': entry 'chip_orch_add' is given twice");
  EXPECT_EQ(error_of([] { pl::Program("empty", {}); }),
            "compile error: program 'empty' has no entries");
}

}  // namespace
