"""anyp.runtime.cli — the example command line of the Python examples, the
twin of the C++ examples' (include/anyp/example_cli.hpp): the same flags,
inputs, golden checks, output and exit codes, so that a Python example and
its C++ twin print the same bytes.

    def run(args, config):
        gen = cli.InputGenerator(args.seed)
        x = gen.uniform([P, 1, SIZE])                # == C++ gen.uniform({P, 1, SIZE})
        compiled = program.compile(x, y, config=config)
        if args.compile_only:
            return cli.finish_compile_only(compiled, args)
        stats = compiled(x, y)
        return cli.report([cli.check_exact("y", y, golden, P)], args, stats)

    def main(argv=None):
        parser = argparse.ArgumentParser(...)
        parser.add_argument("-p", "--platform", default="a2a3sim")
        parser.add_argument("-d", "--device", default="0,1")
        parser.add_argument("--mode", choices=["put", "get"], default="put")
        cli.add_anyp_arguments(parser, step=7)
        return cli.run_example(parser.parse_args(argv), run)

The flags are checked by the C++ command line's own parser (anyp._core
cli_parse), so that a bad flag value is refused with the C++ message; the
cost card, timeline, trace, mismatch messages and --explore's replay command
are the C++ functions' text. Exit codes: 0 OK; 1 golden mismatch, compile
error, run error, deadlock or race; 2 usage or configuration error.
"""

import argparse
import inspect
import operator
import os
import sys
import traceback

import torch

from .. import _core
from ..ir import distributed_compiled_program as _dcp
from .._types import ARRAY_DTYPE_NAMES
from . import RunConfig

FP32 = _core.DType.FP32

_TORCH_DTYPES = {dtype: getattr(torch, name) for dtype, name in ARRAY_DTYPE_NAMES.items()}

# The example's own options: its script declares them (-p/--platform and
# -d/--device under their short names too).
_SCRIPT_FLAGS = ("--platform", "--device", "--mode", "--op", "--compile-only", "--fixed")


def _flags():
    """The anyp flags, from the C++ command line (anyp::cli::flag_help):
    (flag, dest, takes a value, metavar, help). Values are passed as text to
    the C++ parser, which converts and checks them."""
    spec = {"name": "example", "step": 0, "modes": [], "ops": []}
    spec.update(default_devices=[0, 1], has_fixed=False)
    out = []
    for flag, takes_value, metavar, help_text in _core.cli_flags(spec):
        if flag not in _SCRIPT_FLAGS:
            dest = flag[2:].replace("-", "_")
            out.append((flag, dest, takes_value, metavar.split(":")[0] or "N", help_text))
    return out


_FLAGS = _flags()
_SCRIPT_OPTIONS = ["-p", "-d", "--mode", "--op", "--compile-only", "--fixed"]


class UsageError(Exception):
    """A usage or configuration error of the example (a P constraint of the
    step, ...): run_example prints its message on stderr and exits 2."""


class _Meta:
    """What add_anyp_arguments learnt about the example: its step, script
    and parser, and (set when the arguments are parsed) the raw argv."""

    def __init__(self, parser, step, script):
        self.parser, self.step, self.script = parser, step, script
        self.argv, self.from_sys_argv, self.device_given = [], False, False


class _Run:
    """The run_example in progress (the C++ BodyRun)."""

    def __init__(self, options, config):
        self.options, self.config = options, config
        self.quiet = False
        self.last_run = None


_current = None


def _rank0():
    return _current is None or _current.options.process_rank == 0


def _out(text):
    if _rank0():
        sys.stdout.write(text)
        sys.stdout.flush()


def _err(text):
    if _rank0():
        sys.stdout.flush()
        sys.stderr.write(text + "\n")
        sys.stderr.flush()


# ---- the arguments -----------------------------------------------------------


def _action(parser, option):
    return parser._option_string_actions.get(option)  # noqa: SLF001 (argparse has no API)


