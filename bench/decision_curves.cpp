// decision_curves.cpp — what AllreduceMode::Auto chooses, and why, over a
// grid of world sizes and message sizes on a platform's cost model: for
// every (P, bytes per rank) the estimate of every candidate
// (compiler::allreduce_estimates, the numbers Auto compares), the one Auto
// runs, and the algorithm Open MPI 4.1's tuned rules run for the same point
// (openmpi_tuned_rules.hpp). bench/run_decision_curves.sh draws the figures
// of docs/collectives.md §6 from this CSV.
//
//   decision_curves [--platform a2a3sim] [--model FILE] [--ps 2,3,4,...]
//                   [--sizes 8,64,...] (bytes per rank, FP32) [--out FILE]
//
// Columns: P,bytes,algorithm,estimate_us,auto,openmpi
// (auto: 1 on the row of the algorithm Auto runs; openmpi: Open MPI's
// algorithm for the point, the same on every row of it).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>
#include <vector>

#include "cli_lists.hpp"
#include "compiler/choose_algorithm.hpp"
#include "ir/op_attrs.hpp"
#include "openmpi_tuned_rules.hpp"
#include "runtime/timeline/cost_model.hpp"

int main(int argc, char** argv) {
  CLI::App app{"AllreduceMode::Auto's choice and every candidate's estimate over P and size (CSV)"};
  std::string platform = "a2a3sim", model_file, out_file;
  std::string ps_text = "2,3,4,6,8,12,16,24,32,48,64,96,128,192,256,384,512,768,1024";
  std::string sizes_text =
      "8,32,128,512,2048,8192,32768,131072,524288,2097152,8388608,33554432,67108864";
  app.add_option("--platform", platform, "a2a3sim or a5sim")->capture_default_str();
  app.add_option("--model", model_file, "A cost model file instead of the platform's");
  app.add_option("--ps", ps_text, "World sizes")->capture_default_str();
  app.add_option("--sizes", sizes_text, "Bytes per rank (FP32, at least 4)")->capture_default_str();
  app.add_option("--out", out_file, "Write the CSV here instead of stdout");
  CLI11_PARSE(app, argc, argv);
  try {
    const anyp::runtime::CostModel model = model_file.empty()
                                               ? anyp::runtime::platform_cost_model(platform)
                                               : anyp::runtime::load_cost_model(model_file);
    const std::vector<std::int64_t> ps = anyp_bench::positive_integers(ps_text, "--ps");
    const std::vector<std::int64_t> sizes = anyp_bench::positive_integers(sizes_text, "--sizes");
    std::ofstream file;
    if (!out_file.empty()) {
      file.open(out_file);
      if (!file) throw std::runtime_error("cannot write " + out_file);
    }
    std::ostream& out = out_file.empty() ? std::cout : file;
    out << "P,bytes,algorithm,estimate_us,auto,openmpi\n" << std::fixed << std::setprecision(4);
    for (const std::int64_t P : ps) {
      if (P < 2) throw CLI::ValidationError("--ps", "a world size is at least 2");
      for (const std::int64_t bytes : sizes) {
        if (bytes < 4) throw CLI::ValidationError("--sizes", "a size is at least 4 bytes");
        const auto estimates = anyp::compiler::allreduce_estimates(
            P, bytes / 4, anyp::DType::FP32, anyp::ir::ReduceKind::Sum, model);
        const anyp::ir::Algorithm chosen = anyp::compiler::choose_fastest(estimates).kind;
        const std::string openmpi =
            anyp_bench::openmpi_allreduce_name(anyp_bench::openmpi_allreduce_algorithm(P, bytes));
        for (const auto& e : estimates)
          out << P << ',' << bytes << ',' << anyp::ir::algorithm_name(e.kind) << ',' << e.ns / 1000
              << ',' << (e.kind == chosen) << ',' << openmpi << '\n';
      }
    }
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "decision_curves: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
