// example_cli.cpp — the command line shared by the ladder examples (CLI11),
// their golden checks, OK/mismatch output and exit codes (docs/ladder-steps.md §1,
// docs/api.md §18; declared in include/anyp/example_cli.hpp). The -d device
// lists are parsed in device_list.cpp; --explore runs anyp::explore_schedules
// (src/api/explore.cpp).
#include "anyp/example_cli.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "anyp/engines.hpp"
#include "anyp/errors.hpp"
#include "anyp/explore.hpp"
#include "anyp/timeline_output.hpp"
#include "anyp/verify.hpp"
#include "cli/device_list.hpp"

namespace anyp::cli {
namespace {

// Only process 0 of the engine's world prints (see Options::process_rank).
int g_process_rank = 0;
std::ostream null_stream(nullptr);
std::ostream& out() { return g_process_rank == 0 ? std::cout : null_stream; }
std::ostream& err() { return g_process_rank == 0 ? std::cerr : null_stream; }

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i != 0) s += ", ";
    s += items[i];
  }
  return s;
}

// A CLI11 transform that accepts only a plain decimal integer in [0, max]
// and strips its leading zeros, so that CLI11's conversion (strtoull with
// base 0, which saturates silently) never reads "010" as octal, "0x10" as hex
// or 2^64 as 2^64-1. (A transform, not a check: CLI11 discards what a check
// does to the string.)
CLI::Validator decimal_integer(std::uint64_t max) {
  return CLI::Validator(
      [max](std::string& value) -> std::string {
        const bool digits = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
          return c >= '0' && c <= '9';
        });
        if (!digits) return "'" + value + "' is not a non-negative integer";
        const auto first = value.find_first_not_of('0');
        value = first == std::string::npos ? "0" : value.substr(first);
        std::uint64_t parsed = 0;
        const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
        if (ec != std::errc{} || parsed > max) {
          return value + " is out of range (at most " + std::to_string(max) + ")";
        }
        return {};
      },
      "", "decimal integer");
}

CLI::Validator at_least_one() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return value == "0" ? "must be at least 1, got 0" : std::string{};
      },
      "", "at least 1");
}

// The platform, as compile() checks it (check_config: the shipped models).
void check_platform(const std::string& platform) {
  RunConfig config;
  config.platform = platform;
  if (const std::optional<ConfigProblem> p = check_config(config); p && p->field == "platform")
    throw UsageError{p->message};
}

// A flag column's long name ("--device" of "--device,-d") and the name
// messages use (its last: "-d").
std::string long_name(std::string_view names) {
  for (std::size_t at = 0; at < names.size();) {
    const std::size_t end = std::min(names.find(',', at), names.size());
    if (names.substr(at, 2) == "--") return std::string(names.substr(at, end - at));
    at = end + 1;
  }
  return "";
}
std::string message_name(std::string_view names) {
  const std::size_t comma = names.rfind(',');
  return std::string(comma == std::string_view::npos ? names : names.substr(comma + 1));
}

// The long flags of a field that were given: its flag, then its set_by.
std::vector<std::string> given_flags(const std::set<std::string>& given, std::string_view flag,
                                     std::string_view set_by) {
  std::vector<std::string> out;
  if (!flag.empty() && given.count(long_name(flag)) > 0) out.push_back(message_name(flag));
  for (std::size_t at = 0; at < set_by.size();) {
    const std::size_t end = std::min(set_by.find(' ', at), set_by.size());
    const std::string f(set_by.substr(at, end - at));
    if (given.count(f) > 0) out.push_back(f);
    at = end + 1;
  }
  return out;
}

// The flag that sets RunConfig field `member` (ConfigProblem::field), by
// its long name; "" for a field without a flag of its own.
std::string flag_of(const std::string& member) {
  std::string found;
#define ANYP_FLAG_OF(key, m, flag, set_by, one_process, metavar, kind, help) \
  if (member == #m && std::string_view(flag) != "") {                        \
    found = flag;                                                            \
  }
  ANYP_RUN_CONFIG_FIELDS(ANYP_FLAG_OF)
#undef ANYP_FLAG_OF
  return long_name(found);
}

