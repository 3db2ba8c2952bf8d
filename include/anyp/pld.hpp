// pld.hpp — the distributed half of the user API (PyPTO's `pld`), traced.
//
// Host level: alloc_window_buffer (symmetric, one per host call, zeroed at
// each invocation), window (a typed view), world_size (P).
// Incore level: the comm context (rank, nranks), integer signals (notify /
// wait), one-sided RMA (put / get, remote_load / remote_store) and the
// builtin collectives (self-clearing credit protocol, docs/design.md §11).
//
//   // producer                          // consumer
//   pld::tensor::put(dst, right, src);   pld::system::wait(sig, {0, 0}, 1,
//   pld::system::notify(sig, right,          pld::WaitCmp::Ge);
//       {0, 0}, 1, pld::NotifyOp::AtomicAdd);   y = pl::store(pl::load(dst, ...
#pragma once

#include <string>
#include <vector>

#include "anyp/collective_algorithms.hpp"
#include "anyp/pl.hpp"

namespace pld {

enum class NotifyOp { AtomicAdd, Set };
enum class WaitCmp { Eq, Ne, Gt, Ge, Lt, Le };
enum class AtomicType { None, Add };
enum class ReduceOp { Sum, Max, Min, Prod };
// Each builtin collective's algorithm: the rows of its list in
// anyp/collective_algorithms.hpp, then Auto (the compiler picks, per call,
// the algorithm of least modeled time on the platform's cost model;
// docs/collectives.md §3 shows the lists).
enum class AllreduceMode { ANYP_ALLREDUCE_ALGORITHMS(ANYP_MODE_ENUMERATOR, _) Auto };
enum class BroadcastMode { ANYP_BROADCAST_ALGORITHMS(ANYP_MODE_ENUMERATOR, _) Auto };
enum class AllgatherMode { ANYP_ALLGATHER_ALGORITHMS(ANYP_MODE_ENUMERATOR, _) Auto };
enum class ReduceScatterMode { ANYP_REDUCE_SCATTER_ALGORITHMS(ANYP_MODE_ENUMERATOR, _) Auto };
enum class AllToAllMode { ANYP_ALL_TO_ALL_ALGORITHMS(ANYP_MODE_ENUMERATOR, _) Auto };
// What all_to_all_v's send_counts count (docs/collectives.md §3.8):
// Elements of each destination's block (anyp's; a count outside [0, block]
// is a run error), or Rows of it (PyPTO's: the source is [NR * MAX_RECV, C],
// a count is clamped to [0, MAX_RECV], and recv_counts receives the
// clamped row count).
enum class Counts { Elements, Rows };

// A window view parameter: memory that peers can reach.
pl::TypeSpec DistributedTensor(pl::Shape shape, pl::DType dtype);

// ---- host level ----------------------------------------------------------------

// One symmetric buffer: the same offset in every rank's window.
pl::Value alloc_window_buffer(std::string name, pl::Shape shape, pl::DType dtype,
                              pl::Here where = pl::Here::current());
pl::Value alloc_window_buffer(std::string name, const pl::Dim& bytes,
                              pl::Here where = pl::Here::current());
// Unnamed form, as in the seed (named "buf<N>" in IR and diagnostics).
pl::Value alloc_window_buffer(pl::Shape shape, pl::DType dtype,
                              pl::Here where = pl::Here::current());
// A typed view of a buffer; must fit inside it.
pl::Value window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype,
                 pl::Here where = pl::Here::current());
// A view starting `offset` elements of `dtype` (offset * dtype_bytes bytes)
// into the buffer: a sub-window. The offset is evaluated at compile time and
// the view must fit: offset * bytes + view bytes <= buffer bytes.
pl::Value window(const pl::Value& buffer, pl::Shape shape, pl::DType dtype,
                 const pl::ScalarArg& offset, pl::Here where = pl::Here::current());
// P, the number of ranks. Usable in shapes at every level; as a value, host only.
pl::Dim world_size(pl::Here where = pl::Here::current());

