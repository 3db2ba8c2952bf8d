// ladder_programs.cpp — the benchmark copies of steps 07, 08, 11 and 16.
#include "programs/ladder_programs.hpp"

#include <stdexcept>
#include <string>

namespace bench {
namespace {

const pl::Dim NR = pl::dynamic("NR");

// ---- step 07: ring get ---------------------------------------------------------------
constexpr std::int64_t kRing = 64;
const std::vector<pl::Param> kRingParams = {
    pl::In("x", pl::Tensor({1, kRing}, pl::FP32)), pl::Out("y", pl::Tensor({1, kRing}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, kRing}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, kRing}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};

const auto get_step = pl::jit::incore(
    "get_step", kRingParams,
    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(src);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar n = pld::nranks(ctx);
      src = pl::store(pl::load(x, {0, 0}, {1, kRing}), {0, 0}, src);
      pld::system::notify(signal, (r + n - 1) % n, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
      pld::tensor::get(dst, (r + 1) % n, src);
      y = pl::store(pl::load(dst, {0, 0}, {1, kRing}), {0, 0}, y);
    });

const auto per_rank_get =
    pl::jit::orchestration("per_rank_get", kRingParams,
                           [](pl::Value x, pl::Value y, pl::Value s, pl::Value d, pl::Value g) {
                             get_step(x, y, s, d, g);
                           });

const pl::HostFunction ring_get =
    pl::jit::host("ring_get",
                  {pl::In("x", pl::Tensor({NR, 1, kRing}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, kRing}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto src_buf = pld::alloc_window_buffer("src_buf", {1, kRing}, pl::FP32);
                    auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, kRing}, pl::FP32);
                    auto sig_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      pl::Value xr = x[r];
                      pl::Value yr = y[r];
                      per_rank_get(xr, yr, pld::window(src_buf, {1, kRing}, pl::FP32),
                                   pld::window(dst_buf, {1, kRing}, pl::FP32),
                                   pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
                    });
                  });

// ---- step 07's exchange in a loop (ring_rounds) ------------------------------------------
}  // namespace

