// cost_card_test.cpp — the counted cost of a run (RunStats::cost, one
// RankCost per rank, and RunStats::total()) of every builtin collective and
// of the hand-written step-07 ring, at P = 2..8, against the cost-card
// formulas of docs/collectives.md §3 and docs/ladder-steps.md §5 (steps 04,
// 06/07, 11–16; docs/design.md §11 for the credit barriers). N is the bytes
// of the collective's data buffer, S = one row; self-accesses are local and
// never counted as RMA or bytes.
//
//   barrier         0 B, 0 RMA, P-1 notify (+E P-1), P-1 wait
//   allreduce mesh  (P-1) N in, (P-1) K RMA, (1+K)(P-1) notify (+E P-1), (1+K)(P-1) wait;
//                   K = ceil(N / 16 KiB) chunks
//   allreduce ring  2(P-1) N in over all ranks (2(P-1)/P N each when P divides
//                   the size), 2(P-1) J RMA, 2P-1 notify (+E 2P-1), 2P-1 wait
//                   (neighbour handshakes; J sub-chunks per segment over 16 KiB)
//   broadcast       non-root N in, 1 RMA; root 0 RMA; P-1 notify (+E P-1), P-1 wait
//   allgather       (P-1) S out and (P-1) S in, P-1 RMA (the self-put is local),
//                   P-1 notify (+E P-1), P-1 wait
//   reduce_scatter  (P-1) N/P in, P-1 RMA, 2(P-1) notify (+E P-1), 2(P-1) wait
//   all_to_all      (P-1) N/P out and (P-1) N/P in, P-1 RMA, P-1 notify (+E P-1), P-1 wait
//   step 07 get     S in, 1 RMA, 1 notify, 0 +E, 1 wait (put: S out and S in)
//
// A pull counts as bytes_in of the puller; a push as bytes_out of the sender
// and bytes_in of the receiver (RankCost, compiled_program.hpp).
//
// Every program only stages and reads its own window around the call, so
// the collective is all that is counted.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t ROW = 64;        // elements in one row of the row-wise collectives
constexpr std::int64_t S = 4 * ROW;     // bytes in one FP32 row
constexpr std::int64_t KCHUNK = 16384;  // the mesh allreduce's chunk, in bytes

using pld::AllreduceMode;
using pld::ReduceOp;

std::string text(const anyp::RankCost& c) {
  std::ostringstream s;
  s << "in " << c.bytes_in << ", out " << c.bytes_out << ", RMA " << c.rma << ", notify "
    << c.notifies << " (+E " << c.local_notifies << "), wait " << c.waits;
  return s.str();
}

anyp::RankCost cost(std::int64_t in, std::int64_t out, std::int64_t rma, std::int64_t notifies,
                    std::int64_t local, std::int64_t waits) {
  return anyp::RankCost{.bytes_in = in,
                        .bytes_out = out,
                        .rma = rma,
                        .notifies = notifies,
                        .local_notifies = local,
                        .waits = waits};
}

// "" when every rank's counted cost and the total equal the expectation.
std::string cost_mismatch(const anyp::RunStats& stats,
                          const std::function<anyp::RankCost(std::int64_t r)>& expected) {
  const auto P = static_cast<std::int64_t>(stats.cost.size());
  anyp::RankCost total;
  std::string failure;
  for (std::int64_t r = 0; r < P; ++r) {
    const anyp::RankCost want = expected(r);
    total += want;
    if (failure.empty() && !(stats.cost[static_cast<std::size_t>(r)] == want)) {
      failure = "P=" + std::to_string(P) + " rank " + std::to_string(r) + ": counted " +
                text(stats.cost[static_cast<std::size_t>(r)]) + "; expected " + text(want);
    }
  }
  if (failure.empty() && !(stats.total() == total)) {
    failure = "P=" + std::to_string(P) + " total: counted " + text(stats.total()) + "; expected " +
              text(total);
  }
  return failure;
}

// ---- one program shape -----------------------------------------------------------------
// host -> per_rank -> kernel with x (in), y (out) and the windows data and
// signal; the kernel runs `body`.

