// tile_structured_ops_test.cpp — the tile ops that work on rows and
// columns (issue 11) against references written here: row/col reductions,
// row/col broadcasts, the matmul family, transpose, slice and concat, over
// their dtypes and edge shapes (1 x N, N x 1, a batch dim; matmul across
// the kernels' 12 x 32 blocks and the 256 k-block), at P = 2 with data per
// rank. Sums follow the documented order, so FP32 references are exact:
// left-to-right float sums, and for matmul one std::fma chain in k order.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/tile_op_runner.hpp"

namespace {

using anyp_test::make_input;
using anyp_test::run_tile_op;
using anyp_test::tile_op_error;

constexpr pl::DType kAll[] = {pl::FP32,  pl::FP16,  pl::BF16, pl::INT8,
                              pl::INT16, pl::INT32, pl::INT64};
constexpr std::int64_t P = 2;

std::string name(pl::DType d) { return std::string(anyp::dtype_name(d)); }
std::int64_t unit(pl::DType d) { return 32 / static_cast<std::int64_t>(anyp::dtype_bytes(d)); }
bool is_float(pl::DType d) { return anyp::dtype_is_float(d); }

// Small values every dtype holds exactly (halves and quarters for floats).
double small_value(pl::DType d, std::int64_t r, std::int64_t i) {
  const double v = static_cast<double>((i * 7 + r * 5) % 23 - 11);
  return is_float(d) ? v / 4 : v;
}

double round_to(pl::DType d, double v) {
  anyp::HostTensor t = anyp::HostTensor::zeros({1}, d);
  t.set(0, v);
  return t.get(0);
}

// v modulo 2^bits as a signed value of that width.
std::int64_t wrap(std::int64_t v, pl::DType d) {
  anyp::HostTensor t = anyp::HostTensor::zeros({1}, d);
  t.set_int(0, v);
  return t.get_int(0);
}

// ---- reductions ---------------------------------------------------------------------------------

// The reference reduction of rows x cols elements at x + base (row-major),
// in the documented order: floats accumulate in float, integers wrap.
double reduce_ref(pl::DType d, const anyp::HostTensor& x, std::int64_t base, std::int64_t rows,
                  std::int64_t cols, bool along_rows, std::int64_t line, int kind) {
  const std::int64_t count = along_rows ? cols : rows;
  auto at = [&](std::int64_t k) {
    return along_rows ? base + line * cols + k : base + k * cols + line;
  };
  if (is_float(d)) {
    float acc = static_cast<float>(x.get(at(0)));
    for (std::int64_t k = 1; k < count; ++k) {
      const float v = static_cast<float>(x.get(at(k)));
      acc = kind == 0 ? acc + v : kind == 1 ? std::max(acc, v) : std::min(acc, v);
    }
    return round_to(d, acc);
  }
  std::int64_t acc = x.get_int(at(0));
  for (std::int64_t k = 1; k < count; ++k) {
    const std::int64_t v = x.get_int(at(k));
    acc = kind == 0   ? wrap(static_cast<std::int64_t>(static_cast<std::uint64_t>(acc) +
                                                     static_cast<std::uint64_t>(v)),
                             d)
          : kind == 1 ? std::max(acc, v)
                      : std::min(acc, v);
  }
  return static_cast<double>(acc);
}

TEST(TileOps, RowAndColumnReductionsOverDtypesAndShapes) {
  using Fn = pl::Tile (*)(const pl::Tile&, pl::Here);
  const Fn rows[] = {pl::row_sum, pl::row_max, pl::row_min};
  const Fn cols[] = {pl::col_sum, pl::col_max, pl::col_min};
  for (pl::DType d : kAll) {
    const std::int64_t u = unit(d);
    // [B, M, N]: a batch of 2, a single row, a single column vector.
    const std::vector<std::vector<std::int64_t>> shapes = {
        {2, u, 3 * u}, {1, 2 * u}, {u, 4 * u}, {3 * u, 1}};
    for (const auto& shape : shapes) {
      std::int64_t n = 1;
      for (auto e : shape) n *= e;
      const std::int64_t c = shape.back(), r = shape[shape.size() - 2];
      const std::int64_t b = n / (r * c);
      auto x = make_input(P, n, d, [&](std::int64_t rank, std::int64_t i) {
        return small_value(d, rank, i) * (d == pl::INT8 ? 9 : 1);  // INT8 sums wrap
      });
      for (int kind = 0; kind < 3; ++kind) {
        for (bool along_rows : {true, false}) {
          const std::int64_t m = b * (along_rows ? r : c);
          // Results follow the tile rule: a [.., M, 1] column needs whole
          // 32-byte columns, a [.., 1, N] row whole 32-byte rows.
          const std::int64_t kept = along_rows ? r : c;
          if (kept * static_cast<std::int64_t>(anyp::dtype_bytes(d)) % 32 != 0) continue;
          const auto out = run_tile_op({{x, shape}}, m, d, [&](const auto& t) {
            return (along_rows ? rows : cols)[kind](t[0], pl::Here::current());
          });
          for (std::int64_t rank = 0; rank < P; ++rank)
            for (std::int64_t bb = 0; bb < b; ++bb)
              for (std::int64_t line = 0; line < (along_rows ? r : c); ++line) {
                const double want =
                    reduce_ref(d, x, rank * n + bb * r * c, r, c, along_rows, line, kind);
                ASSERT_EQ(out.get(rank * m + bb * (along_rows ? r : c) + line), want)
                    << name(d) << " kind " << kind << (along_rows ? " row" : " col") << " line "
                    << line;
              }
        }
      }
    }
  }
}

TEST(TileOps, MaxReductionsPropagateNaNAndSumsOfHalvesRoundOnce) {
  const auto x = make_input(P, 64, pl::FP32, [](std::int64_t r, std::int64_t i) {
    return i == 17 + r ? NAN : static_cast<double>(i);  // in row 2 of [8, 8]
  });
  const auto mx =
      run_tile_op({{x, {8, 8}}}, 8, pl::FP32, [](const auto& t) { return pl::row_max(t[0]); });
  for (std::int64_t rank = 0; rank < P; ++rank)
    for (std::int64_t row = 0; row < 8; ++row) {
      const double v = mx.get(rank * 8 + row);
      if (row == 2) {
        EXPECT_TRUE(std::isnan(v)) << "rank " << rank;
      } else {
        EXPECT_EQ(v, row * 8 + 7);
      }
    }
  // 2048 + 1 + 1 ... in FP16: float accumulation keeps every 1, one rounding at the end.
  const auto h =
      make_input(P, 256, pl::FP16, [](std::int64_t, std::int64_t i) { return i == 0 ? 2048 : 1; });
  const auto s =
      run_tile_op({{h, {16, 16}}}, 16, pl::FP16, [](const auto& t) { return pl::row_sum(t[0]); });
  // Row 0: 2048 + 15 = 2063, FP16 rounds to even at spacing 2: 2064 (FP16
  // accumulation would stop at 2048). Other rows: 16.
  for (std::int64_t row = 0; row < 16; ++row) EXPECT_EQ(s.get(row), row == 0 ? 2064 : 16);
}

// ---- broadcasts
// -------------------------------------------------------------------------------------

TEST(TileOps, RowAndColumnBroadcastsAndTheirFusedForms) {
  using Fn = pl::Tile (*)(const pl::Tile&, const pl::Tile&, pl::Here);
  const Fn row_ops[] = {pl::row_expand, pl::row_expand_add, pl::row_expand_sub, pl::row_expand_mul,
                        pl::row_expand_div};
  const Fn col_ops[] = {pl::col_expand, pl::col_expand_add, pl::col_expand_sub, pl::col_expand_mul,
                        pl::col_expand_div};
  for (pl::DType d : kAll) {
    const std::int64_t u = unit(d), M = u, N = 2 * u, n = M * N;
    const auto x =
        make_input(P, n, d, [&](std::int64_t r, std::int64_t i) { return small_value(d, r, i); });
    // Vectors without zeros (integer division).
    const auto rv =
        make_input(P, M, d, [&](std::int64_t r, std::int64_t i) { return (i + r) % 3 + 1; });
    const auto cv =
        make_input(P, N, d, [&](std::int64_t r, std::int64_t i) { return -((i + r) % 4) - 1; });
    for (int op = 0; op < 5; ++op) {
      const auto ro = run_tile_op({{x, {M, N}}, {rv, {M, 1}}}, n, d, [&](const auto& t) {
        return row_ops[op](t[0], t[1], pl::Here::current());
      });
      const auto co = run_tile_op({{x, {M, N}}, {cv, {1, N}}}, n, d, [&](const auto& t) {
        return col_ops[op](t[0], t[1], pl::Here::current());
      });
      for (std::int64_t r = 0; r < P; ++r)
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t j = 0; j < N; ++j) {
            const std::int64_t k = r * n + i * N + j;
            const double t = x.get(k);
            for (const bool row : {true, false}) {
              const double v = row ? rv.get(r * M + i) : cv.get(r * N + j);
              double want = 0;
              switch (op) {
                case 0:
                  want = v;
                  break;
                case 1:
                  want = t + v;
                  break;
                case 2:
                  want = t - v;
                  break;
                case 3:
                  want = t * v;
                  break;
                default:
                  want = is_float(d) ? t / v : std::trunc(t / v);
                  break;
              }
              const double got = (row ? ro : co).get(k);
              ASSERT_EQ(got, is_float(d) ? round_to(d, want) : want)
                  << name(d) << (row ? " row" : " col") << " op " << op << " at " << i << "," << j;
            }
          }
    }
  }
}

