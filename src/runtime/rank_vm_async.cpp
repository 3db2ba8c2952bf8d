// rank_vm_async.cpp — the rank VM's asynchronous puts (pld::tensor::put_async):
// a put is recorded as pending with its event, its source is guarded
// against writes while it is in flight, it is carried out at its
// wait_async, and a kernel that ends with one in flight is a run error.
#include "common/internal_check.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::runtime {

void RankVm::check_no_puts_in_flight() {
  if (!pending_.empty()) {
    const PendingPut p = pending_.front();
    pending_.clear();
    fail(*p.issued, "the kernel ended with this put in flight (event " + std::to_string(p.event) +
                        "); wait for it with pld::system::wait_async before the kernel returns");
  }
}

void RankVm::put_async(const Instr& in) {
  PendingPut p;
  p.dst = v_[in.a];
  p.src = v_[in.c];
  p.peer = peer_of(in, in.b, p.dst);
  p.issued = &in;
  const std::size_t nd = p.dst.shape.size(), ns = p.src.shape.size();
  if (!in.shape.empty()) {
    p.dst_offsets = offsets(in, 0, nd);
    p.src_offsets = offsets(in, nd, ns);
  }
  const auto [dst, src] = put_regions(p, true);
  src.for_each_row([&](std::int64_t at, std::int64_t n) { p.src_bytes.emplace_back(at, at + n); });
  if (p.peer == rank_) guard_sources(in, dst);
  p.event = next_event_++;
  s_[in.dst] = int_scalar(p.event);
  ctx_->fabric->async_put(agent_, p.event, true);
  pending_.push_back(std::move(p));
}

void RankVm::wait_async(const Instr& in) {
  const std::int64_t event = s_[in.a].as_int();
  const auto it = std::find_if(pending_.begin(), pending_.end(),
                               [&](const PendingPut& p) { return p.event == event; });
  if (it == pending_.end()) {
    fail(in, "event " + std::to_string(event) +
                 " is not a put_async in flight: it was waited for already, or it is not the "
                 "event of a pld::tensor::put_async of this kernel");
  }
  const PendingPut p = *it;
  pending_.erase(it);
  // The transfer itself, at the latest moment the program allows, in the
  // put's name.
  const auto [dst, src] = put_regions(p, false);
  if (p.peer == rank_) guard_sources(*p.issued, dst);  // the source of another put in flight
  ctx_->fabric->async_put(agent_, p.event, false);
  ctx_->fabric->copy(agent_, site(*p.issued), dst, src, false);
}

std::pair<Region, Region> RankVm::put_regions(const PendingPut& p, bool check) const {
  const Instr& put = *p.issued;
  const std::size_t nd = p.dst.shape.size(), ns = p.src.shape.size();
  const std::span<const std::int64_t> dat(p.dst_offsets.data(), nd), sat(p.src_offsets.data(), ns);
  const std::span<const std::int64_t> dext = put.shape.empty() ? p.dst.extent : put.shape;
  const std::span<const std::int64_t> sext = put.shape.empty() ? p.src.extent : put.shape;
  if (check) {
    ANYP_CHECK(element_count(dext) == element_count(sext), "a put_async of unequal extents");
    check_region(put, p.dst, p.peer, dat, dext, "destination");
    check_region(put, p.src, rank_, sat, sext, "source");
  }
  return {region(put, p.dst, p.peer, dat, dext), region(put, p.src, rank_, sat, sext)};
}

void RankVm::check_sources(const Instr& in, const Region& w) const {
  for (const PendingPut& p : pending_) {
    const bool same =
        p.src.space == w.space && p.src.id == w.id && (w.space == Space::Host || w.owner == rank_);
    if (!same || p.src_bytes.empty() || w.end <= p.src_bytes.front().first ||
        p.src_bytes.back().second <= w.first)
      continue;
    bool overlaps = false;
    w.for_each_row([&](std::int64_t at, std::int64_t n) {
      for (const auto& [b, e] : p.src_bytes) overlaps = overlaps || (at < e && b < at + n);
    });
    if (overlaps) {
      const Site& s = code_->sites[p.issued->site];
      fail(in, "it writes " + memory_text(p.src, rank_) +
                   ", the source of the pld.tensor.put_async in function '" + s.function +
                   "' (event " + std::to_string(p.event) +
                   ") still in flight; call pld::system::wait_async on its event before writing "
                   "the source");
    }
  }
}

}  // namespace anyp::runtime