struct Layout {
  pl::Shape x, y, data;
  pl::Shape signal = {NR, 1};
  pl::DType dtype = pl::FP32;
};

using Body = std::function<void(pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal)>;

pl::Shape ranked(const pl::Shape& shape) {
  pl::Shape s{NR};
  s.insert(s.end(), shape.begin(), shape.end());
  return s;
}

pl::HostFunction make_program(const std::string& name, const Layout& l, const Body& body) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor(l.x, l.dtype)), pl::Out("y", pl::Tensor(l.y, l.dtype)),
      pl::InOut("data", pld::DistributedTensor(l.data, l.dtype)),
      pl::InOut("signal", pld::DistributedTensor(l.signal, pl::INT32))};
  const auto kernel = pl::jit::incore(
      name + "_kernel", params, [body](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        body(x, y, data, signal);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params, [kernel](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        kernel(x, y, data, signal);
      });
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor(ranked(l.x), l.dtype)),
                        pl::Out("y", pl::Tensor(ranked(l.y), l.dtype))},
                       [l, per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", l.data, l.dtype);
                         auto signal_buf = pld::alloc_window_buffer("signal", l.signal, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(data_buf, l.data, l.dtype),
                                    pld::window(signal_buf, l.signal, pl::INT32), pl::device(r));
                         });
                       });
}

// Runs `program` on uniform inputs of the given host shapes; returns the counters.
anyp::RunStats run(const pl::HostFunction& program, const std::vector<std::int64_t>& x_shape,
                   const std::vector<std::int64_t>& y_shape, std::int64_t P,
                   pl::DType dtype = pl::FP32) {
  anyp::InputGenerator gen(4);
  const anyp::HostTensor x = gen.uniform(x_shape, dtype);
  const anyp::HostTensor y = anyp::HostTensor::zeros(y_shape, dtype);
  return program.compile({x, y}, anyp::RunConfig::for_world_size(P))(x, y);
}

// ---- barrier ------------------------------------------------------------------------------

TEST(CostCard, Barrier) {
  Layout l;
  l.x = l.y = l.data = {1, ROW};
  const pl::HostFunction program =
      make_program("barrier", l, [](pl::Value&, pl::Value&, pl::Value&, pl::Value& signal) {
        signal = pld::tensor::barrier(signal);
      });
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::RunStats stats = run(program, {P, 1, ROW}, {P, 1, ROW}, P);
    EXPECT_EQ(
        cost_mismatch(stats, [P](std::int64_t) { return cost(0, 0, 0, P - 1, P - 1, P - 1); }), "");
  }
}

// ---- allreduce ----------------------------------------------------------------------------

pl::HostFunction allreduce_program(AllreduceMode mode, std::int64_t size, pl::DType dtype) {
  Layout l;
  l.x = l.y = l.data = {1, size};
  l.dtype = dtype;
  if (mode == AllreduceMode::Ring) l.signal = {2 * (NR - 1), NR};
  return make_program("allreduce", l,
                      [mode, size](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                        data = pl::store(pl::load(x, {0, 0}, {1, size}), {0, 0}, data);
                        data = pld::tensor::allreduce(data, signal, ReduceOp::Sum, mode);
                        y = pl::store(pl::load(data, {0, 0}, {1, size}), {0, 0}, y);
                      });
}

// The mesh: K = ceil(N / 16 KiB) chunks, N the data's bytes. 960 FP32 is
// step 11's N = 3840 B (K = 1); 8192 FP32 = 32 KiB (K = 2); 10240 FP32 =
// 40 KiB (K = 3); 16384 FP16 = 32 KiB (K = 2: chunks count bytes, not elements).
TEST(CostCard, AllreduceMesh) {
  struct Case {
    std::int64_t size;
    pl::DType dtype;
    std::int64_t K;
  };
  for (const Case& c : {Case{960, pl::FP32, 1}, Case{4096, pl::FP32, 1}, Case{8192, pl::FP32, 2},
                        Case{10240, pl::FP32, 3}, Case{16384, pl::FP16, 2}}) {
    const std::int64_t N = c.size * static_cast<std::int64_t>(anyp::dtype_bytes(c.dtype));
    ASSERT_EQ(c.K, (N + KCHUNK - 1) / KCHUNK);
    const pl::HostFunction program = allreduce_program(AllreduceMode::Mesh, c.size, c.dtype);
    for (std::int64_t P = 2; P <= 8; ++P) {
      const anyp::RunStats stats = run(program, {P, 1, c.size}, {P, 1, c.size}, P, c.dtype);
      EXPECT_EQ(cost_mismatch(stats,
                              [&](std::int64_t) {
                                return cost((P - 1) * N, 0, (P - 1) * c.K, (1 + c.K) * (P - 1),
                                            P - 1, (1 + c.K) * (P - 1));
                              }),
                "")
          << "N=" << N << " K=" << c.K;
    }
  }
}