TEST(TileOps, BroadcastsOfABatchUseEachMatrixsOwnVector) {
  const auto x =
      make_input(P, 128, pl::FP32, [](std::int64_t r, std::int64_t i) { return i + 1000 * r; });
  const auto rv =
      make_input(P, 16, pl::FP32, [](std::int64_t r, std::int64_t i) { return 10 * i + r; });
  const auto cv =
      make_input(P, 16, pl::FP32, [](std::int64_t r, std::int64_t i) { return -10 * i - r; });
  const auto ro = run_tile_op({{x, {2, 8, 8}}, {rv, {2, 8, 1}}}, 128, pl::FP32,
                              [](const auto& t) { return pl::row_expand_sub(t[0], t[1]); });
  const auto co = run_tile_op({{x, {2, 8, 8}}, {cv, {2, 1, 8}}}, 128, pl::FP32,
                              [](const auto& t) { return pl::col_expand_mul(t[0], t[1]); });
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t i = 0; i < 8; ++i)
        for (std::int64_t j = 0; j < 8; ++j) {
          const std::int64_t k = r * 128 + b * 64 + i * 8 + j;
          EXPECT_EQ(ro.get(k), x.get(k) - rv.get(r * 16 + b * 8 + i));
          EXPECT_EQ(co.get(k), x.get(k) * cv.get(r * 16 + b * 8 + j));
        }
}

