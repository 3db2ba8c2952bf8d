// 04_notify_before_put — a pitfall: announcing data before writing it.
//
// The bug: a ring push. Every rank tells its right neighbour "your row is
// there" and only then puts the row into the neighbour's window. The
// neighbour's wait is satisfied by the notify, so it may read its window
// before the put lands (docs/ladder-steps.md §7: the write must come before the
// notify that announces it). anyp reports the race on every schedule:
//   race report: 1 op pair accesses the same elements from two ranks with no ...
//     race 1: window 'dst' of rank 1, elements [0, 0:64]
//       first:  write by rank 0 (device 0), function 'put_step', op pld.tensor.put
//       second: read by rank 1 (device 1), function 'put_step', op pl.load
//       missing: ...; rank 1 last synchronised with rank 0 through its function
//                'put_step', op pld.system.notify, which came before the write
// The fix (--fixed): put, then notify.
//
//   04_notify_before_put -d 0,1,2 --check-races          the race report, exit 1
//   04_notify_before_put -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("ready", pld::DistributedTensor({1, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "put_step", kParams, [fixed](pl::Value x, pl::Value y, pl::Value dst, pl::Value ready) {
        auto ctx = pld::get_comm_ctx(dst);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::Scalar right = (r + 1) % n;
        if (fixed) {
          pld::tensor::put(dst, right, x, pld::AtomicType::None);
          pld::system::notify(ready, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);  // then announce
        } else {
          pld::system::notify(ready, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
          pld::tensor::put(dst, right, x, pld::AtomicType::None);  // BUG: announced already
        }
        pld::system::wait(ready, {0, 0}, 1, pld::WaitCmp::Ge);  // left says: your row is there
        y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value g) { kernel(x, y, d, g); });
  return pl::jit::host("notify_before_put",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto dst_buf = pld::alloc_window_buffer("dst", {1, SIZE}, pl::FP32);
                         auto ready_buf = pld::alloc_window_buffer("ready", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(dst_buf, {1, SIZE}, pl::FP32),
                                    pld::window(ready_buf, {1, 1}, pl::INT32), pl::device(r));
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
      expected.set_at({r, 0, j}, x.at({(r + P - 1) % P, 0, j}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "04_notify_before_put";
  spec.step = 4;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
