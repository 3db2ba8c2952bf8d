// host_worker.hpp — the body of a host worker (PyPTO's HOST SubWorker): a
// function of the host program, not of a device, that the host calls
// between dispatches (pl::jit::host_worker, pl.hpp).
//
//   const auto verify = pl::jit::host_worker(
//       "verify", {pl::In("f", pl::Tensor({P, 64}, DType::FP32))},
//       [](std::span<anyp::HostTensor> args) { check(args[0]); });
//
// It runs once per call, in host order with every dispatch whose host
// tensors overlap its own where one of the two writes (both ways:
// compiler/order_dispatches.hpp). Its arguments are copies of the tensors
// it is given, read when it starts; those it declares pl::Out or pl::InOut
// are written back when it returns. An exception it throws ends the run
// with a RunError naming it.
#pragma once

#include <functional>
#include <span>

namespace anyp {

class HostTensor;  // anyp/host_tensor.hpp

using HostWorkerBody = std::function<void(std::span<HostTensor> args)>;

}  // namespace anyp
