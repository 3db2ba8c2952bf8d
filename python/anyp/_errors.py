"""anyp._errors — the floor under the Python front-end: its errors, the
source of each function read, the stack of bodies being walked, and the
located messages and tracebacks built from them.

An error raised while a statement is read is re-raised as `file.py:LINE:
message` with the line and a caret (_located); an error the core finds
after the trace names its ops "at step.py:42", and _with_source_lines
appends those lines; a public entry point (_user_facing) leaves with the
user's frames only (ANYP_BACKTRACE=1 keeps the front-end's)."""

import ast
import functools
import inspect
import io
import os
import re
import sys
import textwrap
import tokenize

from . import _core, _host_worker
from ._spellings import python_spelling


class UnsupportedError(_core.CompileError):
    """A construct anyp's Python front-end does not take."""


def refusing_getattr(module, why):
    """A module's __getattr__ that refuses every name of a PyPTO module anyp
    does not have, with the reason (`module`: its anyp name)."""

    def __getattr__(name):  # noqa: N807 (a module's __getattr__)
        if name.startswith("__"):
            raise AttributeError(name)
        raise UnsupportedError(f"not supported by anyp: {module}.{name} ({why})")

    return __getattr__


walkers = []  # the bodies being walked, innermost last (calls record, not run)


def tracing():
    """Whether a function body is being walked (its calls record, not run)."""
    return bool(walkers)


class _Source:
    """One function's source: its file, first line and lines."""

    def __init__(self, fn):
        self.file = inspect.getsourcefile(fn) or "<unknown>"
        try:
            lines, self.first = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            name = getattr(fn, "__qualname__", getattr(fn, "__name__", repr(fn)))
            raise UnsupportedError(
                f"not supported by anyp: '{name}' has no source file to read (anyp reads a "
                "decorated function from its source, so it cannot take one made by exec, eval "
                "or the interactive prompt; define it in a .py file)"
            ) from None
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
        _sources.setdefault(os.path.basename(self.file), self)

    def span(self, node):
        """(line, text, first column, end column) of `node` on its first line."""
        line = getattr(node, "lineno", self.first)
        text = self.file_lines[line - 1] if 0 < line <= len(self.file_lines) else ""
        col = getattr(node, "col_offset", 0)
        end = getattr(node, "end_col_offset", None)
        if end is None or getattr(node, "end_lineno", line) != line:
            end = _code_end(text)  # a statement over several lines: its first line
        return line, text, col, max(end, col + 1)

    def where(self, node):
        """'file.py:LINE' and the line with a caret under `node`."""
        line, text, col, end = self.span(node)
        caret = " " * col + "^" * (end - col)
        return f"{os.path.basename(self.file)}:{line}", f"    {text}\n    {caret}"


# Every function source read, by the file's base name: the core names
# places as "op pl.store at step.py:42" (base name and line).
_sources = {}
_SITE = re.compile(r" at ([A-Za-z0-9_.+-]+\.py):([0-9]+)")


def _source_lines(text, limit=3):
    """The lines the core's message `text` names ("... at step.py:42"),
    each with a caret under its code: at most `limit` distinct places, in
    the order the message names them."""
    places = []
    for m in _SITE.finditer(text):
        place = (m.group(1), int(m.group(2)))
        if place not in places:
            places.append(place)
    out = []
    for base, line in places[:limit]:
        source = _sources.get(base)
        if source is None or not 0 < line <= len(source.file_lines):
            continue
        code = source.file_lines[line - 1]
        col = len(code) - len(code.lstrip())
        caret = " " * col + "^" * max(1, _code_end(code) - col)
        out.append(f"  {base}:{line}\n    {code}\n    {caret}")
    return out


def _with_source_lines(error):
    """A compile or run error of the core, found after the trace (its
    message names ops "at step.py:42"), with those lines and carets
    appended; `error` itself when it names none or is located already."""
    if getattr(error, "_anyp_located", False) or not isinstance(error, _core.Error):
        return error
    text = python_spelling(str(error))
    lines = _source_lines(text)
    if not lines and text == str(error):
        return error
    located = type(error)("\n".join([text.rstrip("\n"), *lines]) if lines else text)
    located._anyp_located = True
    return located


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


def _frames(source, node, name):
    """The user's frames for an error at `node`: the call sites of the bodies
    being walked (outermost first), then `node` itself in function `name`."""
    outer = walkers[:-1] if walkers and walkers[-1].source is source else walkers
    frames = [(w.source, w.current, w.jit.__name__) for w in outer if w.current is not None]
    frames.append((source, node, name))
    return frames


def _located(error, source, node, name=None):
    """`error` again, its message prefixed with where it happened (once)."""
    if getattr(error, "_anyp_located", False):
        return error
    where, snippet = source.where(node)
    # The core names the statement's place itself ("function 'k' (incore) at
    # step.py:16: ..."): the prefix says it once.
    text = python_spelling(str(error).replace(f" at {where}", "", 1))
    message = f"{where}: {text}\n{snippet}"
    cls = type(error) if isinstance(error, _core.Error) else _core.CompileError
    located = cls(message)
    located._anyp_located = True
    located._anyp_frames = _frames(
        source, node, name or (walkers[-1].jit.__name__ if walkers else "<module>")
    )
    return located


