// 07_ring_signal_transposed — a pitfall: the ring allreduce's signal with
// its dims swapped.
//
// The bug: pld::tensor::allreduce(data, signal, Sum, AllreduceMode::Ring) with
// an [NR, 2 * (NR - 1)] signal: one column per round instead of one row.
// The ring takes one row per round, [2 * (NR - 1), NR] (or, compact, the
// mesh's [NR, 1]). anyp refuses the program when it compiles for the
// actual P:
//   compile error: function 'ring_allreduce' (incore), op pld.tensor.allreduce: the
//   Ring signal must be [2 * (P - 1), P] (or PyPTO's [2 * (P - 1) + 1, P], or [P, 1])
//   INT32, which is [4, 3] at P = 3, got [3, 4]
// The fix (--fixed): allocate and declare the ring's signal shape.
//
//   07_ring_signal_transposed -d 0,1,2 --check-races          the compile error, exit 1
//   07_ring_signal_transposed -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

pl::HostFunction make_program(bool fixed) {
  // BUG: one column per round; the ring takes one row per round.
  const pl::Shape sig = fixed ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 2 * (NR - 1)};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "ring_allreduce", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
        data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, pld::AllreduceMode::Ring);
        y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host("ring_signal_transposed",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank, sig](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                                    pld::window(signal_buf, sig, pl::INT32), pl::device(r));
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
  spec.name = "07_ring_signal_transposed";
  spec.step = 7;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
