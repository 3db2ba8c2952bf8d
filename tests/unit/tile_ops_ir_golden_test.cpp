// tile_ops_ir_golden_test.cpp — golden texts of the tile compute ops
// (issue 11): the symbolic IR of one kernel that uses each family (matmul
// and its acc/bias forms, reductions, broadcasts, exp, cmp/sel, transpose,
// slice, concat, arange, shl), with NR in its shapes; and its lowered code at
// P = 2, where NR * 8 is 16. Every handle that is a call argument is bound
// first (C++ leaves argument evaluation order unspecified).
//
// Reviewed by hand: result shapes ([8, 1] row reductions, [1, 16] column
// reductions, the transposed [16, 8]), the cmp mask's INT32 dtype, the
// accumulator first in matmul_acc and the bias last in matmul_bias, and one
// VM instruction per op with its enum payload (sub) and shape.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <string>

namespace {

const pl::Dim NR = pl::dynamic("NR");

const pl::Function& compute_kernel() {
  static const pl::Function k = pl::jit::incore(
      "compute",
      {pl::In("a", pl::Tensor({8, NR * 8}, pl::FP32)),
       pl::In("b", pl::Tensor({NR * 8, 16}, pl::FP32)),
       pl::Out("y", pl::Tensor({8, 16}, pl::FP32))},
      [](pl::Value a, pl::Value b, pl::Value y) {
        const pl::Tile ta = pl::load(a, {0, 0}, {8, NR * 8});
        const pl::Tile tb = pl::load(b, {0, 0}, {NR * 8, 16});
        pl::Tile c = pl::matmul(ta, tb);
        c = pl::matmul_acc(c, ta, tb);
        const pl::Tile bias = pl::slice(c, {1, 16}, {0, 0});
        c = pl::matmul_bias(ta, tb, bias);
        const pl::Tile mx = pl::row_max(c);
        pl::Tile e = pl::exp(pl::row_expand_sub(c, mx));
        const pl::Tile sum = pl::row_sum(e);
        e = pl::row_expand_div(e, sum);
        const pl::Tile mask = pl::cmp(e, 0.5, pl::GT);
        const pl::Tile negated = pl::neg(e);
        e = pl::sel(mask, e, negated);
        const pl::Tile t = pl::transpose(e);
        const pl::Tile top = pl::slice(t, {8, 8}, {0, 0});
        const pl::Tile bottom = pl::slice(t, {8, 8}, {8, 0});
        const pl::Tile cat = pl::concat(top, bottom);
        const pl::Tile ramp = pl::shl(pl::arange(0, {1, 8}, pl::INT32, true), 2);
        (void)ramp;
        const pl::Tile cols = pl::col_max(c);
        y = pl::store(pl::col_expand_mul(pl::reshape(cat, {8, 16}), cols), {0, 0}, y);
      });
  return k;
}

const char* const kSymbolic =
    R"(incore compute(%a: Tensor[8, NR * 8] FP32 in, %b: Tensor[NR * 8, 16] FP32 in, %y: Tensor[8, 16] FP32 out) {
  %3 = pl.load %a[0, 0] [8, NR * 8] : Tile[8, NR * 8] FP32
  %4 = pl.load %b[0, 0] [NR * 8, 16] : Tile[NR * 8, 16] FP32
  %5 = pl.matmul %3, %4 : Tile[8, 16] FP32
  %6 = pl.matmul_acc %5, %3, %4 : Tile[8, 16] FP32
  %5 = %6
  %7 = pl.slice %5[0, 0] [1, 16] : Tile[1, 16] FP32
  %8 = pl.matmul_bias %3, %4, %7 : Tile[8, 16] FP32
  %5 = %8
  %9 = pl.row_max %5 : Tile[8, 1] FP32
  %10 = pl.row_expand_sub %5, %9 : Tile[8, 16] FP32
  %11 = pl.exp %10 : Tile[8, 16] FP32
  %12 = pl.row_sum %11 : Tile[8, 1] FP32
  %13 = pl.row_expand_div %11, %12 : Tile[8, 16] FP32
  %11 = %13
  %14 = pl.cmp %11, 0.5 GT : Tile[8, 16] INT32
  %15 = pl.neg %11 : Tile[8, 16] FP32
  %16 = pl.sel %14, %11, %15 : Tile[8, 16] FP32
  %11 = %16
  %17 = pl.transpose %11 axes=0,1 : Tile[16, 8] FP32
  %18 = pl.slice %17[0, 0] [8, 8] : Tile[8, 8] FP32
  %19 = pl.slice %17[8, 0] [8, 8] : Tile[8, 8] FP32
  %20 = pl.concat %18, %19 : Tile[8, 16] FP32
  %21 = pl.arange 0 descending [1, 8] : Tile[1, 8] INT32
  %22 = pl.shl %21, 2 : Tile[1, 8] INT32
  %23 = pl.col_max %5 : Tile[1, 16] FP32
  %24 = pl.reshape %20 [8, 16] : Tile[8, 16] FP32
  %25 = pl.col_expand_mul %24, %23 : Tile[8, 16] FP32
  %y = pl.store %25 -> %y[0, 0]
}
)";

