// 02_overwrite_while_reading — a pitfall: restaging a window row that a peer
// may still be pulling.
//
// The bug: a 2-round ring shift. In each round every rank stages its row in
// its window, tells its left neighbour "ready" (a fresh signal row per round)
// and pulls its right neighbour's row. In round 2 a rank restages its window
// as soon as its own round-1 pull is done — but its left neighbour may still
// be pulling round 1's row from that window: nothing says "I have read it".
// anyp reports the race on every schedule (at -d 0,1,2 --workers 1):
//   race report: 2 op pairs access the same elements from two ranks with no ...
//     race 1: window 'data' of rank 0, elements [0, 0:64]
//       first:  read by rank 2 (device 2), function 'ring_rounds', op pld.tile.remote_load
//       second: write by rank 0 (device 0), function 'ring_rounds', op pl.store
//       missing: no wait on rank 0 observed a notify that rank 2 issued after its read; ...
//     race 2: window 'data' of rank 2, ... (rank 2 restaged before rank 1 read round 1)
// The fix (--fixed): after its pull, the reader notifies the owner "done"
// (a fresh row per round, like the ready signal), and the owner waits for the
// previous round's "done" before it restages (docs/ladder-steps.md §7,
// anti-dependence).
//
//   02_overwrite_while_reading -d 0,1,2 --check-races          the race report, exit 1
//   02_overwrite_while_reading -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
constexpr std::int64_t ROUNDS = 2;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({ROUNDS, SIZE}, pl::FP32)),
    pl::Out("y", pl::Tensor({ROUNDS, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("ready", pld::DistributedTensor({ROUNDS, 1}, pl::INT32)),
    pl::InOut("done", pld::DistributedTensor({ROUNDS, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "ring_rounds", kParams,
      [fixed](pl::Value x, pl::Value y, pl::Value data, pl::Value ready, pl::Value done) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::Scalar left = (r + n - 1) % n;
        pl::Scalar right = (r + 1) % n;
        pl::range(ROUNDS, [&](pl::Scalar k) {
          if (fixed) {  // left has read my previous row (row k - 1 of `done`)
            pl::if_(k > 0, [&] { pld::system::wait(done, {k - 1, 0}, 1, pld::WaitCmp::Ge); });
          }
          // BUG (without the wait above): left may still be pulling round k - 1.
          data = pl::store(pl::load(x, {k, 0}, {1, SIZE}), {0, 0}, data);
          pld::system::notify(ready, left, {k, 0}, 1, pld::NotifyOp::AtomicAdd);
          pld::system::wait(ready, {k, 0}, 1, pld::WaitCmp::Ge);  // right's row k is staged
          y = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, SIZE}), {k, 0}, y);
          if (fixed) {  // tell right: I have read your row k
            pld::system::notify(done, right, {k, 0}, 1, pld::NotifyOp::AtomicAdd);
          }
        });
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", kParams,
                             [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value rd,
                                      pl::Value dn) { kernel(x, y, d, rd, dn); });
  return pl::jit::host("overwrite_while_reading",
                       {pl::In("x", pl::Tensor({NR, ROUNDS, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, ROUNDS, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                         auto ready_buf = pld::alloc_window_buffer("ready", {ROUNDS, 1}, pl::INT32);
                         auto done_buf = pld::alloc_window_buffer("done", {ROUNDS, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                                    pld::window(ready_buf, {ROUNDS, 1}, pl::INT32),
                                    pld::window(done_buf, {ROUNDS, 1}, pl::INT32), pl::device(r));
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
      for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, k, j}, x.at({(r + 1) % P, k, j}));
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "02_overwrite_while_reading";
  spec.step = 2;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
