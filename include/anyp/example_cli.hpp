// example_cli.hpp — the command line, output and exit codes shared by the
// ladder examples (docs/ladder-steps.md §1).
//
//   int main(int argc, char** argv) {
//     return anyp::cli::run_example(argc, argv,
//         {.name = "07_dynamic_rank_count", .step = 7, .modes = {"put", "get"}},
//         [](const anyp::cli::Options& opt) {
//           ... compile with opt.config(); if (opt.compile_only)
//               return anyp::cli::finish_compile_only(compiled, opt);
//           ... run, then
//           return anyp::cli::report({anyp::cli::check_exact("y", y, golden, P)});
//         });
//   }
//
// Exit codes: 0 OK; 1 golden mismatch, compile error, run-time failure or
// deadlock; 2 usage or configuration error (message on stderr).
//
// --dump-outputs DIR: every check_exact/check_close inside run_example also
// writes the checked tensor's raw bytes (row-major, its dtype's encoding) to
// DIR/<name>.bin (DIR is created; on the MPI engine process 0 writes), so
// that two implementations of one example (the C++ and the Python twin,
// tests/python/test_twins.py) can be compared bit for bit.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "anyp/compiled_program.hpp"
#include "anyp/host_tensor.hpp"
#include "anyp/run_config.hpp"
#include "anyp/verify.hpp"

namespace anyp::cli {

struct ExampleSpec {
  std::string name;                // "07_dynamic_rank_count"
  int step = 0;                    // NN: the default input seed
  std::vector<std::string> modes;  // first is the default; empty: no --mode
  std::vector<std::string> ops;    // --op values (first is default); empty: no --op
  std::vector<std::int64_t> default_devices{0, 1};
  // Pitfall programs (examples/pitfalls/): accept --fixed, which runs the
  // corrected code.
  bool has_fixed = false;
};

struct Options {
  // What the flags set in a run's configuration: -p, -d, --engine,
  // --workers, --schedule-seed, --check-races, --preempt-budget,
  // --model, --pct-seed, ... (the rows of ANYP_RUN_CONFIG_FIELDS that have
  // a flag); config() adds the modeled timeline that --cost, --timeline and
  // --trace ask for.
  RunConfig run;
  std::string mode;
  std::string op;
  bool compile_only = false;
  bool fixed = false;                  // --fixed (pitfall programs)
  std::uint32_t seed = 0;              // input generator seed (default: the step)
  std::string output_dir;              // --compile-only target and the task records (one dir per P)
  bool cost = false;                   // --cost: print the cost card after OK
  bool timeline = false;               // --timeline: print the modeled timeline after OK
  std::string trace;                   // --trace FILE: write it as a Chrome trace
  bool explain_collectives = false;    // --explain-collectives: the collective table after OK
  int explore = 0;                     // --explore N: run N PCT schedules
  bool verify = false;                 // --verify: every schedule up to equivalence (DPOR)
  std::int64_t verify_budget = 10000;  // --verify-budget N: at most N schedules
  bool float_adds_commute = false;     // --float-adds-commute: with --verify
  bool verbose = false;                // --verbose: the engine's details on stderr
  std::string dump_outputs;            // --dump-outputs DIR: checked outputs as DIR/<name>.bin
  // The flags given on the command line, by long name ("--workers",
  // "--device"): a program's own RunConfig is refused only for these.
  std::set<std::string> given;
  // This process's rank in the engine's world (0 on the threads engine).
  // Only process 0 prints (OK, cost card, errors): on the MPI engine every
  // process runs the same body and reaches the same outcome.
  int process_rank = 0;
  // Set by run_example while it explores: report() prints nothing on
  // success, and records the run's stats in `last_run` (shared, so the const
  // Options a body receives can carry it back).
  bool quiet = false;
  std::shared_ptr<RunStats> last_run = std::make_shared<RunStats>();

