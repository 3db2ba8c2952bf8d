#!/usr/bin/python3
"""scripts/fuzz_python.py — mutation fuzzing of the Python front-end: no
internal exception for any program a user can write (docs/testing.md).

    /usr/bin/python3 scripts/fuzz_python.py [SECONDS] [--seed N] [--count N]

Takes anyp's Python examples (examples/distributed/*.py,
examples/kernels/*.py), applies one to three random mutations to a copy's
syntax tree (a constant replaced, a name swapped for another of the file,
an argument dropped, doubled or swapped, a keyword added or dropped, a
statement deleted or two swapped), writes it as build/fuzz/python/mutant_<k>.py
and runs its main() at P = 3 in this process. The outcome is fine when the
program runs, or ends with an anyp error (ConfigError, CompileError,
RunError and their kin, the command line's usage errors), or with an error
raised by a `raise` statement (anyp's deliberate TypeError / ValueError, or
the program's own), or with an exception in the mutant's own code. It is a
finding when an exception escapes from anyp's own code other than by a
`raise` statement: an internal error (AttributeError, KeyError, an
accidental TypeError, pybind11's cast error, ...). Each finding's mutant is
kept as build/fuzz/python/finding_<k>.py with its traceback; exit 1 if any.
Runs with Debian's /usr/bin/python3 and the build named by ANYP_BUILD_DIR
(default build/release).
"""

import ast
import contextlib
import copy
import io
import os
import pathlib
import random
import runpy
import sys
import time
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("ANYP_BUILD_DIR", str(ROOT / "build" / "release"))

import anyp  # noqa: E402  (after the path is set)
from anyp import _core  # noqa: E402
from anyp.runtime import cli  # noqa: E402

PACKAGE = str(ROOT / "python" / "anyp")
OUT = ROOT / "build" / "fuzz" / "python"
SEEDS = sorted((ROOT / "examples" / "distributed").glob("*.py")) + sorted(
    (ROOT / "examples" / "kernels").glob("*.py")
)
CONSTANTS = [0, 1, -1, 2, 3, 7, 2**40, -(2**63), 1.5, -0.5, None, True, "x", ""]
USER_FACING = (_core.Error, cli.UsageError, anyp.UnsupportedError, SystemExit)


