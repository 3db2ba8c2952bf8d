// 15_all_to_all — a personalized exchange: a distinct chunk for every peer.
//
// Row d of rank r's x is the chunk for rank d; it lands in row r of rank d's
// window (the MoE dispatch/combine pattern). hand: one region put per
// destination (myself included), then a barrier whose cells each have a
// single writer, so a Set notify is legal; then every row is copied out.
// builtin: pld::tensor::all_to_all(x, data, signal), whose source (the plain
// tensor x) and target (the window) are distinct buffers, as they must be.
//   15_all_to_all                              (hand, P = 2)
//   15_all_to_all -d 0,1,2,3 --mode builtin --cost
// Golden: y[r][s] = x[s][r] (the first two dimensions transposed), exact.
// Cost (S = 256 B, N = P * S): (P-1)/P * N out as P-1 puts, and (P-1)/P * N
// in, which arrives by the peers' puts (--cost counts a push as out for the
// sender and in for the receiver); P-1 notify per rank (+E P-1 in builtin
// mode); 1 round.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({NR, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({NR, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({NR, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

// Row s of my window (rank s's chunk for me) into row s of y.
void copy_rows_out(const pl::Value& data, pl::Value& y, const pl::Scalar& P) {
  pl::range(P, [&](pl::Scalar s) { y = pl::store(pl::load(data, {s, 0}, {1, SIZE}), {s, 0}, y); });
}

const auto hand_all_to_all = pl::jit::incore(
    "hand_all_to_all", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      // 1. my row d goes to row r of rank d's window (d == r included).
      pl::range(P, [&](pl::Scalar d) {
        pld::tensor::put(data, d, x, {r, 0}, {d, 0}, {1, SIZE}, pld::AtomicType::None);
      });
      // 2. barrier: cell {r, 0} of each peer has one writer (me), so Set works.
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] { pld::system::notify(signal, p, {r, 0}, 1, NotifyOp::Set); });
      });
      pl::range(P, [&](pl::Scalar s) {
        pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, WaitCmp::Ge); });
      });
      // 3. read back only after the barrier.
      copy_rows_out(data, y, P);
    });

const auto builtin_all_to_all = pl::jit::incore(
    "builtin_all_to_all", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar P = pld::nranks(ctx);
      data = pld::tensor::all_to_all(x, data, signal);
      copy_rows_out(data, y, P);
    });

// The per-device orchestrations: forward their arguments to the kernels.
const auto per_rank_hand = pl::jit::orchestration(
    "per_rank_hand", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      hand_all_to_all(x, y, data, signal);
    });

const auto per_rank_builtin = pl::jit::orchestration(
    "per_rank_builtin", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      builtin_all_to_all(x, y, data, signal);
    });

pl::HostFunction make_host(const char* name, const pl::Function& per_rank) {
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, NR, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, NR, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {NR, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {NR, SIZE}, pl::FP32),
                                    pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

const pl::HostFunction all_to_all_hand = make_host("all_to_all_hand", per_rank_hand);
const pl::HostFunction all_to_all_builtin = make_host("all_to_all_builtin", per_rank_builtin);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, P, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, P, SIZE}, pl::FP32);
  const pl::HostFunction& program = opt.mode == "builtin" ? all_to_all_builtin : all_to_all_hand;
  anyp::CompiledProgram compiled = program.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden: the first two dimensions transposed.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, P, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t s = 0; s < P; ++s) {
      for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, s, j}, x.at({s, r, j}));
    }
  }
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "15_all_to_all";
  spec.step = 15;
  spec.modes = {"hand", "builtin"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
