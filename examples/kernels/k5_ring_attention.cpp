// k5_ring_attention — exact softmax attention over a sequence split across
// the ranks: rank r keeps its queries Q_r [BQ, D]; the key/value blocks
// K_q, V_q [BK, D] travel the ring, one hop per step, so after P steps every
// rank has seen every block: O_r = softmax(Q_r K^T / sqrt(D)) V.
//
// The lesson: online softmax (a running row max m and row sum l) makes the
// blocks composable in any order. For each block, S = Q K_b^T * scale;
// m' = max(m, row_max(S)); p = exp(S - m'); l = l * exp(m - m') + row_sum(p);
// O = O * exp(m - m') + p V_b; and at the end O / l.
// The ring is double-buffered: slot s % 2 of the `kv` window holds the
// block of step s ([K; V], 2 BK rows). At step s a rank first forwards
// that block to the next rank's slot (s + 1) % 2 — the transfer overlaps
// its own attention math on the block — then computes. Two signals
// protect the two slots: `ready[b]` (notified by the previous rank after
// its put) counts blocks that have landed in my slot b; `credit[b]`
// (notified by the next rank when it is done with its slot b) counts the
// times my next rank has freed slot b, so I never overwrite a block it is
// still reading. Both cells only grow, and each wait asks for the count
// that step needs: no reset between uses.
//
//   k5_ring_attention                          (P = 2)
//   k5_ring_attention -d 0,1,2,3,4 --check-races --explore 20
// No P constraint: the sequence grows with P (BK keys per rank).
// Golden: softmax attention of each rank's queries over all P*BK keys, on
// the host in double.
// Cost: (P-1) puts of 2*BK*D*4 = 2 KiB out per rank; 2(P-1) - 1 notifies
// per rank (P-1 ready, P-2 credit).
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <cmath>

namespace {

constexpr std::int64_t BQ = 8;  // queries per rank
constexpr std::int64_t BK = 8;  // keys (and values) per rank
constexpr std::int64_t D = 32;  // head dim
const pl::Dim NR = pl::dynamic("NR");

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("q", pl::Tensor({BQ, D}, pl::FP32)),
    pl::In("k", pl::Tensor({BK, D}, pl::FP32)),
    pl::In("v", pl::Tensor({BK, D}, pl::FP32)),
    pl::Out("o", pl::Tensor({BQ, D}, pl::FP32)),
    pl::InOut("kv", pld::DistributedTensor({2, 2 * BK, D}, pl::FP32)),
    pl::InOut("ready", pld::DistributedTensor({2, 1}, pl::INT32)),
    pl::InOut("credit", pld::DistributedTensor({2, 1}, pl::INT32))};

const auto ring_attention = pl::jit::incore(
    "ring_attention", kParams,
    [](pl::Value q, pl::Value k, pl::Value v, pl::Value o, pl::Value kv, pl::Value ready,
       pl::Value credit) {
      auto ctx = pld::get_comm_ctx(kv);
      const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
      const pl::Scalar next = (r + 1) % P, prev = (r - 1 + P) % P;
      const double scale = 1.0 / std::sqrt(static_cast<double>(D));
      // Step 0's block is my own: into slot 0.
      kv = pl::store(pl::reshape(pl::load(k, {0, 0}, {BK, D}), {1, BK, D}), {0, 0, 0}, kv);
      kv = pl::store(pl::reshape(pl::load(v, {0, 0}, {BK, D}), {1, BK, D}), {0, BK, 0}, kv);
      const pl::Tile qt = pl::load(q, {0, 0}, {BQ, D});
      pl::Tile m = pl::full({BQ, 1}, -INFINITY, pl::FP32);
      pl::Tile l = pl::zeros({BQ, 1}, pl::FP32);
      pl::Tile acc = pl::zeros({BQ, D}, pl::FP32);
      pl::range(P, [&](pl::Scalar s) {
        const pl::Scalar slot = s % 2, other = (s + 1) % 2;
        // This step's block has landed in my slot (the (s+1)/2-th arrival there).
        pl::if_(s > 0, [&] { pld::system::wait(ready, {slot, 0}, (s + 1) / 2, WaitCmp::Ge); });
        // Forward it first, so the transfer overlaps the math below: the
        // next rank must have freed its slot `other` (used at its step s-1).
        pl::if_(s < P - 1, [&] {
          pl::if_(s > 0, [&] { pld::system::wait(credit, {other, 0}, (s + 1) / 2, WaitCmp::Ge); });
          pld::tensor::put(kv, next, kv, {other, 0, 0}, {slot, 0, 0}, {1, 2 * BK, D});
          pld::system::notify(ready, next, {other, 0}, 1, NotifyOp::AtomicAdd);
        });
        // Online softmax over this block.
        const pl::Tile kb = pl::reshape(pl::load(kv, {slot, 0, 0}, {1, BK, D}), {BK, D});
        const pl::Tile vb = pl::reshape(pl::load(kv, {slot, BK, 0}, {1, BK, D}), {BK, D});
        const pl::Tile scores = pl::mul(pl::matmul(qt, pl::transpose(kb)), scale);  // [BQ, BK]
        const pl::Tile m_new = pl::maximum(m, pl::row_max(scores));
        const pl::Tile p = pl::exp(pl::row_expand_sub(scores, m_new));
        const pl::Tile alpha = pl::exp(pl::sub(m, m_new));
        l = pl::add(pl::mul(l, alpha), pl::row_sum(p));
        acc = pl::add(pl::row_expand_mul(acc, alpha), pl::matmul(p, vb));
        m = m_new;
        // Done with my slot: the previous rank may refill it, if it sends again.
        pl::if_(s + 2 < P, [&] {
          pld::system::notify(credit, prev, {slot, 0}, 1, NotifyOp::AtomicAdd);
        });
      });
      o = pl::store(pl::row_expand_div(acc, l), {0, 0}, o);
    });

