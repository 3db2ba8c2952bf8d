"""program_generator.py — random well-formed anyp programs and their
reference results, for differential fuzzing (scripts/fuzz_programs.py).

A program is a list of rounds that every rank runs on its tile t (a
[ROWS, COLS] tile of the program's dtype — FP32, FP16, BF16, INT8, INT16,
INT32 or INT64 — loaded from x[r]; y[r] = t at the end; constants are ones
every dtype holds exactly, integers for the integer dtypes):

  ("scale", a, b)         t = t * a + b
  ("rank_add", a)         t = (t + r) * a
  ("branch", m, c, a, b)  if r % m == c: t = t * a  else: t = t + b
  ("clamp", lo, hi)       t = min(max(t, lo), hi)
  ("loop", m, a, b)       r % m + 1 times: t = t * a + b (a trip count by rank)
  ("get", k)              t = rank (r + k) % P's t: staged in a fresh window,
                          the reader told by an AtomicAdd notify, then a
                          remote load after the wait
  ("put", k)              t pushed into rank (r + k) % P's fresh window by
                          a remote store, the owner notified; t = what
                          rank (r - k) % P pushed
  ("allreduce", op, mode) t = the builtin allreduce of t (op Sum, Max, Min;
                          mesh, ring, tree, recursive doubling, Rabenseifner)
  ("broadcast", root)     t = rank root's t (builtin broadcast, root < 2)
  ("round", dtype)        t = t cast to another dtype and back (floats round
                          to nearest even, integers truncate)
  ("reduce_scatter", op)  every rank stages t + c as row c of a
                          [P, ROWS * COLS] window; the builtin reduce-scatter
                          (op Sum, Max, Min) leaves row r reduced: t = it
  ("allgather", k)        every t (staged in y) gathered (builtin allgather)
                          into a [P * ROWS, COLS] window; t = rank (r + k) % P's
  ("reduce_to", root)     every rank adds t into rank root's fresh window
                          (remote stores with atomic Add) and notifies it;
                          root waits for all P, t = the sum there

Every round that communicates has windows of its own, so the program is
race-free and deadlock-free at every P >= 2 on every schedule; its result
depends on nothing else. source() writes the program as Python that uses
anyp.language; reference() computes y with torch, round by round.
"""

from __future__ import annotations

import random

import torch

ROWS_CHOICES = (1, 2, 4)
COLS_CHOICES = (8, 16, 64)
DTYPES = ("FP32", "FP16", "BF16", "INT8", "INT16", "INT32", "INT64")
TORCH = {
    "FP32": torch.float32,
    "FP16": torch.float16,
    "BF16": torch.bfloat16,
    "INT8": torch.int8,
    "INT16": torch.int16,
    "INT32": torch.int32,
    "INT64": torch.int64,
}
BYTES = {"FP32": 4, "FP16": 2, "BF16": 2, "INT8": 1, "INT16": 2, "INT32": 4, "INT64": 8}


def is_int(dtype):
    return dtype.startswith("INT")


def fits(dtype, cols):
    """Whether a row of `cols` elements is a whole number of 32-byte units."""
    return cols * BYTES[dtype] % 32 == 0


SCALES = {"float": (0.5, 2.0, -1.0, 1.5), "int": (2, -1, 3)}
OFFSETS = {"float": (0.25, -0.75, 1.0), "int": (1, -3, 5)}
CLAMPS = {"float": ((-2.0, 0.0, 0.75), (0.5, 1.0, 8.0)), "int": ((-50, 0, 7), (5, 20, 90))}
OPS = ("Sum", "Max", "Min")
MODES = ("mesh", "ring", "tree", "recursive_doubling", "rabenseifner")
KINDS = (
    "scale",
    "rank_add",
    "branch",
    "clamp",
    "loop",
    "round",
    "get",
    "put",
    "allreduce",
    "broadcast",
    "allgather",
    "reduce_scatter",
    "reduce_to",
)
COMMUNICATING = (
    "get",
    "put",
    "allreduce",
    "broadcast",
    "allgather",
    "reduce_scatter",
    "reduce_to",
)


class Program:
    def __init__(self, rows, cols, rounds, dtype="FP32"):
        self.rows, self.cols, self.rounds, self.dtype = rows, cols, list(rounds), dtype

    def with_rounds(self, rounds):
        return Program(self.rows, self.cols, rounds, self.dtype)

    def exact(self):
        """Whether the result is bit-exact (floating-point adds of a Sum
        allreduce or of atomic adds run in an order the reference does not
        follow; integer adds wrap alike in any order)."""
        return is_int(self.dtype) or not any(
            (r[0] in ("allreduce", "reduce_scatter") and r[1] == "Sum") or r[0] == "reduce_to"
            for r in self.rounds
        )

    def __repr__(self):
        return (
            f"Program(rows={self.rows}, cols={self.cols}, rounds={self.rounds!r}, "
            f"dtype={self.dtype!r})"
        )


