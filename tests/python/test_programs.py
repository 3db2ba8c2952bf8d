"""@pl.program forms without a host function: PyPTO's L2 programs. One
orchestration function runs on device 0 when called; several are compiled
together and each is selected by name (compiled["name"] or compiled.name),
run on device 0 alone, its artifact under <output_dir>/next_levels/<name>/.
The refusals name what to do."""

import pathlib

import pytest
import torch

import anyp.language as pl
from anyp import ir

N = 32


@pl.program
class AddAndSub:
    @pl.function(type=pl.FunctionType.InCore)
    def tile_add(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        b: pl.Tensor[[N, N], pl.FP32],
        f: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        return pl.store(pl.add(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.InCore)
    def tile_sub(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        b: pl.Tensor[[N, N], pl.FP32],
        f: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        return pl.store(pl.sub(pl.load(a, [0, 0], [N, N]), pl.load(b, [0, 0], [N, N])), [0, 0], f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch_add(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        b: pl.Tensor[[N, N], pl.FP32],
        f: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        return self.tile_add(a, b, f)

    @pl.function(type=pl.FunctionType.Orchestration)
    def chip_orch_sub(
        self,
        a: pl.Tensor[[N, N], pl.FP32],
        b: pl.Tensor[[N, N], pl.FP32],
        f: pl.Out[pl.Tensor[[N, N], pl.FP32]],
    ) -> pl.Tensor[[N, N], pl.FP32]:
        return self.tile_sub(a, b, f)


def operands():
    a = torch.arange(N * N, dtype=torch.float32).reshape(N, N)
    return a, torch.full((N, N), 3.0), torch.zeros(N, N)


def test_each_orchestration_runs_on_device_zero_by_name(tmp_path):
    compiled = ir.compile(AddAndSub, platform="a2a3sim", output_dir=str(tmp_path))
    assert compiled.orchestration_names == ["chip_orch_add", "chip_orch_sub"]
    a, b, f = operands()
    compiled["chip_orch_add"](a, b, f)
    assert torch.equal(f, a + b)
    compiled.chip_orch_sub(a, b, f)
    assert torch.equal(f, a - b)
    selected = compiled["chip_orch_sub"]
    assert (selected.name, selected.param_names) == ("chip_orch_sub", ["a", "b", "f"])
    assert selected is compiled.chip_orch_sub
    assert selected.output_dir == pathlib.Path(tmp_path) / "next_levels" / "chip_orch_sub"
    for name in compiled.orchestration_names:  # each wrote its artifact there
        assert (pathlib.Path(tmp_path) / "next_levels" / name).is_dir(), name


def test_without_an_output_dir_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # it once wrote next_levels/<name>/ into the working folder
    compiled = ir.compile(AddAndSub, platform="a2a3sim")
    a, b, f = operands()
    compiled["chip_orch_add"](a, b, f)
    assert torch.equal(f, a + b)
    assert list(tmp_path.iterdir()) == []


def test_an_unselected_call_and_unknown_names_are_refused():
    compiled = ir.compile(AddAndSub, platform="a2a3sim")
    a, b, f = operands()
    ambiguous = (
        "@pl.program 'AddAndSub' has 2 orchestration functions (chip_orch_add, chip_orch_sub) "
        "and no host: select one explicitly, compiled['chip_orch_add'](...)"
    )
    with pytest.raises(TypeError) as e:
        compiled(a, b, f)
    assert str(e.value) == ambiguous
    with pytest.raises(TypeError) as e:
        AddAndSub.compile(a, b, f)
    assert str(e.value) == ambiguous
    with pytest.raises(KeyError) as e:
        compiled["chip_orch_missing"]
    assert e.value.args[0] == (
        "no orchestration function 'chip_orch_missing' in @pl.program 'AddAndSub'; it has "
        "chip_orch_add, chip_orch_sub"
    )
    with pytest.raises(AttributeError) as e:
        compiled.definitely_not_an_orch
    assert str(e.value) == "'CompiledProgram' object has no attribute 'definitely_not_an_orch'"
