// 16_putting_it_together — broadcast, mesh all-reduce and all-gather in one
// kernel, then local math.
//
// The root broadcasts its weight row w; every rank all-reduces its x (mesh,
// Sum) and all-gathers every rank's x, then scales each gathered row by the
// broadcast weights. Every rank calls each collective unconditionally and in
// the same order; only the root's staging is conditional. The builtin
// collectives clear their signals again (the credit protocol, docs/design.md
// §11), so in `shared` mode one [NR, 1] signal serves all three calls; in
// `separate` mode each call has its own [NR, 1] signal.
// Only row ROOT of w holds the weights: the other rows are decoys, so a rank
// that used its own w row instead of the broadcast copy fails the check.
//   16_putting_it_together                           (shared, P = 2)
//   16_putting_it_together -d 0,1,2,3 --mode separate --cost
// Golden: allred[r] = sum_k x[k] and gathered[r] = concat_k (x[k] * w[ROOT]),
// both close.
// Cost (S = 256 B): a non-root takes S + (P-1) * S + (P-1) * S = (2P-1) * S in
// and sends (P-1) * S out as puts; P RMA loads plus P-1 puts; 4 barriers
// (1 + 2 + 1): 4(P-1) notify (+E 3(P-1)), 4 rounds. The last (P-1) * S in
// arrives by the peers' all-gather puts (--cost counts a push as out for the
// sender and in for the receiver).
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
constexpr std::int64_t ROOT = 0;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

// The kernel body; in shared mode all three signals are the same window.
void together(const pl::Value& x, const pl::Value& w, pl::Value& allred, pl::Value& gathered,
              pl::Value& w_data, pl::Value& ar_data, pl::Value& ag_data, const pl::Value& sig_b,
              const pl::Value& sig_ar, const pl::Value& sig_ag) {
  auto ctx = pld::get_comm_ctx(ar_data);
  pl::Scalar r = pld::rank(ctx);
  pl::Scalar P = pld::nranks(ctx);
  // 1. broadcast the root's weights; load them only after the call.
  pl::if_(r == ROOT, [&] { w_data = pl::store(pl::load(w, {0, 0}, {1, SIZE}), {0, 0}, w_data); });
  w_data = pld::tensor::broadcast(w_data, sig_b, ROOT);
  pl::Tile wt = pl::load(w_data, {0, 0}, {1, SIZE});
  // 2. mesh all-reduce of x.
  ar_data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, ar_data);
  ar_data = pld::tensor::allreduce(ar_data, sig_ar, pld::ReduceOp::Sum, pld::AllreduceMode::Mesh);
  allred = pl::store(pl::load(ar_data, {0, 0}, {1, SIZE}), {0, 0}, allred);
  // 3. all-gather of x (the plain tensor is the source).
  ag_data = pld::tensor::allgather(x, ag_data, sig_ag);
  // 4. local math: gathered row s = x[s] * w[ROOT].
  pl::range(P, [&](pl::Scalar s) {
    gathered =
        pl::store(pl::mul(pl::load(ag_data, {s, 0}, {1, SIZE}), wt), {0, s * SIZE}, gathered);
  });
}