def _user_frame(source, node, name, error):
    """A traceback entry in the user's file at `node`: a tiny code object
    compiled under the user's file name raises `error` at that line, its
    columns on `node` (so Python's own caret, if any, is under it too)."""
    line, _, col, end = source.span(node)
    ident = "_" * max(1, end - col - 2)
    code = ident + "()"
    if col > 0:  # keep the call at `col`: "(   ___())"
        code = "(" + " " * (col - 1) + code + ")"
    compiled = compile("\n" * (line - 1) + code, source.file, "exec").replace(co_name=name)

    def raise_it():
        raise error

    try:
        exec(compiled, {ident: raise_it})
    except BaseException:  # noqa: B902  (it is `error`)
        return sys.exc_info()[2].tb_next  # the frame of `compiled`
    raise AssertionError("unreachable")


def _user_traceback(error):
    tb = None
    for source, node, name in reversed(getattr(error, "_anyp_frames", [])):
        entry = _user_frame(source, node, name, error)
        entry.tb_next = tb
        tb = entry
    return tb


# ---- a public op called with arguments of the wrong kind ----------------------------

# The Python errors a public op's wrapper lets through when an argument is of
# the wrong kind (pybind11's overload error, iterating or indexing None, ...):
# their text names anyp's internals, so the message names the op and what
# each argument was instead.
_INTERNAL_TYPE_ERRORS = re.compile(
    r"incompatible function arguments|object is not iterable|object is not subscriptable|"
    r"has no attribute|unsupported operand type|not supported between instances|"
    r"\(\) argument must be|Unable to cast Python instance"
)
_PYBIND_FORMS = re.compile(
    r"The following argument types are supported:\n(.*?)\n\nInvoked with:", re.S
)
# The public modules, by the name a program calls them under.
_PUBLIC_MODULES = {
    "anyp.language": "pl",
    "anyp.language._tile_ops": "pl",
    "anyp.language._tensor_ops": "pl",
    "anyp.language.distributed": "pld",
    "anyp.language.distributed.windows": "pld",
    "anyp.language.distributed.system": "pld.system",
    "anyp.language.distributed.tensor": "pld.tensor",
    "anyp.language.distributed.tile": "pld.tile",
}
_CORE_KINDS = {
    "Value": "tensor or window view",
    "Tile": "tile",
    "Scalar": "traced scalar",
    "Dim": "dim",
    "CommCtx": "comm context (pld.get_comm_ctx)",
    "DType": "dtype",
}


def _kind(value):
    """What a value is, in a program's words."""
    if value is None:
        return "None"
    if isinstance(value, (bool, int, float, str)):
        return type(value).__name__
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    name = type(value).__name__
    if type(value).__module__ == "anyp._core":
        return _CORE_KINDS.get(name, "pld." + name)
    return name


def _expected_kind(pybind_type):
    """A parameter type of pybind11's overload listing, in a program's words."""
    core = pybind_type.removeprefix("anyp._core.")
    if core != pybind_type:
        return _CORE_KINDS.get(core, "pld." + core)
    return {"sequence": "list", "handle": "value", "object": "value"}.get(pybind_type, pybind_type)


def _public_call_frame(tb):
    """The frame of the outermost public op the traceback passes through."""
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if module in _PUBLIC_MODULES and not tb.tb_frame.f_code.co_name.startswith("_"):
            return tb.tb_frame
        tb = tb.tb_next
    return None


def wrong_kind_message(error):
    """For an internal TypeError or AttributeError raised inside a public op:
    "pld.system.wait(signal=window view, ..., cmp=tuple of 1): an argument is
    of the wrong kind; it takes (tensor or window view, list, value,
    pld.WaitCmp)"; None for any other error (its own message stands)."""
    text = str(error)
    if not _INTERNAL_TYPE_ERRORS.search(text):
        return None
    frame = _public_call_frame(error.__traceback__)
    if frame is None:
        return None
    code = frame.f_code
    params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    shown = ", ".join(f"{p}={_kind(frame.f_locals.get(p))}" for p in params)
    call = f"{_PUBLIC_MODULES[frame.f_globals['__name__']]}.{code.co_name}({shown})"
    forms = _PYBIND_FORMS.search(text)
    if forms is None and "Unable to cast Python instance" in text:  # pybind11 names nothing
        return f"{call}: an argument is of the wrong kind"
    if forms is None:
        return f"{call}: an argument is of the wrong kind ({type(error).__name__}: {text})"
    takes = []
    for line in forms.group(1).splitlines():
        signature = re.sub(r"^\s*\d+\.\s*", "", line).split(" -> ")[0].strip("()")
        kinds = [_expected_kind(p.split(": ", 1)[-1]) for p in signature.split(", ") if p]
        takes.append("(" + ", ".join(kinds) + ")")
    return f"{call}: an argument is of the wrong kind; it takes {' or '.join(takes)}"


def _user_facing(method):
    """A public entry point: an anyp error leaves it with the user's frames
    only (the front-end's are dropped unless ANYP_BACKTRACE=1)."""

    @functools.wraps(method)
    def entry(*args, **kwargs):
        try:
            return method(*args, **kwargs)
        except _core.Error as e:
            if tracing():
                raise
            worker_error = _host_worker.raised_for(e) if isinstance(e, _core.RunError) else None
            if worker_error is not None:
                worker_error.add_note(f"anyp: it ended the run: {e}")
                raise worker_error from None
            if os.environ.get("ANYP_BACKTRACE") == "1":
                raise _with_source_lines(e) from e
            error = _with_source_lines(e)
        raise error.with_traceback(_user_traceback(error)) from None

    return entry


# ---- what a body does, read before it is walked ----------------------------------
