// engine_registry.hpp — the engines this build has, by RunConfig::engine
// name. The only place that knows every engine.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/engine.hpp"

namespace anyp::engines {

// "threads" (always), plus engines found at configure time.
std::vector<std::string> engine_names();
// nullptr if `name` is not one of engine_names().
std::unique_ptr<runtime::Engine> make_engine(const std::string& name);
// Why `name` cannot be used: not a known engine, or not in this build.
std::string unavailable_message(const std::string& name);

}  // namespace anyp::engines
