"""Every public op of pl and pld, called in a kernel with an argument of the
wrong kind (None, a string, an object, a float where an integer belongs, an
integer beyond 64 bits), ends in an anyp error that names the user's line
and speaks the program's words: no pybind11 cast or overload text, no bare
Python internals (`'NoneType' object is not iterable` is shown only behind
the op's name and its arguments). A program built for each case is written
to its own file, as a user's would be."""

import importlib.util
import re

import pytest
import torch

import anyp
from anyp import ir
from anyp.ir import DistributedConfig
from anyp.runtime import RunConfig

# Each op as the kernel writes it; BAD is the argument of the wrong kind.
OPS = [
    "pl.load(x, BAD, [1, 8])",
    "pl.load(x, [0, 0], BAD)",
    "pl.load(BAD, [0, 0], [1, 8])",
    "pl.store(t, BAD, y)",
    "pl.store(BAD, [0, 0], y)",
    "pl.store(t, [0, 0], BAD)",
    "pl.add(t, BAD)",
    "pl.exp(BAD)",
    "pl.row_sum(BAD)",
    "pl.cast(t, BAD)",
    "pl.full(BAD, pl.FP32, 0)",
    "pl.full([1, 8], BAD, 0)",
    "pl.full([1, 8], pl.FP32, BAD)",
    "pl.reshape(t, BAD)",
    "pl.transpose(t, BAD, 1)",
    "pl.slice(t, BAD, [0, 0])",
    "pl.read(x, BAD)",
    "pl.write(y, [0, 0], BAD)",
    "pld.system.notify(s, peer=BAD, offsets=[0, 0], value=1, op=pld.NotifyOp.AtomicAdd)",
    "pld.system.notify(s, peer=0, offsets=BAD, value=1, op=pld.NotifyOp.AtomicAdd)",
    "pld.system.notify(s, peer=0, offsets=[0, 0], value=BAD, op=pld.NotifyOp.AtomicAdd)",
    "pld.system.notify(s, peer=0, offsets=[0, 0], value=1, op=BAD)",
    "pld.system.wait(s, BAD, 1, pld.WaitCmp.Ge)",
    "pld.system.wait(s, [0, 0], BAD, pld.WaitCmp.Ge)",
    "pld.system.wait(s, [0, 0], 1, BAD)",
    "pld.tensor.put(w, peer=BAD, src=w)",
    "pld.tensor.put(BAD, peer=0, src=w)",
    "pld.tensor.get(w, peer=BAD, src=w)",
    "pld.tile.remote_load(w, BAD, [0, 0], [1, 8])",
    "pld.tile.remote_load(w, 0, BAD, [1, 8])",
    "pld.tile.remote_store(t, w, BAD, [0, 0])",
    "pld.get_comm_ctx(BAD)",
    "pld.rank(BAD)",
    "pl.matmul(t, BAD)",
    "pl.cmp(t, BAD)",
    "pl.concat(t, BAD)",
    "pl.arange(BAD, [1, 8])",
    "pl.zeros(BAD, pl.FP32)",
    "pl.array.create(BAD, pl.INT32)",
]
BAD = {"none": "None", "text": "'x'", "object": "object()", "float": "1.5", "huge": "10**20"}

PROGRAM = """
import anyp.language as pl
import anyp.language.distributed as pld

NR = pl.dynamic("NR")


@pl.program
class Case:
    @pl.function(type=pl.FunctionType.InCore)
    def k(
        self,
        x: pl.Tensor[[1, 8], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        w: pl.InOut[pld.DistributedTensor[[NR, 8], pl.FP32]],
        s: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        t = pl.load(x, [0, 0], [1, 8])
        r = {op}
        pl.store(t, [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def o(
        self,
        x: pl.Tensor[[1, 8], pl.FP32],
        y: pl.Out[pl.Tensor[[1, 8], pl.FP32]],
        w: pl.InOut[pld.DistributedTensor[[NR, 8], pl.FP32]],
        s: pl.InOut[pld.DistributedTensor[[NR, 1], pl.INT32]],
    ):
        self.k(x, y, w, s)

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def host(self, x: pl.Tensor[[NR, 1, 8], pl.FP32], y: pl.Out[pl.Tensor[[NR, 1, 8], pl.FP32]]):
        wb = pld.alloc_window_buffer(NR * 8 * 4)
        sb = pld.alloc_window_buffer(NR * 4)
        for r in pl.range(pld.world_size()):
            w = pld.window(wb, [NR, 8], dtype=pl.FP32)
            s = pld.window(sb, [NR, 1], dtype=pl.INT32)
            self.o(x[r], y[r], w, s, device=r)
"""

# The line of the op (its statement) in the written file.
OP_LINE = next(i for i, text in enumerate(PROGRAM.splitlines(), 1) if "r = {op}" in text)
INTERNALS = re.compile(
    r"Unable to cast|incompatible function arguments|PYBIND11|anyp\._core\.|arg0|"
    r"^(TypeError|AttributeError): '?\w+'? object"
)


def _case(tmp_path, op, bad):
    path = tmp_path / "user_program.py"
    path.write_text(PROGRAM.replace("{op}", op.replace("BAD", bad)))
    spec = importlib.util.spec_from_file_location("user_program", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Case


@pytest.mark.parametrize("bad", list(BAD))
@pytest.mark.parametrize("op", OPS)
def test_a_wrong_argument_is_an_anyp_error_at_the_users_line(tmp_path, op, bad):
    program = _case(tmp_path, op, BAD[bad])
    config = RunConfig(distributed_config=DistributedConfig([0, 1]))
    try:
        ir.compile(program, config=config)(torch.ones(2, 1, 8), torch.zeros(2, 1, 8))
    except anyp.Error as e:
        message = str(e)
        place = f"user_program.py:{OP_LINE}"
        assert place in message, message  # the op's line
        text = message.splitlines()[0].split(place + ": ", 1)[-1]
        assert not INTERNALS.search(text), message
    # Some of these are programs anyp runs (a float where a float may be,
    # a list that happens to fit): what matters is that nothing else escapes.
