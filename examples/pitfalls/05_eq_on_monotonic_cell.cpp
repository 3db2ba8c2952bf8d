// 05_eq_on_monotonic_cell — a pitfall: reusing a hand-rolled barrier's cells
// with WaitCmp::Eq.
//
// The bug: a hand barrier (AtomicAdd 1 to every peer's cell {r, 0}, then wait
// on each own cell {s, 0}) runs twice in a loop on the same cells, and waits
// with `Eq 1`. The cells count notifies and never reset, so in round 2 they
// go from 1 to 2: a rank that arrives late finds every cell already at 2, and
// Eq 1 never holds again. (A rank that arrives early may even pass at once,
// on the stale 1 from round 1, as rank 2 does here.) anyp reports the
// deadlock, with a hint under every wait that can never hold:
//   deadlock: no rank can make progress (2 of 3 ranks waiting)
//     ranks 0, 1 (2 ranks): function 'two_barriers', op pld.system.wait: waits for
//             signal 'signal' cell [2, 0] Eq 1; current value 2; notified by rank 2
//             (2 AtomicAdds totalling +2)
//       hint: the cell is already past 1; if it counts AtomicAdd credits it only
//             grows, so Eq can never hold again: wait with Ge, or use a fresh cell ...
//     rank 2: finished
// The fix (--fixed): in round k wait with `Ge k + 1` (or give each round its
// own row of a [ROUNDS, NR] signal, docs/ladder-steps.md §2).
//
//   05_eq_on_monotonic_cell -d 0,1,2 --check-races          the deadlock report, exit 1
//   05_eq_on_monotonic_cell -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t ROUNDS = 2;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::Out("passed", pl::Tensor({ROUNDS, 1}, pl::INT32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel =
      pl::jit::incore("two_barriers", kParams, [fixed](pl::Value passed, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(signal);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::range(ROUNDS, [&](pl::Scalar k) {
          pl::range(n, [&](pl::Scalar p) {
            pl::if_(p != r, [&] {
              pld::system::notify(signal, p, {r, 0}, 1, pld::NotifyOp::AtomicAdd);
            });
          });
          pl::range(n, [&](pl::Scalar s) {
            pl::if_(s != r, [&] {
              if (fixed) {
                pld::system::wait(signal, {s, 0}, k + 1, pld::WaitCmp::Ge);  // s reached round k
              } else {
                pld::system::wait(signal, {s, 0}, 1, pld::WaitCmp::Eq);  // BUG: only round 0
              }
            });
          });
          pl::write(passed, {k, 0}, 1);  // this rank passed barrier k
        });
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams, [kernel](pl::Value passed, pl::Value s) { kernel(passed, s); });
  return pl::jit::host(
      "eq_on_monotonic_cell", {pl::Out("passed", pl::Tensor({NR, ROUNDS, 1}, pl::INT32))},
      [per_rank](pl::Value passed) {
        auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(passed[r], pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::HostTensor passed = anyp::HostTensor::zeros({P, ROUNDS, 1}, pl::INT32);
  static const pl::HostFunction buggy = make_program(false), fixed = make_program(true);
  anyp::CompiledProgram compiled = (opt.fixed ? fixed : buggy).compile({passed}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(passed);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, ROUNDS, 1}, pl::INT32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t k = 0; k < ROUNDS; ++k) expected.set_at({r, k, 0}, 1);
  return anyp::cli::report({anyp::cli::check_exact("passed", passed, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "05_eq_on_monotonic_cell";
  spec.step = 5;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
