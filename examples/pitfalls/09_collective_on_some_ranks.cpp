// 09_collective_on_some_ranks — a pitfall: a builtin collective inside a
// branch that only some ranks take.
//
// The bug: "only the root has something to broadcast", so the whole
// broadcast sits inside pl::if_(r == ROOT, ...). Every builtin collective is
// a meeting of all ranks: the root deposits its credits and waits for the
// others', but they skipped the call and finished. anyp reports the deadlock
// and, last, the collective call that not every rank entered:
//   deadlock: no rank can make progress (1 of 3 ranks waiting)
//     rank 0: function 'root_broadcast', op pld.tensor.broadcast: waits for signal
//             'signal' cell [1, 0] Ge 1; current value 0; never notified
//     ranks 1, 2 (2 ranks): finished
//   builtin collective calls not entered by every rank:
//     collective call #1 on signal 'signal', pld.tensor.broadcast (root 0, data FP32
//     [1, 64]) in function 'root_broadcast': entered by rank 0; never entered by ranks
//     1, 2 (finished)
// The fix (--fixed): only the staging is conditional; every rank calls the
// broadcast.
//
//   09_collective_on_some_ranks -d 0,1,2 --check-races          the deadlock report, exit 1
//   09_collective_on_some_ranks -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
constexpr std::int64_t ROOT = 0;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel =
      pl::jit::incore("root_broadcast", kParams,
                      [fixed](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                        auto ctx = pld::get_comm_ctx(data);
                        pl::Scalar r = pld::rank(ctx);
                        pl::if_(r == ROOT, [&] {
                          data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
                          if (!fixed)
                            data = pld::tensor::broadcast(data, signal, ROOT);  // BUG: root only
                        });
                        if (fixed) data = pld::tensor::broadcast(data, signal, ROOT);  // every rank
                        y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
                      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host("collective_on_some_ranks",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                                    pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
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
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({ROOT, 0, j}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "09_collective_on_some_ranks";
  spec.step = 9;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
