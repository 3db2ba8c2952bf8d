// dump_ir_test.cpp — RunConfig::dump_ir (--dump-ir): the IR after each
// named pass of the compile (compiler/passes.hpp) on stderr. Golden: step 07
// (put) at P = 2, the whole dump, reviewed by hand: the symbolic program,
// the dims, the specialised program with each rank's host dispatch (x and y
// rows 256 B apart), the VM code, the dispatch list (no order waits: each
// rank's dispatch reads its own rows), the three buffers unplaced, then in
// 32-byte slots, then the signal buffer marked credits only.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/step07_program.hpp"

namespace {

using ::testing::internal::CaptureStderr;
using ::testing::internal::GetCapturedStderr;

std::string dump_of(const pl::HostFunction& fn, std::int64_t P, bool dump_ir = true) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.dump_ir = dump_ir;
  CaptureStderr();
  fn.compile({x, y}, config);
  return GetCapturedStderr();
}

const char* const kAfterSpecialization = R"DUMP(
host dispatches:
  rank 0: per_rank_put(x+0B, y+0B, window:src_buf, window:dst_buf, window:signal_buf)
  rank 1: per_rank_put(x+256B, y+256B, window:src_buf, window:dst_buf, window:signal_buf)
; ---- after check-functions ----
(checks only: nothing changes)
; ---- after lower ----
code per_rank_put: 18 instructions, registers s6 t2 v10
  params: v0 v1 v2 v3 v4
  const const dst=4 imm=1
  const const dst=5 imm=0
  0: mov.view dst=5 a=0    ; per_rank_put: call @put_step
  1: mov.view dst=6 a=1    ; per_rank_put: call @put_step
  2: mov.view dst=7 a=2    ; per_rank_put: call @put_step
  3: mov.view dst=8 a=3    ; per_rank_put: call @put_step
  4: mov.view dst=9 a=4    ; per_rank_put: call @put_step
  5: task    ; put_step: call @put_step
  6: rank dst=0    ; put_step: pld.rank
  7: nranks dst=1    ; put_step: pld.nranks
  8: scalar dst=2 a=0 b=4    ; put_step: scalar add
  9: scalar dst=3 a=2 b=1 sub=4    ; put_step: scalar mod
  10: load dst=0 a=5 idx=[5,5] shape=[1,64]    ; put_step: pl.load
  11: store a=0 b=7 idx=[5,5]    ; put_step: pl.store
  12: put a=8 b=3 c=7    ; put_step: pld.tensor.put
  13: notify a=9 b=3 c=4 idx=[5,5]    ; put_step: pld.system.notify
  14: wait a=9 b=4 sub=3 idx=[5,5]    ; put_step: pld.system.wait
  15: load dst=1 a=8 idx=[5,5] shape=[1,64]    ; put_step: pl.load
  16: store a=1 b=6 idx=[5,5]    ; put_step: pl.store
  17: task sub=1    ; put_step: call @put_step

; ---- after order-dispatches ----
dispatch list:
  rank 0 (device 0): per_rank_put(x+0B, y+0B, window:src_buf, window:dst_buf, window:signal_buf)
  rank 1 (device 1): per_rank_put(x+256B, y+256B, window:src_buf, window:dst_buf, window:signal_buf)
; ---- after place-scratch ----
window buffers (not yet placed):
  src_buf: used 256 B
  dst_buf: used 256 B
  signal_buf: used 4 B
; ---- after layout-windows ----
window bytes per rank: 544
  src_buf: offset 0, slot 256 B, used 256 B
  dst_buf: offset 256, slot 256 B, used 256 B
  signal_buf: offset 512, slot 32 B, used 4 B
; ---- after mark-signal-buffers ----
window bytes per rank: 544
  src_buf: offset 0, slot 256 B, used 256 B
  dst_buf: offset 256, slot 256 B, used 256 B
  signal_buf: offset 512, slot 32 B, used 4 B, signal (credits only)
; ---- after check-collective-windows ----
(checks only: nothing changes)
)DUMP";

// The dump after `verify` is the symbolic IR (ir_text(), pinned by
// ir_golden_test.cpp); after `specialize-host` the same with NR and the
// rank loop's bound evaluated, then each rank's dispatch.
std::string specialised(std::string text) {
  for (const auto& [from, to] :
       {std::pair<std::string, std::string>{"NR", "2"}, {"range(0, world_size)", "range(0, 2)"}}) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at))
      text.replace(at, from.size(), to);
  }
  return text;
}

std::string step07_put_at_p2() {
  const std::string symbolic = anyp_test::ring_put().ir_text();
  return "; ---- after verify ----\n" + symbolic +
         "; ---- after bind-dims ----\n"
         "P = 2, NR = 2\n"
         "; ---- after specialize-host ----\n"
         "; specialised for P = 2, NR = 2\n" +
         specialised(symbolic) + kAfterSpecialization;
}

TEST(DumpIr, Step07IsTheIrAfterEachPass) {
  EXPECT_EQ(dump_of(anyp_test::ring_put(), 2), step07_put_at_p2());
}

TEST(DumpIr, EveryPassIsNamedOnceInOrder) {
  const std::string dump = dump_of(anyp_test::ring_get(), 3);
  std::vector<std::string> names;
  const std::string mark = "; ---- after ";
  for (std::size_t at = dump.find(mark); at != std::string::npos; at = dump.find(mark, at + 1))
    names.push_back(
        dump.substr(at + mark.size(), dump.find(" ----", at + mark.size()) - at - mark.size()));
  EXPECT_EQ(names, (std::vector<std::string>{"verify", "bind-dims", "specialize-host",
                                             "check-functions", "lower", "order-dispatches",
                                             "place-scratch", "layout-windows",
                                             "mark-signal-buffers", "check-collective-windows"}));
}

TEST(DumpIr, ACachedPlanIsDumpedAgainAndWithoutTheFlagNothingIsPrinted) {
  EXPECT_EQ(dump_of(anyp_test::ring_put(), 2, false), "");
  EXPECT_EQ(dump_of(anyp_test::ring_put(), 2), step07_put_at_p2());  // the plan is cached now
  EXPECT_EQ(dump_of(anyp_test::ring_put(), 2), step07_put_at_p2());
  EXPECT_EQ(dump_of(anyp_test::ring_put(), 2, false), "");
}

}  // namespace
