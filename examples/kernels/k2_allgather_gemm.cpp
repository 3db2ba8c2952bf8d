// k2_allgather_gemm — AllGather + GEMM with overlap (the column-parallel
// linear after a sequence-parallel layer, FLUX / Triton-distributed's
// headline kernel): C_r = gather_q(A_q) @ B_r, where rank q holds the rows
// A_q [MP, K] of A and rank r its weight shard B_r [K, NP].
//
// The lesson: do not wait for the whole gather. Each rank first pushes its
// rows to every peer (a put into row block r of the peer's `gathered`
// window, then a Set of the peer's signal cell r), multiplies its OWN rows
// while the others are in flight, and then, for each peer q, waits on cell q
// alone and multiplies chunk q as soon as it has landed. Signal cell q
// protects rows [q*MP, (q+1)*MP) of `gathered`: it is set by the one rank
// that writes them, after the put, and read before the load. Peers send in
// ring order (rank q's step s goes to q + s), and rank r waits in the same
// order (step s: q = r - s), so the chunk waited for is the one due next.
// --mode bulk is the same product after the builtin allgather: compare the
// two with --timeline (docs/kernels.md walks through both).
//
//   k2_allgather_gemm                         (overlap, P = 2)
//   k2_allgather_gemm -d 0,1,2,3 --mode bulk --timeline
// No P constraint: A grows with P (MP rows per rank).
// Golden: C_r = A B_r on the host in double, every rank.
// Cost (overlap): (P-1) puts of MP*K*4 = 4 KiB out per rank, P-1 notifies,
// 1 round.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t MP = 16;  // rows of A per rank
constexpr std::int64_t K = 64;
constexpr std::int64_t NP = 32;  // columns of this rank's weight shard
const pl::Dim NR = pl::dynamic("NR");

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("a", pl::Tensor({MP, K}, pl::FP32)), pl::In("b", pl::Tensor({K, NP}, pl::FP32)),
    pl::Out("c", pl::Tensor({NR * MP, NP}, pl::FP32)),
    pl::InOut("gathered", pld::DistributedTensor({NR * MP, K}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto overlapped = pl::jit::incore(
    "allgather_gemm_overlap", kParams,
    [](pl::Value a, pl::Value b, pl::Value c, pl::Value gathered, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(gathered);
      const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
      // 1. Push my rows to every peer, each followed by the Set of its cell r.
      pl::range(1, P, [&](pl::Scalar s) {
        const pl::Scalar peer = (r + s) % P;
        pld::tensor::put(gathered, peer, a, {r * MP, 0}, {0, 0}, {MP, K});
        pld::system::notify(signal, peer, {r, 0}, 1, NotifyOp::Set);
      });
      const pl::Tile w = pl::load(b, {0, 0}, {K, NP});
      // 2. My own rows first: no wait, while the peers' rows are in flight.
      c = pl::store(pl::matmul(pl::load(a, {0, 0}, {MP, K}), w), {r * MP, 0}, c);
      // 3. Each peer's chunk as soon as its own cell says it has landed.
      pl::range(1, P, [&](pl::Scalar s) {
        const pl::Scalar q = (r - s + P) % P;
        pld::system::wait(signal, {q, 0}, 1, WaitCmp::Ge);
        c = pl::store(pl::matmul(pl::load(gathered, {q * MP, 0}, {MP, K}), w), {q * MP, 0}, c);
      });
    });

const auto bulk = pl::jit::incore(
    "allgather_gemm_bulk", kParams,
    [](pl::Value a, pl::Value b, pl::Value c, pl::Value gathered, pl::Value signal) {
      // The whole gather first (the builtin: P puts and a barrier), then one GEMM.
      gathered = pld::tensor::allgather(a, gathered, signal);
      c = pl::store(
          pl::matmul(pl::load(gathered, {0, 0}, {NR * MP, K}), pl::load(b, {0, 0}, {K, NP})),
          {0, 0}, c);
    });

pl::HostFunction make_host(const char* name, const pl::Function& kernel) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host(
      name,
      {pl::In("a", pl::Tensor({NR, MP, K}, pl::FP32)),
       pl::In("b", pl::Tensor({NR, K, NP}, pl::FP32)),
       pl::Out("c", pl::Tensor({NR, NR * MP, NP}, pl::FP32))},
      [per_rank](pl::Value a, pl::Value b, pl::Value c) {
        auto gathered = pld::alloc_window_buffer("gathered", {NR * MP, K}, pl::FP32);
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(a[r], b[r], c[r], pld::window(gathered, {NR * MP, K}, pl::FP32),
                   pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
}

const pl::HostFunction overlap_program = make_host("allgather_gemm_overlap", overlapped);
const pl::HostFunction bulk_program = make_host("allgather_gemm_bulk", bulk);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  const anyp::HostTensor a = gen.uniform({P, MP, K}), b = gen.uniform({P, K, NP});
  anyp::HostTensor c = anyp::HostTensor::zeros({P, P * MP, NP}, pl::FP32);
  const pl::HostFunction& program = opt.mode == "bulk" ? bulk_program : overlap_program;
  anyp::CompiledProgram compiled = program.compile({a, b, c}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(a, b, c);
  // The golden: row i of the gathered A is row i % MP of rank i / MP's shard.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, P * MP, NP}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < P * MP; ++i)
      for (std::int64_t j = 0; j < NP; ++j) {
        double s = 0;
        for (std::int64_t k = 0; k < K; ++k) s += a.at({i / MP, i % MP, k}) * b.at({r, k, j});
        expected.set_at({r, i, j}, s);
      }
  return anyp::cli::report({anyp::cli::check_close("c", c, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k2_allgather_gemm";
  spec.step = 102;
  spec.modes = {"overlap", "bulk"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