class Mutator:
    """One to three random mutations of a module's syntax tree."""

    def __init__(self, rng, tree):
        self.rng, self.tree = rng, tree
        self.names = sorted(
            {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | {"NR", "P", "r"}
        )

    def nodes(self, kind):
        return [n for n in ast.walk(self.tree) if isinstance(n, kind)]

    def mutate(self):
        done = []
        for _ in range(self.rng.randint(1, 3)):
            kind = self.rng.choice(
                ["constant", "name", "drop_arg", "double_arg", "swap_args", "keyword", "statement"]
            )
            if getattr(self, kind)():
                done.append(kind)
        return done

    def constant(self):
        nodes = [n for n in self.nodes(ast.Constant) if not isinstance(n.value, str)]
        if not nodes:
            return False
        self.rng.choice(nodes).value = self.rng.choice(CONSTANTS)
        return True

    def name(self):
        nodes = [n for n in self.nodes(ast.Name) if isinstance(n.ctx, ast.Load)]
        if not nodes:
            return False
        self.rng.choice(nodes).id = self.rng.choice(self.names)
        return True

    def calls(self):
        return [c for c in self.nodes(ast.Call) if c.args]

    def drop_arg(self):
        calls = self.calls()
        if not calls:
            return False
        call = self.rng.choice(calls)
        del call.args[self.rng.randrange(len(call.args))]
        return True

    def double_arg(self):
        calls = self.calls()
        if not calls:
            return False
        call = self.rng.choice(calls)
        call.args.append(copy.deepcopy(self.rng.choice(call.args)))
        return True

    def swap_args(self):
        calls = [c for c in self.calls() if len(c.args) >= 2]
        if not calls:
            return False
        call = self.rng.choice(calls)
        i, j = self.rng.sample(range(len(call.args)), 2)
        call.args[i], call.args[j] = call.args[j], call.args[i]
        return True

    def keyword(self):
        calls = self.nodes(ast.Call)
        if not calls:
            return False
        call = self.rng.choice(calls)
        if call.keywords and self.rng.random() < 0.5:
            del call.keywords[self.rng.randrange(len(call.keywords))]
        else:
            value = ast.Constant(self.rng.choice(CONSTANTS))
            call.keywords.append(
                ast.keyword(arg=self.rng.choice(["bogus", "dtype", "peer"]), value=value)
            )
        return True

    def statement(self):
        bodies = [
            n.body
            for n in ast.walk(self.tree)
            if isinstance(n, (ast.FunctionDef, ast.For, ast.If, ast.With))
        ]
        bodies = [b for b in bodies if len(b) >= 2]
        if not bodies:
            return False
        body = self.rng.choice(bodies)
        if self.rng.random() < 0.5:
            del body[self.rng.randrange(len(body))]
        else:
            i, j = self.rng.sample(range(len(body)), 2)
            body[i], body[j] = body[j], body[i]
        return True


def raised_deliberately(tb):
    """Whether the innermost frame's line is a `raise` statement."""
    frames = traceback.extract_tb(tb)
    return bool(frames) and frames[-1].line.lstrip().startswith("raise")


def classify(error, mutant):
    """'ok' for an outcome a user may see, else 'internal'."""
    if isinstance(error, USER_FACING):
        return "ok"
    frames = traceback.extract_tb(error.__traceback__)
    innermost = frames[-1].filename if frames else ""
    if innermost == str(mutant) or not innermost.startswith(PACKAGE):
        return "ok"  # the program's own code, or a library it calls itself
    return "ok" if raised_deliberately(error.__traceback__) else "internal"


def strict(body):
    """cli._guarded without its catch-all: an unexpected exception escapes."""
    try:
        return body()
    except (cli.UsageError, _core.ConfigError):
        return 2
    except (_core.CompileError, _core.RunError):
        return 1


def run_mutant(path):
    """None, or the exception that escaped main(['-d', '0,1,2'])."""
    module = runpy.run_path(str(path), run_name="fuzz_mutant")
    main = module.get("main")
    if main is None:
        return None
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            main(["-d", "0,1,2"])
        except BaseException as error:  # noqa: B902 - every escape is classified
            return error
    return None


def main(argv):
    seconds = float(argv[0]) if argv and not argv[0].startswith("--") else 60.0
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else int(time.time())
    count = int(argv[argv.index("--count") + 1]) if "--count" in argv else None
    rng = random.Random(seed)
    OUT.mkdir(parents=True, exist_ok=True)
    cli._guarded = strict
    counts, findings, start, k = {}, 0, time.monotonic(), 0
    while time.monotonic() - start < seconds and (count is None or k < count):
        source = rng.choice(SEEDS)
        tree = ast.parse(source.read_text())
        kinds = Mutator(rng, tree).mutate()
        try:
            text = ast.unparse(ast.fix_missing_locations(tree))
        except Exception:  # noqa: BLE001 - an unprintable mutant is skipped
            continue
        mutant = OUT / f"mutant_{k % 4}.py"
        mutant.write_text(text)
        # If the process dies (a crash of the native module), this names the mutant.
        (OUT / "running.txt").write_text(f"{mutant} from {source.name}, {kinds}, seed {seed}\n")
        k += 1
        try:
            error = run_mutant(mutant)
        except BaseException as e:  # noqa: B902 - the module's own top level
            error = e
        outcome = "ran" if error is None else classify(error, mutant)
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome == "internal":
            findings += 1
            kept = OUT / f"finding_{findings}.py"
            kept.write_text(
                f"# from {source.name}, mutations {kinds}, seed {seed}\n"
                + "".join("# " + line for line in traceback.format_exception(error))
                + text
            )
            print(f"finding {findings}: {type(error).__name__}: {error} ({kept})")
    elapsed = time.monotonic() - start
    print(
        f"fuzz_python: {k} mutants of {len(SEEDS)} programs in {elapsed:.0f} s, seed {seed}: {counts}"
    )
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
