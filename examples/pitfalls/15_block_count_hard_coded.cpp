// 15_block_count_hard_coded — a pitfall: a barrier among the blocks of a
// rank that counts a block count the launch does not have.
//
// The bug: the kernel runs over pl::blocks(2). Each block stages its half
// of the row into the rank's window, then waits until every block of the
// launch has (a credit each into cell {0, 0} of the rank's own `sync`
// signal) before it reads the other block's half. But the wait counts to
// 4, the block count of an earlier version of the program, hard-coded:
// only 2 credits ever arrive, so every block of every rank waits for good,
// and block 0 of each rank never reaches the end of the launch. anyp
// reports the deadlock with every block's wait:
//   deadlock: no rank can make progress (3 of 3 ranks waiting)
//     rank 0: function 'swap_halves', op pld.system.wait: waits for signal 'sync'
//             cell [0, 0] Ge 4; current value 2; notified by rank 0 (2 AtomicAdds totalling +2)
//     ...
//     rank 0: block 1: function 'swap_halves', op pld.system.wait: ...
// The fix (--fixed): count to pl::get_block_num(), the launch's own count.
//
//   15_block_count_hard_coded -d 0,1,2 --check-races          the deadlock report, exit 1
//   15_block_count_hard_coded -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t HALF = 32;
constexpr std::int64_t SIZE = 2 * HALF;
constexpr std::int64_t kBlocks = 2;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("stage", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("sync", pld::DistributedTensor({1, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  // y's half b is x's other half: block b stages half b, and, once every
  // block has, copies the other half.
  const auto kernel = pl::jit::incore(
      "swap_halves", kParams, [fixed](pl::Value x, pl::Value y, pl::Value stage, pl::Value sync) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(stage));
        const pl::Scalar b = pl::get_block_idx();
        const pl::Scalar other = (b + 1) % pl::get_block_num();
        stage = pl::store(pl::load(x, {0, b * HALF}, {1, HALF}), {0, b * HALF}, stage);
        pld::system::notify(sync, me, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
        // BUG: 4 is not this launch's block count.
        const pl::ScalarArg blocks = fixed ? pl::ScalarArg(pl::get_block_num()) : pl::ScalarArg(4);
        pld::system::wait(sync, {0, 0}, blocks, pld::WaitCmp::Ge);
        y = pl::store(pl::load(stage, {0, other * HALF}, {1, HALF}), {0, b * HALF}, y);
      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel, pl::blocks(kBlocks));
  return pl::jit::host("block_count_hard_coded",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto stage_buf = pld::alloc_window_buffer("stage", {1, SIZE}, pl::FP32);
                         auto sync_buf = pld::alloc_window_buffer("sync", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(stage_buf, {1, SIZE}, pl::FP32),
                                    pld::window(sync_buf, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  static const pl::HostFunction buggy = make_program(false), fixed = make_program(true);
  anyp::CompiledProgram compiled = (opt.fixed ? fixed : buggy).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t j = 0; j < SIZE; ++j)
      expected.set_at({r, 0, j}, x.at({r, 0, (j + HALF) % SIZE}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "15_block_count_hard_coded";
  spec.step = 15;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
