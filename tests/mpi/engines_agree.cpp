// engines_agree.cpp — the threads engine and the MPI engine give the same
// answer, bit for bit, the same cost card and the same modeled timeline.
// Run under `mpirun -n P` (tests/mpi.cmake): every process runs each program once on the threads
// engine (all P ranks in this process) and once on the MPI engine (its own
// rank), then compares every output byte, every cost card row and every
// op of the modeled timelines (the MPI engine gathers every rank's ops). The
// programs cover each path of the MPI fabric: step 07's put and get, strided
// sub-tile puts and gets (derived datatypes), atomic adds into one window in
// FP32, FP16 and BF16 (compare-and-swap) and INT32, and the builtin
// collectives (every allreduce, broadcast, reduce_scatter and allgather
// algorithm, and every all_to_all's), a put_async, sub-windows of one
// buffer, loops that count across 2^31 and up to INT64's maximum, and the
// dispatch order across ranks (a dispatch waiting for another rank's). Then a program compiled for
// another P must be refused. Process 0 prints "OK", or each difference; the exit code says which.
#include <anyp/anyp.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "support/step07_program.hpp"

namespace {

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

const pl::Dim NR = pl::dynamic("NR");
constexpr std::int64_t N = anyp_test::kStep07Size;  // elements per row, as step 07's

// A host function over x [NR, ROWS (or X_ROWS), N] -> y [NR, ROWS, N] whose per-rank
// kernel gets (x, y, data window [ROWS, N], signal [sig]) and does `body`.
pl::HostFunction make_program(
    const std::string& name, pl::DType dtype, pl::Dim rows, pl::Shape sig,
    std::function<void(pl::Value&, pl::Value&, pl::Value&, pl::Value&)> body,
    std::int64_t blocks = 1, std::optional<pl::Dim> x_rows = std::nullopt) {
  const pl::Dim in_rows = x_rows.value_or(rows);
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({in_rows, N}, dtype)), pl::Out("y", pl::Tensor({rows, N}, dtype)),
      pl::InOut("data", pld::DistributedTensor({rows, N}, dtype)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel = pl::jit::incore(
      name + "_kernel", params, [body](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        body(x, y, data, signal);
      });
  const auto per_rank =
      blocks > 1 ? pl::jit::orchestration_for(name + "_per_rank", kernel, pl::blocks(blocks))
                 : pl::jit::orchestration_for(name + "_per_rank", kernel);
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, in_rows, N}, dtype)),
                        pl::Out("y", pl::Tensor({NR, rows, N}, dtype))},
                       [=](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {rows, N}, dtype);
                         auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r], yr = y[r];
                           pl::Value data = pld::window(data_buf, {rows, N}, dtype);
                           pl::Value signal = pld::window(signal_buf, sig, pl::INT32);
                           per_rank(pl::arg("x") = xr, pl::arg("y") = yr, pl::arg("data") = data,
                                    pl::arg("signal") = signal, pl::device(r));
                         });
                       });
}

// Two rounds: rank r writes y[r], then dispatches a kernel that takes
// y[(r + 1) % P] as In (PyPTO's rule: it waits for rank r + 1's first
// dispatch, through the dispatch order cells) but reads only its window.
pl::HostFunction dispatch_order_program() {
  const auto write = pl::jit::incore(
      "order_write",
      {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32))},
      [](pl::Value x, pl::Value y) {
        y = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, y);
      });
  const auto after =
      pl::jit::incore("order_after",
                      {pl::In("next", pl::Tensor({1, N}, pl::FP32)),
                       pl::InOut("data", pld::DistributedTensor({1, N}, pl::FP32))},
                      [](pl::Value, pl::Value data) {
                        data = pl::store(pl::full({1, N}, 1.0, pl::FP32), {0, 0}, data);
                      });
  const auto write_orch = pl::jit::orchestration_for("order_write_orch", write);
  const auto after_orch = pl::jit::orchestration_for("order_after_orch", after);
  return pl::jit::host("dispatch_order",
                       {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
                       [=](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, N}, pl::FP32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r], yr = y[r];
                           write_orch(xr, yr, pl::device(r));
                         });
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value next = y[(r + 1) % pld::world_size()];
                           after_orch(next, pld::window(data_buf, {1, N}, pl::FP32), pl::device(r));
                         });
                       });
}