def add_anyp_arguments(parser, step):
    """Adds the anyp flags to `parser` (an argparse.ArgumentParser that
    already has the example's -p/-d/--mode/--op/--compile-only): every flag
    of the C++ example command line but those, with its help (--cost,
    --timeline, --check-races, --explore N, ...; --seed defaults to `step`),
    and --compile-only when the parser lacks it."""
    if not isinstance(parser, argparse.ArgumentParser):
        raise TypeError(
            f"add_anyp_arguments: parser must be an argparse.ArgumentParser, got {parser!r}"
        )
    caller = sys._getframe(1).f_globals.get("__file__")  # noqa: SLF001 (the example script)
    parser.allow_abbrev = False  # the C++ command line takes whole flags only
    if _action(parser, "--compile-only") is None:
        parser.add_argument("--compile-only", action="store_true", help="Compile, do not run")
    group = parser.add_argument_group("anyp")
    for flag, dest, value, metavar, help_text in _FLAGS:
        if _action(parser, flag) is not None:
            continue
        if value:
            group.add_argument(flag, dest=dest, default=None, metavar=metavar, help=help_text)
        else:
            group.add_argument(flag, dest=dest, action="store_true", help=help_text)
    step = _int_argument("add_anyp_arguments", "step", step)
    if not 0 <= step < 2**31:
        raise TypeError(f"add_anyp_arguments: step must be in [0, 2^31), got {step}")
    meta = _Meta(parser, step, caller)
    parse_args = parser.parse_args

    def parse_with_meta(args=None, namespace=None):
        device = _action(parser, "-d")
        default = device.default if device is not None else None
        if device is not None:
            device.default = None  # to tell "not given" from the default
        try:
            ns = parse_args(args, namespace)
        finally:
            if device is not None:
                device.default = default
        meta.argv = list(sys.argv[1:] if args is None else args)
        meta.from_sys_argv = args is None
        if device is not None:
            meta.device_given = getattr(ns, device.dest) is not None
            if not meta.device_given:
                setattr(ns, device.dest, default)
        ns._anyp = meta
        return ns

    parser.parse_args = parse_with_meta
    return parser


def _spec(meta, args):
    """The C++ ExampleSpec of the example's parser."""

    def choices(option):
        action = _action(meta.parser, option)
        if action is None or not action.choices:
            return []
        first = action.default if action.default in action.choices else list(action.choices)[0]
        return [str(c) for c in [first] + [c for c in action.choices if c != first]]

    name = os.path.splitext(os.path.basename(meta.script or "example"))[0]
    return {
        "name": name,
        "step": meta.step,
        "modes": choices("--mode"),
        "ops": choices("--op"),
        "default_devices": [0, 1],  # the script's -d default is passed as -d
        "has_fixed": _action(meta.parser, "--fixed") is not None,
    }


def _ranks_in_one_process(engine):
    """The engine's trait (an unknown name: True, and the C++ parser names it)."""
    traits = _core.engine_traits().get(engine or _core.run_config_fields()["engine"])
    return traits is None or traits["ranks_in_one_process"]


def _cpp_argv(meta, args, spec):
    """The flags as the C++ parser reads them."""
    argv = [spec["name"]]
    for option in _SCRIPT_OPTIONS:
        action = _action(meta.parser, option)
        if action is None:
            continue
        value = getattr(args, action.dest)
        if action.nargs == 0:
            if value:
                argv.append(option)
        elif option == "-d":
            # Not given: the script's default (its C++ twin's) on an engine
            # that runs every rank in one process; else the world's size decides.
            if value is not None and (meta.device_given or _ranks_in_one_process(args.engine)):
                argv += [option, str(value)]
        elif value is not None:
            argv += [option, str(value)]
    for flag, dest, takes_value, _, _ in _FLAGS:
        value = getattr(args, dest, None)
        if takes_value and value is not None:
            argv += [flag, str(value)]
        elif not takes_value and value:
            argv.append(flag)
    return argv


def _config(options):
    """The RunConfig the flags set (the C++ Options::config())."""
    return RunConfig.from_dict(options.config)


# What the example's args get from the parsed options (besides every
# RunConfig field the flags set, by key, where no option has the name).
_ARGS = (
    "mode",
    "op",
    "compile_only",
    "fixed",
    "seed",
    "output_dir",
    "cost",
    "timeline",
    "trace",
    "explain_collectives",
    "explore",
    "explore_depth",
    "verify",
    "verify_budget",
    "float_adds_commute",
    "engine",
    "verbose",
    "dump_outputs",
    "process_rank",
)


