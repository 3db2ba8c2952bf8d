// bind_run.cpp — anyp._core's compile and run: RunConfig from a dict,
// torch/numpy arrays as zero-copy views (tensor_views.hpp), the compiled
// program and its RunStats, a C++-side timing loop (the baseline of
// bench/python_bench.py), and the example command line's pieces that
// anyp.runtime.cli uses so that a Python example prints exactly what its
// C++ twin prints: the C++ parse() of the flags, InputGenerator, the golden
// checks' messages, --dump-outputs, the cost card, the timeline, the Chrome
// trace and the --explore replay command (include/anyp/example_cli.hpp).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "anyp/anyp.hpp"
#include "anyp/engines.hpp"
#include "anyp/example_cli.hpp"
#include "anyp/timeline_output.hpp"
#include "bindings.hpp"
#include "operands.hpp"
#include "tensor_views.hpp"

namespace py = pybind11;

namespace anyp::python {
namespace {

using FunctionRef = pl::Function;

// ---- compile and run --------------------------------------------------------

// The device list: a list of P ints read item by item (pybind11's generic
// sequence cast costs tens of µs at P = 1024, on every compile).
std::vector<std::int64_t> device_ids(const py::handle& value) {
  if (!PyList_Check(value.ptr())) return value.cast<std::vector<std::int64_t>>();
  const Py_ssize_t n = PyList_GET_SIZE(value.ptr());
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* item = PyList_GET_ITEM(value.ptr(), i);
    if (!PyLong_Check(item)) return value.cast<std::vector<std::int64_t>>();  // its error
    const long long id = PyLong_AsLongLong(item);
    if (id == -1 && PyErr_Occurred()) throw py::error_already_set();
    ids[static_cast<std::size_t>(i)] = id;
  }
  return ids;
}

void assign(std::vector<std::int64_t>& field, const py::handle& value) {
  field = device_ids(value);
}
template <class T>
void assign(T& field, const py::handle& value) {
  field = value.cast<T>();
}

// What a field of type T takes, for the message when a value is not one.
template <class T>
const char* kind_of_field() {
  if constexpr (std::is_same_v<T, bool>) return "a bool";
  if constexpr (std::is_integral_v<T>) return "an int (64 bits at most)";
  if constexpr (std::is_same_v<T, std::string>) return "a str";
  return "a list of ints";
}

// assign(), or a ConfigError naming the field and what it takes (pybind11's
// own cast error names nothing).
template <class T>
void assign_field(T& field, const py::handle& value, const char* key) {
  bool fits = true;
  if constexpr (std::is_same_v<T, bool>) {  // a bool, or numpy's
    fits = py::isinstance<py::bool_>(value) ||
           std::string(py::str(value.get_type().attr("__name__"))) == "bool_";
  } else if constexpr (std::is_integral_v<T>) {  // an int, or numpy's (__index__)
    fits = PyIndex_Check(value.ptr()) && !py::isinstance<py::bool_>(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    fits = py::isinstance<py::str>(value);
  }
  if (fits) {
    try {
      assign(field, value);
      return;
    } catch (const py::cast_error&) {
    } catch (const py::error_already_set&) {
    }
  }
  throw ConfigError("config error: RunConfig " + std::string(key) + " must be " +
                    kind_of_field<T>() + ", got " + std::string(py::repr(value)));
}

// While verify_schedules' loop runs a Python body on this thread: its
// explorer, which every RunConfig made from Python then carries (the dict
// has no field for it; verify.hpp).
thread_local std::shared_ptr<runtime::ScheduleScript> g_verify_script;

// A RunConfig from Python's RunConfig.to_dict(): each key a field of
// ANYP_RUN_CONFIG_FIELDS.
RunConfig run_config(const py::dict& c) {
  RunConfig config;
  config.schedule_script = g_verify_script;
  for (const auto& [key_object, value] : c) {
    const std::string key = py::str(key_object);
    bool known = false;
#define ANYP_ASSIGN_FIELD(k, member, flag, set_by, one_process, metavar, kind, help) \
  if (key == #k) {                                                                   \
    assign_field(config.member, value, #k);                                          \
    known = true;                                                                    \
  }
    ANYP_RUN_CONFIG_FIELDS(ANYP_ASSIGN_FIELD)
#undef ANYP_ASSIGN_FIELD
    if (!known)
      throw ConfigError("config error: RunConfig field '" + key + "' is not known to anyp");
  }
  return config;
}

// A RunConfig as Python's RunConfig.to_dict() holds it (every field by its key).
py::dict run_config_dict(const RunConfig& config) {
  py::dict d;
#define ANYP_FIELD_ITEM(k, member, flag, set_by, one_process, metavar, kind, help) \
  d[#k] = config.member;
  ANYP_RUN_CONFIG_FIELDS(ANYP_FIELD_ITEM)
#undef ANYP_FIELD_ITEM
  return d;
}

// The arguments of a compile or a run: views of the arrays, numbers as is.
struct Arguments {
  std::vector<HostTensor> tensors;
  std::vector<ArgRef> refs;
};

Arguments arguments(const py::sequence& args, const std::vector<std::string>& names,
                    const std::string& function) {
  Arguments a;
  a.tensors.reserve(args.size());
  std::size_t i = 0;
  for (const py::handle arg : args) {
    const std::string name = i < names.size() ? names[i] : "#" + std::to_string(i);
    if (py::isinstance<py::int_>(arg)) {
      a.refs.emplace_back(int64_or<ConfigError>(
          arg, "argument error: '" + function + "', parameter '" + name + "': "));
    } else if (py::isinstance<py::float_>(arg)) {
      a.refs.emplace_back(arg.cast<double>());
    } else {
      a.tensors.push_back(tensor_view(arg, function, name));
      a.refs.emplace_back(a.tensors.back());
    }
    ++i;
  }
  return a;
}

// Each parameter's shape from the arguments given (None: left out), at P =
// world_size (HostFunction::parameter_shapes): the outputs a return-style
// call allocates.
std::vector<std::optional<std::vector<std::int64_t>>> parameter_shapes(
    const FunctionRef& fn, const py::sequence& args, const std::vector<std::string>& names,
    std::int64_t world_size) {
  std::vector<HostTensor> tensors;
  tensors.reserve(args.size());
  std::vector<std::optional<ArgRef>> refs;
  std::size_t i = 0;
  for (const py::handle arg : args) {
    const std::string name = i < names.size() ? names[i] : "#" + std::to_string(i);
    if (arg.is_none()) {
      refs.emplace_back(std::nullopt);
    } else if (py::isinstance<py::int_>(arg)) {
      refs.emplace_back(ArgRef(int64_or<ConfigError>(
          arg, "argument error: '" + fn.name() + "', parameter '" + name + "': ")));
    } else if (py::isinstance<py::float_>(arg)) {
      refs.emplace_back(ArgRef(arg.cast<double>()));
    } else {
      tensors.push_back(tensor_view(arg, fn.name(), name));
      refs.emplace_back(ArgRef(tensors.back()));
    }
    ++i;
  }
  return pl::HostFunction(fn.def()).parameter_shapes(refs, world_size);
}

struct Compiled {
  CompiledProgram program;
  std::vector<std::string> names;
  std::string function;
};

Compiled compile(const FunctionRef& fn, const py::sequence& args,
                 const std::vector<std::string>& names, const py::dict& config) {
  const pl::HostFunction host(fn.def());
  Arguments a = arguments(args, names, fn.name());
  return Compiled{host.compile(a.refs, run_config(config)), names, fn.name()};
}

RunStats run(const Compiled& c, const py::sequence& args) {
  Arguments a = arguments(args, c.names, c.function);
  py::gil_scoped_release release;  // a host worker takes the GIL when it runs
  return c.program.run(a.refs);
}

// A compiled program prepared for many runs (anyp::Session; the Python
// face is anyp.runtime.DistributedWorker): its runs take the compiled
// program's parameter names. close() ends the session (waiting for its
// runs); a closed one refuses every call.
struct Prepared {
  std::unique_ptr<Session> session;
  std::vector<std::string> names;
  std::string function;

  Prepared(std::unique_ptr<Session> s, std::vector<std::string> n, std::string f)
      : session(std::move(s)), names(std::move(n)), function(std::move(f)) {}
  Prepared(Prepared&&) = default;
  Prepared& operator=(Prepared&&) = default;
  // A worker dropped without close(): ending the session waits for its runs,
  // whose host workers take the GIL, so it waits without holding it.
  ~Prepared() {
    if (!session) return;
    py::gil_scoped_release release;
    session.reset();
  }

  Session& open() const {
    if (!session)
      throw ConfigError("config error: the prepared worker of '" + function + "' is closed");
    return *session;
  }
};

Prepared prepare(const Compiled& c, bool persistent_windows, bool reset_windows) {
  SessionOptions options;
  options.persistent_windows = persistent_windows;
  options.reset_windows = reset_windows;
  return Prepared(std::make_unique<Session>(c.program, options), c.names, c.function);
}

// Seconds per run of `runs` back-to-back runs from C++ (the baseline of
// bench/python_bench.py: the Python call's overhead is the difference).
double seconds_per_run(const Compiled& c, const py::sequence& args, int runs) {
  Arguments a = arguments(args, c.names, c.function);
  py::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) c.program.run(a.refs);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count() / std::max(1, runs);
}

// ---- the example command line (anyp.runtime.cli) ------------------------------

// The C++ example command line's parse() of `argv` against `spec` (a dict:
// name, step, modes, ops, default_devices, has_fixed): the Options, or the
// message of the usage error (a str).
cli::ExampleSpec example_spec(const py::dict& spec) {
  cli::ExampleSpec s;
  s.name = spec["name"].cast<std::string>();
  s.step = spec["step"].cast<int>();
  s.modes = spec["modes"].cast<std::vector<std::string>>();
  s.ops = spec["ops"].cast<std::vector<std::string>>();
  s.default_devices = spec["default_devices"].cast<std::vector<std::int64_t>>();
  s.has_fixed = spec["has_fixed"].cast<bool>();
  return s;
}

py::object parse_options(const std::vector<std::string>& argv, const py::dict& spec) {
  const cli::ExampleSpec s = example_spec(spec);
  std::vector<const char*> args;
  for (const std::string& a : argv) args.push_back(a.c_str());
  try {
    return py::cast(cli::parse(static_cast<int>(args.size()), args.data(), s));
  } catch (const cli::UsageError& e) {
    return py::str(e.message);
  } catch (const cli::HelpRequested& help) {
    return py::str(help.usage);
  }
}

// The example command line's flags for `spec` (as parse_options takes it):
// (long name, takes a value, metavar, help), in --help's order.
py::list cli_flags(const py::dict& spec) {
  py::list out;
  for (const cli::FlagHelp& f : cli::flag_help(example_spec(spec)))
    out.append(py::make_tuple(f.name, f.takes_value, f.metavar, f.help));
  return out;
}

// A golden check: "" when it passed, else the message C++ prints.
std::string check_message(bool exact, const std::string& name, const py::handle& out,
                          const py::handle& golden, std::int64_t world_size) {
  const HostTensor o = tensor_view(out, "cli.check", name);
  const HostTensor g = tensor_view(golden, "cli.check", name + " (golden)");
  const bool ok = exact ? equal_exact(o, g) : allclose(o, g, 1e-5, 1e-5);
  return ok ? std::string() : cli::mismatch_message(name, o, g, world_size);
}

// The InputGenerator's next values, written into `tensor` in place (its
// shape and dtype are the uniform() call's).
void fill_uniform(InputGenerator& gen, const py::handle& tensor) {
  const HostTensor view = tensor_view(tensor, "cli.InputGenerator.uniform", "tensor");
  const HostTensor values = gen.uniform(view.shape(), view.dtype());
  if (values.nbytes() > 0) std::memcpy(view.data(), values.data(), values.nbytes());
}

const Timeline& timeline_of(const RunStats& stats, const char* what) {
  if (!stats.timeline) {
    throw ConfigError(std::string(what) +
                      ": the run has no modeled timeline (RunConfig::timeline was off)");
  }
  return *stats.timeline;
}

void bind_stats(py::module_& m) {
  py::class_<RankCost>(m, "RankCost")
      .def_readonly("bytes_in", &RankCost::bytes_in)
      .def_readonly("bytes_out", &RankCost::bytes_out)
      .def_readonly("rma", &RankCost::rma)
      .def_readonly("notifies", &RankCost::notifies)
      .def_readonly("local_notifies", &RankCost::local_notifies)
      .def_readonly("waits", &RankCost::waits)
      .def("__eq__", [](const RankCost& a, const RankCost& b) { return a == b; })
      .def("__repr__", [](const RankCost& c) {
        return "RankCost(bytes_in=" + std::to_string(c.bytes_in) +
               ", bytes_out=" + std::to_string(c.bytes_out) + ", rma=" + std::to_string(c.rma) +
               ", notifies=" + std::to_string(c.notifies) +
               ", local_notifies=" + std::to_string(c.local_notifies) +
               ", waits=" + std::to_string(c.waits) + ")";
      });
  py::class_<RunStats>(m, "RunStats")
      .def_readonly("cost", &RunStats::cost)
      .def("total", [](const RunStats& s) { return s.total(); })
      .def_readonly("instructions", &RunStats::instructions)
      .def_readonly("parks", &RunStats::parks)
      .def_readonly("preemptions", &RunStats::preemptions)
      .def_readonly("schedule_steps", &RunStats::schedule_steps)
      .def_readonly("workers", &RunStats::workers)
      .def_readonly("run_seconds", &RunStats::run_seconds)
      .def_readonly("vms_at_most", &RunStats::vms_at_most)
      .def_property_readonly("has_timeline",
                             [](const RunStats& s) { return static_cast<bool>(s.timeline); })
      .def_property_readonly(
          "makespan_ns",
          [](const RunStats& s) { return timeline_of(s, "makespan_ns").makespan_ns; })
      .def_property_readonly("rounds",
                             [](const RunStats& s) { return timeline_of(s, "rounds").rounds; })
      .def("memory_text", [](const RunStats& s) { return s.memory_text(); })
      .def_readonly("collective_choices", &RunStats::collective_choices)
      .def_readonly("collective_table", &RunStats::collective_table)
      .def("cost_card", [](const RunStats& s) { return cli::cost_card(s); })
      .def("timeline_text",
           [](const RunStats& s) { return cli::timeline_text(timeline_of(s, "--timeline")); })
      .def("write_chrome_trace", [](const RunStats& s, const std::string& path) {
        cli::write_chrome_trace(timeline_of(s, "--trace"), path);
      });
}

void bind_cli(py::module_& m) {
  py::class_<InputGenerator>(m, "InputGenerator")
      .def(py::init<std::uint32_t>(), py::arg("seed"))
      .def("next", [](InputGenerator& g) { return g.next(); })
      .def("fill_uniform", [](InputGenerator& g, const py::handle& t) { fill_uniform(g, t); });
  // The command line's own options, and `config`: the RunConfig the flags
  // set (Options::config(), as RunConfig.to_dict() holds it).
  py::class_<cli::Options>(m, "CliOptions")
      .def_property_readonly("config",
                             [](const cli::Options& o) { return run_config_dict(o.config()); })
      .def_property_readonly("device_ids",
                             [](const cli::Options& o) { return o.run.distributed.device_ids; })
      .def_property_readonly("engine", [](const cli::Options& o) { return o.run.engine; })
      .def_property_readonly("explore_depth", [](const cli::Options& o) { return o.run.pct.depth; })
      .def_readonly("mode", &cli::Options::mode)
      .def_readonly("op", &cli::Options::op)
      .def_readonly("compile_only", &cli::Options::compile_only)
      .def_readonly("fixed", &cli::Options::fixed)
      .def_readonly("seed", &cli::Options::seed)
      .def_readonly("output_dir", &cli::Options::output_dir)
      .def_readonly("cost", &cli::Options::cost)
      .def_readonly("timeline", &cli::Options::timeline)
      .def_readonly("explain_collectives", &cli::Options::explain_collectives)
      .def_readonly("trace", &cli::Options::trace)
      .def_readonly("explore", &cli::Options::explore)
      .def_readonly("verify", &cli::Options::verify)
      .def_readonly("verify_budget", &cli::Options::verify_budget)
      .def_readonly("float_adds_commute", &cli::Options::float_adds_commute)
      .def_readonly("verbose", &cli::Options::verbose)
      .def_readonly("dump_outputs", &cli::Options::dump_outputs)
      .def_readonly("given", &cli::Options::given)
      .def_readonly("process_rank", &cli::Options::process_rank);
  // The flags of the example command line: (long name, takes a value,
  // metavar, help), from the C++ parser itself.
  m.def("cli_flags", [](const py::dict& spec) { return cli_flags(spec); });
  m.def("cli_flag_not_taken", [](const cli::Options& o, const py::dict& got, const py::dict& want) {
    return cli::flag_not_taken(o.given, run_config(got), run_config(want));
  });
  m.def("cli_parse", [](const std::vector<std::string>& argv, const py::dict& spec) {
    return parse_options(argv, spec);
  });
  m.def("cli_check", [](bool exact, const std::string& name, const py::handle& out,
                        const py::handle& golden, std::int64_t world_size) {
    return check_message(exact, name, out, golden, world_size);
  });
  m.def("cli_dump_output",
        [](const std::string& dir, const std::string& name, const py::handle& out) {
          cli::dump_output(dir, name, tensor_view(out, "cli.dump_output", name));
        });
  // --explore's loop (anyp::explore_schedules): `run(config)` runs the body
  // under a config dict and returns (code, schedule_steps); the result is
  // (code, the failed schedule's (seed, depth, steps) or None).
  m.def("explore_schedules", [](const py::dict& config, int schedules, int depth,
                                const py::function& run) {
    const ExploreResult r = explore_schedules(
        {.config = run_config(config), .schedules = schedules, .depth = depth},
        [&](const RunConfig& c) {
          const auto [code, steps] = run(run_config_dict(c)).cast<std::pair<int, std::int64_t>>();
          return ScheduleOutcome{code, steps};
        });
    py::object failed = py::none();
    if (r.failed) failed = py::make_tuple(r.failed->seed, r.failed->depth, r.failed->steps);
    return py::make_tuple(r.code, failed);
  });
  // --verify's loop (anyp::verify_schedules, with --float-adds-commute's
  // choice): `run(config)` runs the body under a config dict and returns its
  // code; the result is (code, the
  // result's text, complete, the failure's text with its replay command or
  // None). `argv` names the program for the replay command.
  m.def("verify_schedules", [](const py::dict& config, std::int64_t budget, bool float_adds_commute,
                               const py::function& run, const std::vector<std::string>& argv) {
    const VerifyResult r = verify_schedules(
        {.config = run_config(config), .budget = budget, .float_adds_commute = float_adds_commute},
        [&](const RunConfig& c) {
          struct Scope {
            explicit Scope(std::shared_ptr<runtime::ScheduleScript> s) {
              g_verify_script = std::move(s);
            }
            ~Scope() { g_verify_script.reset(); }
          } scope(c.schedule_script);
          return ScheduleOutcome{run(run_config_dict(c)).cast<int>(), 0};
        });
    py::object failure = py::none();
    if (!r.clean()) failure = py::str(cli::verify_failure_text(r, argv));
    return py::make_tuple(r.code, r.text(), r.complete, failure);
  });
  m.def("cli_extras_text",
        [](const cli::Options& o, const RunStats& stats) { return cli::extras_text(o, stats); });
  m.def("cli_run_measurement_text",
        [](const RunStats& stats) { return cli::run_measurement_text(stats); });
  m.def("cli_explore_failure", [](std::uint64_t seed, int depth, std::int64_t steps, int schedules,
                                  const std::vector<std::string>& argv) {
    return cli::explore_failure_text(RunConfig::Pct{true, seed, depth, steps}, schedules, argv);
  });
  m.def("cli_replay_command",
        [](const std::vector<std::string>& argv, std::uint64_t seed, int depth,
           std::int64_t steps) { return cli::replay_command(argv, seed, depth, steps); });
  m.def("process_world", [](const std::string& engine) {
    py::gil_scoped_release release;
    const ProcessWorld w = process_world(engine);
    return std::make_pair(w.rank, w.size);
  });
  m.def("engine_details", [](const std::string& engine) {
    py::gil_scoped_release release;
    return engine_details(engine);
  });
  m.def("available_engines", [] { return available_engines(); });
  // Every engine anyp knows and its traits (engines.hpp), by name: what the
  // Python side asks of an engine instead of comparing its name.
  m.def("engine_traits", [] {
    py::dict out;
    for (const EngineTraits& e : engine_table()) {
      py::dict t;
      t["in_build"] = e.in_build;
      t["ranks_in_one_process"] = e.ranks_in_one_process;
      t["schedulable"] = e.schedulable;
      t["race_checkable"] = e.race_checkable;
      t["async_submit"] = e.async_submit;
      t["unavailable"] = e.unavailable;
      out[py::str(e.name)] = t;
    }
    return out;
  });
}

}  // namespace

void bind_run(py::module_& m) {
  bind_stats(m);
  bind_cli(m);
  // Every RunConfig field by its key, with its default (Python's RunConfig
  // takes these keywords).
  m.def("run_config_fields", [] { return run_config_dict(RunConfig{}); });
  py::class_<Compiled>(m, "Compiled")
      .def_property_readonly("output_dir", [](const Compiled& c) { return c.program.output_dir(); })
      .def("lowered_code", [](const Compiled& c) { return c.program.lowered_code(); })
      .def("collective_choices", [](const Compiled& c) { return c.program.collective_choices(); })
      .def("collective_table", [](const Compiled& c) { return c.program.collective_table(); })
      .def("host_tensor_uses",
           [](const Compiled& c) {
             py::list out;
             for (const auto& u : c.program.host_tensor_uses())
               out.append(py::make_tuple(u.rank, u.argument, u.byte_offset, u.bytes, u.function,
                                         u.host_worker));
             return out;
           })
      .def("write_artifact",
           [](Compiled& c, const std::string& dir) { c.program.write_artifact(dir); });

  m.def("compile", &compile);
  m.def("parameter_shapes", &parameter_shapes);
  m.def("run", &run);

  py::class_<RunHandle>(m, "RunHandle")
      .def("wait",
           [](const RunHandle& h) {
             py::gil_scoped_release release;
             return h.wait();
           })
      .def_property_readonly("ready", &RunHandle::ready);
  py::class_<Prepared>(m, "Session")
      .def(py::init(&prepare), py::arg("compiled"), py::arg("persistent_windows"),
           py::arg("reset_windows"))
      .def("run",
           [](const Prepared& p, const py::sequence& args) {
             Arguments a = arguments(args, p.names, p.function);
             Session& session = p.open();
             py::gil_scoped_release release;
             return session.run(a.refs);
           })
      .def("submit",
           [](const Prepared& p, const py::sequence& args) {
             // The run holds the views; the caller (DistributedWorker's
             // handle) keeps the arrays under them alive until it ends.
             Arguments a = arguments(args, p.names, p.function);
             Session& session = p.open();
             py::gil_scoped_release release;
             return session.submit(a.refs);
           })
      .def("reset_windows",
           [](const Prepared& p) {
             Session& session = p.open();
             py::gil_scoped_release release;  // waits for the runs before it (host workers)
             session.reset_windows();
           })
      .def_property_readonly("runs_done", [](const Prepared& p) { return p.open().runs_done(); })
      .def("close", [](Prepared& p) {
        py::gil_scoped_release release;  // waits for the runs still queued
        p.session.reset();
      });
  m.def("seconds_per_run", &seconds_per_run);
}

}  // namespace anyp::python