// ---- matmul
// ------------------------------------------------------------------------------------------

// The documented FP32 result: one fused multiply-add chain in k order from init.
std::vector<float> matmul_chain(const anyp::HostTensor& a, const anyp::HostTensor& b,
                                std::int64_t rank, std::int64_t batch, std::int64_t M,
                                std::int64_t K, std::int64_t N, const std::vector<float>& init) {
  std::vector<float> c(static_cast<std::size_t>(batch * M * N));
  for (std::int64_t q = 0; q < batch; ++q)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        const std::size_t o = static_cast<std::size_t>((q * M + i) * N + j);
        float v = init.empty() ? 0.0f : init[o];
        for (std::int64_t k = 0; k < K; ++k)
          v = std::fma(static_cast<float>(a.get(rank * batch * M * K + (q * M + i) * K + k)),
                       static_cast<float>(b.get(rank * batch * K * N + (q * K + k) * N + j)), v);
        c[o] = v;
      }
  return c;
}

TEST(TileOps, FloatMatmulIsOneFmaChainPerElementInFp32) {
  struct Case {
    std::int64_t M, K, N;
  };
  // Across the 12 x 32 (and 6 x 16) register blocks and the 256 k-block;
  // the small products' 4 x 16 blocks and their row and column edges (a
  // row of 24 or 40 elements: FP32 only, half rows are 16 elements apart).
  const Case cases[] = {{1, 16, 16}, {13, 32, 48}, {24, 272, 64}, {8, 16, 112},
                        {4, 16, 24}, {6, 16, 40},  {64, 64, 64},  {65, 64, 64}};
  for (pl::DType d : {pl::FP32, pl::FP16, pl::BF16}) {
    for (const Case& c : cases) {
      if (d != pl::FP32 && c.N % 16 != 0) continue;
      const auto a = make_input(P, c.M * c.K, d, [&](std::int64_t r, std::int64_t i) {
        return std::ldexp(static_cast<double>((i * 37 + r * 11) % 61 - 30), -3);
      });
      const auto b = make_input(P, c.K * c.N, d, [&](std::int64_t r, std::int64_t i) {
        return std::ldexp(static_cast<double>((i * 53 + r * 7) % 47 - 23), -4) +
               0.001 * (d == pl::FP32);
      });
      const auto out = run_tile_op({{a, {c.M, c.K}}, {b, {c.K, c.N}}}, c.M * c.N, pl::FP32,
                                   [](const auto& t) { return pl::matmul(t[0], t[1]); });
      for (std::int64_t r = 0; r < P; ++r) {
        const auto want = matmul_chain(a, b, r, 1, c.M, c.K, c.N, {});
        for (std::int64_t k = 0; k < c.M * c.N; ++k)
          ASSERT_EQ(out.get(r * c.M * c.N + k), want[static_cast<std::size_t>(k)])
              << name(d) << " " << c.M << "x" << c.K << "x" << c.N << " element " << k;
      }
    }
  }
}

