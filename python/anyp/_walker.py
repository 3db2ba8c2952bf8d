"""anyp._walker — walks a decorated function's body statement by statement
and records it with the C++ tracer (anyp._core).

Expressions are compiled from the original source (file and line numbers
kept) and evaluated with `eval` against the function's globals, its closure
and the traced locals; the traced handles implement Python's operators, with
`//` and `%` on traced integers as PyPTO's generated code computes them:
truncating in kernels and orchestration functions, flooring in a host
function. `for ... in pl.range(...)` (also with `init_values=` and
`pl.yield_`) and an `if` on a traced scalar become the tracer's loop and
branch, whose bodies are walked again inside them; an `if` whose branch ends
in `return` takes the rest of the block as its other branch. Anything else
is refused at its line (docs/python.md). The language (anyp/language) hands
the walker what it needs (use_language): its loop ranges and tensor
subscripts."""

import ast
import contextlib
import copy

from . import _arrays, _core, _host_worker, _scopes
from ._errors import UnsupportedError, _located, wrong_kind_message
from ._errors import walkers as _walkers
from ._types import ParamType

_HANDLES = (_core.Value, _core.Tile, _core.Scalar)
_ARRAYS = (_arrays.ScalarArray, _arrays.TaskArray)  # pl.array.create's
_MISSING = object()
_launch_blocks = []  # block counts of the `with pl.spmd(n):` blocks being walked


class _Language:
    """What the language hands the walker (use_language): the type of
    pl.range and its kin, and the tensor subscript ops that x[a:b] reads
    and x[a:b] = v writes."""

    range_type = None
    subscript = None
    assign_subscript = None


_language = _Language()


def use_language(range_type, subscript, assign_subscript):
    """Called once by anyp.language, which lies above the walker."""
    _language.range_type = range_type
    _language.subscript = subscript
    _language.assign_subscript = assign_subscript


def current_target():
    """The name the innermost walked statement assigns to (or None)."""
    return _walkers[-1].target if _walkers else None


def current_walker(what):
    """The innermost body being walked; `what` names the caller in the error."""
    if not _walkers:
        raise UnsupportedError(f"{what} is used inside a traced function body")
    return _walkers[-1]


# ---- the handles' operators ---------------------------------------------------


# The levels whose `//` and `%` on traced integers truncate (PyPTO generates
# kernels as PTO code, remsi / divsi, and orchestration functions as C++); a
# host function floors, as its generated Python does.
_TRUNCATING_LEVELS = ("incore", "orchestration")


def _scalar_op(op, swap=False):
    def apply(a, b):
        x, y = (b, a) if swap else (a, b)
        if op in ("//", "%") and _walkers and _walkers[-1].level in _TRUNCATING_LEVELS:
            return _core.scalar_binary("trunc" + op, x, y)
        return _core.scalar_binary(op, x, y)

    return apply


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


def _no_iter(_):
    raise UnsupportedError(
        "not supported by anyp: iterating over a traced value (a comprehension, unpacking or "
        "for loop over a tensor, tile or scalar); loop with pl.range"
    )


_core.Scalar.__bool__ = _no_truth
for _cls in _HANDLES:
    _cls.__iter__ = _no_iter


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


def _operator(apply_op, op, swap=False):
    def apply(a, b):
        if swap and op == "sub":  # s - t = -(t - s)
            return apply_op("mul", apply_op("sub", a, b), -1)
        return apply_op(op, a, b)

    return apply


def install_operators(cls, apply_op):
    """`+ - *` (either side) and `/` on a handle class, as `apply_op(op, a, b)`."""
    for name in ("add", "sub", "mul"):
        setattr(cls, f"__{name}__", _operator(apply_op, name))
        setattr(cls, f"__r{name}__", _operator(apply_op, name, swap=True))
    cls.__truediv__ = _operator(apply_op, "div")


install_operators(_core.Tile, _core.tile_elementwise)


def _index(value, index):
    """`x[r]` drops x's leading dim; `x[a, b]` is PyPTO's `x[a][b]`."""
    if not isinstance(index, tuple):
        return _core.index(value, index)
    if not index:
        raise _core.CompileError("compile error: x[()] names no index: write x[r] or x[a, b]")
    for one in index:
        value = _core.index(value, one)
    return value


_core.Value.__getitem__ = _index


def _describe(value):
    """What a name holds, for messages: 'tile [1, 64] FP32', 'a Python int'."""
    if isinstance(value, _HANDLES):
        return value.type() or type(value).__name__.lower()
    if value is _MISSING:
        return "unbound"
    if isinstance(value, _ARRAYS):
        return value.describe()
    return f"a Python {type(value).__name__}"


def _same_python_value(a, b):
    plain = (int, float, str, bool, type(None))
    return type(a) is type(b) and isinstance(a, plain) and a == b


