// 09_allreduce_two_phase — all-reduce 2: reduce-scatter, then all-gather.
//
// Rank r owns chunk r, columns [r*C, (r+1)*C) with C = SIZE / NR: it pulls
// chunk r from every peer and reduces it into its `result` window (phase 1),
// then every rank pulls chunk c from its owner c (phase 2). That moves about
// half of mesh's bytes. Each barrier round gets its own row of the [2, NR]
// signal (hand-rolled barriers are monotonic: one row serves one barrier).
// C is a tile shape and an RMA offset, so it must be a whole number of 32 B
// units: P must divide SIZE / 8 = 120, checked before compiling (exit 2).
//   09_allreduce_two_phase                   (P = 4, devices 0,1,2,3)
//   09_allreduce_two_phase -d 0,1,2,3,4,5 --cost
// Golden: y[r] = sum_k x[k], close.
// Cost (N = 4 * SIZE = 3840 B): 2(P-1)/P * N in, as 2(P-1) RMA of N/P each;
// 2(P-1) notify / 2(P-1) wait per rank; 2 rounds.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <string>

namespace {

constexpr std::int64_t SIZE = 960;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension
const pl::Dim C = SIZE / NR;           // chunk width, resolved per P

using pld::NotifyOp;
using pld::WaitCmp;

// hbar(signal, row) on a [rows, NR] signal: my cell is {row, r}.
void hbar(const pl::Value& signal, std::int64_t row, const pl::Scalar& r, const pl::Scalar& P) {
  pl::range(P, [&](pl::Scalar p) {
    pl::if_(p != r, [&] { pld::system::notify(signal, p, {row, r}, 1, NotifyOp::AtomicAdd); });
  });
  pl::range(P, [&](pl::Scalar s) {
    pl::if_(s != r, [&] { pld::system::wait(signal, {row, s}, 1, WaitCmp::Ge); });
  });
}

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("result", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({2, NR}, pl::INT32))};

const auto two_phase_kernel = pl::jit::incore(
    "two_phase_kernel", kParams,
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value result, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      pl::Scalar mine = r * C;  // my chunk's first column
      // 1. stage, 2. everyone has staged (row 0).
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
      hbar(signal, 0, r, P);
      // 3. reduce-scatter: chunk r over all ranks, into my result window.
      pl::Tile acc = pl::load(data, {0, mine}, {1, C});
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] {
          acc = pl::add(acc, pld::tile::remote_load(data, p, {0, mine}, {1, C}));
        });
      });
      result = pl::store(acc, {0, mine}, result);
      // 4. every reduced chunk is ready (row 1: a fresh row for a new barrier).
      hbar(signal, 1, r, P);
      // 5. all-gather: chunk c from its owner c (a local read when c == r).
      pl::range(P, [&](pl::Scalar c) {
        pl::Scalar col = c * C;
        y = pl::store(pld::tile::remote_load(result, c, {0, col}, {1, C}), {0, col}, y);
      });
    });

// The per-device orchestration: forwards its arguments to the kernel.
const auto per_rank =
    pl::jit::orchestration("per_rank", kParams,
                           [](pl::Value x, pl::Value y, pl::Value data, pl::Value result,
                              pl::Value signal) { two_phase_kernel(x, y, data, result, signal); });

const pl::HostFunction allreduce_two_phase =
    pl::jit::host("allreduce_two_phase",
                  {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                    auto result_buf = pld::alloc_window_buffer("result", {1, SIZE}, pl::FP32);
                    auto signal_buf = pld::alloc_window_buffer("signal", {2, NR}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                               pld::window(result_buf, {1, SIZE}, pl::FP32),
                               pld::window(signal_buf, {2, NR}, pl::INT32), pl::device(r));
                    });
                  });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  // Checked before compiling, --compile-only included (docs/ladder-steps.md §3).
  if (SIZE % (8 * P) != 0) {
    throw anyp::cli::UsageError{"SIZE=" + std::to_string(SIZE) +
                                " cannot be split into 32-byte-aligned chunks for P=" +
                                std::to_string(P) + ": need SIZE % (8*P) == 0 (P must divide 120)"};
  }
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = allreduce_two_phase.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, in double: every rank holds the sum over all ranks.
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
  spec.name = "09_allreduce_two_phase";
  spec.step = 9;
  spec.default_devices = {0, 1, 2, 3};
  return anyp::cli::run_example(argc, argv, spec, run);
}
