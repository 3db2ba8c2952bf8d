// mpi_engine.cpp — one run on the MPI engine: start-up checks, the rank's
// VM, the end of the run, and the exchanges that make every process's
// result the same.
#include "engines/mpi/mpi_engine.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>

#include "common/internal_check.hpp"
#include "engines/mpi/exchange.hpp"
#include "engines/mpi/mpi_fabric.hpp"
#include "engines/mpi/mpi_world.hpp"
#include "engines/mpi/quiescence.hpp"
#include "engines/mpi/watchdog.hpp"
#include "engines/mpi/window.hpp"
#include "runtime/collective_tracker.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::mpi {
namespace {

using runtime::CollectiveTracker;
using Verdict = Quiescence::Verdict;

// FNV-1a over everything that must agree for the processes' windows and
// code to line up.
std::uint64_t layout_hash(const runtime::Executable& exec) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<const unsigned char*>(p)[i];
      h *= 1099511628211ull;
    }
  };
  auto mix_int = [&mix](std::int64_t v) { mix(&v, sizeof v); };
  mix(exec.program.data(), exec.program.size());
  mix_int(exec.world_size);
  mix_int(exec.window_bytes);
  for (const auto& b : exec.buffers) {
    mix(b.name.data(), b.name.size());
    mix_int(b.offset);
    mix_int(b.bytes);
    mix_int(static_cast<std::int64_t>(b.dtype));
    mix_int(b.signal);
    mix_int(b.credit_only);
  }
  for (const auto& c : exec.codes) {
    mix(c.function.data(), c.function.size());
    mix_int(static_cast<std::int64_t>(c.instrs.size()));
    mix_int(static_cast<std::int64_t>(c.collectives.size()));
  }
  for (const auto& dispatches : exec.ranks) mix_int(static_cast<std::int64_t>(dispatches.size()));
  return h;
}

// Matches every rank's builtin collective calls (each process journaled
// its own): "" or the first mismatch as a run error; `all` keeps them all
// for a deadlock report. When every process journaled the same calls (the
// usual end of a run) there is nothing to match, and `all` stays empty.
std::string match_collectives(const runtime::Executable& exec, MPI_Comm comm,
                              const CollectiveTracker& mine, CollectiveTracker& all) {
  Packer out;  // this rank's calls, without the rank (one per journal)
  out.put(static_cast<std::uint64_t>(mine.journal().size()));
  for (const auto& e : mine.journal()) {
    out.put(e.buffer).put(e.desc).put(e.site.code).put(e.site.site);
    out.put(e.windows).put(e.repeat);
  }
  const std::vector<std::string> journals = allgather(comm, out.bytes());
  if (std::all_of(journals.begin(), journals.end(),
                  [&](const std::string& j) { return j == journals.front(); }))
    return "";
  std::string mismatch;
  for (std::size_t rank = 0; rank < journals.size(); ++rank) {
    Unpacker in(journals[rank]);
    for (auto n = in.get<std::uint64_t>(); n > 0; --n) {
      CollectiveTracker::Entry e;
      e.rank = static_cast<std::int64_t>(rank);
      e.buffer = in.get<std::int32_t>();
      e.desc = in.get<std::int32_t>();
      e.site.code = in.get<std::int32_t>();
      e.site.site = in.get<std::int32_t>();
      e.windows = in.get<runtime::CallWindows>();
      e.repeat = in.get<std::int64_t>();
      const std::string m = all.replay(e);
      if (!m.empty() && mismatch.empty())
        mismatch = runtime::run_error_where(exec, e.rank, e.site) + ": " + m;
    }
  }
  return mismatch;
}

// The first failing rank's message.
std::string failure_text(MPI_Comm comm, const std::string& mine) {
  for (const std::string& message : allgather(comm, mine))
    if (!message.empty()) return message;
  return "run error: a rank failed without a message";
}

// This rank's waits when the run stopped, by block: its one VM's, or each
// block's last refused wait (a block idle between launches waits for
// nothing).
std::vector<std::pair<std::int64_t, BlockedWait>> stopped_waits(const runtime::Executable& exec,
                                                                const MpiFabric& fabric) {
  std::vector<std::pair<std::int64_t, BlockedWait>> out;
  if (!fabric.has_blocks()) {
    if (fabric.blocked()) out.emplace_back(0, *fabric.blocked());
    return out;
  }
  for (std::size_t b = 0; b < fabric.block_waits().size(); ++b) {
    const std::optional<BlockedWait>& w = fabric.block_waits()[b];
    if (!w || (b > 0 && w->cell.buffer == exec.block_buffer)) continue;
    out.emplace_back(static_cast<std::int64_t>(b), *w);
  }
  return out;
}

