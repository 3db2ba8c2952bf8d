// vm_code_test.cpp — the VM instruction set comes from one table
// (runtime/vm_opcodes.hpp), and the code the compiler emits is pinned by
// golden text: step 07's put kernel at P = 3, and a builtin barrier (its
// Collective entry, credit loops and epilogue).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <set>
#include <string>

#include "runtime/lowered_code.hpp"
#include "support/step07_program.hpp"

namespace {

using anyp::runtime::Opcode;

TEST(VmOpcodes, EveryOpcodeHasOneDistinctNameAndAMeaning) {
  std::set<std::string> names;
  int count = 0;
#define ANYP_X(name, text, traits, meaning)                           \
  ++count;                                                            \
  EXPECT_STREQ(anyp::runtime::opcode_name(Opcode::name), text);       \
  EXPECT_STREQ(anyp::runtime::opcode_meaning(Opcode::name), meaning); \
  EXPECT_TRUE(names.insert(text).second) << "duplicate opcode name " << text;
  ANYP_VM_OPCODES(ANYP_X)
#undef ANYP_X
  EXPECT_EQ(count, static_cast<int>(Opcode::Task) + 1);  // the last opcode
}

std::string lowered(const pl::HostFunction& host, std::int64_t P,
                    const std::vector<anyp::ArgRef>& args) {
  return host.compile(args, anyp::RunConfig::for_world_size(P)).lowered_code();
}

TEST(VmCodeGolden, Step07PutAtP3) {
  const anyp::HostTensor x = anyp::HostTensor::zeros({3, 1, 64}, pl::FP32);
  const anyp::HostTensor y = anyp::HostTensor::zeros({3, 1, 64}, pl::FP32);
  EXPECT_EQ(lowered(anyp_test::ring_put(), 3, {x, y}),
            "code per_rank_put: 18 instructions, registers s6 t2 v10\n"
            "  params: v0 v1 v2 v3 v4\n"
            "  const const dst=4 imm=1\n"
            "  const const dst=5 imm=0\n"
            "  0: mov.view dst=5 a=0    ; per_rank_put: call @put_step\n"
            "  1: mov.view dst=6 a=1    ; per_rank_put: call @put_step\n"
            "  2: mov.view dst=7 a=2    ; per_rank_put: call @put_step\n"
            "  3: mov.view dst=8 a=3    ; per_rank_put: call @put_step\n"
            "  4: mov.view dst=9 a=4    ; per_rank_put: call @put_step\n"
            "  5: task    ; put_step: call @put_step\n"
            "  6: rank dst=0    ; put_step: pld.rank\n"
            "  7: nranks dst=1    ; put_step: pld.nranks\n"
            "  8: scalar dst=2 a=0 b=4    ; put_step: scalar add\n"
            "  9: scalar dst=3 a=2 b=1 sub=4    ; put_step: scalar mod\n"
            "  10: load dst=0 a=5 idx=[5,5] shape=[1,64]    ; put_step: pl.load\n"
            "  11: store a=0 b=7 idx=[5,5]    ; put_step: pl.store\n"
            "  12: put a=8 b=3 c=7    ; put_step: pld.tensor.put\n"
            "  13: notify a=9 b=3 c=4 idx=[5,5]    ; put_step: pld.system.notify\n"
            "  14: wait a=9 b=4 sub=3 idx=[5,5]    ; put_step: pld.system.wait\n"
            "  15: load dst=1 a=8 idx=[5,5] shape=[1,64]    ; put_step: pl.load\n"
            "  16: store a=1 b=6 idx=[5,5]    ; put_step: pl.store\n"
            "  17: task sub=1    ; put_step: call @put_step\n"
            "\n"
            "dispatch list:\n"
            "  rank 0 (device 0): per_rank_put(x+0B, y+0B, window:src_buf, window:dst_buf, window:s"
            "ignal_buf)\n"
            "  rank 1 (device 1): per_rank_put(x+256B, y+256B, window:src_buf, window:dst_buf, wind"
            "ow:signal_buf)\n"
            "  rank 2 (device 2): per_rank_put(x+512B, y+512B, window:src_buf, window:dst_buf, wind"
            "ow:signal_buf)\n");
}

const auto barrier_kernel = pl::jit::incore(
    "barrier_kernel", {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
    [](pl::Value sig) { sig = pld::tensor::barrier(sig); });
const auto barrier_per_rank = pl::jit::orchestration(
    "per_rank_barrier",
    {pl::InOut("sig", pld::DistributedTensor({pld::world_size(), 1}, pl::INT32))},
    [](pl::Value sig) { barrier_kernel(sig); });
const pl::HostFunction barrier_host = pl::jit::host("barrier_only", {}, [] {
  auto sig = pld::alloc_window_buffer("sig", {pld::world_size(), 1}, pl::INT32);
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    barrier_per_rank(pld::window(sig, {pld::world_size(), 1}, pl::INT32), pl::device(r));
  });
});

