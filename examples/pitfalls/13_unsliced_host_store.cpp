// 13_unsliced_host_store — a pitfall: every rank storing into the same
// elements of a host tensor passed without [r].
//
// The bug: after an allreduce every rank holds the same sum, so the host
// keeps a single output row `y` ([1, SIZE]) and passes it unsliced: every
// rank stores its copy of the sum into the same 64 elements. The values
// agree, so the answer even comes out right, but P plain stores to one
// location with no order between them are a race (on real hardware, P
// devices writing one host buffer at once). anyp reports it on every
// schedule:
//   race report: 1 op pair accesses the same elements from two ranks with no ...
//     race 1: host tensor 'y', elements [0, 0:64]
//       first:  write by rank 1 (device 1), function 'sum_to_host', op pl.store
//       second: write by rank 2 (device 2), function 'sum_to_host', op pl.store
//       missing: no wait on rank 2 observed a notify that rank 1 issued after its write; ...
// The fix (--fixed): y is [NR, 1, SIZE], and each rank writes its own slice
// (the host passes y[r]).
//
//   13_unsliced_host_store -d 0,1,2 --check-races          the race report, exit 1
//   13_unsliced_host_store -d 0,1,2 --check-races --fixed  OK
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
      "sum_to_host", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
        data = pld::tensor::allreduce(data, signal);
        y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  // BUG: one [1, SIZE] row for all ranks, passed without [r].
  const pl::Shape y_shape = fixed ? pl::Shape{NR, 1, SIZE} : pl::Shape{1, SIZE};
  return pl::jit::host("unsliced_host_store",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor(y_shape, pl::FP32))},
                       [per_rank, fixed](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
                           auto signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
                           if (fixed) {
                             per_rank(x[r], y[r], data, signal, pl::device(r));
                           } else {
                             per_rank(x[r], y, data, signal, pl::device(r));  // BUG: no [r]
                           }
                         });
                       });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  const std::int64_t rows = opt.fixed ? P : 1;  // the bug keeps one row
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = opt.fixed ? anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32)
                                 : anyp::HostTensor::zeros({1, SIZE}, pl::FP32);
  static const pl::HostFunction buggy = make_program(false), fixed = make_program(true);
  anyp::CompiledProgram compiled = (opt.fixed ? fixed : buggy).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros(y.shape(), pl::FP32);
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < rows; ++r) expected.set((r * SIZE) + j, sum);
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "13_unsliced_host_store";
  spec.step = 13;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
