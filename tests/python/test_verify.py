"""--verify from Python: every Python example (steps 01–16, kernels k1–k7)
in every --mode and --op its parser offers, at P = 2 and 3, under
`--verify --verify-budget 200` through its own command line in-process,
prints and exits exactly as its C++ twin does: the same traces, schedules
and pruned choices (both run the same program under the same explorer),
or the same "not verified" line when the budget runs out. Also: step 04's
exact line, and --replay-schedule alike in both front-ends."""

import subprocess

import pytest

from test_twins import choices_of, load, run_python, twins

BUDGET = "200"


def cases():
    for name, script, binary in twins():
        for flags in choices_of(load(name, script)):
            for P in (2, 3):
                yield pytest.param(
                    name, script, binary, P, flags, id=f"{name}-P{P}-{'-'.join(flags)}"
                )


@pytest.mark.parametrize("name,script,binary,P,flags", list(cases()))
def test_python_verifies_what_cpp_verifies(name, script, binary, P, flags):
    devices = ",".join(str(d) for d in range(P))
    argv = ["-d", devices, *flags, "--verify", "--verify-budget", BUDGET]
    cpp = subprocess.run([binary, *argv], capture_output=True, text=True, timeout=300)
    py = run_python(load(name, script), argv)
    assert py == (cpp.returncode, cpp.stdout, cpp.stderr)
    if cpp.returncode == 0:
        assert cpp.stdout.startswith("OK\nverified: ")
    else:
        assert cpp.stderr.startswith("not verified: budget of 200 schedules reached")


def test_verify_and_replay_schedule_from_python():
    name = "04_barrier"
    script, binary = next((s, b) for n, s, b in twins() if n == name)
    module = load(name, script)
    code, out, err = run_python(module, ["-d", "0,1,2", "--verify", "--mode", "hand"])
    assert (code, err) == (0, "")
    assert (
        out
        == "OK\nverified: 1 trace (1 schedule run, 30 pruned), no deadlock, no race, golden holds\n"
    )
    # A schedule replays as given, in both front-ends alike.
    argv = ["-d", "0,1,2", "--mode", "hand", "--check-races", "--replay-schedule", "2*3,1,0"]
    cpp = subprocess.run([binary, *argv], capture_output=True, text=True, timeout=300)
    assert run_python(module, argv) == (cpp.returncode, cpp.stdout, cpp.stderr) == (0, "OK\n", "")
    argv[-1] = "7"
    cpp = subprocess.run([binary, *argv], capture_output=True, text=True, timeout=300)
    assert cpp.returncode == 1
    assert cpp.stderr == (
        "run error: the schedule's step 1 runs agent 7, which is not ready then (ready: 0, 1, 2)\n"
    )
    assert run_python(module, argv) == (cpp.returncode, cpp.stdout, cpp.stderr)
