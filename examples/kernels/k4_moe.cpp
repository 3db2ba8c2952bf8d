// k4_moe — a mixture-of-experts layer, top-1, one expert per rank: every
// token goes to the rank of its expert, is multiplied there by that
// expert's weight, and comes back scaled by its gate: y_t = g_t * relu(x_t
// @ W_e(t)).
//
// The lesson: a data-dependent exchange is two all_to_all_v's around the
// expert GEMM. Dispatch packs each rank's tokens by destination (block d
// of `send`, T rows of one token each, counting rows in send_counts[d]:
// PyPTO's row counts, pld::Counts::Rows); all_to_all_v delivers block r of
// rank d's `recv` with its count in recv_counts[r]. The expert runs a
// gemv per received token (the count is only known at run time), packing
// the results in the same order into `back`; the second all_to_all_v
// returns them, and the combine replays the packing counters to find each
// token's result. The builtin's own signals protect `recv` and `ret`; each
// call has its own signal and counts window (recv_counts is Set by the
// sender and has no read-done handshake, so it is never reused).
//
//   k4_moe                                     (P = 2)
//   k4_moe -d 0,1,2,3,4 --cost --check-races
// No P constraint: P experts, T tokens per rank; a rank may receive from 0
// up to P*T tokens (the blocks of `send` and `recv` have room for T each).
// Golden: y_t = g_t * relu(x_t W_e) on the host in double.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <cmath>

namespace {

constexpr std::int64_t T = 8;    // tokens per rank
constexpr std::int64_t H = 32;   // token width
constexpr std::int64_t H2 = 32;  // expert output width
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({T, H}, pl::FP32)), pl::In("route", pl::Tensor({T, 1}, pl::INT32)),
    pl::In("gate", pl::Tensor({T, 1}, pl::FP32)), pl::In("w", pl::Tensor({H, H2}, pl::FP32)),
    pl::Out("y", pl::Tensor({T, H2}, pl::FP32)),
    // Private staging: tokens by destination, and the results going back.
    pl::InOut("send", pl::Tensor({NR * T, H}, pl::FP32)),
    pl::InOut("send_counts", pl::Tensor({NR, 1}, pl::INT32)),
    pl::InOut("back", pl::Tensor({NR * T, H2}, pl::FP32)),
    pl::InOut("back_counts", pl::Tensor({NR, 1}, pl::INT32)),
    // Windows: what arrives, with its counts, and each call's signal.
    pl::InOut("recv", pld::DistributedTensor({NR * T, H}, pl::FP32)),
    pl::InOut("recv_counts", pld::DistributedTensor({NR, 1}, pl::INT32)),
    pl::InOut("dispatch_signal", pld::DistributedTensor({NR, 1}, pl::INT32)),
    pl::InOut("ret", pld::DistributedTensor({NR * T, H2}, pl::FP32)),
    pl::InOut("ret_counts", pld::DistributedTensor({NR, 1}, pl::INT32)),
    pl::InOut("combine_signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto moe_layer = pl::jit::incore(
    "moe_layer", kParams,
    [](pl::Value x, pl::Value route, pl::Value gate, pl::Value w, pl::Value y, pl::Value send,
       pl::Value send_counts, pl::Value back, pl::Value back_counts, pl::Value recv,
       pl::Value recv_counts, pl::Value dispatch_signal, pl::Value ret, pl::Value ret_counts,
       pl::Value combine_signal) {
      auto ctx = pld::get_comm_ctx(recv);
      const pl::Scalar P = pld::nranks(ctx);
      // 1. Dispatch: pack my tokens by expert, then exchange.
      pl::range(P, [&](pl::Scalar d) { pl::write(send_counts, {d, 0}, 0); });
      pl::range(T, [&](pl::Scalar t) {
        const pl::Scalar e = pl::read(route, {t, 0});
        const pl::Scalar at = pl::read(send_counts, {e, 0});
        send = pl::store(pl::load(x, {t, 0}, {1, H}), {e * T + at, 0}, send);
        pl::write(send_counts, {e, 0}, at + 1);
      });
      recv = pld::tensor::all_to_all_v(send, send_counts, recv, recv_counts, dispatch_signal,
                                       pld::Counts::Rows);
      // 2. My expert: one gemv per token that arrived, packed in arrival order.
      const pl::Tile wt = pl::load(w, {0, 0}, {H, H2});
      pl::range(P, [&](pl::Scalar s) {
        const pl::Scalar n = pl::read(recv_counts, {s, 0});
        pl::write(back_counts, {s, 0}, n);
        pl::range(n, [&](pl::Scalar i) {
          const pl::Tile out = pl::relu(pl::gemv(pl::load(recv, {s * T + i, 0}, {1, H}), wt));
          back = pl::store(out, {s * T + i, 0}, back);
        });
      });
      ret = pld::tensor::all_to_all_v(back, back_counts, ret, ret_counts, combine_signal,
                                      pld::Counts::Rows);
      // 3. Combine: replay the packing order to find each token's result.
      pl::range(P, [&](pl::Scalar d) { pl::write(send_counts, {d, 0}, 0); });
      pl::range(T, [&](pl::Scalar t) {
        const pl::Scalar e = pl::read(route, {t, 0});
        const pl::Scalar k = pl::read(send_counts, {e, 0});
        const pl::Tile out = pl::load(ret, {e * T + k, 0}, {1, H2});
        y = pl::store(pl::mul(out, pl::read(gate, {t, 0})), {t, 0}, y);
        pl::write(send_counts, {e, 0}, k + 1);
      });
    });

