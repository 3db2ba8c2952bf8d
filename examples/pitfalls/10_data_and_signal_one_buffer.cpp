// 10_data_and_signal_one_buffer — a pitfall: a collective's data and signal
// carved out of one window buffer.
//
// The bug: "one scratch buffer is enough", so the allreduce's data view
// ([1, SIZE] FP32) and its signal view ([NR, 1] INT32) are both made from the
// same window buffer. Views start at the buffer's offset 0, so the signal
// cells are the first elements of the data: the credits would corrupt the
// sums and the sums the credits. anyp refuses the call when a rank enters it:
//   run error: rank 0 (device 0), function 'allreduce_kernel', op pld.tensor.allreduce:
//   the data and the signal are views of one window buffer 'scratch'; a collective's
//   windows must be distinct buffers
// The fix (--fixed): one buffer for the data, another for the signal.
//
//   10_data_and_signal_one_buffer -d 0,1,2 --check-races          the run error, exit 1
//   10_data_and_signal_one_buffer -d 0,1,2 --check-races --fixed  OK
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
      "allreduce_kernel", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
        data = pld::tensor::allreduce(data, signal);
        y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host("data_and_signal_one_buffer",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank, fixed](pl::Value x, pl::Value y) {
                         if (fixed) {
                           auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                           auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                                      pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                           });
                         } else {  // BUG: both views start at offset 0 of one buffer
                           auto scratch =
                               pld::alloc_window_buffer("scratch", 4 * SIZE + 4 * NR);  // bytes
                           pl::range(pld::world_size(), [&](pl::Scalar r) {
                             per_rank(x[r], y[r], pld::window(scratch, {1, SIZE}, pl::FP32),
                                      pld::window(scratch, {NR, 1}, pl::INT32), pl::device(r));
                           });
                         }
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
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < P; ++r) expected.set_at({r, 0, j}, sum);
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "10_data_and_signal_one_buffer";
  spec.step = 10;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