const pl::Function per_rank = pl::jit::orchestration_for("per_rank", ring_attention);

const pl::HostFunction attention = pl::jit::host(
    "ring_attention",
    {pl::In("q", pl::Tensor({NR, BQ, D}, pl::FP32)), pl::In("k", pl::Tensor({NR, BK, D}, pl::FP32)),
     pl::In("v", pl::Tensor({NR, BK, D}, pl::FP32)),
     pl::Out("o", pl::Tensor({NR, BQ, D}, pl::FP32))},
    [](pl::Value q, pl::Value k, pl::Value v, pl::Value o) {
      auto kv = pld::alloc_window_buffer("kv", {2, 2 * BK, D}, pl::FP32);
      auto ready = pld::alloc_window_buffer("ready", {2, 1}, pl::INT32);
      auto credit = pld::alloc_window_buffer("credit", {2, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank(q[r], k[r], v[r], o[r], pld::window(kv, {2, 2 * BK, D}, pl::FP32),
                 pld::window(ready, {2, 1}, pl::INT32), pld::window(credit, {2, 1}, pl::INT32),
                 pl::device(r));
      });
    });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  const anyp::HostTensor q = gen.uniform({P, BQ, D}), k = gen.uniform({P, BK, D}),
                         v = gen.uniform({P, BK, D});
  anyp::HostTensor o = anyp::HostTensor::zeros({P, BQ, D}, pl::FP32);
  anyp::CompiledProgram compiled = attention.compile({q, k, v, o}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(q, k, v, o);
  // The golden: plain softmax attention over all P*BK keys, in double.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, BQ, D}, pl::FP32);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < BQ; ++i) {
      std::vector<double> s(static_cast<std::size_t>(P * BK));
      double mx = -INFINITY;
      for (std::int64_t j = 0; j < P * BK; ++j) {
        double dot = 0;
        for (std::int64_t c = 0; c < D; ++c) dot += q.at({r, i, c}) * k.at({j / BK, j % BK, c});
        s[static_cast<std::size_t>(j)] = dot * scale;
        mx = std::max(mx, dot * scale);
      }
      double sum = 0;
      for (double& e : s) sum += (e = std::exp(e - mx));
      for (std::int64_t c = 0; c < D; ++c) {
        double out = 0;
        for (std::int64_t j = 0; j < P * BK; ++j)
          out += s[static_cast<std::size_t>(j)] * v.at({j / BK, j % BK, c});
        expected.set_at({r, i, c}, out / sum);
      }
    }
  return anyp::cli::report({anyp::cli::check_close("o", o, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k5_ring_attention";
  spec.step = 105;
  return anyp::cli::run_example(argc, argv, spec, run);
}
