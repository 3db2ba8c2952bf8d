// 11_allreduce_reveal — the builtin pld::tensor::allreduce replaces the
// barrier-and-accumulate core of steps 08-10 with one call.
//
//   11_allreduce_reveal --mode mesh --op sum        (default P = 4)
//   11_allreduce_reveal --mode ring --op max -d 0,1,2,3,4 --cost
//   11_allreduce_reveal --mode auto -d 0-63 --explain-collectives
// `mode` picks the algorithm and fixes the signal shape: ring uses
// [2 * (NR - 1), NR] (never share one signal between two modes), the others
// [NR, 1]: recursive_doubling, rabenseifner and tree (the logarithmic
// allreduces), and auto, which runs the one of least modeled time.
// The call works in place on the window, so its result is re-bound. The
// builtin ring copes with uneven segments (960 elements at P = 7).
// Golden: y[r] = OP_k x[k] for every r, close.
#include <algorithm>
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <functional>
#include <string>

namespace {

constexpr std::int64_t SIZE = 960;
const pl::Dim NR = pl::dynamic("NR");

pld::ReduceOp parse_op(const std::string& op) {
  if (op == "max") return pld::ReduceOp::Max;
  if (op == "min") return pld::ReduceOp::Min;
  if (op == "prod") return pld::ReduceOp::Prod;
  return pld::ReduceOp::Sum;
}

pld::AllreduceMode parse_mode(const std::string& mode) {
  if (mode == "ring") return pld::AllreduceMode::Ring;
  if (mode == "recursive_doubling") return pld::AllreduceMode::RecursiveDoubling;
  if (mode == "rabenseifner") return pld::AllreduceMode::Rabenseifner;
  if (mode == "tree") return pld::AllreduceMode::Tree;
  if (mode == "auto") return pld::AllreduceMode::Auto;
  return pld::AllreduceMode::Mesh;
}

// The signal shape is the mode's: [NR, 1] for mesh, [2 * (NR - 1), NR] for ring.
pl::Shape signal_shape(pld::AllreduceMode mode) {
  if (mode == pld::AllreduceMode::Ring) return {2 * (NR - 1), NR};
  return {NR, 1};
}

pl::HostFunction make_program(pld::ReduceOp op, pld::AllreduceMode mode) {
  const pl::Shape sig = signal_shape(mode);
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "allreduce_kernel", params,
      [op, mode](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);  // stage
        data = pld::tensor::allreduce(data, signal, op, mode);           // re-bind the result
        y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params, [kernel](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        kernel(x, y, data, signal);
      });
  return pl::jit::host("allreduce_reveal",
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

double combine(pld::ReduceOp op, double a, double b) {
  switch (op) {
    case pld::ReduceOp::Max:
      return std::max(a, b);
    case pld::ReduceOp::Min:
      return std::min(a, b);
    case pld::ReduceOp::Prod:
      return a * b;
    default:
      return a + b;
  }
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  const pld::ReduceOp op = parse_op(opt.op);
  const pld::AllreduceMode mode = parse_mode(opt.mode);
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  const pl::HostFunction program = make_program(op, mode);
  anyp::CompiledProgram compiled = program.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double acc = x.at({0, 0, j});
    for (std::int64_t k = 1; k < P; ++k) acc = combine(op, acc, x.at({k, 0, j}));
    for (std::int64_t r = 0; r < P; ++r) expected.set_at({r, 0, j}, acc);
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "11_allreduce_reveal";
  spec.step = 11;
  spec.modes = {"mesh", "ring", "recursive_doubling", "rabenseifner", "tree", "auto"};
  spec.ops = {"sum", "max", "min", "prod"};
  spec.default_devices = {0, 1, 2, 3};
  return anyp::cli::run_example(argc, argv, spec, run);
}
