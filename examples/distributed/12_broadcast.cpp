// 12_broadcast — one-to-all: the root stages its row, everyone pulls it.
//
// hand: the root is a runtime INT32 argument. Only the staging depends on it
// (`if r == root`); every rank then joins the hand-rolled barrier (hbar) and
// pulls the root's row with pld::tile::remote_load (a local read on the root).
// Nothing overwrites the window afterwards, so one barrier is enough.
// builtin: pld::tensor::broadcast(data, signal, ROOT) with ROOT a compile-time
// constant in [0, P); it copies the root's window into every rank's window.
//   12_broadcast                              (hand, P = 2)
//   12_broadcast -d 0,1,2,3 --mode builtin --cost
// Golden: y[r] = x[ROOT] for every r, exact (rows differ, so a non-root input
// that leaks through fails the check).
// Cost (N = 4 * SIZE = 256 B): each non-root takes N in with 1 RMA, the root
// serves (P-1) * N (pulled by the peers, so --cost shows the root with 0 in,
// 0 out); P-1 notify per rank (+E P-1 in builtin mode); 1 round.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
constexpr std::int64_t ROOT = 0;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::NotifyOp;
using pld::WaitCmp;

// hand: the root arrives as a scalar, after the tensors.
const std::vector<pl::Param> kHandParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32)), pl::In("root", pl::INT32)};

const auto hand_broadcast = pl::jit::incore(
    "hand_broadcast", kHandParams,
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal, pl::Scalar root) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      // 1. only the staging is conditional ...
      pl::if_(r == root, [&] { data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data); });
      // 2. ... every rank joins hbar(signal) ...
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] { pld::system::notify(signal, p, {r, 0}, 1, NotifyOp::AtomicAdd); });
      });
      pl::range(P, [&](pl::Scalar s) {
        pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, WaitCmp::Ge); });
      });
      // 3. ... and pulls from the root (not from r).
      y = pl::store(pld::tile::remote_load(data, root, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

const std::vector<pl::Param> kBuiltinParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto builtin_broadcast = pl::jit::incore(
    "builtin_broadcast", kBuiltinParams,
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::if_(r == ROOT, [&] { data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data); });
      data = pld::tensor::broadcast(data, signal, ROOT);  // every rank calls it
      y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

// The per-device orchestrations: forward their arguments to the kernels.
const auto per_rank_hand =
    pl::jit::orchestration("per_rank_hand", kHandParams,
                           [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal,
                              pl::Scalar root) { hand_broadcast(x, y, data, signal, root); });

const auto per_rank_builtin =
    pl::jit::orchestration("per_rank_builtin", kBuiltinParams,
                           [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                             builtin_broadcast(x, y, data, signal);
                           });

const std::vector<pl::Param> kHostParams = {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                                            pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))};

const pl::HostFunction broadcast_hand =
    pl::jit::host("broadcast_hand", kHostParams, [](pl::Value x, pl::Value y) {
      auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
      auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank_hand(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                      pld::window(signal_buf, {NR, 1}, pl::INT32), ROOT, pl::device(r));
      });
    });

const pl::HostFunction broadcast_builtin =
    pl::jit::host("broadcast_builtin", kHostParams, [](pl::Value x, pl::Value y) {
      auto data_buf = pld::alloc_window_buffer("data", {1, SIZE}, pl::FP32);
      auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
      pl::range(pld::world_size(), [&](pl::Scalar r) {
        per_rank_builtin(x[r], y[r], pld::window(data_buf, {1, SIZE}, pl::FP32),
                         pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
      });
    });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  const pl::HostFunction& program = opt.mode == "builtin" ? broadcast_builtin : broadcast_hand;
  anyp::CompiledProgram compiled = program.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden: the root's row on every rank.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({ROOT, 0, j}));
  }
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "12_broadcast";
  spec.step = 12;
  spec.modes = {"hand", "builtin"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
