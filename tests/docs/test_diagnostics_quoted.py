"""test_diagnostics_quoted.py — every error text that docs/diagnostics.md
quotes is asserted by some test, so that the document cannot drift from the
messages the code prints (issue 22). Run by ctest (docs.diagnostics_quoted)
with Debian's /usr/bin/python3 -m pytest."""

from __future__ import annotations

import pytest

import diagnostics_corpus as corpus

DOC = corpus.ROOT / "docs" / "diagnostics.md"
TEXTS = corpus.test_texts()
# Quoted spans that are not messages: a flag, a value or a code form.
NOT_A_MESSAGE_BELOW = 12  # literal characters


def messages():
    for line, message in corpus.quoted_messages(DOC):
        if sum(len(p) for p in corpus.fragments(message)) >= NOT_A_MESSAGE_BELOW:
            yield pytest.param(message, id=f"diagnostics.md:{line}")


@pytest.mark.parametrize("message", messages())
def test_the_quoted_message_is_asserted_by_a_test(message):
    assert corpus.produced_by(message, TEXTS), (
        f"no test asserts the message docs/diagnostics.md quotes: {message}"
    )


def test_the_matcher_finds_a_known_message_and_refuses_an_invented_one():
    known = "cost model '<file>': cannot be read: no such file"
    assert corpus.produced_by(known, TEXTS)
    assert corpus.produced_by("run error: the flux capacitor of <name> overheated", TEXTS) is None
