// multi_block_errors_test.cpp — multi-block launches (pl::blocks, issue 12
// item 3) as the compiler sees them: the IR text of a launch and of the
// block queries, the lowered code (block.launch before the kernel body,
// block.end after it) and the window layout's launch cells; and every
// mistake, with its exact message: a block count out of [1, 256] or known
// only at run time, pl::blocks on a host dispatch, pl::blocks before the
// last argument, a builtin collective in a multi-block kernel, and the
// block queries outside an incore kernel.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t S = 16;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {pl::InOut("y", pl::Tensor({1, S}, pl::INT32))};

// y[0, b] = n for each block b of a launch over n blocks.
const pl::Function tag_blocks = pl::jit::incore("tag_blocks", kParams, [](pl::Value y) {
  const pl::Scalar b = pl::get_block_idx();
  const pl::Scalar n = pl::get_block_num();
  pl::write(y, {0, b}, n);
});

pl::HostFunction program(const pl::Function& per_rank) {
  return pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::INT32))}, [per_rank](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(y[r], pl::device(r)); });
      });
}

std::string compile_error(const pl::HostFunction& host, std::int64_t P = 2) {
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::INT32);
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(P));
    return "compiled without error";
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  }
}

TEST(MultiBlockIr, TheLaunchAndTheBlockQueries) {
  const pl::Function launch = pl::jit::orchestration_for("launch", tag_blocks, pl::blocks(4));
  const std::string ir = launch.ir_text();
  EXPECT_NE(ir.find("call @tag_blocks(%y) blocks=4"), std::string::npos) << ir;
  EXPECT_EQ(tag_blocks.ir_text(),
            "incore tag_blocks(%y: Tensor[1, 16] INT32 inout) {\n"
            "  %1 = pl.get_block_idx : Scalar INT32\n"
            "  %2 = pl.get_block_num : Scalar INT32\n"
            "  pl.write %y[0, %1] = %2\n"
            "}\n");
}

TEST(MultiBlockIr, TheLoweredCodeLaunchesBeforeTheBodyAndJoinsAfterIt) {
  const pl::Function launch = pl::jit::orchestration_for("launch", tag_blocks, pl::blocks(3));
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 1, S}, pl::INT32);
  const anyp::CompiledProgram compiled =
      program(launch).compile({y}, anyp::RunConfig::for_world_size(2));
  const std::string code = compiled.lowered_code();
  const std::size_t at_launch = code.find("block.launch imm=3");
  const std::size_t at_idx = code.find("block.idx dst=");
  const std::size_t at_write = code.find("write a=");
  const std::size_t at_end = code.find("block.end imm=3");
  ASSERT_NE(at_launch, std::string::npos) << code;
  ASSERT_NE(at_end, std::string::npos) << code;
  EXPECT_LT(at_launch, at_idx) << code;
  EXPECT_LT(at_idx, at_write) << code;
  EXPECT_LT(at_write, at_end) << code;
  // The launch cells: one INT32 per block (cell 0 counts the joined blocks).
  EXPECT_NE(
      compiled.window_layout().find("(block launches): offset 0, slot 32 B, used 12 B, signal"),
      std::string::npos)
      << compiled.window_layout();
}

TEST(MultiBlockErrors, ABlockCountOutOfRange) {
  for (std::int64_t n : {0, 257}) {
    const pl::Function launch = pl::jit::orchestration_for("launch", tag_blocks, pl::blocks(n));
    EXPECT_EQ(compile_error(program(launch)),
              "compile error: function 'launch' (orchestration), op call @tag_blocks: pl::blocks(" +
                  std::to_string(n) + "): a launch has 1 to 256 blocks");
  }
}

TEST(MultiBlockErrors, ABlockCountKnownOnlyAtRunTime) {
  const pl::Function launch = pl::jit::orchestration("launch", kParams, [](pl::Value y) {
    const pl::Scalar n = pl::read(y, {0, 0});
    tag_blocks(y, pl::blocks(n));
  });
  const std::string error = compile_error(program(launch));
  EXPECT_NE(error.find("call of 'tag_blocks': the block count of pl::blocks(n) must be an integer "
                       "or a Dim expression, known when the program is compiled (got a traced "
                       "scalar)"),
            std::string::npos)
      << error;
}

