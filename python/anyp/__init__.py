"""anyp — distributed tile kernels written once, run at any number of ranks P.

The Python package mirrors the modules PyPTO's programs import, so a PyPTO
program runs after `pypto` -> `anyp` on its import lines:

    import anyp.language as pl                      # pypto.language
    import anyp.language.distributed as pld         # pypto.language.distributed
    from anyp.runtime import RunConfig              # pypto.runtime
    from anyp.ir.distributed_compiled_program import DistributedConfig

Bodies are read from their source (anyp/_walker.py) and recorded by the
C++ tracer in the native module anyp._core; compiling and running is the C++
core (docs/python.md).
"""

import os as _os

# From the source tree, the native module is in the build directory
# (<repo>/build/release/python/anyp/, or $ANYP_BUILD_DIR/python/anyp/);
# installed, it sits beside this file.
_here = _os.path.dirname(_os.path.abspath(__file__))
for _build in (
    _os.environ.get("ANYP_BUILD_DIR"),
    _os.path.join(_here, "..", "..", "build", "release"),
):
    if _build:
        _native = _os.path.join(_build, "python", "anyp")
        if _os.path.isdir(_native) and _native not in __path__:
            __path__.append(_native)

from . import _core  # noqa: E402
from ._core import (  # noqa: E402,F401
    CompileError,
    ConfigError,
    DeadlockError,
    Error,
    InternalError,
    RaceError,
    RunError,
)
from . import _walker  # noqa: E402,F401  (the handles' operators)
from ._errors import UnsupportedError  # noqa: E402,F401
