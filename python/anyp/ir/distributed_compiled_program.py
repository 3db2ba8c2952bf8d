"""anyp.ir.distributed_compiled_program — PyPTO's DistributedConfig and the
compiled program: call it with the tensors to run it (outputs are written
in place); a call returns the run's RunStats (anyp::RunStats: the cost card's
counters, the modeled timeline when RunConfig.timeline is on)."""

import copy
import pathlib
import tempfile
import time

from .. import _core, _dfx, _host_worker
from .._errors import UnsupportedError, _user_facing
from . import device_tensors
from .distributed_worker import DistributedWorker
from .._run_timing import RunTiming

# The configuration and RunStats of the last run that finished, any program
# (the C++ run listener's view: anyp.runtime.cli.report checks that the run
# took the command line's flags, and prints its stats).
last_run_config = [None]
last_run_stats = [None]


def _returned(outputs):
    """A return-style call's result: its one output, or a tuple of them."""
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _device_list(device_ids):
    """The device ids as ints; TypeError naming what is not one."""
    if isinstance(device_ids, (str, bytes)) or not hasattr(device_ids, "__iter__"):
        raise TypeError(
            f"DistributedConfig: device_ids must be a list of ints, got {type(device_ids).__name__}"
        )
    ids = list(device_ids)
    for d in ids:
        if isinstance(d, bool) or not isinstance(d, int) and not hasattr(d, "__index__"):
            raise TypeError(
                f"DistributedConfig: device_ids must be a list of ints, got {d!r} among them"
            )
    ids = [int(d) for d in ids]
    for d in ids:
        if not -(2**63) <= d < 2**63:
            raise TypeError(f"DistributedConfig: device id {d} does not fit in 64 bits")
    return ids


class DistributedConfig:
    """The devices, one per rank: P = len(device_ids) (default [0, 1]).
    num_sub_workers is PyPTO's host-callback pool, block_dim and
    aicpu_thread_num its device launch sizes: anyp has none of them and
    ignores them (a kernel's blocks are pl.spmd's)."""

    def __init__(self, device_ids=None, num_sub_workers=0, block_dim=None, aicpu_thread_num=None):
        self.device_ids = None if device_ids is None else _device_list(device_ids)
        self.num_sub_workers = num_sub_workers
        self.block_dim, self.aicpu_thread_num = block_dim, aicpu_thread_num


class CompiledProgram:
    """A program compiled for one P, one set of shapes and one platform
    (PyPTO's DistributedCompiledProgram: the same class under that name)."""

    @classmethod
    def from_dir(cls, output_dir, **kwargs):
        """PyPTO's reload of a build directory: refused, with the reason."""
        raise UnsupportedError(
            "not supported by anyp: DistributedCompiledProgram.from_dir "
            f"('{output_dir}'): anyp writes its artifact to read, not to reload (it keeps no "
            "built kernels); compile the program again with ir.compile(...), whose plan cache "
            "makes a repeat compile cheap"
        )

    def __init__(self, function, native, config):
        self._function, self._native, self.config = function, native, config
        self._made_output_dir = None
        self.last_run_timing = None  # a RunTiming after each run

    @property
    def output_dir(self):
        """Where the artifact and the DFX records go (a pathlib.Path), or
        None: the compile's output_dir, else the folder a run that wrote DFX
        records without one made."""
        chosen = self._native.output_dir or self._made_output_dir
        return pathlib.Path(chosen) if chosen else None

    def lowered_code(self):
        return self._native.lowered_code()

    def collective_choices(self):
        """Each mode="auto" allreduce's choice and every candidate's
        estimate, a line per call (docs/collectives.md §3.3d); "" if none."""
        return self._native.collective_choices()

    def collective_table(self):
        """Every builtin collective call: the algorithm it runs and why, then
        each candidate algorithm's modeled time, fastest first (the
        command line's --explain-collectives); "" if the program has none."""
        return self._native.collective_table()

    def write_artifact(self, directory):
        """Writes the compiled artifact (plan, lowered code) into `directory`."""
        self._native.write_artifact(str(directory))

    @_user_facing
    def prepare(self, config=None, **kwargs):
        """A DistributedWorker for many dispatches of this program (PyPTO's
        compiled.prepare(): persistent=, reset_persistent_windows=,
        extra_compiled=; anyp.ir.distributed_worker)."""
        return DistributedWorker(self, config, **kwargs)

    def dispatch_config(self, config):
        """The RunConfig a dispatch given `config` runs with: PyPTO's programs
        pass one per call (RunConfig(platform=...)). Its platform and devices
        must be the compile's (a program is compiled for them); every other
        field is the call's, devices and output_dir left out default to the
        compile's."""
        if type(config).__name__ != "RunConfig":
            raise TypeError(f"config must be an anyp.runtime.RunConfig, got {config!r}")
        if config.platform != self.config.platform:
            raise _core.ConfigError(
                f"config error: the program was compiled for platform '{self.config.platform}'"
                f", not '{config.platform}': compile it again"
            )
        devices = config.distributed_config.device_ids
        if devices is not None and devices != self.config.device_ids():
            raise _core.ConfigError(
                f"config error: the program was compiled for devices {self.config.device_ids()}"
                f", not {devices}: compile it again"
            )
        wanted = copy.copy(config)
        if devices is None:
            wanted.distributed_config = self.config.distributed_config
        if not wanted.output_dir:
            wanted.output_dir = self.config.output_dir
        if not wanted.output_dir and any(getattr(wanted, k) for k in _dfx.SWITCHES):
            # PyPTO always has an output folder; without one the records go
            # to a fresh folder, named by output_dir from then on.
            if self._made_output_dir is None:
                self._made_output_dir = tempfile.mkdtemp(prefix=f"anyp_{self._function.__name__}_")
            wanted.output_dir = self._made_output_dir
        return wanted

    @_user_facing
    def __call__(self, *args, config=None, **kwargs):
        args, kwargs, outputs = self._function.with_returned_outputs(
            args, kwargs, len(self.config.device_ids())
        )
        if outputs is not None:  # PyPTO's `y = compiled(x)`
            self(*args, config=config, **kwargs)
            return _returned(outputs)
        if config is not None:
            # A call that asks for more (race checking, a schedule, the
            # timeline) runs as it asks: compiled again with its config.
            wanted = self.dispatch_config(config)
            if wanted.to_dict() != self.config.to_dict():
                again = self._function.compile(*args, config=wanted, **kwargs)
                stats = again(*args, **kwargs)
                self.last_run_timing = again.last_run_timing
                return stats
        _host_worker.check_bound(self._function)
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, (device_tensors.DeviceTensor, device_tensors.StackedDeviceTensor)):
                raise ValueError(
                    f"{a!r} is resident in the prepared worker that made it: dispatch with that "
                    "worker (rt(...)), or pass host tensors"
                )
        ordered = self._function._ordered(args, kwargs)
        start = time.perf_counter_ns()
        stats = _core.run(self._native, ordered)
        self.last_run_timing = RunTiming.of(time.perf_counter_ns() - start, stats)
        last_run_config[0], last_run_stats[0] = self.config, stats
        return stats


# PyPTO's name for the compiled program (pypto.ir.distributed_compiled_program).
DistributedCompiledProgram = CompiledProgram
