// 02_programming_model — the three levels, and the three ways values flow down.
//
// The host allocates, loops and dispatches; the orchestration forwards per
// device; the kernel computes (and, from step 03 on, communicates). Values
// reach the kernel three ways: a sliced tensor (x[r], y[r]: rank r's rows),
// an unsliced tensor (b: the same [8, 8] tensor, whole, on every rank) and a
// scalar (r). The kernel forms x*(r+1) as x*r + x: no scalar FP "+1".
//   02_programming_model                 (P = 2, devices 0,1)
//   02_programming_model -d 0,1,2,3      (P = 4: only -d changes)
// Golden: y[r] = x[r]*(r+1) + b, close.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t TILE = 8;       // an [8, 8] FP32 tile: rows of 32 bytes
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

// y = x*r + x + b: tensors first, then the scalar.
const auto scale_shift =
    pl::jit::incore("scale_shift",
                    {pl::In("x", pl::Tensor({TILE, TILE}, pl::FP32)),
                     pl::In("b", pl::Tensor({TILE, TILE}, pl::FP32)),
                     pl::Out("y", pl::Tensor({TILE, TILE}, pl::FP32)), pl::In("r", pl::INT32)},
                    [](pl::Value x, pl::Value b, pl::Value y, pl::Scalar r) {
                      pl::Tile t = pl::load(x, {0, 0}, {TILE, TILE});
                      pl::Scalar rf = pl::cast(r, pl::FP32);
                      pl::Tile bt = pl::load(b, {0, 0}, {TILE, TILE});
                      y = pl::store(pl::add(pl::add(pl::mul(t, rf), t), bt), {0, 0}, y);
                    });

// The per-device orchestration: forwards its arguments to the kernel.
const auto per_rank = pl::jit::orchestration(
    "per_rank",
    {pl::In("x", pl::Tensor({TILE, TILE}, pl::FP32)),
     pl::In("b", pl::Tensor({TILE, TILE}, pl::FP32)),
     pl::Out("y", pl::Tensor({TILE, TILE}, pl::FP32)), pl::In("r", pl::INT32)},
    [](pl::Value x, pl::Value b, pl::Value y, pl::Scalar r) { scale_shift(x, b, y, r); });

// The host: x and y carry the leading rank dim NR and are sliced per rank;
// b has none and goes to every rank whole.
const pl::HostFunction programming_model =
    pl::jit::host("programming_model",
                  {pl::In("x", pl::Tensor({NR, TILE, TILE}, pl::FP32)),
                   pl::In("b", pl::Tensor({TILE, TILE}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, TILE, TILE}, pl::FP32))},
                  [](pl::Value x, pl::Value b, pl::Value y) {
                    pl::range(pld::world_size(),
                              [&](pl::Scalar r) { per_rank(x[r], b, y[r], r, pl::device(r)); });
                  });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, TILE, TILE});
  anyp::HostTensor b = gen.uniform({TILE, TILE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32);
  anyp::CompiledProgram compiled = programming_model.compile({x, b, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, b, y);
  // The golden, derived from the actual P.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < TILE; ++i) {
      for (std::int64_t j = 0; j < TILE; ++j) {
        expected.set_at({r, i, j}, x.at({r, i, j}) * static_cast<double>(r + 1) + b.at({i, j}));
      }
    }
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "02_programming_model";
  spec.step = 2;
  return anyp::cli::run_example(argc, argv, spec, run);
}
