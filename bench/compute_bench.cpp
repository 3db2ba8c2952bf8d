// compute_bench.cpp — issue 11's speed targets, each against its baseline in
// the same run:
//   * FP32 matmul of square tiles (64, 128, 256) through the VM's kernel
//     (runtime/tile_matmul.hpp) against OpenBLAS cblas_sgemm on one thread:
//     the ratio is OpenBLAS time / anyp time (target >= 0.70 at 256);
//   * exp, rsqrt and row_sum against a plain C++ loop doing the same work
//     (-O3, as an expert builds it): plain time / anyp time (target >= 0.50);
//   * issue 52: sqrt, rsqrt, recip, exp and log against the loop an expert
//     builds for this CPU (native_loops.hpp: -O3 -march=native, exp and log
//     through libmvec): native time / anyp time (target >= 0.50), at 4 Ki
//     and 64 Ki elements.
// Median of repeated runs after a warm-up.
//
//   build/release/bench/compute_bench          (bash bench/run_compute.sh)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "anyp/anyp.hpp"
#include "anyp/dtype.hpp"
#include "common/element_codec.hpp"
#include "native_loops.hpp"
#include "runtime/sgemm_kernels.hpp"
#include "runtime/tile_matmul.hpp"
#include "runtime/tile_structured.hpp"
#include "runtime/tile_unary.hpp"

#ifdef ANYP_HAVE_OPENBLAS
#include <cblas.h>
#endif
#ifdef ANYP_HAVE_EIGEN
#include <Eigen/Core>
#endif

namespace {

using anyp::DType;
namespace rt = anyp::runtime;
namespace ir = anyp::ir;

// Median seconds of `body` over `reps` runs (after one warm-up).
double median_seconds(int reps, const std::function<void()>& body) {
  body();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// n values in [-1, 1], spread by a multiplicative hash of the index (the
// remainder is taken unsigned, the offset signed: an unsigned subtraction
// once wrapped half of them to about 1.8e16, and exp of those was inf).
std::vector<float> values(std::size_t n, unsigned seed) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto spread = static_cast<std::int64_t>((i * 2654435761u + seed) % 2001);
    v[i] = static_cast<float>(spread - 1000) / 1000.0f;
  }
  return v;
}

void matmul_rows() {
  std::printf("FP32 matmul [n, n] @ [n, n] (sgemm kernel: %s), median of 50\n",
              rt::sgemm_kernel_name());
#ifdef ANYP_HAVE_OPENBLAS
  openblas_set_num_threads(1);
  // The baseline is only as good as the kernel OpenBLAS picked: on a CPU it
  // does not recognise (a virtual "Intel Xeon Processor") it falls back to a
  // generic one (Prescott, SSE3) about 5x slower than its AVX-512 kernel;
  // OPENBLAS_CORETYPE=SkylakeX picks that (bench/run_compute.sh does).
  std::printf("  OpenBLAS %s, core %s, 1 thread\n", openblas_get_config(), openblas_get_corename());
#endif
  std::printf("  %5s  %12s  %12s  %12s  %12s  %s\n", "n", "anyp us", "anyp GF/s", "OpenBLAS us",
              "OpenBLAS GF/s", "OpenBLAS/anyp");
  for (std::int64_t n : {16, 32, 64, 128, 256}) {
    const auto a = values(static_cast<std::size_t>(n * n), 1),
               b = values(static_cast<std::size_t>(n * n), 2);
    std::vector<float> c(static_cast<std::size_t>(n * n));
    const rt::MatmulDims d{1, n, n, n};
    const double ta = median_seconds(50, [&] {
      rt::tile_matmul(DType::FP32, DType::FP32, d, reinterpret_cast<const std::byte*>(a.data()),
                      reinterpret_cast<const std::byte*>(b.data()), ir::MatmulInit::Zero, nullptr,
                      DType::FP32, reinterpret_cast<std::byte*>(c.data()));
    });
    const double flops = 2.0 * static_cast<double>(n * n * n);
#ifdef ANYP_HAVE_OPENBLAS
    const int ni = static_cast<int>(n);
    const double tb = median_seconds(50, [&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data(), ni,
                  b.data(), ni, 0.0f, c.data(), ni);
    });
    std::printf("  %5lld  %12.1f  %12.1f  %12.1f  %12.1f  %.2f\n", static_cast<long long>(n),
                ta * 1e6, flops / ta * 1e-9, tb * 1e6, flops / tb * 1e-9, tb / ta);
#ifdef ANYP_HAVE_EIGEN
    // Eigen as the runtime would build it: this file's flags, no -march.
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const Eigen::Map<const Mat> ea(a.data(), n, n), eb(b.data(), n, n);
    Eigen::Map<Mat> ec(c.data(), n, n);
    const double te = median_seconds(50, [&] { ec.noalias() = ea * eb; });
    std::printf("  %5s  Eigen %d.%d.%d, same flags: %.1f us (OpenBLAS/Eigen %.2f)\n", "",
                EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, te * 1e6, tb / te);
#endif
#else
    std::printf("  %5lld  %12.1f  %12.1f  (OpenBLAS not found at configure time)\n",
                static_cast<long long>(n), ta * 1e6, flops / ta * 1e-9);
#endif
  }
  // FP16 operands: widened to FP32, then the same kernel.
  const std::int64_t n = 256;
  std::vector<std::uint16_t> ha(static_cast<std::size_t>(n * n)), hb(ha.size());
  const auto fa = values(ha.size(), 3), fb = values(hb.size(), 4);
  anyp::convert_elements(reinterpret_cast<const std::byte*>(fa.data()), DType::FP32,
                         reinterpret_cast<std::byte*>(ha.data()), DType::FP16, ha.size());
  anyp::convert_elements(reinterpret_cast<const std::byte*>(fb.data()), DType::FP32,
                         reinterpret_cast<std::byte*>(hb.data()), DType::FP16, hb.size());
  std::vector<float> c(static_cast<std::size_t>(n * n));
  const double th = median_seconds(50, [&] {
    rt::tile_matmul(DType::FP16, DType::FP32, {1, n, n, n},
                    reinterpret_cast<const std::byte*>(ha.data()),
                    reinterpret_cast<const std::byte*>(hb.data()), ir::MatmulInit::Zero, nullptr,
                    DType::FP32, reinterpret_cast<std::byte*>(c.data()));
  });
  std::printf("  FP16 operands, n = 256: %.1f us (%.1f GF/s; widening included)\n\n", th * 1e6,
              2.0 * n * n * n / th * 1e-9);
}

