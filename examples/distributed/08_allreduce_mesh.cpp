// 08_allreduce_mesh — all-reduce 1: every rank pulls every peer's row.
//
// The four phases of an all-reduce: stage my x into my window, a hand-rolled
// barrier (hbar) on an [NR, 1] signal that travels through all three levels,
// accumulate my own row plus every peer's row (pld::tile::remote_load, peers
// in ascending order), and store the sum into my private y. y is private, so
// nobody overwrites a window that a peer may still read: no read-done barrier.
// The reduction order differs per rank, so the golden is compared with a
// tolerance.
//   08_allreduce_mesh                        (P = 4, devices 0,1,2,3)
//   08_allreduce_mesh -d 0,1,2,3,4,5,6,7 --cost
// Golden: y[r] = sum_k x[k], close.
// Cost (N = 4 * SIZE = 3840 B): (P-1) * N in, P-1 RMA, P-1 notify / P-1 wait
// per rank, 1 round.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 960;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::NotifyOp;
using pld::WaitCmp;

const std::vector<pl::Param> kParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto mesh_kernel = pl::jit::incore(
    "mesh_kernel", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      // 1. stage: my row becomes reachable by every peer.
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
      // 2. hbar(signal): a credit to every peer in my cell {r, 0} of its
      //    signal, then wait for every peer's credit in my own copy.
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] { pld::system::notify(signal, p, {r, 0}, 1, NotifyOp::AtomicAdd); });
      });
      pl::range(P, [&](pl::Scalar s) {
        pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, WaitCmp::Ge); });
      });
      // 3. accumulate: my own row, then every peer's (skipping myself).
      pl::Tile acc = pl::load(data, {0, 0}, {1, SIZE});
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] {
          acc = pl::add(acc, pld::tile::remote_load(data, p, {0, 0}, {1, SIZE}));
        });
      });
      // 4. stage out into my private y.
      y = pl::store(acc, {0, 0}, y);
    });

// The per-device orchestration: forwards its arguments to the kernel.
const auto per_rank = pl::jit::orchestration(
    "per_rank", kParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      mesh_kernel(x, y, data, signal);
    });

const pl::HostFunction allreduce_mesh =
    pl::jit::host("allreduce_mesh",
                  {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
                    auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      per_rank(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                               pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                    });
                  });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = allreduce_mesh.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, in double: every rank holds the sum over all ranks.
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
  spec.name = "08_allreduce_mesh";
  spec.step = 8;
  spec.default_devices = {0, 1, 2, 3};
  return anyp::cli::run_example(argc, argv, spec, run);
}
