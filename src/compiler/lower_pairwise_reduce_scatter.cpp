// lower_pairwise_reduce_scatter.cpp — the pairwise-exchange reduce_scatter
// as VM code (docs/collectives.md §3.6c), on the mesh's [P, 1] signal with
// the counted per-peer credits of PeerCredits.
//
// Step k = 1 .. P - 1: rank r credits to = (r - k) mod P (which pulls its
// row from r this step), waits for a credit of from = (r + k) mod P, pulls
// row r of from's window and reduces it into its own row r, in pieces of
// at most 16 KiB, then credits from (read-done). One peer in and one out
// per step, as MPI's pairwise reduce_scatter (Thakur, Rabenseifner & Gropp
// 2005, §4). Row r is reduced as ((x_r ⊕ x_{r+1}) ⊕ x_{r+2}) .. ⊕ x_{r-1}.
//
// Rank r writes only its own row r, which no peer reads, and every peer
// reads only its own row of r's window, which r never writes: the data of
// a call needs no ready handshake beyond "the peer is in this call", which
// any credit of it says (a peer's first credit to r may be its read-done,
// when it pulls from r before r pulls from it). Each peer credits r twice
// (ready and read-done); r leaves once both of every peer are in and gives
// them back, so the signal is 0 again and the data may be overwritten.
#include "compiler/lower_pairwise_reduce_scatter.hpp"

#include <cstdint>

namespace anyp::compiler::collective {

void lower_pairwise_reduce_scatter(CollectiveEmitter& ce, const CollectiveCall& call) {
  using ir::BinaryOp;
  const std::int32_t data = call.views[0];
  const std::int64_t P = ce.regs_.world, row = call.numel[0] / P;
  const std::int32_t r = ce.regs_.rank;
  PeerCredits credits(ce, call.views[1]);
  const std::int32_t my_row = ce.op(BinaryOp::Mul, r, ce.c(row));
  const std::int64_t pieces = chunks_for(row, call.dtypes[0]);
  auto peer_at = [&](std::int32_t k, bool ahead) {  // (r + k) or (r - k) mod P
    const std::int32_t step = ahead ? ce.op(BinaryOp::Add, r, k)
                                    : ce.op(BinaryOp::Sub, ce.op(BinaryOp::Add, r, ce.c(P)), k);
    return ce.op(BinaryOp::Mod, step, ce.c(P));
  };
  ce.e_.for_range(ce.c(1), ce.regs_.nranks, -1, [&](std::int32_t k) {
    const std::int32_t from = peer_at(k, true);
    credits.credit(peer_at(k, false));
    credits.wait_for(from, 1);
    ce.for_pieces(my_row, ce.c(row), pieces, [&](std::int32_t off, std::int32_t len) {
      const std::int32_t acc = ce.load_flat(data, r, off, len);
      ce.reduce_into(acc, ce.load_flat(data, from, off, len), call.reduce);
      ce.store_flat(data, r, off, acc);
    });
    credits.credit(from);  // read-done
  });
  ce.e_.for_range(ce.c(1), ce.regs_.nranks, -1, [&](std::int32_t k) {
    const std::int32_t peer = peer_at(k, true);
    credits.wait_for(peer, 2);
    credits.give_back(peer, 2);
  });
}

}  // namespace anyp::compiler::collective
