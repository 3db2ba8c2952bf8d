"""anyp.runtime.device_runner — PyPTO's device toolchain module
(compile_and_assemble, compile_single_kernel, execute_on_device, ...), which
builds and launches NPU kernels. anyp compiles and runs a program itself
(ir.compile, then call it), so the module imports and every name in it is
refused with that reason (docs/python.md)."""

from .._frontend import UnsupportedError


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    raise UnsupportedError(
        f"not supported by anyp: anyp.runtime.device_runner.{name} (PyPTO's device toolchain, "
        "which builds and launches NPU kernels; anyp compiles and runs a program itself: "
        "compiled = ir.compile(program, ...), then compiled(*tensors))"
    )
