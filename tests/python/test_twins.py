"""Every Python example with a C++ twin prints what its twin prints: each
examples/distributed/*.py and examples/kernels/*.py whose twin binary
(build/release/examples/<name>) is built runs at P = 2, 3, 4, 5, 8, in every
--mode and --op its parser offers, in-process (main(argv)) and the twin as a
subprocess, both with `--cost --dump-outputs DIR`; exit code, stdout,
stderr and every dumped output's bytes must be identical."""

import contextlib
import glob
import importlib.util
import io
import itertools
import os
import subprocess

import pytest

from conftest import ROOT
from anyp.runtime import cli

BUILD = os.environ.get("ANYP_BUILD_DIR", os.path.join(ROOT, "build", "release"))
RANKS = [2, 3, 4, 5, 8]


def twins():
    found = []
    for folder in ("distributed", "kernels"):
        for script in sorted(glob.glob(os.path.join(ROOT, "examples", folder, "*.py"))):
            name = os.path.splitext(os.path.basename(script))[0]
            binary = os.path.join(BUILD, "examples", name)
            if os.path.exists(binary):
                found.append((name, script, binary))
    return found


_modules = {}


def load(name, script):
    if name not in _modules:
        spec = importlib.util.spec_from_file_location(f"twin_{name}", script)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[name] = module
    return _modules[name]


def choices_of(module):
    """The --mode and --op values of the example's parser (its main() is
    called with cli.run_example replaced by a probe)."""
    seen = {}
    real = cli.run_example

    def probe(args, run):
        seen["parser"] = args._anyp.parser
        return 0

    cli.run_example = probe
    try:
        module.main([])
    finally:
        cli.run_example = real
    parser = seen["parser"]
    out = []
    for flag in ("--mode", "--op"):
        action = parser._option_string_actions.get(flag)
        out.append([[flag, c] for c in action.choices] if action and action.choices else [[]])
    return [a + b for a, b in itertools.product(*out)]


def cases():
    for name, script, binary in twins():
        try:
            choices = choices_of(load(name, script))
        except Exception as e:  # noqa: BLE001 (one broken example fails its own case only)
            yield pytest.param(name, script, binary, 0, repr(e), id=f"{name}-broken")
            continue
        for flags in choices:
            for P in RANKS:
                yield pytest.param(
                    name, script, binary, P, flags, id=f"{name}-P{P}-{'-'.join(flags)}"
                )


def run_python(module, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = module.main(argv)
    return code, out.getvalue(), err.getvalue()


def dumped(directory):
    files = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.bin"))):
        with open(path, "rb") as f:
            files[os.path.basename(path)] = f.read()
    return files


@pytest.mark.parametrize("name,script,binary,P,flags", list(cases()))
def test_python_twin_prints_and_computes_what_cpp_does(name, script, binary, P, flags, tmp_path):
    if isinstance(flags, str):
        pytest.fail(f"{script}: cannot load the example or read its parser: {flags}")
    devices = ",".join(str(d) for d in range(P))
    args = ["-d", devices, *flags, "--cost"]
    py_dir, cpp_dir = str(tmp_path / "py"), str(tmp_path / "cpp")
    # The twin runs while the Python example does (two cores).
    cpp = subprocess.Popen(
        [binary, *args, "--dump-outputs", cpp_dir],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    py = run_python(load(name, script), args + ["--dump-outputs", py_dir])
    cpp_out, cpp_err = cpp.communicate(timeout=120)
    assert py == (cpp.returncode, cpp_out, cpp_err)
    assert dumped(py_dir) == dumped(cpp_dir)
    if cpp.returncode == 0:
        assert dumped(py_dir), "an example that passes checks (and dumps) at least one output"


def test_the_seed_has_a_twin():
    assert "07_dynamic_rank_count" in [name for name, _, _ in twins()]


def test_the_modes_are_read_from_the_parser():
    module = load(
        "07_dynamic_rank_count",
        os.path.join(ROOT, "examples", "distributed", "07_dynamic_rank_count.py"),
    )
    assert choices_of(module) == [["--mode", "put"], ["--mode", "get"]]
