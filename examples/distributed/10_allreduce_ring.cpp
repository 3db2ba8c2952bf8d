// 10_allreduce_ring — all-reduce 3: a ring of 2(P-1) neighbour exchanges.
//
// The window `scratch` holds P chunks of C = SIZE / NR columns. In P-1
// reduce-scatter rounds every rank adds its left neighbour's partial chunk
// k = (r - s - 2 + P) % P into its own; after the last one, rank r holds chunk
// r complete. In P-1 all-gather rounds it copies chunk k = (r - s - 1 + P) % P
// from the left. Handshakes go to `right` only: one row per round of the
// [2(NR-1), NR] signal, and cell {row, r} of right's copy has a single writer
// (r) that moves it once, 0 -> 1. So each rank sends O(P) notifies, not
// O(P^2). C must be a whole number of 32 B units: P must divide
// SIZE / 8 = 120, checked before compiling (exit 2).
//   10_allreduce_ring                        (P = 4, devices 0,1,2,3)
//   10_allreduce_ring -d 0,1,2,3,4,5 --cost
// Golden: y[r] = sum_k x[k], close.
// Cost (N = 4 * SIZE = 3840 B): 2(P-1)/P * N in, as 2(P-1) RMA of N/P each;
// 2(P-1) notify (all to `right`) / 2(P-1) wait per rank; 2(P-1) sequential
// rounds.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <string>

namespace {

constexpr std::int64_t SIZE = 960;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension
const pl::Dim C = SIZE / NR;           // chunk width, resolved per P

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("scratch", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({2 * (NR - 1), NR}, pl::INT32))};

const auto ring_kernel = pl::jit::incore(
    "ring_kernel", kParams, [](pl::Value x, pl::Value y, pl::Value scratch, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(scratch);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      pl::Scalar left = (r + P - 1) % P;  // never (r - 1) % P: -1 at r = 0
      pl::Scalar right = (r + 1) % P;
      // 1. stage, and tell right that my chunks are ready for round 0.
      scratch = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, scratch);
      pld::system::notify(signal, right, {0, r}, 1, NotifyOp::AtomicAdd);
      // 2. reduce-scatter, rows 0..P-2: chunk k += left's chunk k.
      pl::range(P - 1, [&](pl::Scalar s) {
        pl::Scalar col = ((r - s - 2 + P) % P) * C;
        pld::system::wait(signal, {s, left}, 1, WaitCmp::Ge);
        pl::Tile sum = pl::add(pl::load(scratch, {0, col}, {1, C}),
                               pld::tile::remote_load(scratch, left, {0, col}, {1, C}));
        scratch = pl::store(sum, {0, col}, scratch);
        // The last one (s = P-2) announces row P-1, the first all-gather row.
        pld::system::notify(signal, right, {s + 1, r}, 1, NotifyOp::AtomicAdd);
      });
      // 3. all-gather, rows P-1..2P-3: chunk k = left's (complete) chunk k.
      pl::range(P - 1, [&](pl::Scalar s) {
        pl::Scalar row = P - 1 + s;
        pl::Scalar col = ((r - s - 1 + P) % P) * C;
        pld::system::wait(signal, {row, left}, 1, WaitCmp::Ge);
        scratch =
            pl::store(pld::tile::remote_load(scratch, left, {0, col}, {1, C}), {0, col}, scratch);
        pl::if_(s < P - 2, [&] {
          pld::system::notify(signal, right, {row + 1, r}, 1, NotifyOp::AtomicAdd);
        });
      });
      // 4. stage out.
      y = pl::store(pl::load(scratch, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

// The per-device orchestration: forwards its arguments to the kernel.
const auto per_rank = pl::jit::orchestration(
    "per_rank", kParams, [](pl::Value x, pl::Value y, pl::Value scratch, pl::Value signal) {
      ring_kernel(x, y, scratch, signal);
    });

const pl::HostFunction allreduce_ring = pl::jit::host(
    "allreduce_ring",
    {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
     pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
    [](pl::Value x, pl::Value y) {
      auto scratch_buf = pld::alloc_window_buffer("scratch", {1, SIZE}, pl::FP32);
      auto signal_buf = pld::alloc_window_buffer("signal", {2 * (NR - 1), NR}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank(x[r], y[r], pld::window(scratch_buf, {1, SIZE}, pl::FP32),
                 pld::window(signal_buf, {2 * (NR - 1), NR}, pl::INT32), pl::device(r));
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
  anyp::CompiledProgram compiled = allreduce_ring.compile({x, y}, opt.config());
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
  spec.name = "10_allreduce_ring";
  spec.step = 10;
  spec.default_devices = {0, 1, 2, 3};
  return anyp::cli::run_example(argc, argv, spec, run);
}