// Every rank's waits (or none: finished), with every rank's notifies to them.
std::string deadlock_text(const runtime::Executable& exec, MPI_Comm comm, const MpiFabric& fabric,
                          const CollectiveTracker& all) {
  Packer mine;
  const auto stopped = stopped_waits(exec, fabric);
  mine.put<std::int64_t>(static_cast<std::int64_t>(stopped.size()));
  for (const auto& [block, b] : stopped) {
    mine.put(block).put_string(b.where).put(b.cmp).put(b.expected).put(b.current);
    mine.put(b.cell.owner).put(b.cell.buffer).put(b.cell.offset);
  }
  const auto world = static_cast<std::size_t>(exec.world_size);
  struct Waiting {
    std::int64_t rank = 0, block = 0;
    BlockedWait wait;
  };
  std::vector<Waiting> waits;  // in rank order, then block order
  std::vector<std::string> blobs = allgather(comm, mine.bytes());
  for (std::size_t r = 0; r < world; ++r) {
    Unpacker in(blobs[r]);
    const auto n = in.get<std::int64_t>();
    for (std::int64_t k = 0; k < n; ++k) {
      Waiting w;
      w.rank = static_cast<std::int64_t>(r);
      w.block = in.get<std::int64_t>();
      w.wait.where = in.get_string();
      w.wait.cmp = in.get<ir::WaitKind>();
      w.wait.expected = in.get<std::int64_t>();
      w.wait.current = in.get<std::int32_t>();
      w.wait.cell.owner = in.get<std::int64_t>();
      w.wait.cell.buffer = in.get<std::int32_t>();
      w.wait.cell.offset = in.get<std::int64_t>();
      waits.push_back(std::move(w));
    }
  }
  // What this rank did to each waited cell.
  Packer tallies;
  const RunRecord& record = fabric.record();
  for (const auto& w : waits)
    tallies.put(record.notified(w.wait.cell)).put<std::uint8_t>(record.wrote_as_data(w.wait.cell));
  std::vector<runtime::ParkedWait> parked(waits.size());
  for (std::size_t i = 0; i < waits.size(); ++i) {
    const BlockedWait& b = waits[i].wait;
    parked[i] = runtime::ParkedWait{b.where, b.cmp, b.expected, b.current, {}, {}};
  }
  blobs = allgather(comm, tallies.bytes());
  for (std::size_t q = 0; q < world; ++q) {  // notifier q, in rank order
    Unpacker in(blobs[q]);
    for (std::size_t i = 0; i < waits.size(); ++i) {
      const auto t = in.get<runtime::NotifierTally>();
      if (t.adds_up + t.adds_down + t.sets > 0) parked[i].notifiers.push_back(t);
      if (in.get<std::uint8_t>()) parked[i].data_writers.push_back(static_cast<std::int64_t>(q));
    }
  }
  std::vector<const runtime::ParkedWait*> report(world, nullptr);
  std::vector<runtime::BlockWait> blocks;
  std::vector<char> finished(world, 1);
  for (std::size_t i = 0; i < waits.size(); ++i) {
    const auto r = static_cast<std::size_t>(waits[i].rank);
    finished[r] = 0;
    if (waits[i].block == 0) {
      report[r] = &parked[i];
    } else {
      blocks.push_back(runtime::BlockWait{waits[i].rank, waits[i].block, &parked[i]});
    }
  }
  return runtime::deadlock_report(report, all.unfinished_calls(finished), blocks);
}

// "host tensor 'y' (element [1, 0, 3] on)": where a host byte range starts.
std::string host_text(const runtime::Executable& exec, const HostRange& r) {
  const runtime::HostArgSpec& arg = exec.host_args[static_cast<std::size_t>(r.arg)];
  const auto flat = r.offset / static_cast<std::int64_t>(dtype_bytes(arg.dtype));
  return "host tensor '" + arg.name + "' (from element " +
         runtime::list_text(runtime::unflatten(flat, arg.shape)) + ")";
}

// The first overlap of a range in `a` (rank ra) with one in `b` (rank rb),
// both sorted and coalesced; nullptr if none.
const HostRange* first_overlap(const std::vector<HostRange>& a, const std::vector<HostRange>& b) {
  for (const HostRange& x : a)
    for (const HostRange& y : b)
      if (x.arg == y.arg && x.offset < y.offset + y.bytes && y.offset < x.offset + x.bytes)
        return x.offset >= y.offset ? &x : &y;
  return nullptr;
}