struct Case {
  std::string name;
  pl::HostFunction program;
  pl::DType dtype;
  std::int64_t rows;  // kRowPerRank: P rows
  // Concurrent atomic adds land in any order: with small integer inputs
  // every order gives the same sum, in any dtype.
  bool order_free_inputs = false;
  std::int64_t input_rows = -1;  // x's rows when not `rows`
};

// Case::rows of a window of one row per rank ([NR, N]).
constexpr std::int64_t kRowPerRank = 0;

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back({"step07_put", anyp_test::ring_put(), pl::FP32, 1});
  all.push_back({"step07_get", anyp_test::ring_get(), pl::FP32, 1});
  // A [2, 8] sub-tile put into the right neighbour's [4, N] window at
  // (1, 5), then a [3, 7] sub-tile get from the left neighbour at (0, 3):
  // strided on both sides.
  all.push_back({"strided_put_get",
                 make_program("strided", pl::FP32, 4, {NR, 1},
                              [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                                auto ctx = pld::get_comm_ctx(data);
                                pl::Scalar me = pld::rank(ctx), P = pld::nranks(ctx);
                                pl::Scalar right = (me + 1) % P, left = (me + P - 1) % P;
                                pld::tensor::put(data, right, x, {1, 5}, {2, 3}, {2, 8});
                                pld::system::notify(signal, right, {0, 0}, 1, NotifyOp::AtomicAdd);
                                pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                                signal = pld::tensor::barrier(signal);
                                pld::tensor::get(y, left, data, {1, 2}, {0, 3}, {3, 7});
                                y = pl::store(pl::load(data, {2, 0}, {2, N}), {2, 0}, y);
                              }),
                 pl::FP32, 4});
  // A put_async to the right neighbour, waited for before the notify.
  all.push_back({"put_async",
                 make_program("put_async", pl::FP32, 1, {NR, 1},
                              [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                                auto ctx = pld::get_comm_ctx(data);
                                pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
                                const pld::AsyncEvent sent = pld::tensor::put_async(data, right, x);
                                pld::system::wait_async(sent);
                                pld::system::notify(signal, right, {0, 0}, 1, NotifyOp::AtomicAdd);
                                pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                                y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
                              }),
                 pl::FP32, 1});
  // Every rank adds its row into rank 0's window and rank P - 1's, then reads it.
  for (pl::DType dtype : {pl::FP32, pl::FP16, pl::BF16, pl::INT32}) {
    all.push_back({std::string("atomic_add_") + std::string(anyp::dtype_name(dtype)),
                   make_program("atomic", dtype, 1, {NR, 1},
                                [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                                  auto ctx = pld::get_comm_ctx(data);
                                  pl::Scalar last = pld::nranks(ctx) - 1;
                                  pl::Tile t = pl::load(x, {0, 0}, {1, N});
                                  pld::tile::remote_store(t, data, 0, {0, 0}, AtomicType::Add);
                                  pld::tile::remote_store(t, data, last, {0, 0}, AtomicType::Add);
                                  signal = pld::tensor::barrier(signal);
                                  y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
                                }),
                   dtype, 1, true});
  }
  const std::pair<pld::AllreduceMode, const char*> allreduces[] = {
      {pld::AllreduceMode::Mesh, "allreduce_mesh"},
      {pld::AllreduceMode::Ring, "allreduce_ring"},
      {pld::AllreduceMode::RecursiveDoubling, "allreduce_recursive_doubling"},
      {pld::AllreduceMode::Rabenseifner, "allreduce_rabenseifner"},
      {pld::AllreduceMode::Tree, "allreduce_tree"},
      {pld::AllreduceMode::Auto, "allreduce_auto"}};
  for (const auto& [mode, name] : allreduces) {
    const bool ring = mode == pld::AllreduceMode::Ring;
    const pl::Shape sig = ring ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 1};
    all.push_back(
        {name,
         make_program(name, pl::FP32, 2, sig,
                      [mode](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                        data = pl::store(pl::load(x, {0, 0}, {2, N}), {0, 0}, data);
                        data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, mode);
                        y = pl::store(pl::load(data, {0, 0}, {2, N}), {0, 0}, y);
                      }),
         pl::FP32, 2});
  }
  // A kernel over 4 blocks: block b puts row b to the right neighbour and
  // meets the left neighbour's block b on lane b (its blocks run
  // round-robin in the process, with non-blocking waits).
  all.push_back({"multi_block",
                 make_program(
                     "multi_block", pl::FP32, 4, {NR, 4},
                     [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                       auto ctx = pld::get_comm_ctx(data);
                       const pl::Scalar me = pld::rank(ctx), p = pld::nranks(ctx);
                       const pl::Scalar right = (me + 1) % p, left = (me + p - 1) % p;
                       const pl::Scalar b = pl::get_block_idx();
                       pld::tensor::put(data, right, x, {b, 0}, {b, 0}, {1, N});
                       pld::system::notify(signal, right, {me, b}, 1, NotifyOp::AtomicAdd);
                       pld::system::wait(signal, {left, b}, 1, WaitCmp::Ge);
                       pld::system::notify(signal, me, {left, b}, -1, NotifyOp::AtomicAdd);
                       y = pl::store(pl::load(data, {b, 0}, {1, N}), {b, 0}, y);
                     },
                     4),
                 pl::FP32, 4});
  // Two sub-windows of one buffer (pld::window's element offset): each
  // rank puts its row into the second half of its right neighbour's buffer.
  all.push_back(
      {"sub_windows",
       pl::jit::host(
           "sub_windows",
           {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
            pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
           [](pl::Value x, pl::Value y) {
             auto buf = pld::alloc_window_buffer("halves", {2, N}, pl::FP32);
             auto sig = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
             static const auto kernel = pl::jit::incore(
                 "sub_window_kernel",
                 {pl::In("x", pl::Tensor({1, N}, pl::FP32)),
                  pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
                  pl::InOut("low", pld::DistributedTensor({1, N}, pl::FP32)),
                  pl::InOut("high", pld::DistributedTensor({1, N}, pl::FP32)),
                  pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
                 [](pl::Value x, pl::Value y, pl::Value low, pl::Value high, pl::Value signal) {
                   auto ctx = pld::get_comm_ctx(high);
                   pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
                   low = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, low);
                   pld::tensor::put(high, right, low);
                   signal = pld::tensor::barrier(signal);
                   y = pl::store(pl::load(high, {0, 0}, {1, N}), {0, 0}, y);
                 });
             static const auto per_rank = pl::jit::orchestration_for("sub_window_per_rank", kernel);
             pl::range(pld::world_size(), [&](pl::Scalar r) {
               pl::Value xr = x[r], yr = y[r];
               pl::Value low = pld::window(buf, {1, N}, pl::FP32, 0);
               pl::Value high = pld::window(buf, {1, N}, pl::FP32, N);
               pl::Value signal = pld::window(sig, {NR, 1}, pl::INT32);
               per_rank(pl::arg("x") = xr, pl::arg("y") = yr, pl::arg("low") = low,
                        pl::arg("high") = high, pl::arg("signal") = signal, pl::device(r));
             });
           }),
       pl::FP32, 1});
  // A put and a get of the same peer bytes with no signal between: the get
  // must see the put (the fabric flushes the peer first).
  all.push_back({"put_then_get",
                 make_program("put_then_get", pl::FP32, 1, {NR, 1},
                              [](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                                auto ctx = pld::get_comm_ctx(data);
                                pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
                                pld::tensor::put(data, right, x);
                                pld::tensor::get(y, right, data);
                                signal = pld::tensor::barrier(signal);
                              }),
                 pl::FP32, 1});
  // Loops that count across 2^31 and end next to INT64's maximum (the last
  // increment would overflow): one notify to the right per iteration, and
  // the counts written out.
  all.push_back(
      {"int64_loops",
       make_program("int64_loops", pl::INT32, 1, {NR, 1},
                    [](pl::Value&, pl::Value& y, pl::Value& data, pl::Value& signal) {
                      auto ctx = pld::get_comm_ctx(data);
                      pl::Scalar me = pld::rank(ctx);
                      pl::Scalar right = (me + 1) % pld::nranks(ctx);
                      pl::Scalar start = pl::cast(me, pl::INT64) + 2147483645;
                      pl::Scalar count = 0;
                      pl::range(start, 2147483650, [&](pl::Scalar) {
                        pld::system::notify(signal, right, {0, 0}, 1, NotifyOp::AtomicAdd);
                        count = count + 1;
                      });
                      pl::Scalar big = 0;
                      pl::range(pl::cast(9223372036854775797, pl::INT64), 9223372036854775807, 4,
                                [&](pl::Scalar) { big = big + 1; });
                      pl::write(y, {0, 0}, count);
                      pl::write(y, {0, 1}, big);
                      pl::Scalar left = (me + pld::nranks(ctx) - 1) % pld::nranks(ctx);
                      pld::system::wait(signal, {0, 0}, 5 - left, WaitCmp::Ge);
                      pl::write(y, {0, 2}, pl::read(signal, {0, 0}));
                    }),
       pl::INT32, 1});
  all.push_back({"dispatch_order", dispatch_order_program(), pl::FP32, 1});
  const std::pair<pld::BroadcastMode, const char*> broadcasts[] = {
      {pld::BroadcastMode::Mesh, "broadcast"},
      {pld::BroadcastMode::Tree, "broadcast_tree"},
      {pld::BroadcastMode::ScatterAllgather, "broadcast_scatter_allgather"}};
  for (const auto& [mode, name] : broadcasts) {
    all.push_back(
        {name,
         make_program(name, pl::FP16, 1, {NR, 1},
                      [mode](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                        data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
                        signal = pld::tensor::barrier(signal);
                        data = pld::tensor::broadcast(data, signal, 1, mode);
                        y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
                      }),
         pl::FP16, 1});
  }
  // The reduce_scatters and allgathers over a window of one row per rank.
  const std::pair<pld::ReduceScatterMode, const char*> reduce_scatters[] = {
      {pld::ReduceScatterMode::Mesh, "reduce_scatter_mesh"},
      {pld::ReduceScatterMode::RecursiveHalving, "reduce_scatter_recursive_halving"},
      {pld::ReduceScatterMode::Pairwise, "reduce_scatter_pairwise"},
      {pld::ReduceScatterMode::Auto, "reduce_scatter_auto"}};
  for (const auto& [mode, name] : reduce_scatters) {
    all.push_back(
        {name,
         make_program(name, pl::FP32, NR, {NR, 1},
                      [mode](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                        pl::range(NR, [&](pl::Scalar i) {
                          data = pl::store(pl::load(x, {i, 0}, {1, N}), {i, 0}, data);
                        });
                        data = pld::tensor::reduce_scatter(data, signal, pld::ReduceOp::Sum, mode);
                        pl::range(NR, [&](pl::Scalar i) {
                          y = pl::store(pl::load(data, {i, 0}, {1, N}), {i, 0}, y);
                        });
                      }),
         pl::FP32, kRowPerRank});
  }
  const std::pair<pld::AllgatherMode, const char*> allgathers[] = {
      {pld::AllgatherMode::Mesh, "allgather_mesh"},
      {pld::AllgatherMode::Bruck, "allgather_bruck"},
      {pld::AllgatherMode::RecursiveDoubling, "allgather_recursive_doubling"},
      {pld::AllgatherMode::Auto, "allgather_auto"}};
  for (const auto& [mode, name] : allgathers) {
    all.push_back({name,
                   make_program(
                       name, pl::BF16, NR, {NR, 1},
                       [mode](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                         data = pld::tensor::allgather(x, data, signal, mode);
                         pl::range(NR, [&](pl::Scalar i) {
                           y = pl::store(pl::load(data, {i, 0}, {1, N}), {i, 0}, y);
                         });
                       },
                       1, pl::Dim(1)),
                   pl::BF16, kRowPerRank, false, 1});
  }
  const std::pair<pld::AllToAllMode, const char*> all_to_alls[] = {
      {pld::AllToAllMode::Mesh, "all_to_all_mesh"},
      {pld::AllToAllMode::Pairwise, "all_to_all_pairwise"},
      {pld::AllToAllMode::Bruck, "all_to_all_bruck"},
      {pld::AllToAllMode::Auto, "all_to_all_auto"}};
  for (const auto& [mode, name] : all_to_alls) {
    all.push_back(
        {name,
         make_program(name, pl::INT32, NR, {NR, 1},
                      [mode](pl::Value& x, pl::Value& y, pl::Value& data, pl::Value& signal) {
                        data = pld::tensor::all_to_all(x, data, signal, mode);
                        pl::range(NR, [&](pl::Scalar i) {
                          y = pl::store(pl::load(data, {i, 0}, {1, N}), {i, 0}, y);
                        });
                      }),
         pl::INT32, kRowPerRank});
  }
  return all;
}

