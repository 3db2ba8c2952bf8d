// ir_golden_test.cpp — golden texts of the compiler's views of step 07 (the
// seed): the symbolic IR (`ir_text()`), the IR specialised for P = 3 and the
// symmetric window layout; plus a small program whose window and tile shapes
// depend on NR, to pin how specialisation resolves them.
//
// Each expected text was reviewed by hand against the algorithm of steps 06/07:
// get: store src, notify left (r + P - 1) % P, wait Ge 1, get from right
// (r + 1) % P; put: store src, put into right, notify right, wait Ge 1.
// Windows are laid out in allocation order in 32-byte slots.
//
// The kernels are copies of examples/distributed/07_dynamic_rank_count.cpp.
// One deliberate difference: the host binds x[r] and y[r] to named handles
// before the dispatch. In the example they are call arguments, whose
// evaluation order C++ leaves unspecified (GCC traces y[r] first, Clang x[r]),
// so the example's IR numbering differs between compilers.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "support/step07_program.hpp"

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

anyp::CompiledProgram compile_at(const pl::HostFunction& fn, std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  return fn.compile({x, y}, anyp::RunConfig::for_world_size(P));
}

// ---- goldens ---------------------------------------------------------------------------

const char* const kRingGetSymbolic =
    R"(host ring_get(%x: Tensor[NR, 1, 64] FP32 in, %y: Tensor[NR, 1, 64] FP32 out) {
  %2 = pld.alloc_window_buffer "src_buf" [1, 64] FP32
  %3 = pld.alloc_window_buffer "dst_buf" [1, 64] FP32
  %4 = pld.alloc_window_buffer "signal_buf" [1, 1] INT32
  pld.world_size
  for %5 in range(0, world_size) {
    %6 = pld.window %2 [1, 64] FP32
    %7 = pld.window %3 [1, 64] FP32
    %8 = pld.window %4 [1, 1] INT32
    %9 = %x[%5] : Tensor[1, 64] FP32
    %10 = %y[%5] : Tensor[1, 64] FP32
    call @per_rank_get(%9, %10, %6, %7, %8) device=%5
  }
}

orchestration per_rank_get(%x: Tensor[1, 64] FP32 in, %y: Tensor[1, 64] FP32 out, %src: DistributedTensor[1, 64] FP32 inout, %dst: DistributedTensor[1, 64] FP32 inout, %signal: DistributedTensor[1, 1] INT32 inout) {
  call @get_step(%x, %y, %src, %dst, %signal)
}

incore get_step(%x: Tensor[1, 64] FP32 in, %y: Tensor[1, 64] FP32 out, %src: DistributedTensor[1, 64] FP32 inout, %dst: DistributedTensor[1, 64] FP32 inout, %signal: DistributedTensor[1, 1] INT32 inout) {
  %5 = pld.get_comm_ctx %src
  %6 = pld.rank %5 : Scalar INT32
  %7 = pld.nranks %5 : Scalar INT32
  %8 = add %6, %7 : Scalar INT32
  %9 = sub %8, 1 : Scalar INT32
  %10 = mod %9, %7 : Scalar INT32
  %11 = add %6, 1 : Scalar INT32
  %12 = mod %11, %7 : Scalar INT32
  %13 = pl.load %x[0, 0] [1, 64] : Tile[1, 64] FP32
  %src = pl.store %13 -> %src[0, 0]
  pld.system.notify %signal[0, 0] peer=%10 AtomicAdd 1
  pld.system.wait %signal[0, 0] Ge 1
  pld.tensor.get %dst <- %src peer=%12 atomic=None
  %14 = pl.load %dst[0, 0] [1, 64] : Tile[1, 64] FP32
  %y = pl.store %14 -> %y[0, 0]
}
)";