// Host tensors are per process during a run: every rank's writes are sent
// to every process and applied (all processes end alike). Returns "" or a
// run error when the per-process copies cannot give the threads engine's
// answer: two ranks wrote the same bytes (which survives would not follow
// the program's order), or a rank read bytes another rank wrote (it saw the
// value from before the run).
std::string merge_host_tensors(const runtime::Executable& exec, MPI_Comm comm,
                               const MpiFabric& fabric,
                               std::span<const HostTensor* const> host_args) {
  Packer mine;
  const RunRecord& record = fabric.record();
  const std::vector<HostRange> writes = record.host_writes(), reads = record.host_reads();
  mine.put(static_cast<std::uint64_t>(reads.size()));
  for (const HostRange& r : reads) mine.put(r);
  mine.put(static_cast<std::uint64_t>(writes.size()));
  for (const HostRange& w : writes) {
    mine.put(w);
    mine.put_bytes(host_args[static_cast<std::size_t>(w.arg)]->data() + w.offset,
                   static_cast<std::size_t>(w.bytes));
  }
  const std::vector<std::string> blobs = allgather(comm, mine.bytes());
  const std::size_t world = blobs.size();
  std::vector<std::vector<HostRange>> all_reads(world), all_writes(world);
  std::vector<std::vector<const char*>> data(world);
  for (std::size_t r = 0; r < world; ++r) {
    Unpacker in(blobs[r]);
    for (auto n = in.get<std::uint64_t>(); n > 0; --n) all_reads[r].push_back(in.get<HostRange>());
    for (auto n = in.get<std::uint64_t>(); n > 0; --n) {
      all_writes[r].push_back(in.get<HostRange>());
      data[r].push_back(in.take(static_cast<std::size_t>(all_writes[r].back().bytes)));
    }
  }
  const std::string per_process =
      "; on the MPI engine each process holds its own copy of the host tensors during a run";
  for (std::size_t a = 0; a < world; ++a) {
    for (std::size_t b = 0; b < world; ++b) {
      if (a == b) continue;
      if (a < b) {
        if (const HostRange* at = first_overlap(all_writes[a], all_writes[b])) {
          return "run error: engine 'mpi': ranks " + std::to_string(a) + " and " +
                 std::to_string(b) + " both wrote " + host_text(exec, *at) + per_process +
                 ", so which write survives would not follow the program's order: give each "
                 "rank its own part of a host output (slice it by rank, y[r])";
        }
      }
      if (const HostRange* at = first_overlap(all_reads[a], all_writes[b])) {
        return "run error: engine 'mpi': rank " + std::to_string(a) + " read " +
               host_text(exec, *at) + " that rank " + std::to_string(b) + " wrote in the same run" +
               per_process + ", so rank " + std::to_string(a) + " cannot see rank " +
               std::to_string(b) +
               "'s write: pass data between ranks through windows (put/get), not host tensors";
      }
    }
  }
  for (std::size_t r = 0; r < world; ++r) {
    for (std::size_t i = 0; i < all_writes[r].size(); ++i) {
      const HostRange& w = all_writes[r][i];
      std::memcpy(host_args[static_cast<std::size_t>(w.arg)]->data() + w.offset, data[r][i],
                  static_cast<std::size_t>(w.bytes));
    }
  }
  return "";
}

}  // namespace

namespace {

// A session's window: the runs of one program on it keep their windows.
class PersistentWindow final : public runtime::PersistentWindows {
 public:
  PersistentWindow(const runtime::Executable& exec, MPI_Comm comm)
      : exec_(exec), comm_(comm), window_(comm, exec.window_bytes) {}
  void reset() override { window_.zero(comm_, exec_.window_bytes); }
  Window& window() { return window_; }
  const runtime::Executable* exec() const { return &exec_; }

 private:
  const runtime::Executable& exec_;
  MPI_Comm comm_;
  Window window_;
};

}  // namespace

std::unique_ptr<runtime::PersistentWindows> MpiEngine::make_persistent_windows(
    const runtime::Executable& exec) const {
  return std::make_unique<PersistentWindow>(exec, World::get().windows());
}

