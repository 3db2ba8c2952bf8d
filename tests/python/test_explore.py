"""Every Python example — the ladder's steps 01–16 and the kernels k1–k7,
in every --mode and --op its parser offers — under the race checker and 20
PCT schedules (`--check-races --explore 20`), at P = 2, 3, 4, 5, 8, through its
own command line in-process: each must print exactly `OK` (every schedule
race-free, deadlock-free and golden) and exit 0."""

import pytest

from test_twins import choices_of, load, run_python, twins


def cases():
    for name, script, _ in twins():
        for flags in choices_of(load(name, script)):
            for P in (2, 3, 4, 5, 8):
                yield pytest.param(name, script, P, flags, id=f"{name}-P{P}-{'-'.join(flags)}")


@pytest.mark.parametrize("name,script,P,flags", list(cases()))
def test_every_example_holds_under_20_schedules(name, script, P, flags):
    devices = ",".join(str(d) for d in range(P))
    argv = ["-d", devices, "--check-races", "--explore", "20", *flags]
    assert run_python(load(name, script), argv) == (0, "OK\n", "")
