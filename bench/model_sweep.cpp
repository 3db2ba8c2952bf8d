// model_sweep.cpp — modeled time of the all-reduces of ladder steps 08-11
// (mesh, two-phase, ring, and step 11's builtin mesh and ring) against P
// and the message size, as CSV, with the textbook formula of each beside it
// (Thakur, Rabenseifner & Gropp 2005, with the model's alpha, beta and
// gamma; the direct exchange with contention on shared links):
// bench/run_model_sweep.sh draws the curves of docs/timeline.md.
//
//   model_sweep [--platform a2a3sim] [--model FILE] [--ps 2,3,4,...]
//               [--sizes 1024,32768,...] [--out FILE]
//
// A size is the bytes of each rank's vector (FP32); the hand-written
// kernels need n divisible by 8P, so n is the nearest such length and the
// CSV gives the n each point ran with. Columns:
//   algorithm,P,size,n,modeled_us,rounds,textbook_us,textbook
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_lists.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/allreduce_programs.hpp"

namespace {

using anyp_test::Allreduce;

// The textbook time of the schedule `a` runs, and its name: the direct
// exchange for the meshes, reduce-scatter + all-gather for the rest. On a
// model with DMA engines every message also pays its issue (a pull waits
// for its data: α + d); with shared links the meshes' pulls in rank order
// queue on the port of the rank pulled from (docs/timeline.md §2c: the
// Hockney model with contention adds (P - 1)(P - 2)/2 N β).
std::pair<double, const char*> textbook_ns(Allreduce a, std::int64_t n, std::int64_t P,
                                           const anyp::runtime::CostModel& m) {
  const double p = static_cast<double>(P), N = 4.0 * static_cast<double>(n);
  const double gamma = m.compute_ns(anyp::runtime::ComputeClass::Add, anyp::DType::FP32, 1);
  const double alpha = m.alpha_ns + (m.dma_engines > 0 ? m.dma_issue_ns : 0);
  const double beta = m.beta_ns_per_byte;
  if (a == Allreduce::Mesh || a == Allreduce::BuiltinMesh) {
    const double direct = (p - 1) * (alpha + N * beta + static_cast<double>(n) * gamma);
    if (!m.links_shared) return {direct, "direct"};
    return {direct + (p - 1) * (p - 2) / 2 * N * beta, "direct_contended"};
  }
  return {2 * (p - 1) * alpha + 2 * (p - 1) / p * N * beta +
              (p - 1) / p * static_cast<double>(n) * gamma,
          "ring"};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Modeled time of the all-reduces of steps 08-11 against P and size (CSV)"};
  std::string platform = "a2a3sim", model_file,
              ps_text =
                  "2,3,4,6,8,12,16,24,32,48,64,96,128,"
                  "192,256",
              sizes_text = "1024,32768,262144", out_path;
  app.add_option("--platform", platform, "a2a3sim or a5sim")->capture_default_str();
  app.add_option("--model", model_file, "A cost model file instead of the platform's")
      ->type_name("FILE");
  app.add_option("--ps", ps_text, "World sizes")->capture_default_str();
  app.add_option("--sizes", sizes_text, "Bytes per rank")->capture_default_str();
  app.add_option("--out", out_path, "CSV file (default: stdout)")->type_name("FILE");
  CLI11_PARSE(app, argc, argv);
  try {
    const std::vector<std::int64_t> ps = anyp_bench::positive_integers(ps_text, "--ps");
    const std::vector<std::int64_t> sizes = anyp_bench::positive_integers(sizes_text, "--sizes");
    const anyp::runtime::CostModel model = model_file.empty()
                                               ? anyp::runtime::platform_cost_model(platform)
                                               : anyp::runtime::load_cost_model(model_file);
    std::ofstream file;
    if (!out_path.empty()) {
      file.open(out_path);
      if (!file) throw std::runtime_error("--out: cannot write '" + out_path + "'");
    }
    std::ostream& out = out_path.empty() ? std::cout : file;
    out << "algorithm,P,size,n,modeled_us,rounds,textbook_us,textbook\n" << std::setprecision(10);
    for (const std::int64_t size : sizes) {
      for (const std::int64_t P : ps) {
        if (P < 2) throw CLI::ValidationError("--ps", "P must be at least 2");
        const std::int64_t unit = 8 * P;
        const std::int64_t n = std::max<std::int64_t>(
            unit, static_cast<std::int64_t>(
                      std::llround(static_cast<double>(size) / 4.0 / static_cast<double>(unit))) *
                      unit);
        for (const Allreduce a : {Allreduce::Mesh, Allreduce::TwoPhase, Allreduce::Ring,
                                  Allreduce::BuiltinMesh, Allreduce::BuiltinRing}) {
          anyp::RunConfig config;
          config.platform = platform;
          config.timeline = true;
          config.model_file = model_file;
          const anyp::RunStats stats = anyp_test::run_allreduce(a, n, P, config);
          const auto [formula, name] = textbook_ns(a, n, P, model);
          out << anyp_test::allreduce_name(a) << ',' << P << ',' << size << ',' << n << ','
              << stats.timeline->makespan_ns / 1000.0 << ',' << stats.timeline->rounds << ','
              << formula / 1000.0 << ',' << name << '\n';
        }
        std::cerr << "model_sweep: size " << size << " B, P = " << P << " done\n";
      }
    }
  } catch (const CLI::Error& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "model_sweep: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
