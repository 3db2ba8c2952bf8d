// k7_multi_block — a kernel over several blocks of each rank (pl::blocks,
// PyPTO's pl.spmd), then a host allreduce over as many blocks
// (pld::core_num).
//
// The lesson: a rank is more than one core. pl::blocks(n) launches an
// incore kernel on n blocks of the rank at once; they share the rank's
// windows and tensors and tell themselves apart by pl::get_block_idx() and
// pl::get_block_num(), so a kernel deals its tiles out block-cyclically
// (tile j to block j mod n) and every block works on its own tiles. The
// call returns when every block has finished. A host collective given
// pld::core_num(n) runs the same way: block b of every rank reduces the
// tiles j = b (mod n) and synchronises on its own lane, column b of an
// [NR, S] signal (S >= n), so the blocks' barriers never wait for each
// other. Modeled time (--timeline) gives every block its own core: the
// blocks' tile math and pulls overlap, and the trace (--trace) shows one
// track per block.
//
//   k7_multi_block -d 0,1,2,3 --timeline              (4 blocks per rank)
//   k7_multi_block -d 0,1,2,3 --mode one --timeline   (one block: the baseline)
// Golden: y[r] = Σ_q (x[q]² + 1) on every rank, in double.
// Cost (per rank, N FP32 elements): bytes_in 4N (P - 1) in both modes; the
// blocks split the pulls, not their sum.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t N = 65536;    // elements per rank: 256 KiB, 16 chunks of 16 KiB
constexpr std::int64_t kTile = 256;  // the kernel's unit of work
constexpr std::int64_t kBlocks = 4;
const pl::Dim NR = pl::dynamic("NR");

// data = x² + 1, tile by tile: block b takes the tiles b, b + n, b + 2n, ...
const pl::Function square_plus_one = pl::jit::incore(
    "square_plus_one",
    {pl::In("x", pl::Tensor({1, N}, pl::FP32)),
     pl::Out("data", pld::DistributedTensor({1, N}, pl::FP32))},
    [](pl::Value x, pl::Value data) {
      pl::range(pl::get_block_idx(), N / kTile, pl::get_block_num(), [&](pl::Scalar j) {
        const pl::Tile t = pl::load(x, {0, j * kTile}, {1, kTile});
        data = pl::store(pl::add(pl::mul(t, t), 1.0), {0, j * kTile}, data);
      });
    });

const pl::Function copy_out =
    pl::jit::incore("copy_out",
                    {pl::In("data", pld::DistributedTensor({1, N}, pl::FP32)),
                     pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
                    [](pl::Value data, pl::Value y) {
                      y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
                    });

pl::HostFunction make_program(std::int64_t blocks) {
  const pl::Function compute = pl::jit::orchestration_for(
      blocks > 1 ? "compute_blocks" : "compute_one", square_plus_one, pl::blocks(blocks));
  const pl::Function finish = pl::jit::orchestration_for("finish", copy_out);
  return pl::jit::host(blocks > 1 ? "multi_block" : "one_block",
                       {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                       [=](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {1, N}, pl::FP32);
                         // A lane (column) per block.
                         auto signal = pld::alloc_window_buffer("signal", {NR, blocks}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           compute(x[r], pld::window(data, {1, N}, pl::FP32), pl::device(r));
                         });
                         const pl::Value view = pld::window(data, {1, N}, pl::FP32);
                         const pl::Value lanes = pld::window(signal, {NR, blocks}, pl::INT32);
                         if (blocks > 1) {
                           pld::tensor::allreduce(view, lanes, pld::core_num(blocks));
                         } else {
                           pld::tensor::allreduce(view, lanes);
                         }
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           finish(pld::window(data, {1, N}, pl::FP32), y[r], pl::device(r));
                         });
                       });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  const anyp::HostTensor x = gen.uniform({P, 1, N});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
  static const pl::HostFunction multi = make_program(kBlocks), one = make_program(1);
  anyp::CompiledProgram compiled = (opt.mode == "one" ? one : multi).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
  for (std::int64_t i = 0; i < N; ++i) {
    double sum = 0;
    for (std::int64_t r = 0; r < P; ++r) {
      const double v = x.get(r * N + i);
      sum += v * v + 1;
    }
    for (std::int64_t r = 0; r < P; ++r) expected.set(r * N + i, sum);
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k7_multi_block";
  spec.step = 107;
  spec.modes = {"blocks", "one"};
  spec.default_devices = {0, 1, 2, 3};
  return anyp::cli::run_example(argc, argv, spec, run);
}
