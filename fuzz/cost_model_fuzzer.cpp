// cost_model_fuzzer.cpp — libFuzzer target for the cost-model parser
// (runtime/timeline/cost_model.hpp), the entry point that reads a --model
// file: any text either parses or is a ConfigError naming the file; a model
// that parses prices every compute class and dtype, and its numbers are
// finite where they must be. Anything else (another exception, a crash, a
// sanitizer report) is a bug. Built by fuzz/CMakeLists.txt; docs/testing.md.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "anyp/errors.hpp"
#include "runtime/timeline/cost_model.hpp"

namespace {

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "cost_model_fuzzer: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  anyp::runtime::CostModel model;
  try {
    model = anyp::runtime::parse_cost_model(text, "fuzz.model");
  } catch (const anyp::ConfigError& e) {
    require(std::string(e.what()).rfind("cost model 'fuzz.model'", 0) == 0,
            "a ConfigError that does not name the model");
    return 0;
  }
  require(!model.name.empty(), "a model without a name");
  for (const double v :
       {model.alpha_ns, model.beta_ns_per_byte, model.local_alpha_ns, model.local_beta_ns_per_byte,
        model.notify_issue_ns, model.notify_ns, model.wait_ns})
    require(std::isfinite(v) && v >= 0, "a time that is not a finite non-negative number");
  require(model.dma_engines >= 0 && model.vector_cores >= 0 && model.devices_per_node >= 0,
          "a negative count");
  for (const auto& per_class : model.elements_per_ns)
    for (const double rate : per_class) require(rate > 0, "a compute rate that is not positive");
  return 0;
}