// How the command line reads a RunConfig field (ANYP_RUN_CONFIG_FIELDS' kind).
enum class FieldKind { Text, Devices, Engine, Count, Seed, Steps, Size, Switch, None };

// Registers RunConfig field `member` under its flag: a switch, a decimal
// integer (at least 1 for a Count), a size, or a text (its default shown
// when it has one).
template <class T>
CLI::Option* add_field(CLI::App& app, const char* flag, T& member, FieldKind kind,
                       const char* metavar, const std::string& help) {
  CLI::Option* o = nullptr;
  if constexpr (std::is_same_v<T, bool>) {
    o = app.add_flag(flag, member, help);
  } else if constexpr (std::is_integral_v<T>) {
    o = app.add_option(flag, member, help);
    if (kind == FieldKind::Size) {
      o->transform(CLI::AsSizeValue(false))->check(CLI::NonNegativeNumber);
    } else {
      if (member != 0) o->capture_default_str();
      o->transform(decimal_integer(static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
      if (kind == FieldKind::Count) o->check(at_least_one());
    }
  } else {
    o = app.add_option(flag, member, help);
    if (!member.empty()) o->capture_default_str();
  }
  if (*metavar != '\0') o->type_name(metavar);
  return o;
}

void check_choice(const char* flag, const std::string& value,
                  const std::vector<std::string>& choices) {
  if (std::find(choices.begin(), choices.end(), value) == choices.end()) {
    throw UsageError{std::string(flag) + ": '" + value + "' is not one of " + join(choices)};
  }
}

// The shortest decimal that reads back as exactly `x`.
std::string shortest(double x) {
  char buf[64];
  const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc{} ? std::string(buf, ptr) : std::to_string(x);
}

}  // namespace

std::string mismatch_message(std::string_view name, const HostTensor& out, const HostTensor& golden,
                             std::int64_t world_size) {
  return std::string(name) + " mismatch: max diff = " + shortest(max_abs_diff(out, golden)) +
         " (P=" + std::to_string(world_size) + ")";
}

void dump_output(const std::string& dir, std::string_view name, const HostTensor& out) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = (std::filesystem::path(dir) / (std::string(name) + ".bin")).string();
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.nbytes()));
  if (!file) throw std::runtime_error("--dump-outputs: cannot write '" + path + "'");
}

RunConfig Options::config() const {
  RunConfig config = run;
  config.timeline = cost || timeline || !trace.empty();
  // A trace shows every op, --timeline the critical path, --cost figures.
  config.timeline_detail = !trace.empty() ? "ops" : timeline ? "path" : "figures";
  // The task records (--dep-gen, --scope-stats, --swimlane) go under the
  // output folder, --output-dir's or its default.
  if (config.output_dir.empty() && config.writes_task_records()) config.output_dir = output_dir;
  return config;
}

std::string flag_not_taken(const std::set<std::string>& given, const RunConfig& got,
                           const RunConfig& want) {
#define ANYP_FLAG_NOT_TAKEN(key, member, flag, set_by, one_process, metavar, kind, help) \
  if (got.member != want.member) {                                                       \
    const std::vector<std::string> flags = given_flags(given, flag, set_by);             \
    if (!flags.empty()) return flags.front();                                            \
  }
  ANYP_RUN_CONFIG_FIELDS(ANYP_FLAG_NOT_TAKEN)
#undef ANYP_FLAG_NOT_TAKEN
  return "";
}

