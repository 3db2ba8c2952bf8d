// 03_restage_broadcast_target — a pitfall: the root restages a broadcast
// window while the other ranks may still be copying the previous call's data.
//
// The bug: two rounds of the builtin pld::tensor::broadcast on one data
// window. In each round the root stages row k, every rank calls broadcast and
// copies the window out. broadcast has one barrier (the root has staged) and
// no read-done barrier (docs/collectives.md §3.4): the other ranks pull the
// root's window after it, and nothing makes the root wait for those pulls.
// So the root's round-2 staging can overwrite round 1's data while a slow
// rank is still pulling it. anyp reports the race on every schedule:
//   race report: 2 op pairs access the same elements from two ranks with no ...
//     race 1: window 'data' of rank 0, elements [0, 0:64]
//       first:  read by rank 2 (device 2), function 'broadcast_rounds', op pld.tensor.broadcast
//       second: write by rank 0 (device 0), function 'broadcast_rounds', op pl.store
//       missing: no wait on rank 0 observed a notify that rank 2 issued after its read; ...
//     race 2: ... (rank 1 pulled only after the restage: it copies round 2's row)
// The race is reported even on schedules where the root is slow and a fast
// peer's round-2 credit is already in the root's cell when the root waits in
// round 1: the checker orders the root only after the credit its wait
// needed (round 1's), not after the peer's later pull.
// The fix (--fixed): a pld::tensor::barrier after the copy-out, before the
// next restage (on the same self-clearing signal).
//
//   03_restage_broadcast_target -d 0,1,2 --check-races          the race report, exit 1
//   03_restage_broadcast_target -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
constexpr std::int64_t ROUNDS = 2;
constexpr std::int64_t ROOT = 0;
const pl::Dim NR = pl::dynamic("NR");

// One self-clearing [NR, 1] signal serves every round (docs/design.md §11).
const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({ROUNDS, SIZE}, pl::FP32)),
    pl::Out("y", pl::Tensor({ROUNDS, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "broadcast_rounds", kParams,
      [fixed](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar r = pld::rank(ctx);
        for (std::int64_t k = 0; k < ROUNDS; ++k) {  // a C++ loop: unrolled when traced
          // BUG (without the barrier below): in round 2, a peer may still be
          // pulling round 1's row from the root's window.
          pl::if_(r == ROOT, [&] {
            data = pl::store(pl::load(x, {k, 0}, {1, SIZE}), {0, 0}, data);
          });
          data = pld::tensor::broadcast(data, signal, ROOT);
          y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {k, 0}, y);
          if (fixed) signal = pld::tensor::barrier(signal);  // every rank has copied row k
        }
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", kParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host("restage_broadcast_target",
                       {pl::In("x", pl::Tensor({NR, ROUNDS, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, ROUNDS, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                         auto sig_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                                    pld::window(sig_buf, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, ROUNDS, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, ROUNDS, SIZE}, pl::FP32);
  static const pl::HostFunction buggy = make_program(false), fixed = make_program(true);
  anyp::CompiledProgram compiled = (opt.fixed ? fixed : buggy).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, ROUNDS, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t k = 0; k < ROUNDS; ++k)
      for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, k, j}, x.at({ROOT, k, j}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "03_restage_broadcast_target";
  spec.step = 3;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