const char* const kRingGetSpecializedP3 = R"(; specialised for P = 3, NR = 3
host ring_get(%x: Tensor[3, 1, 64] FP32 in, %y: Tensor[3, 1, 64] FP32 out) {
  %2 = pld.alloc_window_buffer "src_buf" [1, 64] FP32
  %3 = pld.alloc_window_buffer "dst_buf" [1, 64] FP32
  %4 = pld.alloc_window_buffer "signal_buf" [1, 1] INT32
  pld.world_size
  for %5 in range(0, 3) {
    %6 = pld.window %2 [1, 64] FP32
    %7 = pld.window %3 [1, 64] FP32
    %8 = pld.window %4 [1, 1] INT32
    %9 = %x[%5] : Tensor[1, 64] FP32
    %10 = %y[%5] : Tensor[1, 64] FP32
    call @per_rank_get(%9, %10, %6, %7, %8) device=%5
  }
}

orchestration per_rank_get(%x: Tensor[1, 64] FP32 in, %y: Tensor[1, 64] FP32 out, %src: DistributedTensor[1, 64] FP32 inout, %dst: DistributedTensor[1, 64] FP32 inout, %signal: DistributedTensor[1, 1] INT32 inout) {
  call @get_step(%x, %y, %src, %dst, %signal)
}

incore get_step(%x: Tensor[1, 64] FP32 in, %y: Tensor[1, 64] FP32 out, %src: DistributedTensor[1, 64] FP32 inout, %dst: DistributedTensor[1, 64] FP32 inout, %signal: DistributedTensor[1, 1] INT32 inout) {
  %5 = pld.get_comm_ctx %src
  %6 = pld.rank %5 : Scalar INT32
  %7 = pld.nranks %5 : Scalar INT32
  %8 = add %6, %7 : Scalar INT32
  %9 = sub %8, 1 : Scalar INT32
  %10 = mod %9, %7 : Scalar INT32
  %11 = add %6, 1 : Scalar INT32
  %12 = mod %11, %7 : Scalar INT32
  %13 = pl.load %x[0, 0] [1, 64] : Tile[1, 64] FP32
  %src = pl.store %13 -> %src[0, 0]
  pld.system.notify %signal[0, 0] peer=%10 AtomicAdd 1
  pld.system.wait %signal[0, 0] Ge 1
  pld.tensor.get %dst <- %src peer=%12 atomic=None
  %14 = pl.load %dst[0, 0] [1, 64] : Tile[1, 64] FP32
  %y = pl.store %14 -> %y[0, 0]
}
)";

const char* const kRingPutSymbolic =
    R"(host ring_put(%x: Tensor[NR, 1, 64] FP32 in, %y: Tensor[NR, 1, 64] FP32 out) {
  %2 = pld.alloc_window_buffer "src_buf" [1, 64] FP32
  %3 = pld.alloc_window_buffer "dst_buf" [1, 64] FP32
  %4 = pld.alloc_window_buffer "signal_buf" [1, 1] INT32
  pld.world_size
  for %5 in range(0, world_size) {
    %6 = pld.window %2 [1, 64] FP32
    %7 = pld.window %3 [1, 64] FP32
    %8 = pld.window %4 [1, 1] INT32
    %9 = %x[%5] : Tensor[1, 64] FP32
    %10 = %y[%5] : Tensor[1, 64] FP32
    call @per_rank_put(%9, %10, %6, %7, %8) device=%5
  }
}

orchestration per_rank_put(%x: Tensor[1, 64] FP32 in, %y: Tensor[1, 64] FP32 out, %src: DistributedTensor[1, 64] FP32 inout, %dst: DistributedTensor[1, 64] FP32 inout, %signal: DistributedTensor[1, 1] INT32 inout) {
  call @put_step(%x, %y, %src, %dst, %signal)
}

incore put_step(%x: Tensor[1, 64] FP32 in, %y: Tensor[1, 64] FP32 out, %src: DistributedTensor[1, 64] FP32 inout, %dst: DistributedTensor[1, 64] FP32 inout, %signal: DistributedTensor[1, 1] INT32 inout) {
  %5 = pld.get_comm_ctx %src
  %6 = pld.rank %5 : Scalar INT32
  %7 = pld.nranks %5 : Scalar INT32
  %8 = add %6, 1 : Scalar INT32
  %9 = mod %8, %7 : Scalar INT32
  %10 = pl.load %x[0, 0] [1, 64] : Tile[1, 64] FP32
  %src = pl.store %10 -> %src[0, 0]
  pld.tensor.put %dst <- %src peer=%9 atomic=None
  pld.system.notify %signal[0, 0] peer=%9 AtomicAdd 1
  pld.system.wait %signal[0, 0] Ge 1
  %11 = pl.load %dst[0, 0] [1, 64] : Tile[1, 64] FP32
  %y = pl.store %11 -> %y[0, 0]
}
)";