namespace {

// The devices of a run on a multi-process engine: P is the world's size
// (starting the engine's world here), and -d, if given, must list P ids.
std::vector<std::int64_t> world_devices(Options& options, const std::string& devices) {
  const ProcessWorld world = process_world(options.run.engine);
  options.process_rank = world.rank;
  g_process_rank = world.rank;
  if (world.size < 2) {
    throw UsageError{"need at least 2 ranks, but the MPI world has " + std::to_string(world.size) +
                     " process: start the example under mpirun -n P with P >= 2"};
  }
  return world_device_list(devices, world.size);
}

// Flags that set a field that applies to the threads engine only (its
// one_process column), refused when given on an engine that runs one rank
// per process.
void check_one_process_options(const Options& options) {
#define ANYP_ONE_PROCESS(key, member, flag, set_by, one_process, metavar, kind, help)      \
  if (one_process) {                                                                       \
    const std::vector<std::string> flags = given_flags(options.given, flag, set_by);       \
    if (!flags.empty()) {                                                                  \
      throw UsageError{flags.front() +                                                     \
                       ": needs every rank in one process (--engine threads); --engine " + \
                       options.run.engine + " runs one rank per process"};                 \
    }                                                                                      \
  }
  ANYP_RUN_CONFIG_FIELDS(ANYP_ONE_PROCESS)
#undef ANYP_ONE_PROCESS
}

}  // namespace

namespace {

// The example command line's flags, on `app`, bound to `options` (-d to
// `devices`, read once the engine is known).
void add_flags(CLI::App& app, Options& options, std::string& devices, const ExampleSpec& spec) {
  const std::vector<std::string> engines = available_engines();
  const auto field_help = [&](FieldKind kind, std::string help) {
    if (kind == FieldKind::Devices)
      help += " (default: " + device_ids_text(spec.default_devices, ",") + ")";
    if (kind == FieldKind::Engine) help += " (engines in this build: " + join(engines) + ")";
    return help;
  };
#define ANYP_ADD_FIELD(key, member, flag, set_by, one_process, metavar, kind, help)       \
  if (FieldKind::kind == FieldKind::Devices) {                                            \
    app.add_option(flag, devices, field_help(FieldKind::kind, help))->type_name(metavar); \
  } else if (FieldKind::kind != FieldKind::None) {                                        \
    add_field(app, flag, options.run.member, FieldKind::kind, metavar,                    \
              field_help(FieldKind::kind, help));                                         \
  }
  ANYP_RUN_CONFIG_FIELDS(ANYP_ADD_FIELD)
#undef ANYP_ADD_FIELD
  if (!spec.modes.empty()) {
    app.add_option("--mode", options.mode, "One of: " + join(spec.modes))->capture_default_str();
  }
  if (!spec.ops.empty()) {
    app.add_option("--op", options.op, "Reduction: one of " + join(spec.ops))
        ->capture_default_str();
  }
  if (spec.has_fixed) {
    app.add_flag("--fixed", options.fixed, "Run the corrected program instead of the pitfall");
  }
  app.add_flag("--cost", options.cost,
               "After OK, print the cost card counted from the run (per rank and total), with "
               "the modeled time and rounds");
  app.add_flag("--timeline", options.timeline,
               "After OK, print the run's modeled timeline: per-rank finish, busy and wait time, "
               "and the critical path");
  app.add_option("--trace", options.trace,
                 "Write the modeled timeline to FILE as a Chrome trace (Perfetto): a track per "
                 "rank, a slice per op, notify -> wait arrows")
      ->type_name("FILE");
  app.add_flag("--explain-collectives", options.explain_collectives,
               "After OK (or with --compile-only), print every collective call's algorithm and "
               "each candidate algorithm's modeled time");
  app.add_flag("--compile-only", options.compile_only,
               "Validate, specialise and compile for P, write the artifact, do not run");
  app.add_option("--seed", options.seed, "Input generator seed (default: the step number)")
      ->capture_default_str()
      ->transform(decimal_integer(UINT32_MAX));
  app.add_option("--explore", options.explore,
                 "Run N PCT schedules on one worker; stop at the first failure and print "
                 "the command that replays it")
      ->type_name("N")
      ->transform(decimal_integer(INT_MAX))
      ->check(at_least_one());
  app.add_flag("--verify", options.verify,
               "Run every schedule up to equivalence (DPOR, one worker, op by op, under the race "
               "checker); print what was proved, or the first failure and the command that "
               "replays it");
  app.add_option("--verify-budget", options.verify_budget,
                 "At most N schedules for --verify (default 10000)")
      ->type_name("N")
      ->transform(decimal_integer(INT64_MAX))
      ->check(at_least_one());
  app.add_flag("--float-adds-commute", options.float_adds_commute,
               "With --verify: take floating-point atomic adds to the same bytes as commuting "
               "(their orders differ only in rounding): one trace for all their orders");
  app.add_flag("--verbose", options.verbose,
               "Print which engine runs the program and how it moves data (stderr)");
  app.add_option("--dump-outputs", options.dump_outputs,
                 "Write each checked output's raw bytes to DIR/<name>.bin (to compare two "
                 "implementations bit for bit)")
      ->type_name("DIR");
  app.add_option(
      "--output-dir", options.output_dir,
      "Where --compile-only, --dep-gen, --scope-stats and --swimlane write (default: anyp_out/" +
          spec.name + "/P<P>-<platform>)");
}

}  // namespace