std::string MpiEngine::check(const runtime::Executable& exec) const {
  for (const runtime::LoweredCode& code : exec.codes) {
    if (code.host_workers.empty()) continue;
    return "engine 'mpi': '" + exec.program + "' calls host worker '" + code.function +
           "', which takes every rank's results in one process; the MPI engine keeps each "
           "rank's host tensors in its own process: run it on the threads engine";
  }
  const World& world = World::get();
  if (world.size() == exec.world_size) return "";
  return "engine 'mpi': '" + exec.program +
         "' was compiled for P = " + std::to_string(exec.world_size) +
         " ranks, but the MPI world has " + std::to_string(world.size()) +
         " processes; start it with mpirun -n " + std::to_string(exec.world_size) +
         " (the MPI engine runs one rank per process)";
}

std::vector<std::string> MpiEngine::gather_over_processes(const std::string& mine) const {
  return allgather(World::get().control(), mine);
}

void MpiEngine::add_footprint(const runtime::Executable& exec,
                              const runtime::EngineOptions& options,
                              runtime::Footprint& out) const {
  if (options.windows == nullptr) runtime::add_window_footprint(exec, 1, out);
  runtime::add_vm_footprint(exec, exec.blocks, out);  // this process's rank's blocks
}

void MpiEngine::sum_over_processes(std::span<std::int64_t> counters) const {
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, counters.data(), static_cast<int>(counters.size()),
                          MPI_INT64_T, MPI_SUM, World::get().control()),
            "MPI_Allreduce");
}

namespace {

// How this process's rank ended: all its VMs done, one failed (its error),
// or stopped in a wait because the waves ended the run.
struct RankOutcome {
  runtime::RankVm::Outcome outcome = runtime::RankVm::Outcome::Done;
  std::string error;
  std::int64_t instructions = 0;
  std::int64_t preemptions = 0;
};

// Runs the rank: one VM whose waits block in the fabric, or, for a
// multi-block program, one VM per block, round-robin, whose waits return at
// once; when no block can move the fabric stalls (and may end the run).
RankOutcome run_rank(const runtime::Executable& exec, const runtime::RunContext& ctx,
                     MpiFabric& fabric, std::int64_t rank, std::int64_t budget) {
  using Outcome = runtime::RankVm::Outcome;
  RankOutcome out;
  std::vector<runtime::RankVm> vms;
  vms.reserve(static_cast<std::size_t>(exec.blocks));
  for (std::int64_t b = 0; b < exec.blocks; ++b) vms.emplace_back(b * exec.world_size + rank, &ctx);
  if (exec.blocks > 1) fabric.set_blocks(exec.blocks);
  std::vector<char> done(vms.size(), 0);
  std::size_t finished = 0;
  auto total = [&] {
    for (const auto& vm : vms) out.instructions += vm.instructions();
    return out;
  };
  for (;;) {
    bool moved = false;
    for (std::size_t b = 0; b < vms.size(); ++b) {
      if (done[b]) continue;
      const std::uint64_t progress = fabric.progress();
      const std::int64_t before = vms[b].instructions();
      const Outcome o = vms[b].run(budget);
      // A parked VM resumed re-runs its wait: one instruction, no progress.
      moved = moved || o != Outcome::Parked || fabric.progress() != progress ||
              vms[b].instructions() - before > 1;
      if (o == Outcome::Failed) {
        out.outcome = Outcome::Failed;
        out.error = vms[b].error();
        return total();
      }
      if (o == Outcome::Yield) {
        ++out.preemptions;
        fabric.flush_outstanding();
        fabric.poke();
      }
      if (o == Outcome::Done) {
        done[b] = 1;
        ++finished;
      }
      // One VM blocks in the fabric: Parked means the waves ended the run.
      if (o == Outcome::Parked && vms.size() == 1) {
        out.outcome = Outcome::Parked;
        return total();
      }
    }
    if (finished == vms.size()) return total();
    if (moved) {
      fabric.unstalled();
    } else if (fabric.stalled() != Quiescence::Verdict::Continue) {
      out.outcome = Outcome::Parked;
      return total();
    }
  }
}

}  // namespace

