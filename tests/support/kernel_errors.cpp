// kernel_errors.cpp — the shared compile-error probes (kernel_errors.hpp).
#include "support/kernel_errors.hpp"

#include "support/source_locations.hpp"

namespace anyp_test {

std::string trace_error(const pl::Function& fn) {
  try {
    fn.ir_text();
  } catch (const anyp::CompileError& e) {
    return without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return "traced without error";
}

pl::Function kernel_of(const std::string& name, const std::function<void(pl::Value)>& body) {
  return pl::jit::incore(name, {pl::InOut("y", pl::Tensor({1, kProbeWidth}, pl::FP32))}, body);
}

std::string compile_error(const pl::Function& kernel, std::int64_t P) {
  const pl::Dim NR = pl::dynamic("NR");
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, kProbeWidth}, pl::FP32))},
      [per_rank](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) { per_rank(y[r], pl::device(r)); });
      });
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, kProbeWidth}, pl::FP32);
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return "compiled without error";
}

}  // namespace anyp_test