TEST(MultiBlockErrors, BlocksOnAHostDispatch) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", tag_blocks);
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::INT32))},
                    [per_rank](pl::Value y) { per_rank(y[0], pl::blocks(2)); });
  const std::string error = compile_error(host);
  EXPECT_EQ(error,
            "compile error: function 'host' (host), op call @per_rank: the dispatch of 'per_rank' "
            "passes pl::blocks(n); blocks launch an incore kernel, from an orchestration function "
            "(the host dispatches with pl::device(r))");
}

TEST(MultiBlockErrors, BlocksMustBeTheLastArgument) {
  const pl::Function two = pl::jit::incore(
      "two", {pl::InOut("y", pl::Tensor({1, S}, pl::INT32)), pl::In("k", pl::INT32)},
      [](pl::Value, pl::Scalar) {});
  const pl::Function launch =
      pl::jit::orchestration("launch", kParams, [two](pl::Value y) { two(y, pl::blocks(2), 1); });
  const std::string error = compile_error(program(launch));
  EXPECT_NE(error.find("call of 'two': pl::blocks(n) must be the last argument"), std::string::npos)
      << error;
}

TEST(MultiBlockErrors, ABuiltinCollectiveInAMultiBlockKernel) {
  const pl::Function with_barrier = pl::jit::incore(
      "with_barrier", {pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value signal) { signal = pld::tensor::barrier(signal); });
  const pl::Function launch =
      pl::jit::orchestration_for("launch_barrier", with_barrier, pl::blocks(2));
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::INT32))}, [launch](pl::Value) {
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          launch(pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
  const std::string error = compile_error(host);
  EXPECT_NE(error.find("the launch of 'with_barrier' over pl::blocks(n) runs pld.tensor.barrier, a "
                       "builtin collective, which runs on one block per rank: call it from a "
                       "one-block kernel (a host-level collective takes core_num)"),
            std::string::npos)
      << error;
}

TEST(MultiBlockErrors, APutAsyncInAMultiBlockKernel) {
  const pl::Function shift =
      pl::jit::incore("async_shift",
                      {pl::In("x", pl::Tensor({1, S}, pl::INT32)),
                       pl::InOut("inbox", pld::DistributedTensor({1, S}, pl::INT32))},
                      [](pl::Value x, pl::Value inbox) {
                        const pld::AsyncEvent e = pld::tensor::put_async(inbox, 0, x);
                        pld::system::wait_async(e);
                      });
  const pl::Function launch = pl::jit::orchestration_for("launch_async", shift, pl::blocks(2));
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::INT32))}, [launch](pl::Value y) {
        auto inbox = pld::alloc_window_buffer("inbox", {1, S}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          launch(y[r], pld::window(inbox, {1, S}, pl::INT32), pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host),
            "compile error: function 'launch_async' (orchestration), op call @async_shift: the "
            "launch of 'async_shift' over pl::blocks(n) runs pld.tensor.put_async, whose source "
            "guard covers one block "
            "(another block could write the source while the put is in flight): use "
            "pld::tensor::put in a multi-block kernel");
}

// The race checker's clocks grow with the square of the agents (ranks ×
// blocks): a run that would need more than 8 GiB of them is refused.
TEST(MultiBlockErrors, TooManyAgentsToRaceCheck) {
  const std::int64_t P = 8192;
  const pl::Function launch = pl::jit::orchestration_for("launch", tag_blocks, pl::blocks(8));
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::INT32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  const anyp::CompiledProgram compiled = program(launch).compile({y}, config);
  try {
    compiled(y);
    FAIL() << "ran";
  } catch (const anyp::ConfigError& e) {
    EXPECT_EQ(std::string(anyp_test::without_locations(e.what())),
              "check_races: the race checker keeps a vector clock per agent, with an entry per "
              "agent; P = 8192 ranks × 8 blocks = 65536 agents need 16 GiB of clocks (at most 8 "
              "GiB); check the program at a smaller P or with fewer blocks");
  }
}

TEST(MultiBlockErrors, TheBlockQueriesBelongToIncoreKernels) {
  const pl::Function orch = pl::jit::orchestration("orch_queries", kParams, [](pl::Value y) {
    const pl::Scalar b = pl::get_block_idx();
    (void)b;
    tag_blocks(y);
  });
  const std::string error = compile_error(program(orch));
  EXPECT_NE(error.find("op pl.get_block_idx is not allowed at the orchestration level (it is an "
                       "incore op)"),
            std::string::npos)
      << error;
}

}  // namespace
