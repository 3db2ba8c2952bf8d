// rank_vm_dispatch.cpp — the rank VM's dispatch list: entering the next
// dispatch (after waiting, on the order cells, for the dispatches of other
// ranks it must follow: compiler/order_dispatches.hpp), and ending it
// (releasing the dispatches that wait for it).
#include "common/internal_check.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/rank_vm.hpp"

namespace anyp::runtime {

RankVm::DispatchEntry RankVm::enter_dispatch() {
  if (dispatch_ >= dispatches_->size()) return DispatchEntry::Done;
  const Dispatch& d = (*dispatches_)[dispatch_];
  // PyPTO's task dependencies (compiler/order_dispatches.hpp): wait for the
  // other ranks' dispatches that last wrote what this one reads.
  const std::span<const DispatchWait> waits = d.waits();
  while (order_waits_done_ < waits.size()) {
    const DispatchWait w = waits[order_waits_done_];
    const std::size_t me = dispatch_;
    auto describe = [this, w, me] {
      const Executable& exec = *ctx_->exec;
      const auto& source = exec.ranks[static_cast<std::size_t>(w.source_rank)]
                                     [static_cast<std::size_t>(w.source_dispatch)];
      const auto& mine = exec.ranks[static_cast<std::size_t>(rank_)][me];
      const std::string head = "dispatch " + std::to_string(me) + " (" +
                               exec.codes[static_cast<std::size_t>(mine.code)].function + ") ";
      if (w.buffer >= 0) {
        return head + "waits for the end of the earlier dispatch group on window buffer '" +
               exec.buffers[static_cast<std::size_t>(w.buffer)].name + "' (" +
               std::to_string(w.count) + " dispatches on other ranks; the last: dispatch " +
               std::to_string(w.source_dispatch) + " of rank " + std::to_string(w.source_rank) +
               ", " + exec.codes[static_cast<std::size_t>(source.code)].function +
               "): host dispatch groups that pass one window run in host order, so an "
               "earlier group must not wait for a notify from a later one";
      }
      const LoweredCode& source_code = exec.codes[static_cast<std::size_t>(source.code)];
      const LoweredCode& my_code = exec.codes[static_cast<std::size_t>(mine.code)];
      if (!source_code.host_workers.empty() || !my_code.host_workers.empty()) {
        return head + "waits for dispatch " + std::to_string(w.source_dispatch) + " of rank " +
               std::to_string(w.source_rank) + " (" + source_code.function +
               "): a host worker and the dispatches whose host tensors overlap its own ('" +
               exec.host_args[static_cast<std::size_t>(w.host_param)].name + "') run in host order";
      }
      return head + "waits for dispatch " + std::to_string(w.source_dispatch) + " of rank " +
             std::to_string(w.source_rank) + " (" +
             exec.codes[static_cast<std::size_t>(source.code)].function +
             "), the last writer of host tensor '" +
             exec.host_args[static_cast<std::size_t>(w.host_param)].name + "' at byte " +
             std::to_string(w.byte_offset) +
             ", which it takes as In or InOut (the dispatch order cells: PyPTO's task "
             "dependencies; give each rank its own view of the tensor, or pass it Out)";
    };
    if (!ctx_->fabric->wait(agent_, SiteRef{}, order_cell(rank_, w.cell), ir::WaitKind::Ge, w.count,
                            describe))
      return DispatchEntry::Parked;
    ++order_waits_done_;
  }
  order_waits_done_ = 0;
  code_index_ = d.code;
  code_ = &ctx_->exec->codes[static_cast<std::size_t>(d.code)];
  s_.assign(static_cast<std::size_t>(code_->num_scalars), ScalarValue{});
  t_.resize(static_cast<std::size_t>(code_->num_tiles));
  v_.assign(static_cast<std::size_t>(code_->num_views), ViewReg{});
  for (const Instr& c : code_->constants)
    s_[c.dst] = c.is_float ? float_scalar(c.fimm) : int_scalar(c.imm);
  for (std::size_t i = 0; i < d.args.size(); ++i) {
    const ArgBinding& a = d.args[i];
    const std::int32_t reg = code_->param_regs[i];
    switch (a.kind) {
      case ArgBinding::Kind::Int:
        s_[reg] = int_scalar(a.int_value);
        break;
      case ArgBinding::Kind::Float:
        s_[reg] = float_scalar(a.float_value);
        break;
      case ArgBinding::Kind::HostTensor:
        v_[reg] = ViewReg{Space::Host, a.host_param, a.byte_offset,
                          a.dtype,     a.shape,      element_count(a.shape)};
        v_[reg].extent = a.shape;
        break;
      case ArgBinding::Kind::Window: {
        ViewReg& v = v_[reg];
        v = ViewReg{Space::Window, a.buffer, a.byte_offset,
                    a.dtype,       a.shape,  element_count(a.shape)};
        v.extent = a.shape;
        v.domain = ctx_->exec->buffers[static_cast<std::size_t>(a.buffer)].domain;
        if (v.domain >= 0) {
          v.group = ctx_->exec->domains[static_cast<std::size_t>(v.domain)]
                        .group_of[static_cast<std::size_t>(rank_)];
          ANYP_CHECK(v.group >= 0, "a view of a comm_domain buffer dispatched outside its domain");
        }
        break;
      }
    }
  }
  ctx_->fabric->begin_dispatch(rank_, dispatch_);
  pc_ = 0;
  in_dispatch_ = true;
  return DispatchEntry::Entered;
}

void RankVm::release_dispatch(const Dispatch& d) {
  for (const DispatchRelease& r : d.releases())
    ctx_->fabric->notify(agent_, SiteRef{}, order_cell(r.peer, r.cell), ir::NotifyKind::AtomicAdd,
                         1);
  for (std::int64_t e : d.edge_releases()) {
    const OrderEdge& edge = ctx_->exec->order_edges[static_cast<std::size_t>(e)];
    for (std::int64_t peer : edge.waiters)
      if (peer != rank_)
        ctx_->fabric->notify(agent_, SiteRef{}, order_cell(peer, edge.cell),
                             ir::NotifyKind::AtomicAdd, 1);
  }
}

void RankVm::end_dispatch() {
  check_no_puts_in_flight();
  in_dispatch_ = false;
  if (block_ == 0) release_dispatch((*dispatches_)[dispatch_]);
  ++dispatch_;
}

}  // namespace anyp::runtime
