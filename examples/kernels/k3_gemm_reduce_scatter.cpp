// k3_gemm_reduce_scatter — GEMM + ReduceScatter with overlap (the
// row-parallel linear before a sequence-parallel layer): every rank r holds
// a K-shard A_r [M, KP] of the activations and the matching rows B_r [KP, N]
// of the weight; C = sum_r A_r B_r, and rank d keeps only its row block
// C[d*MD .. (d+1)*MD) — the reduce-scatter of the P partial products.
//
// The lesson: send each partial block the moment it is computed. Rank r
// computes the block that rank d = r+1, r+2, ... needs, writes it straight
// from the tile into slot r of rank d's `recv` window (remote_store: no
// staging copy) and Sets rank d's signal cell r; meanwhile it computes the
// next block. Its own block comes last, and then it adds the P-1 partials
// it received, waiting on each slot's cell only when it needs that slot.
// Signal cell s protects slot s (rows [s*MD, (s+1)*MD) of `recv`): one
// writer (rank s), one Set after the write, one wait before the read.
// --mode bulk computes the whole [M, N] partial first and runs the builtin
// reduce_scatter on it.
//
//   k3_gemm_reduce_scatter                      (overlap, P = 2)
//   k3_gemm_reduce_scatter -d 0,1,2,3,4 --mode bulk --cost
// No P constraint: M grows with P (MD rows per rank).
// Golden: C[d] = sum_r A_r B_r rows of block d, on the host in double.
// Cost (overlap): P-1 remote stores of MD*N*4 = 1 KiB out per rank, P-1
// notifies, 1 round.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t MD = 8;   // rows of C each rank keeps
constexpr std::int64_t KP = 32;  // this rank's shard of the inner dim
constexpr std::int64_t N = 32;
const pl::Dim NR = pl::dynamic("NR");

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("a", pl::Tensor({NR * MD, KP}, pl::FP32)), pl::In("b", pl::Tensor({KP, N}, pl::FP32)),
    pl::Out("c", pl::Tensor({MD, N}, pl::FP32)),
    pl::InOut("recv", pld::DistributedTensor({NR * MD, N}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto overlapped =
    pl::jit::incore("gemm_rs_overlap", kParams,
                    [](pl::Value a, pl::Value b, pl::Value c, pl::Value recv, pl::Value signal) {
                      auto ctx = pld::get_comm_ctx(recv);
                      const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
                      const pl::Tile w = pl::load(b, {0, 0}, {KP, N});
                      // 1. The peers' blocks, each sent as soon as it is computed.
                      pl::range(1, P, [&](pl::Scalar s) {
                        const pl::Scalar d = (r + s) % P;
                        const pl::Tile part = pl::matmul(pl::load(a, {d * MD, 0}, {MD, KP}), w);
                        pld::tile::remote_store(part, recv, d, {r * MD, 0});
                        pld::system::notify(signal, d, {r, 0}, 1, NotifyOp::Set);
                      });
                      // 2. My own block, then the partials the peers sent me (rank r - s
                      //    sent its at its step s, so that is the order they are due).
                      pl::Tile acc = pl::matmul(pl::load(a, {r * MD, 0}, {MD, KP}), w);
                      pl::range(1, P, [&](pl::Scalar s) {
                        const pl::Scalar q = (r - s + P) % P;
                        pld::system::wait(signal, {q, 0}, 1, WaitCmp::Ge);
                        acc = pl::add(acc, pl::load(recv, {q * MD, 0}, {MD, N}));
                      });
                      c = pl::store(acc, {0, 0}, c);
                    });

const std::vector<pl::Param> kBulkParams = {
    pl::In("a", pl::Tensor({NR * MD, KP}, pl::FP32)), pl::In("b", pl::Tensor({KP, N}, pl::FP32)),
    pl::Out("c", pl::Tensor({MD, N}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({NR, MD* N}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto bulk = pl::jit::incore(
    "gemm_rs_bulk", kBulkParams,
    [](pl::Value a, pl::Value b, pl::Value c, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      const pl::Scalar r = pld::rank(ctx);
      // The whole partial product, one row of `data` per destination block.
      const pl::Tile part =
          pl::matmul(pl::load(a, {0, 0}, {NR * MD, KP}), pl::load(b, {0, 0}, {KP, N}));
      data = pl::store(pl::reshape(part, {NR, MD * N}), {0, 0}, data);
      data = pld::tensor::reduce_scatter(data, signal);
      c = pl::store(pl::reshape(pl::load(data, {r, 0}, {1, MD * N}), {MD, N}), {0, 0}, c);
    });

pl::HostFunction make_host(const char* name, const pl::Function& kernel, bool is_bulk) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host(
      name,
      {pl::In("a", pl::Tensor({NR, NR * MD, KP}, pl::FP32)),
       pl::In("b", pl::Tensor({NR, KP, N}, pl::FP32)),
       pl::Out("c", pl::Tensor({NR, MD, N}, pl::FP32))},
      [per_rank, is_bulk](pl::Value a, pl::Value b, pl::Value c) {
        const pl::Shape shape = is_bulk ? pl::Shape{NR, MD * N} : pl::Shape{NR * MD, N};
        auto buf = pld::alloc_window_buffer(is_bulk ? "data" : "recv", shape, pl::FP32);
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(a[r], b[r], c[r], pld::window(buf, shape, pl::FP32),
                   pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
}

const pl::HostFunction overlap_program = make_host("gemm_rs_overlap", overlapped, false);
const pl::HostFunction bulk_program = make_host("gemm_rs_bulk", bulk, true);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  const anyp::HostTensor a = gen.uniform({P, P * MD, KP}), b = gen.uniform({P, KP, N});
  anyp::HostTensor c = anyp::HostTensor::zeros({P, MD, N}, pl::FP32);
  const bool is_bulk = opt.mode == "bulk";
  anyp::CompiledProgram compiled =
      (is_bulk ? bulk_program : overlap_program).compile({a, b, c}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(a, b, c);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, MD, N}, pl::FP32);
  for (std::int64_t d = 0; d < P; ++d)
    for (std::int64_t i = 0; i < MD; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (std::int64_t r = 0; r < P; ++r)
          for (std::int64_t k = 0; k < KP; ++k) s += a.at({r, d * MD + i, k}) * b.at({r, k, j});
        expected.set_at({d, i, j}, s);
      }
  return anyp::cli::report({anyp::cli::check_close("c", c, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k3_gemm_reduce_scatter";
  spec.step = 103;
  spec.modes = {"overlap", "bulk"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