def _set_args(args, options):
    """The parsed values, typed, on the example's namespace."""
    for name in _ARGS:
        if name in ("mode", "op") and not hasattr(args, name):
            continue
        setattr(args, name, getattr(options, name))
    for key, value in options.config.items():
        if key not in _ARGS:
            setattr(args, key, value)


# ---- running the example -------------------------------------------------------


def _guarded(body):
    """body(), its errors mapped to messages and exit codes (C++ guarded)."""
    try:
        code = body()
    except UsageError as e:
        _err(str(e))
        return 2
    except _core.ConfigError as e:
        _err(str(e))
        return 2
    except (_core.CompileError, _core.RunError) as e:  # DeadlockError, RaceError too
        _err(str(e))
        return 1
    except Exception as e:  # noqa: BLE001 (C++ catches std::exception: "error: ...")
        if _current is not None and _current.options.verbose and _rank0():
            traceback.print_exc()
        _err(f"error: {e}")
        return 1
    if not isinstance(code, int):
        _err(f"error: the example's run(args, config) returned {code!r}, not an exit code")
        return 1
    return code


def _run_body(state, run, args, config):
    global _current
    state.config = config
    _dcp.last_run_config[0] = _dcp.last_run_stats[0] = None
    _current = state
    return _guarded(lambda: run(args, config))


def _script_path(meta, run):
    if meta.from_sys_argv and sys.argv and sys.argv[0]:
        return sys.argv[0]
    path = inspect.getsourcefile(run) or meta.script or "example.py"
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def _explore(state, run, args, meta):
    """--explore N: the C++ loop (anyp::explore_schedules: a calibration
    schedule that counts the steps K, then PCT seeds 1..N at depth D over K
    steps), each run of the body quiet; the first that fails is printed as
    C++ prints it, with the command that replays it."""
    options = state.options
    state.quiet = True

    def one(config_dict):
        config = RunConfig.from_dict(config_dict)
        args.pct_seed, args.explore_depth = config.pct.seed, config.pct.depth
        args.pct_steps = config.pct.steps
        state.last_run = None
        code = _run_body(state, run, args, config)
        return code, state.last_run.schedule_steps if state.last_run is not None else 0

    code, failed = _core.explore_schedules(
        state.config.to_dict(), options.explore, options.explore_depth, one
    )
    state.quiet = False
    if failed is None:
        _out("OK\n")
        if state.last_run is not None:
            _print_extras(options, state.last_run)
        return 0
    if code == 2:
        return code  # a usage error: no schedule to replay
    argv = [sys.executable, _script_path(meta, run)] + meta.argv
    _err(_core.cli_explore_failure(*failed, options.explore, argv))
    return code


def _verify(state, run, args, meta):
    """--verify: the C++ loop (anyp::verify_schedules: source-DPOR over the
    threads engine's op-by-op runs, each under the race checker), each run of
    the body quiet; "OK" and what was proved, or the first failure with the
    command that replays it, or "not verified" when the budget ran out."""
    options = state.options
    state.quiet = True

    def one(config_dict):
        state.last_run = None
        return _run_body(state, run, args, RunConfig.from_dict(config_dict))

    argv = [sys.executable, _script_path(meta, run)] + meta.argv
    code, text, complete, failure = _core.verify_schedules(
        state.config.to_dict(), options.verify_budget, options.float_adds_commute, one, argv
    )
    state.quiet = False
    if code == 2:
        return code  # a usage error: no schedule to replay
    if failure is not None:
        _err(failure)
        return code
    if not complete:
        _err(text + " (--verify-budget)")
        return 1
    _out("OK\n" + text + "\n")
    if state.last_run is not None:
        _print_extras(options, state.last_run)
    return 0