def _copy(value):
    """A new variable holding `value` (C++'s `pl::Tile b = a;`)."""
    copy = getattr(_core, "copy", None)
    if copy is not None:
        return copy(value)
    if isinstance(value, _core.Tile):
        return _core.tile_elementwise("mul", value, 1)  # exact for every dtype
    if isinstance(value, _core.Scalar):
        return _core.scalar_binary("*", value, 1)
    return value  # a tensor is a reference: both names see one tensor


def _new_scalar(number, dtype=None):
    """A traced scalar variable holding the Python number `number` (of
    `dtype`, when a `name: pl.Scalar[dtype] = number` declared one)."""
    if dtype is not None and hasattr(_core, "cast_scalar"):
        return _core.cast_scalar(number, dtype)
    return _core.scalar_binary("+", number, 0)


# ---- located errors and the user's traceback -------------------------------------


def _loaded_names(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _target_names(target):
    """The names an assignment target rebinds (`x[a:b] = v` rebinds none)."""
    if isinstance(target, ast.Name):
        return {target.id}
    if isinstance(target, (ast.Tuple, ast.List)):
        return set().union(*(_target_names(t) for t in target.elts))
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    return set()


def _read_before_written(stmts):
    """Names a body reads before it has surely written them: the values a
    loop body carries from one iteration to the next."""
    carried = set()

    def visit(stmts, written):
        for s in stmts:
            if isinstance(s, (ast.Assign, ast.AnnAssign)):
                if s.value is not None:
                    carried.update(_loaded_names(s.value) - written)
                for t in s.targets if isinstance(s, ast.Assign) else [s.target]:
                    carried.update(_loaded_names(t) - written)  # x[a:b] = v reads x, a, b
                    written |= _target_names(t)
            elif isinstance(s, ast.AugAssign):
                carried.update((_loaded_names(s.value) | _target_names(s.target)) - written)
                written |= _target_names(s.target)
            elif isinstance(s, ast.For):
                carried.update(_loaded_names(s.iter) - written)
                visit(s.body, written | _target_names(s.target))
            elif isinstance(s, ast.If):
                carried.update(_loaded_names(s.test) - written)
                then_written, else_written = set(written), set(written)
                visit(s.body, then_written)
                visit(s.orelse, else_written)
                written |= then_written & else_written
            else:
                carried.update(_loaded_names(s) - written)

    visit(stmts, set())
    return carried


def _assignment_counts(stmts):
    """How often each name is assigned in a body (a loop body counts twice:
    it runs again)."""
    counts = {}

    def add(names, times):
        for n in names:
            counts[n] = counts.get(n, 0) + times

    def visit(stmts, times):
        for s in stmts:
            if isinstance(s, ast.Assign):
                for t in s.targets:
                    add(_target_names(t), times)
            elif isinstance(s, (ast.AnnAssign, ast.AugAssign)):
                add(_target_names(s.target), times)
            elif isinstance(s, ast.For):
                add(_target_names(s.target), 2)
                visit(s.body, 2)
            elif isinstance(s, ast.If):
                visit(s.body, times)
                visit(s.orelse, times)

    visit(stmts, 1)
    return counts


def _written_names(body):
    """The names a block of plain Python writes through: n[...] = v,
    n.attr = v, n op= v, n.method_(...) (torch's in-place methods) and
    f(..., out=n)."""
    written = set()
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            base = target
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name) and (
                base is not target or isinstance(node, ast.AugAssign)
            ):
                written.add(base.id)
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.attr.endswith("_")
                and not func.attr.startswith("_")
            ):
                written.add(func.value.id)
            for keyword in node.keywords:
                if keyword.arg == "out" and isinstance(keyword.value, ast.Name):
                    written.add(keyword.value.id)
    return written


def _has_inner_scope(node):
    inner = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.Lambda)
    return any(isinstance(n, inner) for n in ast.walk(node))


