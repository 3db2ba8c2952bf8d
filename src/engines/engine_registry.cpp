// engine_registry.cpp — engine names to engine objects.
#include "engines/engine_registry.hpp"

#include "engines/threads/threads_engine.hpp"

namespace anyp::engines {

std::vector<std::string> engine_names() { return {"threads"}; }

std::unique_ptr<runtime::Engine> make_engine(const std::string& name) {
  if (name == "threads") return std::make_unique<threads::ThreadsEngine>();
  return nullptr;
}

}  // namespace anyp::engines
