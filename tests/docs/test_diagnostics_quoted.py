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

# Messages the code can print but no test on this machine can provoke, each
# quoted exactly as in docs/diagnostics.md, with the reason. Keep it short:
# a message belongs here only if no test can make the code print it.
UNREACHABLE = {
    # -- internal guards: an earlier check always refuses the mistake first --
    "dispatch of '<g>', argument <i> ('<p>'): expected a tensor, got a window view": "the call's trace-time kind check (function_def.cpp, record_call) refuses a window view "
    "for a tensor parameter; a host tensor-typed value is only ever a host tensor",
    "dispatch of '<g>', argument <i> ('<p>'): expected a tensor, got a scalar": "the call's trace-time kind check refuses a scalar for a tensor parameter, and "
    "bind_dims refuses a scalar argument for a tensor host parameter",
    "dispatch of '<g>', argument <i> ('<p>'): expected a window view, got a host tensor": "the call's trace-time kind check refuses a host tensor for a window parameter, and a "
    "host parameter declared pld::DistributedTensor is refused with the host signature",
    "dispatch of '<g>', argument <i> ('<p>'): this value cannot be passed to a device": "every host value is a scalar, a tensor slice, a view, a buffer or domain (refused by "
    "the call's kind check) or unset (its own message)",
    "pld.tensor.<op> at the host level works on window views made with pld::window; argument "
    "<i> is <name>, which is not one": "tracing refuses a plain tensor or a scalar as a host collective's data, and a host "
    "parameter declared pld::DistributedTensor is refused with the host signature",
    "op <op> cannot run at the host level": "every op the verifier allows at the host level (kHost or kAny in ir/op.hpp) has a case "
    "in specialize_host's evaluator; the default is a guard",
    "compile error: lowering: <expr>: <reason>": "check_functions evaluates every immediate and shape before lowering; the doc calls it "
    "a bug in anyp",
    "scalar operand <v> does not fit the <T> tile (tiles are typed: cast the tile to a wider "
    "dtype first)": "a scalar register always holds a value of its dtype (calls cast, scalar math wraps, "
    "constants and dims are checked when compiling), and a tile op takes a scalar of its "
    "own dtype only",
    "elements [<a>, <b>) are outside the <n>-element view <shape> (<whose memory>)": "the flat ops are emitted only by the lowering of builtin collectives, from shapes "
    "check_functions has checked; the doc calls it a bug in anyp",
    "a host tensor is not reachable from another rank": "every remote access (put, get, remote_load/store, notify, a collective's peers) takes a "
    "window, which tracing enforces; a host tensor is only ever accessed by its own rank",
    # -- a real std::bad_alloc: only exhausting the machine's memory produces one (an
    # address-space limit cannot be used: the sanitizer builds reserve terabytes) --
    "run error: out of memory (std::bad_alloc) during the run, which was planned to need "
    "<footprint> (the modeled timeline's events are not counted there); run at a smaller P": "an allocation outside the planned footprint must fail during the run",
    "compile error: out of memory (std::bad_alloc) while compiling '<host>' for P = <P>; the plan "
    "(its dispatch lists and lowered code) does not fit: compile at a smaller P": "compile() itself must run out of memory",
    "out of memory (std::bad_alloc); the run (or its race checker) needs more memory than this "
    "machine has at this P": "a rank VM's allocation must fail although the footprint check let the run start",
    # -- the environment --
    "run error: engine 'mpi': the MPI window uses the separate memory model (MPI_WIN_SEPARATE, "
    "osc component '<c>'), …": "every osc component of this machine's Open MPI (rdma, sm, pt2pt, ucx) has the unified "
    "model",
    "Session::submit: the session is being destroyed": "a submit must be blocked in one thread while another destroys the session: a race with "
    "the destructor that no test can order (the destructor waits for it to leave)",
}


def messages():
    for line, message in corpus.quoted_messages(DOC):
        if sum(len(p) for p in corpus.fragments(message)) >= NOT_A_MESSAGE_BELOW:
            yield pytest.param(message, id=f"diagnostics.md:{line}")


@pytest.mark.parametrize("message", messages())
def test_the_quoted_message_is_asserted_by_a_test(message):
    if message in UNREACHABLE:  # excluded, with its reason: while no test asserts it
        assert (
            corpus.produced_by(message, TEXTS) is None
        ), f"a test asserts it now: drop it from UNREACHABLE: {message}"
        return
    assert corpus.produced_by(
        message, TEXTS
    ), f"no test asserts the message docs/diagnostics.md quotes: {message}"


def test_every_unreachable_message_is_quoted():
    quoted = {message for _, message in corpus.quoted_messages(DOC)}
    assert sorted(set(UNREACHABLE) - quoted) == []


def test_the_matcher_finds_a_known_message_and_refuses_an_invented_one():
    known = "cost model '<file>': cannot be read: no such file"
    assert corpus.produced_by(known, TEXTS)
    assert corpus.produced_by("run error: the flux capacitor of <name> overheated", TEXTS) is None
    # A message asserted through a regular expression (\\( for a parenthesis) is found.
    watchdog = (
        "run error: rank <r> made no progress for <n> s (stuck inside an MPI call?); ending the "
        "run (ANYP_MPI_BACKSTOP_SECONDS sets this limit)"
    )
    assert corpus.produced_by(watchdog, TEXTS)
    assert corpus.produced_by(watchdog.replace("ending the run", "ending the rank"), TEXTS) is None
