// vm_opcodes.hpp — the rank VM's instruction set, drawn once: every opcode
// with its listing name, its traits and its one-line meaning. The Opcode
// enum, the names in lowered.txt, opcode_meaning() (pinned by
// tests/unit/vm_code_test.cpp) and opcode_traits() all come from this list.
//
// Operand fields of an instruction: dst/a/b/c are register numbers (scalar
// s, tile t or view v, by opcode), idx a list of scalar registers (offsets),
// shape static extents, sub an enum payload (ir/op_attrs.hpp), imm/fimm
// immediates, count a small count.
#pragma once

// The traits column: what passes and the VM ask of an opcode.
//   kVisible   a visible op (a data access, a notify, a satisfied wait, a
//              block launch or join): under PCT the agent yields after it
//   kJump      imm is a pc (a jump target)
//   kDataA/B/C register a/b/c is a view the op reads or writes as data
//   kDataCView c is such a view when count == 0 (else a scalar)
//   kSignalA   register a is a signal view (notify, wait)
//   kViewOfA   dst is a view derived from view a (a copy or a slice of it)
#define ANYP_VM_OPCODE_TRAITS(X) \
  X(kVisible, 1u)                \
  X(kJump, 2u)                   \
  X(kDataA, 4u)                  \
  X(kDataB, 8u)                  \
  X(kDataC, 16u)                 \
  X(kDataCView, 32u)             \
  X(kSignalA, 64u)               \
  X(kViewOfA, 128u)

