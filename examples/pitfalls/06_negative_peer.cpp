// 06_negative_peer — a pitfall: computing the left neighbour as (r - 1) % P.
//
// The bug: a ring pull. Every rank stages its row, tells its left neighbour
// "my row is ready", waits for its right neighbour's "ready" and pulls that
// row. The left neighbour is written `(r - 1) % P`; C++ `%` (and anyp's
// scalar `%`) truncates toward zero, so on rank 0 it is -1, at every P.
// anyp stops the run at rank 0's notify:
//   run error: rank 0 (device 0), function 'get_step', op pld.system.notify: peer -1 is
//   out of range [0, 3)
//     hint: a negative peer usually comes from (r - 1) % P, which C++ truncates to -1 at
//     r = 0; write (r + P - 1) % P
// The fix (--fixed): left = (r + P - 1) % P.
//
//   06_negative_peer -d 0,1,2 --check-races          the run error, exit 1
//   06_negative_peer -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("ready", pld::DistributedTensor({1, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "get_step", kParams,
      [fixed](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value ready) {
        auto ctx = pld::get_comm_ctx(src);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::Scalar left = fixed ? (r + n - 1) % n  // never negative
                                : (r - 1) % n;     // BUG: -1 on rank 0
        pl::Scalar right = (r + 1) % n;
        src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
        pld::system::notify(ready, left, {0, 0}, 1, pld::NotifyOp::AtomicAdd);  // I am staged
        pld::system::wait(ready, {0, 0}, 1, pld::WaitCmp::Ge);                  // right is staged
        pld::tensor::get(dst, right, src);
        y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", kParams,
                             [kernel](pl::Value x, pl::Value y, pl::Value s, pl::Value d,
                                      pl::Value g) { kernel(x, y, s, d, g); });
  return pl::jit::host("negative_peer",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto src_buf = pld::alloc_window_buffer("src", {1, SIZE}, pl::FP32);
                         auto dst_buf = pld::alloc_window_buffer("dst", {1, SIZE}, pl::FP32);
                         auto ready_buf = pld::alloc_window_buffer("ready", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(src_buf, {1, SIZE}, pl::FP32),
                                    pld::window(dst_buf, {1, SIZE}, pl::FP32),
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
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({(r + 1) % P, 0, j}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "06_negative_peer";
  spec.step = 6;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
