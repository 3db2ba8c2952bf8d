// tests/package_consumer/main.cpp — the smallest complete anyp program, built
// against the installed package: a kernel, its orchestration wrapper and the
// host rank loop; each rank r computes y[r] = x[r] + r. Compiled for P = 3,
// run, checked against a host golden; prints OK (exit 0) or the mismatch
// (exit 1).
#include <anyp/anyp.hpp>
#include <cstdint>
#include <cstdio>
#include <exception>

int main() {
  constexpr std::int64_t SIZE = 64;
  constexpr std::int64_t P = 3;
  const pl::Dim NR = pl::dynamic("NR");

  // Kernel: the only level that computes.
  const auto add_rank =
      pl::jit::incore("add_rank",
                      {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)),
                       pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)), pl::In("r", pl::INT32)},
                      [](pl::Value x, pl::Value y, pl::Scalar r) {
                        pl::Tile t = pl::load(x, {0, 0}, {1, SIZE});
                        y = pl::store(pl::add(t, pl::cast(r, pl::FP32)), {0, 0}, y);
                      });
  // Orchestration: forwards to the kernel, once per device.
  const auto per_rank = pl::jit::orchestration(
      "per_rank",
      {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
       pl::In("r", pl::INT32)},
      [add_rank](pl::Value x, pl::Value y, pl::Scalar r) { add_rank(x, y, r); });
  // Host: one dispatch per rank; the loop bound is P, never a literal.
  const auto program = pl::jit::host(
      "consumer",
      {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
      [per_rank](pl::Value x, pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(x[r], y[r], r, pl::device(r)); });
      });

  try {
    anyp::InputGenerator gen(1);
    anyp::HostTensor x = gen.uniform({P, 1, SIZE});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, anyp::DType::FP32);
    anyp::HostTensor golden = anyp::HostTensor::zeros({P, 1, SIZE}, anyp::DType::FP32);
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t i = 0; i < SIZE; ++i) {
        golden.set_at({r, 0, i}, x.at({r, 0, i}) + static_cast<double>(r));
      }
    }

    anyp::RunConfig config;
    config.distributed.device_ids = {0, 1, 2};
    anyp::CompiledProgram compiled = program.compile({x, y}, config);
    compiled(x, y);

    if (!anyp::allclose(y, golden)) {
      std::fprintf(stderr, "y mismatch: max diff = %g (P=%lld)\n", anyp::max_abs_diff(y, golden),
                   static_cast<long long>(P));
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
