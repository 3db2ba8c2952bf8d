// 05_remote_load_store — tile-level RMA: a ring shift by one, pulled or pushed.
//
// load: stage my x into my window, barrier, then pull the right neighbour's
// row with pld::tile::remote_load. store: push my x into the right
// neighbour's window with pld::tile::remote_store, barrier, then read my own
// window, which my left neighbour filled. The barrier goes after staging for
// a pull and after the store for a push. Peers are (r + 1) % P, never
// (r - 1) % P (C++ % truncates: -1 at r = 0).
//   05_remote_load_store                            (load, P = 2)
//   05_remote_load_store -d 0,1,2   --mode load
//   05_remote_load_store -d 0,1,2,3 --mode store
// Golden: load y[r] = x[(r+1) % P]; store y[r] = x[(r-1) mod P]; both exact.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

// load: stage -> barrier -> pull from right.
const auto load_step = pl::jit::incore(
    "load_step",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      pl::Scalar right = (my_rank + 1) % nranks;
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
      signal = pld::tensor::barrier(signal);  // everyone has staged
      y = pl::store(pld::tile::remote_load(data, right, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

// store: push to right -> barrier -> read what left pushed to me.
const auto store_step = pl::jit::incore(
    "store_step",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      pl::Scalar right = (my_rank + 1) % nranks;
      pl::Tile t = pl::load(x, {0, 0}, {1, SIZE});
      pld::tile::remote_store(t, data, right, {0, 0});
      signal = pld::tensor::barrier(signal);  // every push has landed
      y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

const std::vector<pl::Param> kPerRankParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

// The per-device orchestrations: forward their arguments to the kernels.
const auto per_rank_load =
    pl::jit::orchestration("per_rank_load", kPerRankParams,
                           [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                             load_step(x, y, data, signal);
                           });

const auto per_rank_store =
    pl::jit::orchestration("per_rank_store", kPerRankParams,
                           [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                             store_step(x, y, data, signal);
                           });

// The host: one data window and one [NR, 1] signal, shared by the ranks.
pl::HostFunction make_shift(const char* name, const pl::Function& per_rank) {
  return pl::jit::host(
      name,
      {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        auto data_buf = pld::alloc_window_buffer("data_buf", {1, SIZE}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal_buf", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
          auto signal = pld::window(signal_buf, {NR, 1}, pl::INT32);
          per_rank(x[r], y[r], data, signal, pl::device(r));
        });
      });
}

const pl::HostFunction shift_load = make_shift("shift_load", per_rank_load);
const pl::HostFunction shift_store = make_shift("shift_store", per_rank_store);

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  const bool load_mode = opt.mode == "load";
  anyp::CompiledProgram compiled =
      (load_mode ? shift_load : shift_store).compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, derived from the actual P.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t from = load_mode ? (r + 1) % P : (r + P - 1) % P;
    for (std::int64_t j = 0; j < SIZE; ++j) expected.set_at({r, 0, j}, x.at({from, 0, j}));
  }
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "05_remote_load_store";
  spec.step = 5;
  spec.modes = {"load", "store"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
