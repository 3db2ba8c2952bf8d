"""docs/collectives.md's table of algorithms is the C++ algorithm table
(include/anyp/collective_algorithms.hpp, as anyp._core.collective_modes()
gives it): a row per collective, its pld:: modes (CamelCase of the Python
names, then Auto) and its Python mode names, in list order."""

import pathlib
import re

import anyp

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "collectives.md"


def _camel(snake):
    return "".join(part.capitalize() for part in snake.split("_"))


def test_the_docs_table_is_the_algorithm_table():
    rows = {}
    for line in DOC.read_text().splitlines():
        m = re.fullmatch(r"\| `(\w+)` \| ([\w, ]+) \| ([\w, ]+) \|", line)
        if m:
            rows[m.group(1)] = (m.group(2).split(", "), m.group(3).split(", "))
    modes = anyp._core.collective_modes()
    assert set(rows) == set(modes)
    for collective, names in modes.items():
        assert rows[collective] == ([_camel(n) for n in names], names), collective
