// 12_wait_never_notified — a pitfall: waiting on a cell that nobody
// notifies.
//
// The bug: a hand-rolled barrier (docs/ladder-steps.md §2) on an [NR, 1] signal,
// with the notify's cell index wrong. Cell {s, 0} of my signal is meant to
// count the credits of rank s, so I must notify peer p in cell {r, 0} (the
// cell named after me). Here I notify {p, 0}, the peer's own cell: every
// credit lands in a cell that nobody waits on, and every cell anybody waits
// on stays 0. anyp reports the deadlock; every wait says "never notified":
//   deadlock: no rank can make progress (3 of 3 ranks waiting)
//     rank 0: function 'stage_barrier_pull', op pld.system.wait: waits for signal
//             'signal' cell [1, 0] Ge 1; current value 0; never notified
//     ...
// The fix (--fixed): notify peer p in cell {r, 0}; wait on my cells {s, 0}.
//
//   12_wait_never_notified -d 0,1,2 --check-races          the deadlock report, exit 1
//   12_wait_never_notified -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "stage_barrier_pull", kParams,
      [fixed](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::Scalar right = (r + 1) % n;
        data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
        pl::range(n, [&](pl::Scalar p) {
          pl::if_(p != r, [&] {
            // BUG: {p, 0} is the peer's own cell, which nobody waits on.
            pl::Scalar cell = fixed ? r : p;
            pld::system::notify(signal, p, {cell, 0}, 1, pld::NotifyOp::AtomicAdd);
          });
        });
        pl::range(n, [&](pl::Scalar s) {
          pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, pld::WaitCmp::Ge); });
        });
        y = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host("wait_never_notified",
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
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({(r + 1) % P, 0, j}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "12_wait_never_notified";
  spec.step = 12;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
