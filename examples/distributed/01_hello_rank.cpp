// 01_hello_rank — the rank is the host loop index; P is pld::world_size().
//
// The host loops r over pl::range(pld::world_size()) and gives each rank one
// dispatch: host -> orchestration (per_rank) -> kernel (hello). The rank
// reaches the kernel as an INT32 scalar parameter, listed after the tensors;
// the kernel casts that parameter itself (never an expression such as r + 1)
// to FP32 and adds it to every element with a broadcasting vector add.
//   01_hello_rank                 (P = 2, devices 0,1)
//   01_hello_rank -d 0,1,2,3      (P = 4: only -d changes)
// Golden: y[r] = x[r] + r, close.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t TILE = 8;       // an [8, 8] FP32 tile: rows of 32 bytes
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

// y = x + r: tensors first, then the scalar.
const auto hello = pl::jit::incore(
    "hello",
    {pl::In("x", pl::Tensor({TILE, TILE}, pl::FP32)),
     pl::Out("y", pl::Tensor({TILE, TILE}, pl::FP32)), pl::In("r", pl::INT32)},
    [](pl::Value x, pl::Value y, pl::Scalar r) {
      pl::Tile t = pl::load(x, {0, 0}, {TILE, TILE});
      pl::Scalar rf = pl::cast(r, pl::FP32);  // cast the parameter, not an expression
      y = pl::store(pl::add(t, rf), {0, 0}, y);
    });

// The per-device orchestration: forwards its arguments to the kernel.
const auto per_rank = pl::jit::orchestration(
    "per_rank",
    {pl::In("x", pl::Tensor({TILE, TILE}, pl::FP32)),
     pl::Out("y", pl::Tensor({TILE, TILE}, pl::FP32)), pl::In("r", pl::INT32)},
    [](pl::Value x, pl::Value y, pl::Scalar r) { hello(x, y, r); });

// The host: one dispatch per rank; the loop bound is P, never a literal.
const pl::HostFunction hello_rank = pl::jit::host(
    "hello_rank",
    {pl::In("x", pl::Tensor({NR, TILE, TILE}, pl::FP32)),
     pl::Out("y", pl::Tensor({NR, TILE, TILE}, pl::FP32))},
    [](pl::Value x, pl::Value y) {
      pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(x[r], y[r], r, pl::device(r)); });
    });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, TILE, TILE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32);
  anyp::CompiledProgram compiled = hello_rank.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, derived from the actual P.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, TILE, TILE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t i = 0; i < TILE; ++i) {
      for (std::int64_t j = 0; j < TILE; ++j) {
        expected.set_at({r, i, j}, x.at({r, i, j}) + static_cast<double>(r));
      }
    }
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "01_hello_rank";
  spec.step = 1;
  return anyp::cli::run_example(argc, argv, spec, run);
}
