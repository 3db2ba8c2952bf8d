// 13_allgather — every rank publishes one row; every rank assembles all rows.
//
// hand (pull): rank r stores its x into row r of its [NR, SIZE] window, joins
// the hand-rolled barrier (hbar), then pulls row p from rank p into columns
// [p*SIZE, (p+1)*SIZE) of y, for every p (a local read when p == r).
// builtin (push): pld::tensor::allgather(x, data, signal) puts my x into row r
// of every rank's window (P puts, one of them local), then runs one barrier.
// Its source must be a buffer separate from the target: the plain tensor x.
//   13_allgather                              (hand, P = 2)
//   13_allgather -d 0,1,2,3 --mode builtin --cost
// Golden: y[r] = concat_k x[k] for every r, exact.
// Cost (S = 256 B, N = P * S): hand (P-1)/P * N in as P-1 RMA loads, P-1
// notify, 1 round; builtin (P-1)/P * N out as P-1 puts (plus a local
// self-put), P-1 notify (+E P-1), 1 round.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, NR* SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({NR, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto hand_allgather = pl::jit::incore(
    "hand_allgather", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      // 1. publish my row in row r of my window.
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {r, 0}, data);
      // 2. hbar(signal): every row is published.
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] { pld::system::notify(signal, p, {r, 0}, 1, NotifyOp::AtomicAdd); });
      });
      pl::range(P, [&](pl::Scalar s) {
        pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, WaitCmp::Ge); });
      });
      // 3. row p comes from rank p and lands at column p * SIZE.
      pl::range(P, [&](pl::Scalar p) {
        y = pl::store(pld::tile::remote_load(data, p, {p, 0}, {1, SIZE}), {0, p * SIZE}, y);
      });
    });

const auto builtin_allgather = pl::jit::incore(
    "builtin_allgather", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar P = pld::nranks(ctx);
      data = pld::tensor::allgather(x, data, signal);  // source: the plain tensor x
      pl::range(P, [&](pl::Scalar p) {
        y = pl::store(pl::load(data, {p, 0}, {1, SIZE}), {0, p * SIZE}, y);
      });
    });

// The per-device orchestrations: forward their arguments to the kernels.
const auto per_rank_hand = pl::jit::orchestration(
    "per_rank_hand", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      hand_allgather(x, y, data, signal);
    });

const auto per_rank_builtin = pl::jit::orchestration(
    "per_rank_builtin", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      builtin_allgather(x, y, data, signal);
    });

pl::HostFunction make_host(const char* name, const pl::Function& per_rank) {
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, NR * SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {NR, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {NR, SIZE}, pl::FP32),
                                    pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

const pl::HostFunction allgather_hand = make_host("allgather_hand", per_rank_hand);
const pl::HostFunction allgather_builtin = make_host("allgather_builtin", per_rank_builtin);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, P * SIZE}, pl::FP32);
  const pl::HostFunction& program = opt.mode == "builtin" ? allgather_builtin : allgather_hand;
  anyp::CompiledProgram compiled = program.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden: every rank holds all rows, in rank order.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, P * SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t k = 0; k < P; ++k) {
      for (std::int64_t j = 0; j < SIZE; ++j) {
        expected.set_at({r, 0, k * SIZE + j}, x.at({k, 0, j}));
      }
    }
  }
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "13_allgather";
  spec.step = 13;
  spec.modes = {"hand", "builtin"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
