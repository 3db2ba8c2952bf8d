"""anyp.runtime.task_interface — PyPTO's module of run-time types; on anyp
it holds RunTiming (anyp/_run_timing.py)."""

from .._run_timing import RunTiming  # noqa: F401
