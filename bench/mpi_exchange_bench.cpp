// mpi_exchange_bench.cpp — anyp's side of bench/run_mpi.sh: the exchanges
// of bench/baselines/*.c written with pl/pld and run on `--engine mpi`.
//
//   mpirun -n P mpi_exchange_bench ring BYTES ROUNDS
//     per round: put BYTES to the right neighbour, notify it (AtomicAdd 1),
//     wait for the left neighbour's notify (step 07's exchange, in a loop)
//   mpirun -n P mpi_exchange_bench allreduce_<mode> FLOATS ROUNDS
//     per round: the builtin allreduce (Sum) of FLOATS FP32 in place, <mode>
//     one of mesh, ring, recursive_doubling, rabenseifner, tree, auto
//   mpirun -n P mpi_exchange_bench allreduce_hand_ring FLOATS ROUNDS
//     per round: step 10's hand-written ring allreduce, then a barrier
//     (FLOATS must split into P chunks)
//
// Each program is compiled for 0 and for ROUNDS rounds (the loop runs inside
// one kernel, as the baselines' loops do), run 6 times each (the first a
// warm-up); rank 0 prints the median time per round, (T(ROUNDS) - T(0)) /
// ROUNDS, and the fixed cost of one run, T(0) (window allocation, start-up
// checks, termination waves, end-of-run exchanges):
//   "<kind> P=<P> size=<n> rounds=<R> us_per_round=<t> us_per_run=<t0>"
// and, for a builtin allreduce, " chose=<algorithm>" (Auto's choice).
#include <mpi.h>

#include <algorithm>
#include <anyp/anyp.hpp>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "programs/allreduce_rounds.hpp"
#include "programs/ladder_programs.hpp"

namespace {

using pld::NotifyOp;
using pld::WaitCmp;

const pl::Dim NR = pl::dynamic("NR");

// Step 10's hand-written ring allreduce (O(P) notifies per rank), looped:
// round k waits for its cells to reach k + 1, and a builtin barrier ends
// each round (the next round restages `scratch`, which the right neighbour
// reads) — as the baseline's MPI_Barrier does.
pl::HostFunction hand_ring_program(std::int64_t floats, std::int64_t rounds) {
  const pl::Dim C = floats / NR;
  const pl::Shape sig{2 * (NR - 1), NR};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, floats}, pl::FP32)),
      pl::InOut("scratch", pld::DistributedTensor({1, floats}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32)),
      pl::InOut("bar", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "hand_ring_rounds", params,
      [=](pl::Value x, pl::Value scratch, pl::Value signal, pl::Value bar) {
        auto ctx = pld::get_comm_ctx(scratch);
        pl::Scalar r = pld::rank(ctx), P = pld::nranks(ctx);
        pl::Scalar left = (r + P - 1) % P, right = (r + 1) % P;
        pl::range(rounds, [&](pl::Scalar k) {
          scratch = pl::store(pl::load(x, {0, 0}, {1, floats}), {0, 0}, scratch);
          pld::system::notify(signal, right, {0, r}, 1, NotifyOp::AtomicAdd);
          pl::range(P - 1, [&](pl::Scalar s) {
            pl::Scalar col = ((r - s - 2 + P) % P) * C;
            pld::system::wait(signal, {s, left}, k + 1, WaitCmp::Ge);
            pl::Tile sum = pl::add(pl::load(scratch, {0, col}, {1, C}),
                                   pld::tile::remote_load(scratch, left, {0, col}, {1, C}));
            scratch = pl::store(sum, {0, col}, scratch);
            pld::system::notify(signal, right, {s + 1, r}, 1, NotifyOp::AtomicAdd);
          });
          pl::range(P - 1, [&](pl::Scalar s) {
            pl::Scalar row = P - 1 + s;
            pl::Scalar col = ((r - s - 1 + P) % P) * C;
            pld::system::wait(signal, {row, left}, k + 1, WaitCmp::Ge);
            scratch = pl::store(pld::tile::remote_load(scratch, left, {0, col}, {1, C}), {0, col},
                                scratch);
            pl::if_(s < P - 2, [&] {
              pld::system::notify(signal, right, {row + 1, r}, 1, NotifyOp::AtomicAdd);
            });
          });
          bar = pld::tensor::barrier(bar);
        });
      });
  const auto per_rank = pl::jit::orchestration_for("hand_ring_per_rank", kernel);
  return pl::jit::host(
      "hand_ring_bench_" + std::to_string(rounds),
      {pl::In("x", pl::Tensor({NR, 1, floats}, pl::FP32))}, [=](pl::Value x) {
        auto scratch_buf = pld::alloc_window_buffer("scratch", {1, floats}, pl::FP32);
        auto sig_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
        auto bar_buf = pld::alloc_window_buffer("bar", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr = x[r];
          per_rank(xr, pld::window(scratch_buf, {1, floats}, pl::FP32),
                   pld::window(sig_buf, sig, pl::INT32), pld::window(bar_buf, {NR, 1}, pl::INT32),
                   pl::device(r));
        });
      });
}