// Values with a fractional part, so that a different summation order shows
// (or small integers: Case::order_free_inputs).
anyp::HostTensor input(std::int64_t P, pl::DType dtype, std::int64_t rows, bool integers) {
  anyp::HostTensor x = anyp::HostTensor::zeros({P, rows, N}, dtype);
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    if (integers) {
      x.set(i, static_cast<double>((i * 7919) % 129 - 64));
    } else if (dtype == pl::INT32) {
      x.set_int(i, (i * 7919) % 2001 - 1000);
    } else {
      x.set(i, static_cast<double>((i * 7919) % 2001 - 1000) / 256.0 + 0.1);
    }
  }
  return x;
}

// "" when two timelines place every op alike, else the first difference.
std::string timeline_difference(const anyp::Timeline& a, const anyp::Timeline& b) {
  if (a.makespan_ns != b.makespan_ns)
    return "makespan " + std::to_string(a.makespan_ns) + " against " +
           std::to_string(b.makespan_ns);
  if (a.rounds != b.rounds || a.flows.size() != b.flows.size() || a.ops.size() != b.ops.size())
    return "rounds, flows or ops differ";
  if (a.ops.empty()) return "no ops";
  for (std::size_t i = 0; i < a.ops.size(); ++i) {
    const anyp::TimelineOp &x = a.ops[i], &y = b.ops[i];
    if (x.kind != y.kind || x.rank != y.rank || x.start_ns != y.start_ns || x.end_ns != y.end_ns ||
        x.bytes != y.bytes || a.name(x.memory) != b.name(y.memory))
      return "op " + std::to_string(i) + " of rank " + std::to_string(x.rank);
  }
  for (std::size_t i = 0; i < a.flows.size(); ++i) {
    if (a.flows[i].notify != b.flows[i].notify || a.flows[i].wait != b.flows[i].wait)
      return "flow " + std::to_string(i);
  }
  return "";
}

}  // namespace

