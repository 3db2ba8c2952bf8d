// lower_pairwise_all_to_all.cpp — the pairwise-exchange all_to_all as VM
// code (docs/collectives.md §3.7a), on the mesh's [P, 1] signal with the
// counted per-peer credits of PeerCredits.
//
// Rank r first copies its own row r of src into row r of its dst. Step
// k = 1 .. P - 1: r puts row to = (r + k) mod P of src into row r of rank
// to's dst, credits to (the door delivers a notify after the put before
// it, so the credit says the row is in), and waits for the credit of
// from = (r - k) mod P, whose row r then holds. Every step has one peer in
// and one peer out, as MPI's pairwise alltoall (Thakur, Rabenseifner &
// Gropp 2005, §3); a rank is at most one step ahead of the ranks it waits
// for. Each peer credits r once, and r gives the credit back as soon as it
// has seen it, so the signal is 0 again when the call ends. Like the mesh,
// the data is not protected across calls: a rank that reads dst after the
// call puts a barrier before the next call's puts may land.
#include "compiler/lower_pairwise_all_to_all.hpp"

#include <cstdint>

namespace anyp::compiler::collective {

void lower_pairwise_all_to_all(CollectiveEmitter& ce, const CollectiveCall& call) {
  using ir::BinaryOp;
  const std::int32_t src = call.views[0], dst = call.views[1];
  const std::int64_t P = ce.regs_.world, row = call.numel[0] / P;
  const std::int32_t r = ce.regs_.rank;
  PeerCredits credits(ce, call.views[2]);
  const std::int32_t my_row = ce.op(BinaryOp::Mul, r, ce.c(row));
  ce.put_flat(dst, r, my_row, src, my_row, ce.c(row));
  ce.e_.for_range(ce.c(1), ce.regs_.nranks, -1, [&](std::int32_t k) {
    const std::int32_t to = ce.op(BinaryOp::Mod, ce.op(BinaryOp::Add, r, k), ce.c(P));
    const std::int32_t from =
        ce.op(BinaryOp::Mod, ce.op(BinaryOp::Sub, ce.op(BinaryOp::Add, r, ce.c(P)), k), ce.c(P));
    ce.put_flat(dst, to, my_row, src, ce.op(BinaryOp::Mul, to, ce.c(row)), ce.c(row));
    credits.credit(to);
    credits.wait_for(from, 1);
    credits.give_back(from, 1);
  });
}

}  // namespace anyp::compiler::collective