TEST(TileOps, MatmulAccBiasBatchAndGemvForms) {
  const std::int64_t M = 8, K = 16, N = 32;
  const auto a = make_input(P, 2 * M * K, pl::FP16,
                            [](std::int64_t r, std::int64_t i) { return (i % 9 - 4 + r) / 8.0; });
  const auto b = make_input(P, 2 * K * N, pl::FP16,
                            [](std::int64_t r, std::int64_t i) { return (i % 7 - 3 - r) / 4.0; });
  const auto acc = make_input(P, 2 * M * N, pl::FP32,
                              [](std::int64_t r, std::int64_t i) { return i * 0.5 - r; });
  const auto bias =
      make_input(P, N, pl::FP16, [](std::int64_t r, std::int64_t i) { return i - 7 + r; });
  const auto acc_of = [&](std::int64_t r, std::int64_t count) {
    std::vector<float> v;
    for (std::int64_t k = 0; k < count; ++k)
      v.push_back(static_cast<float>(acc.get(r * 2 * M * N + k)));
    return v;
  };
  const auto bias_rows = [&](std::int64_t r, std::int64_t rows) {
    std::vector<float> v;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < N; ++j) v.push_back(static_cast<float>(bias.get(r * N + j)));
    return v;
  };
  const auto check = [&](const anyp::HostTensor& out, std::int64_t count,
                         const std::function<std::vector<float>(std::int64_t)>& want,
                         const char* what) {
    for (std::int64_t r = 0; r < P; ++r) {
      const auto w = want(r);
      for (std::int64_t k = 0; k < count; ++k)
        ASSERT_EQ(out.get(r * count + k), w[static_cast<std::size_t>(k)])
            << what << " element " << k;
    }
  };
  // The first [M, K] and [K, N] of each rank's data, and the first [M, N] accumulator.
  const anyp::HostTensor& A = a;
  const auto first = [](const anyp::HostTensor& t, std::int64_t n) {
    return make_input(P, n, t.dtype(),
                      [&](std::int64_t r, std::int64_t i) { return t.get(r * t.shape()[2] + i); });
  };
  const auto a1 = first(A, M * K), b1 = first(b, K * N), acc1 = first(acc, M * N);
  check(
      run_tile_op({{acc1, {M, N}}, {a1, {M, K}}, {b1, {K, N}}}, M * N, pl::FP32,
                  [](const auto& t) { return pl::matmul_acc(t[0], t[1], t[2]); }),
      M * N, [&](std::int64_t r) { return matmul_chain(a1, b1, r, 1, M, K, N, acc_of(r, M * N)); },
      "matmul_acc");
  check(
      run_tile_op({{a1, {M, K}}, {b1, {K, N}}, {bias, {1, N}}}, M * N, pl::FP32,
                  [](const auto& t) { return pl::matmul_bias(t[0], t[1], t[2]); }),
      M * N, [&](std::int64_t r) { return matmul_chain(a1, b1, r, 1, M, K, N, bias_rows(r, M)); },
      "matmul_bias");
  check(
      run_tile_op({{a, {2, M, K}}, {b, {2, K, N}}}, 2 * M * N, pl::FP32,
                  [](const auto& t) { return pl::batch_matmul(t[0], t[1]); }),
      2 * M * N, [&](std::int64_t r) { return matmul_chain(a, b, r, 2, M, K, N, {}); },
      "batch_matmul");
  check(
      run_tile_op({{acc, {2, M, N}}, {a, {2, M, K}}, {b, {2, K, N}}}, 2 * M * N, pl::FP32,
                  [](const auto& t) { return pl::batch_matmul_acc(t[0], t[1], t[2]); }),
      2 * M * N,
      [&](std::int64_t r) { return matmul_chain(a, b, r, 2, M, K, N, acc_of(r, 2 * M * N)); },
      "batch_matmul_acc");
  const auto row = first(A, K);
  check(
      run_tile_op({{row, {1, K}}, {b1, {K, N}}}, N, pl::FP32,
                  [](const auto& t) { return pl::gemv(t[0], t[1]); }),
      N, [&](std::int64_t r) { return matmul_chain(row, b1, r, 1, 1, K, N, {}); }, "gemv");
  check(
      run_tile_op({{row, {1, K}}, {b1, {K, N}}, {bias, {1, N}}}, N, pl::FP32,
                  [](const auto& t) { return pl::gemv_bias(t[0], t[1], t[2]); }),
      N, [&](std::int64_t r) { return matmul_chain(row, b1, r, 1, 1, K, N, bias_rows(r, 1)); },
      "gemv_bias");
  const auto acc_row = first(acc, N);
  check(
      run_tile_op({{acc_row, {1, N}}, {row, {1, K}}, {b1, {K, N}}}, N, pl::FP32,
                  [](const auto& t) { return pl::gemv_acc(t[0], t[1], t[2]); }),
      N, [&](std::int64_t r) { return matmul_chain(row, b1, r, 1, 1, K, N, acc_of(r, N)); },
      "gemv_acc");
}

