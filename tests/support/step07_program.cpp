// step07_program.cpp — the definitions behind step07_program.hpp.
#include "support/step07_program.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace anyp_test {
namespace {

constexpr std::int64_t SIZE = kStep07Size;
const pl::Dim NR = pl::dynamic("NR");

using pld::AtomicType;
using pld::NotifyOp;
using pld::WaitCmp;

const auto put_step = pl::jit::incore(
    "put_step",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(src);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      pl::Scalar right = (my_rank + 1) % nranks;
      src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
      pld::tensor::put(dst, right, src, AtomicType::None);
      pld::system::notify(signal, right, {0, 0}, 1, NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);  // only left writes this cell
      y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

const auto get_step = pl::jit::incore(
    "get_step",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst, pl::Value signal) {
      auto ctx = pld::get_comm_ctx(src);
      pl::Scalar my_rank = pld::rank(ctx);
      pl::Scalar nranks = pld::nranks(ctx);
      pl::Scalar left = (my_rank + nranks - 1) % nranks;
      pl::Scalar right = (my_rank + 1) % nranks;
      src = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, src);
      pld::system::notify(signal, left, {0, 0}, 1, NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);  // right sets it
      pld::tensor::get(dst, right, src);
      y = pl::store(pl::load(dst, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

const std::vector<pl::Param> kPerRankParams = {
    pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
    pl::InOut("src", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("dst", pld::DistributedTensor({1, SIZE}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))};

const auto per_rank_put =
    pl::jit::orchestration("per_rank_put", kPerRankParams,
                           [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst,
                              pl::Value signal) { put_step(x, y, src, dst, signal); });

const auto per_rank_get =
    pl::jit::orchestration("per_rank_get", kPerRankParams,
                           [](pl::Value x, pl::Value y, pl::Value src, pl::Value dst,
                              pl::Value signal) { get_step(x, y, src, dst, signal); });

pl::HostFunction make_ring(const char* name, const pl::Function& per_rank) {
  return pl::jit::host(
      name,
      {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        auto src_buf = pld::alloc_window_buffer("src_buf", {1, SIZE}, pl::FP32);
        auto dst_buf = pld::alloc_window_buffer("dst_buf", {1, SIZE}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal_buf", {1, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          auto src = pld::window(src_buf, {1, SIZE}, pl::FP32);
          auto dst = pld::window(dst_buf, {1, SIZE}, pl::FP32);
          auto signal = pld::window(signal_buf, {1, 1}, pl::INT32);
          pl::Value xr = x[r];  // named first: C++ leaves call-argument order unspecified
          pl::Value yr = y[r];
          per_rank(xr, yr, src, dst, signal, pl::device(r));
        });
      });
}

}  // namespace

const pl::HostFunction& ring_put() {
  static const pl::HostFunction fn = make_ring("ring_put", per_rank_put);
  return fn;
}

const pl::HostFunction& ring_get() {
  static const pl::HostFunction fn = make_ring("ring_get", per_rank_get);
  return fn;
}

anyp::RunStats run_ring(bool get, std::int64_t P, anyp::RunConfig config) {
  anyp::InputGenerator gen(7);
  const anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  config.distributed = anyp::RunConfig::for_world_size(P).distributed;
  const anyp::RunStats stats = (get ? ring_get() : ring_put()).compile({x, y}, config)(x, y);
  for (std::int64_t r = 0; r < P; ++r) {
    const std::int64_t from = get ? (r + 1) % P : (r + P - 1) % P;
    for (std::int64_t j = 0; j < SIZE; ++j) {
      if (y.at({r, 0, j}) != x.at({from, 0, j})) {
        throw std::runtime_error(std::string(get ? "ring_get" : "ring_put") + " at P=" +
                                 std::to_string(P) + ": y[" + std::to_string(r) + "][0][" +
                                 std::to_string(j) + "] is not x[" + std::to_string(from) + "]");
      }
    }
  }
  return stats;
}

}  // namespace anyp_test
