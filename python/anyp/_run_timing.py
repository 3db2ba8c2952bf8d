"""anyp._run_timing — RunTiming (anyp.runtime.task_interface.RunTiming),
PyPTO's timing of one run, as `compiled.last_run_timing` (and a prepared
worker's `rt.last_run_timing`) gives it after each run.

host_wall is measured: the wall-clock time of the call that ran the
program, in this process. device_wall is modeled, since anyp has no device:
the run's makespan on the cost model's clock when the run computed the
modeled timeline (RunConfig(timeline=True)), else 0, as PyPTO reports 0
for an L3 program, whose tasks' device time its scheduler does not add up.
An orchestration function of a program without a host (PyPTO's L2 call,
compiled["name"](...)) always runs with the timeline, so its device_wall
is that task's modeled time (docs/python.md, "Run timing")."""


class RunTiming:
    """One run's host wall time (measured) and device wall time (modeled)."""

    def __init__(self, host_wall_ns, device_wall_ns):
        self.host_wall_ns, self.device_wall_ns = int(host_wall_ns), int(device_wall_ns)

    @property
    def host_wall_us(self):
        return self.host_wall_ns / 1000.0

    @property
    def device_wall_us(self):
        return self.device_wall_ns / 1000.0

    @classmethod
    def of(cls, host_wall_ns, stats):
        """The timing of a run that took `host_wall_ns` and returned `stats`."""
        device = round(stats.makespan_ns) if stats.has_timeline else 0
        return cls(max(1, host_wall_ns), device)

    def __repr__(self):
        return f"RunTiming(host_wall_us={self.host_wall_us:.3f}, device_wall_us={self.device_wall_us:.3f})"
