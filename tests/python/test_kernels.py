"""The kernel ladder in Python (examples/kernels/k1..k7_*.py): every kernel
at P = 2, 3, 4, 5, 8 in every mode against its torch golden (close as the
C++ twins check, exact for k6's coords), once per kernel under the race
checker, and the P constraint of k1.

Each example's own run(args, config) runs, with the example's `cli`
replaced by the small stand-in below (the C++ twin's input generator, the
checks and report), so that these tests do not depend on the example
command line; tests of the command line itself belong to the runner."""

import argparse
import importlib.util
import os
import sys
import types

import numpy as np
import pytest
import torch

from conftest import ROOT
from anyp.ir.distributed_compiled_program import DistributedConfig
from anyp.runtime import RunConfig

RANKS = [2, 3, 4, 5, 8]


class UsageError(Exception):
    """The stand-in for cli.UsageError (a usage or P-constraint error)."""


class InputGenerator:
    """anyp::InputGenerator: std::mt19937 seeded with the step; each element
    is 0.5 + (g() >> 9) * 2^-23, row-major, tensors in call order."""

    def __init__(self, seed):
        self.engine = np.random.RandomState(seed)  # MT19937, init_genrand(seed)

    def uniform(self, shape):
        n = int(np.prod(shape))
        raw = self.engine.randint(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
        values = 0.5 + (raw >> 9).astype(np.float64) * 2.0**-23
        return torch.from_numpy(values.astype(np.float32).reshape(shape))


class Checks:
    """cli's checks and report, recording what failed."""

    def __init__(self):
        self.failed = []

    def check_close(self, name, out, golden, P):
        ok = torch.allclose(out.double(), golden.double(), rtol=1e-5, atol=1e-5)
        if not ok:
            self.failed.append(f"{name} (P={P}): max diff {(out.double() - golden).abs().max()}")
        return ok

    def check_exact(self, name, out, golden, P):
        ok = torch.equal(out, golden)
        if not ok:
            self.failed.append(f"{name} (P={P}) differs")
        return ok

    def report(self, checks, args, stats):
        return 0 if all(checks) else 1


def stand_in_cli():
    checks = Checks()
    cli = types.SimpleNamespace(
        InputGenerator=InputGenerator,
        UsageError=UsageError,
        check_close=checks.check_close,
        check_exact=checks.check_exact,
        report=checks.report,
        finish_compile_only=lambda compiled, args: 0,
    )
    return cli, checks


def load(name):
    """examples/kernels/<name>.py as a module (with a stand-in anyp.runtime.cli
    while the runner's module does not exist yet)."""
    try:
        import anyp.runtime.cli  # noqa: F401
    except ImportError:
        stub = types.ModuleType("anyp.runtime.cli")
        sys.modules["anyp.runtime.cli"] = stub
        import anyp.runtime

        anyp.runtime.cli = stub
    path = os.path.join(ROOT, "examples", "kernels", f"{name}.py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KERNELS = {
    "k1_tp_mlp": (101, ["mesh", "ring"]),
    "k2_allgather_gemm": (102, ["overlap", "bulk"]),
    "k3_gemm_reduce_scatter": (103, ["overlap", "bulk"]),
    "k4_moe": (104, [None]),
    "k5_ring_attention": (105, [None]),
    "k6_tp_dp_allreduce": (106, ["2d", "flat"]),
    "k7_multi_block": (107, ["blocks", "one"]),
}
MODULES = {}


def module(name):
    if name not in MODULES:
        MODULES[name] = load(name)
    return MODULES[name]


def run(name, mode, P, check_races=False):
    """The example's run() at P ranks; returns (exit code, failed checks)."""
    mod = module(name)
    cli, checks = stand_in_cli()
    mod.cli = cli
    step, _ = KERNELS[name]
    args = argparse.Namespace(seed=step, mode=mode, compile_only=False)
    config = RunConfig(
        distributed_config=DistributedConfig(device_ids=list(range(P))), check_races=check_races
    )
    return mod.run(args, config), checks.failed


CASES = [(name, mode) for name, (_, modes) in KERNELS.items() for mode in modes]


@pytest.mark.parametrize("P", RANKS)
@pytest.mark.parametrize("name,mode", CASES, ids=[f"{n}-{m}" if m else n for n, m in CASES])
def test_kernel_matches_its_golden(name, mode, P):
    code, failed = run(name, mode, P)
    assert (code, failed) == (0, [])


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_under_the_race_checker(name):
    _, modes = KERNELS[name]
    code, failed = run(name, modes[0], 3, check_races=True)
    assert (code, failed) == (0, [])


@pytest.mark.parametrize("P", [7, 16])
def test_k1_refuses_a_p_that_does_not_divide_120(P):
    with pytest.raises(UsageError) as info:
        run("k1_tp_mlp", "mesh", P)
    assert str(info.value) == (
        f"F=960 cannot be split into 32-byte-aligned shards for P={P}: "
        "need F % (8*P) == 0 (P must divide 120)"
    )


def test_the_input_generator_is_the_cpp_twins():
    """std::mt19937's first output for its default seed 5489 is 3499211612
    (the C++ standard requires it): the stand-in draws the same."""
    assert InputGenerator(5489).uniform([1])[0].item() == 0.5 + (3499211612 >> 9) * 2.0**-23