void vector_rows() {
  constexpr std::size_t kN = 4096;
  const auto x = values(kN, 5);
  std::vector<float> pos(kN), out(kN);
  for (std::size_t i = 0; i < kN; ++i) pos[i] = std::fabs(x[i]) + 0.01f;
  std::printf("Tile functions over %zu FP32 elements, median of 200: plain loop / anyp (>= 0.50)\n",
              kN);
  std::printf("  %-10s  %10s  %10s  %s\n", "op", "anyp ns/el", "plain ns/el", "plain/anyp");
  const auto row = [&](const char* name, ir::UnaryOp op, const std::vector<float>& in,
                       const std::function<void()>& plain) {
    const double ta = median_seconds(200, [&] {
      rt::tile_unary(op, DType::FP32, reinterpret_cast<const std::byte*>(in.data()),
                     reinterpret_cast<std::byte*>(out.data()), kN);
    });
    const double tp = median_seconds(200, plain);
    std::printf("  %-10s  %10.2f  %10.2f  %.2f\n", name, ta * 1e9 / kN, tp * 1e9 / kN, tp / ta);
  };
  row("exp", ir::UnaryOp::Exp, x, [&] {
    for (std::size_t i = 0; i < kN; ++i) out[i] = std::exp(x[i]);
  });
  row("rsqrt", ir::UnaryOp::Rsqrt, pos, [&] {
    for (std::size_t i = 0; i < kN; ++i) out[i] = 1.0f / std::sqrt(pos[i]);
  });
  // row_sum of [64, 64].
  const rt::Matrices m{1, 64, 64};
  std::vector<float> sums(64);
  const double ta = median_seconds(200, [&] {
    rt::tile_reduce(ir::ReduceKind::Sum, true, DType::FP32, m,
                    reinterpret_cast<const std::byte*>(x.data()),
                    reinterpret_cast<std::byte*>(sums.data()));
  });
  const double tp = median_seconds(200, [&] {
    for (std::size_t i = 0; i < 64; ++i) {
      float s = x[i * 64];
      for (std::size_t j = 1; j < 64; ++j) s += x[i * 64 + j];
      sums[i] = s;
    }
  });
  std::printf("  %-10s  %10.2f  %10.2f  %.2f\n", "row_sum", ta * 1e9 / kN, tp * 1e9 / kN, tp / ta);
}

