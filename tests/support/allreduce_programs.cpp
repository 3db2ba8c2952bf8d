// allreduce_programs.cpp — steps 08-11's all-reduce kernels for any n.
#include "support/allreduce_programs.hpp"

#include <map>
#include <memory>
#include <stdexcept>
#include <utility>

namespace anyp_test {
namespace {

using pld::NotifyOp;
using pld::WaitCmp;

const pl::Dim NR = pl::dynamic("NR");

// A hand-rolled credit barrier on row `row` of a [rows, NR] signal: a
// credit to every peer, then a wait for every peer's.
void hbar(const pl::Value& signal, std::int64_t row, const pl::Scalar& r, const pl::Scalar& P) {
  pl::range(P, [&](pl::Scalar p) {
    pl::if_(p != r, [&] { pld::system::notify(signal, p, {row, r}, 1, NotifyOp::AtomicAdd); });
  });
  pl::range(P, [&](pl::Scalar s) {
    pl::if_(s != r, [&] { pld::system::wait(signal, {row, s}, 1, WaitCmp::Ge); });
  });
}

pld::AllreduceMode builtin_mode(Allreduce a) {
  switch (a) {
    case Allreduce::BuiltinRing:
      return pld::AllreduceMode::Ring;
    case Allreduce::BuiltinRecursiveDoubling:
      return pld::AllreduceMode::RecursiveDoubling;
    case Allreduce::BuiltinRabenseifner:
      return pld::AllreduceMode::Rabenseifner;
    case Allreduce::BuiltinTree:
      return pld::AllreduceMode::Tree;
    case Allreduce::BuiltinAuto:
      return pld::AllreduceMode::Auto;
    default:
      return pld::AllreduceMode::Mesh;
  }
}

pl::HostFunction make(Allreduce a, std::int64_t n) {
  const std::string tag = std::string(allreduce_name(a)) + "_" + std::to_string(n);
  const pl::Dim C = n / NR;  // the hand-written algorithms' chunk
  const bool ring_signal = a == Allreduce::Ring || a == Allreduce::BuiltinRing;
  // One row per hand-rolled barrier; the builtins' own shapes.
  const pl::Shape signal_shape = ring_signal                ? pl::Shape{2 * (NR - 1), NR}
                                 : a == Allreduce::TwoPhase ? pl::Shape{2, NR}
                                 : a == Allreduce::Mesh     ? pl::Shape{1, NR}
                                                            : pl::Shape{NR, 1};
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, n}, pl::FP32)), pl::Out("y", pl::Tensor({1, n}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({1, n}, pl::FP32)),
      pl::InOut("result", pld::DistributedTensor({1, n}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(signal_shape, pl::INT32))};
  const auto kernel = pl::jit::incore(
      tag + "_kernel", params,
      [a, n, C](pl::Value x, pl::Value y, pl::Value data, pl::Value result, pl::Value signal) {
        auto ctx = pld::get_comm_ctx(data);
        pl::Scalar r = pld::rank(ctx);
        pl::Scalar P = pld::nranks(ctx);
        data = pl::store(pl::load(x, {0, 0}, {1, n}), {0, 0}, data);
        switch (a) {
          case Allreduce::Mesh: {
            hbar(signal, 0, r, P);
            pl::Tile acc = pl::load(data, {0, 0}, {1, n});
            pl::range(P, [&](pl::Scalar p) {
              pl::if_(p != r, [&] {
                acc = pl::add(acc, pld::tile::remote_load(data, p, {0, 0}, {1, n}));
              });
            });
            y = pl::store(acc, {0, 0}, y);
            return;
          }
          case Allreduce::TwoPhase: {
            pl::Scalar mine = r * C;
            hbar(signal, 0, r, P);
            pl::Tile acc = pl::load(data, {0, mine}, {1, C});
            pl::range(P, [&](pl::Scalar p) {
              pl::if_(p != r, [&] {
                acc = pl::add(acc, pld::tile::remote_load(data, p, {0, mine}, {1, C}));
              });
            });
            result = pl::store(acc, {0, mine}, result);
            hbar(signal, 1, r, P);
            pl::range(P, [&](pl::Scalar c) {
              pl::Scalar col = c * C;
              y = pl::store(pld::tile::remote_load(result, c, {0, col}, {1, C}), {0, col}, y);
            });
            return;
          }
          case Allreduce::Ring: {
            pl::Scalar left = (r + P - 1) % P, right = (r + 1) % P;
            pld::system::notify(signal, right, {0, r}, 1, NotifyOp::AtomicAdd);
            pl::range(P - 1, [&](pl::Scalar s) {
              pl::Scalar col = ((r - s - 2 + P) % P) * C;
              pld::system::wait(signal, {s, left}, 1, WaitCmp::Ge);
              pl::Tile sum = pl::add(pl::load(data, {0, col}, {1, C}),
                                     pld::tile::remote_load(data, left, {0, col}, {1, C}));
              data = pl::store(sum, {0, col}, data);
              pld::system::notify(signal, right, {s + 1, r}, 1, NotifyOp::AtomicAdd);
            });
            pl::range(P - 1, [&](pl::Scalar s) {
              pl::Scalar row = P - 1 + s;
              pl::Scalar col = ((r - s - 1 + P) % P) * C;
              pld::system::wait(signal, {row, left}, 1, WaitCmp::Ge);
              data =
                  pl::store(pld::tile::remote_load(data, left, {0, col}, {1, C}), {0, col}, data);
              pl::if_(s < P - 2, [&] {
                pld::system::notify(signal, right, {row + 1, r}, 1, NotifyOp::AtomicAdd);
              });
            });
            y = pl::store(pl::load(data, {0, 0}, {1, n}), {0, 0}, y);
            return;
          }
          case Allreduce::BuiltinMesh:
          case Allreduce::BuiltinRing:
          case Allreduce::BuiltinRecursiveDoubling:
          case Allreduce::BuiltinRabenseifner:
          case Allreduce::BuiltinTree:
          case Allreduce::BuiltinAuto:
            data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, builtin_mode(a));
            y = pl::store(pl::load(data, {0, 0}, {1, n}), {0, 0}, y);
            return;
        }
      });
  const auto per_rank = pl::jit::orchestration_for(tag + "_per_rank", kernel);
  return pl::jit::host(
      tag,
      {pl::In("x", pl::Tensor({NR, 1, n}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, n}, pl::FP32))},
      [=](pl::Value x, pl::Value y) {
        auto data_buf = pld::alloc_window_buffer("data", {1, n}, pl::FP32);
        auto result_buf = pld::alloc_window_buffer("result", {1, n}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal", signal_shape, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr = x[r], yr = y[r];
          per_rank(xr, yr, pld::window(data_buf, {1, n}, pl::FP32),
                   pld::window(result_buf, {1, n}, pl::FP32),
                   pld::window(signal_buf, signal_shape, pl::INT32), pl::device(r));
        });
      });
}

}  // namespace

