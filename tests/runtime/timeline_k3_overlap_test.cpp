// timeline_k3_overlap_test.cpp — k3's overlapped GEMM + ReduceScatter
// against its bulk form on the modeled timeline with DMA engines
// (docs/timeline.md §2a), each against its exact formula. Overlapped: rank
// r multiplies the block rank d = r + s needs and remote-stores it into
// slot r of d's window at once, then Sets d's cell r; the stores run on
// engines while the next GEMM runs. Bulk: one GEMM of every block, staged
// in a window, then the P - 1 puts. Both then wait for each slot in the
// order it is due and add it. The overlap's advantage is the difference
// of the formulas; the simple model (no engines) credits it with less.
#include <gtest/gtest.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/fidelity_model.hpp"

namespace {

using pld::NotifyOp;
using pld::WaitCmp;

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t kMD = 16, kKP = 64, kN = 32;  // a block: [kMD, kKP] @ [kKP, kN]

pl::HostFunction k3(bool overlap) {
  const std::vector<pl::Param> params = {
      pl::In("a", pl::Tensor({NR * kMD, kKP}, pl::FP32)),
      pl::In("b", pl::Tensor({kKP, kN}, pl::FP32)),
      pl::Out("c", pl::Tensor({kMD, kN}, pl::FP32)),
      pl::InOut("recv", pld::DistributedTensor({NR * kMD, kN}, pl::FP32)),
      pl::InOut("staging", pld::DistributedTensor({NR * kMD, kN}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      overlap ? "k3_overlap" : "k3_bulk", params,
      [overlap](pl::Value a, pl::Value b, pl::Value c, pl::Value recv, pl::Value staging,
                pl::Value signal) {
        auto ctx = pld::get_comm_ctx(recv);
        const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
        const pl::Tile w = pl::load(b, {0, 0}, {kKP, kN});
        // The pushes; then the tile the slots are added to.
        const auto push = [&]() -> pl::Tile {
          if (overlap) {
            pl::range(1, P, [&](pl::Scalar s) {
              const pl::Scalar d = (r + s) % P;
              const pl::Tile part = pl::matmul(pl::load(a, {d * kMD, 0}, {kMD, kKP}), w);
              pld::tile::remote_store(part, recv, d, {r * kMD, 0});
              pld::system::notify(signal, d, {r, 0}, 1, NotifyOp::Set);
            });
            return pl::matmul(pl::load(a, {r * kMD, 0}, {kMD, kKP}), w);
          }
          staging = pl::store(pl::matmul(pl::load(a, {0, 0}, {NR * kMD, kKP}), w), {0, 0}, staging);
          pl::range(1, P, [&](pl::Scalar s) {
            const pl::Scalar d = (r + s) % P;
            pld::tensor::put(recv, d, staging, {r * kMD, 0}, {d * kMD, 0}, {kMD, kN});
            pld::system::notify(signal, d, {r, 0}, 1, NotifyOp::Set);
          });
          return pl::load(staging, {r * kMD, 0}, {kMD, kN});
        };
        pl::Tile acc = push();
        pl::range(1, P, [&](pl::Scalar s) {
          const pl::Scalar q = (r - s + P) % P;
          pld::system::wait(signal, {q, 0}, 1, WaitCmp::Ge);
          acc = pl::add(acc, pl::load(recv, {q * kMD, 0}, {kMD, kN}));
        });
        c = pl::store(acc, {0, 0}, c);
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host(
      overlap ? "k3_overlap_host" : "k3_bulk_host",
      {pl::In("a", pl::Tensor({NR, NR * kMD, kKP}, pl::FP32)),
       pl::In("b", pl::Tensor({NR, kKP, kN}, pl::FP32)),
       pl::Out("c", pl::Tensor({NR, kMD, kN}, pl::FP32))},
      [per_rank](pl::Value a, pl::Value b, pl::Value c) {
        auto recv = pld::alloc_window_buffer("recv", {NR * kMD, kN}, pl::FP32);
        auto staging = pld::alloc_window_buffer("staging", {NR * kMD, kN}, pl::FP32);
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(a[r], b[r], c[r], pld::window(recv, {NR * kMD, kN}, pl::FP32),
                   pld::window(staging, {NR * kMD, kN}, pl::FP32),
                   pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
}

// Runs it at P with a = 1, b = 1: every c element is P * kKP (checked).
double k3_makespan(bool overlap, std::int64_t P, const anyp_test::ScopedModel& m) {
  auto a = anyp::HostTensor::zeros({P, P * kMD, kKP}, pl::FP32);
  auto b = anyp::HostTensor::zeros({P, kKP, kN}, pl::FP32);
  auto c = anyp::HostTensor::zeros({P, kMD, kN}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < P * kMD; ++i)
      for (std::int64_t k = 0; k < kKP; ++k) a.set_at({r, i, k}, 1);
    for (std::int64_t k = 0; k < kKP; ++k)
      for (std::int64_t j = 0; j < kN; ++j) b.set_at({r, k, j}, 1);
  }
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.timeline = true;
  config.model_file = m.path;
  const anyp::RunStats stats = k3(overlap).compile({a, b, c}, config)(a, b, c);
  EXPECT_EQ(c.at({P - 1, kMD - 1, kN - 1}), static_cast<double>(P * kKP));
  EXPECT_EQ(stats.timeline->note, "");
  return stats.timeline->makespan_ns;
}

// One rank's clock (every rank alike). L a local access, G a block's GEMM,
// X a remote store (α + S β), X + L a put (its source read first), d the
// DMA issue, i / l / w the notify issue, latency and a wait. Transfer s is
// issued after its block is ready, run by the first free engine (on the
// rank's clock without engines); the Set after it reaches the peer at
// A_s = max(its issue + i + l, the end of transfers 1 .. s). Overlap: load
// b, P - 1 times (load, GEMM, issue, Set), the own block's load and GEMM;
// bulk: load b, load a, one GEMM of P blocks, the staging store, P - 1
// times (issue, Set), the own block's load. Then, both, per slot the wait
// until A_s, w and its load; the store of c.
TEST(K3Overlap, OverlapBeatsBulkByTheFormulasDifference) {
  anyp_test::Constants k{.alpha = 2000,
                         .beta = 0.005,
                         .local_alpha = 100,
                         .issue = 100,
                         .latency = 700,
                         .wait = 50,
                         .matmul_per_ns = 16,  // G = 2048 ns, about one remote store
                         .dma_issue = 50};
  std::map<std::pair<int, std::int64_t>, double> advantage;  // (engines, P) -> bulk - overlap
  for (const int engines : {0, 4}) {
    k.dma_engines = engines;
    const anyp_test::ScopedModel m(k, "k3_" + std::to_string(engines));
    const double L = k.local_alpha, G = kMD * kKP * kN / k.matmul_per_ns;
    const double d = engines > 0 ? k.dma_issue : 0, X = k.alpha + 4.0 * kMD * kN * k.beta;
    for (const std::int64_t P : {2, 3, 5, 8}) {
      const auto pushes = [&](double t, double before_each, double transfer) {
        std::vector<double> free_at(static_cast<std::size_t>(std::max(engines, 1)), 0), A;
        double latest = 0;
        for (std::int64_t s = 1; s < P; ++s) {
          t += before_each;
          double end;
          if (engines > 0) {
            auto e = std::min_element(free_at.begin(), free_at.end());
            end = std::max(*e, t + d) + transfer;
            *e = end;
            t += d;
          } else {
            end = t + transfer;
            t = end;
          }
          latest = std::max(latest, end);
          A.push_back(std::max(t + k.issue + k.latency, latest));
          t += k.issue;
        }
        A.push_back(t);  // the time the rank is done pushing
        return A;
      };
      const auto receive = [&](double t, const std::vector<double>& A) {
        for (std::size_t s = 0; s + 1 < A.size(); ++s) t = std::max(t, A[s]) + k.wait + L;
        return t + L;
      };
      const std::vector<double> o = pushes(L, L + G, X);
      const double overlap = receive(o.back() + L + G, o);
      const std::vector<double> b = pushes(3 * L + static_cast<double>(P) * G, 0, X + L);
      const double bulk = receive(b.back() + L, b);
      const double got_overlap = k3_makespan(true, P, m), got_bulk = k3_makespan(false, P, m);
      const std::string what = std::to_string(engines) + " engines, P=" + std::to_string(P);
      EXPECT_NEAR(got_overlap, overlap, 0.01 * overlap) << what;
      EXPECT_NEAR(got_bulk, bulk, 0.01 * bulk) << what;
      EXPECT_NEAR(got_overlap, overlap, 1e-9 * overlap) << what;
      EXPECT_NEAR(got_bulk, bulk, 1e-9 * bulk) << what;
      EXPECT_NEAR(got_bulk - got_overlap, bulk - overlap, 0.01 * std::abs(bulk - overlap)) << what;
      advantage[{engines, P}] = got_bulk - got_overlap;
    }
  }
  for (const std::int64_t P : {3, 5, 8}) {
    const double with_engines = advantage[{4, P}], simple = advantage[{0, P}];
    EXPECT_GT(with_engines, 0) << "P=" << P;
    EXPECT_GT(with_engines, simple) << "P=" << P;
  }
}

}  // namespace