def random_program(rng: random.Random, max_rounds=6) -> Program:
    dtype = rng.choice(DTYPES)
    family = "int" if is_int(dtype) else "float"
    cols = rng.choice([c for c in COLS_CHOICES if fits(dtype, c)])
    through = [d for d in DTYPES if d != dtype and fits(d, cols)]
    scales, offsets = SCALES[family], OFFSETS[family]
    rounds = []
    for _ in range(rng.randint(1, max_rounds)):
        kind = rng.choice(KINDS)
        if kind == "scale":
            rounds.append(("scale", rng.choice(scales), rng.choice(offsets)))
        elif kind == "rank_add":
            rounds.append(("rank_add", rng.choice(scales)))
        elif kind == "branch":
            m = rng.randint(1, 3)
            rounds.append(("branch", m, rng.randrange(m), rng.choice(scales), rng.choice(offsets)))
        elif kind == "clamp":
            lows, widths = CLAMPS[family]
            lo = rng.choice(lows)
            rounds.append(("clamp", lo, lo + rng.choice(widths)))
        elif kind in ("get", "put"):
            rounds.append((kind, rng.randint(0, 5)))
        elif kind == "allreduce":
            rounds.append(("allreduce", rng.choice(OPS), rng.choice(MODES)))
        elif kind == "round":
            # After floating-point adds in an unknown order, a truncation to
            # INT32 would turn their last-bit difference into a whole 1.
            inexact = family == "float" and any(
                r[0] == "reduce_to" or r[1:2] == ("Sum",) for r in rounds
            )  # a Sum allreduce or reduce-scatter, or atomic adds
            choices = [d for d in through if not inexact or not is_int(d)]
            if choices:
                rounds.append(("round", rng.choice(choices)))
        elif kind == "loop":
            rounds.append(("loop", rng.randint(1, 3), rng.choice(scales), rng.choice(offsets)))
        elif kind == "allgather":
            rounds.append(("allgather", rng.randint(0, 5)))
        elif kind == "reduce_scatter":
            rounds.append(("reduce_scatter", rng.choice(OPS)))
        elif kind == "reduce_to":
            rounds.append(("reduce_to", rng.randrange(2)))
        else:
            rounds.append(("broadcast", rng.randrange(2)))
    return Program(rng.choice(ROWS_CHOICES), cols, rounds, dtype)


def _windows(program):
    """(name, dtype, shape) of every window, in parameter order."""
    out = []
    for i, r in enumerate(program.rounds):
        if r[0] in COMMUNICATING:
            shape = {"allgather": "[NR * ROWS, COLS]", "reduce_scatter": "[NR, ROWS * COLS]"}
            out.append((f"d{i}", "DT", shape.get(r[0], "[ROWS, COLS]")))
            ring = r[0] == "allreduce" and r[2] == "ring"  # a cell per step and peer
            out.append((f"s{i}", "pl.INT32", "[2 * (NR - 1), NR]" if ring else "[NR, 1]"))
    return out