const pl::Function per_rank = pl::jit::orchestration_for("per_rank", moe_layer);

const pl::HostFunction moe = pl::jit::host(
    "moe",
    {pl::In("x", pl::Tensor({NR, T, H}, pl::FP32)),
     pl::In("route", pl::Tensor({NR, T, 1}, pl::INT32)),
     pl::In("gate", pl::Tensor({NR, T, 1}, pl::FP32)),
     pl::In("w", pl::Tensor({NR, H, H2}, pl::FP32)),
     pl::Out("y", pl::Tensor({NR, T, H2}, pl::FP32)),
     pl::InOut("send", pl::Tensor({NR, NR* T, H}, pl::FP32)),
     pl::InOut("send_counts", pl::Tensor({NR, NR, 1}, pl::INT32)),
     pl::InOut("back", pl::Tensor({NR, NR* T, H2}, pl::FP32)),
     pl::InOut("back_counts", pl::Tensor({NR, NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value route, pl::Value gate, pl::Value w, pl::Value y, pl::Value send,
       pl::Value send_counts, pl::Value back, pl::Value back_counts) {
      auto recv = pld::alloc_window_buffer("recv", {NR * T, H}, pl::FP32);
      auto recv_counts = pld::alloc_window_buffer("recv_counts", {NR, 1}, pl::INT32);
      auto dispatch_signal = pld::alloc_window_buffer("dispatch_signal", {NR, 1}, pl::INT32);
      auto ret = pld::alloc_window_buffer("ret", {NR * T, H2}, pl::FP32);
      auto ret_counts = pld::alloc_window_buffer("ret_counts", {NR, 1}, pl::INT32);
      auto combine_signal = pld::alloc_window_buffer("combine_signal", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank(
            x[r], route[r], gate[r], w[r], y[r], send[r], send_counts[r], back[r], back_counts[r],
            pld::window(recv, {NR * T, H}, pl::FP32), pld::window(recv_counts, {NR, 1}, pl::INT32),
            pld::window(dispatch_signal, {NR, 1}, pl::INT32),
            pld::window(ret, {NR * T, H2}, pl::FP32), pld::window(ret_counts, {NR, 1}, pl::INT32),
            pld::window(combine_signal, {NR, 1}, pl::INT32), pl::device(r));
      });
    });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, T, H}), gate = gen.uniform({P, T, 1}),
                   w = gen.uniform({P, H, H2});
  for (std::int64_t i = 0; i < w.numel(); ++i) w.set(i, w.get(i) - 1.0);  // relu clips some
  // An uneven routing: some experts get many tokens, some none.
  anyp::HostTensor route = anyp::HostTensor::zeros({P, T, 1}, pl::INT32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t t = 0; t < T; ++t) route.set_int(r * T + t, (3 * r + t * t) % P);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, T, H2}, pl::FP32);
  anyp::HostTensor send = anyp::HostTensor::zeros({P, P * T, H}, pl::FP32);
  anyp::HostTensor send_counts = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  anyp::HostTensor back = anyp::HostTensor::zeros({P, P * T, H2}, pl::FP32);
  anyp::HostTensor back_counts = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  anyp::CompiledProgram compiled =
      moe.compile({x, route, gate, w, y, send, send_counts, back, back_counts}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, route, gate, w, y, send, send_counts, back, back_counts);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, T, H2}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t t = 0; t < T; ++t) {
      const std::int64_t e = route.get_int(r * T + t);
      for (std::int64_t j = 0; j < H2; ++j) {
        double s = 0;
        for (std::int64_t k = 0; k < H; ++k) s += x.at({r, t, k}) * w.at({e, k, j});
        expected.set_at({r, t, j}, gate.at({r, t, 0}) * std::max(s, 0.0));
      }
    }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k4_moe";
  spec.step = 104;
  return anyp::cli::run_example(argc, argv, spec, run);
}