def run_example(args, run):
    """Runs the example `run(args, config)` on the command line's RunConfig
    and returns the exit code (see the module's docstring). `args` comes
    from a parser that add_anyp_arguments set up; run_example adds to it the
    parsed values (args.seed, args.device_ids, args.process_rank, ...)."""
    global _current
    if not callable(run):
        raise TypeError(f"cli.run_example: run must be a function run(args, config), got {run!r}")
    try:
        inspect.signature(run).bind(args, None)
    except TypeError as e:
        raise TypeError(f"cli.run_example: run must take (args, config): {e}") from None
    except ValueError:  # a builtin without a signature: called as it is
        pass
    meta = getattr(args, "_anyp", None)
    if meta is None:
        raise TypeError(
            "cli.run_example: parse the arguments with a parser that cli.add_anyp_arguments "
            "set up"
        )
    spec = _spec(meta, args)
    parsed = _core.cli_parse(_cpp_argv(meta, args, spec), spec)
    if isinstance(parsed, str):
        launched_rank = os.environ.get("OMPI_COMM_WORLD_RANK")
        if launched_rank is None or launched_rank == "0":
            sys.stderr.write(parsed + "\n")
        return 2
    options = parsed
    _set_args(args, options)
    state = _Run(options, _config(options))
    _current = state
    try:
        if options.verbose:
            details = _core.engine_details(options.engine)  # collective on MPI
            _err(details)
        if options.explore > 0 and not options.compile_only:
            return _explore(state, run, args, meta)
        if options.verify and not options.compile_only:
            return _verify(state, run, args, meta)
        return _run_body(state, run, args, state.config)
    finally:
        sys.stdout.flush()
        _current = None


# ---- inputs, checks and the report ------------------------------------------------


def _int_argument(function, name, value):
    """`value` as an int; a TypeError naming `function` and `name` when it is
    not one (a bool, a float or a tensor of several elements is not)."""
    try:
        if isinstance(value, bool):
            raise TypeError
        return operator.index(value)
    except (TypeError, ValueError, RuntimeError):
        shown = (
            repr(value) if not isinstance(value, torch.Tensor) else f"a tensor {list(value.shape)}"
        )
        raise TypeError(f"{function}: {name} must be an int, got {shown}") from None


class InputGenerator:
    """anyp::InputGenerator (include/anyp/host_tensor.hpp): a std::mt19937
    seeded with `seed`; each element 0.5 + (g() >> 9) * 2^-23, in call
    order, row-major. uniform() returns a torch tensor with exactly the
    values C++ gen.uniform(shape, dtype) has."""

    def __init__(self, seed):
        seed = _int_argument("InputGenerator", "seed", seed)
        if not 0 <= seed < 2**32:
            raise TypeError(f"InputGenerator: seed must be in [0, 2^32), got {seed}")
        self._gen = _core.InputGenerator(seed)

    def uniform(self, shape, dtype=FP32):
        known = isinstance(dtype, (torch.dtype, type(FP32)))
        torch_dtype = _TORCH_DTYPES.get(dtype, dtype) if known else None
        if not isinstance(torch_dtype, torch.dtype):
            raise TypeError(f"InputGenerator.uniform: dtype must be a pl dtype, got {dtype!r}")
        if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
            raise TypeError(f"InputGenerator.uniform: shape must be a list of ints, got {shape!r}")
        extents = [_int_argument("InputGenerator.uniform", "shape", e) for e in shape]
        if any(e < 0 for e in extents):
            raise TypeError(f"InputGenerator.uniform: shape {extents} has a negative extent")
        try:
            tensor = torch.empty(extents, dtype=torch_dtype)
        except RuntimeError:  # torch's allocation failure
            raise MemoryError(
                f"InputGenerator.uniform: a tensor of shape {extents} and dtype {dtype} is more "
                "than this machine can allocate"
            ) from None
        self._gen.fill_uniform(tensor)
        return tensor

    def next(self):
        """One value, as a float."""
        return self._gen.next()


def _golden_like(function, name, golden, out):
    if not isinstance(golden, torch.Tensor):
        try:
            golden = torch.as_tensor(golden)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(
                f"{function}: the golden of '{name}' must be a tensor, an array or numbers, "
                f"got {type(golden).__name__}"
            ) from None
    if golden.dtype != out.dtype:
        golden = golden.to(out.dtype)  # rounds to nearest even, as HostTensor::set
    return golden.contiguous()


def _check(exact, name, out, golden, world_size):
    function = "check_exact" if exact else "check_close"
    world_size = _int_argument(function, "world_size", world_size)
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"{function}: the output '{name}' must be a torch tensor, got {out!r}")
    golden = _golden_like(function, name, golden, out)
    if golden.shape != out.shape:
        _err(
            f"{name} mismatch: the output is {list(out.shape)} but the golden is "
            f"{list(golden.shape)} (P={world_size})"
        )
        return False
    state = _current
    if state is not None and state.options.dump_outputs and state.options.process_rank == 0:
        _core.cli_dump_output(state.options.dump_outputs, name, out)
    message = _core.cli_check(exact, name, out, golden, int(world_size))
    if message:
        _err(message)
        return False
    return True