int compare_engines(const anyp::ProcessWorld& world);

int main() {
  const anyp::ProcessWorld world = anyp::process_world("mpi");
  try {
    return compare_engines(world);
  } catch (const std::exception& e) {
    if (world.rank == 0) std::cerr << e.what() << '\n';
    return 1;
  }
}

int compare_engines(const anyp::ProcessWorld& world) {
  const std::int64_t P = world.size;
  int differences = 0;
  auto report = [&](const std::string& text) {
    ++differences;
    if (world.rank == 0) std::cerr << text << '\n';
  };
  for (const Case& c : cases()) {
    const std::int64_t rows = c.rows == kRowPerRank ? P : c.rows;
    const anyp::HostTensor x =
        input(P, c.dtype, c.input_rows < 0 ? rows : c.input_rows, c.order_free_inputs);
    anyp::HostTensor y_threads = anyp::HostTensor::zeros({P, rows, N}, c.dtype);
    anyp::HostTensor y_mpi = anyp::HostTensor::zeros({P, rows, N}, c.dtype);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.timeline = true;
    const anyp::RunStats threads = c.program.compile({x, y_threads}, config)(x, y_threads);
    config.engine = "mpi";
    const anyp::RunStats mpi = c.program.compile({x, y_mpi}, config)(x, y_mpi);
    if (std::memcmp(y_threads.data(), y_mpi.data(), static_cast<std::size_t>(y_mpi.nbytes())) != 0)
      report(c.name + ": outputs differ (max diff " +
             std::to_string(anyp::max_abs_diff(y_threads, y_mpi)) + ")");
    for (std::int64_t r = 0; r < P; ++r) {
      if (!(threads.cost[r] == mpi.cost[r]))
        report(c.name + ": cost card row of rank " + std::to_string(r) + " differs");
    }
    if (const std::string d = timeline_difference(*threads.timeline, *mpi.timeline); !d.empty())
      report(c.name + ": modeled timelines differ: " + d);
    // Both engines writing nothing would agree too: an output must say something.
    bool written = false;
    for (std::size_t i = 0; i < y_mpi.nbytes() && !written; ++i)
      written = y_mpi.data()[i] != std::byte{0};
    if (!written) report(c.name + ": the output is all zero on the MPI engine");
  }
  // The MPI engine runs one rank per process: a program compiled for
  // another P is refused before it runs, on every process alike.
  {
    const anyp::HostTensor x = input(P + 1, pl::FP32, 1, false);
    anyp::HostTensor y = anyp::HostTensor::zeros({P + 1, 1, N}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P + 1);
    config.engine = "mpi";
    const std::string want =
        "engine 'mpi': 'ring_put' was compiled for P = " + std::to_string(P + 1) +
        " ranks, but the MPI world has " + std::to_string(P) +
        " processes; start it with mpirun -n " + std::to_string(P + 1) +
        " (the MPI engine runs one rank per process)";
    try {
      anyp_test::ring_put().compile({x, y}, config)(x, y);
      report("a program compiled for P + 1 ran on the MPI engine");
    } catch (const anyp::ConfigError& e) {
      if (e.what() != want) report(std::string("P + 1: got '") + e.what() + "'");
    }
  }
  // More staged tile puts (64 KiB each, 72 of them) than the 4 MiB staging
  // arena holds, to distinct rows of the right neighbour's window.
  {
    constexpr std::int64_t kRow = 16384, kRows = 72;
    const std::vector<pl::Param> params = {
        pl::In("x", pl::Tensor({1, kRow}, pl::FP32)), pl::Out("y", pl::Tensor({1, kRow}, pl::FP32)),
        pl::InOut("data", pld::DistributedTensor({kRows, kRow}, pl::FP32)),
        pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
    const auto kernel = pl::jit::incore(
        "many_puts", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
          auto ctx = pld::get_comm_ctx(data);
          pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
          pl::range(kRows, [&](pl::Scalar i) {
            pld::tile::remote_store(pl::load(x, {0, 0}, {1, kRow}), data, right, {i, 0});
          });
          signal = pld::tensor::barrier(signal);
          y = pl::store(pl::load(data, {kRows - 1, 0}, {1, kRow}), {0, 0}, y);
        });
    const auto per_rank = pl::jit::orchestration_for("many_puts_per_rank", kernel);
    const auto program =
        pl::jit::host("many_puts",
                      {pl::In("x", pl::Tensor({NR, 1, kRow}, pl::FP32)),
                       pl::Out("y", pl::Tensor({NR, 1, kRow}, pl::FP32))},
                      [&](pl::Value x, pl::Value y) {
                        auto data_buf = pld::alloc_window_buffer("data", {kRows, kRow}, pl::FP32);
                        auto sig_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                        pl::range(pld::world_size(), [&](pl::Scalar r) {
                          pl::Value xr = x[r], yr = y[r];
                          per_rank(xr, yr, pld::window(data_buf, {kRows, kRow}, pl::FP32),
                                   pld::window(sig_buf, {NR, 1}, pl::INT32), pl::device(r));
                        });
                      });
    anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, kRow}, pl::FP32);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, static_cast<double>(i % 1000));
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, kRow}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    config.engine = "mpi";
    program.compile({x, y}, config)(x, y);
    for (std::int64_t r = 0; r < P && differences == 0; ++r) {
      for (std::int64_t i = 0; i < kRow; ++i) {
        const double want = x.at({(r + P - 1) % P, 0, i});
        if (y.at({r, 0, i}) != want) {
          report("many_puts: rank " + std::to_string(r) + " element " + std::to_string(i) + " is " +
                 std::to_string(y.at({r, 0, i})) + ", want " + std::to_string(want));
          break;
        }
      }
    }
  }
  // Host tensors are per process during an MPI run: a rank that reads host
  // bytes another rank wrote (ordered by a barrier, so right on the threads
  // engine) gets a run error, not the stale value.
  {
    const std::vector<pl::Param> params = {
        // t is Out: as InOut, every rank's dispatch would wait for the last
        // writer of t (PyPTO's dispatch order), which waits in the barrier.
        pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("t", pl::Tensor({NR, N}, pl::FP32)),
        pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
        pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
    const auto kernel = pl::jit::incore(
        "host_handoff", params, [](pl::Value x, pl::Value t, pl::Value y, pl::Value signal) {
          auto ctx = pld::get_comm_ctx(signal);
          pl::Scalar me = pld::rank(ctx), ranks = pld::nranks(ctx);
          t = pl::store(pl::load(x, {0, 0}, {1, N}) + 1, {me, 0}, t);
          signal = pld::tensor::barrier(signal);
          y = pl::store(pl::load(t, {(me + 1) % ranks, 0}, {1, N}), {0, 0}, y);
        });
    const auto per_rank = pl::jit::orchestration_for("host_handoff_per_rank", kernel);
    const auto program = pl::jit::host(
        "host_handoff",
        {pl::In("x", pl::Tensor({NR, 1, N}, pl::FP32)),
         pl::InOut("t", pl::Tensor({NR, N}, pl::FP32)),
         pl::Out("y", pl::Tensor({NR, 1, N}, pl::FP32))},
        [&](pl::Value x, pl::Value t, pl::Value y) {
          auto sig_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
          pl::range(pld::world_size(), [&](pl::Scalar r) {
            pl::Value xr = x[r], yr = y[r];
            per_rank(xr, t, yr, pld::window(sig_buf, {NR, 1}, pl::INT32), pl::device(r));
          });
        });
    const anyp::HostTensor x = input(P, pl::FP32, 1, true);
    anyp::HostTensor t = anyp::HostTensor::zeros({P, N}, pl::FP32);
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, N}, pl::FP32);
    anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
    program.compile({x, t, y}, config)(x, t, y);  // threads: y[r] = x[r + 1] + 1
    if (y.at({0, 0, 0}) != x.at({1, 0, 0}) + 1) report("host_handoff: wrong on the threads engine");
    config.engine = "mpi";
    const std::string want =
        "run error: engine 'mpi': rank 0 read host tensor 't' (from element [1, 0]) that rank 1 "
        "wrote in the same run; on the MPI engine each process holds its own copy of the host "
        "tensors during a run, so rank 0 cannot see rank 1's write: pass data between ranks "
        "through windows (put/get), not host tensors";
    try {
      program.compile({x, t, y}, config)(x, t, y);
      report("host_handoff: a read of another rank's host write ran on the MPI engine");
    } catch (const anyp::RunError& e) {
      if (e.what() != want) report(std::string("host_handoff: got '") + e.what() + "'");
    }
  }
  if (differences == 0 && world.rank == 0) std::cout << "OK\n";
  return differences == 0 ? 0 : 1;
}
