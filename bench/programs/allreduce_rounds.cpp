// allreduce_rounds.cpp — the builtin allreduce in a loop (allreduce_rounds.hpp).
#include "programs/allreduce_rounds.hpp"

#include <utility>
#include <vector>

namespace bench {

pl::HostFunction allreduce_rounds(std::int64_t floats, std::int64_t rounds,
                                  pld::AllreduceMode mode) {
  const pl::Dim NR = pl::dynamic("NR");
  const pl::Shape sig =
      mode == pld::AllreduceMode::Ring ? pl::Shape{2 * (NR - 1), NR} : pl::Shape{NR, 1};
  const std::vector<pl::Param> params = {
      pl::InOut("data", pld::DistributedTensor({1, floats}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))};
  const auto kernel =
      pl::jit::incore("allreduce_rounds", params, [rounds, mode](pl::Value data, pl::Value signal) {
        pl::range(rounds, [&](pl::Scalar) {
          data = pld::tensor::allreduce(data, signal, pld::ReduceOp::Sum, mode);
        });
      });
  const auto per_rank = pl::jit::orchestration_for("allreduce_rounds_per_rank", kernel);
  return pl::jit::host(
      "allreduce_rounds_" + std::to_string(static_cast<int>(mode)) + "_" + std::to_string(rounds),
      {pl::In("x", pl::Tensor({NR, 1, 1}, pl::FP32))}, [=](pl::Value) {
        auto data_buf = pld::alloc_window_buffer("data", {1, floats}, pl::FP32);
        auto sig_buf = pld::alloc_window_buffer("signal", sig, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(pld::window(data_buf, {1, floats}, pl::FP32),
                   pld::window(sig_buf, sig, pl::INT32), pl::device(r));
        });
      });
}

bool allreduce_mode_named(const std::string& name, pld::AllreduceMode& mode) {
  static const std::pair<const char*, pld::AllreduceMode> names[] = {
      {"mesh", pld::AllreduceMode::Mesh},
      {"ring", pld::AllreduceMode::Ring},
      {"recursive_doubling", pld::AllreduceMode::RecursiveDoubling},
      {"rabenseifner", pld::AllreduceMode::Rabenseifner},
      {"tree", pld::AllreduceMode::Tree},
      {"auto", pld::AllreduceMode::Auto}};
  for (const auto& [n, m] : names) {
    if (name == n) {
      mode = m;
      return true;
    }
  }
  return false;
}

std::string auto_choice(const anyp::CompiledProgram& compiled, const std::string& pinned) {
  const std::string text = compiled.collective_choices();
  const std::size_t at = text.find("chose ");
  if (at == std::string::npos) return pinned;
  const std::size_t end = text.find(':', at);
  return text.substr(at + 6, end - at - 6);
}

}  // namespace bench