  std::int64_t world_size() const {
    return static_cast<std::int64_t>(run.distributed.device_ids.size());
  }
  RunConfig config() const;
};

// The first flag of `given` (Options::given), by its name in messages,
// that sets a field (its flag or set_by in ANYP_RUN_CONFIG_FIELDS) that
// `got` (a run's configuration) does not hold as `want` (the command
// line's) does; "" when there is none.
std::string flag_not_taken(const std::set<std::string>& given, const RunConfig& got,
                           const RunConfig& want);

// Thrown by parse() and by example bodies for usage/configuration errors
// (exit 2), e.g. a P constraint of the step.
struct UsageError {
  std::string message;
};

// Thrown by parse() for -h/--help: `usage` is the help text (run_example
// prints it to stdout and returns 0).
struct HelpRequested {
  std::string usage;
};

// One flag of the example command line, as --help shows it: its long name,
// whether it takes a value, the value's name and its help (anyp.runtime.cli
// offers the same flags from this list).
struct FlagHelp {
  std::string name;
  bool takes_value = false;
  std::string metavar;
  std::string help;
};
std::vector<FlagHelp> flag_help(const ExampleSpec& spec);

// Parses argv against `spec`. Throws UsageError (with the message to print)
// on a bad flag, a bad -d (empty, duplicate, negative, not a number) or P < 2,
// and HelpRequested for -h/--help. With --engine mpi, P is the MPI world's
// size (MPI starts here): -d, if given, must list that many devices.
Options parse(int argc, const char* const* argv, const ExampleSpec& spec);

// parse + body, mapping exceptions to messages and exit codes: UsageError and
// anyp::ConfigError -> stderr, 2; anyp::CompileError, RunError,
// DeadlockError, RaceError -> stderr, 1. --help prints usage and returns 0.
// With --explore N the body runs once to count the schedule's steps, then
// under N PCT schedules (seeds 1..N); it stops at the first that fails
// (golden mismatch, deadlock, race, run error) and prints the command that
// replays it (--pct-seed S --explore-depth D --pct-steps K); "OK" when all
// pass. With --verify the body runs once per schedule verify_schedules
// chooses (verify.hpp) and "OK" is followed by its "verified: ..." line;
// a failure prints the command that replays it (--replay-schedule S), a
// budget reached prints "not verified: ..." and returns 1.
int run_example(int argc, const char* const* argv, const ExampleSpec& spec,
                const std::function<int(const Options&)>& body);

// Golden checks. On failure print "<name> mismatch: max diff = <x> (P=<n>)"
// to stderr (x: shortest round-trip decimal) and return false.
bool check_exact(std::string_view name, const HostTensor& out, const HostTensor& golden,
                 std::int64_t world_size);
bool check_close(std::string_view name, const HostTensor& out, const HostTensor& golden,
                 std::int64_t world_size);
// The message a failed check prints (without the newline):
// "<name> mismatch: max diff = <x> (P=<n>)".
std::string mismatch_message(std::string_view name, const HostTensor& out, const HostTensor& golden,
                             std::int64_t world_size);
// Writes `out`'s raw bytes to dir/<name>.bin (creating dir); throws
// std::runtime_error naming the file when it cannot. check_exact/check_close
// call it under --dump-outputs.
void dump_output(const std::string& dir, std::string_view name, const HostTensor& out);
// The command that replays PCT schedule (seed, depth, steps): argv without
// its schedule flags (--explore, --explore-depth, --pct-seed, --pct-steps,
// --schedule-seed), shell-quoted where needed, then "--pct-seed S
// --explore-depth D --pct-steps K". argv[0] is the program.
std::string replay_command(const std::vector<std::string>& argv, std::uint64_t seed, int depth,
                           std::int64_t steps);
// What report() prints after "OK" for the flags given: --cost's cost card,
// --timeline's timeline (and, without --cost, the Auto choices),
// --explain-collectives' table (--trace writes its file besides).
std::string extras_text(const Options& options, const RunStats& stats);
// What --verbose prints (stderr, before the outcome) about the run on this
// machine: "the run: 0.404 ms wall on 2 workers, 1775 VM instructions, 7
// parks, 0 preemptions" (RunStats::run_seconds, workers and the counts; on
// the MPI engine the wall time is process 0's).
std::string run_measurement_text(const RunStats& stats);
// What --explore prints when schedule `failed` of `schedules` fails:
// "explore: schedule 3 of 5 (PCT seed 3, depth 3, 41 steps) failed; replay
// it with:\n  <the replay command>" (the calibration is "the calibration
// schedule (PCT seed 0, depth 1)"). argv[0] is the program.
std::string explore_failure_text(const RunConfig::Pct& failed, int schedules,
                                 const std::vector<std::string>& argv);
// What --verify prints when schedule `result.schedules` fails: "verify:
// schedule M failed (...); replay it with:\n  <argv without --verify and
// --verify-budget> --replay-schedule S". argv[0] is the program.
std::string verify_failure_text(const VerifyResult& result, const std::vector<std::string>& argv);
// Prints "OK" and returns 0 when every check passed, else returns 1.
int report(const std::vector<bool>& checks);
// As above; after "OK", with --cost the run's cost card, with --timeline
// its modeled timeline (timeline_output.hpp), and with --trace FILE the
// timeline written as a Chrome trace.
int report(const std::vector<bool>& checks, const Options& options, const RunStats& stats);
// The cost card: one row per rank (bytes in/out through peer windows, RMA
// ops, notifies to peers, local epilogue notifies "+E", waits) and a total;
// with a modeled timeline also the rank's modeled finish time (us) and
// rounds (the longest chain of notify -> wait edges between ranks), and in
// the total row the makespan and the run's rounds.
std::string cost_card(const RunStats& stats);
// Writes the artifact to the options' output dir, prints
// "compile_only done: <dir>" and returns 0.
int finish_compile_only(CompiledProgram& compiled, const Options& options);

}  // namespace anyp::cli
