// 08_collectives_out_of_order — a pitfall: ranks calling the builtin
// collectives on one signal in different orders.
//
// The bug: one [NR, 1] signal serves an allreduce and a broadcast (legal:
// the builtins' signals are self-clearing and may be shared, docs/design.md
// §11). But rank 0 calls allreduce then broadcast, and the other ranks call
// broadcast then allreduce. The credits on the shared cells would pair one
// rank's allreduce barrier with another's broadcast barrier. anyp matches
// every rank's n-th call on a signal and stops at the first disagreement:
//   run error: rank 1 (device 1), function 'two_collectives', op pld.tensor.broadcast:
//   collective mismatch on signal 'signal': call #1 on it is pld.tensor.allreduce (Sum,
//   Mesh, data FP32 [1, 64]) in function 'two_collectives' on rank 0, but
//   pld.tensor.broadcast (root 0, data FP32 [1, 64]) in function 'two_collectives' on
//   rank 1; every rank must make the same builtin collective calls on a signal, in the
//   same order
// The fix (--fixed): the same order on every rank; only the staging depends
// on the rank.
//
//   08_collectives_out_of_order -d 0,1,2 --check-races          the run error, exit 1
//   08_collectives_out_of_order -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
constexpr std::int64_t ROOT = 0;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::In("w", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::Out("z", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("ar", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("bc", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "two_collectives", kParams,
      [fixed](pl::Value x, pl::Value w, pl::Value y, pl::Value z, pl::Value ar, pl::Value bc,
              pl::Value signal) {
        auto ctx = pld::get_comm_ctx(ar);
        pl::Scalar r = pld::rank(ctx);
        ar = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, ar);
        pl::if_(r == ROOT, [&] { bc = pl::store(pl::load(w, {0, 0}, {1, SIZE}), {0, 0}, bc); });
        auto allreduce = [&] { ar = pld::tensor::allreduce(ar, signal); };
        auto broadcast = [&] { bc = pld::tensor::broadcast(bc, signal, ROOT); };
        if (fixed) {
          allreduce();
          broadcast();
        } else {  // BUG: rank 0's order differs from everyone else's
          pl::if_(
              r == 0,
              [&] {
                allreduce();
                broadcast();
              },
              [&] {
                broadcast();
                allreduce();
              });
        }
        y = pl::store(pl::load(ar, {0, 0}, {1, SIZE}), {0, 0}, y);
        z = pl::store(pl::load(bc, {0, 0}, {1, SIZE}), {0, 0}, z);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value w, pl::Value y, pl::Value z, pl::Value ar, pl::Value bc,
               pl::Value s) { kernel(x, w, y, z, ar, bc, s); });
  return pl::jit::host("collectives_out_of_order",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::In("w", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("z", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value w, pl::Value y, pl::Value z) {
                         auto ar_buf = pld::alloc_window_buffer("ar", {1, SIZE}, pl::FP32);
                         auto bc_buf = pld::alloc_window_buffer("bc", {1, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], w[r], y[r], z[r],
                                    pld::window(ar_buf, {1, SIZE}, pl::FP32),
                                    pld::window(bc_buf, {1, SIZE}, pl::FP32),
                                    pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor w = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor z = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  static const pl::HostFunction buggy = make_program(false), fixed = make_program(true);
  anyp::CompiledProgram compiled = (opt.fixed ? fixed : buggy).compile({x, w, y, z}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, w, y, z);
  anyp::HostTensor y_expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor z_expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < P; ++r) {
      y_expected.set_at({r, 0, j}, sum);
      z_expected.set_at({r, 0, j}, w.at({ROOT, 0, j}));
    }
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, y_expected, P),
                            anyp::cli::check_exact("z", z, z_expected, P)},
                           opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "08_collectives_out_of_order";
  spec.step = 8;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
