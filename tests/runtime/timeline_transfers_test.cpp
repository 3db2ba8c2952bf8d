// timeline_transfers_test.cpp — modeled time with asynchronous transfers
// and shared links (docs/timeline.md §2a, §2b), against exact formulas:
// a put hidden behind a GEMM of known cost (and the GEMM hidden behind a
// slow put), step 07's put and get rings, a store held back by the put
// reading its buffer, one and two DMA engines draining a fan-out, an
// incast of P - 1 puts into one port at P = 4, 8, 16 (with shared links:
// (P - 1) N beta), the same across two nodes, and the same timeline for
// every schedule and worker count. Every formula's terms come from the
// model's constants; the tolerance is 1 %, the agreement 1e-9.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "anyp/errors.hpp"
#include "runtime/timeline/cost_model.hpp"
#include "support/fidelity_model.hpp"
#include "support/step07_program.hpp"

namespace {

using anyp::Timeline;
using pld::NotifyOp;
using pld::WaitCmp;

const pl::Dim NR = pl::dynamic("NR");

// The constants of every test here: remote α = 2 µs, β = 5 ps/B, a local
// access 100 ns flat, a notify issued in 100 ns and arriving 700 ns later,
// a wait 50 ns, a DMA issue 50 ns.
anyp_test::Constants async_constants() {
  return anyp_test::Constants{.alpha = 2000,
                              .beta = 0.005,
                              .local_alpha = 100,
                              .issue = 100,
                              .latency = 700,
                              .wait = 50,
                              .matmul_per_ns = 100,
                              .dma_engines = 4,
                              .dma_issue = 50};
}

// A model file written from `k`, removed when the test ends.
using Model = anyp_test::ScopedModel;

anyp::RunConfig timeline_config(std::int64_t P, const Model& m) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.timeline = true;
  config.model_file = m.path;
  return config;
}

// ---- a put and a GEMM on rank 0 -------------------------------------------

constexpr std::int64_t kGemm = 64;  // M = K = N

