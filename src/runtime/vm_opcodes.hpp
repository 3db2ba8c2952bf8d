// vm_opcodes.hpp — the rank VM's instruction set, drawn once: every opcode
// with its listing name and its one-line meaning. The Opcode enum, the names
// in lowered.txt and opcode_meaning() (pinned by tests/unit/vm_code_test.cpp)
// all come from this list.
//
// Operand fields of an instruction: dst/a/b/c are register numbers (scalar
// s, tile t or view v, by opcode), idx a list of scalar registers (offsets),
// shape static extents, sub an enum payload (ir/op_attrs.hpp), imm/fimm
// immediates, count a small count.
#pragma once

#define ANYP_VM_OPCODES(X)                                                                         \
  X(Const, "const", "s[dst] = imm, or fimm when is_float (the constant pool)")                     \
  X(Mov, "mov", "s[dst] = s[a]")                                                                   \
  X(MovTile, "mov.tile", "t[dst] = t[a]")                                                          \
  X(MovView, "mov.view", "v[dst] = v[a]")                                                          \
  X(ScalarBin, "scalar", "s[dst] = s[a] <sub: BinaryOp> s[b], wrapped or rounded to dtype")        \
  X(ScalarNot, "not", "s[dst] = !s[a]")                                                            \
  X(ScalarCast, "cast", "s[dst] = s[a] converted to dtype")                                        \
  X(Jump, "jump", "pc = imm")                                                                      \
  X(JumpIfZero, "jump.zero", "if s[a] == 0: pc = imm")                                             \
  X(JumpIfGe, "jump.ge", "if s[a] >= s[b]: pc = imm")                                              \
  X(Load, "load", "t[dst] = region idx/shape of this rank's view v[a]")                            \
  X(Store, "store", "region idx of this rank's view v[b] = t[a]")                                  \
  X(Read, "read", "s[dst] = cell idx of this rank's view v[a]")                                    \
  X(Write, "write", "cell idx of this rank's view v[a] = s[b]")                                    \
  X(TileBin, "tile", "t[dst] = t[a] <sub: BinaryOp> (t[b], or s[b] when count == 1)")              \
  X(TileCast, "cast.tile", "t[dst] = t[a] converted to dtype")                                     \
  X(FullTile, "full.tile", "t[dst] = tile of dtype and shape, every element s[a] converted")       \
  X(ReshapeTile, "reshape.tile", "t[dst] = t[a] seen with shape (same elements and dtype)")        \
  X(TileUnary, "unary.tile", "t[dst] = <sub: UnaryOp> t[a]")                                       \
  X(TileCmp, "cmp.tile",                                                                           \
    "t[dst] = 1 / 0 where t[a] <sub: CmpKind> (t[b], or s[b] when count == 1); dtype: the mask's") \
  X(Select, "sel.tile", "t[dst] = t[b] where t[a] != 0, else t[c]")                                \
  X(TileReduce, "reduce.tile",                                                                     \
    "t[dst] = <sub: ReduceKind> of t[a] along each row (count 1) or column (count 0)")             \
  X(TileExpand, "expand.tile",                                                                     \
    "t[dst] = t[a] <sub: ExpandKind> t[b] broadcast along rows (count 1) or columns (count 0)")    \
  X(Matmul, "matmul",                                                                              \
    "t[dst] = init + t[a] @ t[b] in dtype (the accumulator); sub: MatmulInit, init t[c]")          \
  X(Transpose, "transpose.tile", "t[dst] = t[a] with dims imm and count swapped")                  \
  X(SliceTile, "slice.tile", "t[dst] = region idx/shape of t[a]")                                  \
  X(ConcatTile, "concat.tile", "t[dst] = t[a]'s columns, then t[b]'s")                             \
  X(Arange, "arange.tile",                                                                         \
    "t[dst] = tile of dtype and shape, element i = s[a] + i (s[a] - i when imm is 1)")             \
  X(BlockLaunch, "block.launch",                                                                   \
    "start blocks 1 .. imm - 1 of this rank at the next instruction, each with a copy of this "    \
    "block's registers; this block is block 0 of the launch")                                      \
  X(BlockEnd, "block.end",                                                                         \
    "the end of a launch: a block other than 0 finishes; block 0 waits until they all have")       \
  X(BlockIdx, "block.idx", "s[dst] = this block's index in its launch (0 outside a launch)")       \
  X(BlockNum, "block.num", "s[dst] = its launch's block count (1 outside a launch)")               \
  X(Rank, "rank", "s[dst] = this rank (its index in v[a]'s group when a >= 0 names a group view)") \
  X(NRanks, "nranks", "s[dst] = P (v[a]'s group size when a >= 0 names a group view)")             \
  X(Notify, "notify", "cell idx of peer s[b]'s signal v[a] <sub: NotifyKind> s[c]")                \
  X(Wait, "wait", "until cell idx of this rank's signal v[a] <sub: WaitKind> s[b]; else park")     \
  X(Put, "put",                                                                                    \
    "peer s[b]'s v[a] = local v[c]; idx: count dst offsets, then src offsets; "                    \
    "shape: region (empty: whole); sub: AtomicKind")                                               \
  X(Get, "get", "local v[a] = peer s[b]'s v[c]; operands as put")                                  \
  X(PutAsync, "put.async",                                                                         \
    "s[dst] = an event; the put (operands as put) completes at its wait.async")                    \
  X(WaitAsync, "wait.async", "complete the put.async of event s[a]")                               \
  X(CheckAsync, "check.async",                                                                     \
    "fail if a put.async is in flight (the end of a kernel that has one)")                         \
  X(RemoteLoad, "remote_load", "t[dst] = region idx/shape of peer s[b]'s view v[a]")               \
  X(RemoteStore, "remote_store", "region idx of peer s[b]'s view v[a] = t[c]; sub: AtomicKind")    \
  X(LoadFlat, "load.flat", "t[dst] = 1-D tile of rank s[b]'s v[a], elements [s[idx0], +s[idx1])")  \
  X(StoreFlat, "store.flat", "rank s[b]'s v[a] from element s[idx0] = t[c]")                       \
  X(PutFlat, "put.flat",                                                                           \
    "peer s[b]'s v[a] from element s[idx0] = local v[c] elements [s[idx1], +s[idx2])")             \
  X(SliceView, "slice.view",                                                                       \
    "v[dst] = the part [s[idx], + shape) of view v[a] (pl::tensor::slice)")                        \
  X(CopyView, "copy.view",                                                                         \
    "this rank's v[a] = v[b], converted to v[a]'s dtype (pl::tensor::copy)")                       \
  X(TensorBin, "tensor.bin",                                                                       \
    "this rank's v[a] = v[b] <sub: BinaryOp> v[c] (count 0) or s[c] (count 1)")                    \
  X(CheckCount, "check.count", "fail unless 0 <= s[a] <= s[b] (all_to_all_v send counts)")         \
  X(CheckStep, "check.step", "fail if s[a] == 0 (a pl.range step read at run time)")               \
  X(LoopStep, "loop.step",                                                                         \
    "s[a] = s[a] + s[b] in INT64; if that overflows: pc = imm (the loop's exit), s[a] unchanged")  \
  X(Collective, "collective",                                                                      \
    "entry of builtin collective imm (code.collectives[imm]): its windows must be distinct "       \
    "buffers, and every rank's n-th call on signal v[a] must be the same call")
