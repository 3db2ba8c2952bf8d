// 11_host_nr_disagrees — a pitfall: host tensors shaped for a rank count
// other than the device count.
//
// The bug: the host code sizes its tensors from its own idea of P (here one
// more than the device list gives) instead of from the device count: `x` and
// `y` get P + 1 rows while `-d` gives P devices. compile() binds NR from the
// arguments (P + 1) and world_size from the device list (P); the host's rank
// loop hands rank r the row x[r], so anyp refuses the mismatch at once:
//   compile error: function 'host_nr_disagrees', parameter 'x', dim 0: NR is 4 here, but
//   the rank loop over pld::world_size() runs P = 3 ranks (from the device list) and
//   gives rank r the row x[r]: a tensor sliced by the rank loop needs exactly P rows
//     hint: shape the host tensors from the device count
// The fix (--fixed): shape every host tensor from the device count,
// opt.world_size().
//
//   11_host_nr_disagrees -d 0,1,2 --check-races          the compile error, exit 1
//   11_host_nr_disagrees -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

// The program is the same in both modes: the bug is in the host tensors.
pl::HostFunction make_program() {
  const auto kernel = pl::jit::incore(
      "shift_left", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::Scalar right = (r + 1) % n;
        data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
        signal = pld::tensor::barrier(signal);
        y = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host("host_nr_disagrees",
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
  // BUG: the host's own rank count instead of the device count.
  const std::int64_t P = opt.fixed ? opt.world_size() : opt.world_size() + 1;
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  static const pl::HostFunction program = make_program();
  anyp::CompiledProgram compiled = program.compile({x, y}, opt.config());
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
  spec.name = "11_host_nr_disagrees";
  spec.step = 11;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