def _round_source(i, r):
    kind = r[0]
    if kind == "scale":
        return [f"t = pl.add(pl.mul(t, {r[1]!r}), {r[2]!r})"]
    if kind == "rank_add":
        return [f"t = pl.mul(pl.add(t, rf), {r[1]!r})"]
    if kind == "branch":
        return [
            f"if r % {r[1]} == {r[2]}:",
            f"    t = pl.mul(t, {r[3]!r})",
            "else:",
            f"    t = pl.add(t, {r[4]!r})",
        ]
    if kind == "clamp":
        return [f"t = pl.minimum(pl.maximum(t, {r[1]!r}), {r[2]!r})"]
    if kind == "round":
        return [f"t = pl.cast(pl.cast(t, pl.{r[1]}), DT)"]
    if kind == "loop":
        return [
            f"for _ in pl.range(r % {r[1]} + 1):",
            f"    t = pl.add(pl.mul(t, {r[2]!r}), {r[3]!r})",
        ]
    d, s = f"d{i}", f"s{i}"
    if kind == "get":
        return [
            f"{d} = pl.store(t, [0, 0], {d})",
            f"pld.system.notify({s}, peer=(r + (n - 1) * {r[1]}) % n, offsets=[0, 0], value=1, "
            "op=pld.NotifyOp.AtomicAdd)",
            f"pld.system.wait({s}, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)",
            f"t = pld.tile.remote_load({d}, (r + {r[1]}) % n, [0, 0], [ROWS, COLS])",
        ]
    if kind == "put":
        return [
            f"pld.tile.remote_store(t, {d}, (r + {r[1]}) % n, [0, 0])",
            f"pld.system.notify({s}, peer=(r + {r[1]}) % n, offsets=[0, 0], value=1, "
            "op=pld.NotifyOp.AtomicAdd)",
            f"pld.system.wait({s}, offsets=[0, 0], expected=1, cmp=pld.WaitCmp.Ge)",
            f"t = pl.load({d}, [0, 0], [ROWS, COLS])",
        ]
    if kind == "allreduce":
        return [
            f"{d} = pl.store(t, [0, 0], {d})",
            f"{d} = pld.tensor.allreduce({d}, {s}, op=pld.ReduceOp.{r[1]}, mode={r[2]!r})",
            f"t = pl.load({d}, [0, 0], [ROWS, COLS])",
        ]
    if kind == "allgather":
        return [
            "y = pl.store(t, [0, 0], y)",
            f"{d} = pld.tensor.allgather(y, {d}, {s})",
            f"t = pl.load({d}, [((r + {r[1]}) % n) * ROWS, 0], [ROWS, COLS])",
        ]
    if kind == "reduce_scatter":
        return [
            "for c in pl.range(n):",
            "    cf = pl.cast(c, DT)",
            f"    {d} = pl.store(pl.reshape(pl.add(t, cf), [1, ROWS * COLS]), [c, 0], {d})",
            f"{d} = pld.tensor.reduce_scatter({d}, {s}, op=pld.ReduceOp.{r[1]})",
            f"t = pl.reshape(pl.load({d}, [r, 0], [1, ROWS * COLS]), [ROWS, COLS])",
        ]
    if kind == "reduce_to":
        return [
            f"pld.tile.remote_store(t, {d}, {r[1]}, [0, 0], atomic=pld.AtomicType.Add)",
            f"pld.system.notify({s}, peer={r[1]}, offsets=[0, 0], value=1, "
            "op=pld.NotifyOp.AtomicAdd)",
            f"if r == {r[1]}:",
            f"    pld.system.wait({s}, offsets=[0, 0], expected=n, cmp=pld.WaitCmp.Ge)",
            f"    t = pl.load({d}, [0, 0], [ROWS, COLS])",
        ]
    return [
        f"{d} = pl.store(t, [0, 0], {d})",
        f"{d} = pld.tensor.broadcast({d}, {s}, root={r[1]})",
        f"t = pl.load({d}, [0, 0], [ROWS, COLS])",
    ]


def source(program: Program) -> str:
    """The program as a Python module defining `program` (the host function)."""
    windows = _windows(program)
    params = "".join(
        f"    {name}: pl.InOut[pld.DistributedTensor[{shape}, {dtype}]],\n"
        for name, dtype, shape in windows
    )
    names = "".join(f", {name}" for name, _, _ in windows)
    body = ["t = pl.load(x, [0, 0], [ROWS, COLS])", "rf = pl.cast(r, DT)"]
    for i, r in enumerate(program.rounds):
        body += _round_source(i, r)
    body.append("y = pl.store(t, [0, 0], y)")
    body.append("return y")
    allocs = "".join(
        f"    {name}_buf = pld.alloc_window_buffer({shape}, dtype={dtype})\n"
        for name, dtype, shape in windows
    )
    views = "".join(
        f"        {name} = pld.window({name}_buf, {shape}, dtype={dtype})\n"
        for name, dtype, shape in windows
    )
    signature = (
        "    x: pl.Tensor[[ROWS, COLS], DT],\n"
        "    y: pl.Out[pl.Tensor[[ROWS, COLS], DT]],\n"
        "    r: pl.Scalar[pl.INT32],\n"
        "    n: pl.Scalar[pl.INT32],\n" + params
    )
    return (
        f'"""A generated program: {program!r}"""\n\n'
        "import anyp.language as pl\n"
        "import anyp.language.distributed as pld\n\n"
        f"ROWS, COLS, DT = {program.rows}, {program.cols}, pl.{program.dtype}\n"
        'NR = pl.dynamic("NR")\n\n\n'
        "@pl.jit.incore\n"
        f"def kernel(\n{signature}):\n"
        + "".join(f"    {line}\n" for line in body)
        + "\n\n@pl.jit\n"
        f"def per_rank(\n{signature}):\n"
        f"    kernel(x, y, r, n{names})\n\n\n"
        "@pl.jit.host\n"
        "def program(\n"
        "    x: pl.Tensor[[NR, ROWS, COLS], DT],\n"
        "    y: pl.Out[pl.Tensor[[NR, ROWS, COLS], DT]],\n"
        "):\n"
        + allocs
        + "    for r in pl.range(pld.world_size()):\n"
        + views
        + f"        per_rank(x[r], y[r], r, pld.world_size(){names}, device=r)\n"
    )