runtime::EngineResult MpiEngine::run(const runtime::Executable& exec,
                                     std::span<const HostTensor* const> host_args,
                                     const runtime::EngineOptions& options,
                                     const runtime::Observers& observers) {
  World& world = World::get();
  const MPI_Comm control = world.control();
  runtime::EngineResult result;
  result.workers = 1;
  result.vms_at_most = exec.blocks;  // this process: its rank's blocks
  // First: the start-up exchanges below would block for good if another
  // process never reached them (it failed on its own before its run).
  std::atomic<std::uint64_t> heartbeat{0};
  Watchdog watchdog(heartbeat, world.rank());
  if (!same_everywhere(control, layout_hash(exec))) {
    result.failure =
        "run error: engine 'mpi': the processes compiled different programs for '" + exec.program +
        "' (their window layouts differ); every process must trace the same program with the "
        "same arguments and configuration";
    return result;
  }
  Window* kept = nullptr;
  if (options.windows != nullptr) {
    auto* persistent = dynamic_cast<PersistentWindow*>(options.windows);
    ANYP_CHECK(persistent != nullptr && persistent->exec() == &exec,
               "persistent windows of another engine or program");
    kept = &persistent->window();
  }
  Window& window = kept ? *kept : Window::for_run(world.windows(), exec.window_bytes);
  if (!same_everywhere(control, window.unified() ? 1 : 0) || !window.unified()) {
    result.failure =
        "run error: engine 'mpi': the MPI window uses the separate memory model "
        "(MPI_WIN_SEPARATE, osc component '" +
        window.component() +
        "'), in which a rank cannot poll its own signal cells; choose a component "
        "with the unified model (mpirun --mca osc rdma or --mca osc sm)";
    return result;
  }
  CollectiveTracker collectives(exec);
  collectives.journal_only();
  Quiescence waves(control, world.size());
  FabricSettings settings;
  settings.oversubscribed = world.oversubscribed();
  settings.heartbeat = &heartbeat;
  MpiFabric fabric(exec, host_args, world.rank(), window.win(), window.base(), waves, settings);
  if (kept != nullptr) {
    for (std::int32_t b : {exec.block_buffer, exec.order_buffer})
      if (b >= 0) fabric.zero_own_buffer(b);
    // Peers notify the order cells: none may before every process zeroed its own.
    if (exec.order_buffer >= 0) check_mpi(MPI_Barrier(world.windows()), "MPI_Barrier");
  }
  fabric.set_observers(observers);
  std::vector<runtime::LaunchSlot> launches(
      exec.blocks > 1 ? static_cast<std::size_t>(exec.world_size) : 0);
  const runtime::RunContext ctx{&exec, &fabric, &collectives,
                                launches.empty() ? nullptr : launches.data()};
  const RankOutcome ran = run_rank(exec, ctx, fabric, world.rank(), options.preempt_budget);
  const runtime::RankVm::Outcome outcome = ran.outcome;
  result.preemptions = ran.preemptions;
  fabric.flush_all();
  Verdict verdict = fabric.verdict();
  if (outcome == runtime::RankVm::Outcome::Parked) {
    ANYP_CHECK(verdict != Verdict::Continue, "a rank stopped in a wait with the run going on");
  } else {
    const auto state = outcome == runtime::RankVm::Outcome::Failed ? Quiescence::State::Failed
                                                                   : Quiescence::State::Done;
    while ((verdict = waves.tick(state, fabric.progress())) == Verdict::Continue) {
      fabric.poke();
      if (settings.oversubscribed) sched_yield();
    }
  }

  CollectiveTracker all_collectives(exec);
  const std::string mismatch = match_collectives(exec, control, collectives, all_collectives);
  // A mismatch first: the threads engine stops at it, so what went wrong
  // after it (a run error, a deadlock, wrong data) is its consequence.
  const std::string failed =
      verdict == Verdict::Failed
          ? failure_text(control,
                         outcome == runtime::RankVm::Outcome::Failed ? ran.error : std::string())
          : std::string();
  if (!mismatch.empty()) {
    result.failure = mismatch;
  } else if (verdict == Verdict::Failed) {
    result.failure = failed;
  } else if (verdict == Verdict::Deadlock) {
    result.failure = deadlock_text(exec, control, fabric, all_collectives);
    result.deadlocked = true;
  } else {
    const std::string unbalanced = all_collectives.unbalanced_calls();
    if (!unbalanced.empty()) result.failure = "run error: " + unbalanced;
  }
  if (result.failure.empty()) result.failure = merge_host_tensors(exec, control, fabric, host_args);
  result.instructions = ran.instructions;
  result.parks = fabric.blocked_waits();
  return result;
}

int world_rank() { return World::get().rank(); }
int world_size() { return World::get().size(); }

std::string details() {
  World& world = World::get();
  Window probe(world.windows(), 8);
  std::string text = "engine mpi: " + world.library() + ", osc component " + probe.component() +
                     ", " + (probe.unified() ? "unified" : "separate") + " memory model, " +
                     std::to_string(world.size()) + " processes";
  text += world.oversubscribed() ? " on " + std::to_string(world.node_cores()) +
                                       " cores (oversubscribed: waits yield the CPU)"
                                 : "";
  return text;
}

}  // namespace anyp::mpi
