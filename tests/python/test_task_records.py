"""PyPTO's DFX switches on anyp: RunConfig(enable_dep_gen=True),
enable_scope_stats and enable_chip_swimlane write, after each run, per rank
r and its k-th dispatch, <output_dir>/dfx_outputs/rank<r>/d<k>/deps.json
(the dispatch's tasks, their bytes and dependencies),
scope_stats/scope_stats.jsonl and chip_swimlane_records.json. PyPTO's
per-rank program (one dispatch per rank, the switches given with the call)
at P = 2, 4, then anyp's own: three tasks of which one depends on another,
two dispatches per rank, at P = 1 ... 8."""

import json
import pathlib

import pytest
import torch

import anyp.language as pl
import anyp.language.distributed as pld
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

ROWS, COLS = 16, 32
ROW_BYTES = ROWS * COLS * 4


def add_one_program():
    @pl.program
    class PerRank:
        @pl.function(type=pl.FunctionType.InCore)
        def add_one(
            self,
            x: pl.Tensor[[ROWS, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            for row in pl.parallel(ROWS):
                y = pl.assemble(y, pl.add(pl.slice(x, [1, COLS], [row, 0]), 1.0), [row, 0])
            return y

        @pl.function(type=pl.FunctionType.Orchestration)
        def child(
            self,
            x: pl.Tensor[[ROWS, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]],
        ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
            y = self.add_one(x, y)  # the task
            return y

        @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
        def host_orch(
            self,
            x: pl.Tensor[[pl.dynamic("NR"), ROWS, COLS], pl.FP32],
            y: pl.Out[pl.Tensor[[pl.dynamic("NR"), ROWS, COLS], pl.FP32]],
        ):
            for r in pl.range(pld.world_size()):
                self.child(x[r], y[r], device=r)

    return PerRank


TASK_LINE = next(
    n
    for n, line in enumerate(pathlib.Path(__file__).read_text().splitlines(), 1)
    if line.endswith("# the task")
)


def run_add_one(nr, **switches):
    compiled = ir.compile(
        add_one_program(),
        platform="a2a3sim",
        distributed_config=DistributedConfig(device_ids=list(range(nr))),
    )
    x = torch.arange(nr * ROWS * COLS, dtype=torch.float32).reshape(nr, ROWS, COLS)
    y = torch.zeros_like(x)
    compiled(x, y, config=RunConfig(platform="a2a3sim", **switches))
    assert torch.equal(y, x + 1.0)
    return compiled


@pytest.mark.parametrize("nr", [2, 4])
def test_pyptos_per_rank_program_writes_each_dispatchs_records(nr):
    compiled = run_add_one(nr, enable_dep_gen=True, enable_scope_stats=True)
    assert isinstance(compiled.output_dir, pathlib.Path)
    base = compiled.output_dir / "dfx_outputs"
    assert sorted(p.name for p in base.iterdir()) == sorted(f"rank{r}" for r in range(nr))
    for r in range(nr):
        d0 = base / f"rank{r}" / "d0"
        assert sorted(p.name for p in d0.iterdir()) == ["deps.json", "scope_stats"]
        rows = [r * ROW_BYTES, (r + 1) * ROW_BYTES]
        assert json.loads((d0 / "deps.json").read_text()) == {
            "rank": r,
            "dispatch": 0,
            "function": "child",
            "tasks": [
                {
                    "id": 0,
                    "function": "add_one",
                    "called_at": f"test_task_records.py:{TASK_LINE}",
                    "reads": [{"memory": "host tensor 'x'", "bytes": rows}],
                    "writes": [{"memory": "host tensor 'y'", "bytes": rows}],
                    "deps": [],
                }
            ],
        }
        lines = (d0 / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()
        assert len(lines) == 1
        stats = json.loads(lines[0])
        assert {k: stats[k] for k in ("rank", "dispatch", "function", "scope", "tasks")} == {
            "rank": r,
            "dispatch": 0,
            "function": "child",
            "scope": "dispatch",
            "tasks": 1,
        }
        assert stats["dependencies"] == 0 and 0 <= stats["start_ns"] <= stats["end_ns"]


def test_the_swimlane_writes_its_records_and_the_task_graph():
    compiled = run_add_one(2, enable_chip_swimlane=True)
    for r in range(2):
        d0 = compiled.output_dir / "dfx_outputs" / f"rank{r}" / "d0"
        assert sorted(p.name for p in d0.iterdir()) == ["chip_swimlane_records.json", "deps.json"]
        lanes = json.loads((d0 / "chip_swimlane_records.json").read_text())
        [record] = lanes["records"]
        assert (record["id"], record["function"]) == (0, "add_one")
        assert 0 <= record["start_ns"] <= record["end_ns"]


def test_no_switch_writes_nothing(tmp_path):
    compiled = ir.compile(
        add_one_program(),
        platform="a2a3sim",
        distributed_config=DistributedConfig(device_ids=[0, 1]),
        output_dir=str(tmp_path),
    )
    x = torch.ones((2, ROWS, COLS))
    compiled(x, torch.zeros_like(x))
    assert not (tmp_path / "dfx_outputs").exists()


# anyp's own: per rank, b = 2a after a = x + 1 (b's task depends on a's),
# and c = 3x (no dependency), dispatched twice.
C = 8


@pl.jit.incore
def plus_one(x: pl.Tensor[[1, C], pl.FP32], a: pl.Out[pl.Tensor[[1, C], pl.FP32]]):
    a = pl.store(pl.add(pl.load(x, [0, 0], [1, C]), 1.0), [0, 0], a)


@pl.jit.incore
def twice(a: pl.Tensor[[1, C], pl.FP32], b: pl.Out[pl.Tensor[[1, C], pl.FP32]]):
    b = pl.store(pl.mul(pl.load(a, [0, 0], [1, C]), 2.0), [0, 0], b)


@pl.jit.incore
def thrice(x: pl.Tensor[[1, C], pl.FP32], c: pl.Out[pl.Tensor[[1, C], pl.FP32]]):
    c = pl.store(pl.mul(pl.load(x, [0, 0], [1, C]), 3.0), [0, 0], c)


@pl.jit
def three_tasks(
    x: pl.Tensor[[1, C], pl.FP32],
    a: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    b: pl.Out[pl.Tensor[[1, C], pl.FP32]],
    c: pl.Out[pl.Tensor[[1, C], pl.FP32]],
):
    plus_one(x, a)
    twice(a, b)
    thrice(x, c)


NR = pl.dynamic("NR")


@pl.jit.host
def twice_per_rank(
    x: pl.Tensor[[NR, 1, C], pl.FP32],
    a: pl.Out[pl.Tensor[[NR, 1, C], pl.FP32]],
    b: pl.Out[pl.Tensor[[NR, 1, C], pl.FP32]],
    c: pl.Out[pl.Tensor[[NR, 1, C], pl.FP32]],
):
    for r in pl.range(pld.world_size()):
        three_tasks(x[r], a[r], b[r], c[r], device=r)
    for r in pl.range(pld.world_size()):
        three_tasks(x[r], a[r], b[r], c[r], device=r)


@pytest.mark.parametrize("nr", [1, 2, 3, 5, 8])
def test_each_dispatch_lists_its_tasks_and_their_dependencies(nr, tmp_path):
    x = torch.arange(nr * C, dtype=torch.float32).reshape(nr, 1, C)
    a, b, c = torch.zeros_like(x), torch.zeros_like(x), torch.zeros_like(x)
    config = RunConfig(
        distributed_config=DistributedConfig(list(range(nr))),
        output_dir=str(tmp_path),
        enable_dep_gen=True,
    )
    twice_per_rank.compile(x, a, b, c, config=config)(x, a, b, c)
    assert torch.equal(b, 2 * (x + 1)) and torch.equal(c, 3 * x)
    for r in range(nr):
        for k in range(2):
            deps = json.loads(
                (tmp_path / "dfx_outputs" / f"rank{r}" / f"d{k}" / "deps.json").read_text()
            )
            assert (deps["rank"], deps["dispatch"], deps["function"]) == (r, k, "three_tasks")
            assert [(t["function"], t["deps"]) for t in deps["tasks"]] == [
                ("plus_one", []),
                ("twice", [0]),
                ("thrice", []),
            ]
        assert not (tmp_path / "dfx_outputs" / f"rank{r}" / "d2").exists()
