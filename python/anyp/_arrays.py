"""anyp._arrays — PyPTO's small on-core arrays: `pl.array.create(n,
dtype)`, `arr[i] = v`, `arr[i]`, the `pl.Array[n, dtype]` annotation,
`pl.TASK_ID` and `pl.system.task_invalid()`.

An array of numbers is a zeroed tensor [n] of this rank's own (the
storage `pl.create_tensor` makes, zeroed each time the create runs, as
PyPTO's `T arr[n] = {0}` is): `arr[i] = v` writes cell i (converted to the
array's dtype) and `arr[i]` reads it, so an index known only at run time is
checked when it runs (a run error naming the line). A constant index
outside [0, n) is refused where it stands.

An array of task ids (`pl.TASK_ID`) holds the tasks a manual scope stores
in it (`tids[b] = t`, t bound by `with pl.at(...) as t`), for deps=: it
exists only while the function is read, as the tasks do (anyp runs an
orchestration body in program order). `deps=[tids]` depends on every task
stored in it; `tids[i]` is the task stored at constant index i, or any
stored task when i is known only at run time."""

from . import _core, _scopes


class _TaskIdDType:
    """pl.TASK_ID: the element type of an array of task ids."""

    name = "TASK_ID"

    def __repr__(self):
        return "pl.TASK_ID"


TASK_ID = _TaskIdDType()


def _extent(n):
    if isinstance(n, bool) or not isinstance(n, int):
        got = "a traced scalar" if isinstance(n, _core.Scalar) else repr(n)
        raise TypeError(
            f"pl.array.create: the extent must be a Python int (an array has a static size), "
            f"got {got}"
        )
    if n < 1:
        raise ValueError(f"pl.array.create: the extent must be at least 1, got {n}")
    return n


def _constant_index(array, index):
    """The index as an int when it is one (checked to be in range), else None."""
    if isinstance(index, bool):
        raise TypeError(f"{array.describe()} index must be an integer, got {index!r}")
    if isinstance(index, int):
        if not 0 <= index < array.extent:
            raise IndexError(
                f"{array.describe()} index {index} is out of range [0, {array.extent})"
            )
        return index
    if isinstance(index, _core.Scalar):
        return None
    raise TypeError(
        f"{array.describe()} index must be an integer or a traced scalar, got {index!r}"
    )


class ScalarArray:
    """An array of `extent` numbers of `dtype` (see the module's docstring)."""

    def __init__(self, extent, dtype):
        self.extent, self.dtype = extent, dtype
        self.storage = _core.create_tensor([extent], dtype)

    def describe(self):
        return f"pl.array [{self.extent}] {self.dtype.name}"

    def __getitem__(self, index):
        _constant_index(self, index)
        return _core.cell_read(self.storage, [index])

    def __setitem__(self, index, value):
        _constant_index(self, index)
        if not isinstance(value, (int, float, _core.Scalar)) or isinstance(value, bool):
            raise TypeError(
                f"{self.describe()} element must be a number or a traced scalar, got "
                f"{type(value).__name__}"
            )
        _core.cell_write(self.storage, [index], value)

    def copy_from(self, other):
        """This array's cells = `other`'s (a loop's yield of another array)."""
        if not isinstance(other, ScalarArray) or (other.extent, other.dtype) != (
            self.extent,
            self.dtype,
        ):
            raise TypeError(f"{self.describe()} cannot take the cells of {_what(other)}")
        if other is not self:
            _core.tensor_copy(self.storage, other.storage)

    def __iter__(self):
        raise TypeError(f"iterating over a {self.describe()} (index it: arr[i])")

    def __repr__(self):
        return f"<{self.describe()}>"


