"""The Python package's floors: no module of python/anyp imports another
inside a function (torch and numpy excepted, which are optional), and the
modules' imports form no cycle. A function-local import hides a cycle
instead of removing it; the floors run errors and locations, the walker,
the entry points, then the language (docs/design.md, "The Python
package")."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "python" / "anyp"
OPTIONAL = ("torch", "numpy")


def _modules():
    """{dotted name: path} of every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _resolve(module, path, node):
    """The dotted names an import statement of `module` names (relative
    imports resolved; `from . import x` is module x when there is one)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = package
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    if node.level:
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module
    return [base] + [f"{base}.{a.name}" for a in node.names]


def _imports(modules):
    """{module: (imports at module level, imports inside functions)}."""
    out = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text())
        top, local = set(), []
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = [n for n in _resolve(module, path, node) if n in modules]
            if node.col_offset == 0:
                top.update(names)
            elif not any(n.split(".")[0] in OPTIONAL for n in _resolve(module, path, node)):
                local.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
        out[module] = (top, local)
    return out


def test_no_module_imports_inside_a_function():
    local = [where for _, (_, found) in sorted(_imports(_modules()).items()) for where in found]
    assert local == []


def test_the_modules_imports_form_no_cycle():
    modules = _modules()
    edges = {
        m: {n for n in top if n != m and not m.startswith(n + ".")}  # a package's own __init__
        for m, (top, _) in _imports(modules).items()
    }
    state, cycles = {}, []

    def visit(m, stack):
        state[m] = "open"
        for n in sorted(edges[m]):
            if state.get(n) == "open":
                cycles.append(" -> ".join(stack[stack.index(n) :] + [n]))
            elif n not in state:
                visit(n, stack + [n])
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m, [m])
    assert cycles == []


def test_the_check_sees_a_local_import_and_a_cycle(tmp_path, monkeypatch):
    """The checks themselves can fail: a package with both defects."""
    pkg = tmp_path / "anyp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("from . import a\n\n\ndef f():\n    from . import a\n")
    monkeypatch.setitem(globals(), "PACKAGE", pkg)
    imports = _imports(_modules())
    assert imports["anyp.b"][1] == ["anyp/b.py:5"]
    try:
        test_the_modules_imports_form_no_cycle()
    except AssertionError as e:
        assert "anyp.a -> anyp.b -> anyp.a" in str(e)
    else:
        raise AssertionError("the cycle a -> b -> a was not found")