def reference(program: Program, x: torch.Tensor) -> torch.Tensor:
    """y for input x [P, ROWS, COLS] of the program's dtype, computed round by
    round on the host: 16-bit floats compute in float and round once per
    result, integers wrap (as anyp's tile math)."""
    P = x.shape[0]
    dt = TORCH[program.dtype]
    t = [x[r].clone() for r in range(P)]

    def sum_of(stacked):
        if is_int(program.dtype):
            return stacked.to(torch.int64).sum(0).to(dt)  # wraps as the dtype's adds do
        return stacked.double().sum(0).to(dt)

    def cast(v, target):
        """pl.cast: into a float, round to nearest even; into an integer,
        truncate toward zero (NaN and infinities: 0), then wrap."""
        if is_int(target) and v.is_floating_point():
            v = torch.nan_to_num(v.double(), nan=0.0, posinf=0.0, neginf=0.0).trunc()
            return v.to(torch.int64).to(TORCH[target])
        return v.to(TORCH[target])

    for r_ in program.rounds:
        kind = r_[0]
        if kind == "scale":
            t = [v * r_[1] + r_[2] for v in t]
        elif kind == "rank_add":
            t = [(v + torch.tensor(r, dtype=dt)) * r_[1] for r, v in enumerate(t)]
        elif kind == "branch":
            t = [v * r_[3] if r % r_[1] == r_[2] else v + r_[4] for r, v in enumerate(t)]
        elif kind == "clamp":
            # In a wider type (this torch clamps no Half): exact, as the bounds are.
            wide = torch.int64 if is_int(program.dtype) else torch.float64
            t = [torch.clamp(v.to(wide), r_[1], r_[2]).to(dt) for v in t]
        elif kind == "loop":
            for r in range(P):
                for _ in range(r % r_[1] + 1):
                    t[r] = t[r] * r_[2] + r_[3]
        elif kind == "round":
            t = [cast(cast(v, r_[1]), program.dtype) for v in t]
        elif kind in ("get", "allgather"):
            t = [t[(r + r_[1]) % P].clone() for r in range(P)]
        elif kind == "put":
            t = [t[(r - r_[1]) % P].clone() for r in range(P)]
        elif kind == "reduce_scatter":  # rank r gets the op over q of t[q] + r
            stacked = torch.stack(t)
            out = []
            for r in range(P):
                part = stacked + torch.tensor(r, dtype=dt)
                if r_[1] == "Sum":
                    out.append(sum_of(part))
                else:
                    out.append(part.max(0).values if r_[1] == "Max" else part.min(0).values)
            t = out
        elif kind == "reduce_to":
            total = sum_of(torch.stack(t))
            t = [total.clone() if r == r_[1] else v for r, v in enumerate(t)]
        elif kind == "allreduce":
            stacked = torch.stack(t)
            if r_[1] == "Sum":
                total = sum_of(stacked)
            elif r_[1] == "Max":
                total = stacked.max(0).values
            else:
                total = stacked.min(0).values
            t = [total.clone() for _ in range(P)]
        else:
            t = [t[r_[1]].clone() for _ in range(P)]
    return torch.stack(t).to(dt)


def inputs(program: Program, P: int) -> torch.Tensor:
    """The x a program runs on at P, seeded by P: floats uniform in
    [-0.5, 1.5), integers in [-100, 100)."""
    g = torch.Generator().manual_seed(P)
    shape = (P, program.rows, program.cols)
    if is_int(program.dtype):
        return torch.randint(-100, 100, shape, generator=g, dtype=TORCH[program.dtype])
    return (torch.rand(shape, generator=g) * 2 - 0.5).to(TORCH[program.dtype])


def difference(program: Program, y: torch.Tensor, want: torch.Tensor):
    """None when y is the reference's result (bit for bit, NaN where it has
    one; within 1e-5 when floating-point adds run in the algorithm's order),
    else what differs."""
    if program.exact():
        same = bool(((y == want) | (y.isnan() & want.isnan())).all())
    else:  # floating-point adds in another order: FP32 within 1e-5, 16-bit 1 %
        tol = 1e-5 if program.dtype == "FP32" else 1e-2
        scale = max(1.0, want.double().abs().max().item())
        same = torch.allclose(y.double(), want.double(), tol, tol * scale, equal_nan=True)
    if same:
        return None
    diff = (y.double() - want.double()).abs().max().item()
    return f"wrong result: max |y - reference| = {diff!r}"