// The ring's neighbour handshakes: 2 (P - 1) ready credits and one
// read-done to peers, as many waits, and one epilogue notify per cell used.
anyp::RankCost ring_cost(std::int64_t bytes_in, std::int64_t P, std::int64_t subs) {
  const std::int64_t q = P - 1;
  return cost(bytes_in, 0, 2 * q * subs, 2 * q + 1, 2 * q + 1, 2 * q + 1);
}

// The ring with a size every P = 2..8 divides (840 = lcm(2..8)), and 16: each
// rank takes 2 (P - 1) / P N in, as 2 (P - 1) RMA of N / P.
TEST(CostCard, AllreduceRingEvenSegments) {
  constexpr std::int64_t SIZE = 1680;
  constexpr std::int64_t N = 4 * SIZE;
  const pl::HostFunction program = allreduce_program(AllreduceMode::Ring, SIZE, pl::FP32);
  for (std::int64_t P : {2, 3, 4, 5, 6, 7, 8, 16}) {
    const anyp::RunStats stats = run(program, {P, 1, SIZE}, {P, 1, SIZE}, P);
    EXPECT_EQ(
        cost_mismatch(stats, [&](std::int64_t) { return ring_cost(2 * (P - 1) * N / P, P, 1); }),
        "")
        << "P=" << P;
  }
}

// Uneven segments (960 elements at P = 7: segments of 137 and 138): the total
// is still 2 (P - 1) N; each rank reads every segment but one in each phase,
// so its bytes lie between 2 N minus two of the largest and two of the
// smallest segments.
TEST(CostCard, AllreduceRingUnevenSegments) {
  for (std::int64_t size : {960, 1000}) {
    const std::int64_t N = 4 * size;
    const pl::HostFunction program = allreduce_program(AllreduceMode::Ring, size, pl::FP32);
    for (std::int64_t P : {2, 3, 4, 5, 6, 7, 8, 13}) {
      const anyp::RunStats stats = run(program, {P, 1, size}, {P, 1, size}, P);
      const std::int64_t q = P - 1;
      const std::int64_t small = 4 * (size / P), large = 4 * ((size + P - 1) / P);
      for (std::int64_t r = 0; r < P; ++r) {
        const anyp::RankCost& c = stats.cost[static_cast<std::size_t>(r)];
        EXPECT_GE(c.bytes_in, 2 * N - 2 * large) << "size=" << size << " P=" << P << " r=" << r;
        EXPECT_LE(c.bytes_in, 2 * N - 2 * small) << "size=" << size << " P=" << P << " r=" << r;
        EXPECT_EQ(text(c), text(ring_cost(c.bytes_in, P, 1)))
            << "size=" << size << " P=" << P << " r=" << r;
      }
      EXPECT_EQ(stats.total().bytes_in, 2 * q * N) << "size=" << size << " P=" << P;
    }
  }
}