// Rank 0 puts x ([1, S]) into rank 1's dst, multiplies two 64 x 64 tiles,
// stores the product and notifies rank 1, which waits. P = 2. With
// `async_put`, the put is a put_async whose wait_async comes after the
// GEMM.
pl::HostFunction put_then_gemm(std::int64_t S, bool async_put = false) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)), pl::In("a", pl::Tensor({kGemm, kGemm}, pl::FP32)),
      pl::Out("c", pl::Tensor({kGemm, kGemm}, pl::FP32)),
      pl::InOut("dst", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "put_then_gemm", params,
      [S, async_put](pl::Value x, pl::Value a, pl::Value c, pl::Value dst, pl::Value signal) {
        const pl::Scalar r = pld::rank(pld::get_comm_ctx(dst));
        pl::if_(
            r == 0,
            [&] {
              std::optional<pld::AsyncEvent> event;
              if (async_put) {
                event = pld::tensor::put_async(dst, 1, x, {0, 0}, {0, 0}, {1, S});
              } else {
                pld::tensor::put(dst, 1, x, {0, 0}, {0, 0}, {1, S});
              }
              c = pl::store(pl::matmul(pl::load(a, {0, 0}, {kGemm, kGemm}),
                                       pl::load(a, {0, 0}, {kGemm, kGemm})),
                            {0, 0}, c);
              if (event) pld::system::wait_async(*event);
              pld::system::notify(signal, 1, {0, 0}, 1, NotifyOp::AtomicAdd);
            },
            [&] {
              pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
            });
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", params,
                             [kernel](pl::Value x, pl::Value a, pl::Value c, pl::Value d,
                                      pl::Value s) { kernel(x, a, c, d, s); });
  return pl::jit::host("put_then_gemm_host",
                       {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::In("a", pl::Tensor({NR, kGemm, kGemm}, pl::FP32)),
                        pl::Out("c", pl::Tensor({NR, kGemm, kGemm}, pl::FP32))},
                       [per_rank, S](pl::Value x, pl::Value a, pl::Value c) {
                         auto dst = pld::alloc_window_buffer("dst", {1, S}, pl::FP32);
                         auto sig = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], a[r], c[r], pld::window(dst, {1, S}, pl::FP32),
                                    pld::window(sig, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

Timeline run_put_then_gemm(std::int64_t S, const Model& m, bool async_put = false) {
  auto x = anyp::HostTensor::zeros({2, 1, S}, pl::FP32);
  auto a = anyp::HostTensor::zeros({2, kGemm, kGemm}, pl::FP32);
  auto c = anyp::HostTensor::zeros({2, kGemm, kGemm}, pl::FP32);
  const anyp::RunStats stats =
      put_then_gemm(S, async_put).compile({x, a, c}, timeline_config(2, m))(x, a, c);
  return *stats.timeline;
}

// Rank 0's clock: issue d, two loads, the GEMM G, the store, the notify
// issue i. The put runs beside them on an engine: its source read L, α,
// Sβ. The notify reaches rank 1 at the later of its own latency and the
// put's end; rank 1's wait ends w after. The simple model adds the put to
// rank 0's clock instead.
TEST(AsyncTransfers, APutIsHiddenBehindAGemmOfKnownCost) {
  const anyp_test::Constants k = async_constants();
  const Model async(k, "hidden_put");
  anyp_test::Constants sync_k = k;
  sync_k.dma_engines = 0;
  const Model simple(sync_k, "hidden_put_simple");
  const double L = k.local_alpha, G = kGemm * kGemm * kGemm / k.matmul_per_ns;
  for (const std::int64_t S : {4096, 262144}) {  // 16 KiB: hidden; 1 MiB: longer than the GEMM
    const double bytes = 4.0 * static_cast<double>(S);
    const double put = L + k.alpha + bytes * k.beta;
    const double rank0 = k.dma_issue + 3 * L + G + k.issue;
    const double want = std::max(rank0 + k.latency, k.dma_issue + put) + k.wait;
    const Timeline t = run_put_then_gemm(S, async);
    EXPECT_NEAR(t.makespan_ns, want, 1e-9 * want) << "S=" << S;
    EXPECT_DOUBLE_EQ(t.ranks[0].finish_ns, std::max(rank0, k.dma_issue + put));
    EXPECT_DOUBLE_EQ(t.ranks[0].busy_ns, rank0);
    const double simple_want = put + 3 * L + G + k.issue + k.latency + k.wait;
    EXPECT_NEAR(run_put_then_gemm(S, simple).makespan_ns, simple_want, 1e-9 * simple_want);
    // The put's two ops are on engine 0 of rank 0, issued at 0.
    std::size_t on_engine = 0;
    for (const anyp::TimelineOp& op : t.ops) {
      if (op.engine < 0) continue;
      ++on_engine;
      EXPECT_EQ(op.rank, 0);
      EXPECT_EQ(op.engine, 0);
      EXPECT_EQ(op.issued_ns, 0);
    }
    EXPECT_EQ(on_engine, 2u);
    EXPECT_EQ(t.note, "");
  }
}

// The same with put_async ... wait_async around the GEMM: the transfer
// starts at the put_async (d), the wait_async holds rank 0 until it is
// done, then the notify. The simple model carries the put out at the
// wait_async, on rank 0's clock.
TEST(AsyncTransfers, APutAsyncStartsAtItsIssueAndEndsByItsWait) {
  const anyp_test::Constants k = async_constants();
  const Model async(k, "put_async");
  anyp_test::Constants sync_k = k;
  sync_k.dma_engines = 0;
  const Model simple(sync_k, "put_async_simple");
  const double L = k.local_alpha, G = kGemm * kGemm * kGemm / k.matmul_per_ns;
  for (const std::int64_t S : {4096, 262144}) {
    const double put = L + k.alpha + 4.0 * static_cast<double>(S) * k.beta;
    const double waited = std::max(k.dma_issue + 3 * L + G, k.dma_issue + put);
    const double want = waited + k.issue + k.latency + k.wait;
    const Timeline t = run_put_then_gemm(S, async, true);
    EXPECT_NEAR(t.makespan_ns, want, 1e-9 * want) << "S=" << S;
    EXPECT_DOUBLE_EQ(t.ranks[0].busy_ns + t.ranks[0].wait_ns, t.ranks[0].finish_ns);
    for (const anyp::TimelineOp& op : t.ops) {
      if (op.engine >= 0) {
        EXPECT_EQ(op.issued_ns, 0) << "S=" << S;
      }
    }
    const double simple_want = 3 * L + G + put + k.issue + k.latency + k.wait;
    EXPECT_NEAR(run_put_then_gemm(S, simple, true).makespan_ns, simple_want, 1e-9 * simple_want);
  }
}

// ---- step 07 -------------------------------------------------------------

Timeline step07(const pl::HostFunction& program, std::int64_t P, const Model& m) {
  auto x = anyp::HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  auto y = anyp::HostTensor::zeros({P, 1, anyp_test::kStep07Size}, pl::FP32);
  return *program.compile({x, y}, timeline_config(P, m))(x, y).timeline;
}

// Put ring: load, store, issue the put, issue the notify (held until the
// put is through), wait for the left neighbour's, load, store. Get ring:
// load, store, notify left, wait, issue the get (the remote read, then the
// landing write on the engine), the load of the landed row held until the
// get is done, store.
TEST(AsyncTransfers, Step07RingsFollowTheirFormulas) {
  const anyp_test::Constants k = async_constants();
  const Model m(k, "step07_async");
  const double L = k.local_alpha, S = 4.0 * anyp_test::kStep07Size;
  const double remote = k.alpha + S * k.beta;
  for (const std::int64_t P : {2, 3, 4, 7, 16}) {
    const double put_ring =
        2 * L + k.dma_issue + std::max(k.issue + k.latency, L + remote) + k.wait + 2 * L;
    EXPECT_NEAR(step07(anyp_test::ring_put(), P, m).makespan_ns, put_ring, 1e-9 * put_ring);
    const double waited = 2 * L + k.issue + k.latency + k.wait;
    const double get_ring = waited + k.dma_issue + remote + L + 2 * L;
    const Timeline g = step07(anyp_test::ring_get(), P, m);
    EXPECT_NEAR(g.makespan_ns, get_ring, 1e-9 * get_ring) << "P=" << P;
    // Rank 0's load of dst_buf was held from the get's issue to its end.
    // Rank 0: load x, store src, notify, wait, the get's two ops, load dst, store y.
    const anyp::TimelineOp& held = g.ops[6];
    EXPECT_EQ(g.name(held.op), "pl.load");
    EXPECT_DOUBLE_EQ(held.start_ns, waited + k.dma_issue);
    EXPECT_DOUBLE_EQ(held.blocked_ns, remote + L);
    EXPECT_DOUBLE_EQ(g.ranks[0].busy_ns + g.ranks[0].wait_ns, g.ranks[0].finish_ns);
  }
}

// ---- a store into the buffer a put reads -----------------------------------

// Rank 0 stores x into src, puts src to rank 1, stores into src again (it
// must wait: the put reads src), then notifies rank 1. P = 2.
pl::HostFunction put_then_overwrite() {
  constexpr std::int64_t S = 1024;
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)),
      pl::InOut("src", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("dst", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel =
      pl::jit::incore("put_then_overwrite", params,
                      [](pl::Value x, pl::Value src, pl::Value dst, pl::Value signal) {
                        const pl::Scalar r = pld::rank(pld::get_comm_ctx(dst));
                        pl::if_(
                            r == 0,
                            [&] {
                              const pl::Tile t = pl::load(x, {0, 0}, {1, S});
                              src = pl::store(t, {0, 0}, src);
                              pld::tensor::put(dst, 1, src, pld::AtomicType::None);
                              src = pl::store(t, {0, 0}, src);
                              pld::system::notify(signal, 1, {0, 0}, 1, NotifyOp::AtomicAdd);
                            },
                            [&] {
                              pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                            });
                      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value s, pl::Value d, pl::Value g) { kernel(x, s, d, g); });
  return pl::jit::host("put_then_overwrite_host", {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [per_rank](pl::Value x) {
                         auto src = pld::alloc_window_buffer("src", {1, S}, pl::FP32);
                         auto dst = pld::alloc_window_buffer("dst", {1, S}, pl::FP32);
                         auto sig = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], pld::window(src, {1, S}, pl::FP32),
                                    pld::window(dst, {1, S}, pl::FP32),
                                    pld::window(sig, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

TEST(AsyncTransfers, AStoreIntoThePutsSourceWaitsForThePut) {
  const anyp_test::Constants k = async_constants();
  const Model m(k, "overwrite");
  auto x = anyp::HostTensor::zeros({2, 1, 1024}, pl::FP32);
  const Timeline t = *put_then_overwrite().compile({x}, timeline_config(2, m))(x).timeline;
  const double L = k.local_alpha, put_done = 2 * L + k.dma_issue + L + k.alpha + 4096 * k.beta;
  // Rank 0: load, store, put (2 ops), store, notify.
  const anyp::TimelineOp& store = t.ops[4];
  EXPECT_EQ(t.name(store.op), "pl.store");
  EXPECT_DOUBLE_EQ(store.start_ns, 2 * L + k.dma_issue);
  EXPECT_DOUBLE_EQ(store.end_ns, put_done + L);
  EXPECT_DOUBLE_EQ(store.blocked_ns, put_done - (2 * L + k.dma_issue));
  const double want = put_done + L + k.issue + k.latency + k.wait;
  EXPECT_NEAR(t.makespan_ns, want, 1e-9 * want);
}

// Rank 1 gets rank 0's src into its dst (once rank 0 says it is ready),
// then put_asyncs that dst back into rank 0's back, waits for it and
// notifies rank 0. The put_async reads what the get writes: it starts
// only when the get has landed, then runs L + α + Sβ. P = 2.
pl::HostFunction get_then_put_async() {
  constexpr std::int64_t S = 1024;
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)),
      pl::InOut("src", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("dst", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("back", pld::DistributedTensor({1, S}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "get_then_put_async", params,
      [](pl::Value x, pl::Value src, pl::Value dst, pl::Value back, pl::Value signal) {
        const pl::Scalar r = pld::rank(pld::get_comm_ctx(dst));
        pl::if_(
            r == 0,
            [&] {
              src = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, src);
              pld::system::notify(signal, 1, {0, 0}, 1, NotifyOp::AtomicAdd);
              pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
            },
            [&] {
              pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
              pld::tensor::get(dst, 0, src);
              const pld::AsyncEvent event = pld::tensor::put_async(back, 0, dst);
              pld::system::wait_async(event);
              pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
            });
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", params,
                             [kernel](pl::Value x, pl::Value s, pl::Value d, pl::Value b,
                                      pl::Value g) { kernel(x, s, d, b, g); });
  return pl::jit::host("get_then_put_async_host", {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [per_rank](pl::Value x) {
                         const pl::Shape row{1, S};
                         auto src = pld::alloc_window_buffer("src", row, pl::FP32);
                         auto dst = pld::alloc_window_buffer("dst", row, pl::FP32);
                         auto back = pld::alloc_window_buffer("back", row, pl::FP32);
                         auto sig = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], pld::window(src, row, pl::FP32),
                                    pld::window(dst, row, pl::FP32),
                                    pld::window(back, row, pl::FP32),
                                    pld::window(sig, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

TEST(AsyncTransfers, APutAsyncOfLandingRowsStartsWhenTheyHaveLanded) {
  const anyp_test::Constants k = async_constants();
  const Model m(k, "get_put_async");
  auto x = anyp::HostTensor::zeros({2, 1, 1024}, pl::FP32);
  const Timeline t = *get_then_put_async().compile({x}, timeline_config(2, m))(x).timeline;
  const double L = k.local_alpha, remote = k.alpha + 4096 * k.beta;
  const double ready = 2 * L + k.issue + k.latency + k.wait;  // rank 1's wait ends
  const double landed = ready + k.dma_issue + remote + L;     // the get's landing write
  const double put_done = landed + k.dma_issue + L + remote;
  const double want = put_done + k.issue + k.latency + k.wait;
  EXPECT_NEAR(t.makespan_ns, want, 1e-9 * want);
  std::size_t put_ops = 0;
  for (const anyp::TimelineOp& op : t.ops) {
    if (op.rank == 1 && op.engine >= 0 && t.name(op.op) == "pld.tensor.put_async") {
      EXPECT_DOUBLE_EQ(op.issued_ns, landed);
      ++put_ops;
    }
  }
  EXPECT_EQ(put_ops, 2u);
  EXPECT_DOUBLE_EQ(t.ranks[1].busy_ns + t.ranks[1].wait_ns, t.ranks[1].finish_ns);
  // The critical path goes from the put_async back to the get that held it
  // (its landing write), not to the op before the hold.
  const auto name = [&](std::size_t op) { return t.name(t.ops[op].op); };
  bool held_edge = false;
  for (std::size_t k = 1; k < t.critical_path.size(); ++k) {
    const std::size_t prev = t.critical_path[k - 1], cur = t.critical_path[k];
    if (name(cur) == "pld.tensor.put_async" && !t.ops[cur].continues_transfer) {
      EXPECT_EQ(name(prev), "pld.tensor.get");
      EXPECT_TRUE(t.ops[prev].continues_transfer);
      EXPECT_DOUBLE_EQ(t.ops[prev].end_ns, landed);
      held_edge = true;
    }
  }
  EXPECT_TRUE(held_edge);
}

// ---- fan-out and incast ----------------------------------------------------

// Every rank r in `senders` puts x ([1, S]) into row r of rank `target`'s
// dst ([NR, S]) and notifies it; the target waits for all of them. With
// fan_out, rank 0 instead puts into every other rank's row 0, then
// notifies each.
pl::HostFunction pattern(std::int64_t S, bool fan_out) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)),
      pl::InOut("dst", pld::DistributedTensor({NR, S}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel =
      pl::jit::incore(fan_out ? "fan_out" : "incast", params,
                      [S, fan_out](pl::Value x, pl::Value dst, pl::Value signal) {
                        auto ctx = pld::get_comm_ctx(dst);
                        const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
                        if (fan_out) {
                          pl::if_(
                              r == 0,
                              [&] {
                                pl::range(1, P, [&](pl::Scalar q) {
                                  pld::tensor::put(dst, q, x, {0, 0}, {0, 0}, {1, S});
                                });
                                pl::range(1, P, [&](pl::Scalar q) {
                                  pld::system::notify(signal, q, {0, 0}, 1, NotifyOp::AtomicAdd);
                                });
                              },
                              [&] {
                                pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                              });
                        } else {
                          pl::if_(
                              r == 0,
                              [&] {
                                pld::system::wait(signal, {0, 0}, P - 1, WaitCmp::Ge);
                              },
                              [&] {
                                pld::tensor::put(dst, 0, x, {r, 0}, {0, 0}, {1, S});
                                pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
                              });
                        }
                      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params, [kernel](pl::Value x, pl::Value d, pl::Value s) { kernel(x, d, s); });
  return pl::jit::host("pattern_host", {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [per_rank, S](pl::Value x) {
                         auto dst = pld::alloc_window_buffer("dst", {NR, S}, pl::FP32);
                         auto sig = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], pld::window(dst, {NR, S}, pl::FP32),
                                    pld::window(sig, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

Timeline run_pattern(std::int64_t P, std::int64_t S, bool fan_out, const Model& m,
                     anyp::RunConfig config = {}) {
  auto x = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
  anyp::RunConfig c = timeline_config(P, m);
  c.workers = config.workers;
  c.schedule_seed = config.schedule_seed;
  return *pattern(S, fan_out).compile({x}, c)(x).timeline;
}

constexpr std::int64_t kRow = 16384;  // 64 KiB per put

// P - 1 puts of N bytes into rank 0 at once: with shared links they share
// its port in and all end (P - 1)Nβ after their α; without, Nβ. The
// notifies (issued right after the puts) arrive with their puts.
TEST(LinkContention, AnIncastSharesTheReceiversPort) {
  anyp_test::Constants k = async_constants();
  const Model unshared(k, "incast_unshared");
  k.links_shared = true;
  const Model shared(k, "incast_shared");
  const double N = 4.0 * kRow, L = k.local_alpha;
  for (const std::int64_t P : {4, 8, 16}) {
    const double alone = k.dma_issue + L + k.alpha + N * k.beta;
    const double incast = k.dma_issue + L + k.alpha + static_cast<double>(P - 1) * N * k.beta;
    const double notified = k.dma_issue + k.issue + k.latency;
    const double want_unshared = std::max(alone, notified) + k.wait;
    const double want_shared = std::max(incast, notified) + k.wait;
    EXPECT_NEAR(run_pattern(P, kRow, false, unshared).makespan_ns, want_unshared,
                1e-9 * want_unshared)
        << "P=" << P;
    const Timeline t = run_pattern(P, kRow, false, shared);
    EXPECT_NEAR(t.makespan_ns, want_shared, 0.01 * want_shared) << "P=" << P;
    EXPECT_NEAR(t.makespan_ns, want_shared, 1e-9 * want_shared) << "P=" << P;
    // Every put ends at the same time: the fair share is equal.
    for (const anyp::TimelineOp& op : t.ops) {
      if (op.kind == anyp::TimelineOp::Kind::RemoteWrite) {
        EXPECT_NEAR(op.end_ns, incast, 1e-6);
      }
    }
  }
}

// The same incast at P = 4 over two nodes of two devices: rank 1 reaches
// rank 0 within the node (α, β, alone on that port), ranks 2 and 3 share
// rank 0's inter-node port (inter α, 2N inter β).
TEST(LinkContention, TwoNodesTheInterNodePortDominates) {
  anyp_test::Constants k = async_constants();
  k.links_shared = true;
  k.devices_per_node = 2;
  k.inter_alpha = 5000;
  k.inter_beta = 0.04;
  const Model m(k, "two_nodes");
  const double N = 4.0 * kRow, L = k.local_alpha;
  const double intra = k.dma_issue + L + k.alpha + N * k.beta;
  const double inter = k.dma_issue + L + k.inter_alpha + 2 * N * k.inter_beta;
  const double want = std::max({intra, inter, k.dma_issue + k.issue + k.latency}) + k.wait;
  const Timeline t = run_pattern(4, kRow, false, m);
  EXPECT_NEAR(t.makespan_ns, want, 1e-9 * want);
  for (const anyp::TimelineOp& op : t.ops) {
    if (op.kind != anyp::TimelineOp::Kind::RemoteWrite) continue;
    EXPECT_NEAR(op.end_ns, op.rank == 1 ? intra : inter, 1e-6) << "rank " << op.rank;
  }
}

// Rank 0 puts to P - 1 peers, then notifies each (every notify after every
// put). One engine runs the puts one after another; P - 1 engines run
// them together, issued d apart (links not shared).
TEST(AsyncTransfers, EnginesDrainAFanOut) {
  for (const int engines : {1, 2, 15}) {
    anyp_test::Constants k = async_constants();
    k.dma_engines = engines;
    const Model m(k, "fan_out_" + std::to_string(engines));
    const double X = k.local_alpha + k.alpha + 4.0 * kRow * k.beta;
    for (const std::int64_t P : {3, 6, 16}) {
      const std::int64_t puts = P - 1;
      // Put j (0-based) is issued at (j + 1)d and starts when an engine frees.
      std::vector<double> free_at(static_cast<std::size_t>(engines), 0), done;
      for (std::int64_t j = 0; j < puts; ++j) {
        auto e = std::min_element(free_at.begin(), free_at.end());
        const double start = std::max(*e, static_cast<double>(j + 1) * k.dma_issue);
        *e = start + X;
        done.push_back(*e);
      }
      const double last = *std::max_element(done.begin(), done.end());
      const double notifies = static_cast<double>(puts) * (k.dma_issue + k.issue) + k.latency;
      const double want = std::max(last, notifies) + k.wait;
      EXPECT_NEAR(run_pattern(P, kRow, true, m).makespan_ns, want, 1e-9 * want)
          << engines << " engines, P=" << P;
    }
  }
}

// The timeline is a function of the events and the model: the same under
// seeded schedules and both worker counts, with engines and shared links.
TEST(AsyncTransfers, SameTimelineForEverySchedule) {
  anyp_test::Constants k = async_constants();
  k.links_shared = true;
  k.dma_engines = 2;
  const Model m(k, "schedules");
  for (const bool fan_out : {false, true}) {
    const Timeline base = run_pattern(6, 1024, fan_out, m);
    for (std::uint64_t seed = 1; seed <= 5; ++seed) {
      anyp::RunConfig c;
      c.schedule_seed = seed;
      const Timeline t = run_pattern(6, 1024, fan_out, m, c);
      EXPECT_EQ(t.makespan_ns, base.makespan_ns);
      ASSERT_EQ(t.ops.size(), base.ops.size());
      for (std::size_t i = 0; i < t.ops.size(); ++i) {
        EXPECT_EQ(t.ops[i].start_ns, base.ops[i].start_ns) << i;
        EXPECT_EQ(t.ops[i].end_ns, base.ops[i].end_ns) << i;
        EXPECT_EQ(t.ops[i].engine, base.ops[i].engine) << i;
      }
    }
    anyp::RunConfig two;
    two.workers = 2;
    EXPECT_EQ(run_pattern(6, 1024, fan_out, m, two).makespan_ns, base.makespan_ns);
  }
}

// ---- k2: the overlapped AllGather + GEMM against gather-then-multiply ---------

constexpr std::int64_t kMP = 16, kK = 64, kNP = 32;  // as examples/kernels/k2_allgather_gemm

// k2's overlapped kernel (as the example), and a bulk kernel with the same
// pushes that waits for every chunk before one GEMM over all of them (the
// example's --mode bulk does the same after the builtin allgather).
pl::HostFunction k2(bool overlap) {
  const std::vector<pl::Param> params = {
      pl::In("a", pl::Tensor({kMP, kK}, pl::FP32)), pl::In("b", pl::Tensor({kK, kNP}, pl::FP32)),
      pl::Out("c", pl::Tensor({NR * kMP, kNP}, pl::FP32)),
      pl::InOut("gathered", pld::DistributedTensor({NR * kMP, kK}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      overlap ? "k2_overlap" : "k2_bulk", params,
      [overlap](pl::Value a, pl::Value b, pl::Value c, pl::Value gathered, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(gathered);
        const pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
        pl::range(1, P, [&](pl::Scalar s) {
          const pl::Scalar peer = (r + s) % P;
          pld::tensor::put(gathered, peer, a, {r * kMP, 0}, {0, 0}, {kMP, kK});
          pld::system::notify(signal, peer, {r, 0}, 1, NotifyOp::Set);
        });
        if (overlap) {
          const pl::Tile w = pl::load(b, {0, 0}, {kK, kNP});
          c = pl::store(pl::matmul(pl::load(a, {0, 0}, {kMP, kK}), w), {r * kMP, 0}, c);
          pl::range(1, P, [&](pl::Scalar s) {
            const pl::Scalar q = (r - s + P) % P;
            pld::system::wait(signal, {q, 0}, 1, WaitCmp::Ge);
            c = pl::store(pl::matmul(pl::load(gathered, {q * kMP, 0}, {kMP, kK}), w), {q * kMP, 0},
                          c);
          });
        } else {
          gathered = pl::store(pl::load(a, {0, 0}, {kMP, kK}), {r * kMP, 0}, gathered);
          pl::range(1, P, [&](pl::Scalar s) {
            pld::system::wait(signal, {(r - s + P) % P, 0}, 1, WaitCmp::Ge);
          });
          c = pl::store(pl::matmul(pl::load(gathered, {0, 0}, {NR * kMP, kK}),
                                   pl::load(b, {0, 0}, {kK, kNP})),
                        {0, 0}, c);
        }
      });
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host(
      overlap ? "k2_overlap_host" : "k2_bulk_host",
      {pl::In("a", pl::Tensor({NR, kMP, kK}, pl::FP32)),
       pl::In("b", pl::Tensor({NR, kK, kNP}, pl::FP32)),
       pl::Out("c", pl::Tensor({NR, NR * kMP, kNP}, pl::FP32))},
      [per_rank](pl::Value a, pl::Value b, pl::Value c) {
        auto gathered = pld::alloc_window_buffer("gathered", {NR * kMP, kK}, pl::FP32);
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(a[r], b[r], c[r], pld::window(gathered, {NR * kMP, kK}, pl::FP32),
                   pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
}

double k2_makespan(bool overlap, std::int64_t P, const Model& m) {
  auto a = anyp::HostTensor::zeros({P, kMP, kK}, pl::FP32);
  auto b = anyp::HostTensor::zeros({P, kK, kNP}, pl::FP32);
  auto c = anyp::HostTensor::zeros({P, P * kMP, kNP}, pl::FP32);
  const Timeline t = *k2(overlap).compile({a, b, c}, timeline_config(P, m))(a, b, c).timeline;
  EXPECT_EQ(t.note, "");
  return t.makespan_ns;
}

// Every rank pushes its rows to its P - 1 peers, put s issued at
// (s - 1)(d + i) and run by the first free engine for X = L + α + Sβ; the
// Set after it reaches the peer at A_s = max(s(d + i) + l, the end of puts
// 1 .. s). Overlap: load b, the own chunk's GEMM (G per chunk), then per
// peer wait until A_s (+ w), load, GEMM, store. Bulk: copy the own rows,
// wait for every A_s, one GEMM of P chunks. The simple model runs each put
// on the rank's clock instead. Both at 1 % (they agree to 1e-9); the
// overlap's advantage is the formulas' difference.
TEST(AsyncTransfers, K2OverlapBeatsBulkByTheFormulasDifference) {
  anyp_test::Constants k = async_constants();
  k.matmul_per_ns = 16;  // a chunk's GEMM (16 x 64 x 32) about as long as its put
  std::map<std::pair<int, std::int64_t>, double> advantage;  // (engines, P) -> bulk - overlap
  for (const int engines : {0, 4}) {
    k.dma_engines = engines;
    const Model m(k, "k2_" + std::to_string(engines));
    const double L = k.local_alpha, d = engines > 0 ? k.dma_issue : 0;
    const double G = kMP * kK * kNP / k.matmul_per_ns;
    const double X = L + k.alpha + 4.0 * kMP * kK * k.beta;
    for (const std::int64_t P : {2, 3, 5, 8}) {
      std::vector<double> A;  // A[s - 1]
      double t = 0, latest_put = 0;
      std::vector<double> free_at(static_cast<std::size_t>(std::max(engines, 1)), 0);
      for (std::int64_t s = 1; s < P; ++s) {
        double put_end;
        if (engines > 0) {
          auto e = std::min_element(free_at.begin(), free_at.end());
          put_end = std::max(*e, t + d) + X;
          *e = put_end;
        } else {
          put_end = t + X;  // on the rank's clock
        }
        t = engines > 0 ? t + d : put_end;
        latest_put = std::max(latest_put, put_end);
        A.push_back(std::max(t + k.issue + k.latency, latest_put));
        t += k.issue;
      }
      const double pushed = t;
      double overlap = pushed + L + (L + G + L);
      for (const double arrival : A) overlap = std::max(overlap, arrival) + k.wait + L + G + L;
      double bulk = pushed + 2 * L;
      for (const double arrival : A) bulk = std::max(bulk, arrival) + k.wait;
      bulk += 2 * L + static_cast<double>(P) * G + L;
      const double got_overlap = k2_makespan(true, P, m), got_bulk = k2_makespan(false, P, m);
      EXPECT_NEAR(got_overlap, overlap, 0.01 * overlap) << engines << " engines, P=" << P;
      EXPECT_NEAR(got_bulk, bulk, 0.01 * bulk) << engines << " engines, P=" << P;
      EXPECT_NEAR(got_overlap, overlap, 1e-9 * overlap);
      EXPECT_NEAR(got_bulk, bulk, 1e-9 * bulk);
      EXPECT_NEAR(got_bulk - got_overlap, bulk - overlap, 0.01 * std::abs(bulk - overlap));
      advantage[{engines, P}] = got_bulk - got_overlap;
    }
  }
  // With engines the GEMMs hide behind the puts in flight and overlap wins
  // at every P; the simple model cannot hide a put, so it credits overlap
  // with less (and at P = 5, 8 makes it lose: its extra loads and stores).
  for (const std::int64_t P : {2, 3, 5, 8}) {
    const double with_engines = advantage[std::pair{4, P}], simple = advantage[std::pair{0, P}];
    EXPECT_GT(with_engines, 0) << "P=" << P;
    EXPECT_GT(with_engines, simple) << "P=" << P;
  }
}

// ---- the model's new keys ----------------------------------------------------

std::string refusal(const std::string& text) {
  try {
    anyp::runtime::parse_cost_model(text, "m.model");
  } catch (const anyp::ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(AsyncTransfers, ModelKeysThatWouldDoNothingAreRefused) {
  const std::string base = anyp_test::model_text(anyp_test::Constants{});
  EXPECT_EQ(refusal(base + "dma_issue_ns = 5  # source: assumed\n"),
            "cost model 'm.model', line 12: 'dma_issue_ns' has no effect unless dma_engines > 0");
  EXPECT_EQ(refusal(base + "dma_engines = 2  # source: assumed\n"),
            "cost model 'm.model': dma_engines > 0 needs dma_issue_ns");
  EXPECT_EQ(refusal(base + "dma_engines = 1.5  # source: assumed\n"),
            "cost model 'm.model', line 12: the value of 'dma_engines' must be a whole number, "
            "got '1.5'");
  EXPECT_EQ(refusal(base + "links_shared = 2  # source: assumed\n"),
            "cost model 'm.model', line 12: the value of 'links_shared' must be 0 or 1, got '2'");
  EXPECT_EQ(refusal(base + "devices_per_node = 8  # source: assumed\n"),
            "cost model 'm.model': devices_per_node > 0 needs inter_node_alpha_ns");
  EXPECT_EQ(refusal(base + "inter_node_alpha_ns = 9  # source: assumed\n"),
            "cost model 'm.model', line 12: 'inter_node_alpha_ns' has no effect unless "
            "devices_per_node > 0");
  const auto m = anyp::runtime::parse_cost_model(
      base + "dma_engines = 4  # source: x\ndma_issue_ns = 30  # source: x\n", "m.model");
  EXPECT_EQ(m.dma_engines, 4);
  EXPECT_EQ(m.dma_issue_ns, 30);
  EXPECT_FALSE(m.links_shared);
}

}  // namespace