std::vector<FlagHelp> flag_help(const ExampleSpec& spec) {
  Options options;
  std::string devices;
  CLI::App app{"anyp ladder example " + spec.name, spec.name};
  add_flags(app, options, devices, spec);
  std::vector<FlagHelp> out;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_name() == "--help") continue;
    out.push_back(FlagHelp{o->get_name(), o->get_items_expected_min() > 0, o->get_type_name(),
                           o->get_description()});
  }
  return out;
}

Options parse(int argc, const char* const* argv, const ExampleSpec& spec) {
  Options options;
  options.seed = static_cast<std::uint32_t>(spec.step);
  if (!spec.modes.empty()) options.mode = spec.modes.front();
  if (!spec.ops.empty()) options.op = spec.ops.front();

  CLI::App app{"anyp ladder example " + spec.name, spec.name};
  std::string devices;  // -d, read after the engine is known
  add_flags(app, options, devices, spec);
  const std::vector<std::string> engines = available_engines();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    throw HelpRequested{app.help()};
  } catch (const CLI::CallForAllHelp&) {
    throw HelpRequested{app.help("", CLI::AppFormatMode::All)};
  } catch (const CLI::ParseError& e) {
    throw UsageError{std::string(e.what()) + "\nrun with --help for usage"};
  }

  for (const CLI::Option* o : app.get_options())
    if (o->count() > 0) options.given.insert(o->get_name());
  const auto given = [&](const char* flag) { return options.given.count(flag) > 0; };
  RunConfig& run = options.run;
  check_platform(run.platform);
  if (std::find(engines.begin(), engines.end(), run.engine) == engines.end()) {
    try {
      process_world(run.engine);  // throws the reason
    } catch (const ConfigError& e) {
      throw UsageError{std::string("--engine: ") + e.what()};
    }
  }
  const EngineTraits* engine = engine_traits(run.engine);
  if (engine != nullptr && engine->ranks_in_one_process) {
    run.distributed.device_ids =
        given("--device") ? parse_device_list(devices) : spec.default_devices;
  } else {
    run.distributed.device_ids = world_devices(options, given("--device") ? devices : "");
    check_one_process_options(options);
  }
  check_device_ids(run.distributed.device_ids);
  if (!spec.modes.empty()) check_choice("--mode", options.mode, spec.modes);
  if (!spec.ops.empty()) check_choice("--op", options.op, spec.ops);
  run.deterministic = given("--schedule-seed");
  run.pct.enabled = given("--pct-seed");
  const int schedules = given("--schedule-seed") + given("--explore") + given("--pct-seed") +
                        given("--replay-schedule") + given("--verify");
  if (schedules > 1) {
    throw UsageError{
        "--schedule-seed, --explore, --pct-seed, --replay-schedule and --verify each choose the "
        "schedule; give one"};
  }
  if (given("--verify-budget") && !options.verify) {
    throw UsageError{"--verify-budget: only meaningful with --verify"};
  }
  if (given("--float-adds-commute") && !options.verify) {
    throw UsageError{"--float-adds-commute: only meaningful with --verify"};
  }
  if (options.verify) run.check_races = true;
  if (given("--pct-steps") && !run.pct.enabled) {
    throw UsageError{"--pct-steps: only meaningful with --pct-seed"};
  }
  if (given("--explore-depth") && !run.pct.enabled && !given("--explore")) {
    throw UsageError{"--explore-depth: only meaningful with --explore or --pct-seed"};
  }
  if (given("--output-dir") && !options.compile_only && !run.writes_task_records()) {
    throw UsageError{
        "--output-dir: only meaningful with --compile-only, --dep-gen, --scope-stats or "
        "--swimlane (a plain run writes nothing)"};
  }
  if (!run.model_file.empty() && !options.cost && !options.timeline && options.trace.empty() &&
      !options.explain_collectives) {
    throw UsageError{
        "--model: only meaningful with --cost, --timeline, --trace or --explain-collectives (it "
        "prices the modeled timeline)"};
  }
  // The trace is written after the run: a path that cannot be written is
  // refused before it (on one process: the first writes it). The check
  // leaves no file behind (a trace refused for its size writes nothing).
  if (!options.trace.empty() && options.process_rank == 0) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(options.trace, ec);
    if (!std::ofstream(options.trace, std::ios::app))
      throw UsageError{"--trace: cannot write '" + options.trace + "'"};
    if (!existed) std::filesystem::remove(options.trace, ec);
  }
  if (!options.dump_outputs.empty() && options.process_rank == 0) {
    std::error_code ec;
    std::filesystem::create_directories(options.dump_outputs, ec);
    if (!std::filesystem::is_directory(options.dump_outputs)) {
      throw UsageError{"--dump-outputs: cannot create directory '" + options.dump_outputs + "'"};
    }
  }
  if (!given("--output-dir") || options.output_dir.empty()) {
    options.output_dir =
        "anyp_out/" + spec.name + "/P" + std::to_string(options.world_size()) + "-" + run.platform;
  }
  // Whatever the checks above let through, compile() would refuse: say so
  // now, with the flag that set it.
  if (const std::optional<ConfigProblem> p = check_config(options.config())) {
    const std::string flag = flag_of(p->field);
    throw UsageError{(flag.empty() ? "" : flag + ": ") + p->message};
  }
  return options;
}

