"""anyp.runtime — PyPTO's RunConfig, with anyp's own run settings (engine,
race checking, schedules, the modeled timeline, ...: anyp::RunConfig's
table), and the example command line (anyp.runtime.cli)."""


from .. import _core, _dfx
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

# PyPTO's device-runtime ring sizes, one per scope depth (4 rings): a
# non-negative int for every ring, or a list of 4; checked, then without
# effect (anyp's runtime does not bound its task rings).
_IGNORED_RINGS = ("ring_task_window", "ring_heap", "ring_dep_pool")
_RING_COUNT = 4


def _check_ignored(kwargs):
    """TypeError naming the keyword when a PyPTO DFX switch or ring size is
    not of PyPTO's type."""
    for name in _dfx.SWITCHES:  # booleans, as PyPTO types them
        if name in kwargs and not isinstance(kwargs[name], bool):
            raise TypeError(f"RunConfig: {name} must be a bool, got {kwargs[name]!r}")
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


# anyp::RunConfig's fields by key, with their defaults (the table
# ANYP_RUN_CONFIG_FIELDS in include/anyp/run_config.hpp). RunConfig takes
# each as a keyword, but the platform, the devices (distributed_config) and
# the PCT schedule (pct, a Pct), which PyPTO spells differently.
_FIELDS = _core.run_config_fields()
_SPELLED_OTHERWISE = ("platform", "device_ids", "pct_enabled", "pct_seed", "pct_depth", "pct_steps")
_OWN = tuple(k for k in _FIELDS if k not in _SPELLED_OTHERWISE)


class RunConfig:
    """How to compile and run: the platform, the devices (one per rank), the
    PCT schedule (pct, a Pct) and anyp's own settings, one keyword per field
    of anyp::RunConfig (the table ANYP_RUN_CONFIG_FIELDS in
    include/anyp/run_config.hpp; docs/python.md lists them with their
    meaning), each an attribute of the same name."""

    def __init__(self, platform="a2a3sim", distributed_config=None, *, pct=None, **kwargs):
        accepted = _IGNORED.union(_IGNORED_RINGS, _OWN)
        unknown = sorted(set(kwargs) - accepted)
        if unknown:
            raise TypeError(f"RunConfig: not supported by anyp: {', '.join(unknown)}")
        _check_ignored(kwargs)
        if pct is not None and not isinstance(pct, Pct):
            raise TypeError(f"RunConfig: pct must be an anyp.runtime.Pct, got {pct!r}")
        self.platform = platform
        self.distributed_config = distributed_config or DistributedConfig()
        self.pct = pct
        for key in _OWN:
            setattr(self, key, kwargs.get(key, _FIELDS[key]))

    @classmethod
    def from_dict(cls, d):
        """The RunConfig of `d`, a to_dict() (or anyp._core's)."""
        pct = Pct(d["pct_seed"], d["pct_depth"], d["pct_steps"]) if d.get("pct_enabled") else None
        return cls(
            d.get("platform", _FIELDS["platform"]),
            DistributedConfig(device_ids=list(d["device_ids"])) if "device_ids" in d else None,
            pct=pct,
            **{k: d[k] for k in _OWN if k in d},
        )

    def replace(self, **changes):
        """A copy with `changes` (keywords as the constructor's)."""
        d = {
            "platform": self.platform,
            "distributed_config": self.distributed_config,
            "pct": self.pct,
            **{k: getattr(self, k) for k in _OWN},
        }
        d.update(changes)
        return RunConfig(d.pop("platform"), d.pop("distributed_config"), **d)

    def device_ids(self):
        devices = self.distributed_config.device_ids
        return [0, 1] if devices is None else list(devices)

    def to_dict(self):
        """Every field by key, as anyp._core takes it (None text as "")."""
        d = {"platform": self.platform, "device_ids": self.device_ids()}
        for key in _OWN:
            value = getattr(self, key)
            if isinstance(_FIELDS[key], str):  # a path may be a pathlib.Path; None is unset
                value = "" if value is None else str(value)
            d[key] = value
        d["pct_enabled"] = self.pct is not None
        if self.pct is not None:
            d.update(pct_seed=self.pct.seed, pct_depth=self.pct.depth, pct_steps=self.pct.steps)
        return d