// Issue 52: a 16 x 16 FP32 matmul through the API: a compiled program
// whose one rank runs `rounds` pl::matmul_acc of [16, 16] tiles in a loop,
// per matmul (the run's time over the rounds, the loop's instructions and
// the VM's dispatch included), against one cblas_sgemm call of that size.
void api_matmul_row() {
  constexpr std::int64_t n = 16, rounds = 4096;
  const pl::Dim NR = pl::dynamic("NR");
  const std::vector<pl::Param> params = {pl::In("x", pl::Tensor({n, n}, pl::FP32)),
                                         pl::Out("y", pl::Tensor({n, n}, pl::FP32))};
  const auto kernel = pl::jit::incore("matmuls", params, [=](pl::Value x, pl::Value y) {
    pl::Tile a = pl::load(x, {0, 0}, {n, n});
    pl::Tile acc = pl::mul(a, 0.0);
    pl::range(rounds, [&](pl::Scalar) { acc = pl::matmul_acc(acc, a, a); });
    y = pl::store(acc, {0, 0}, y);
  });
  const auto per_rank = pl::jit::orchestration_for("matmuls_per_rank", kernel);
  const pl::HostFunction program = pl::jit::host("api_matmul",
                                                 {pl::In("x", pl::Tensor({NR, n, n}, pl::FP32)),
                                                  pl::Out("y", pl::Tensor({NR, n, n}, pl::FP32))},
                                                 [=](pl::Value x, pl::Value y) {
                                                   pl::range(pld::world_size(), [&](pl::Scalar r) {
                                                     pl::Value xr = x[r];
                                                     pl::Value yr = y[r];
                                                     per_rank(xr, yr, pl::device(r));
                                                   });
                                                 });
  anyp::HostTensor x = anyp::HostTensor::zeros({1, n, n}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({1, n, n}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(1);
  config.workers = 1;
  const anyp::CompiledProgram compiled = program.compile({x, y}, config);
  const double t = median_seconds(21, [&] { compiled(x, y); }) / rounds;
  std::printf(
      "\n16 x 16 FP32 matmul through the API (pl::matmul_acc in a kernel loop of %lld, "
      "median of 21 runs): %.1f ns per matmul",
      static_cast<long long>(rounds), t * 1e9);
#ifdef ANYP_HAVE_OPENBLAS
  const auto a = values(n * n, 1);
  std::vector<float> c(n * n);
  const double tb = median_seconds(2001, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 16, 16, 16, 1.0f, a.data(), 16, a.data(),
                16, 1.0f, c.data(), 16);
  });
  std::printf("; OpenBLAS sgemm %.1f ns; OpenBLAS/anyp %.2f (>= 0.30)\n", tb * 1e9, tb / t);
#else
  std::printf(" (no OpenBLAS in this build to compare)\n");
#endif
}

// Issue 52: the tile functions against the native loops.
void native_rows() {
  std::printf(
      "\nTile functions against the loop built for this CPU (-O3 -march=native; exp, log with "
      "-ffast-math), median of 200: native / anyp (>= 0.50)\n");
  std::printf("  %-6s  %7s  %10s  %10s  %s\n", "op", "n", "anyp ns/el", "native ns/el",
              "native/anyp");
  struct Fn {
    const char* name;
    ir::UnaryOp op;
    void (*native)(const float*, float*, std::size_t);
    bool positive;  // inputs in (0.01, 1.01] instead of [-1, 1]
  };
  const Fn fns[] = {{"sqrt", ir::UnaryOp::Sqrt, bench::native_sqrt, true},
                    {"rsqrt", ir::UnaryOp::Rsqrt, bench::native_rsqrt, true},
                    {"recip", ir::UnaryOp::Recip, bench::native_recip, false},
                    {"exp", ir::UnaryOp::Exp, bench::native_exp, false},
                    {"log", ir::UnaryOp::Log, bench::native_log, true}};
  for (const std::size_t n : {std::size_t{4096}, std::size_t{65536}}) {
    auto x = values(n, 5);
    std::vector<float> pos(n), out(n);
    for (std::size_t i = 0; i < n; ++i) pos[i] = std::fabs(x[i]) + 0.01f;
    for (const Fn& fn : fns) {
      const std::vector<float>& in = fn.positive ? pos : x;
      const double ta = median_seconds(200, [&] {
        rt::tile_unary(fn.op, DType::FP32, reinterpret_cast<const std::byte*>(in.data()),
                       reinterpret_cast<std::byte*>(out.data()), n);
      });
      const double tn = median_seconds(200, [&] { fn.native(in.data(), out.data(), n); });
      std::printf("  %-6s  %7zu  %10.3f  %10.3f  %.2f\n", fn.name, n, ta * 1e9 / n, tn * 1e9 / n,
                  tn / ta);
      // FP16 and BF16 tiles of the same values, against the FP32 native
      // loop (a native half loop does that loop's work and two conversions).
      for (const DType half : {DType::FP16, DType::BF16}) {
        std::vector<std::byte> h(2 * n), ho(2 * n);
        std::vector<double> d(in.begin(), in.end());
        anyp::encode_elements(h.data(), half, d.data(), n);
        const double th =
            median_seconds(200, [&] { rt::tile_unary(fn.op, half, h.data(), ho.data(), n); });
        std::printf("  %-6s  %7zu  %10.3f  %10.3f  %.2f  (%s tile; FP32 native loop)\n", fn.name, n,
                    th * 1e9 / n, tn * 1e9 / n, tn / th, std::string(dtype_name(half)).c_str());
      }
    }
  }
}

}  // namespace

int main() {
  matmul_rows();
  vector_rows();
  native_rows();
  api_matmul_row();
  std::printf(
      "\nreproduce: cmake --build build/release --target compute_bench && "
      "build/release/bench/compute_bench\n");
  return 0;
}