namespace {

// The program body that run_example is running: its options, and the last
// run it made (from the run listener, compiled_program.hpp), so that the
// flags that print or check a run take effect without the body's help.
struct BodyRun {
  const Options* options = nullptr;
  std::mutex mutex;
  std::optional<RunConfig> config;  // the last run's
  std::optional<RunStats> stats;
};
BodyRun* g_body = nullptr;

// "" when the body's last run took the command line's configuration in
// everything a flag sets, else why a flag given would not take effect.
std::string flags_not_honoured(const Options& options) {
  if (g_body == nullptr) return "";
  std::lock_guard<std::mutex> lock(g_body->mutex);
  const bool printing = options.cost || options.timeline || !options.trace.empty();
  if (!g_body->config) {
    if (!printing) return "";
    return std::string(options.cost       ? "--cost"
                       : options.timeline ? "--timeline"
                                          : "--trace") +
           ": the program reported its outcome, but no anyp run finished (no CompiledProgram or "
           "Session run), so there is no run to print";
  }
  const std::string flag = flag_not_taken(options.given, *g_body->config, options.config());
  if (flag.empty()) return "";
  return flag +
         ": the program ran with a RunConfig of its own, not the command line's, so the flag "
         "would not take effect; compile with opt.config() (anyp::cli::Options::config()), or "
         "start from it and change only what the flags do not set";
}

// Runs `body`, mapping exceptions to messages and exit codes (see the header).
int guarded(const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    err() << e.message << '\n';
    return 2;
  } catch (const anyp::ConfigError& e) {
    err() << e.what() << '\n';
    return 2;
  } catch (const anyp::CompileError& e) {
    err() << e.what() << '\n';
    return 1;
  } catch (const anyp::RunError& e) {  // DeadlockError, RaceError too
    err() << e.what() << '\n';
    return 1;
  } catch (const std::exception& e) {
    err() << "error: " << e.what() << '\n';
    return 1;
  } catch (...) {
    err() << "error: unknown exception\n";
    return 1;
  }
}

}  // namespace