TEST(TileOps, IntegerMatmulAccumulatesInInt32AndWraps) {
  for (pl::DType d : {pl::INT8, pl::INT16, pl::INT32}) {
    const std::int64_t M = 3, K = 32, N = 32;
    const auto a = make_input(P, M * K, d, [&](std::int64_t r, std::int64_t i) {
      return d == pl::INT32 ? (i % 2 ? 2147483647.0 : -2147483648.0 + r)
                            : (i * 5 + r) % 255 - 127.0;
    });
    const auto b = make_input(
        P, K * N, d, [&](std::int64_t r, std::int64_t i) { return (i * 3 + r) % 251 - 125.0; });
    const auto out = run_tile_op({{a, {M, K}}, {b, {K, N}}}, M * N, pl::INT32,
                                 [](const auto& t) { return pl::matmul(t[0], t[1]); });
    for (std::int64_t r = 0; r < P; ++r)
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
          std::uint64_t s = 0;
          for (std::int64_t k = 0; k < K; ++k)
            s += static_cast<std::uint64_t>(a.get_int(r * M * K + i * K + k) *
                                            b.get_int(r * K * N + k * N + j));
          ASSERT_EQ(out.get_int(r * M * N + i * N + j),
                    wrap(static_cast<std::int64_t>(s), pl::INT32))
              << name(d);
        }
  }
}

