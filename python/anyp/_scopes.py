"""anyp._scopes — PyPTO's task scopes in an orchestration function.

`with pl.at(level=pl.Level.CORE_GROUP, name_hint="consume", deps=[t]) as u:`
makes the block an incore task: anyp/_walker.py outlines it into an
incore function whose parameters are the tensors, windows and scalars the
block takes from the function (a tensor it never writes is In), and calls
it where the block stands. `u` is the task's TaskId, for later deps=.

`with pl.manual_scope():` is PyPTO's region where the user orders tasks
with deps= instead of the runtime's inference. anyp runs an orchestration
body in program order, which satisfies every deps= list; so that a program
correct on anyp is correct on PyPTO, a task of a manual scope that takes a
window an earlier task's deferred collective (defer=True) writes must list
that task in deps= (directly or through the tasks it lists), else the
front-end refuses it (docs/python.md, "Task scopes")."""

# The deferred collectives recorded while a pl.at block is traced: one list
# of (target, signal) handles per block being traced, innermost last.
_deferred = []


class TaskId:
    """What `with pl.at(...) as task:` binds: the task, for deps=."""

    def __init__(self, name, line):
        self.name, self.line = name, line
        self.deferred = set()  # ids of the handles its deferred collectives write
        self.after = set()  # ids of the tasks it depends on, directly or not

    @staticmethod
    def either(a, b):
        """The task of a name a traced if sets to `a` in one branch and `b`
        in the other: depending on it is depending on whichever ran (a
        task of the branch that did not run never ran)."""
        joined = TaskId(f"{a.name} or {b.name}", min(a.line, b.line))
        joined.after = {id(a), id(b)} | a.after | b.after
        return joined

    def __repr__(self):
        return f"<task '{self.name}' at line {self.line}>"


def _member(value, enum_name):
    return getattr(value, "enum_name", None) == enum_name


class at:  # noqa: N801  (PyPTO's name)
    """`with pl.at(level=pl.Level.CORE_GROUP, name_hint=..., deps=[...]) as task:`
    in an orchestration function (see the module's docstring)."""

    _anyp_scope = "at"  # the walker's `with` form (anyp/_walker.py)

    def __init__(self, level=None, role=None, *, optimizations=None, name_hint=None, deps=None):
        self.level, self.role = level, role
        self.optimizations = optimizations
        self.name_hint = name_hint
        self.deps = list(deps or [])

    def kind(self):
        """What the block becomes: "incore" (level CORE_GROUP, in an
        orchestration function), "orchestration" (level CHIP, in a host
        function), "worker" (level HOST with role Worker or SubWorker, in a
        host function), or None (no such scope on anyp)."""
        level = getattr(self.level, "name", None) if _member(self.level, "Level") else None
        role = getattr(self.role, "name", None) if _member(self.role, "Role") else self.role
        if level == "CORE_GROUP" and role is None:
            return "incore"
        if level == "CHIP" and role in (None, "Orchestrator"):
            return "orchestration"
        if level == "HOST" and role in ("Worker", "SubWorker"):
            return "worker"
        return None

    def refusal(self, function_level):
        """Why anyp cannot take this scope in a `function_level` function, or None."""
        kind = self.kind()
        if kind is None:
            return (
                f"pl.at(level={self.level!r}, role={self.role!r}) (anyp has level "
                "pl.Level.CORE_GROUP in an orchestration function, and pl.Level.CHIP or "
                "pl.Level.HOST with role=pl.Role.Worker in a host function)"
            )
        if self.optimizations:
            return "pl.at(..., optimizations=...): anyp has no kernel splitting passes"
        where = "orchestration" if kind == "incore" else "host"
        if function_level != where:
            what = {
                "incore": "an incore task of an orchestration function's block",
                "orchestration": "a chip orchestration of a host function's block",
                "worker": "a host worker of a host function's block",
            }[kind]
            article = "an" if function_level[0] in "aeiou" else "a"
            return (
                f"pl.at(level={self.level!r}) in {article} {function_level} function (it makes "
                f"{what})"
            )
        if kind == "worker" and self.deps:
            return (
                "pl.at(level=pl.Level.HOST, ..., deps=...): a host worker is ordered by its tensors"
            )
        return None


class manual_scope:  # noqa: N801  (PyPTO's name)
    """`with pl.manual_scope():` (see the module's docstring)."""

    _anyp_scope = "manual"


def deferred(target, signal):
    """A collective called with defer=True: recorded for the pl.at block
    being traced (outside one it completes where it stands, as everywhere)."""
    if _deferred:
        _deferred[-1].append((target, signal))