pl::HostFunction make_program(bool shared) {
  std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::In("w", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::Out("allred", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::Out("gathered", pl::Tensor({1, NR * SIZE}, pl::FP32)),
      pl::InOut("w_data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
      pl::InOut("ar_data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
      pl::InOut("ag_data", pld::DistributedTensor({NR, SIZE}, pl::FP32))};
  const pl::Shape sig_shape = {NR, 1};
  if (shared) {
    params.push_back(pl::InOut("sig", pld::DistributedTensor(sig_shape, pl::INT32)));
    const auto kernel =
        pl::jit::incore("together_shared", params,
                        [](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered,
                           pl::Value w_data, pl::Value ar_data, pl::Value ag_data, pl::Value sig) {
                          together(x, w, allred, gathered, w_data, ar_data, ag_data, sig, sig, sig);
                        });
    const auto per_rank = pl::jit::orchestration(
        "per_rank", params,
        [kernel](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered, pl::Value w_data,
                 pl::Value ar_data, pl::Value ag_data,
                 pl::Value sig) { kernel(x, w, allred, gathered, w_data, ar_data, ag_data, sig); });
    return pl::jit::host(
        "together_shared",
        {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
         pl::In("w", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
         pl::Out("allred", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
         pl::Out("gathered", pl::Tensor({NR, 1, NR * SIZE}, pl::FP32))},
        [per_rank, sig_shape](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered) {
          auto w_buf = pld::alloc_window_buffer("w_data", {1, SIZE}, pl::FP32);
          auto ar_buf = pld::alloc_window_buffer("ar_data", {1, SIZE}, pl::FP32);
          auto ag_buf = pld::alloc_window_buffer("ag_data", {NR, SIZE}, pl::FP32);
          auto sig_buf = pld::alloc_window_buffer("sig", sig_shape, pl::INT32);
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            per_rank(x[r], w[r], allred[r], gathered[r], pld::window(w_buf, {1, SIZE}, pl::FP32),
                     pld::window(ar_buf, {1, SIZE}, pl::FP32),
                     pld::window(ag_buf, {NR, SIZE}, pl::FP32),
                     pld::window(sig_buf, sig_shape, pl::INT32), pl::device(r));
          });
        });
  }
  params.push_back(pl::InOut("sig_b", pld::DistributedTensor(sig_shape, pl::INT32)));
  params.push_back(pl::InOut("sig_ar", pld::DistributedTensor(sig_shape, pl::INT32)));
  params.push_back(pl::InOut("sig_ag", pld::DistributedTensor(sig_shape, pl::INT32)));
  const auto kernel = pl::jit::incore(
      "together_separate", params,
      [](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered, pl::Value w_data,
         pl::Value ar_data, pl::Value ag_data, pl::Value sig_b, pl::Value sig_ar,
         pl::Value sig_ag) {
        together(x, w, allred, gathered, w_data, ar_data, ag_data, sig_b, sig_ar, sig_ag);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered, pl::Value w_data,
               pl::Value ar_data, pl::Value ag_data, pl::Value sig_b, pl::Value sig_ar,
               pl::Value sig_ag) {
        kernel(x, w, allred, gathered, w_data, ar_data, ag_data, sig_b, sig_ar, sig_ag);
      });
  return pl::jit::host(
      "together_separate",
      {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::In("w", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("allred", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("gathered", pl::Tensor({NR, 1, NR * SIZE}, pl::FP32))},
      [per_rank, sig_shape](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered) {
        auto w_buf = pld::alloc_window_buffer("w_data", {1, SIZE}, pl::FP32);
        auto ar_buf = pld::alloc_window_buffer("ar_data", {1, SIZE}, pl::FP32);
        auto ag_buf = pld::alloc_window_buffer("ag_data", {NR, SIZE}, pl::FP32);
        auto sig_b_buf = pld::alloc_window_buffer("sig_b", sig_shape, pl::INT32);
        auto sig_ar_buf = pld::alloc_window_buffer("sig_ar", sig_shape, pl::INT32);
        auto sig_ag_buf = pld::alloc_window_buffer("sig_ag", sig_shape, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(x[r], w[r], allred[r], gathered[r], pld::window(w_buf, {1, SIZE}, pl::FP32),
                   pld::window(ar_buf, {1, SIZE}, pl::FP32),
                   pld::window(ag_buf, {NR, SIZE}, pl::FP32),
                   pld::window(sig_b_buf, sig_shape, pl::INT32),
                   pld::window(sig_ar_buf, sig_shape, pl::INT32),
                   pld::window(sig_ag_buf, sig_shape, pl::INT32), pl::device(r));
        });
      });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor w = gen.uniform({P, 1, SIZE});  // row ROOT: the weights; others: decoys
  anyp::HostTensor allred = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor gathered = anyp::HostTensor::zeros({P, 1, P * SIZE}, pl::FP32);
  const pl::HostFunction program = make_program(opt.mode == "shared");
  anyp::CompiledProgram compiled = program.compile({x, w, allred, gathered}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, w, allred, gathered);
  // The goldens, in double.
  anyp::HostTensor expected_allred = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::HostTensor expected_gathered = anyp::HostTensor::zeros({P, 1, P * SIZE}, pl::FP32);
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < P; ++r) {
      expected_allred.set_at({r, 0, j}, sum);
      for (std::int64_t k = 0; k < P; ++k) {
        expected_gathered.set_at({r, 0, k * SIZE + j}, x.at({k, 0, j}) * w.at({ROOT, 0, j}));
      }
    }
  }
  return anyp::cli::report({anyp::cli::check_close("allred", allred, expected_allred, P),
                            anyp::cli::check_close("gathered", gathered, expected_gathered, P)},
                           opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "16_putting_it_together";
  spec.step = 16;
  spec.modes = {"shared", "separate"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
