// 07_dynamic_rank_count — the seed: step 06's ring shift, rank-count agnostic.
//
// NR = pl::dynamic("NR") names the world size in the host signature, so this
// one source (and one binary) runs at P = 2, 3, 4, ...: only -d changes.
//   07_dynamic_rank_count -d 0,1     --mode get
//   07_dynamic_rank_count -d 0,1,2   --mode put
//   07_dynamic_rank_count -d 0,1,2,3 --mode get
// The kernels are step 06's, unchanged: they read P at run time from the
// comm context and compute peers as (r + P ± 1) % P (never (r - 1) % P).
// The parameter list is written once: both kernels share it, each
// orchestration wrapper is pl::jit::orchestration_for (the kernel's own list,
// forwarded in order), and the host binds the wrapper's arguments by name.
// Golden: get y[r] = x[(r+1) % P]; put y[r] = x[(r-1) mod P]; both exact.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

// The one parameter list, shared by both kernels and (through
// orchestration_for) by both orchestration wrappers.
const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};

// put: push my src into right's dst, tell right, wait for left's push.
const auto put_step = pl::jit::incore(
    "put_step", kParams,
    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(src);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      pl::Scalar right = (my_rank + 1) % nranks;
      src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
      pld::tensor::put(dst, right, src, AtomicType::None);
      pld::system::notify(signal, right, {0, 0}, 1, NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);  // only left writes this cell
      y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

// get: stage my src, tell left (my reader) it is ready, wait for right, pull.
const auto get_step =
    pl::jit::incore("get_step", kParams,
                    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
                      auto ctx = pld::get_comm_ctx(src);
                      pl::Scalar my_rank = pld::rank(ctx);
                      pl::Scalar nranks = pld::nranks(ctx);
                      pl::Scalar left = (my_rank + nranks - 1) % nranks;
                      pl::Scalar right = (my_rank + 1) % nranks;
                      src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
                      pld::system::notify(signal, left, {0, 0}, 1, NotifyOp::AtomicAdd);
                      pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);  // right sets it
                      pld::tensor::get(dst, right, src);
                      y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
                    });

// Orchestration: runs once per rank and forwards its parameters to the kernel.
const auto per_rank_put = pl::jit::orchestration_for("per_rank_put", put_step);
const auto per_rank_get = pl::jit::orchestration_for("per_rank_get", get_step);

// The host: NR in the signature is the only change from step 06.
pl::HostFunction make_ring(const char* name, const pl::Function& per_rank) {
  return pl::jit::host(
      name,
      {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        auto src_buf = pld::alloc_window_buffer("src_buf", {1, SIZE}, pl::FP32);
        auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, SIZE}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          auto src = pld::window(src_buf, {1, SIZE}, pl::FP32);
          auto dst = pld::window(dst_buf, {1, SIZE}, pl::FP32);
          auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
          pl::Value xr = x[r];  // named first: C++ leaves call-argument order
          pl::Value yr = y[r];  // unspecified, and the traced IR should not depend on it
          per_rank(pl::arg("x") = xr, pl::arg("y") = yr, pl::arg("src") = src, pl::arg("dst") = dst,
                   pl::arg("signal") = signal, pl::device(r));
        });
      });
}

const pl::HostFunction ring_put = make_ring("ring_put", per_rank_put);
const pl::HostFunction ring_get = make_ring("ring_get", per_rank_get);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  const bool get_mode = opt.mode == "get";
  anyp::CompiledProgram compiled = (get_mode ? ring_get : ring_put).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, derived from the actual P.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t from = get_mode ? (r + 1) % P : (r + P - 1) % P;
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({from, 0, j}));
  }
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "07_dynamic_rank_count";
  spec.step = 7;
  spec.modes = {"put", "get"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