class TaskArray:
    """An array of `extent` task ids (see the module's docstring)."""

    dtype = TASK_ID

    def __init__(self, extent):
        self.extent = extent
        self.slots = {}  # constant index -> the task stored there last
        self.anywhere = []  # tasks stored at an index known only at run time

    def describe(self):
        return f"pl.array [{self.extent}] TASK_ID"

    def tasks(self):
        """Every task stored in the array, in order, once."""
        seen, out = set(), []
        for task in list(self.slots.values()) + self.anywhere:
            if id(task) not in seen:
                seen.add(id(task))
                out.append(task)
        return out

    def __getitem__(self, index):
        i = _constant_index(self, index)
        found = self.tasks() if i is None else [t for t in [self.slots.get(i)] if t] + self.anywhere
        if not found:
            return task_invalid()
        joined = found[0]
        for task in found[1:]:
            joined = _scopes.TaskId.either(joined, task)
        return joined

    def __setitem__(self, index, task):
        i = _constant_index(self, index)
        if not isinstance(task, _scopes.TaskId):
            raise TypeError(
                f"{self.describe()} element must be a task (what `with pl.at(...) as t` binds, "
                f"or pl.system.task_invalid()), got {_what(task)}"
            )
        if i is None:
            self.anywhere.append(task)
        else:
            self.slots[i] = task

    def copy_from(self, other):
        """After a loop: the array holds what it held or what any iteration
        yielded (`other`), whichever ran last."""
        if not isinstance(other, TaskArray) or other.extent != self.extent:
            raise TypeError(f"{self.describe()} cannot take the tasks of {_what(other)}")
        if other is not self:
            self.anywhere.extend(other.tasks())

    @staticmethod
    def either(a, b):
        """The array a traced if leaves: `a` after one branch, `b` after the other."""
        joined = TaskArray(a.extent)
        joined.anywhere = a.tasks() + [t for t in b.tasks() if t not in a.tasks()]
        return joined

    def __iter__(self):
        raise TypeError(f"iterating over a {self.describe()} (list it in deps= whole)")

    def __repr__(self):
        return f"<{self.describe()}>"


def _what(value):
    if isinstance(value, (ScalarArray, TaskArray)):
        return f"a {value.describe()}"
    return f"a {type(value).__name__}"


def _checked(array, op):
    if not isinstance(array, (ScalarArray, TaskArray)):
        raise TypeError(f"pl.array.{op}: expected a pl.array, got {type(array).__name__}")
    return array


def task_invalid():
    """PyPTO's 'no task': depending on it orders nothing."""
    return _scopes.TaskId("task_invalid", 0)


class _ArrayNamespace:
    """pl.array: `pl.array.create(n, dtype)`, `get_element`, `update_element`."""

    @staticmethod
    def create(extent, dtype):
        """A new array of `extent` elements of `dtype` (zeroed numbers, or
        task ids for pl.TASK_ID)."""
        n = _extent(extent)
        if dtype is TASK_ID:
            return TaskArray(n)
        if not isinstance(dtype, _core.DType):
            raise TypeError(
                f"pl.array.create: dtype must be a pl dtype or pl.TASK_ID, got {dtype!r}"
            )
        return ScalarArray(n, dtype)

    @staticmethod
    def get_element(array, index):
        """PyPTO's spelling of `array[index]`."""
        return _checked(array, "get_element")[index]

    @staticmethod
    def update_element(array, index, value):
        """PyPTO's spelling of `array[index] = value`: writes the element in
        place (as PyPTO's code generator lowers its chain of updates) and
        returns the array, to rebind as PyPTO's programs do."""
        _checked(array, "update_element")[index] = value
        return array

    def __getattr__(self, name):
        raise AttributeError(
            f"not supported by anyp: pl.array.{name} (anyp has pl.array.create, get_element "
            "and update_element)"
        )


array = _ArrayNamespace()


class _ArrayAnnotation:
    """`pl.Array[n, dtype]`: the annotation of a local array."""

    def __init__(self, extent, dtype):
        self.extent, self.dtype = extent, dtype

    def __repr__(self):
        return f"pl.Array[{self.extent}, pl.{getattr(self.dtype, 'name', self.dtype)}]"


class _ArrayType(type):
    def __getitem__(cls, item):
        if not isinstance(item, tuple) or len(item) != 2:
            raise TypeError("pl.Array takes [extent, dtype]")
        return _ArrayAnnotation(_extent(item[0]), item[1])


class Array(metaclass=_ArrayType):
    """pl.Array[n, dtype] (an annotation; create arrays with pl.array.create)."""


class _SystemNamespace:
    """pl.system: `pl.system.task_invalid()`."""

    task_invalid = staticmethod(task_invalid)

    def __getattr__(self, name):
        raise AttributeError(
            f"not supported by anyp: pl.system.{name} (anyp has pl.system.task_invalid)"
        )


system = _SystemNamespace()
