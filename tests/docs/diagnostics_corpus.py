"""diagnostics_corpus.py — the error texts that docs/diagnostics.md quotes,
and the texts the test suite asserts, for test_diagnostics_quoted.py.

A quoted message is a backquoted span in the first cell of a table row; its
placeholders (``<…>``, ``…``, ``..``) match any text. The tests' texts are
the string literals of the C++ tests (adjacent literals joined, escapes
undone) and the lines of the CMake test lists, per file, in file order.

Some tests assert a message through a regular expression (std::regex,
EXPECT_EXIT, a CMake STDERR_REGEX), where a literal `(` is written `\\(`.
For those the texts also hold the file's text with the regular expression's
escapes of punctuation undone (`\\(` -> `(`, `\\.` -> `.`): exactly the
characters the expression requires there. Its other constructs (`.*`,
`[0-9]+`) stay as they are, so they can only stand where the message has a
placeholder.
"""

from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]

# A placeholder in a quoted message: <name>, <…>, …, a literal "..".
PLACEHOLDER = re.compile(r"<[^<>`]*>|…|\.\.(?!\.)")
# A C++ string literal (no raw strings in the tests), and what may separate
# two literals that the compiler joins.
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "'": "'"}
# A regular expression's escape of a punctuation character: it matches that
# character itself.
REGEX_ESCAPE = re.compile(r"\\([][(){}.*+?^$|\\/-])")


def quoted_messages(markdown: pathlib.Path) -> list[tuple[int, str]]:
    """(line number, quoted message) for each backquoted span of a first cell."""
    found = []
    for number, line in enumerate(markdown.read_text().splitlines(), start=1):
        if not line.startswith("| ") or line.startswith("|---"):
            continue
        first = line[2:].split(" | ", 1)[0]
        for span in re.findall(r"`([^`]+)`", first):
            found.append((number, span))
    return found


def fragments(message: str) -> list[str]:
    """The literal parts of a quoted message, in order."""
    return [part for part in (p.strip() for p in PLACEHOLDER.split(message)) if part]


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: ESCAPES.get(m.group(1), m.group(1)), text)


def cpp_texts(source: str) -> str:
    """The file's string literals in order; joined literals stay joined."""
    out = []
    last_end = None
    for m in LITERAL.finditer(source):
        between = source[last_end : m.start()] if last_end is not None else "x"
        if between.strip():  # not adjacent: a new string
            out.append("\x00")
        out.append(unescape(m.group(1)))
        last_end = m.end()
    return "".join(out)


def without_regex_escapes(text: str) -> str:
    """The text with a regular expression's escapes of punctuation undone."""
    return REGEX_ESCAPE.sub(r"\1", text)


def test_texts() -> dict[str, str]:
    """Per test file: its texts, as one string (strings separated by NUL),
    followed by the same without regular-expression escapes if it has any."""
    texts = {}
    for path in sorted((ROOT / "tests").rglob("*")):
        if path.suffix in (".cpp", ".hpp"):
            text = cpp_texts(path.read_text())
        elif path.suffix == ".cmake":
            text = unescape(path.read_text())
        else:
            continue
        plain = without_regex_escapes(text)
        texts[str(path.relative_to(ROOT))] = text if plain == text else text + "\x00" + plain
    return texts


def produced_by(message: str, texts: dict[str, str], gap: int = 160) -> str | None:
    """The test file whose texts hold the message's parts in order, each
    within `gap` characters of the one before (a text built from literals
    and values), or None."""
    parts = fragments(message)
    if not parts:
        return None
    for name, text in texts.items():
        start = 0
        while True:
            at = text.find(parts[0], start)
            if at < 0:
                break
            end = at + len(parts[0])
            ok = True
            for part in parts[1:]:
                nxt = text.find(part, end)
                if nxt < 0 or nxt - end > gap:
                    ok = False
                    break
                end = nxt + len(part)
            if ok:
                return name
            start = at + 1
    return None