namespace {

// argv without the flags `valued` (each with its value, given as "--f v" or
// "--f=v") and `switches`, shell-quoted where needed.
std::string command_without(const std::vector<std::string>& argv,
                            const std::set<std::string>& valued,
                            const std::set<std::string>& switches) {
  auto quote = [](const std::string& a) {
    if (!a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789-_=.,/:+") == std::string::npos)
      return a;
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  };
  std::string cmd = quote(argv[0]);
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    const std::string flag = a.substr(0, a.find('='));
    if (switches.count(a)) continue;
    if (valued.count(flag)) {
      if (a.find('=') == std::string::npos) ++i;  // its value is the next argument
      continue;
    }
    cmd += " " + quote(a);
  }
  return cmd;
}

// The switches the replay of a --verify failure drops (it adds --check-races).
const std::set<std::string> kSwitchesOfVerify = {"--verify", "--check-races",
                                                 "--float-adds-commute"};
const std::set<std::string> kScheduleFlags = {
    "--explore",       "--explore-depth",   "--pct-seed",     "--pct-steps",
    "--schedule-seed", "--replay-schedule", "--verify-budget"};

}  // namespace

std::string replay_command(const std::vector<std::string>& argv, std::uint64_t seed, int depth,
                           std::int64_t steps) {
  if (argv.empty()) throw std::invalid_argument("replay_command: argv is empty");
  return command_without(argv, kScheduleFlags, {"--verify", "--float-adds-commute"}) +
         " --pct-seed " + std::to_string(seed) + " --explore-depth " + std::to_string(depth) +
         " --pct-steps " + std::to_string(steps);
}

std::string verify_failure_text(const VerifyResult& result, const std::vector<std::string>& argv) {
  if (argv.empty()) throw std::invalid_argument("verify_failure_text: argv is empty");
  return result.text() + "; replay it with:\n  " +
         command_without(argv, kScheduleFlags, kSwitchesOfVerify) + " --check-races" +
         (result.failed_schedule->empty() ? std::string(" --replay-schedule 0")
                                          : " --replay-schedule " + *result.failed_schedule);
}

namespace {

// The body under `options`, its runs told to g_body (run_example's
// listener) and its outcome reported through it.
int run_body(const Options& options, const std::function<int(const Options&)>& body) {
  BodyRun run;
  run.options = &options;
  g_body = &run;
  set_run_listener([&run](const RunConfig& config, const RunStats& stats) {
    std::lock_guard<std::mutex> lock(run.mutex);
    run.config = config;
    run.stats = stats;
  });
  struct Clear {
    ~Clear() {
      set_run_listener({});
      g_body = nullptr;
    }
  } clear;
  return guarded([&] { return body(options); });
}

// After OK: the cost card, the timeline and the trace that were asked for.
void print_extras(const Options& options, const RunStats& stats) {
  out() << extras_text(options, stats);
  if (stats.timeline && !options.trace.empty() && g_process_rank == 0)
    write_chrome_trace(*stats.timeline, options.trace);
}

// --explore N: the body under a calibration schedule (PCT depth 1, seed 0:
// it counts the steps K), then PCT seeds 1..N with depth D over K steps
// (explore_schedules), each run quiet; the first that fails is printed with
// the command that replays it.
int explore(int argc, const char* const* argv, const Options& options,
            const std::function<int(const Options&)>& body) {
  Options run = options;
  run.quiet = true;
  run.explore = 0;
  run.run.pct.enabled = true;
  const ExploreResult result = explore_schedules(
      {.config = options.config(), .schedules = options.explore, .depth = options.run.pct.depth},
      [&](const RunConfig& config) {
        run.run.pct = config.pct;
        const int code = run_body(run, body);
        return ScheduleOutcome{code, options.last_run->schedule_steps};
      });
  if (result.clean()) {
    out() << "OK\n";
    print_extras(options, *options.last_run);
    return 0;
  }
  if (result.code == 2) return result.code;  // a usage error: no schedule to replay
  err() << explore_failure_text(*result.failed, options.explore,
                                std::vector<std::string>(argv, argv + argc))
        << '\n';
  return result.code;
}

// --verify: the body once per schedule verify_schedules chooses, each run
// quiet; "OK" and what was proved, or the first failure with the command
// that replays it, or "not verified" when the budget ran out (exit 1).
int verify(int argc, const char* const* argv, const Options& options,
           const std::function<int(const Options&)>& body) {
  Options run = options;
  run.quiet = true;
  run.verify = false;
  const VerifyResult result = verify_schedules({.config = options.config(),
                                                .budget = options.verify_budget,
                                                .float_adds_commute = options.float_adds_commute},
                                               [&](const RunConfig& config) {
                                                 run.run = config;
                                                 return ScheduleOutcome{run_body(run, body), 0};
                                               });
  if (result.code == 2) return result.code;  // a usage error: no schedule to replay
  if (!result.clean()) {
    err() << verify_failure_text(result, std::vector<std::string>(argv, argv + argc)) << '\n';
    return result.code;
  }
  if (!result.complete) {
    err() << result.text() << " (--verify-budget)\n";
    return 1;
  }
  out() << "OK\n" << result.text() << '\n';
  print_extras(options, *options.last_run);
  return 0;
}

}  // namespace

