// collective_report.cpp — the Auto choices and the collective table of a
// plan, from the descriptors the lowering records (runtime::CollectiveDesc).
#include "compiler/collective_report.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace anyp::compiler {

namespace {

using Estimate = runtime::CollectiveDesc::Estimate;

std::vector<Estimate> fastest_first(const runtime::CollectiveDesc& c) {
  std::vector<Estimate> sorted = c.estimates;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Estimate& x, const Estimate& y) { return x.ns < y.ns; });
  return sorted;
}

std::string microseconds(double ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f us", ns / 1000.0);
  return buf;
}

std::string call_text(const runtime::LoweredCode& code, const runtime::CollectiveDesc& c) {
  return code.function + ": " + c.op + " (" + c.signature + ")";
}

}  // namespace

std::string collective_choices_text(const detail::Plan& plan) {
  std::string text;
  for (const runtime::LoweredCode& code : plan.exec.codes) {
    for (const runtime::CollectiveDesc& c : code.collectives) {
      if (!c.chosen_by_auto) continue;
      text += call_text(code, c) + ": Auto chose " + c.algorithm + ":";
      const std::vector<Estimate> sorted = fastest_first(c);
      for (std::size_t i = 0; i < sorted.size(); ++i)
        text += std::string(i ? "," : "") + " " + sorted[i].algorithm + " " +
                microseconds(sorted[i].ns);
      text += "\n";
    }
  }
  return text;
}

std::string collective_table_text(const detail::Plan& plan) {
  std::string rows;
  for (const runtime::LoweredCode& code : plan.exec.codes) {
    for (const runtime::CollectiveDesc& c : code.collectives) {
      const std::string why = c.chosen_by_auto      ? "chosen by Auto"
                              : c.estimates.empty() ? "its only builtin algorithm"
                                                    : "pinned";
      rows += "  " + call_text(code, c) + ": runs " + c.algorithm + " (" + why + ")\n";
      for (const Estimate& e : fastest_first(c)) {
        char line[160];
        std::snprintf(line, sizeof line, "    %12s  %s%s\n", microseconds(e.ns).c_str(),
                      e.algorithm.c_str(), e.algorithm == c.algorithm ? "  <- runs" : "");
        rows += line;
      }
    }
  }
  if (rows.empty()) return "";
  const std::string model = plan.model_name.empty() ? "" : "model " + plan.model_name + ", ";
  return "collectives (" + model + "P=" + std::to_string(plan.exec.world_size) +
         "): per call, the algorithm it runs and each candidate's modeled time, fastest first\n" +
         rows;
}

}  // namespace anyp::compiler
