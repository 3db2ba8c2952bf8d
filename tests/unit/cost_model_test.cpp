// cost_model_test.cpp — the cost models (runtime/timeline/cost_model.hpp):
// the shipped platform models parse, say where every value comes from and
// differ where the hardware generations differ; a model text with a
// mistake is refused with a message naming the file, the line and what is
// wrong.
#include "runtime/timeline/cost_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "anyp/errors.hpp"
#include "support/build_paths.hpp"

namespace {

using anyp::ConfigError;
using anyp::DType;
using anyp::runtime::ComputeClass;
using anyp::runtime::CostModel;
using anyp::runtime::load_cost_model;
using anyp::runtime::parse_cost_model;
using anyp::runtime::platform_cost_model;

// A complete model: every key once, every compute class through "*".
std::string complete(const std::string& extra = "") {
  return "name = test\n"
         "alpha_ns = 1000   # source: assumed\n"
         "beta_ns_per_byte = 0.5   # source: assumed\n"
         "local_alpha_ns = 10   # source: assumed\n"
         "local_beta_ns_per_byte = 0.25   # source: assumed\n"
         "notify_issue_ns = 5   # source: assumed\n"
         "notify_ns = 300   # source: assumed\n"
         "wait_ns = 7   # source: assumed\n"
         "compute.*.* = 100   # source: assumed\n" +
         extra;
}

std::string error_of(const std::string& text) {
  try {
    parse_cost_model(text, "my.model");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(CostModel, ParsesEveryKeyAndPricesOps) {
  const CostModel m = parse_cost_model(
      complete(
          "compute.add.FP16 = 400   # source: assumed\ncompute.mul.* = inf   # source: free\n"),
      "my.model");
  EXPECT_EQ(m.name, "test");
  EXPECT_DOUBLE_EQ(m.remote_ns(100), 1000 + 50);
  EXPECT_DOUBLE_EQ(m.local_ns(100), 10 + 25);
  EXPECT_DOUBLE_EQ(m.notify_issue_ns, 5);
  EXPECT_DOUBLE_EQ(m.notify_ns, 300);
  EXPECT_DOUBLE_EQ(m.wait_ns, 7);
  EXPECT_DOUBLE_EQ(m.compute_ns(ComputeClass::Add, DType::FP32, 1000), 10);   // compute.*.*
  EXPECT_DOUBLE_EQ(m.compute_ns(ComputeClass::Add, DType::FP16, 1000), 2.5);  // the exact key
  EXPECT_DOUBLE_EQ(m.compute_ns(ComputeClass::Mul, DType::INT8, 1000), 0);    // inf: free
}

TEST(CostModel, TheShippedModelsParseAndDifferWhereTheGenerationsDo) {
  const CostModel& a2 = platform_cost_model("a2a3sim");
  const CostModel& a5 = platform_cost_model("a5sim");
  EXPECT_EQ(a2.name, "a2a3sim");
  EXPECT_EQ(a5.name, "a5sim");
  // Interconnect and memory bandwidth, signal latency and vector rate.
  EXPECT_GT(a2.beta_ns_per_byte, a5.beta_ns_per_byte);
  EXPECT_GT(a2.local_beta_ns_per_byte, a5.local_beta_ns_per_byte);
  EXPECT_GT(a2.notify_ns, a5.notify_ns);
  EXPECT_GT(a2.compute_ns(ComputeClass::Add, DType::FP32, 1 << 20),
            a5.compute_ns(ComputeClass::Add, DType::FP32, 1 << 20));
  // Half-width floats run twice as fast as FP32 on both.
  for (const CostModel* m : {&a2, &a5}) {
    EXPECT_DOUBLE_EQ(2 * m->compute_ns(ComputeClass::Add, DType::FP16, 4096),
                     m->compute_ns(ComputeClass::Add, DType::FP32, 4096));
  }
  try {
    platform_cost_model("a2a3");
    FAIL() << "no model for a2a3";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "cost model: no model is shipped for platform 'a2a3'");
  }
}

// The shipped models price transfers asynchronously on shared links; each
// has a simple twin (models/simple/) with every other constant equal, which
// reproduces the results of the model before issue 26 exactly.
TEST(CostModel, EachShippedModelHasASimpleTwinWithTheSameConstants) {
  for (const std::string platform : {"a2a3sim", "a5sim"}) {
    SCOPED_TRACE(platform);
    const CostModel& shipped = platform_cost_model(platform);
    const CostModel simple =
        load_cost_model(anyp_test::source_dir() + "/models/simple/" + platform + ".model");
    EXPECT_EQ(simple.name, platform + "-simple");
    EXPECT_EQ(shipped.dma_engines, 4);
    EXPECT_DOUBLE_EQ(shipped.dma_issue_ns, 100);
    EXPECT_TRUE(shipped.links_shared);
    EXPECT_GT(shipped.devices_per_node, 0);
    EXPECT_GT(shipped.inter_node_beta_ns_per_byte, shipped.beta_ns_per_byte);
    EXPECT_EQ(simple.dma_engines, 0);
    EXPECT_DOUBLE_EQ(simple.dma_issue_ns, 0);
    EXPECT_FALSE(simple.links_shared);
    EXPECT_EQ(simple.devices_per_node, 0);
    EXPECT_DOUBLE_EQ(simple.inter_node_alpha_ns, 0);
    EXPECT_DOUBLE_EQ(simple.inter_node_beta_ns_per_byte, 0);
    EXPECT_DOUBLE_EQ(simple.alpha_ns, shipped.alpha_ns);
    EXPECT_DOUBLE_EQ(simple.beta_ns_per_byte, shipped.beta_ns_per_byte);
    EXPECT_DOUBLE_EQ(simple.local_alpha_ns, shipped.local_alpha_ns);
    EXPECT_DOUBLE_EQ(simple.local_beta_ns_per_byte, shipped.local_beta_ns_per_byte);
    EXPECT_DOUBLE_EQ(simple.notify_issue_ns, shipped.notify_issue_ns);
    EXPECT_DOUBLE_EQ(simple.notify_ns, shipped.notify_ns);
    EXPECT_DOUBLE_EQ(simple.wait_ns, shipped.wait_ns);
    EXPECT_EQ(simple.elements_per_ns, shipped.elements_per_ns);
  }
}

TEST(CostModel, EveryMistakeIsNamed) {
  EXPECT_EQ(error_of(complete("alpah_ns = 3   # source: typo\n")),
            "cost model 'my.model', line 10: unknown key 'alpah_ns'; the keys are name, "
            "alpha_ns, beta_ns_per_byte, local_alpha_ns, local_beta_ns_per_byte, "
            "notify_issue_ns, notify_ns, wait_ns, the optional dma_engines, dma_issue_ns, "
            "links_shared, devices_per_node, inter_node_alpha_ns, inter_node_beta_ns_per_byte, "
            "vector_cores, and compute.<class>.<dtype> (class add, mul, "
            "minmax, cast, fill, div, unary, math, bitwise, cmp, reduce, expand, move, matmul or "
            "*; dtype FP32, FP16, BF16, INT8, INT16, INT32, INT64 or *)");
  EXPECT_EQ(error_of(complete("alpha_ns = 3   # source: again\n")),
            "cost model 'my.model', line 10: key 'alpha_ns' is given twice (first on line 2)");
  EXPECT_EQ(error_of(complete("compute.add.FP32 = 5\n")),
            "cost model 'my.model', line 10: key 'compute.add.FP32' does not say where its value "
            "comes from: end the line with '# source: <a public figure, or assumed>'");
  EXPECT_EQ(error_of(complete("compute.cast.* = 0   # source: assumed\n")),
            "cost model 'my.model', line 10: the rate of 'compute.cast.*' must be a positive "
            "number of elements per ns (inf: free), got '0'");
  EXPECT_EQ(error_of("name = x\nalpha_ns = fast   # source: assumed\n"),
            "cost model 'my.model', line 2: the value of 'alpha_ns' must be a non-negative "
            "number, got 'fast'");
  EXPECT_EQ(error_of("name = x\nalpha_ns = -1   # source: assumed\n"),
            "cost model 'my.model', line 2: the value of 'alpha_ns' must be a non-negative "
            "number, got '-1'");
  // Found by fuzz/cost_model_fuzzer.cpp: a count too large for an integer
  // was converted anyway (undefined behaviour).
  EXPECT_EQ(error_of(complete("devices_per_node = 1e308   # source: assumed\n"
                              "inter_node_alpha_ns = 1   # source: assumed\n"
                              "inter_node_beta_ns_per_byte = 1   # source: assumed\n")),
            "cost model 'my.model', line 10: the value of 'devices_per_node' must be at most "
            "2147483647, got '1e308'");
  EXPECT_EQ(error_of(complete("vector_cores = 2147483648   # source: assumed\n")),
            "cost model 'my.model', line 10: the value of 'vector_cores' must be at most "
            "2147483647, got '2147483648'");
  EXPECT_EQ(error_of("name = x\nalpha_ns 5   # source: assumed\n"),
            "cost model 'my.model', line 2: expected 'key = value', got 'alpha_ns 5'");
  EXPECT_EQ(
      error_of("name = x\nalpha_ns = 1   # source: assumed\ncompute.add.* = 1   # source: "
               "assumed\n"),
      "cost model 'my.model': missing beta_ns_per_byte, local_alpha_ns, local_beta_ns_per_byte, "
      "notify_issue_ns, notify_ns, wait_ns, compute.mul.FP32, compute.mul.FP16, compute.mul.BF16, "
      "compute.mul.INT8, compute.mul.INT16, compute.mul.INT32, compute.mul.INT64, "
      "compute.minmax.FP32, compute.minmax.FP16, compute.minmax.BF16, compute.minmax.INT8, "
      "compute.minmax.INT16, compute.minmax.INT32, compute.minmax.INT64, compute.cast.FP32, "
      "compute.cast.FP16, compute.cast.BF16, compute.cast.INT8, compute.cast.INT16, "
      "compute.cast.INT32, compute.cast.INT64, compute.fill.FP32, compute.fill.FP16, "
      "compute.fill.BF16, compute.fill.INT8, compute.fill.INT16, compute.fill.INT32, "
      "compute.fill.INT64, compute.div.FP32, compute.div.FP16, compute.div.BF16, compute.div.INT8, "
      "compute.div.INT16, compute.div.INT32, compute.div.INT64, compute.unary.FP32, "
      "compute.unary.FP16, compute.unary.BF16, compute.unary.INT8, compute.unary.INT16, "
      "compute.unary.INT32, compute.unary.INT64, compute.math.FP32, compute.math.FP16, "
      "compute.math.BF16, compute.math.INT8, compute.math.INT16, compute.math.INT32, "
      "compute.math.INT64, compute.bitwise.FP32, compute.bitwise.FP16, compute.bitwise.BF16, "
      "compute.bitwise.INT8, compute.bitwise.INT16, compute.bitwise.INT32, compute.bitwise.INT64, "
      "compute.cmp.FP32, compute.cmp.FP16, compute.cmp.BF16, compute.cmp.INT8, compute.cmp.INT16, "
      "compute.cmp.INT32, compute.cmp.INT64, compute.reduce.FP32, compute.reduce.FP16, "
      "compute.reduce.BF16, compute.reduce.INT8, compute.reduce.INT16, compute.reduce.INT32, "
      "compute.reduce.INT64, compute.expand.FP32, compute.expand.FP16, compute.expand.BF16, "
      "compute.expand.INT8, compute.expand.INT16, compute.expand.INT32, compute.expand.INT64, "
      "compute.move.FP32, compute.move.FP16, compute.move.BF16, compute.move.INT8, "
      "compute.move.INT16, compute.move.INT32, compute.move.INT64, compute.matmul.FP32, "
      "compute.matmul.FP16, compute.matmul.BF16, compute.matmul.INT8, compute.matmul.INT16, "
      "compute.matmul.INT32, compute.matmul.INT64");
  EXPECT_EQ(error_of(complete().substr(complete().find('\n') + 1)),
            "cost model 'my.model': missing name");
  try {
    anyp::runtime::load_cost_model("/nonexistent/dir/x.model");
    FAIL() << "an unreadable file";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "cost model '/nonexistent/dir/x.model': cannot be read: no such file");
  }
  // A directory opens as a stream on Linux, and used to read as an empty
  // model ("missing name, ..."): it is named for what it is.
  const std::string dir = ::testing::TempDir();
  try {
    anyp::runtime::load_cost_model(dir);
    FAIL() << "a directory";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "cost model '" + dir +
                                         "': cannot be read: it is a directory; give the model "
                                         "file itself");
  }
}

}  // namespace
