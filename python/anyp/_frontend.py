"""anyp._frontend — reads decorated functions from their source and records
them with the C++ tracer (anyp._core).

A function's body is parsed with `ast` and walked statement by statement:
expressions are compiled from the original source (file and line numbers
kept) and evaluated with `eval` against the function's globals, its closure
and the traced locals; the traced handles implement Python's operators, and
`//` and `%` floor as Python's do. `for ... in pl.range(...)` and an `if` on
a traced scalar become the tracer's loop and branch, whose bodies are walked
again inside them. Anything else is refused at its line (docs/python.md).
"""

import ast
import inspect
import io
import os
import textwrap
import tokenize

from . import _core
from ._types import ParamType


class UnsupportedError(_core.CompileError):
    """A construct anyp's Python front-end does not take."""


_HANDLES = (_core.Value, _core.Tile, _core.Scalar)
_walkers = []  # the bodies being walked, innermost last (calls record, not run)


def tracing():
    return bool(_walkers)


def current_target():
    """The name the innermost walked statement assigns to (or None)."""
    return _walkers[-1].target if _walkers else None


# ---- the handles' operators ---------------------------------------------------


def _scalar_op(op, swap=False):
    if swap:
        return lambda a, b: _core.scalar_binary(op, b, a)
    return lambda a, b: _core.scalar_binary(op, a, b)


for _name, _op in (("add", "+"), ("sub", "-"), ("mul", "*"), ("floordiv", "//"), ("mod", "%")):
    setattr(_core.Scalar, f"__{_name}__", _scalar_op(_op))
    setattr(_core.Scalar, f"__r{_name}__", _scalar_op(_op, swap=True))
for _name, _op in (
    ("lt", "<"),
    ("le", "<="),
    ("gt", ">"),
    ("ge", ">="),
    ("eq", "=="),
    ("ne", "!="),
):
    setattr(_core.Scalar, f"__{_name}__", _scalar_op(_op))
_core.Scalar.__neg__ = lambda a: _core.scalar_neg(a)


def _no_truth(_):
    raise UnsupportedError(
        "a traced scalar has no Python truth value (it is known only when the program runs): "
        "use it as the whole test of an if, or combine conditions with pl ops; "
        "and / or / not on traced scalars are not supported by anyp"
    )


_core.Scalar.__bool__ = _no_truth


def _dim_op(op, swap=False):
    def apply(a, b):
        x, y = (b, a) if swap else (a, b)
        if isinstance(b, (int, _core.Dim)) and not isinstance(b, bool):
            return _core.dim_binary(op, x, y)
        if isinstance(b, _core.Scalar):
            return _core.scalar_binary(op, x, y)
        return NotImplemented

    return apply


for _name, _op in (("add", "+"), ("sub", "-"), ("mul", "*"), ("floordiv", "//"), ("mod", "%")):
    setattr(_core.Dim, f"__{_name}__", _dim_op(_op))
    setattr(_core.Dim, f"__r{_name}__", _dim_op(_op, swap=True))


def _tile_op(op, swap=False):
    def apply(a, b):
        if swap and op == "sub":  # s - t = -(t - s)
            return _core.tile_binary("mul", _core.tile_binary("sub", a, b), -1)
        return _core.tile_binary(op, a, b)

    return apply


for _name in ("add", "sub", "mul"):
    setattr(_core.Tile, f"__{_name}__", _tile_op(_name))
    setattr(_core.Tile, f"__r{_name}__", _tile_op(_name, swap=True))
_core.Tile.__truediv__ = _tile_op("div")
_core.Value.__getitem__ = lambda v, i: _core.index(v, i)


# ---- located errors --------------------------------------------------------------


class _Source:
    """One function's source: its file, first line and lines."""

    def __init__(self, fn):
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        lines, self.first = inspect.getsourcelines(fn)
        self.text = textwrap.dedent("".join(lines))
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        self.tree = ast.parse(self.text)
        ast.increment_lineno(self.tree, self.first - 1)
        # Columns in the dedented text are `indent` left of the file's.
        for node in ast.walk(self.tree):
            if hasattr(node, "col_offset"):
                node.col_offset += self.indent
                if getattr(node, "end_col_offset", None) is not None:
                    node.end_col_offset += self.indent
        self.file_lines = open(self.file).read().splitlines() if os.path.exists(self.file) else []

    def where(self, node):
        """'file.py:LINE' and the line with a caret under `node`."""
        line = getattr(node, "lineno", self.first)
        text = self.file_lines[line - 1] if 0 < line <= len(self.file_lines) else ""
        col = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", None)
        if end is None or getattr(node, "end_lineno", line) != line:
            end = _code_end(text)  # a statement over several lines: its first line
        caret = " " * col + "^" * max(1, end - col)
        return f"{os.path.basename(self.file)}:{line}", f"    {text}\n    {caret}"