pl::HostFunction ring_rounds(std::int64_t floats, std::int64_t rounds, bool staged) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, floats}, pl::FP32)),
      pl::InOut("dst", pld::DistributedTensor({1, floats}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel =
      pl::jit::incore("ring_rounds", params, [=](pl::Value x, pl::Value dst, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(dst);
        pl::Scalar right = (pld::rank(ctx) + 1) % pld::nranks(ctx);
        pl::range(rounds, [&](pl::Scalar i) {
          if (staged) {
            pld::tile::remote_store(pl::load(x, {0, 0}, {1, floats}), dst, right, {0, 0});
          } else {
            pld::tensor::put(dst, right, x);
          }
          pld::system::notify(signal, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
          pld::system::wait(signal, {0, 0}, i + 1, pld::WaitCmp::Ge);
        });
      });
  // (orchestration spelled out, not orchestration_for: this file builds
  // against older revisions too, bench/compare.)
  const auto per_rank = pl::jit::orchestration(
      "ring_rounds_per_rank", params,
      [kernel](pl::Value x, pl::Value dst, pl::Value signal) { kernel(x, dst, signal); });
  return pl::jit::host(std::string("ring_rounds_") + (staged ? "staged_" : "put_") +
                           std::to_string(floats) + "_" + std::to_string(rounds),
                       {pl::In("x", pl::Tensor({NR, 1, floats}, pl::FP32))}, [=](pl::Value x) {
                         auto dst_buf = pld::alloc_window_buffer("dst", {1, floats}, pl::FP32);
                         auto sig_buf = pld::alloc_window_buffer("signal", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           per_rank(xr, pld::window(dst_buf, {1, floats}, pl::FP32),
                                    pld::window(sig_buf, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

namespace {

// ---- steps 08 and 11: mesh all-reduce, by hand and builtin ------------------------------
constexpr std::int64_t kReduce = 960;
const std::vector<pl::Param> kReduceParams = {
    pl::In("x", pl::Tensor({1, kReduce}, pl::FP32)),
    pl::Out("y", pl::Tensor({1, kReduce}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, kReduce}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto hand_mesh = pl::jit::incore(
    "mesh_kernel", kReduceParams, [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      data = pl::store(pl::load(x, {0, 0}, {1, kReduce}), {0, 0}, data);
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] {
          pld::system::notify(signal, p, {r, 0}, 1, pld::NotifyOp::AtomicAdd);
        });
      });
      pl::range(P, [&](pl::Scalar s) {
        pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, pld::WaitCmp::Ge); });
      });
      pl::Tile acc = pl::load(data, {0, 0}, {1, kReduce});
      pl::range(P, [&](pl::Scalar p) {
        pl::if_(p != r, [&] {
          acc = pl::add(acc, pld::tile::remote_load(data, p, {0, 0}, {1, kReduce}));
        });
      });
      y = pl::store(acc, {0, 0}, y);
    });

pl::Function builtin_allreduce(pld::AllreduceMode mode) {
  return pl::jit::incore("allreduce_kernel", kReduceParams,
                         [mode](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
                           data = pl::store(pl::load(x, {0, 0}, {1, kReduce}), {0, 0}, data);
                           data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, mode);
                           y = pl::store(pl::load(data, {0, 0}, {1, kReduce}), {0, 0}, y);
                         });
}

pl::HostFunction reduce_host(const char* name, const pl::Function& kernel) {
  const auto per_rank = pl::jit::orchestration(
      std::string("per_rank_") + name, kReduceParams,
      [kernel](pl::Value x, pl::Value y, pl::Value d, pl::Value s) { kernel(x, y, d, s); });
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, kReduce}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, kReduce}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data = pld::alloc_window_buffer("data", {1, kReduce}, pl::FP32);
                         auto sig = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pld::window(data, {1, kReduce}, pl::FP32),
                                    pld::window(sig, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

const pl::HostFunction mesh08 = reduce_host("allreduce_mesh", hand_mesh);
const pl::HostFunction mesh11 =
    reduce_host("allreduce_reveal", builtin_allreduce(pld::AllreduceMode::Mesh));
const pl::HostFunction ring11 =
    reduce_host("allreduce_reveal_ring", builtin_allreduce(pld::AllreduceMode::Ring));

// ---- step 16: broadcast, all-reduce and all-gather on one signal -------------------------
constexpr std::int64_t kRow = 64;
const std::vector<pl::Param> kTogetherParams = {
    pl::In("x", pl::Tensor({1, kRow}, pl::FP32)),
    pl::In("w", pl::Tensor({1, kRow}, pl::FP32)),
    pl::Out("allred", pl::Tensor({1, kRow}, pl::FP32)),
    pl::Out("gathered", pl::Tensor({1, NR* kRow}, pl::FP32)),
    pl::InOut("w_data", pld::DistributedTensor({1, kRow}, pl::FP32)),
    pl::InOut("ar_data", pld::DistributedTensor({1, kRow}, pl::FP32)),
    pl::InOut("ag_data", pld::DistributedTensor({NR, kRow}, pl::FP32)),
    pl::InOut("sig", pld::DistributedTensor({NR, 1}, pl::INT32))};

const auto together = pl::jit::incore(
    "together_shared", kTogetherParams,
    [](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered, pl::Value w_data,
       pl::Value ar_data, pl::Value ag_data, pl::Value sig) {
      auto ctx = pld::get_comm_ctx(ar_data);
      pl::Scalar r = pld::rank(ctx);
      pl::Scalar P = pld::nranks(ctx);
      pl::if_(r == 0, [&] { w_data = pl::store(pl::load(w, {0, 0}, {1, kRow}), {0, 0}, w_data); });
      w_data = pld::tensor::broadcast(w_data, sig, 0);
      pl::Tile wt = pl::load(w_data, {0, 0}, {1, kRow});
      ar_data = pl::store(pl::load(x, {0, 0}, {1, kRow}), {0, 0}, ar_data);
      ar_data = pld::tensor::allreduce(ar_data, sig, pld::ReduceOp::Sum, pld::AllreduceMode::Mesh);
      allred = pl::store(pl::load(ar_data, {0, 0}, {1, kRow}), {0, 0}, allred);
      ag_data = pld::tensor::allgather(x, ag_data, sig);
      pl::range(P, [&](pl::Scalar s) {
        gathered =
            pl::store(pl::mul(pl::load(ag_data, {s, 0}, {1, kRow}), wt), {0, s * kRow}, gathered);
      });
    });

const auto together_per_rank = pl::jit::orchestration(
    "per_rank", kTogetherParams,
    [](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered, pl::Value w_data,
       pl::Value ar_data, pl::Value ag_data,
       pl::Value sig) { together(x, w, allred, gathered, w_data, ar_data, ag_data, sig); });

const pl::HostFunction together_host =
    pl::jit::host("together_shared",
                  {pl::In("x", pl::Tensor({NR, 1, kRow}, pl::FP32)),
                   pl::In("w", pl::Tensor({NR, 1, kRow}, pl::FP32)),
                   pl::Out("allred", pl::Tensor({NR, 1, kRow}, pl::FP32)),
                   pl::Out("gathered", pl::Tensor({NR, 1, NR* kRow}, pl::FP32))},
                  [](pl::Value x, pl::Value w, pl::Value allred, pl::Value gathered) {
                    auto w_buf = pld::alloc_window_buffer("w_data", {1, kRow}, pl::FP32);
                    auto ar_buf = pld::alloc_window_buffer("ar_data", {1, kRow}, pl::FP32);
                    auto ag_buf = pld::alloc_window_buffer("ag_data", {NR, kRow}, pl::FP32);
                    auto sig_buf = pld::alloc_window_buffer("sig", {NR, 1}, pl::INT32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      pl::Value xr = x[r];
                      pl::Value wr = w[r];
                      pl::Value ar = allred[r];
                      pl::Value gr = gathered[r];
                      together_per_rank(xr, wr, ar, gr, pld::window(w_buf, {1, kRow}, pl::FP32),
                                        pld::window(ar_buf, {1, kRow}, pl::FP32),
                                        pld::window(ag_buf, {NR, kRow}, pl::FP32),
                                        pld::window(sig_buf, {NR, 1}, pl::INT32), pl::device(r));
                    });
                  });

}  // namespace

anyp::RunStats Prepared::run() const {
  std::vector<anyp::ArgRef> refs;
  for (const auto& a : args) refs.emplace_back(a);
  return compiled.run(refs);
}

const std::vector<int>& ladder_steps() {
  static const std::vector<int> steps = {7, 8, 11, kStep11Ring, 16};
  return steps;
}

std::string step_name(int step) { return step == kStep11Ring ? "11r" : std::to_string(step); }

int step_from_name(const std::string& name) {
  for (int step : ladder_steps())
    if (step_name(step) == name) return step;
  throw std::invalid_argument("bench: no step '" + name + "' (steps: 7, 8, 11, 11r, 16)");
}

Prepared prepare(int step, std::int64_t P, anyp::RunConfig config) {
  config.distributed.device_ids.clear();
  for (std::int64_t r = 0; r < P; ++r) config.distributed.device_ids.push_back(r);
  anyp::InputGenerator gen(static_cast<std::uint32_t>(step));
  std::vector<anyp::HostTensor> args;
  const pl::HostFunction* host = nullptr;
  switch (step) {
    case 7:
      host = &ring_get;
      args = {gen.uniform({P, 1, kRing}), anyp::HostTensor::zeros({P, 1, kRing}, pl::FP32)};
      break;
    case 8:
    case 11:
    case kStep11Ring:
      host = step == 8 ? &mesh08 : step == 11 ? &mesh11 : &ring11;
      args = {gen.uniform({P, 1, kReduce}), anyp::HostTensor::zeros({P, 1, kReduce}, pl::FP32)};
      break;
    case 16:
      host = &together_host;
      args = {gen.uniform({P, 1, kRow}), gen.uniform({P, 1, kRow}),
              anyp::HostTensor::zeros({P, 1, kRow}, pl::FP32),
              anyp::HostTensor::zeros({P, 1, P * kRow}, pl::FP32)};
      break;
    default:
      throw std::invalid_argument("bench::prepare: no step " + std::to_string(step));
  }
  std::vector<anyp::ArgRef> refs;
  for (const auto& a : args) refs.emplace_back(a);
  return Prepared{host->compile(refs, config), std::move(args)};
}

}  // namespace bench