// ---- communication domains (host) -------------------------------------------------
//
// A domain is a set of disjoint groups of ranks: a sub-communicator. A
// window buffer allocated in a domain is reached through its group: on a
// rank of group {4, 5, 6}, pld::rank of its view is 0, 1 or 2, nranks is 3,
// peer k of every put, get, remote load/store, notify and wait is the
// group's k-th rank, and every builtin collective on it runs over the group.
// Every group of one domain has the same size (kernels are compiled once per
// domain). A view of it may only be dispatched to a rank of the domain.
//
//   auto tp = pld::comm_domain("tp");                      // outside loops
//   pl::range(DP, [&](pl::Scalar d) { pld::comm_group(tp, d * TP, TP); });
//   auto x = pld::alloc_window_buffer("x", {TP, S}, pl::FP32, tp);
class CommDomain : public pl::Handle {
 public:
  using pl::Handle::Handle;
};
CommDomain comm_domain(std::string name, pl::Here where = pl::Here::current());
// Adds the group of `count` ranks first, first + stride, first + 2 * stride,
// ... to `domain`, numbered 0 .. count - 1 in that order. May be in loops.
void comm_group(const CommDomain& domain, const pl::ScalarArg& first, const pl::ScalarArg& count,
                const pl::ScalarArg& stride = 1, pl::Here where = pl::Here::current());
// Adds the group of the listed ranks, numbered in list order.
void comm_group(const CommDomain& domain, const std::vector<pl::ScalarArg>& ranks,
                pl::Here where = pl::Here::current());
// A buffer of `domain`: symmetric over the ranks of each group.
pl::Value alloc_window_buffer(std::string name, pl::Shape shape, pl::DType dtype,
                              const CommDomain& domain, pl::Here where = pl::Here::current());

// ---- comm context (incore) -------------------------------------------------------

class CommCtx : public pl::Handle {
 public:
  using pl::Handle::Handle;
};
CommCtx get_comm_ctx(const pl::Value& window_view, pl::Here where = pl::Here::current());
// This rank's index and the rank count, INT32: in the world, or in this
// rank's group when the view is of a comm_domain buffer.
pl::Scalar rank(const CommCtx& ctx, pl::Here where = pl::Here::current());
pl::Scalar nranks(const CommCtx& ctx, pl::Here where = pl::Here::current());

// The completion event of a pld::tensor::put_async (PyPTO's async SDMA
// event): pld::system::wait_async waits for it.
class AsyncEvent : public pl::Handle {
 public:
  using pl::Handle::Handle;
};

namespace system {
// Update cell `offsets` of `peer`'s copy of `signal`: AtomicAdd adds, Set stores.
void notify(const pl::Value& signal, const pl::ScalarArg& peer, pl::Index offsets,
            const pl::ScalarArg& value, NotifyOp op, pl::Here where = pl::Here::current());
// Park until this rank's own cell `offsets` compares true against `expected`.
void wait(const pl::Value& signal, pl::Index offsets, const pl::ScalarArg& expected, WaitCmp cmp,
          pl::Here where = pl::Here::current());
// Blocks until the put_async of `event` has completed: its data is in the
// peer's window and its source may be written again. Notify the peer after
// this, not before.
void wait_async(const AsyncEvent& event, pl::Here where = pl::Here::current());
}  // namespace system

// Multi-block host collectives (PyPTO's core_num=): at the host level,
// pld::tensor::allreduce(data, signal, pld::core_num(n)) and all_to_all_v
// run on n blocks of every rank (pl::blocks), each with its own signal
// lane: the signal is [NR, S] INT32 with S >= n, and block b's credits use
// column b. A Mesh allreduce cuts the data into max(its 16 KiB chunks,
// min(n, elements)) near-equal chunks dealt out block-cyclically (chunk j
// to block j mod n); all_to_all_v deals out the destination ranks the same
// way. Every lane is self-clearing, like the
// one-block forms.
struct CoreNum {
  pl::ScalarArg count;
};
inline CoreNum core_num(const pl::ScalarArg& count) { return CoreNum{count}; }

