"""anyp._spellings — the core's messages in the Python front-end's
spellings. The C++ core names the C++ API in its messages (pl::dynamic,
pld::system::wait_async, pl::device(r), ...); a Python user reads what a
Python program writes. One table of the names whose Python form differs,
then the generic rule for the rest: `pl::a::b` is `pl.a.b`."""

import re

# C++ spelling -> Python spelling, where the Python API differs by more than
# its separators. Longest first (a row may contain a shorter one).
_DIFFERENT_NAMES = (
    ("pld::system::wait_async", "pld.system.wait_async_event"),
    ("pl::jit::orchestration", "@pl.jit"),
    ("pl::jit::incore", "@pl.jit.incore"),
    ("pl::jit::host", "@pl.jit.host"),
    ("pl::device(r)", "device=r"),
    ("pl::blocks(n)", "pl.spmd(n)"),
    ("pl::InOut", "pl.InOut[...]"),
    ("pl::Out", "pl.Out[...]"),
    ("pl::In", "an input (a plain annotation)"),
    ('pl::arg("name") = value', "name=value"),
    ("pl::if_", "if"),
)

_QUALIFIED = re.compile(r"\b(pld|pl)((?:::[A-Za-z_]\w*)+)")


def python_spelling(text):
    """`text` with every C++ API name in its Python spelling."""
    for cpp, python in _DIFFERENT_NAMES:
        # pl::In must not match the start of pl::InOut or pl::Int...: a name
        # ends where no word character follows.
        text = re.sub(re.escape(cpp) + (r"(?!\w)" if cpp[-1].isalnum() else ""), python, text)
    return _QUALIFIED.sub(lambda m: m.group(1) + m.group(2).replace("::", "."), text)
