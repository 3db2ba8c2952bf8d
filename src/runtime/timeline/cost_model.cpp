// cost_model.cpp — parsing model texts, and the shipped platform models.
#include "runtime/timeline/cost_model.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "anyp/errors.hpp"
#include "runtime/timeline/platform_models.hpp"

namespace anyp::runtime {
namespace {

// The largest count key (dma_engines, devices_per_node, vector_cores) a
// model may give: far above any machine, and exact as a double and an int64.
constexpr double kMaxCount = 2147483647;

constexpr std::array<DType, kDTypes> kAllDTypes = {
    DType::FP32, DType::FP16, DType::BF16, DType::INT8, DType::INT16, DType::INT32, DType::INT64};

constexpr std::array<const char*, kComputeClasses> kClassKeys = {
#define ANYP_X(name, key) key,
    ANYP_COMPUTE_CLASSES(ANYP_X)
#undef ANYP_X
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// "compute.<class>.<dtype>" with "*" for either part: the indices, or
// nullopt when a part names no class or dtype.
struct ComputeKey {
  int cls = -1;    // -1: "*"
  int dtype = -1;  // -1: "*"
};
std::optional<ComputeKey> compute_key(const std::string& key) {
  const std::string prefix = "compute.";
  if (key.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string rest = key.substr(prefix.size());
  const auto dot = rest.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string cls = rest.substr(0, dot), dtype = rest.substr(dot + 1);
  ComputeKey k;
  if (cls != "*") {
    for (std::size_t c = 0; c < kComputeClasses; ++c)
      if (cls == kClassKeys[c]) k.cls = static_cast<int>(c);
    if (k.cls < 0) return std::nullopt;
  }
  if (dtype != "*") {
    for (std::size_t d = 0; d < kDTypes; ++d)
      if (dtype == dtype_name(kAllDTypes[d])) k.dtype = static_cast<int>(d);
    if (k.dtype < 0) return std::nullopt;
  }
  return k;
}

}  // namespace

const char* compute_class_keys_text() {
  static const std::string text = [] {
    std::string t;
    for (const char* k : kClassKeys) t += (t.empty() ? "" : ", ") + std::string(k);
    return t;
  }();
  return text.c_str();
}

CostModel parse_cost_model(const std::string& text, const std::string& origin) {
  auto fail = [&](int line, const std::string& what) -> void {
    throw ConfigError("cost model '" + origin + "', line " + std::to_string(line) + ": " + what);
  };
  CostModel m;
  std::map<std::string, double*> scalars = {{"alpha_ns", &m.alpha_ns},
                                            {"beta_ns_per_byte", &m.beta_ns_per_byte},
                                            {"local_alpha_ns", &m.local_alpha_ns},
                                            {"local_beta_ns_per_byte", &m.local_beta_ns_per_byte},
                                            {"notify_issue_ns", &m.notify_issue_ns},
                                            {"notify_ns", &m.notify_ns},
                                            {"wait_ns", &m.wait_ns}};
  // The optional keys (cost_model.hpp): absent, the simple model.
  double dma_engines = 0, links_shared = 0, devices_per_node = 0, vector_cores = 0;
  std::map<std::string, double*> optional = {
      {"dma_engines", &dma_engines},
      {"dma_issue_ns", &m.dma_issue_ns},
      {"links_shared", &links_shared},
      {"devices_per_node", &devices_per_node},
      {"inter_node_alpha_ns", &m.inter_node_alpha_ns},
      {"inter_node_beta_ns_per_byte", &m.inter_node_beta_ns_per_byte},
      {"vector_cores", &vector_cores}};
  std::map<std::string, int> seen;  // key -> line
  // Compute rates by specificity: [cls or kComputeClasses for "*"][dtype or kDTypes].
  std::map<std::pair<int, int>, double> rates;
  std::istringstream in(text);
  std::string raw;
  for (int line = 1; std::getline(in, raw); ++line) {
    const auto hash = raw.find('#');
    const std::string body = trim(raw.substr(0, hash));
    if (body.empty()) continue;
    const std::string comment = hash == std::string::npos ? "" : raw.substr(hash);
    const auto eq = body.find('=');
    if (eq == std::string::npos) fail(line, "expected 'key = value', got '" + body + "'");
    const std::string key = trim(body.substr(0, eq)), value = trim(body.substr(eq + 1));
    if (key.empty()) fail(line, "a value without a key");
    if (auto [it, fresh] = seen.emplace(key, line); !fresh)
      fail(line,
           "key '" + key + "' is given twice (first on line " + std::to_string(it->second) + ")");
    if (key == "name") {
      if (value.empty()) fail(line, "the name is empty");
      m.name = value;
      continue;
    }
    if (comment.find("source:") == std::string::npos)
      fail(line, "key '" + key +
                     "' does not say where its value comes from: end the line with "
                     "'# source: <a public figure, or assumed>'");
    const auto ck = compute_key(key);
    if (!ck && scalars.count(key) == 0 && optional.count(key) == 0) {
      std::string known;
      for (const auto& [k, p] : scalars) known += k + ", ";
      known +=
          "the optional dma_engines, dma_issue_ns, links_shared, devices_per_node, "
          "inter_node_alpha_ns, inter_node_beta_ns_per_byte, vector_cores, ";
      fail(line, "unknown key '" + key + "'; the keys are name, " + known +
                     "and compute.<class>.<dtype> (class " + compute_class_keys_text() +
                     " or *; "
                     "dtype FP32, FP16, BF16, INT8, INT16, INT32, INT64 or *)");
    }
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    const bool number = !value.empty() && end == value.c_str() + value.size() && !std::isnan(v);
    if (ck) {
      if (!number || !(v > 0))
        fail(line, "the rate of '" + key +
                       "' must be a positive number of elements per ns (inf: "
                       "free), got '" +
                       value + "'");
      rates[{ck->cls < 0 ? static_cast<int>(kComputeClasses) : ck->cls,
             ck->dtype < 0 ? static_cast<int>(kDTypes) : ck->dtype}] = v;
    } else {
      if (!number || v < 0 || std::isinf(v))
        fail(line, "the value of '" + key + "' must be a non-negative number, got '" + value + "'");
      const bool count = key == "dma_engines" || key == "devices_per_node" || key == "vector_cores";
      if (count && v != std::floor(v))
        fail(line, "the value of '" + key + "' must be a whole number, got '" + value + "'");
      if (count && v > kMaxCount)
        fail(line, "the value of '" + key + "' must be at most " +
                       std::to_string(static_cast<std::int64_t>(kMaxCount)) + ", got '" + value +
                       "'");
      if (key == "links_shared" && v != 0 && v != 1)
        fail(line, "the value of 'links_shared' must be 0 or 1, got '" + value + "'");
      *(scalars.count(key) ? scalars[key] : optional[key]) = v;
    }
  }
  m.dma_engines = static_cast<std::int64_t>(dma_engines);
  m.links_shared = links_shared != 0;
  m.devices_per_node = static_cast<std::int64_t>(devices_per_node);
  m.vector_cores = static_cast<std::int64_t>(vector_cores);
  // A key that would change nothing is refused, never ignored.
  auto needs = [&](const char* key, bool on, const char* what,
                   std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
      if (on && seen.count(k) == 0)
        throw ConfigError("cost model '" + origin + "': " + key + " " + what + " needs " + k);
      if (!on && seen.count(k) != 0)
        fail(seen[k], std::string("'") + k + "' has no effect unless " + key + " " + what);
    }
  };
  needs("dma_engines", m.dma_engines > 0, "> 0", {"dma_issue_ns"});
  needs("devices_per_node", m.devices_per_node > 0, "> 0",
        {"inter_node_alpha_ns", "inter_node_beta_ns_per_byte"});
  std::string missing;
  if (m.name.empty()) missing += "name, ";
  for (const auto& [k, p] : scalars)
    if (seen.count(k) == 0) missing += k + ", ";
  for (std::size_t c = 0; c < kComputeClasses; ++c) {
    for (std::size_t d = 0; d < kDTypes; ++d) {
      const int ci = static_cast<int>(c), di = static_cast<int>(d);
      const int all_c = static_cast<int>(kComputeClasses), all_d = static_cast<int>(kDTypes);
      double rate = 0;
      for (const auto& key : {std::pair{ci, di}, {ci, all_d}, {all_c, di}, {all_c, all_d}}) {
        if (auto it = rates.find(key); it != rates.end()) {
          rate = it->second;
          break;
        }
      }
      if (rate == 0) {
        missing += std::string("compute.") + kClassKeys[c] + "." +
                   std::string(dtype_name(kAllDTypes[d])) + ", ";
      }
      m.elements_per_ns[c][d] = rate;
    }
  }
  if (!missing.empty()) {
    missing.resize(missing.size() - 2);
    throw ConfigError("cost model '" + origin + "': missing " + missing);
  }
  return m;
}

const CostModel& platform_cost_model(const std::string& platform) {
  static const std::map<std::string, CostModel> models = [] {
    std::map<std::string, CostModel> all;
    for (const PlatformModelText& t : platform_model_texts())
      all.emplace(t.platform,
                  parse_cost_model(t.text, std::string("models/") + t.platform + ".model"));
    return all;
  }();
  auto it = models.find(platform);
  if (it == models.end())
    throw ConfigError("cost model: no model is shipped for platform '" + platform + "'");
  return it->second;
}

CostModel load_cost_model(const std::string& path) {
  const std::string cannot = "cost model '" + path + "': cannot be read: ";
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found)
    throw ConfigError(cannot + "no such file");
  if (status.type() == std::filesystem::file_type::directory)
    throw ConfigError(cannot + "it is a directory; give the model file itself");
  std::ifstream file(path);
  if (!file) throw ConfigError(cannot + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) throw ConfigError(cannot + std::strerror(errno));
  return parse_cost_model(text.str(), path);
}

}  // namespace anyp::runtime