namespace tensor {
// Push local `src` (window or tensor) into `peer`'s window `dst`, whole.
void put(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         AtomicType atomic = AtomicType::None, pl::Here where = pl::Here::current());
// Region form: `shape` elements from src at `src_offsets` to dst at `dst_offsets`.
void put(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape,
         AtomicType atomic = AtomicType::None, pl::Here where = pl::Here::current());
// A put that runs in the background (PyPTO's put_async): it returns at
// once, and the data lands between now and pld::system::wait_async(event),
// which every put_async needs before its kernel returns. Until then the
// source must not be written (a run error names the write). Work between
// the two overlaps the transfer.
AsyncEvent put_async(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
                     pl::Here where = pl::Here::current());
AsyncEvent put_async(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
                     pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape,
                     pl::Here where = pl::Here::current());
// Pull `peer`'s window `src` into local `dst` (window or tensor), whole.
void get(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         AtomicType atomic = AtomicType::None, pl::Here where = pl::Here::current());
void get(const pl::Value& dst, const pl::ScalarArg& peer, const pl::Value& src,
         pl::Index dst_offsets, pl::Index src_offsets, pl::Shape shape,
         AtomicType atomic = AtomicType::None, pl::Here where = pl::Here::current());

// PyPTO's tensor-level remote_store: writes (or, with AtomicType::Add,
// accumulates) the whole local tensor `src` into `peer`'s window `target`
// at `offsets`: put(target, peer, src, offsets, {0, ...}, src's shape,
// atomic), recorded as that put.
void remote_store(const pl::Value& src, const pl::Value& target, const pl::ScalarArg& peer,
                  pl::Index offsets, AtomicType atomic = AtomicType::None,
                  pl::Here where = pl::Here::current());

// Full barrier over all ranks on an [NR, 1] INT32 signal; self-clearing, so
// one signal serves back-to-back calls. Returns the signal (re-bind it).
// In a kernel it orders the ranks inside one dispatch; in the host function,
// between dispatch loops, it is one dispatch on every rank: every rank's
// earlier dispatches are done before any rank's later ones start.
pl::Value barrier(const pl::Value& signal, pl::Here where = pl::Here::current());
// Host level only, between dispatch loops: a barrier whose [NR, 1] signal the
// compiler synthesizes (refused inside a loop, like allreduce(data)).
void barrier(pl::Here where = pl::Here::current());

// The builtin collectives (docs/collectives.md; ladder steps 11-16). In a kernel they are
// called by every rank, in the same order; in the host function (between
// dispatch loops, on window views made outside the loop) they run once on
// every rank. all use the self-clearing credit protocol, so one
// signal serves back-to-back calls. Each returns its in-place window.
//
// In place on window `data` (any shape, any dtype: integers reduce exactly,
// wrapping on overflow like the tile math): every rank ends with OP over all
// ranks. Mesh: signal [NR, 1], data processed in chunks of
// at most 16 KiB with a read-done barrier before each overwrite. Ring:
// signal [2 * (NR - 1), NR], 2 (P - 1) rounds over P near-equal segments.
pl::Value allreduce(const pl::Value& data, const pl::Value& signal, ReduceOp op = ReduceOp::Sum,
                    AllreduceMode mode = AllreduceMode::Mesh, pl::Here where = pl::Here::current());
// Host level only, between dispatch loops: a mesh allreduce whose [NR, 1]
// signal the compiler synthesizes (refused inside a loop, where a
// synthesized signal could not be reused safely).
pl::Value allreduce(const pl::Value& data, ReduceOp op = ReduceOp::Sum,
                    pl::Here where = pl::Here::current());
// One barrier per call (docs/design.md §11) for broadcast, allgather and
// all_to_all: the signal is reusable back to back, but the data is not
// protected across calls. Before the root restages `data`, or before a rank
// reads a target that the next call's pushes may overwrite, put a barrier.
//
// Every rank's window `data` becomes the root's; root is a compile-time
// constant in [0, P). Signal [NR, 1]. Mesh: every rank pulls the root's
// data after one barrier. Tree: a binomial tree of whole-vector pulls from
// the root, ceil(log2 P) levels. ScatterAllgather (van de Geijn): a
// binomial scatter of P blocks, then a ring allgather of them. Tree and
// ScatterAllgather end with read-done handshakes: the data is protected
// across back-to-back calls. Auto: the one of least modeled time.
pl::Value broadcast(const pl::Value& data, const pl::Value& signal, const pl::ScalarArg& root,
                    BroadcastMode mode = BroadcastMode::Mesh, pl::Here where = pl::Here::current());
// Row r of every rank's window `dst` ([NR, ...], NR rows of src's size)
// becomes rank r's plain tensor `src`. Signal [NR, 1]. Mesh: every rank
// puts its row to every rank, then one barrier. Bruck: ceil(log2 P) rounds,
// round k pulling min(2^k, P - 2^k) rows from rank r + 2^k, with read-done
// handshakes at the end (dst is protected across calls). RecursiveDoubling:
// floor(log2 P) pairwise exchanges of doubling blocks of rows, the ranks
// beyond a power of two folded in first and served last, protected across
// calls. Auto: the one of least modeled time.
pl::Value allgather(const pl::Value& src, const pl::Value& dst, const pl::Value& signal,
                    AllgatherMode mode = AllgatherMode::Mesh, pl::Here where = pl::Here::current());
// Window `data` is [NR, ...]: rank r's row r becomes OP over every rank's row r.
// Signal [NR, 1]. Mesh: row r of ranks 0 .. P - 1 reduced in rank order, the
// other rows untouched. RecursiveHalving: the reduce-scatter half of
// Rabenseifner's allreduce over the rows, floor(log2 P) pairwise steps, the
// ranks beyond a power of two folded in first (the other rows keep partial
// reductions), protected across calls. Pairwise: P - 1 steps, step k
// pulling row r from rank r + k (mod P) and reducing it into row r, so row
// r is reduced in the order r, r + 1, .., r - 1; the other rows untouched,
// protected across calls. Auto: the one of least modeled time.
pl::Value reduce_scatter(const pl::Value& data, const pl::Value& signal,
                         ReduceOp op = ReduceOp::Sum,
                         ReduceScatterMode mode = ReduceScatterMode::Mesh,
                         pl::Here where = pl::Here::current());
// Row d of rank r's plain tensor `src` ([NR, C]) lands in row r of rank d's
// window `dst` ([NR, C]). Signal [NR, 1]. Mesh: every rank puts its P rows,
// then one barrier. Pairwise: P - 1 steps, step k putting row r + k to rank
// r + k and waiting for the row of rank r - k (mod P), one peer in and one
// out at a time. Bruck: ceil(log2 P) rounds, round k packing the rows
// whose Bruck index has bit k set into one put to rank r + 2^k (through a
// scratch window of 3 floor(P / 2) rows the compiler adds); dst protected
// across calls. Auto: the one of least modeled time.
pl::Value all_to_all(const pl::Value& src, const pl::Value& dst, const pl::Value& signal,
                     AllToAllMode mode = AllToAllMode::Mesh, pl::Here where = pl::Here::current());
// As all_to_all, but only the first send_counts[d] elements of row d go to
// rank d; rank d finds the count in its recv_counts window cell {r, 0} (a Set
// notify). send_counts is an INT32 [NR, 1] tensor (at the host level: a
// window view, each rank's counts in its own copy, written by an earlier
// dispatch), recv_counts an INT32 [NR, 1] window. Not allowed inside a loop
// (its counts have no read-done handshake).
pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal,
                       Counts counts = Counts::Elements, pl::Here where = pl::Here::current());

