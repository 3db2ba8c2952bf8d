"""anyp.runtime.device_runner — PyPTO's device toolchain module
(compile_and_assemble, compile_single_kernel, execute_on_device, ...), which
builds and launches NPU kernels. anyp compiles and runs a program itself
(ir.compile, then call it), so the module imports and every name in it is
refused with that reason (docs/python.md)."""

from .._errors import refusing_getattr

__getattr__ = refusing_getattr(
    "anyp.runtime.device_runner",
    "PyPTO's device toolchain, which builds and launches NPU kernels; anyp compiles and runs "
    "a program itself: compiled = ir.compile(program, ...), then compiled(*tensors)",
)