std::string extras_text(const Options& options, const RunStats& stats) {
  std::string text;
  if (options.cost) text += cost_card(stats);
  if (stats.timeline && options.timeline) text += timeline_text(*stats.timeline);
  // The cost card names the Auto choices; the timeline alone names them too.
  if (stats.timeline && options.timeline && !options.cost) text += stats.collective_choices;
  if (options.explain_collectives) text += stats.collective_table;
  return text;
}

std::string explore_failure_text(const RunConfig::Pct& failed, int schedules,
                                 const std::vector<std::string>& argv) {
  const std::string which =
      failed.seed == 0
          ? std::string("the calibration schedule (PCT seed 0, depth 1)")
          : "schedule " + std::to_string(failed.seed) + " of " + std::to_string(schedules) +
                " (PCT seed " + std::to_string(failed.seed) + ", depth " +
                std::to_string(failed.depth) + ", " + std::to_string(failed.steps) + " steps)";
  return "explore: " + which + " failed; replay it with:\n  " +
         replay_command(argv, failed.seed, failed.depth, failed.steps);
}

int run_example(int argc, const char* const* argv, const ExampleSpec& spec,
                const std::function<int(const Options&)>& body) {
  // Under mpirun every process parses the same arguments: start the MPI
  // world first, so that a usage error is printed by process 0 only.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    std::string name;
    if (a.rfind("--engine=", 0) == 0) name = a.substr(9);
    if (a == "--engine" && i + 1 < argc) name = argv[i + 1];
    const EngineTraits* engine = engine_traits(name);
    if (engine != nullptr && engine->in_build && !engine->ranks_in_one_process)
      g_process_rank = process_world(name).rank;
  }
  Options options;
  try {
    options = parse(argc, argv, spec);
  } catch (const HelpRequested& help) {
    out() << help.usage;
    if (!help.usage.empty() && help.usage.back() != '\n') out() << '\n';
    return 0;
  } catch (const UsageError& e) {
    // Started by mpirun, but the MPI world never started (a bad flag, an
    // engine that is not there): process 0 still speaks for all.
    const char* launched_rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (launched_rank == nullptr || std::string(launched_rank) == "0") err() << e.message << '\n';
    return 2;
  }
  if (options.verbose) {
    const std::string details = engine_details(options.run.engine);  // collective on MPI
    err() << details << '\n';
  }
  if (options.explore > 0 && !options.compile_only) return explore(argc, argv, options, body);
  if (options.verify && !options.compile_only) return verify(argc, argv, options, body);
  return run_body(options, body);
}

namespace {

// A golden check's outcome: under run_example with --dump-outputs the
// output is written first; a mismatch is printed.
bool check(std::string_view name, bool ok, const HostTensor& out, const HostTensor& golden,
           std::int64_t world_size) {
  if (g_body != nullptr && !g_body->options->dump_outputs.empty() && g_process_rank == 0)
    dump_output(g_body->options->dump_outputs, name, out);
  if (ok) return true;
  err() << mismatch_message(name, out, golden, world_size) << '\n';
  return false;
}

}  // namespace

bool check_exact(std::string_view name, const HostTensor& out, const HostTensor& golden,
                 std::int64_t world_size) {
  return check(name, equal_exact(out, golden), out, golden, world_size);
}

