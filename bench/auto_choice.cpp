// auto_choice.cpp — how well AllreduceMode::Auto chooses under a shipped
// cost model: for each (P, size) it simulates every builtin allreduce
// algorithm (the modeled timeline of a real run) and compares the one Auto
// runs (compiler::allreduce_estimates, choose_fastest) with the simulated
// fastest. Prints one CSV row per point and a summary: the points where
// Auto ran the simulated fastest (within 1 %), and its regret, the
// simulated time of Auto's choice over the fastest's.
//
//   auto_choice [--platform a2a3sim] [--model FILE] [--ps 2,3,4,...]
//               [--sizes 64,4096,...]   (bytes per rank, FP32)
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli_lists.hpp"
#include "compiler/choose_algorithm.hpp"
#include "ir/op_attrs.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/allreduce_programs.hpp"

namespace {

using anyp_test::Allreduce;

// The test programs of each candidate, in the estimates' order.
Allreduce program_of(anyp::ir::Algorithm a) {
  switch (a) {
    case anyp::ir::Algorithm::Ring:
      return Allreduce::BuiltinRing;
    case anyp::ir::Algorithm::RecursiveDoubling:
      return Allreduce::BuiltinRecursiveDoubling;
    case anyp::ir::Algorithm::Rabenseifner:
      return Allreduce::BuiltinRabenseifner;
    case anyp::ir::Algorithm::Tree:
      return Allreduce::BuiltinTree;
    default:
      return Allreduce::BuiltinMesh;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"AllreduceMode::Auto's choice against the simulated fastest (CSV + summary)"};
  std::string platform = "a2a3sim", model_file, ps_text = "2,3,4,5,8,16,17,32,64",
              sizes_text = "64,1024,16384,262144,1048576";
  app.add_option("--platform", platform, "a2a3sim or a5sim")->capture_default_str();
  app.add_option("--model", model_file, "A cost model file instead of the platform's");
  app.add_option("--ps", ps_text, "World sizes")->capture_default_str();
  app.add_option("--sizes", sizes_text, "Bytes per rank (FP32)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  std::vector<std::int64_t> ps, sizes;
  try {
    ps = anyp_bench::positive_integers(ps_text, "--ps");
    sizes = anyp_bench::positive_integers(sizes_text, "--sizes");
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  const anyp::runtime::CostModel model = model_file.empty()
                                             ? anyp::runtime::platform_cost_model(platform)
                                             : anyp::runtime::load_cost_model(model_file);
  int points = 0, hits = 0;
  double worst = 1, sum = 0;
  std::cout << "P,bytes,auto,fastest,auto_us,fastest_us,regret\n" << std::fixed;
  for (const std::int64_t size : sizes) {
    for (const std::int64_t P : ps) {
      const std::int64_t n = std::max<std::int64_t>(1, size / 4);
      const auto estimates = anyp::compiler::allreduce_estimates(P, n, anyp::DType::FP32,
                                                                 anyp::ir::ReduceKind::Sum, model);
      const anyp::ir::Algorithm chosen = anyp::compiler::choose_fastest(estimates).kind;
      double best = 0, chosen_ns = 0;
      anyp::ir::Algorithm fastest = chosen;
      for (const auto& e : estimates) {
        anyp::RunConfig config;
        config.platform = platform;
        config.model_file = model_file;
        config.timeline = true;
        const double ns =
            anyp_test::run_allreduce(program_of(e.kind), n, P, config).timeline->makespan_ns;
        if (e.kind == chosen) chosen_ns = ns;
        if (best == 0 || ns < best) best = ns, fastest = e.kind;
      }
      const double regret = chosen_ns / best;
      ++points;
      hits += regret <= 1.01;
      worst = std::max(worst, regret);
      sum += regret;
      std::cout << P << ',' << size << ',' << anyp::ir::algorithm_name(chosen) << ','
                << anyp::ir::algorithm_name(fastest) << ',' << std::setprecision(3)
                << chosen_ns / 1000 << ',' << best / 1000 << ',' << regret << '\n';
    }
  }
  std::cout << std::setprecision(3) << "summary (" << model.name << "): Auto ran the simulated "
            << "fastest (within 1 %) at " << hits << " of " << points
            << " points; regret (Auto's time / the fastest's): mean " << sum / points << ", worst "
            << worst << "\n";
  return 0;
}