// 256 B + 256 B of data, then the 4-byte signal rounded up to a 32-byte slot.
const char* const kRingWindowLayout = R"(window bytes per rank: 544
  src_buf: offset 0, slot 256 B, used 256 B
  dst_buf: offset 256, slot 256 B, used 256 B
  signal_buf: offset 512, slot 32 B, used 4 B, signal (credits only)
)";

TEST(IrGolden07, RingGetSymbolic) { EXPECT_EQ(anyp_test::ring_get().ir_text(), kRingGetSymbolic); }

TEST(IrGolden07, RingPutSymbolic) { EXPECT_EQ(anyp_test::ring_put().ir_text(), kRingPutSymbolic); }

TEST(IrGolden07, RingGetSpecializedAtP3) {
  anyp::CompiledProgram compiled = compile_at(anyp_test::ring_get(), 3);
  EXPECT_EQ(compiled.specialized_ir(), kRingGetSpecializedP3);
  EXPECT_EQ(compiled.symbolic_ir(), kRingGetSymbolic);
}

// Step 07's windows do not mention NR: the layout is the same at every P.
TEST(IrGolden07, RingWindowLayoutIsIndependentOfP) {
  for (std::int64_t P : {1, 2, 3, 8, 64}) {
    EXPECT_EQ(compile_at(anyp_test::ring_get(), P).window_layout(), kRingWindowLayout) << "P=" << P;
    EXPECT_EQ(compile_at(anyp_test::ring_put(), P).window_layout(), kRingWindowLayout) << "P=" << P;
  }
}

TEST(IrGolden07, ManifestAtP3) {
  EXPECT_EQ(compile_at(anyp_test::ring_get(), 3).manifest_json(), R"({
  "program": "ring_get",
  "platform": "a2a3sim",
  "world_size": 3,
  "device_ids": [0, 1, 2],
  "dims": "NR = 3",
  "window_bytes_per_rank": 544,
  "buffers": [{"name": "src_buf", "offset": 0, "bytes": 256}, {"name": "dst_buf", "offset": 256, "bytes": 256}, {"name": "signal_buf", "offset": 512, "bytes": 32}],
  "codes": [{"function": "per_rank_get", "instructions": 21}],
  "files": ["symbolic.ir", "specialized.ir", "window_layout.txt", "lowered.txt", "manifest.json"]
}
)");
}

// ---- shapes that depend on NR -----------------------------------------------------------
// Rank r copies chunk r (C = SIZE / NR columns) of its x into row r of a
// [NR, SIZE] window, then meets the others at a builtin barrier on [NR, 1].

const auto chunk_step =
    pl::jit::incore("chunk_step",
                    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
                     pl::InOut("data", pld::DistributedTensor({NR, SIZE}, pl::FP32)),
                     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
                    [](pl::Value x, pl::Value data, pl::Value signal) {
                      auto ctx = pld::get_comm_ctx(data);
                      pl::Scalar r = pld::rank(ctx);
                      pl::Scalar column = r * (SIZE / NR);
                      pl::Tile t = pl::load(x, {0, column}, {1, SIZE / NR});
                      data = pl::store(t, {r, column}, data);
                      signal = pld::tensor::barrier(signal);
                    });

const auto per_rank_chunk = pl::jit::orchestration(
    "per_rank_chunk",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({NR, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value data, pl::Value signal) { chunk_step(x, data, signal); });

const pl::HostFunction chunks =
    pl::jit::host("chunks", {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32))}, [](pl::Value x) {
      auto data_buf = pld::alloc_window_buffer("data", {NR, SIZE}, pl::FP32);
      auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        auto data = pld::window(data_buf, {NR, SIZE}, pl::FP32);
        auto signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
        per_rank_chunk(x[r], data, signal, pl::device(r));
      });
    });

