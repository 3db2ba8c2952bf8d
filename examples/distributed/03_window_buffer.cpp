// 03_window_buffer — symmetric window memory: one allocation, one view per rank.
//
// pld::alloc_window_buffer runs once, above the rank loop: it reserves the
// same slot in every rank's window. pld::window runs per rank, inside the
// loop, and types that slot as a [1, SIZE] FP32 view (a DistributedTensor, a
// type distinct from a plain tensor). A local load/store on a window sees only
// this rank's slice; reaching a peer's slice takes RMA (step 05).
//   03_window_buffer                 (P = 2, devices 0,1)
//   03_window_buffer -d 0,1,2,3      (P = 4: only -d changes)
// Golden: y[r] = x[r], exact (1 KiB of window per rank, no remote traffic).
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>

namespace {

constexpr std::int64_t SIZE = 256;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

// Stage x into my window slot, then read it back into y.
const auto roundtrip = pl::jit::incore(
    "roundtrip",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))},
    [](pl::Value x, pl::Value y, pl::Value data) {
      data = pl::store(pl::load(x, {0, 0}, {1, SIZE}), {0, 0}, data);
      y = pl::store(pl::load(data, {0, 0}, {1, SIZE}), {0, 0}, y);
    });

// The per-device orchestration: forwards its arguments to the kernel.
const auto per_rank = pl::jit::orchestration(
    "per_rank",
    {pl::In("x", pl::Tensor({1, SIZE}, pl::FP32)), pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, SIZE}, pl::FP32))},
    [](pl::Value x, pl::Value y, pl::Value data) { roundtrip(x, y, data); });

// The host: allocate once, above the loop; make the view per rank.
const pl::HostFunction window_buffer =
    pl::jit::host("window_buffer",
                  {pl::In("x", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
                   pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                  [](pl::Value x, pl::Value y) {
                    auto data_buf = pld::alloc_window_buffer("data_buf", {1, SIZE}, pl::FP32);
                    pl::range(pld::world_size(), [&](pl::Scalar r) {
                      auto data = pld::window(data_buf, {1, SIZE}, pl::FP32);
                      per_rank(x[r], y[r], data, pl::device(r));
                    });
                  });

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  anyp::CompiledProgram compiled = window_buffer.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden: every rank gets its own row back.
  anyp::HostTensor expected = x.clone();
  return anyp::cli::report({anyp::cli::check_exact("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "03_window_buffer";
  spec.step = 3;
  return anyp::cli::run_example(argc, argv, spec, run);
}