// Ring segments over 16 KiB run in sub-chunks (20480 FP32: 40 KiB segments
// at P = 2, 3 sub-chunks; about 27 KiB at P = 3 and 20 KiB at P = 4, 2; 16 KiB
// at P = 5, 1): every sub-chunk is one RMA, and the handshakes are per round,
// not per sub-chunk.
TEST(CostCard, AllreduceRingSubChunks) {
  constexpr std::int64_t SIZE = 20480;
  constexpr std::int64_t N = 4 * SIZE;
  const pl::HostFunction program = allreduce_program(AllreduceMode::Ring, SIZE, pl::FP32);
  for (std::int64_t P = 2; P <= 5; ++P) {
    const std::int64_t subs = (4 * ((SIZE + P - 1) / P) + KCHUNK - 1) / KCHUNK;
    const anyp::RunStats stats = run(program, {P, 1, SIZE}, {P, 1, SIZE}, P);
    const std::int64_t q = P - 1;
    EXPECT_EQ(stats.total().bytes_in, 2 * q * N) << "P=" << P;
    EXPECT_EQ(cost_mismatch(stats,
                            [&](std::int64_t r) {
                              return ring_cost(stats.cost[static_cast<std::size_t>(r)].bytes_in, P,
                                               subs);
                            }),
              "")
        << "subs=" << subs;
  }
}

// ---- broadcast ----------------------------------------------------------------------------

pl::HostFunction broadcast_program(const pl::Dim& root) {
  Layout l;
  l.x = l.y = l.data = {1, ROW};
  return make_program(
      "broadcast", l, [root](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
        pl::if_(r == root, [&] { data = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, data); });
        data = pld::tensor::broadcast(data, signal, root);
        y = pl::store(pl::load(data, {0, 0}, {1, ROW}), {0, 0}, y);
      });
}

TEST(CostCard, Broadcast) {
  const std::int64_t N = S;
  for (bool last : {false, true}) {
    const pl::HostFunction program = broadcast_program(last ? NR - 1 : pl::Dim(0));
    for (std::int64_t P = 2; P <= 8; ++P) {
      const std::int64_t root = last ? P - 1 : 0;
      const anyp::RunStats stats = run(program, {P, 1, ROW}, {P, 1, ROW}, P);
      EXPECT_EQ(cost_mismatch(stats,
                              [&](std::int64_t r) {
                                return r == root ? cost(0, 0, 0, P - 1, P - 1, P - 1)
                                                 : cost(N, 0, 1, P - 1, P - 1, P - 1);
                              }),
                "")
          << "root=" << root;
    }
  }
}

// ---- allgather ----------------------------------------------------------------------------

TEST(CostCard, Allgather) {
  Layout l;
  l.x = {1, ROW};
  l.y = l.data = {NR, ROW};
  const pl::HostFunction program = make_program(
      "allgather", l, [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
        data = pld::tensor::allgather(x, data, signal);
        y = pl::store(pl::load(data, {0, 0}, {NR, ROW}), {0, 0}, y);
      });
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::RunStats stats = run(program, {P, 1, ROW}, {P, P, ROW}, P);
    EXPECT_EQ(cost_mismatch(stats,
                            [&](std::int64_t) {
                              return cost((P - 1) * S, (P - 1) * S, P - 1, P - 1, P - 1, P - 1);
                            }),
              "");
  }
}

// ---- reduce_scatter -------------------------------------------------------------------------

TEST(CostCard, ReduceScatter) {
  Layout l;
  l.x = l.data = {NR, ROW};
  l.y = {1, ROW};
  const pl::HostFunction program = make_program(
      "reduce_scatter", l, [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
        pl::Scalar r = pld::rank(pld::get_comm_ctx(data));
        data = pl::store(pl::load(x, {0, 0}, {NR, ROW}), {0, 0}, data);
        data = pld::tensor::reduce_scatter(data, signal, ReduceOp::Prod);
        y = pl::store(pl::load(data, {r, 0}, {1, ROW}), {0, 0}, y);
      });
  for (std::int64_t P = 2; P <= 8; ++P) {
    const std::int64_t N = P * S;  // the [NR, ROW] window
    const anyp::RunStats stats = run(program, {P, P, ROW}, {P, 1, ROW}, P);
    EXPECT_EQ(cost_mismatch(stats,
                            [&](std::int64_t) {
                              return cost((P - 1) * N / P, 0, P - 1, 2 * (P - 1), P - 1,
                                          2 * (P - 1));
                            }),
              "");
  }
}

// ---- all_to_all ---------------------------------------------------------------------------

