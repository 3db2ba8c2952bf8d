// rank_vm_addressing.cpp — how the rank VM turns registers into places:
// a peer register into a rank (of the world, or of a view's group), offset
// registers into a Region of a view on its owner, a signal view and
// offsets into a Cell; and the run errors when any of them is out of range.
#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::runtime {

std::int64_t RankVm::peer_of(const Instr& in, std::int32_t reg, const ViewReg& v) const {
  const std::int64_t p = s_[reg].as_int();
  if (v.domain < 0) {
    if (p < 0 || p >= ctx_->exec->world_size) [[unlikely]]
      peer_out_of_range(in, p, v);
    return p;
  }
  const std::vector<std::int64_t>& group = domain_of(v).groups[static_cast<std::size_t>(v.group)];
  if (p < 0 || p >= static_cast<std::int64_t>(group.size())) [[unlikely]]
    peer_out_of_range(in, p, v);
  return group[static_cast<std::size_t>(p)];
}

void RankVm::peer_out_of_range(const Instr& in, std::int64_t p, const ViewReg& v) const {
  std::string msg = "peer " + std::to_string(p) + " is out of range [0, ";
  if (v.domain < 0) {
    msg += std::to_string(ctx_->exec->world_size) + ")";
  } else {
    const CommDomain& d = domain_of(v);
    msg += std::to_string(d.group_size) + ") of this rank's group " +
           group_text(d.groups[static_cast<std::size_t>(v.group)]) + " in domain '" + d.name +
           "' (window '" + ctx_->exec->buffers[static_cast<std::size_t>(v.id)].name +
           "'; a peer is an index into the group)";
  }
  if (p < 0) {
    const char* n = v.domain < 0 ? "P" : "G";  // a group's size: pld::nranks of its view
    msg += std::string("\n  hint: a negative peer usually comes from (r - 1) % ") + n +
           ", which C++ truncates to -1 at r = 0; write (r + " + n + " - 1) % " + n;
  }
  fail(in, msg);
}

RankVm::Index RankVm::offsets(const Instr& in, std::size_t from, std::size_t count) const {
  ANYP_CHECK(count <= kMaxRank, "more than kMaxRank offsets");
  Index out;
  for (std::size_t i = 0; i < count; ++i) out[i] = s_[in.idx[from + i]].as_int();
  return out;
}

std::string RankVm::memory_text(const ViewReg& v, std::int64_t owner) const {
  return runtime::memory_text(*ctx_->exec, v.space, v.id, owner);
}

void RankVm::check_region(const Instr& in, const ViewReg& v, std::int64_t owner,
                          std::span<const std::int64_t> offs, std::span<const std::int64_t> extent,
                          const char* role) const {
  for (std::size_t d = 0; d < v.extent.size(); ++d) {
    // (offs > shape - extent, not offs + extent > shape: a huge offset must
    // not overflow past the check)
    if (offs[d] < 0 || extent[d] > v.extent[d] || offs[d] > v.extent[d] - extent[d]) [[unlikely]]
      region_out_of_bounds(in, v, owner, offs, extent, role, d);
  }
}

void RankVm::region_out_of_bounds(const Instr& in, const ViewReg& v, std::int64_t owner,
                                  std::span<const std::int64_t> offs,
                                  std::span<const std::int64_t> extent, const char* role,
                                  std::size_t dim) const {
  fail(in, std::string("region out of bounds: offsets ") + list_text(offs) + " + shape " +
               list_text(extent) + " exceeds the " + role + " " + list_text(v.extent) + " (" +
               memory_text(v, owner) + (v.sliced ? ", a slice" : "") + ") in dim " +
               std::to_string(dim));
}

void RankVm::check_flat(const Instr& in, const ViewReg& v, std::int64_t owner, std::int64_t offset,
                        std::int64_t len) const {
  const std::int64_t n = v.elements;
  if (offset < 0 || len < 0 || len > n || offset > n - len) [[unlikely]]
    flat_out_of_bounds(in, v, owner, offset, len);
}

void RankVm::flat_out_of_bounds(const Instr& in, const ViewReg& v, std::int64_t owner,
                                std::int64_t offset, std::int64_t len) const {
  fail(in, "elements [" + std::to_string(offset) + ", " + std::to_string(offset + len) +
               ") are outside the " + std::to_string(v.elements) + "-element view " +
               list_text(v.shape) + " (" + memory_text(v, owner) + ")");
}