bool check_close(std::string_view name, const HostTensor& out, const HostTensor& golden,
                 std::int64_t world_size) {
  return check(name, allclose(out, golden, 1e-5, 1e-5), out, golden, world_size);
}

namespace {

int print_outcome(const std::vector<bool>& checks) {
  if (!std::all_of(checks.begin(), checks.end(), [](bool ok) { return ok; })) return 1;
  out() << "OK\n";
  return 0;
}

}  // namespace

std::string run_measurement_text(const RunStats& stats) {
  std::ostringstream text;
  text << "the run: " << std::fixed << std::setprecision(3) << stats.run_seconds * 1e3
       << " ms wall on " << stats.workers << (stats.workers == 1 ? " worker" : " workers") << ", "
       << stats.instructions << " VM instructions, " << stats.parks << " parks, "
       << stats.preemptions << " preemptions";
  return text.str();
}

int report(const std::vector<bool>& checks) {
  if (g_body == nullptr) return print_outcome(checks);
  // Inside run_example: the flags apply to the body's last run.
  std::optional<RunStats> stats;
  {
    std::lock_guard<std::mutex> lock(g_body->mutex);
    stats = g_body->stats;
  }
  return report(checks, *g_body->options, stats ? *stats : RunStats{});
}

int report(const std::vector<bool>& checks, const Options& options, const RunStats& stats) {
  if (options.last_run) *options.last_run = stats;
  std::string why = flags_not_honoured(options);
  if (why.empty() && !stats.timeline && (options.timeline || !options.trace.empty())) {
    why = std::string(options.timeline ? "--timeline" : "--trace") +
          ": the run has no modeled timeline (RunConfig::timeline was off)";
  }
  if (!why.empty()) {
    err() << why << '\n';
    return 2;
  }
  if (options.quiet) {
    return std::all_of(checks.begin(), checks.end(), [](bool ok) { return ok; }) ? 0 : 1;
  }
  if (options.verbose && g_process_rank == 0) err() << run_measurement_text(stats) << '\n';
  const int code = print_outcome(checks);
  if (code == 0) print_extras(options, stats);
  return code;
}

std::string cost_card(const RunStats& stats) {
  std::ostringstream out;
  const Timeline* t = stats.timeline.get();
  auto row = [&](const std::string& who, const RankCost& c, double finish_ns, std::int64_t rounds) {
    out << std::setw(6) << who << std::setw(11) << c.bytes_in << std::setw(11) << c.bytes_out
        << std::setw(7) << c.rma << std::setw(8) << c.notifies << std::setw(6) << c.local_notifies
        << std::setw(7) << c.waits;
    if (t) {
      out << std::setw(11) << std::fixed << std::setprecision(3) << finish_ns / 1000.0
          << std::setw(8) << rounds;
    }
    out << '\n';
  };
  out << "cost card (P=" << stats.cost.size() << ")\n";
  out << "  rank   bytes_in  bytes_out    RMA  notify    +E   wait";
  if (t) out << "    time_us  rounds";
  out << '\n';
  for (std::size_t r = 0; r < stats.cost.size(); ++r) {
    row(std::to_string(r), stats.cost[r], t ? t->ranks[r].finish_ns : 0,
        t ? t->ranks[r].rounds : 0);
  }
  row("total", stats.total(), t ? t->makespan_ns : 0, t ? t->rounds : 0);
  if (t) out << "(time: modeled on " << t->model << ", the total is the makespan)\n";
  out << stats.memory_text();
  out << stats.collective_choices;
  return out.str();
}

int finish_compile_only(CompiledProgram& compiled, const Options& options) {
  if (options.output_dir.empty()) {
    throw std::invalid_argument("finish_compile_only: Options::output_dir is empty");
  }
  if (options.process_rank != 0) return 0;  // one process writes the artifact
  compiled.write_artifact(options.output_dir);
  out() << "compile_only done: " << options.output_dir << '\n';
  if (options.explain_collectives) out() << compiled.collective_table();
  return 0;
}

}  // namespace anyp::cli
