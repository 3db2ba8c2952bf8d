"""The differential fuzzer (scripts/fuzz_programs.py, fuzz/program_generator.py):
every kind of round, alone, in every dtype (FP32, FP16, BF16, INT8,
INT16, INT32, INT64),
computes what the host reference computes at P = 2, 3, 4 and 7 (bit for
bit unless floating-point adds run in the algorithm's order); a slice of seed 1's random programs passes every
setting; a difference is a finding, reduced to the round that differs; and
a program runs on the MPI engine through the fuzzer's mpirun leg."""

import pathlib
import random
import shutil
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fuzz"))
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_programs  # noqa: E402
import program_generator as gen  # noqa: E402

COMMUNICATING = [
    ("get", 1),
    ("get", 5),
    ("put", 2),
    ("allreduce", "Sum", "mesh"),
    ("allreduce", "Max", "tree"),
    ("allreduce", "Min", "recursive_doubling"),
    ("allreduce", "Sum", "ring"),
    ("allreduce", "Max", "rabenseifner"),
    ("reduce_scatter", "Sum"),
    ("reduce_scatter", "Min"),
    ("broadcast", 1),
    ("allgather", 3),
    ("reduce_to", 0),
]
FLOAT_MATH = [
    ("scale", -1.0, 0.25),
    ("rank_add", 1.5),
    ("branch", 2, 1, 2.0, -0.75),
    ("clamp", 0.0, 1.0),
    ("loop", 3, -1.0, 1.0),
]
INT_MATH = [("scale", 3, -3), ("rank_add", 2), ("branch", 2, 1, -1, 5), ("clamp", -50, 20)]


def cases():
    for dtype in gen.DTYPES:
        math = INT_MATH if gen.is_int(dtype) else FLOAT_MATH
        rounds = [("round", d) for d in gen.DTYPES if d != dtype]
        for round_ in math + rounds + COMMUNICATING:
            yield pytest.param(dtype, round_, id=f"{dtype}-{'-'.join(map(str, round_))}")


@pytest.mark.parametrize("P", [2, 3, 4, 7])
@pytest.mark.parametrize("dtype,round_", list(cases()))
def test_each_round_computes_what_the_reference_does(dtype, round_, P, tmp_path):
    first = ("scale", 3, -1) if gen.is_int(dtype) else ("scale", 2.0, -1.0)
    program = gen.Program(2, 64, [first, round_], dtype)  # 64 columns: a row fits every dtype
    assert fuzz_programs.check(program, tmp_path / "p.py", P, {"workers": 2}) is None


def test_a_slice_of_random_programs_passes_every_setting(capsys):
    assert fuzz_programs.main(["600", "--seed", "1", "--count", "12", "--mpi-every", "0"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("programs: 12 generated, ")
    assert out.endswith("; findings: 0\n")


def test_a_difference_is_a_finding_reduced_to_the_round_that_differs(monkeypatch, tmp_path):
    real = gen.reference

    def clamp_wrong(program, x):  # the reference's clamp off by 1 ulp at the top
        wrong = [("clamp", r[1], r[2] + 1e-6) if r[0] == "clamp" else r for r in program.rounds]
        return real(program.with_rounds(wrong), x)

    monkeypatch.setattr(gen, "reference", clamp_wrong)
    program = gen.Program(
        1, 8, [("scale", 2.0, 1.0), ("get", 1), ("clamp", -2.0, 1.0), ("allreduce", "Max", "mesh")]
    )
    path = tmp_path / "p.py"
    problem = fuzz_programs.check(program, path, 3, {"workers": 1})
    assert problem is not None and problem.startswith("wrong result: max |y - reference| = ")
    small = fuzz_programs.reduce(program, path, 3, {"workers": 1})
    assert small.rounds == [("clamp", -2.0, 1.0)]  # x reaches 1.5: the clamp alone differs


def test_an_anyp_error_is_a_finding(tmp_path):
    # A row of 8 BF16 elements is not a whole number of 32-byte units: the
    # generator never makes it, and the fuzzer reports it when it is made.
    program = gen.Program(1, 8, [("round", "BF16")])  # FP32 tiles
    problem = fuzz_programs.check(program, tmp_path / "p.py", 2, {"workers": 1})
    assert problem.startswith("CompileError: compile error: function 'kernel' (incore), op pl.cast")


def test_generated_programs_are_well_formed_in_every_random_draw():
    rng = random.Random(7)
    for _ in range(200):
        program = gen.random_program(rng)
        assert 1 <= len(program.rounds) <= 6
        assert all(r[0] in gen.KINDS for r in program.rounds)
        assert gen.fits(program.dtype, program.cols)
        assert all(gen.fits(r[1], program.cols) for r in program.rounds if r[0] == "round")
        compile(gen.source(program), "generated", "exec")


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="no mpirun")
def test_a_program_runs_on_the_mpi_engine(tmp_path):
    from anyp import _core

    if "mpi" not in _core.available_engines():
        pytest.skip("this build has no MPI engine")
    program = gen.Program(2, 16, [("get", 1), ("allreduce", "Sum", "mesh"), ("reduce_to", 1)])
    assert fuzz_programs.check(program, tmp_path / "p.py", 3, {"engine": "mpi"}) is None
    # And a wrong reference makes the MPI leg fail too.
    wrong = program.with_rounds(program.rounds + [("scale", 2.0, 0.0)])
    path = tmp_path / "q.py"
    path.write_text(gen.source(program).replace(repr(program), repr(wrong), 1))
    assert fuzz_programs.run_on_mpi(path, 3).startswith("mpirun -n 3 exited 1:\nwrong result")
