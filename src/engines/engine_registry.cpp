// engine_registry.cpp — engine names to engine objects, and the public
// engines.hpp (which engines this build has, their process worlds). The MPI
// engine is compiled in when CMake found MPI (ANYP_HAVE_MPI).
#include "engines/engine_registry.hpp"

#include "anyp/engines.hpp"
#include "anyp/errors.hpp"
#include "engines/threads/threads_engine.hpp"
#ifdef ANYP_HAVE_MPI
#include "engines/mpi/mpi_engine.hpp"
#endif

namespace anyp::engines {
namespace {

#ifdef ANYP_HAVE_MPI
constexpr bool kHaveMpi = true;
#else
constexpr bool kHaveMpi = false;
#endif

}  // namespace

std::vector<std::string> engine_names() {
  std::vector<std::string> names;
  for (const EngineTraits& e : engine_table())
    if (e.in_build) names.push_back(e.name);
  return names;
}

std::unique_ptr<runtime::Engine> make_engine(const std::string& name) {
  if (name == "threads") return std::make_unique<threads::ThreadsEngine>();
#ifdef ANYP_HAVE_MPI
  if (name == "mpi") return std::make_unique<mpi::MpiEngine>();
#endif
  return nullptr;
}

std::string unavailable_message(const std::string& name) {
  if (const EngineTraits* e = engine_traits(name); e && !e->unavailable.empty())
    return e->unavailable;
  std::string names;
  for (const auto& e : engine_names()) names += (names.empty() ? "" : ", ") + e;
  return "engine '" + name + "' is not available; supported engines: " + names;
}

}  // namespace anyp::engines

namespace anyp {

const std::vector<EngineTraits>& engine_table() {
  static const std::vector<EngineTraits> table = [] {
    EngineTraits threads{"threads", true, true, true, true, true, ""};
    // MPI runs from the thread that initialised it: a submit runs before it returns.
    EngineTraits mpi{"mpi", engines::kHaveMpi, false, false, false, false, ""};
    if (!mpi.in_build) {
      mpi.unavailable =
          "engine 'mpi' is not in this build: Open MPI was not found when it was configured "
          "(install libopenmpi-dev and openmpi-bin, e.g. with scripts/setup.sh, and configure "
          "again); engines in this build: threads";
    }
    return std::vector<EngineTraits>{threads, mpi};
  }();
  return table;
}

const EngineTraits* engine_traits(const std::string& name) {
  for (const EngineTraits& e : engine_table())
    if (e.name == name) return &e;
  return nullptr;
}

std::vector<std::string> available_engines() { return engines::engine_names(); }

ProcessWorld process_world(const std::string& engine) {
  if (engine == "threads") return ProcessWorld{};
#ifdef ANYP_HAVE_MPI
  if (engine == "mpi") return ProcessWorld{mpi::world_rank(), mpi::world_size()};
#endif
  throw ConfigError(engines::unavailable_message(engine));
}

std::string engine_details(const std::string& engine) {
  if (engine == "threads")
    return "engine threads: every rank a VM on a worker pool in this process";
#ifdef ANYP_HAVE_MPI
  if (engine == "mpi") return mpi::details();
#endif
  throw ConfigError(engines::unavailable_message(engine));
}

}  // namespace anyp