const char* allreduce_name(Allreduce a) {
  switch (a) {
    case Allreduce::Mesh:
      return "mesh";
    case Allreduce::TwoPhase:
      return "two_phase";
    case Allreduce::Ring:
      return "ring";
    case Allreduce::BuiltinMesh:
      return "builtin_mesh";
    case Allreduce::BuiltinRing:
      return "builtin_ring";
    case Allreduce::BuiltinRecursiveDoubling:
      return "builtin_recursive_doubling";
    case Allreduce::BuiltinRabenseifner:
      return "builtin_rabenseifner";
    case Allreduce::BuiltinTree:
      return "builtin_tree";
    case Allreduce::BuiltinAuto:
      return "builtin_auto";
  }
  return "?";
}

const pl::HostFunction& allreduce_program(Allreduce algorithm, std::int64_t n) {
  static std::map<std::pair<int, std::int64_t>, std::unique_ptr<pl::HostFunction>> programs;
  auto& p = programs[{static_cast<int>(algorithm), n}];
  if (!p) p = std::make_unique<pl::HostFunction>(make(algorithm, n));
  return *p;
}

anyp::RunStats run_allreduce(Allreduce algorithm, std::int64_t n, std::int64_t P,
                             anyp::RunConfig config) {
  const anyp::RunConfig devices = anyp::RunConfig::for_world_size(P);
  config.distributed = devices.distributed;
  anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, n}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t j = 0; j < n; ++j) x.set_at({r, 0, j}, static_cast<double>(r + 1));
  const pl::HostFunction& program = allreduce_program(algorithm, n);
  const anyp::RunStats stats = program.compile({x, y}, config)(x, y);
  const double want = static_cast<double>(P * (P + 1) / 2);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t j = 0; j < n; ++j) {
      if (y.at({r, 0, j}) != want) {
        throw std::runtime_error(
            std::string(allreduce_name(algorithm)) + " n=" + std::to_string(n) +
            " P=" + std::to_string(P) + ": y[" + std::to_string(r) + "][0][" + std::to_string(j) +
            "] = " + std::to_string(y.at({r, 0, j})) + ", not " + std::to_string(want));
      }
    }
  }
  return stats;
}

}  // namespace anyp_test
