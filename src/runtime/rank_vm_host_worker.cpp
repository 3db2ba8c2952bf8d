// rank_vm_host_worker.cpp — the HostWorker instruction: a host worker
// (anyp/host_worker.hpp) called on rank 0's dispatch list, where the
// dispatch order placed it. Its tensors are read through the door into
// copies, it runs, and the copies of those it may write (pl::Out,
// pl::InOut) are written back through the door, so observers (the race
// checker, the timeline) see its accesses as rank 0's.
#include <cxxabi.h>

#include <algorithm>
#include <exception>
#include <vector>

#include "anyp/host_tensor.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::runtime {

void RankVm::host_worker(const Instr& in) {
  const HostWorkerDesc& worker = code_->host_workers[static_cast<std::size_t>(in.imm)];
  std::vector<HostTensor> args;
  args.reserve(in.idx.size());
  for (std::int32_t reg : in.idx) {
    const ViewReg& v = v_[reg];
    args.push_back(HostTensor::zeros({v.extent.begin(), v.extent.end()}, v.dtype));
    ctx_->fabric->read(agent_, site(in), whole_region(in, v, rank_), args.back().data());
  }
  const std::string who = "host worker '" + worker.name + "'";
  try {
    (*worker.body)(args);
  } catch (const abi::__forced_unwind&) {
    throw;  // the thread is ending (a Python worker at interpreter exit): never swallowed
  } catch (const std::exception& e) {
    fail(in, who + " failed: " + e.what());
  } catch (...) {
    fail(in, who + " failed with an exception that is not a std::exception");
  }
  for (std::size_t k = 0; k < args.size(); ++k) {
    if (!worker.writes[k]) continue;
    const ViewReg& v = v_[in.idx[k]];
    if (args[k].dtype() != v.dtype || !std::ranges::equal(args[k].shape(), v.extent) ||
        !args[k].defined()) {
      std::string shape;
      for (std::int64_t e : v.extent) shape += (shape.empty() ? "" : ", ") + std::to_string(e);
      fail(in, who + " replaced its argument " + std::to_string(k) +
                   " with another tensor; write into the one it was given (" +
                   std::string(dtype_name(v.dtype)) + " [" + shape + "])");
    }
    ctx_->fabric->write(agent_, site(in), whole_region(in, v, rank_), args[k].data(), false);
  }
}

}  // namespace anyp::runtime