Region RankVm::flat_region(const Instr& in, const ViewReg& v, std::int64_t owner,
                           std::span<const std::int64_t, 1> flat_shape,
                           std::span<const std::int64_t, 1> offset,
                           std::span<const std::int64_t, 1> len) const {
  if (v.space == Space::Host && owner != rank_) [[unlikely]]
    fail(in, "a host tensor is not reachable from another rank");
  return Region::flat(v.space, v.id, v.space == Space::Window ? owner : -1, v.base, v.dtype,
                      flat_shape, offset, len);
}

Region RankVm::region(const Instr& in, const ViewReg& v, std::int64_t owner,
                      std::span<const std::int64_t> offs, std::span<const std::int64_t> extent,
                      std::span<const std::int64_t> shape) const {
  if (v.space == Space::Host && owner != rank_)
    fail(in, "a host tensor is not reachable from another rank");
  std::span<const std::int64_t> at = offs;
  if (v.sliced) {  // offsets in the slice: shift them to the memory's
    ANYP_CHECK(shape.empty(), "a reshaped region of a slice");
    // Where a slice's absolute offsets are kept: a Region names its
    // offsets, so they must outlive it; an instruction has at most four
    // regions alive at once (a put_async's wait: two), and a worker runs
    // one VM's instruction at a time (not a member: a parked VM holds
    // none of it).
    thread_local std::array<std::array<std::int64_t, kMaxRank>, 4> absolute{};
    thread_local std::size_t next_absolute = 0;
    std::array<std::int64_t, kMaxRank>& abs = absolute[next_absolute++ % absolute.size()];
    for (std::size_t d = 0; d < offs.size(); ++d) abs[d] = v.origin[d] + offs[d];
    at = std::span<const std::int64_t>(abs.data(), offs.size());
  }
  return Region{v.space, v.id,    v.space == Space::Window ? owner : -1,
                v.base,  v.dtype, shape.empty() ? std::span<const std::int64_t>(v.shape) : shape,
                at,      extent};
}

Region RankVm::whole_region(const Instr& in, const ViewReg& v, std::int64_t owner) const {
  if (v.space == Space::Host && owner != rank_) [[unlikely]]
    fail(in, "a host tensor is not reachable from another rank");
  if (v.sliced) {
    return Region{v.space,
                  v.id,
                  v.space == Space::Window ? owner : -1,
                  v.base,
                  v.dtype,
                  v.shape,
                  std::span<const std::int64_t>(v.origin.data(), v.shape.size()),
                  v.extent};
  }
  return Region::whole(v.space, v.id, v.space == Space::Window ? owner : -1, v.base, v.dtype,
                       v.shape, v.elements);
}

std::string RankVm::cell_text(const ViewReg& v, const std::vector<std::int64_t>& idx) const {
  const std::string name = v.space == Space::Window
                               ? ctx_->exec->buffers[static_cast<std::size_t>(v.id)].name
                               : std::string("?");
  return "signal '" + name + "' cell " + list_text(idx) +
         (v.sliced ? " of a slice at " + list_text(std::span(v.origin.data(), v.shape.size()))
                   : "");
}

Cell RankVm::signal_cell(const Instr& in, const ViewReg& v, std::int64_t owner) const {
  if (v.space != Space::Window) [[unlikely]]
    fail(in, "a signal must be a window view, not a host tensor");
  std::int64_t flat = 0;
  const std::size_t n = in.idx.size();
  for (std::size_t d = 0; d < n; ++d) {
    const std::int64_t i = s_[in.idx[d]].as_int();
    if (i < 0 || i >= v.extent[d]) [[unlikely]]
      cell_out_of_bounds(in, v, owner, d);
    flat = flat * v.shape[d] + v.origin[d] + i;
  }
  return Cell{owner, v.id, v.base + flat * 4};
}

void RankVm::cell_out_of_bounds(const Instr& in, const ViewReg& v, std::int64_t owner,
                                std::size_t dim) const {
  const std::size_t n = in.idx.size();
  const Index idx = offsets(in, 0, n);  // reported with the whole index
  Index one;
  one.fill(1);
  region_out_of_bounds(in, v, owner, std::span(idx.data(), n), std::span(one.data(), n), "signal",
                       dim);
}

}  // namespace anyp::runtime