anyp::CompiledProgram compile_chunks(std::int64_t P) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  return chunks.compile({x}, anyp::RunConfig::for_world_size(P));
}

TEST(IrGoldenNr, ChunksSymbolic) {
  EXPECT_EQ(chunks.ir_text(),
            R"(host chunks(%x: Tensor[NR, 1, 64] FP32 in) {
  %1 = pld.alloc_window_buffer "data" [NR, 64] FP32
  %2 = pld.alloc_window_buffer "signal" [NR, 1] INT32
  pld.world_size
  for %3 in range(0, world_size) {
    %4 = pld.window %1 [NR, 64] FP32
    %5 = pld.window %2 [NR, 1] INT32
    %6 = %x[%3] : Tensor[1, 64] FP32
    call @per_rank_chunk(%6, %4, %5) device=%3
  }
}

orchestration per_rank_chunk(%x: Tensor[1, 64] FP32 in, %data: DistributedTensor[NR, 64] FP32 inout, %signal: DistributedTensor[NR, 1] INT32 inout) {
  call @chunk_step(%x, %data, %signal)
}

incore chunk_step(%x: Tensor[1, 64] FP32 in, %data: DistributedTensor[NR, 64] FP32 inout, %signal: DistributedTensor[NR, 1] INT32 inout) {
  %3 = pld.get_comm_ctx %data
  %4 = pld.rank %3 : Scalar INT32
  %5 = mul %4, 64 / NR : Scalar INT32
  %6 = pl.load %x[0, %5] [1, 64 / NR] : Tile[1, 64 / NR] FP32
  %data = pl.store %6 -> %data[%4, %5]
  %signal = pld.tensor.barrier %signal
}
)");
}

TEST(IrGoldenNr, ChunksSpecializedAtP4) {
  // NR, SIZE / NR and r * (SIZE / NR) resolve to 4, 16 and r * 16.
  EXPECT_EQ(compile_chunks(4).specialized_ir(),
            R"(; specialised for P = 4, NR = 4
host chunks(%x: Tensor[4, 1, 64] FP32 in) {
  %1 = pld.alloc_window_buffer "data" [4, 64] FP32
  %2 = pld.alloc_window_buffer "signal" [4, 1] INT32
  pld.world_size
  for %3 in range(0, 4) {
    %4 = pld.window %1 [4, 64] FP32
    %5 = pld.window %2 [4, 1] INT32
    %6 = %x[%3] : Tensor[1, 64] FP32
    call @per_rank_chunk(%6, %4, %5) device=%3
  }
}

orchestration per_rank_chunk(%x: Tensor[1, 64] FP32 in, %data: DistributedTensor[4, 64] FP32 inout, %signal: DistributedTensor[4, 1] INT32 inout) {
  call @chunk_step(%x, %data, %signal)
}

incore chunk_step(%x: Tensor[1, 64] FP32 in, %data: DistributedTensor[4, 64] FP32 inout, %signal: DistributedTensor[4, 1] INT32 inout) {
  %3 = pld.get_comm_ctx %data
  %4 = pld.rank %3 : Scalar INT32
  %5 = mul %4, 16 : Scalar INT32
  %6 = pl.load %x[0, %5] [1, 16] : Tile[1, 16] FP32
  %data = pl.store %6 -> %data[%4, %5]
  %signal = pld.tensor.barrier %signal
}
)");
}

TEST(IrGoldenNr, ChunksWindowLayoutFollowsP) {
  // data is [NR, 64] FP32 = 256 * P bytes; signal [NR, 1] INT32 = 4 * P
  // bytes, in a slot rounded up to 32 B.
  EXPECT_EQ(compile_chunks(2).window_layout(), R"(window bytes per rank: 544
  data: offset 0, slot 512 B, used 512 B
  signal: offset 512, slot 32 B, used 8 B, signal (credits only)
)");
  EXPECT_EQ(compile_chunks(8).window_layout(), R"(window bytes per rank: 2080
  data: offset 0, slot 2048 B, used 2048 B
  signal: offset 2048, slot 32 B, used 32 B, signal (credits only)
)");
}

