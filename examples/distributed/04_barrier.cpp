// 04_barrier — a barrier from signals alone, and the builtin that replaces it.
//
// hand: every rank notifies each peer p != r on cell {r, 0} of p's [NR, 1]
// signal (AtomicAdd 1), then waits until each of its own cells {s, 0}, s != r,
// is >= 1. Every cell has exactly one writer, so the barrier is exact for any
// P; the counts never reset, so one row serves one barrier. The kernel then
// copies its signal cells into `tally`, one pl::read/pl::write at a time (a
// tile load of a narrow INT32 window would break 32-byte alignment).
// builtin: pld::tensor::barrier clears its signal again before it returns, so
// ordering is shown through data instead: stage x into the window, barrier,
// then pull the right neighbour's staged row.
//   04_barrier                               (hand, P = 2)
//   04_barrier -d 0,1,2,3 --mode hand
//   04_barrier -d 0,1,2   --mode builtin
// Golden: hand tally[r][i] = (i == r ? 0 : 1); builtin y[r] = x[(r+1) % P];
// both exact.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::NotifyOp;
using pld::WaitCmp;

// hand: hbar(signal), then tally[i] = signal[i] for every i.
const auto hand_barrier = pl::jit::incore(
    "hand_barrier",
    {pl::Out("tally", pl::Tensor({NR, 1}, pl::INT32)),
     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value tally, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(signal);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      // 1. one credit to every peer, in the cell that only I write ...
      pl::range(nranks, [&](pl::Scalar p) {
        pl::if_(p != my_rank, [&] {
          pld::system::notify(signal, p, {my_rank, 0}, 1, NotifyOp::AtomicAdd);
        });
      });
      // 2. ... then wait for every peer's credit in my own copy.
      pl::range(nranks, [&](pl::Scalar s) {
        pl::if_(s != my_rank, [&] { pld::system::wait(signal, {s, 0}, 1, WaitCmp::Ge); });
      });
      // The cells, one at a time: 1 from each peer, 0 in my own (no self-notify).
      pl::range(nranks, [&](pl::Scalar i) { pl::write(tally, {i, 0}, pl::read(signal, {i, 0})); });
    });

// builtin: stage, barrier, pull the right neighbour's row.
const auto builtin_barrier = pl::jit::incore(
    "builtin_barrier",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      pl::Scalar right = (my_rank + 1) % nranks;
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
      signal = pld::tensor::barrier(signal);  // self-clearing: all cells are 0 again
      y = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

// The per-device orchestrations: forward their arguments to the kernels.
const auto per_rank_hand =
    pl::jit::orchestration("per_rank_hand",
                           {pl::Out("tally", pl::Tensor({NR, 1}, pl::INT32)),
                            pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
                           [](pl::Value tally, pl::Value signal) { hand_barrier(tally, signal); });

const auto per_rank_builtin = pl::jit::orchestration(
    "per_rank_builtin",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      builtin_barrier(x, y, data, signal);
    });

// The hosts: tally[r] is rank r's [NR, 1] row of the [NR, NR, 1] output.
const pl::HostFunction barrier_hand = pl::jit::host(
    "barrier_hand", {pl::Out("tally", pl::Tensor({NR, NR, 1}, pl::INT32))}, [](pl::Value tally) {
      auto signal_buf = pld::alloc_window_buffer("signal_buf", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        auto signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
        per_rank_hand(tally[r], signal, pl::device(r));
      });
    });

const pl::HostFunction barrier_builtin =
    pl::jit::host("barrier_builtin",
                  {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto data_buf = pld::alloc_window_buffer("data_buf", {1, SIZE}, pl::FP32);
                    auto signal_buf = pld::alloc_window_buffer("signal_buf", {NR, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
                      auto signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
                      per_rank_builtin(x[r], y[r], data, signal, pl::device(r));
                    });
                  });

int run_hand(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::HostTensor tally = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  anyp::CompiledProgram compiled = barrier_hand.compile({tally}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(tally);
  // The golden: one credit from every peer, none in the own cell.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < P; ++i) expected.set_at({r, i, 0}, i == r ? 0 : 1);
  }
  return anyp::cli::report({anyp::cli::check_exact("tally", tally, expected, P)}, opt, stats);
}

int run_builtin(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = barrier_builtin.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, derived from the actual P: the right neighbour's row.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({(r + 1) % P, 0, j}));
  }
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

int run(const anyp::cli::Options& opt) {
  return opt.mode == "builtin" ? run_builtin(opt) : run_hand(opt);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "04_barrier";
  spec.step = 4;
  spec.modes = {"hand", "builtin"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
