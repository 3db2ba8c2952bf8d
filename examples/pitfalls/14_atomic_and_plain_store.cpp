// 14_atomic_and_plain_store — a pitfall: a plain store and atomic adds to
// the same cells, with no order between them.
//
// The bug: an all-reduce by accumulation. Every rank seeds its accumulator
// window with its own row (a plain store), and every peer adds its row into
// it with pld::tile::remote_store(..., AtomicType::Add); a counter says when
// all P - 1 adds have landed. Atomic adds commute with each other, but not
// with the plain store: a peer's add that lands before the owner's seeding
// store is overwritten by it. Nothing orders them. anyp reports the race
// (atomic add vs write) on every schedule:
//   race report: 2 op pairs access the same elements from two ranks with no ...
//     race 1: window 'acc' of rank 1, elements [0, 0:64]
//       first:  atomic add by rank 0 (device 0), function 'accumulate', op
//               pld.tile.remote_store
//       second: write by rank 1 (device 1), function 'accumulate', op pl.store
//       missing: no wait on rank 1 observed a notify that rank 0 issued after its atomic
//                add; rank 1 never synchronised with rank 0
//     race 2: window 'acc' of rank 0, ... (write by rank 0, then atomic add by rank 1)
// The fix (--fixed): after seeding, each rank notifies every peer "my
// accumulator is ready", and a peer waits for that before adding into it.
// (Seeding with an atomic add into the zeroed window would also do.)
//
//   14_atomic_and_plain_store -d 0,1,2 --check-races          the race report, exit 1
//   14_atomic_and_plain_store -d 0,1,2 --check-races --fixed  OK
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("acc", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("ready", pld::DistributedTensor({NR, 1}, pl::INT32)),
    pl::InOut("added", pld::DistributedTensor({1, 1}, pl::INT32))};

pl::HostFunction make_program(bool fixed) {
  const auto kernel = pl::jit::incore(
      "accumulate", kParams,
      [fixed](pl::Value x, pl::Value y, pl::Value acc, pl::Value ready, pl::Value added) {
        auto ctx = pld::get_comm_ctx(acc);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar n = pld::nranks(ctx);
        pl::Tile mine = pl::load(x, {0, 0}, {1, SIZE});
        acc = pl::store(mine, {0, 0}, acc);  // seed: a plain store
        if (fixed) {
          // Tell every peer that my accumulator is seeded.
          pl::range(n, [&](pl::Scalar p) {
            pl::if_(p != r, [&] {
              pld::system::notify(ready, p, {r, 0}, 1, pld::NotifyOp::AtomicAdd);
            });
          });
        }
        pl::range(n, [&](pl::Scalar p) {
          pl::if_(p != r, [&] {
            if (fixed) pld::system::wait(ready, {p, 0}, 1, pld::WaitCmp::Ge);  // p is seeded
            // BUG (without the wait): p may not have seeded yet.
            pld::tile::remote_store(mine, acc, p, {0, 0}, pld::AtomicType::Add);
            pld::system::notify(added, p, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
          });
        });
        pld::system::wait(added, {0, 0}, n - 1, pld::WaitCmp::Ge);  // every peer has added
        y = pl::store(pl::load(acc, {0, 0}, {1, SIZE}), {0, 0}, y);
      });
  const auto per_rank =
      pl::jit::orchestration("per_rank", kParams,
                             [kernel](pl::Value x, pl::Value y, pl::Value a, pl::Value rd,
                                      pl::Value ad) { kernel(x, y, a, rd, ad); });
  return pl::jit::host("atomic_and_plain_store",
                       {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto acc_buf = pld::alloc_window_buffer("acc", {1, SIZE}, pl::FP32);
                         auto ready_buf = pld::alloc_window_buffer("ready", {NR, 1}, pl::INT32);
                         auto added_buf = pld::alloc_window_buffer("added", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(acc_buf, {1, SIZE}, pl::FP32),
                                    pld::window(ready_buf, {NR, 1}, pl::INT32),
                                    pld::window(added_buf, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  static const pl::HostFunction buggy = make_program(false), fixed = make_program(true);
  anyp::CompiledProgram compiled = (opt.fixed ? fixed : buggy).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t j = 0; j < SIZE; ++j) {
    double sum = 0;
    for (std::int64_t k = 0; k < P; ++k) sum += x.at({k, 0, j});
    for (std::int64_t r = 0; r < P; ++r) expected.set_at({r, 0, j}, sum);
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "14_atomic_and_plain_store";
  spec.step = 14;
  spec.has_fixed = true;
  return anyp::cli::run_example(argc, argv, spec, run);
}
