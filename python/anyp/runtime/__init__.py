"""anyp.runtime — PyPTO's RunConfig, with anyp's own run settings (engine,
race checking, schedules, the modeled timeline, memory limit), and the
example command line (anyp.runtime.cli)."""

import warnings

from ..ir.distributed_compiled_program import DistributedConfig
from ..ir.device_tensors import DeviceTensor, StackedDeviceTensor  # noqa: F401
from ..ir.distributed_worker import DistributedRunHandle, DistributedWorker  # noqa: F401

# Keywords PyPTO's RunConfig takes that change nothing on anyp (hardware
# and build settings); accepted and ignored (docs/python.md).
_IGNORED = {
    "pipeline",
    "chunk_rows",
    "save_kernels",
    "dump_passes",
    "backend_type",
    "device_id",
    "runtime_profiling",
}

# PyPTO's device-runtime switches (its dependency-graph dump and per-scope
# statistics): booleans, checked; switched on, they warn that anyp writes
# no such dump (the run is unchanged; docs/python.md).
_IGNORED_SWITCHES = ("enable_dep_gen", "enable_scope_stats")

# PyPTO's device-runtime ring sizes, one per scope depth (4 rings): a
# non-negative int for every ring, or a list of 4; checked, then without
# effect (anyp's runtime does not bound its task rings).
_IGNORED_RINGS = ("ring_task_window", "ring_heap", "ring_dep_pool")
_RING_COUNT = 4


def _check_ignored(kwargs):
    """TypeError naming the keyword when a PyPTO switch or ring size is not
    of PyPTO's type."""
    for name in _IGNORED_SWITCHES:
        if name in kwargs and not isinstance(kwargs[name], bool):
            raise TypeError(f"RunConfig: {name} must be a bool, got {kwargs[name]!r}")
        if kwargs.get(name):
            warnings.warn(
                f"RunConfig({name}=True): anyp writes none of PyPTO's DFX files "
                "(dfx_outputs/rank<r>/...); the run is unchanged. anyp's own diagnostics: "
                "RunConfig(check_races=True), RunConfig(timeline=True) (docs/python.md)",
                stacklevel=3,
            )
    for name in _IGNORED_RINGS:
        if name not in kwargs:
            continue
        value = kwargs[name]
        values = value if isinstance(value, (list, tuple)) else [value]
        if (isinstance(value, (list, tuple)) and len(values) != _RING_COUNT) or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values
        ):
            raise TypeError(
                f"RunConfig: {name} must be an int >= 0 or a list of {_RING_COUNT} of them "
                f"(one per ring), got {value!r}"
            )


class Pct:
    """A PCT schedule (anyp::RunConfig::Pct): random rank priorities from
    `seed`, depth - 1 priority change points over `steps` steps. Replays
    exactly from (seed, depth, steps)."""

    def __init__(self, seed=0, depth=3, steps=0):
        self.seed, self.depth, self.steps = int(seed), int(depth), int(steps)

    def __eq__(self, other):
        return isinstance(other, Pct) and (self.seed, self.depth, self.steps) == (
            other.seed,
            other.depth,
            other.steps,
        )

    def __repr__(self):
        return f"Pct(seed={self.seed}, depth={self.depth}, steps={self.steps})"


class RunConfig:
    """How to compile and run: the platform, the devices (one per rank) and
    anyp's own settings, as in anyp::RunConfig (include/anyp/run_config.hpp):
    engine, check_races, workers, deterministic + schedule_seed (one worker,
    a replayable interleaving), pct (a Pct: one PCT schedule), preempt_budget,
    memory_limit (bytes, 0: what the machine has), timeline (compute the
    modeled timeline, RunStats.has_timeline) with model_file (default: the
    platform's model) and output_dir (where compile writes the artifact)."""

    def __init__(
        self,
        platform="a2a3sim",
        distributed_config=None,
        *,
        engine="threads",
        check_races=False,
        workers=0,
        output_dir=None,
        deterministic=False,
        schedule_seed=0,
        pct=None,
        preempt_budget=4096,
        memory_limit=0,
        timeline=False,
        model_file=None,
        **kwargs,
    ):
        accepted = _IGNORED.union(_IGNORED_SWITCHES, _IGNORED_RINGS)
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise TypeError(f"RunConfig: not supported by anyp: {', '.join(unknown)}")
        _check_ignored(kwargs)
        if pct is not None and not isinstance(pct, Pct):
            raise TypeError(f"RunConfig: pct must be an anyp.runtime.Pct, got {pct!r}")
        self.platform = platform
        self.distributed_config = distributed_config or DistributedConfig()
        self.engine, self.check_races, self.workers = engine, check_races, workers
        self.output_dir = output_dir
        self.deterministic, self.schedule_seed = deterministic, schedule_seed
        self.pct = pct
        self.preempt_budget, self.memory_limit = preempt_budget, memory_limit
        self.timeline, self.model_file = timeline, model_file

    def device_ids(self):
        devices = self.distributed_config.device_ids
        return [0, 1] if devices is None else list(devices)

    def to_dict(self):
        d = {
            "platform": self.platform,
            "device_ids": self.device_ids(),
            "engine": self.engine,
            "check_races": bool(self.check_races),
            "workers": int(self.workers),
            "deterministic": bool(self.deterministic),
            "schedule_seed": int(self.schedule_seed),
            "pct_enabled": self.pct is not None,
            "preempt_budget": int(self.preempt_budget),
            "memory_limit": int(self.memory_limit),
            "timeline": bool(self.timeline),
            "model_file": str(self.model_file or ""),
        }
        if self.pct is not None:
            d.update(pct_seed=self.pct.seed, pct_depth=self.pct.depth, pct_steps=self.pct.steps)
        if self.output_dir:
            d["output_dir"] = str(self.output_dir)
        return d
