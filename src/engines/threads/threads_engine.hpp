// threads_engine.hpp — the default engine: every rank a RankVm inside this
// process, scheduled on a small worker pool (runner.hpp, signal_table.hpp) over one
// symmetric heap (heap_fabric.hpp).
#pragma once

#include "runtime/engine.hpp"

namespace anyp::threads {

class ThreadsEngine final : public runtime::Engine {
 public:
  runtime::EngineResult run(const runtime::Executable& exec,
                            std::span<const HostTensor* const> host_args,
                            const runtime::EngineOptions& options,
                            const runtime::Observers& observers) override;
  std::unique_ptr<runtime::PersistentWindows> make_persistent_windows(
      const runtime::Executable& exec) const override;
  void add_footprint(const runtime::Executable& exec, const runtime::EngineOptions& options,
                     runtime::Footprint& out) const override;
};

}  // namespace anyp::threads
