// tile_math_rounds.cpp — the compute-bound program of tile_math_rounds.hpp.
#include "support/tile_math_rounds.hpp"

#include <string>
#include <vector>

namespace anyp_test {

pl::HostFunction tile_math_rounds(std::int64_t elements, std::int64_t rounds) {
  const pl::Dim NR = pl::dynamic("NR");
  const std::vector<pl::Param> params = {pl::In("x", pl::Tensor({1, elements}, pl::FP32)),
                                         pl::Out("y", pl::Tensor({1, elements}, pl::FP32))};
  const auto kernel = pl::jit::incore("math_rounds", params, [=](pl::Value x, pl::Value y) {
    pl::Tile a = pl::load(x, {0, 0}, {1, elements});
    pl::Tile acc = a;
    pl::range(rounds, [&](pl::Scalar) { acc = pl::add(pl::mul(acc, a), a); });
    y = pl::store(acc, {0, 0}, y);
  });
  const auto per_rank = pl::jit::orchestration_for("math_per_rank", kernel);
  return pl::jit::host("compute_" + std::to_string(elements),
                       {pl::In("x", pl::Tensor({NR, 1, elements}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, elements}, pl::FP32))},
                       [=](pl::Value x, pl::Value y) {
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           pl::Value xr = x[r];
                           pl::Value yr = y[r];
                           per_rank(xr, yr, pl::device(r));
                         });
                       });
}

}  // namespace anyp_test
