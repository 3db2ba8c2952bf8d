"""The Python RunConfig and command line read the C++ run-option table
(ANYP_RUN_CONFIG_FIELDS): every field is a RunConfig keyword with the C++
default, survives to_dict / from_dict and reaches the C++ config; an
unknown keyword is refused by name; the Python command line offers exactly
the C++ one's flags, with their help lines; dump_ir prints each compile
pass's IR to stderr."""

import argparse

import pytest
import torch

import anyp

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import _core, ir
from anyp.ir import DistributedConfig
from anyp.runtime import Pct, RunConfig, cli

FIELDS = _core.run_config_fields()
SPELLED_OTHERWISE = {"platform", "device_ids", "pct_enabled", "pct_seed", "pct_depth", "pct_steps"}
OWN = [k for k in FIELDS if k not in SPELLED_OTHERWISE]


def _changed(value):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    return value + "x"


def test_the_table_has_the_fields_cpp_and_python_share():
    assert sorted(FIELDS) == sorted(
        [
            "check_races",
            "timeline",
            "timeline_detail",
            "model_file",
            "pct_enabled",
            "pct_seed",
            "pct_depth",
            "pct_steps",
            "deterministic",
            "schedule_seed",
            "replay_schedule",
            "workers",
            "preempt_budget",
            "memory_limit",
            "engine",
            "platform",
            "device_ids",
            "output_dir",
            "enable_dep_gen",
            "enable_scope_stats",
            "enable_chip_swimlane",
            "dump_ir",
        ]
    )


@pytest.mark.parametrize("key", OWN)
def test_each_field_is_a_keyword_with_the_cpp_default(key):
    assert getattr(RunConfig(), key) == FIELDS[key]
    value = _changed(FIELDS[key])
    config = RunConfig(**{key: value})
    assert getattr(config, key) == value
    assert config.to_dict()[key] == value
    assert RunConfig.from_dict(config.to_dict()).to_dict() == config.to_dict()


def test_the_spelled_otherwise_fields_round_trip():
    config = RunConfig(
        "a5sim", DistributedConfig([3, 1, 2]), pct=Pct(seed=5, depth=2, steps=40), workers=1
    )
    d = config.to_dict()
    assert (d["platform"], d["device_ids"]) == ("a5sim", [3, 1, 2])
    assert (d["pct_enabled"], d["pct_seed"], d["pct_depth"], d["pct_steps"]) == (True, 5, 2, 40)
    again = RunConfig.from_dict(d)
    assert again.pct == Pct(5, 2, 40) and again.device_ids() == [3, 1, 2]
    assert config.replace(pct=None).to_dict()["pct_enabled"] is False


def test_an_unknown_keyword_is_refused_by_name():
    with pytest.raises(TypeError, match=r"^RunConfig: not supported by anyp: memory_limits$"):
        RunConfig(memory_limits=1)


def _cpp_flags():
    spec = {"name": "example", "step": 0, "modes": [], "ops": []}
    spec.update(default_devices=[0, 1], has_fixed=False)
    return {name: (takes, helptext) for name, takes, _, helptext in _core.cli_flags(spec)}


def test_the_python_command_line_offers_the_cpp_flags_with_their_help():
    parser = argparse.ArgumentParser()
    parser.add_argument("-p", "--platform", default="a2a3sim")
    parser.add_argument("-d", "--device", default="0,1")
    cli.add_anyp_arguments(parser, step=7)
    cpp = _cpp_flags()
    python = {}
    for action in parser._actions:  # noqa: SLF001 (argparse has no API)
        for option in action.option_strings:
            if option.startswith("--") and option not in ("--help", "--platform", "--device"):
                python[option] = (action.nargs != 0, action.help)
    assert sorted(python) == sorted(set(cpp) - {"--platform", "--device"})
    for flag, (takes, helptext) in python.items():
        if flag != "--compile-only":  # the script's own, when it declares one
            assert (takes, helptext) == cpp[flag], flag