// Median wall time of one run, in microseconds, over 5 runs after a warm-up.
double median_run_us(const pl::HostFunction& program, const anyp::HostTensor& x,
                     const anyp::RunConfig& config) {
  anyp::CompiledProgram compiled = program.compile({x}, config);
  std::vector<double> times;
  for (int rep = 0; rep < 6; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = std::chrono::steady_clock::now();
    compiled(x);
    times.push_back(
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin() + 1, times.end());
  return times[3];
}

}  // namespace

int main(int argc, char** argv) {
  const anyp::ProcessWorld world = anyp::process_world("mpi");
  const std::string kind = argc > 1 ? argv[1] : "ring";
  const std::int64_t size = argc > 2 ? std::atoll(argv[2]) : 256;
  const std::int64_t rounds = argc > 3 ? std::atoll(argv[3]) : 1000;
  const std::int64_t floats = kind == "ring" ? std::max<std::int64_t>(1, size / 4) : size;
  anyp::RunConfig config = anyp::RunConfig::for_world_size(world.size);
  config.engine = "mpi";
  // Written memory, as the baselines' (untouched zero pages would copy faster
  // or slower than real data). Zeros keep the allreduce's sums finite.
  pld::AllreduceMode mode = pld::AllreduceMode::Mesh;
  const bool builtin = kind.rfind("allreduce_", 0) == 0 && kind != "allreduce_hand_ring";
  if (builtin && !bench::allreduce_mode_named(kind.substr(10), mode)) {
    if (world.rank == 0)
      std::fprintf(stderr, "mpi_exchange_bench: unknown kind %s\n", kind.c_str());
    return 2;
  }
  anyp::HostTensor x =
      anyp::HostTensor::zeros({world.size, 1, builtin ? std::int64_t{1} : floats}, pl::FP32);
  std::memset(x.data(), 0, x.nbytes());
  auto program = [&](std::int64_t r) {
    if (kind == "ring") return bench::ring_rounds(floats, r);
    if (kind == "allreduce_hand_ring") return hand_ring_program(floats, r);
    return bench::allreduce_rounds(floats, r, mode);
  };
  const double t0 = median_run_us(program(0), x, config);
  const double tr = median_run_us(program(rounds), x, config);
  const std::string chose =
      builtin
          ? " chose=" + bench::auto_choice(program(rounds).compile({x}, config), kind.substr(10))
          : "";
  if (world.rank == 0) {
    std::printf("%s P=%d size=%lld rounds=%lld us_per_round=%.3f us_per_run=%.1f%s\n", kind.c_str(),
                world.size, static_cast<long long>(size), static_cast<long long>(rounds),
                (tr - t0) / static_cast<double>(rounds), t0, chose.c_str());
  }
  return 0;
}