def check_exact(name, out, golden, world_size):
    """Bitwise equal (anyp::cli::check_exact): on a mismatch prints
    "<name> mismatch: max diff = <x> (P=<n>)" to stderr and returns False.
    A float64 golden is rounded to the output's dtype first."""
    return _check(True, name, out, golden, world_size)


def check_close(name, out, golden, world_size):
    """|out - golden| <= 1e-5 + 1e-5 * |golden| everywhere
    (anyp::cli::check_close); messages as check_exact."""
    return _check(False, name, out, golden, world_size)


def _flags_not_honoured(state):
    """ "" when the example's last run took the command line's RunConfig in
    everything a flag sets, else why a flag would not take effect."""
    options = state.options
    printing = options.cost or options.timeline or bool(options.trace)
    last = _dcp.last_run_config[0]
    if last is None:
        if not printing:
            return ""
        flag = "--cost" if options.cost else "--timeline" if options.timeline else "--trace"
        return (
            f"{flag}: the program reported its outcome, but no anyp run finished (no "
            "CompiledProgram or Session run), so there is no run to print"
        )
    flag = _core.cli_flag_not_taken(options, last.to_dict(), state.config.to_dict())
    if not flag:
        return ""
    return (
        f"{flag}: the program ran with a RunConfig of its own, not the command line's, so the "
        "flag would not take effect; compile with the config that cli.run_example passes to "
        "run(args, config)"
    )


def _print_extras(options, stats):
    """After OK: the C++ text of the flags given (cli::extras_text), then
    --trace's file."""
    _out(_core.cli_extras_text(options, stats))
    if stats.has_timeline and options.trace and options.process_rank == 0:
        stats.write_chrome_trace(options.trace)


def report(checks, args=None, stats=None):
    """ "OK" and 0 when every check passed, else 1; after OK, with --cost
    the run's cost card, with --timeline its modeled timeline and with
    --trace FILE the timeline as a Chrome trace (anyp::cli::report).
    `stats` is the run's RunStats (what `compiled(...)` returned; default:
    the last run's)."""
    if isinstance(checks, (str, bytes)) or not hasattr(checks, "__iter__"):
        raise TypeError(
            f"report: checks must be a list of check results (check_exact, check_close), "
            f"got {type(checks).__name__}"
        )
    if stats is not None and not isinstance(stats, _core.RunStats):
        raise TypeError(
            f"report: stats must be the RunStats a run returned, got {type(stats).__name__}"
        )
    state = _current
    ok = all(bool(c) for c in checks)
    if state is None:
        if ok:
            _out("OK\n")
        return 0 if ok else 1
    if stats is None:
        stats = _dcp.last_run_stats[0]  # report(checks): the body's last run
    state.last_run = stats
    why = _flags_not_honoured(state)
    options = state.options
    if (
        not why
        and (stats is None or not stats.has_timeline)
        and (options.timeline or options.trace)
    ):
        flag = "--timeline" if options.timeline else "--trace"
        why = f"{flag}: the run has no modeled timeline (RunConfig::timeline was off)"
    if why:
        _err(why)
        return 2
    if state.quiet:
        return 0 if ok else 1
    if options.verbose and stats is not None and _rank0():
        _err(_core.cli_run_measurement_text(stats))
    if not ok:
        return 1
    _out("OK\n")
    if stats is not None:
        _print_extras(options, stats)
    return 0


def finish_compile_only(compiled, args):
    """Writes the artifact to the --output-dir (default
    anyp_out/<example>/P<P>-<platform>), prints "compile_only done: <dir>"
    and returns 0 (anyp::cli::finish_compile_only)."""
    directory = getattr(args, "output_dir", None)
    if not directory:
        raise ValueError("cli.finish_compile_only: args.output_dir is empty (use cli.run_example)")
    if getattr(args, "process_rank", 0) != 0:
        return 0  # one process writes the artifact
    compiled.write_artifact(directory)
    _out(f"compile_only done: {directory}\n")
    if getattr(args, "explain_collectives", False):
        _out(compiled.collective_table())
    return 0