def _ends_in_return(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _ends_in_return(last.body) and _ends_in_return(last.orelse)


def _early_returns(stmts):
    """`if c: ... return` followed by more statements is `if c: ... return
    else: <the rest>` (and the mirror image): the branch that returns ends
    the function, the other one runs the rest."""
    for i, s in enumerate(stmts):
        rest = list(stmts[i + 1 :])
        if not (isinstance(s, ast.If) and rest):
            continue
        then_returns, else_returns = _ends_in_return(s.body), _ends_in_return(s.orelse)
        if then_returns == else_returns:
            continue
        if then_returns:
            branch = ast.If(test=s.test, body=s.body, orelse=list(s.orelse) + rest)
        else:
            branch = ast.If(test=s.test, body=list(s.body) + rest, orelse=s.orelse)
        return list(stmts[:i]) + [ast.copy_location(branch, s)]
    return stmts


class _SliceError(Exception):
    """A slice the front-end cannot take, at `node`."""

    def __init__(self, node, what):
        super().__init__(what)
        self.node = node


def _same_expr(a, b):
    return ast.dump(a) == ast.dump(b)


def _slice_parts(node):
    """`x[a:b, c:d]` as (x, (a, c), (extent, extent)) expressions, an extent
    None for a slice to the end of its dim. `a : a + e` (or `e + a`) has
    extent e, which a static e keeps static when a is a run-time scalar."""
    elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    offsets, extents = [], []
    for e in elements:
        if not isinstance(e, ast.Slice):
            raise _SliceError(
                e,
                "indexing one dim of a slice (slice every dim with start:stop, e.g. x[0:8, 0:16])",
            )
        if e.step is not None:
            raise _SliceError(e, "a slice with a step (slices are contiguous)")
        lower = e.lower if e.lower is not None else ast.Constant(0)
        offsets.append(lower)
        upper = e.upper
        if upper is None:
            extents.append(ast.Constant(None))
        elif e.lower is None:
            extents.append(upper)
        elif isinstance(upper, ast.BinOp) and isinstance(upper.op, ast.Add):
            if _same_expr(upper.left, lower):
                extents.append(upper.right)
            elif _same_expr(upper.right, lower):
                extents.append(upper.left)
            else:
                extents.append(ast.BinOp(left=upper, op=ast.Sub(), right=lower))
        else:
            extents.append(ast.BinOp(left=upper, op=ast.Sub(), right=lower))
    parts = ast.Tuple(
        elts=[
            node.value,
            ast.Tuple(elts=offsets, ctx=ast.Load()),
            ast.Tuple(elts=extents, ctx=ast.Load()),
        ],
        ctx=ast.Load(),
    )
    return ast.fix_missing_locations(ast.copy_location(parts, node))


def _is_slicing(node):
    elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return any(isinstance(e, ast.Slice) for e in elements)


class _Subscripts(ast.NodeTransformer):
    """Rewrites every `x[a:b, ...]` read into `_anyp_subscript_(parts)`."""

    def visit_Subscript(self, node):
        self.generic_visit(node)
        if not _is_slicing(node):
            return node
        call = ast.Call(
            func=ast.Name("_anyp_subscript_", ast.Load()), args=[_slice_parts(node)], keywords=[]
        )
        return ast.fix_missing_locations(ast.copy_location(call, node))


def _slice_extents(value, offsets, extents):
    """The extents of a slice of `value`: ints or dims, never run-time."""
    dims = None
    out = []
    for d, (offset, extent) in enumerate(zip(offsets, extents)):
        if extent is None:
            if dims is None:
                dims = _core.value_dims(value) if isinstance(value, _HANDLES) else None
            if dims is None or d >= len(dims):
                raise TypeError(f"slicing a {type(value).__name__} (slice a tensor or a tile)")
            extent = dims[d] - offset if not (isinstance(offset, int) and offset == 0) else dims[d]
        if isinstance(extent, _core.Scalar):
            raise UnsupportedError(
                f"not supported by anyp: a slice whose extent in dim {d} is known only at run "
                "time (write the slice as start : start + extent with a static extent)"
            )
        out.append(extent)
    return out


def _subscript(parts):
    value, offsets, extents = parts
    return _language.subscript(value, offsets, _slice_extents(value, offsets, extents))


class _Refused(str):
    """A statement form the walker refuses: the words naming it in "... in a
    traced function (use pl.range and if)"."""


# Every statement form: the _Walker method that walks it (called with the
# statement and whether it is its block's last), or why it is refused.
_STATEMENT_FORMS = {
    ast.Expr: "expression",
    ast.Assign: "assignment",
    ast.AnnAssign: "assignment",
    ast.AugAssign: "augmented_assignment",
    ast.For: "loop",
    ast.If: "branch",
    ast.Return: "return_",
    ast.Pass: "pass_",
    ast.With: "with_block",
    ast.While: _Refused("while loops"),
    ast.Break: _Refused("break"),
    ast.Continue: _Refused("continue"),
    ast.Try: _Refused("try blocks"),
    ast.FunctionDef: _Refused("nested functions"),
    ast.ClassDef: _Refused("classes"),
    ast.Raise: _Refused("raise"),
    ast.Delete: _Refused("del"),
    ast.Global: _Refused("global"),
    ast.Nonlocal: _Refused("nonlocal"),
    ast.Import: _Refused("import"),
    ast.ImportFrom: _Refused("import"),
    ast.Assert: _Refused("assert"),
}


# ---- the statement walker ------------------------------------------------------


class _Walker:
    """Walks one function body during its trace."""

    def __init__(self, jit, handles, scope_of=None):
        """`scope_of`: (the enclosing walker, the `with pl.at` statement, its
        captured names -> this trace's handles, the block's level) for a
        pl.at block's walker."""
        self.jit = jit
        self.level = jit.level  # of the body walked: a pl.at block's own
        self.source = jit.source
        fn = jit.fn
        self.globals = fn.__globals__
        self.env = {}
        self.manual_tasks = None  # the pl.at tasks of the pl.manual_scope being walked
        if scope_of is not None:
            outer, statement, captured, self.level = scope_of
            self.env = {k: v for k, v in outer.env.items() if not isinstance(v, _HANDLES)}
            self.env.update(captured)
            self.init_state(statement.body)
            return
        if fn.__closure__:
            for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
                with contextlib.suppress(ValueError):  # empty: bound later, not yet
                    self.env[name] = cell.cell_contents
        if jit.is_method:
            self.env["self"] = jit.program
        self.env["_anyp_subscript_"] = _subscript  # what x[a:b, ...] reads become
        self.env.update(zip(jit.param_names, handles))
        self.init_state(jit.tree_def.body)

    def init_state(self, body):
        self.target = None  # the name being assigned (pld.alloc_window_buffer's default name)
        self.current = None  # the statement being walked
        self.scopes = []  # the traced loops and ifs around the statement, innermost last
        self.returns = []  # what the function's return statements gave
        self.last_yield = _MISSING  # what the latest pl.yield_ gave (bound as is)
        self.assigned = _assignment_counts(body)
        self.declared = {}  # name -> dtype of `name: pl.Scalar[dtype] = <a Python number>`

    def run(self):
        body = self.jit.tree_def.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # the docstring
        self.block(body, tail=True)

    def block(self, stmts, tail=False):
        stmts = _early_returns(stmts)
        for i, stmt in enumerate(stmts):
            self.current = stmt
            # Every op the statement records carries its place (the core's
            # diagnostics name it).
            _core.set_location(self.source.file, stmt.lineno, stmt.col_offset + 1)
            try:
                self.statement(stmt, last=tail and i == len(stmts) - 1)
            except _core.Error as e:
                raise _located(e, self.source, stmt) from None
            except (
                TypeError,
                ValueError,
                NameError,
                AttributeError,
                LookupError,
                ArithmeticError,
                RuntimeError,  # pybind11's cast error (an anyp error is caught above)
            ) as e:
                message = wrong_kind_message(e) or f"{type(e).__name__}: {e}"
                raise _located(_core.CompileError(message), self.source, stmt) from None

    def refuse(self, node, what):
        raise _located(UnsupportedError(f"not supported by anyp: {what}"), self.source, node)

    def eval(self, node):
        for inner in ast.walk(node):
            if isinstance(inner, ast.NamedExpr):
                self.refuse(inner, "an assignment expression (:=); assign in a statement")
        if any(isinstance(n, ast.Subscript) and _is_slicing(n) for n in ast.walk(node)):
            try:
                node = _Subscripts().visit(copy.deepcopy(node))
            except _SliceError as e:
                self.refuse(e.node, str(e))
        code = compile(ast.Expression(node), self.source.file, "eval")
        if _has_inner_scope(node):  # a comprehension or lambda sees locals only as globals
            return eval(code, {**self.globals, **self.env})
        return eval(code, self.globals, self.env)

    def in_loop(self):
        return any(scope["kind"] == "loop" for scope in self.scopes)

    # -- names -------------------------------------------------------------------

    def check_carried(self, name, value, node):
        """A name a traced loop carries keeps its kind, dtype and shape."""
        for scope in self.scopes:
            old = scope.get("carried", {}).get(name)
            if old is not None and old != _describe(value):
                self.refuse(
                    node,
                    f"'{name}' is carried by the loop at line {scope['node'].lineno} as {old} "
                    f"and rebound here to {_describe(value)}; a loop-carried name keeps its "
                    "kind, dtype and shape (give the new value another name)",
                )

    def carried_by_loop(self, name):
        return any(name in scope.get("carried", {}) for scope in self.scopes)

    def shared(self, value, name):
        """Whether `value` is held by another name that it or `name` may write."""
        holders = [n for n, v in self.env.items() if v is value and n != name]
        return holders and any(self.assigned.get(n, 0) > 1 for n in holders + [name])

    def bind(self, name, value, node, fresh=False):
        if fresh:
            self.env[name] = value
            return
        self.check_carried(name, value, node)
        old = self.env.get(name)
        if isinstance(old, _ARRAYS) and value is not old and self.carried_by_loop(name):
            self.refuse(
                node,
                f"'{name}' ({old.describe()}) is carried by a loop and rebound here to another "
                "value; the body is read once, so an array a loop carries is rebound only to "
                "itself (pl.array.update_element returns it), or carried through init_values",
            )
        if isinstance(value, _core.Value):
            _core.name_created(value, name)  # a created tensor is named after its first name
        if isinstance(value, _arrays.ScalarArray):
            _core.name_created(value.storage, name)  # its storage too (in run errors)
        if self.renames_to_created(name, old, value, node):
            self.env[name] = value
            return
        if (
            isinstance(value, _HANDLES)
            and type(old) is type(value)
            and old is not value
            and old.type() != ""
            and old.type() == value.type()
        ):
            _core.assign(old, value)  # a write to the variable, as C++ `x = e` is
            return
        if isinstance(value, _HANDLES) and self.shared(value, name):
            value = _copy(value)  # `b = a` is a new variable, as in C++
        self.env[name] = value

    def renames_to_created(self, name, old, value, node):
        """Whether `name = value` only renames: value a new tensor (from
        pl.create_tensor or a tensor op) and the name holding a parameter, a
        window view or a slice, as PyPTO's names do. A name a traced loop
        carries must keep one tensor, so there it is refused."""
        if not (
            isinstance(value, _core.Value)
            and isinstance(old, _core.Value)
            and _core.tensor_created(value)
            and not _core.tensor_created(old)
        ):
            return False
        for scope in self.scopes:
            if name in scope.get("carried", {}):
                self.refuse(
                    node,
                    f"'{name}' is carried by the loop at line {scope['node'].lineno} and names a "
                    "parameter, a window view or a slice; assigning it a new tensor would leave "
                    "that tensor unchanged (write into it with pl.assemble or a slice "
                    f"assignment, or create '{name}' with pl.create_tensor above the loop)",
                )
        return True

    def assign_targets(self, target, value, node, fresh=False):
        if isinstance(target, ast.Name):
            self.bind(target.id, value, node, fresh)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = list(value) if isinstance(value, (tuple, list)) else None
            if values is None or len(values) != len(target.elts):
                self.refuse(node, "unpacking a value that is not a tuple of the same length")
            for t, v in zip(target.elts, values):
                self.assign_targets(t, v, node, fresh)
        elif isinstance(target, ast.Subscript) and _is_slicing(target):
            try:
                parts = _slice_parts(target)
            except _SliceError as e:
                self.refuse(e.node, str(e))
            tensor, offsets, extents = self.eval(parts)
            extents = _slice_extents(tensor, offsets, extents)
            _language.assign_subscript(tensor, offsets, extents, value)
        elif isinstance(target, ast.Subscript):
            holder = self.eval(target.value)
            if not isinstance(holder, _ARRAYS):
                self.refuse(
                    node, "assigning to x[i] (slice every dim: x[a:b, c:d] = value writes a slice)"
                )
            holder[self.eval(target.slice)] = value  # an element of a pl.array
        else:
            self.refuse(node, f"assigning to {type(target).__name__} (assign to a name)")

    # -- statements --------------------------------------------------------------

    def statement(self, s, last):
        form = _STATEMENT_FORMS.get(type(s), _Refused(f"the statement {type(s).__name__}"))
        if isinstance(form, _Refused):
            self.refuse(s, form + " in a traced function (use pl.range and if)")
        getattr(self, form)(s, last)

    def expression(self, s, last):
        self.eval(s.value)

    def augmented_assignment(self, s, last):
        if not isinstance(s.target, ast.Name):
            self.refuse(s, "augmented assignment to anything but a name")
        binop = ast.BinOp(left=ast.Name(s.target.id, ast.Load()), op=s.op, right=s.value)
        ast.copy_location(binop, s)
        ast.fix_missing_locations(binop)
        self.bind(s.target.id, self.eval(binop), s)

    def pass_(self, s, last):
        pass

    def with_block(self, s, last):
        """`with pl.spmd(n):` or a task scope; any other `with` is refused."""
        if not (self.launch(s) or self.task_scope(s)):
            self.refuse(s, "with blocks in a traced function (use pl.range and if)")

    def launch(self, s):
        """`with pl.spmd(n):`: walks the body with every kernel call in it
        (a call without device=) launched over n blocks (C++ pl::blocks(n))
        and returns True; False for any other `with` (its context
        expression not evaluated), which is refused."""
        if len(s.items) != 1 or not isinstance(s.items[0].context_expr, ast.Call):
            return False
        item = s.items[0]
        if not getattr(self.eval(item.context_expr.func), "_anyp_launches_blocks", False):
            return False
        blocks = self.eval(item.context_expr).core_num
        if item.optional_vars is not None:
            self.refuse(
                s, "with pl.spmd(...) as name (read pl.tile.get_block_idx() in the kernel instead)"
            )
        if _launch_blocks:
            self.refuse(s, "a with pl.spmd(...) inside another")
        _launch_blocks.append(blocks)
        try:
            self.block(s.body)
        finally:
            _launch_blocks.pop()
        return True

    def task_scope(self, s):
        """`with pl.manual_scope():` and `with pl.at(...) [as task]:`
        (anyp/language/_scopes.py); False for any other `with`."""
        if len(s.items) != 1 or not isinstance(s.items[0].context_expr, ast.Call):
            return False
        item = s.items[0]
        kind = getattr(self.eval(item.context_expr.func), "_anyp_scope", None)
        if kind is None:
            return False
        scope = self.eval(item.context_expr)
        if kind == "manual":
            if item.optional_vars is not None:
                self.refuse(s, "with pl.manual_scope() as name")
            if self.manual_tasks is not None:
                self.refuse(s, "a pl.manual_scope() inside another")
            self.manual_tasks = []
            try:
                self.block(s.body)
            finally:
                self.manual_tasks = None
            return True
        refusal = scope.refusal(self.level)
        if refusal:
            self.refuse(s, refusal)
        deps = []
        for dep in scope.deps:
            if isinstance(dep, _arrays.TaskArray):
                deps.extend(dep.tasks())  # every task stored in it
            elif isinstance(dep, _scopes.TaskId):
                deps.append(dep)
            else:
                self.refuse(
                    s,
                    f"deps= lists {_describe(dep)}, which is not a task (what `with pl.at(...) "
                    "as t` binds) or an array of them (pl.array.create(n, pl.TASK_ID))",
                )
        if item.optional_vars is not None and not isinstance(item.optional_vars, ast.Name):
            self.refuse(s, "with pl.at(...) as <anything but a name>")
        task = _scopes.TaskId(scope.name_hint or f"{self.jit.__name__}_at_{s.lineno}", s.lineno)
        if scope.kind() == "worker":
            self.inline_worker(s, task.name)
        else:
            self.outline(s, task, deps, scope.kind())
        if item.optional_vars is not None:
            self.env[item.optional_vars.id] = task
        return True

    def captured(self, s):
        """The tensors, windows and scalars a `with` block takes from this
        function: its names bound to them here, in order of first use."""
        captured = []
        for node in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if isinstance(self.env.get(node.id), _ARRAYS):
                    self.refuse(
                        node,
                        f"'{node.id}' ({self.env[node.id].describe()}) inside a pl.at block: an "
                        "array stays in its function (read the elements the block needs into "
                        "scalars before it)",
                    )
                if isinstance(self.env.get(node.id), (_core.Value, _core.Scalar)):
                    if node.id not in captured:
                        captured.append(node.id)
        return captured

    def outline(self, s, task, deps, level):
        """The block of a `with pl.at(...)`, as a function of `level` (an
        incore task, or a chip orchestration run on rank 0) called where it
        stands: its parameters are what it takes from this function
        (captured()). A name the block binds to one of them stays bound to
        it after the block (`y = pl.assemble(f, t, [0, 0])` names f)."""
        captured = self.captured(s)
        for node in ast.walk(ast.Module(body=s.body, type_ignores=[])):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                if isinstance(self.env.get(node.id), _HANDLES):
                    self.refuse(
                        node,
                        f"assigning '{node.id}' inside a pl.at block: it names a value of the "
                        "enclosing function, which the block cannot rebind (write into the "
                        "tensor with pl.store, pl.assemble or a slice assignment, or use a new "
                        "name)",
                    )
        params = [_core.param_like(name, self.env[name]) for name in captured]
        deferred = []
        outer = self

        bound_out = {}

        def body(handles):
            inner = dict(zip(captured, handles))
            walker = _Walker(outer.jit, [], scope_of=(outer, s, inner, level))
            _walkers.append(walker)
            _scopes._deferred.append(deferred)
            try:
                walker.block(s.body)
            finally:
                _scopes._deferred.pop()
                _walkers.pop()
            task.deferred = {
                id(outer.env[name])
                for target, signal in deferred
                for name, h in inner.items()
                if h is target or h is signal
            }
            for name, value in walker.env.items():
                for outer_name, h in inner.items():
                    if value is h and name != outer_name and name not in outer.env:
                        bound_out[name] = outer.env[outer_name]

        _core.call(
            _core.define_region(task.name, level, params, body),
            [self.env[n] for n in captured],
            None,
        )
        self.env.update(bound_out)
        if self.manual_tasks is not None:
            self.check_deps(s, task, deps, {id(self.env[n]): n for n in captured})
            self.manual_tasks.append(task)

    def inline_worker(self, s, name):
        """`with pl.at(level=pl.Level.HOST, role=pl.Role.Worker):` in a host
        function: the block, plain Python, becomes a host worker taking the
        tensors it names and called where it stands (anyp/_host_worker.py).
        A tensor it writes by name (_written_names) is InOut and written
        back; a change to any other is an error."""
        captured = self.captured(s)
        for n in captured:
            if not isinstance(self.env[n], _core.Value):
                self.refuse(
                    s,
                    f"an inline host worker takes tensors; '{n}' is {_describe(self.env[n])}",
                )
        fn_def = ast.FunctionDef(
            name=name,
            args=ast.arguments(
                posonlyargs=[],
                args=[ast.arg(arg=n) for n in captured],
                kwonlyargs=[],
                kw_defaults=[],
                defaults=[],
            ),
            body=s.body,
            decorator_list=[],
        )
        ast.copy_location(fn_def, s)
        module = ast.fix_missing_locations(ast.Module(body=[fn_def], type_ignores=[]))
        namespace = {**self.globals}
        namespace.update({k: v for k, v in self.env.items() if not isinstance(v, _HANDLES)})
        exec(compile(module, self.source.file, "exec"), namespace)  # noqa: S102 (the user's block)
        worker = _host_worker.InlineWorker(namespace[name], name, captured)
        writes = _written_names(s.body)
        written = [n in writes for n in captured]
        params = [
            _core.param_like(n, self.env[n], "inout" if w else "in")
            for n, w in zip(captured, written)
        ]
        definition = _core.define_host_worker(
            name, params, _host_worker.body(worker, None, written)
        )
        _core.call(definition, [self.env[n] for n in captured], None)

    def check_deps(self, s, task, deps, taken):
        """In a manual scope: a task that takes a window an earlier task's
        deferred collective writes must depend on that task."""
        task.after = set()
        for dep in deps:
            task.after |= {id(dep)} | dep.after
        for earlier in self.manual_tasks:
            for handle_id in sorted(earlier.deferred & taken.keys()):
                if id(earlier) not in task.after:
                    error = _core.CompileError(
                        f"compile error: the pl.at task '{task.name}' takes "
                        f"'{taken[handle_id]}', which the deferred collective (defer=True) of "
                        f"task '{earlier.name}' (line {earlier.line}) writes, but its deps= do "
                        f"not include that task: in a pl.manual_scope PyPTO may run "
                        f"'{task.name}' before the collective completes; bind the task (with "
                        "pl.at(...) as t) and list it in deps="
                    )
                    raise _located(error, self.source, s)

    def assignment(self, s, last=False):
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
        # pl.yield_'s results are the loop's carried variables: bound as is.
        fresh = value is self.last_yield
        self.last_yield = _MISSING
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            self.declare(s.target.id, s.annotation, value)
        self.assign_targets(targets[0], value, s, fresh)

    def declare(self, name, annotation, value):
        """`name: pl.Scalar[dtype] = 0`: a number that becomes a traced scalar
        (when a loop carries it) gets `dtype`."""
        try:
            declared = self.eval(annotation)
        except Exception:  # noqa: BLE001  (PyPTO's local annotations are not evaluated by Python)
            return
        if isinstance(declared, ParamType) and declared.kind == "scalar":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                self.declared[name] = declared.dtype

    def return_(self, s, last):
        if not last:
            where = "inside a for loop" if self.in_loop() else "before the end of the function"
            self.refuse(s, f"return {where} (a return ends the function or a branch of an if)")
        value = None if s.value is None else self.eval(s.value)
        self.returns.append(value)  # PyPTO's functions return their outputs: written in place

    # -- loops -------------------------------------------------------------------

    def loop(self, s, last=False):
        call = s.iter
        pl_range = self.eval(call.func) if isinstance(call, ast.Call) else None
        if not isinstance(pl_range, _language.range_type):
            self.refuse(s, "a for loop over anything but pl.range(...)")
        if s.orelse:
            self.refuse(s, "for ... else")
        args = [self.eval(a) for a in call.args]
        kwargs = {k.arg: self.eval(k.value) for k in call.keywords}
        init = kwargs.pop("init_values", None)
        start, stop, step = pl_range.bounds(*args, **kwargs)
        index, names = self.loop_targets(s, init)
        carried = [self.carried_variable(v, s) for v in init] if init is not None else []
        scope = {"kind": "loop", "node": s, "iter": carried if init is not None else None}
        scope["carried"] = self.implicitly_carried(s, {index, *names})
        scope["yielded"] = False

        def body(i):
            self.env[index] = i
            self.env.update(zip(names, carried))
            self.block(s.body)

        self.scopes.append(scope)
        try:
            _core.range(start, stop, step, body)
        finally:
            self.scopes.pop()
        if init is not None and not scope["yielded"]:
            self.refuse(s, "a for loop with init_values whose body does not end in pl.yield_(...)")

    def loop_targets(self, s, init):
        """The loop variable's name and the names of the carried values."""
        t = s.target
        if init is None:
            if not isinstance(t, ast.Name):
                self.refuse(s, "a for loop whose target is not one name (without init_values)")
            return t.id, []
        if not isinstance(init, (tuple, list)):
            self.refuse(s, "pl.range(..., init_values=...) takes a tuple or list of values")
        ok = isinstance(t, ast.Tuple) and len(t.elts) == 2 and isinstance(t.elts[0], ast.Name)
        inner = t.elts[1] if ok else None
        if isinstance(inner, ast.Name) and len(init) == 1:
            return t.elts[0].id, [inner.id]
        if not (isinstance(inner, ast.Tuple) and all(isinstance(e, ast.Name) for e in inner.elts)):
            self.refuse(s, "a for loop with init_values whose target is not `i, (a, b, ...)`")
        if len(inner.elts) != len(init):
            self.refuse(
                s,
                f"{len(inner.elts)} loop-carried names for {len(init)} init_values (give one each)",
            )
        return t.elts[0].id, [e.id for e in inner.elts]

    def carried_variable(self, value, node):
        """The variable one of init_values starts: a new one (the loop writes it)."""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return _new_scalar(value)
        if isinstance(value, _ARRAYS):
            return (
                value  # the yields copy into it (an array is storage, as PyPTO's codegen makes it)
            )
        if not isinstance(value, _HANDLES):
            self.refuse(
                node,
                f"init_values holding {_describe(value)} (give traced values, numbers or arrays)",
            )
        held = any(v is value for v in self.env.values())
        return _copy(value) if held else value

    def implicitly_carried(self, s, loop_names):
        """The names this loop's body reads, then assigns: each stays one
        variable with one kind, dtype and shape; a Python number becomes a
        traced scalar (the body is read once, so it could not count)."""
        assigned = _assignment_counts(s.body)
        carried = {}
        for name in sorted(_read_before_written(s.body) & set(assigned) - loop_names):
            if name not in self.env:
                continue
            value = self.env[name]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = self.env[name] = _new_scalar(value, self.declared.get(name))
            elif isinstance(value, _ARRAYS):
                pass  # storage: rebound only to itself (bind checks), as update_element returns it
            elif not isinstance(value, _HANDLES):
                self.refuse(
                    s,
                    f"'{name}' is carried by this loop (read, then assigned in its body) but holds "
                    f"{_describe(value)}; the body is read once, so it would keep one value "
                    "(make it a traced value, or give the new value another name)",
                )
            carried[name] = _describe(value)
        return carried

    def yield_values(self, values):
        """pl.yield_(...): the values of this iteration's carried variables
        (in a loop with init_values), or an if's result."""
        scope = self.scopes[-1] if self.scopes else None
        if scope is None:
            raise UnsupportedError(
                "not supported by anyp: pl.yield_ outside a for loop with init_values (or an if "
                "on a traced scalar)"
            )
        if scope["kind"] == "if":
            return values[0] if len(values) == 1 else tuple(values)
        carried = scope["iter"]
        if carried is None:
            raise UnsupportedError(
                "not supported by anyp: pl.yield_ in a for loop without init_values "
                "(rebind the name instead, or give the loop init_values)"
            )
        if len(values) != len(carried):
            raise TypeError(f"pl.yield_ got {len(values)} values for {len(carried)} init_values")
        for k, (variable, value) in enumerate(zip(carried, values)):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = _new_scalar(value)
            if _describe(value) != _describe(variable):
                raise UnsupportedError(
                    f"not supported by anyp: pl.yield_ value {k} is {_describe(value)}, but the "
                    f"loop carries {_describe(variable)} there; a loop-carried value keeps its "
                    "kind, dtype and shape"
                )
            if isinstance(variable, _ARRAYS):
                variable.copy_from(value)
            else:
                _core.assign(variable, value)
        scope["yielded"] = True
        self.last_yield = carried[0] if len(carried) == 1 else tuple(carried)
        return self.last_yield

    # -- branches ----------------------------------------------------------------

    def branch(self, s, last):
        test = self.eval(s.test)
        if isinstance(test, _core.Scalar):
            self.traced_branch(s, test, last)
        elif isinstance(test, _HANDLES):
            self.refuse(s.test, "an if on a tensor or tile (test a scalar)")
        elif test:
            self.block(s.body, tail=last)
        else:
            self.block(s.orelse, tail=last)

    def traced_branch(self, s, test, last):
        before = dict(self.env)
        ran = {}

        def then_body():
            self.block(s.body, tail=last)
            ran["then"] = dict(self.env)

        def else_body():
            if "then" in ran:  # the else branch starts from the names before the if
                self.env.update(before)
            self.block(s.orelse, tail=last)
            ran["else"] = True

        self.scopes.append({"kind": "if", "node": s})
        try:
            _core.if_(test, then_body, else_body)
        finally:
            self.scopes.pop()
        if "then" in ran and "else" in ran:
            self.merge(s, ran["then"])

    def merge(self, s, then_env):
        """After both branches: a name holds one thing whichever ran."""
        for name, a in then_env.items():
            b = self.env.get(name, _MISSING)
            if a is b or b is _MISSING or _same_python_value(a, b):
                continue
            if isinstance(a, _scopes.TaskId) and isinstance(b, _scopes.TaskId):
                self.env[name] = _scopes.TaskId.either(a, b)  # deps= on it: on whichever ran
                continue
            if isinstance(a, _arrays.TaskArray) and isinstance(b, _arrays.TaskArray):
                if a.extent == b.extent:
                    self.env[name] = _arrays.TaskArray.either(a, b)
                    continue
            self.refuse(
                s,
                f"'{name}' is {_describe(a)} after the then branch of this if on a traced scalar "
                f"and {_describe(b)} after its else branch; a name keeps its kind, dtype and shape "
                "across the branches (or give it another name)",
            )

    def result_map(self, handles):
        """How a call's result is made from its arguments: the function's
        return, with each returned parameter as its position."""

        def of(value):
            if isinstance(value, (tuple, list)):
                return tuple(of(v) for v in value)
            for i, h in enumerate(handles):
                if h is value:
                    return ("arg", i)
            return ("none",)

        maps = [of(v) for v in self.returns]
        return maps[0] if maps and all(m == maps[0] for m in maps) else ("none",)


def _build_result(mapping, args):
    if isinstance(mapping, tuple) and mapping and isinstance(mapping[0], tuple):
        return tuple(_build_result(m, args) for m in mapping)
    if mapping == ():
        return ()
    return args[mapping[1]] if mapping[0] == "arg" else None
