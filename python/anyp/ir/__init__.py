"""anyp.ir — PyPTO's `ir.compile`: compiles a @pl.jit.host function."""


def compile(program, *args, config=None, **kwargs):  # noqa: A001  (PyPTO's name)
    return program.compile(*args, config=config, **kwargs)