def _code_end(text):
    """Where the code of one source line ends (before a trailing comment)."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(text.lstrip() + "\n").readline):
            if token.type == tokenize.COMMENT:
                return (
                    len(text) - len(text.lstrip()) + len(text.lstrip()[: token.start[1]].rstrip())
                )
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return len(text.rstrip())


def _located(error, source, node):
    """`error` again, its message prefixed with where it happened (once)."""
    if getattr(error, "_anyp_located", False):
        return error
    where, snippet = source.where(node)
    message = f"{where}: {error}\n{snippet}"
    cls = type(error) if isinstance(error, _core.Error) else _core.CompileError
    located = cls(message)
    located._anyp_located = True
    return located


# ---- the statement walker ------------------------------------------------------


class _Walker:
    """Walks one function body during its trace."""

    def __init__(self, jit, handles):
        self.jit = jit
        self.source = jit.source
        fn = jit.fn
        self.globals = fn.__globals__
        self.env = {}
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                self.env[name] = cell.cell_contents
        self.env.update(zip(jit.param_names, handles))
        self.target = None  # the name being assigned (pld.alloc_window_buffer's default name)

    def run(self):
        body = self.jit.tree_def.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        self.block(body, top=True)

    def block(self, stmts, top=False):
        for i, stmt in enumerate(stmts):
            try:
                self.statement(stmt, last=top and i == len(stmts) - 1)
            except _core.Error as e:
                raise _located(e, self.source, stmt) from None
            except (TypeError, ValueError, NameError, AttributeError, IndexError, KeyError) as e:
                raise _located(
                    _core.CompileError(f"{type(e).__name__}: {e}"), self.source, stmt
                ) from None

    def refuse(self, node, what):
        raise _located(UnsupportedError(f"not supported by anyp: {what}"), self.source, node)

    def eval(self, node):
        code = compile(ast.Expression(node), self.source.file, "eval")
        return eval(code, self.globals, self.env)

    def bind(self, name, value):
        old = self.env.get(name)
        if (
            isinstance(value, _HANDLES)
            and type(old) is type(value)
            and old is not value
            and old.type() != ""
            and old.type() == value.type()
        ):
            _core.assign(old, value)  # a write to the variable, as C++ `x = e` is
        else:
            self.env[name] = value

    def assign_targets(self, target, value, node):
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value) if isinstance(value, (tuple, list)) else None
            if values is None or len(values) != len(target.elts):
                self.refuse(node, "unpacking a value that is not a tuple of the same length")
            for t, v in zip(target.elts, values):
                self.assign_targets(t, v, node)
        else:
            self.refuse(node, f"assigning to {type(target).__name__} (assign to a name)")

    def statement(self, s, last):
        if isinstance(s, ast.Expr):
            self.eval(s.value)
        elif isinstance(s, (ast.Assign, ast.AnnAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if s.value is None:
                return  # a bare annotation declares nothing to trace
            if len(targets) != 1:
                self.refuse(s, "chained assignment (a = b = ...)")
            self.target = targets[0].id if isinstance(targets[0], ast.Name) else None
            try:
                value = self.eval(s.value)
            finally:
                self.target = None
            self.assign_targets(targets[0], value, s)
        elif isinstance(s, ast.AugAssign):
            if not isinstance(s.target, ast.Name):
                self.refuse(s, "augmented assignment to anything but a name")
            binop = ast.BinOp(left=ast.Name(s.target.id, ast.Load()), op=s.op, right=s.value)
            ast.copy_location(binop, s)
            ast.fix_missing_locations(binop)
            self.bind(s.target.id, self.eval(binop))
        elif isinstance(s, ast.For):
            self.loop(s)
        elif isinstance(s, ast.If):
            self.branch(s)
        elif isinstance(s, ast.Return):
            if not last:
                self.refuse(s, "return before the end of the function")
            if s.value is not None:
                self.eval(s.value)  # PyPTO's kernels return their outputs: written in place
        elif isinstance(s, ast.Pass):
            pass
        else:
            kind = {
                ast.While: "while loops",
                ast.Break: "break",
                ast.Continue: "continue",
                ast.With: "with blocks",
                ast.Try: "try blocks",
                ast.FunctionDef: "nested functions",
                ast.Raise: "raise",
                ast.Delete: "del",
                ast.Global: "global",
                ast.Nonlocal: "nonlocal",
                ast.Import: "import",
                ast.ImportFrom: "import",
            }
            self.refuse(
                s,
                kind.get(type(s), f"the statement {type(s).__name__}")
                + " in a traced function (use pl.range and if)",
            )

    def loop(self, s):
        from .language import range as pl_range

        call = s.iter
        if not (isinstance(call, ast.Call) and self.eval(call.func) is pl_range):
            self.refuse(s, "a for loop over anything but pl.range(...)")
        if s.orelse:
            self.refuse(s, "for ... else")
        if not isinstance(s.target, ast.Name):
            self.refuse(s, "a for loop whose target is not one name")
        args = [self.eval(a) for a in call.args]
        kwargs = {k.arg: self.eval(k.value) for k in call.keywords}
        start, stop, step = pl_range.bounds(*args, **kwargs)

        def body(i):
            self.env[s.target.id] = i
            self.block(s.body)

        _core.range(start, stop, step, body)

    def branch(self, s):
        test = self.eval(s.test)
        if isinstance(test, _core.Scalar):
            _core.if_(test, lambda: self.block(s.body), lambda: self.block(s.orelse))
        elif isinstance(test, _HANDLES):
            self.refuse(s.test, "an if on a tensor or tile (test a scalar)")
        elif test:
            self.block(s.body)
        else:
            self.block(s.orelse)


# ---- decorated functions ------------------------------------------------------------


class JitFunction:
    """A @pl.jit.incore / @pl.jit / @pl.jit.host function."""

    def __init__(self, fn, level):
        self.fn, self.level = fn, level
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__
        self.source = _Source(fn)
        self.tree_def = self.source.tree.body[0]
        signature = inspect.signature(fn)
        self.param_names, self.params = [], []
        for p in signature.parameters.values():
            t = p.annotation
            if not isinstance(t, ParamType):
                where, snippet = self.source.where(self.tree_def)
                raise _core.CompileError(
                    f"{where}: function '{fn.__name__}', parameter '{p.name}': annotate it with "
                    f"pl.Tensor[[shape], dtype], pl.Out[...], pl.InOut[...], "
                    f"pld.DistributedTensor[[shape], dtype] or pl.Scalar[dtype]\n{snippet}"
                )
            self.param_names.append(p.name)
            self.params.append(_core.param(p.name, t.kind, t.shape, t.dtype, t.intent))
        self._definition = None
        self._compiled = {}

    def definition(self):
        if self._definition is None:

            def body(handles):
                _walkers.append(_Walker(self, handles))
                try:
                    _walkers[-1].run()
                finally:
                    _walkers.pop()

            self._definition = _core.define(self.fn.__name__, self.level, self.params, body)
        return self._definition

    def _ordered(self, args, kwargs):
        """The call's arguments in parameter order (keywords by name)."""
        name = self.fn.__name__
        if len(args) > len(self.param_names):
            raise TypeError(f"{name}() takes {len(self.param_names)} arguments, got {len(args)}")
        bound = dict(zip(self.param_names, args))
        for k, v in kwargs.items():
            if k not in self.param_names:
                raise TypeError(f"{name}() has no parameter '{k}'")
            if k in bound:
                raise TypeError(f"{name}() got parameter '{k}' twice")
            bound[k] = v
        missing = [p for p in self.param_names if p not in bound]
        if missing:
            raise TypeError(f"{name}() is missing parameter '{missing[0]}'")
        return [bound[p] for p in self.param_names]

    def __call__(self, *args, device=None, config=None, **kwargs):
        if tracing():
            _core.call(self.definition(), self._ordered(args, kwargs), device)
            return None
        if self.level != "host":
            raise UnsupportedError(
                f"'{self.fn.__name__}' is a {self.level} function: call it from a traced "
                "function, or run a @pl.jit.host function"
            )
        # Compile on first call (per shapes and config), then run.
        compiled = self.compile(*args, config=config, **kwargs)
        compiled(*args, **kwargs)
        return compiled

    def compile(self, *args, config=None, **kwargs):
        from .ir.distributed_compiled_program import CompiledProgram
        from .runtime import RunConfig

        if self.level != "host":
            raise UnsupportedError(
                f"only a @pl.jit.host function compiles; '{self.fn.__name__}' " f"is {self.level}"
            )
        config = config or RunConfig()
        ordered = self._ordered(args, kwargs)
        native = _core.compile(self.definition(), ordered, self.param_names, config.to_dict())
        return CompiledProgram(self, native, config)

    def ir_text(self):
        return _core.ir_text(self.definition())