TEST(VmCodeGolden, BuiltinBarrier) {
  EXPECT_EQ(lowered(barrier_host, 2, {}),
            "code per_rank_barrier: 27 instructions, registers s11 t0 v2\n"
            "  params: v0\n"
            "  const const dst=2 imm=1\n"
            "  const const dst=3 imm=0\n"
            "  const const dst=8 imm=-1\n"
            "  0: mov.view dst=1 a=0    ; per_rank_barrier: call @barrier_kernel\n"
            "  1: task    ; barrier_kernel: call @barrier_kernel\n"
            "  2: rank dst=0    ; barrier_kernel: pld.tensor.barrier\n"
            "  3: nranks dst=1    ; barrier_kernel: pld.tensor.barrier\n"
            "  4: collective a=1 imm=0    ; barrier_kernel: pld.tensor.barrier\n"
            "  5: mov dst=4 a=3    ; barrier_kernel: pld.tensor.barrier\n"
            "  6: jump.ge a=4 b=1 -> 12    ; barrier_kernel: pld.tensor.barrier\n"
            "  7: scalar dst=5 a=4 b=0 sub=12    ; barrier_kernel: pld.tensor.barrier\n"
            "  8: jump.zero a=5 -> 10    ; barrier_kernel: pld.tensor.barrier\n"
            "  9: notify a=1 b=4 c=2 idx=[0,3]    ; barrier_kernel: pld.tensor.barrier\n"
            "  10: scalar dst=4 a=4 b=2    ; barrier_kernel: pld.tensor.barrier\n"
            "  11: jump -> 6    ; barrier_kernel: pld.tensor.barrier\n"
            "  12: mov dst=6 a=3    ; barrier_kernel: pld.tensor.barrier\n"
            "  13: jump.ge a=6 b=1 -> 19    ; barrier_kernel: pld.tensor.barrier\n"
            "  14: scalar dst=7 a=6 b=0 sub=12    ; barrier_kernel: pld.tensor.barrier\n"
            "  15: jump.zero a=7 -> 17    ; barrier_kernel: pld.tensor.barrier\n"
            "  16: wait a=1 b=2 sub=3 idx=[6,3]    ; barrier_kernel: pld.tensor.barrier\n"
            "  17: scalar dst=6 a=6 b=2    ; barrier_kernel: pld.tensor.barrier\n"
            "  18: jump -> 13    ; barrier_kernel: pld.tensor.barrier\n"
            "  19: mov dst=9 a=3    ; barrier_kernel: pld.tensor.barrier\n"
            "  20: jump.ge a=9 b=1 -> 26    ; barrier_kernel: pld.tensor.barrier\n"
            "  21: scalar dst=10 a=9 b=0 sub=12    ; barrier_kernel: pld.tensor.barrier\n"
            "  22: jump.zero a=10 -> 24    ; barrier_kernel: pld.tensor.barrier\n"
            "  23: notify a=1 b=0 c=8 idx=[9,3]    ; barrier_kernel: pld.tensor.barrier\n"
            "  24: scalar dst=9 a=9 b=2    ; barrier_kernel: pld.tensor.barrier\n"
            "  25: jump -> 20    ; barrier_kernel: pld.tensor.barrier\n"
            "  26: task sub=1    ; barrier_kernel: call @barrier_kernel\n"
            "  collective 0: pld.tensor.barrier; signal=v1\n"
            "\n"
            "dispatch list:\n"
            "  rank 0 (device 0): per_rank_barrier(window:sig)\n"
            "  rank 1 (device 1): per_rank_barrier(window:sig)\n");
}

}  // namespace
