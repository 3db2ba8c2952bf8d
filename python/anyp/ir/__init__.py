"""anyp.ir — PyPTO's `ir.compile` (compiles a @pl.program or @pl.jit.host
function) and `ir.DistributedConfig`, the two names PyPTO's programs import
from `pypto.ir`."""

from .distributed_compiled_program import DistributedConfig

__all__ = ["DistributedConfig", "compile"]


def compile(program, *args, config=None, **kwargs):  # noqa: A001  (PyPTO's name)
    return program.compile(*args, config=config, **kwargs)