const char* const kLoweredAtP2 = R"(code per_rank: 33 instructions, registers s4 t23 v6
  params: v0 v1 v2
  const const dst=0 imm=0
  const const dst=1 imm=0.500000
  const const dst=2 imm=8
  const const dst=3 imm=2
  0: mov.view dst=3 a=0    ; per_rank: call @compute
  1: mov.view dst=4 a=1    ; per_rank: call @compute
  2: mov.view dst=5 a=2    ; per_rank: call @compute
  3: task    ; compute: call @compute
  4: load dst=0 a=3 idx=[0,0] shape=[8,16]    ; compute: pl.load
  5: load dst=1 a=4 idx=[0,0] shape=[16,16]    ; compute: pl.load
  6: matmul dst=2 a=0 b=1 dtype=FP32    ; compute: pl.matmul
  7: matmul dst=3 a=0 b=1 c=2 sub=1 dtype=FP32    ; compute: pl.matmul_acc
  8: mov.tile dst=2 a=3    ; compute: assign
  9: slice.tile dst=4 a=2 idx=[0,0] shape=[1,16]    ; compute: pl.slice
  10: matmul dst=5 a=0 b=1 c=4 sub=2 dtype=FP32    ; compute: pl.matmul_bias
  11: mov.tile dst=2 a=5    ; compute: assign
  12: reduce.tile dst=6 a=2 sub=1 count=1    ; compute: pl.row_max
  13: expand.tile dst=7 a=2 b=6 sub=2 count=1    ; compute: pl.row_expand_sub
  14: unary.tile dst=8 a=7 sub=3    ; compute: pl.exp
  15: reduce.tile dst=9 a=8 count=1    ; compute: pl.row_sum
  16: expand.tile dst=10 a=8 b=9 sub=4 count=1    ; compute: pl.row_expand_div
  17: mov.tile dst=8 a=10    ; compute: assign
  18: cmp.tile dst=11 a=8 b=1 sub=4 count=1 dtype=INT32    ; compute: pl.cmp
  19: unary.tile dst=12 a=8    ; compute: pl.neg
  20: sel.tile dst=13 a=11 b=8 c=12    ; compute: pl.sel
  21: mov.tile dst=8 a=13    ; compute: assign
  22: transpose.tile dst=14 a=8 count=1    ; compute: pl.transpose
  23: slice.tile dst=15 a=14 idx=[0,0] shape=[8,8]    ; compute: pl.slice
  24: slice.tile dst=16 a=14 idx=[2,0] shape=[8,8]    ; compute: pl.slice
  25: concat.tile dst=17 a=15 b=16    ; compute: pl.concat
  26: arange.tile dst=18 a=0 shape=[1,8] imm=1 dtype=INT32    ; compute: pl.arange
  27: tile dst=19 a=18 b=3 sub=18 count=1    ; compute: pl.shl
  28: reduce.tile dst=20 a=2 sub=1    ; compute: pl.col_max
  29: reshape.tile dst=21 a=17 shape=[8,16]    ; compute: pl.reshape
  30: expand.tile dst=22 a=21 b=20 sub=3    ; compute: pl.col_expand_mul
  31: store a=22 b=5 idx=[0,0]    ; compute: pl.store
  32: task sub=1    ; compute: call @compute

dispatch list:
  rank 0 (device 0): per_rank(a+0B, b+0B, y+0B)
  rank 1 (device 1): per_rank(a+512B, b+1024B, y+512B)
)";

TEST(TileOpsIrGolden, SymbolicIr) { EXPECT_EQ(compute_kernel().ir_text(), kSymbolic); }

TEST(TileOpsIrGolden, LoweredCodeAtP2) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", compute_kernel());
  const pl::HostFunction host = pl::jit::host("host",
                                              {pl::In("a", pl::Tensor({NR, 8, NR * 8}, pl::FP32)),
                                               pl::In("b", pl::Tensor({NR, NR * 8, 16}, pl::FP32)),
                                               pl::Out("y", pl::Tensor({NR, 8, 16}, pl::FP32))},
                                              [per_rank](pl::Value a, pl::Value b, pl::Value y) {
                                                pl::range(pld::world_size(), [&](pl::Scalar r) {
                                                  const pl::Value ar = a[r], br = b[r], yr = y[r];
                                                  per_rank(ar, br, yr, pl::device(r));
                                                });
                                              });
  anyp::HostTensor a = anyp::HostTensor::zeros({2, 8, 16}, pl::FP32);
  anyp::HostTensor b = anyp::HostTensor::zeros({2, 16, 16}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({2, 8, 16}, pl::FP32);
  const anyp::CompiledProgram compiled =
      host.compile({a, b, y}, anyp::RunConfig::for_world_size(2));
  EXPECT_EQ(compiled.lowered_code(), kLoweredAtP2);
}

}  // namespace