// ---- layout
// -----------------------------------------------------------------------------------------

TEST(TileOps, TransposeSwapsTwoDims) {
  for (pl::DType d : {pl::FP32, pl::BF16, pl::INT8, pl::INT64}) {
    const std::int64_t u = unit(d), n = 2 * u * u * 2;
    const auto x =
        make_input(P, n, d, [&](std::int64_t r, std::int64_t i) { return small_value(d, r, i); });
    // [4u, u] -> [u, 4u]; and [u, 4, u] with dims 0 and 2 swapped.
    const auto t2 =
        run_tile_op({{x, {4 * u, u}}}, n, d, [](const auto& t) { return pl::transpose(t[0]); });
    const auto t3 = run_tile_op({{x, {u, 4, u}}}, n, d,
                                [](const auto& t) { return pl::transpose(t[0], 0, -1); });
    for (std::int64_t r = 0; r < P; ++r) {
      for (std::int64_t i = 0; i < 4 * u; ++i)
        for (std::int64_t j = 0; j < u; ++j)
          ASSERT_EQ(t2.get(r * n + j * 4 * u + i), x.get(r * n + i * u + j)) << name(d);
      for (std::int64_t i = 0; i < u; ++i)
        for (std::int64_t p = 0; p < 4; ++p)
          for (std::int64_t j = 0; j < u; ++j)  // out[j][p][i] = in[i][p][j]
            ASSERT_EQ(t3.get(r * n + (j * 4 + p) * u + i), x.get(r * n + (i * 4 + p) * u + j))
                << name(d);
    }
  }
}

TEST(TileOps, SliceAndConcat) {
  const auto x =
      make_input(P, 64, pl::FP32, [](std::int64_t r, std::int64_t i) { return i + 100 * r; });
  const auto y =
      make_input(P, 16, pl::FP32, [](std::int64_t r, std::int64_t i) { return -i - 100 * r; });
  // [4, 16] -> the [2, 8] at (1, 8).
  const auto s = run_tile_op({{x, {4, 16}}}, 16, pl::FP32, [](const auto& t) {
    return pl::slice(t[0], {2, 8}, {1, 8});
  });
  const auto c = run_tile_op({{x, {2, 32}}, {y, {2, 8}}}, 80, pl::FP32,
                             [](const auto& t) { return pl::concat(t[0], t[1]); });
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 8; ++j)
        EXPECT_EQ(s.get(r * 16 + i * 8 + j), x.get(r * 64 + (1 + i) * 16 + 8 + j));
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 40; ++j)
        EXPECT_EQ(c.get(r * 80 + i * 40 + j),
                  j < 32 ? x.get(r * 64 + i * 32 + j) : y.get(r * 16 + i * 8 + j - 32));
  }
}

TEST(TileOps, SliceOfThreeDimsAtRuntimeOffsetsIsBoundsChecked) {
  const auto x =
      make_input(P, 128, pl::FP32, [](std::int64_t r, std::int64_t i) { return i + 1000 * r; });
  // [2, 4, 16] -> the [1, 2, 8] at (1, o, 8) with o a run-time scalar.
  const auto s = run_tile_op({{x, {2, 4, 16}}}, 16, pl::FP32, [](const auto& t) {
    const pl::Scalar o = pl::max(1, 0);
    return pl::slice(t[0], {1, 2, 8}, {1, o, 8});
  });
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t j = 0; j < 8; ++j)
        EXPECT_EQ(s.get(r * 16 + i * 8 + j), x.get(r * 128 + 64 + (1 + i) * 16 + 8 + j));
  EXPECT_EQ(tile_op_error({{x, {2, 4, 16}}}, 16, pl::FP32,
                          [](const auto& t) {
                            const pl::Scalar o = pl::max(3, 0);
                            return pl::slice(t[0], {1, 2, 8}, {1, o, 8});
                          }),
            "run error: rank 0 (device 0), function 'op', op pl.slice: slice out of bounds in dim "
            "1: offsets [1, 3, 8] + shape [1, 2, 8] exceeds the FP32 tile [2, 4, 16]");
}

}  // namespace
