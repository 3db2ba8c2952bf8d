// k1_tp_mlp — a tensor-parallel MLP (Megatron's column-then-row split):
// y = relu(x @ W1) @ W2 with the hidden width F split over the P ranks.
//
// The lesson: two GEMMs need only ONE collective when the first weight is
// split by columns and the second by rows. Rank r holds W1's columns
// [r*F/P, (r+1)*F/P) and the same rows of W2, so relu(x @ W1_r) is exactly
// rank r's slice of the hidden activation (relu is elementwise: it commutes
// with the column split) and relu(x @ W1_r) @ W2_r is a full-size partial
// of y. One allreduce of the [M, H] partials gives every rank y. Nothing
// overlaps here: the two GEMMs are local, and the allreduce's own signal
// protocol (builtin, self-clearing) protects the partial window.
//
//   k1_tp_mlp                          (mesh allreduce, P = 2)
//   k1_tp_mlp -d 0,1,2,3,4 --mode ring --cost
// P constraint: the shard width F/P is a tile row, so F % (8*P) == 0 (F =
// 960: P must divide 120), checked before compiling.
// Golden: y[r] = relu(x W1) W2 for every r, computed on the host in double.
// Cost: the builtin allreduce's (steps 08 and 11): mesh (P-1) * 2 KiB out
// per rank; ring 2 (P-1)/P * 2 KiB.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <cmath>

namespace {

constexpr std::int64_t M = 8;    // tokens
constexpr std::int64_t H = 64;   // model width
constexpr std::int64_t F = 960;  // hidden width, split over the ranks
const pl::Dim NR = pl::dynamic("NR");
const pl::Dim FP = F / NR;  // this rank's shard of the hidden width

std::vector<pl::Param> params(bool ring) {
  return {
      pl::In("x", pl::Tensor({M, H}, pl::FP32)),
      pl::In("w1", pl::Tensor({H, FP}, pl::FP32)),
      pl::In("w2", pl::Tensor({FP, H}, pl::FP32)),
      pl::Out("y", pl::Tensor({M, H}, pl::FP32)),
      pl::InOut("partial", pld::DistributedTensor({M, H}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(
                              ring ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 1}, pl::INT32))};
}

pl::Function make_kernel(bool ring) {
  return pl::jit::incore(
      ring ? "tp_mlp_ring" : "tp_mlp_mesh", params(ring),
      [ring](pl::Value x, pl::Value w1, pl::Value w2, pl::Value y, pl::Value partial,
             pl::Value signal) {
        // Column-parallel GEMM and the activation: my slice of the hidden layer.
        const pl::Tile z =
            pl::relu(pl::matmul(pl::load(x, {0, 0}, {M, H}), pl::load(w1, {0, 0}, {H, FP})));
        // Row-parallel GEMM: a full-size partial of y.
        partial = pl::store(pl::matmul(z, pl::load(w2, {0, 0}, {FP, H})), {0, 0}, partial);
        // The one collective: sum the partials on every rank.
        partial =
            pld::tensor::allreduce(partial, signal, pld::ReduceOp::Sum,
                                   ring ? pld::AllreduceMode::Ring : pld::AllreduceMode::Mesh);
        y = pl::store(pl::load(partial, {0, 0}, {M, H}), {0, 0}, y);
      });
}

pl::HostFunction make_host(bool ring) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", make_kernel(ring));
  return pl::jit::host(
      ring ? "tp_mlp_ring" : "tp_mlp_mesh",
      {pl::In("x", pl::Tensor({NR, M, H}, pl::FP32)),
       pl::In("w1", pl::Tensor({NR, H, FP}, pl::FP32)),
       pl::In("w2", pl::Tensor({NR, FP, H}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, M, H}, pl::FP32))},
      [per_rank, ring](pl::Value x, pl::Value w1, pl::Value w2, pl::Value y) {
        const pl::Shape signal_shape = ring ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 1};
        auto partial_buf = pld::alloc_window_buffer("partial", {M, H}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal", signal_shape, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(x[r], w1[r], w2[r], y[r], pld::window(partial_buf, {M, H}, pl::FP32),
                   pld::window(signal_buf, signal_shape, pl::INT32), pl::device(r));
        });
      });
}

const pl::HostFunction tp_mlp_mesh = make_host(false);
const pl::HostFunction tp_mlp_ring = make_host(true);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  if (F % (8 * P) != 0) {
    throw anyp::cli::UsageError{"F=" + std::to_string(F) +
                                " cannot be split into 32-byte-aligned shards for P=" +
                                std::to_string(P) + ": need F % (8*P) == 0 (P must divide 120)"};
  }
  const std::int64_t Fp = F / P;
  // Centered inputs (relu clips about half of the hidden units).
  anyp::InputGenerator gen(opt.seed);
  const auto centered = [&](std::vector<std::int64_t> shape) {
    anyp::HostTensor t = gen.uniform(std::move(shape));
    for (std::int64_t i = 0; i < t.numel(); ++i) t.set(i, t.get(i) - 1.0);
    return t;
  };
  const anyp::HostTensor x1 = centered({M, H}), w1_full = centered({H, F}),
                         w2_full = centered({F, H});
  anyp::HostTensor x = anyp::HostTensor::zeros({P, M, H}, pl::FP32);
  anyp::HostTensor w1 = anyp::HostTensor::zeros({P, H, Fp}, pl::FP32);
  anyp::HostTensor w2 = anyp::HostTensor::zeros({P, Fp, H}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < M * H; ++i) x.set(r * M * H + i, x1.get(i));
    for (std::int64_t i = 0; i < H; ++i)
      for (std::int64_t j = 0; j < Fp; ++j) w1.set_at({r, i, j}, w1_full.at({i, r * Fp + j}));
    for (std::int64_t i = 0; i < Fp; ++i)
      for (std::int64_t j = 0; j < H; ++j) w2.set_at({r, i, j}, w2_full.at({r * Fp + i, j}));
  }
  anyp::HostTensor y = anyp::HostTensor::zeros({P, M, H}, pl::FP32);
  const pl::HostFunction& program = opt.mode == "ring" ? tp_mlp_ring : tp_mlp_mesh;
  anyp::CompiledProgram compiled = program.compile({x, w1, w2, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, w1, w2, y);
  // The golden, unsplit: relu(x W1) W2 in double.
  std::vector<double> hidden(static_cast<std::size_t>(M * F));
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t f = 0; f < F; ++f) {
      double s = 0;
      for (std::int64_t k = 0; k < H; ++k) s += x1.at({i, k}) * w1_full.at({k, f});
      hidden[static_cast<std::size_t>(i * F + f)] = std::max(s, 0.0);
    }
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, M, H}, pl::FP32);
  for (std::int64_t i = 0; i < M; ++i)
    for (std::int64_t j = 0; j < H; ++j) {
      double s = 0;
      for (std::int64_t f = 0; f < F; ++f)
        s += hidden[static_cast<std::size_t>(i * F + f)] * w2_full.at({f, j});
      for (std::int64_t r = 0; r < P; ++r) expected.set_at({r, i, j}, s);
    }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k1_tp_mlp";
  spec.step = 101;
  spec.modes = {"mesh", "ring"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