#define ANYP_VM_OPCODES(X)                                                                         \
  X(Const, "const", 0, "s[dst] = imm, or fimm when is_float (the constant pool)")                  \
  X(Mov, "mov", 0, "s[dst] = s[a]")                                                                \
  X(MovTile, "mov.tile", 0, "t[dst] = t[a]")                                                       \
  X(MovView, "mov.view", kViewOfA, "v[dst] = v[a]")                                                \
  X(ScalarBin, "scalar", 0, "s[dst] = s[a] <sub: BinaryOp> s[b], wrapped or rounded to dtype")     \
  X(ScalarNot, "not", 0, "s[dst] = !s[a]")                                                         \
  X(ScalarCast, "cast", 0, "s[dst] = s[a] converted to dtype")                                     \
  X(Jump, "jump", kJump, "pc = imm")                                                               \
  X(JumpIfZero, "jump.zero", kJump, "if s[a] == 0: pc = imm")                                      \
  X(JumpIfGe, "jump.ge", kJump, "if s[a] >= s[b]: pc = imm")                                       \
  X(Load, "load", kVisible | kDataA, "t[dst] = region idx/shape of this rank's view v[a]")         \
  X(Store, "store", kVisible | kDataB, "region idx of this rank's view v[b] = t[a]")               \
  X(Read, "read", kVisible | kDataA, "s[dst] = cell idx of this rank's view v[a]")                 \
  X(Write, "write", kVisible | kDataA, "cell idx of this rank's view v[a] = s[b]")                 \
  X(TileBin, "tile", 0, "t[dst] = t[a] <sub: BinaryOp> (t[b], or s[b] when count == 1)")           \
  X(TileCast, "cast.tile", 0, "t[dst] = t[a] converted to dtype")                                  \
  X(FullTile, "full.tile", 0, "t[dst] = tile of dtype and shape, every element s[a] converted")    \
  X(ReshapeTile, "reshape.tile", 0, "t[dst] = t[a] seen with shape (same elements and dtype)")     \
  X(TileUnary, "unary.tile", 0, "t[dst] = <sub: UnaryOp> t[a]")                                    \
  X(TileCmp, "cmp.tile", 0,                                                                        \
    "t[dst] = 1 / 0 where t[a] <sub: CmpKind> (t[b], or s[b] when count == 1); dtype: the mask's") \
  X(Select, "sel.tile", 0, "t[dst] = t[b] where t[a] != 0, else t[c]")                             \
  X(TileReduce, "reduce.tile", 0,                                                                  \
    "t[dst] = <sub: ReduceKind> of t[a] along each row (count 1) or column (count 0)")             \
  X(TileExpand, "expand.tile", 0,                                                                  \
    "t[dst] = t[a] <sub: ExpandKind> t[b] broadcast along rows (count 1) or columns (count 0)")    \
  X(Matmul, "matmul", 0,                                                                           \
    "t[dst] = init + t[a] @ t[b] in dtype (the accumulator); sub: MatmulInit, init t[c]")          \
  X(Transpose, "transpose.tile", 0, "t[dst] = t[a] with dims imm and count swapped")               \
  X(SliceTile, "slice.tile", 0, "t[dst] = region idx/shape of t[a]")                               \
  X(ConcatTile, "concat.tile", 0, "t[dst] = t[a]'s columns, then t[b]'s")                          \
  X(Arange, "arange.tile", 0,                                                                      \
    "t[dst] = tile of dtype and shape, element i = s[a] + i (s[a] - i when imm is 1)")             \
  X(BlockLaunch, "block.launch", kVisible,                                                         \
    "start blocks 1 .. imm - 1 of this rank at the next instruction, each with a copy of this "    \
    "block's registers; this block is block 0 of the launch")                                      \
  X(BlockEnd, "block.end", kVisible,                                                               \
    "the end of a launch: a block other than 0 finishes; block 0 waits until they all have")       \
  X(BlockIdx, "block.idx", 0, "s[dst] = this block's index in its launch (0 outside a launch)")    \
  X(BlockNum, "block.num", 0, "s[dst] = its launch's block count (1 outside a launch)")            \
  X(Rank, "rank", 0,                                                                               \
    "s[dst] = this rank (its index in v[a]'s group when a >= 0 names a group view)")               \
  X(NRanks, "nranks", 0, "s[dst] = P (v[a]'s group size when a >= 0 names a group view)")          \
  X(Notify, "notify", kVisible | kSignalA,                                                         \
    "cell idx of peer s[b]'s signal v[a] <sub: NotifyKind> s[c]")                                  \
  X(Wait, "wait", kVisible | kSignalA,                                                             \
    "until cell idx of this rank's signal v[a] <sub: WaitKind> s[b]; else park")                   \
  X(Put, "put", kVisible | kDataA | kDataC,                                                        \
    "peer s[b]'s v[a] = local v[c]; idx: count dst offsets, then src offsets; "                    \
    "shape: region (empty: whole); sub: AtomicKind")                                               \
  X(Get, "get", kVisible | kDataA | kDataC, "local v[a] = peer s[b]'s v[c]; operands as put")      \
  X(PutAsync, "put.async", kDataA | kDataC,                                                        \
    "s[dst] = an event; the put (operands as put) completes at its wait.async")                    \
  X(WaitAsync, "wait.async", kVisible, "complete the put.async of event s[a]")                     \
  X(CheckAsync, "check.async", 0,                                                                  \
    "fail if a put.async is in flight (the end of a kernel that has one)")                         \
  X(RemoteLoad, "remote_load", kVisible | kDataA,                                                  \
    "t[dst] = region idx/shape of peer s[b]'s view v[a]")                                          \
  X(RemoteStore, "remote_store", kVisible | kDataA,                                                \
    "region idx of peer s[b]'s view v[a] = t[c]; sub: AtomicKind")                                 \
  X(LoadFlat, "load.flat", kVisible | kDataA,                                                      \
    "t[dst] = 1-D tile of rank s[b]'s v[a], elements [s[idx0], +s[idx1])")                         \
  X(StoreFlat, "store.flat", kVisible | kDataA, "rank s[b]'s v[a] from element s[idx0] = t[c]")    \
  X(PutFlat, "put.flat", kVisible | kDataA | kDataC,                                               \
    "peer s[b]'s v[a] from element s[idx0] = local v[c] elements [s[idx1], +s[idx2])")             \
  X(SliceView, "slice.view", kViewOfA,                                                             \
    "v[dst] = the part [s[idx], + shape) of view v[a] (pl::tensor::slice)")                        \
  X(CreateView, "create.view", kVisible,                                                           \
    "v[dst] = window buffer imm (slot: this block when count > 1), shape, dtype; zeroed unless "   \
    "sub is 1 (a builtin's scratch, written before it is read); peers are v[a]'s group's when "    \
    "a >= 0")                                                                                      \
  X(CopyView, "copy.view", kVisible | kDataA | kDataB,                                             \
    "this rank's v[a] = v[b], converted to v[a]'s dtype (pl::tensor::copy)")                       \
  X(TensorBin, "tensor.bin", kVisible | kDataA | kDataB | kDataCView,                              \
    "this rank's v[a] = v[b] <sub: BinaryOp> v[c] (count 0) or s[c] (count 1)")                    \
  X(CheckCount, "check.count", 0, "fail unless 0 <= s[a] <= s[b] (all_to_all_v send counts)")      \
  X(CheckStep, "check.step", 0, "fail if s[a] == 0 (a pl.range step read at run time)")            \
  X(LoopStep, "loop.step", kJump,                                                                  \
    "s[a] = s[a] + s[b] in INT64; if that overflows: pc = imm (the loop's exit), s[a] unchanged")  \
  X(Collective, "collective", 0,                                                                   \
    "entry of builtin collective imm (code.collectives[imm]): its windows must be distinct "       \
    "buffers, and every rank's n-th call on signal v[a] must be the same call")                    \
  X(HostWorker, "host.worker", kVisible,                                                           \
    "run host worker imm (code.host_workers[imm]) on copies of host views idx, then write back "   \
    "those it may write")                                                                          \
  X(Task, "task", 0,                                                                               \
    "a task (an orchestration function's call of an incore function, the site's function) "        \
    "begins (sub 0) or ends (sub 1); only the observers hear of it")