pl::Value allreduce(const pl::Value& data, const pl::Value& signal, CoreNum cores,
                    ReduceOp op = ReduceOp::Sum, pl::Here where = pl::Here::current());
pl::Value all_to_all_v(const pl::Value& src, const pl::Value& send_counts, const pl::Value& dst,
                       const pl::Value& recv_counts, const pl::Value& signal, CoreNum cores,
                       Counts counts = Counts::Elements, pl::Here where = pl::Here::current());
}  // namespace tensor

namespace tile {
// Read a tile from `peer`'s window (peer == rank is a local read).
pl::Tile remote_load(const pl::Value& window_view, const pl::ScalarArg& peer, pl::Index offsets,
                     pl::Shape shape, pl::Here where = pl::Here::current());
// A partial tile (as pl::load's): only the top-left `valid_shape` region is
// read, the rest of the tile is 0; a store of it writes only that region.
pl::Tile remote_load(const pl::Value& window_view, const pl::ScalarArg& peer, pl::Index offsets,
                     pl::Shape shape, pl::Index valid_shape, pl::Here where = pl::Here::current());
// Write (or, with AtomicType::Add, accumulate) a tile into `peer`'s window.
void remote_store(const pl::Tile& tile, const pl::Value& window_view, const pl::ScalarArg& peer,
                  pl::Index offsets, AtomicType atomic = AtomicType::None,
                  pl::Here where = pl::Here::current());
}  // namespace tile

}  // namespace pld