TEST(CostCard, AllToAll) {
  Layout l;
  l.x = l.y = l.data = {NR, ROW};
  const pl::HostFunction program = make_program(
      "all_to_all", l, [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
        data = pld::tensor::all_to_all(x, data, signal);
        y = pl::store(pl::load(data, {0, 0}, {NR, ROW}), {0, 0}, y);
      });
  for (std::int64_t P = 2; P <= 8; ++P) {
    const std::int64_t N = P * S;
    const anyp::RunStats stats = run(program, {P, P, ROW}, {P, P, ROW}, P);
    EXPECT_EQ(cost_mismatch(stats,
                            [&](std::int64_t) {
                              return cost((P - 1) * N / P, (P - 1) * N / P, P - 1, P - 1, P - 1,
                                          P - 1);
                            }),
              "");
  }
}

// ---- step 07: the hand-written ring (get and put) ------------------------------------------
// Copies of examples/distributed/07_dynamic_rank_count.cpp's kernels: one
// pairwise handshake and one transfer of S with a neighbour, at any P (a put
// sends S to the right and receives S from the left).

const std::vector<pl::Param> kStep07Params = {
    pl::In("x", pl::Tensor({1, ROW}, pl::FP32)), pl::Out("y", pl::Tensor({1, ROW}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, ROW}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};

const auto get_step =
    pl::jit::incore("get_step", kStep07Params,
                    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
                      auto ctx = pld::get_comm_ctx(src);
                      pl::Scalar my_rank = pld::rank(ctx);
                      pl::Scalar nranks = pld::nranks(ctx);
                      pl::Scalar left = (my_rank + nranks - 1) % nranks;
                      pl::Scalar right = (my_rank + 1) % nranks;
                      src = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, src);
                      pld::system::notify(signal, left, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
                      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
                      pld::tensor::get(dst, right, src);
                      y = pl::store(pl::load(dst, {0, 0}, {1, ROW}), {0, 0}, y);
                    });

const auto put_step =
    pl::jit::incore("put_step", kStep07Params,
                    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
                      auto ctx = pld::get_comm_ctx(src);
                      pl::Scalar my_rank = pld::rank(ctx);
                      pl::Scalar nranks = pld::nranks(ctx);
                      pl::Scalar right = (my_rank + 1) % nranks;
                      src = pl::store(pl::load(x, {0, 0}, {1, ROW}), {0, 0}, src);
                      pld::tensor::put(dst, right, src, pld::AtomicType::None);
                      pld::system::notify(signal, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
                      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
                      y = pl::store(pl::load(dst, {0, 0}, {1, ROW}), {0, 0}, y);
                    });

pl::HostFunction make_ring(const char* name, const pl::Function& step) {
  const auto per_rank =
      pl::jit::orchestration("per_rank", kStep07Params,
                             [step](pl::Value x, pl::Value y, pl::Value src, pl::Value dst,
                                    pl::Value signal) { step(x, y, src, dst, signal); });
  return pl::jit::host(
      name,
      {pl::In("x", pl::Tensor({NR, 1, ROW}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, ROW}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        auto src_buf = pld::alloc_window_buffer("src_buf", {1, ROW}, pl::FP32);
        auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, ROW}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr = x[r];
          pl::Value yr = y[r];
          per_rank(xr, yr, pld::window(src_buf, {1, ROW}, pl::FP32),
                   pld::window(dst_buf, {1, ROW}, pl::FP32),
                   pld::window(signal_buf, {1, 1}, pl::INT32), pl::device(r));
        });
      });
}

TEST(CostCard, Step07GetRing) {
  const pl::HostFunction ring = make_ring("ring_get", get_step);
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::RunStats stats = run(ring, {P, 1, ROW}, {P, 1, ROW}, P);
    EXPECT_EQ(cost_mismatch(stats, [](std::int64_t) { return cost(S, 0, 1, 1, 0, 1); }), "");
  }
}

TEST(CostCard, Step07PutRing) {
  const pl::HostFunction ring = make_ring("ring_put", put_step);
  for (std::int64_t P = 2; P <= 8; ++P) {
    const anyp::RunStats stats = run(ring, {P, 1, ROW}, {P, 1, ROW}, P);
    EXPECT_EQ(cost_mismatch(stats, [](std::int64_t) { return cost(S, S, 1, 1, 0, 1); }), "");
  }
}

}  // namespace