// ---- the everyday ops (issue 7): pl.full, pl.reshape, a stepped range, sub-windows ----------

const auto halves_step =
    pl::jit::incore("halves_step",
                    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
                     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
                     pl::InOut("scratch", pld::DistributedTensor({1, SIZE}, pl::FP32))},
                    [](pl::Value x, pl::Value data, pl::Value scratch) {
                      pl::Tile acc = pl::full({8, 8}, NR, pl::FP32);
                      pl::range(NR - 1, -1, -2, [&](pl::Scalar i) {
                        acc = acc + pl::reshape(pl::load(x, {0, 0}, {1, SIZE}), {8, 8});
                        acc = acc * pl::cast(i, pl::FP32);
                      });
                      data = pl::store(pl::reshape(acc, {1, SIZE}), {0, 0}, data);
                      scratch = pl::store(pl::zeros({1, SIZE}, pl::FP32), {0, 0}, scratch);
                    });

const auto per_rank_halves = pl::jit::orchestration_for("per_rank_halves", halves_step);

const pl::HostFunction halves =
    pl::jit::host("halves", {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32))}, [](pl::Value x) {
      auto buf = pld::alloc_window_buffer("buf", {2, SIZE}, pl::FP32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        auto data = pld::window(buf, {1, SIZE}, pl::FP32, 0);
        auto scratch = pld::window(buf, {1, SIZE}, pl::FP32, SIZE);
        pl::Value xr = x[r];
        per_rank_halves(pl::arg("scratch") = scratch, pl::arg("x") = xr, pl::arg("data") = data,
                        pl::device(r));
      });
    });

TEST(IrGoldenEveryday, FullReshapeSteppedRangeAndSubWindowsSpecializedAtP3) {
  anyp::HostTensor x = anyp::HostTensor::zeros({3, 1, SIZE}, pl::FP32);
  // NR and NR - 1 resolve to 3 and 2; the step -2 and the window offsets print as given.
  EXPECT_EQ(halves.compile({x}, anyp::RunConfig::for_world_size(3)).specialized_ir(),
            R"(; specialised for P = 3, NR = 3
host halves(%x: Tensor[3, 1, 64] FP32 in) {
  %1 = pld.alloc_window_buffer "buf" [2, 64] FP32
  pld.world_size
  for %2 in range(0, 3) {
    %3 = pld.window %1 [1, 64] FP32 offset=0
    %4 = pld.window %1 [1, 64] FP32 offset=64
    %5 = %x[%2] : Tensor[1, 64] FP32
    call @per_rank_halves(%5, %3, %4) device=%2
  }
}

orchestration per_rank_halves(%x: Tensor[1, 64] FP32 in, %data: DistributedTensor[1, 64] FP32 inout, %scratch: DistributedTensor[1, 64] FP32 inout) {
  call @halves_step(%x, %data, %scratch)
}

incore halves_step(%x: Tensor[1, 64] FP32 in, %data: DistributedTensor[1, 64] FP32 inout, %scratch: DistributedTensor[1, 64] FP32 inout) {
  %3 = pl.full 3 [8, 8] : Tile[8, 8] FP32
  for %4 in range(2, -1, -2) {
    %5 = pl.load %x[0, 0] [1, 64] : Tile[1, 64] FP32
    %6 = pl.reshape %5 [8, 8] : Tile[8, 8] FP32
    %7 = pl.add %3, %6 : Tile[8, 8] FP32
    %3 = %7
    %8 = pl.cast %4 : Scalar FP32
    %9 = pl.mul %3, %8 : Tile[8, 8] FP32
    %3 = %9
  }
  %10 = pl.reshape %3 [1, 64] : Tile[1, 64] FP32
  %data = pl.store %10 -> %data[0, 0]
  %11 = pl.full 0 [1, 64] : Tile[1, 64] FP32
  %scratch = pl.store %11 -> %scratch[0, 0]
}
)");
}

}  // namespace
