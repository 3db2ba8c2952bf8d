// footprint.cpp — the footprint of a run from its plan (footprint.hpp).
#include "runtime/footprint.hpp"

#include <algorithm>

#include "common/memory_available.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::runtime {
namespace {

std::string shape_of(const WindowBuffer& b) {
  std::string s = "[";
  for (std::size_t i = 0; i < b.shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(b.shape[i]);
  return s + "] " + std::string(dtype_name(b.dtype));
}

}  // namespace

void Footprint::add(std::string what, double bytes, std::string detail) {
  parts.push_back(MemoryPart{std::move(what), bytes, std::move(detail)});
}

double Footprint::total() const {
  double sum = 0;
  for (const MemoryPart& p : parts) sum += p.bytes;
  return sum;
}

std::string Footprint::text() const {
  std::string s = bytes_text(total());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    s += (i ? ", " : ": ") + parts[i].what + " " + bytes_text(parts[i].bytes);
    if (!parts[i].detail.empty()) s += " (" + parts[i].detail + ")";
  }
  return s;
}

void add_window_footprint(const Executable& exec, std::int64_t ranks_here, Footprint& out) {
  const WindowBuffer* largest = nullptr;
  for (const WindowBuffer& b : exec.buffers)
    if (!largest || b.bytes > largest->bytes) largest = &b;
  std::string detail = std::to_string(ranks_here) + (ranks_here == 1 ? " rank" : " ranks") + " × " +
                       bytes_text(static_cast<double>(exec.window_bytes));
  if (largest && exec.buffers.size() > 1) {
    detail += "; largest buffer '" + largest->name + "' " + shape_of(*largest) + ", " +
              bytes_text(static_cast<double>(largest->bytes)) + " per rank";
  }
  out.add("windows", static_cast<double>(ranks_here) * static_cast<double>(exec.window_bytes),
          std::move(detail));
}

void add_vm_footprint(const Executable& exec, std::int64_t agents_here, Footprint& out) {
  // A VM holds one dispatch's registers at a time: the largest code counts.
  double per_agent = 0;
  for (const LoweredCode& code : exec.codes) {
    double tile = 0;
    for (const Instr& in : code.instrs) {
      if (in.shape.empty()) continue;
      double n = static_cast<double>(dtype_bytes(in.dtype));
      for (auto e : in.shape) n *= static_cast<double>(e);
      tile = std::max(tile, n);
    }
    const double regs = static_cast<double>(code.num_scalars) * sizeof(ScalarValue) +
                        static_cast<double>(code.num_views) * sizeof(ViewReg) +
                        static_cast<double>(code.num_tiles) * (sizeof(TileReg) + tile);
    per_agent = std::max(per_agent, regs);
  }
  per_agent += sizeof(RankVm);
  out.add("rank VMs", per_agent * static_cast<double>(agents_here),
          std::to_string(agents_here) + " × " + bytes_text(per_agent));
}

}  // namespace anyp::runtime