@pl.program
class AddOne:
    @pl.function(type=pl.FunctionType.InCore)
    def add_one(self, x: pl.Tensor[[1, 8], pl.FP32], y: pl.Out[pl.Tensor[[1, 8], pl.FP32]]):
        pl.store(pl.add(pl.load(x, [0, 0], [1, 8]), 1.0), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def orch(self, x: pl.Tensor[[1, 8], pl.FP32], y: pl.Out[pl.Tensor[[1, 8], pl.FP32]]):
        self.add_one(x, y)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(
        self,
        x: pl.Tensor[[pl.dynamic("NR"), 1, 8], pl.FP32],
        y: pl.Out[pl.Tensor[[pl.dynamic("NR"), 1, 8], pl.FP32]],
    ):
        for r in pl.range(pld.world_size()):
            self.orch(x[r], y[r], device=r)


def test_dump_ir_prints_the_ir_after_each_pass_to_stderr(capfd):
    x, y = torch.ones(3, 1, 8), torch.zeros(3, 1, 8)
    config = RunConfig(distributed_config=DistributedConfig([0, 1, 2]), dump_ir=True)
    ir.compile(AddOne, config=config)(x, y)
    err = capfd.readouterr().err
    passes = [
        line[len("; ---- after ") : -len(" ----")]
        for line in err.splitlines()
        if line.startswith("; ---- after ")
    ]
    assert passes == [
        "verify",
        "bind-dims",
        "specialize-host",
        "check-functions",
        "lower",
        "order-dispatches",
        "place-scratch",
        "layout-windows",
        "mark-signal-buffers",
        "check-collective-windows",
    ]
    assert "\nP = 3, NR = 3\n" in err
    assert "  rank 2: orch(x+64B, y+64B)\n" in err
    assert torch.equal(y, x + 1)


def test_the_engines_traits_are_what_python_asks_of_an_engine():
    traits = _core.engine_traits()
    assert list(traits) == ["threads", "mpi"]
    assert traits["threads"]["ranks_in_one_process"] and traits["threads"]["race_checkable"]
    assert not traits["mpi"]["ranks_in_one_process"] and not traits["mpi"]["schedulable"]
    assert traits["mpi"]["in_build"] == ("mpi" in _core.available_engines())
    assert cli._ranks_in_one_process(None) and not cli._ranks_in_one_process("mpi")


@pytest.mark.parametrize(
    "keyword, value, message",
    [
        ("workers", "x", "workers must be an int (64 bits at most), got 'x'"),
        (
            "workers",
            10**20,
            "workers must be an int (64 bits at most), got 100000000000000000000",
        ),
        ("preempt_budget", None, "preempt_budget must be an int (64 bits at most), got None"),
        ("check_races", "yes", "check_races must be a bool, got 'yes'"),
    ],
)
def test_a_field_of_the_wrong_kind_is_a_config_error_naming_it(keyword, value, message):
    config = RunConfig(distributed_config=DistributedConfig([0, 1]), **{keyword: value})
    with pytest.raises(anyp.ConfigError) as e:
        ir.compile(AddOne, config=config)(torch.ones(2, 1, 8), torch.zeros(2, 1, 8))
    assert str(e.value) == "config error: RunConfig " + message


@pytest.mark.parametrize(
    "device_ids, message",
    [
        ("0,1", "device_ids must be a list of ints, got str"),
        (5, "device_ids must be a list of ints, got int"),
        ([0, "a"], "device_ids must be a list of ints, got 'a' among them"),
        ([0, 10**20], "device id 100000000000000000000 does not fit in 64 bits"),
    ],
)
def test_a_device_list_of_the_wrong_kind_is_named(device_ids, message):
    with pytest.raises(TypeError) as e:
        DistributedConfig(device_ids)
    assert str(e.value) == "DistributedConfig: " + message
