"""anyp.runtime — PyPTO's RunConfig."""

from ..ir.distributed_compiled_program import DistributedConfig

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


class RunConfig:
    """How to compile and run: the platform, the devices (one per rank) and
    anyp's own settings (engine, check_races, workers, output_dir)."""

    def __init__(
        self,
        platform="a2a3sim",
        distributed_config=None,
        *,
        engine="threads",
        check_races=False,
        workers=0,
        output_dir=None,
        **kwargs,
    ):
        unknown = sorted(set(kwargs) - _IGNORED)
        if unknown:
            raise TypeError(f"RunConfig: not supported by anyp: {', '.join(unknown)}")
        self.platform = platform
        self.distributed_config = distributed_config or DistributedConfig()
        self.engine, self.check_races, self.workers = engine, check_races, workers
        self.output_dir = output_dir

    def device_ids(self):
        devices = self.distributed_config.device_ids
        return [0, 1] if devices is None else list(devices)

    def to_dict(self):
        d = {
            "platform": self.platform,
            "device_ids": self.device_ids(),
            "engine": self.engine,
            "check_races": self.check_races,
            "workers": self.workers,
        }
        if self.output_dir:
            d["output_dir"] = str(self.output_dir)
        return d
