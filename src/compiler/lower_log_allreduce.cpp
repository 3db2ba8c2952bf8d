// lower_log_allreduce.cpp — the logarithmic allreduces as VM code
// (docs/collectives.md §3.3a-c): recursive doubling and Rabenseifner's
// reduce-scatter by recursive halving + allgather by recursive doubling,
// both over the largest power of two p' <= P, the other P - p' ranks folded
// in first and served last (Thakur, Rabenseifner & Gropp 2005, §4); and a
// binomial-tree reduce to rank 0 followed by a binomial-tree broadcast,
// over any P as it is. Rabenseifner's two halves serve on their own: the
// recursive-halving reduce_scatter and the recursive-doubling allgather,
// folded alike (an absorber first pulls its extra's row, the extra copies
// every row back at the end).
//
// Both take the mesh's [P, 1] signal: every credit a rank receives from
// peer s goes into its cell {s}, and a peer's credits to one rank in one
// call are counted up from 1 (waits are Ge), so no cell needs a round index.
// Each call gives back, on its own cells, what it received: the signal is
// 0 again when the call ends and serves the next one.
//
// Folding: of the first 2·rem ranks (rem = P - p'), each even rank r hands
// its data to r + 1 (credit 1 on r + 1), which reduces data[r] ⊕ data[r + 1]
// into its own before the power-of-two part; at the end r + 1 credits r
// (final), r copies the result and credits r + 1 back (read-done) before
// r + 1 may leave. The power-of-two part runs over virtual ranks
// v = r / 2 (odd r < 2·rem) or r - rem (r >= 2·rem); virtual rank v is real
// rank v + min(v + 1, rem).
//
// The reduction order: ⊕ always takes the lower virtual rank's operand
// first (the lower real rank's, in the fold), so every replica is bitwise
// identical and equals the documented tree (collectives.md).
#include "compiler/lower_log_allreduce.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace anyp::compiler::collective {

namespace {

using ir::BinaryOp;

struct Folding {
  std::int64_t pow2 = 1;    // p', the largest power of two <= P
  std::int64_t rem = 0;     // P - p': ranks folded into a neighbour
  std::int64_t levels = 0;  // log2 p'
};

Folding folding_of(std::int64_t world) {
  Folding f;
  f.pow2 = static_cast<std::int64_t>(std::bit_floor(static_cast<std::uint64_t>(world)));
  f.rem = world - f.pow2;
  f.levels = std::countr_zero(static_cast<std::uint64_t>(f.pow2));
  return f;
}

// The registers of one rank's place in the folding.
struct Place {
  std::int32_t extra = -1;     // 1: an even rank below 2·rem (folded out), else 0
  std::int32_t virt = -1;      // its virtual rank (meaningless when extra)
  std::int32_t partner = -1;   // the fold partner: r + 1 for an extra, r - 1 for an absorber
  std::int32_t absorber = -1;  // 1: an odd rank below 2·rem, else 0
};

class LogAllreduce {
 public:
  // `data` and `signal` index the call's views: the window the algorithm
  // works on (an allgather's dst) and the [P, 1] signal.
  LogAllreduce(CollectiveEmitter& ce, const CollectiveCall& call, std::size_t data = 0,
               std::size_t signal = 1)
      : ce_(ce),
        call_(call),
        f_(folding_of(ce.regs_.world)),
        credits_(ce, call.views[signal]),
        dtype_(call.dtypes[data]) {
    data_ = call.views[data];
    signal_ = call.views[signal];
    n_ = call.numel[data];
    r_ = ce.regs_.rank;
    place_ = place();
  }

  // How the folded ranks join: an absorber reduces its extra's data into
  // its own and the extra copies all of the result back (Reduce), or only
  // its own row of P (ReduceToRows); or the absorber copies the extra's row
  // and the extra copies every row back (Gather).
  enum class Fold { Reduce, ReduceToRows, Gather };

  // The fold, `body` on the virtual ranks, the fold's return.
  void run(const std::function<void()>& power_of_two_part, Fold fold = Fold::Reduce) {
    std::size_t skip_all = 0, skip_fold_in = 0, skip_fold_out = 0;
    if (f_.rem > 0) {
      // An extra rank hands its data over and waits for the result.
      jump_unless(place_.extra, skip_fold_in);
      credit(place_.partner);
      wait_for(place_.partner, 1);
      if (fold == Fold::ReduceToRows) {
        copy_row_from(place_.partner, r_);
      } else {
        copy_all_from(place_.partner);
      }
      credit(place_.partner);  // read-done: the partner may leave
      std::size_t to_end = 0;
      jump_always(to_end);
      skip_all = to_end;
      ce_.e_.patch(skip_fold_in, ce_.e_.here());
      // An absorber reduces the extra's data into its own first.
      std::size_t not_absorber = 0;
      jump_unless(place_.absorber, not_absorber);
      wait_for(place_.partner, 1);
      if (fold == Fold::Gather) {
        copy_row_from(place_.partner, place_.partner);
      } else {
        reduce_all_from_lower(place_.partner);
      }
      ce_.e_.patch(not_absorber, ce_.e_.here());
    }
    power_of_two_part();
    if (f_.rem > 0) {
      jump_unless(place_.absorber, skip_fold_out);
      credit(place_.partner);       // final: the extra may copy
      wait_for(place_.partner, 2);  // its read-done
      give_back(place_.partner, 2);
      ce_.e_.patch(skip_fold_out, ce_.e_.here());
      std::size_t done = 0;
      jump_always(done);
      ce_.e_.patch(skip_all, ce_.e_.here());
      give_back(place_.partner, 1);  // the extra: the absorber's final credit
      ce_.e_.patch(done, ce_.e_.here());
    }
  }

  // Recursive doubling over p' ranks: level s = 0 .. L - 1 pairs v with
  // v ^ 2^s. Per level: credit the partner (my data is at this level),
  // wait for its credit, then per chunk k: pull its chunk, reduce (lower
  // virtual rank first), credit it (read-done k), wait for its read-done k
  // (credit 2 + k), overwrite my chunk. The partner's cell gets 1 + K.
  void recursive_doubling() {
    const std::int64_t chunks = chunks_for(n_, dtype_);
    for (std::int64_t s = 0; s < f_.levels; ++s) {
      const std::int64_t mask = std::int64_t{1} << s;
      const std::int32_t pv = flip(place_.virt, mask);
      const std::int32_t peer = real_of(pv);
      const std::int32_t lower = real_of(ce_.op(BinaryOp::Min, place_.virt, pv));
      const std::int32_t upper = real_of(ce_.op(BinaryOp::Max, place_.virt, pv));
      credit(peer);
      wait_for(peer, 1);
      const std::int32_t acc = ce_.e_.tile_reg(), part = ce_.e_.tile_reg();
      ce_.repeat(chunks, [&](std::int32_t k) {
        const auto [off, len] = ce_.part(ce_.c(0), ce_.c(n_), k, chunks);
        ce_.load_flat_into(acc, data_, lower, off, len);
        ce_.load_flat_into(part, data_, upper, off, len);
        credit(peer);  // read-done k
        ce_.reduce_into(acc, part, call_.reduce);
        ce_.wait(signal_, cell(peer), ce_.op(BinaryOp::Add, k, ce_.c(2)));
        ce_.store_flat(data_, r_, off, acc);
      });
      give_back(peer, 1 + chunks);
    }
  }

  // Rabenseifner over p' ranks, the data in p' near-equal blocks
  // [b·n/p', (b + 1)·n/p'). Reduce-scatter, level s = 0 .. L - 1, mask
  // m = p' / 2^(s + 1): v keeps blocks [(v / m)·m, + m) and pulls them
  // from partner v ^ m, reducing into its own (the partner reads the other
  // half: no overwrite is read). Allgather, levels L - 1 .. 0: v pulls the
  // partner's blocks [(pv / m)·m, + m) into its own copy. Every level starts
  // with a credit to the partner (my blocks are at this level) and a wait
  // for its credit; after the allgather's pull a read-done credit. The
  // partner's cell gets 3, and each rank waits for its partners' third
  // (read-done) before it leaves: the next call may overwrite anything.
  void rabenseifner() {
    const std::vector<std::int32_t> peers = halve(&LogAllreduce::for_blocks_of, false);
    for (std::int64_t s = f_.levels - 1; s >= 0; --s) {
      const std::int64_t mask = f_.pow2 >> (s + 1);
      const std::int32_t peer = peers[static_cast<std::size_t>(s)];
      const std::int32_t pv = flip(place_.virt, mask);
      credit(peer);
      wait_for(peer, 2);
      for_blocks_of(pv, mask, [&](std::int32_t off, std::int32_t len) {
        ce_.store_flat(data_, r_, off, ce_.load_flat(data_, peer, off, len));
      });
      credit(peer);  // read-done
    }
    for (std::int64_t s = 0; s < f_.levels; ++s) {
      wait_for(peers[static_cast<std::size_t>(s)], 3);
      give_back(peers[static_cast<std::size_t>(s)], 3);
    }
  }

  // Reduce-scatter by recursive halving over p' virtual ranks, on the P
  // rows of the window (n / P elements each): virtual rank u owns real rows
  // [u + min(u, rem), u + 1 + min(u + 1, rem)), the folded pair's two rows
  // for u < rem. Level s = 0 .. L - 1, mask m = p' / 2^(s + 1): v keeps the
  // rows of virtual ranks [(v / m)·m, + m) and pulls them from partner
  // v ^ m, reducing (the lower virtual rank's operand first) into its own;
  // the partner reads the other half. Each level: a credit to the partner
  // (my rows are at this level), a wait for its credit, the pull, then a
  // read-done credit. A rank leaves once each partner's read-done is in.
  void recursive_halving() {
    const std::vector<std::int32_t> peers = halve(&LogAllreduce::for_rows_of, true);
    for (std::int32_t peer : peers) {
      wait_for(peer, 2);
      give_back(peer, 2);
    }
  }

  // Allgather by recursive doubling over p' virtual ranks, on the P rows of
  // the window: level s = 0 .. L - 1, mask m = 2^s, v holds the rows of
  // virtual ranks [(v / m)·m, + m) (contiguous real rows: a folded pair's
  // two rows sit together) and pulls the partner's, [(pv / m)·m, + m), from
  // pv = v ^ m into its own window. Each level: a credit to the partner (my
  // rows are in), a wait for its credit, the pull, a read-done credit. A
  // rank writes only rows it does not hold yet and is read only for rows it
  // holds; it leaves once each partner's read-done is in.
  void recursive_doubling_allgather() {
    std::vector<std::int32_t> peers;
    for (std::int64_t s = 0; s < f_.levels; ++s) {
      const std::int64_t mask = std::int64_t{1} << s;
      const std::int32_t pv = flip(place_.virt, mask);
      const std::int32_t peer = real_of(pv);
      peers.push_back(peer);
      credit(peer);
      wait_for(peer, 1);
      for_rows_of(pv, mask, [&](std::int32_t off, std::int32_t len) {
        ce_.store_flat(data_, r_, off, ce_.load_flat(data_, peer, off, len));
      });
      credit(peer);  // read-done
    }
    for (std::int32_t peer : peers) {
      wait_for(peer, 2);
      give_back(peer, 2);
    }
  }

  // The halving levels both reductions share, s = 0 .. L - 1, mask
  // m = p' / 2^(s + 1): a credit to partner v ^ m (my ranges are at this
  // level), a wait for its credit, then over `ranges_of(v, m)` (what v
  // keeps) pull the partner's and reduce, the lower virtual rank's operand
  // first, into my own; with `read_done`, a credit after the pull. Returns
  // the partner of every level.
  using RangesOf = void (LogAllreduce::*)(std::int32_t, std::int64_t,
                                          const std::function<void(std::int32_t, std::int32_t)>&);
  std::vector<std::int32_t> halve(RangesOf ranges_of, bool read_done) {
    std::vector<std::int32_t> peers;
    for (std::int64_t s = 0; s < f_.levels; ++s) {
      const std::int64_t mask = f_.pow2 >> (s + 1);
      const std::int32_t pv = flip(place_.virt, mask);
      const std::int32_t peer = real_of(pv);
      peers.push_back(peer);
      credit(peer);
      wait_for(peer, 1);
      const std::int32_t lower = real_of(ce_.op(BinaryOp::Min, place_.virt, pv));
      const std::int32_t upper = real_of(ce_.op(BinaryOp::Max, place_.virt, pv));
      (this->*ranges_of)(place_.virt, mask, [&](std::int32_t off, std::int32_t len) {
        const std::int32_t acc = ce_.load_flat(data_, lower, off, len);
        ce_.reduce_into(acc, ce_.load_flat(data_, upper, off, len), call_.reduce);
        ce_.store_flat(data_, r_, off, acc);
      });
      if (read_done) credit(peer);
    }
    return peers;
  }

  // Binomial tree over all P ranks (no fold), L = ceil(log2 P) levels,
  // mask m = 2^s. Reduce to rank 0, levels 0 .. L - 1: a rank r with
  // r mod 2m = 0 and child r + m < P waits for the child's credit (its
  // subtree is reduced in its data), pulls it and stores mine ⊕ child's; a
  // rank with r mod 2m = m credits its parent r - m once its own subtree is
  // in (its lowest set bit: it sends once). Broadcast, levels L - 1 .. 0:
  // the child waits for the parent's credit (final), copies the parent's
  // data and credits it back (read-done); the parent credits each child
  // once it holds the result. The parent waits for every child's read-done
  // (its second credit) before it leaves. Cells: child -> parent 2, parent
  // -> child 1.
  void binomial_tree() {
    const std::int64_t world = ce_.regs_.world;
    std::int64_t levels = 0;
    while ((std::int64_t{1} << levels) < world) ++levels;
    struct Level {
      std::int32_t receives, sends, child, parent;
    };
    std::vector<Level> at;
    for (std::int64_t s = 0; s < levels; ++s) {
      const std::int64_t mask = std::int64_t{1} << s;
      const std::int32_t phase = ce_.op(BinaryOp::Mod, r_, ce_.c(2 * mask));
      const std::int32_t child = ce_.op(BinaryOp::Add, r_, ce_.c(mask));
      at.push_back(Level{ce_.op(BinaryOp::And, ce_.op(BinaryOp::Eq, phase, ce_.c(0)),
                                ce_.op(BinaryOp::Lt, child, ce_.c(world))),
                         ce_.op(BinaryOp::Eq, phase, ce_.c(mask)), child,
                         ce_.op(BinaryOp::Sub, r_, ce_.c(mask))});
    }
    auto when = [&](std::int32_t cond, const std::function<void()>& body) { ce_.when(cond, body); };
    for (const Level& l : at) {
      when(l.receives, [&] {
        wait_for(l.child, 1);
        for_all([&](std::int32_t off, std::int32_t len) {
          const std::int32_t acc = ce_.load_flat(data_, r_, off, len);
          ce_.reduce_into(acc, ce_.load_flat(data_, l.child, off, len), call_.reduce);
          ce_.store_flat(data_, r_, off, acc);
        });
      });
      when(l.sends, [&] { credit(l.parent); });
    }
    for (auto l = at.rbegin(); l != at.rend(); ++l) {
      when(l->sends, [&] {
        wait_for(l->parent, 1);
        copy_all_from(l->parent);
        credit(l->parent);  // read-done
        give_back(l->parent, 1);
      });
      when(l->receives, [&] { credit(l->child); });
    }
    for (const Level& l : at) {
      when(l.receives, [&] {
        wait_for(l.child, 2);
        give_back(l.child, 2);
      });
    }
  }

 private:
  Place place() {
    Place p;
    const std::int32_t zero = ce_.c(0);
    if (f_.rem == 0) {
      p.extra = p.absorber = zero;
      p.virt = r_;
      return p;
    }
    const std::int32_t low = ce_.op(BinaryOp::Lt, r_, ce_.c(2 * f_.rem));
    const std::int32_t odd = ce_.op(BinaryOp::Mod, r_, ce_.c(2));
    p.absorber = ce_.op(BinaryOp::And, low, odd);
    p.extra = ce_.op(BinaryOp::And, low, ce_.op(BinaryOp::Eq, odd, zero));
    // partner: r + 1 for an extra, r - 1 for an absorber (r + 1 - 2·odd).
    p.partner = ce_.op(BinaryOp::Sub, ce_.op(BinaryOp::Add, r_, ce_.c(1)),
                       ce_.op(BinaryOp::Mul, odd, ce_.c(2)));
    // v = r / 2 for an absorber, r - rem from 2·rem on: both are
    // r - min(ceil(r / 2), rem), with ceil(r / 2) = r - r / 2.
    p.virt =
        ce_.op(BinaryOp::Sub, r_,
               ce_.op(BinaryOp::Min, ce_.op(BinaryOp::Sub, r_, ce_.op(BinaryOp::Div, r_, ce_.c(2))),
                      ce_.c(f_.rem)));
    return p;
  }

  // v ^ m for a power of two m, in the scalar arithmetic the VM has:
  // v + m - 2·m·((v / m) mod 2).
  std::int32_t flip(std::int32_t v, std::int64_t m) {
    const std::int32_t bit = ce_.op(BinaryOp::Mod, ce_.op(BinaryOp::Div, v, ce_.c(m)), ce_.c(2));
    return ce_.op(BinaryOp::Sub, ce_.op(BinaryOp::Add, v, ce_.c(m)),
                  ce_.op(BinaryOp::Mul, bit, ce_.c(2 * m)));
  }

  // The real rank of virtual rank v: v + min(v + 1, rem).
  std::int32_t real_of(std::int32_t v) {
    if (f_.rem == 0) return v;
    return ce_.op(BinaryOp::Add, v,
                  ce_.op(BinaryOp::Min, ce_.op(BinaryOp::Add, v, ce_.c(1)), ce_.c(f_.rem)));
  }

  std::pair<std::int32_t, std::int32_t> cell(std::int32_t who) { return credits_.cell(who); }
  void credit(std::int32_t peer) { credits_.credit(peer); }
  void wait_for(std::int32_t peer, std::int64_t count) { credits_.wait_for(peer, count); }
  void give_back(std::int32_t peer, std::int64_t count) { credits_.give_back(peer, count); }

  void jump_unless(std::int32_t cond, std::size_t& patch_at) { ce_.jump_if_zero(cond, patch_at); }
  void jump_always(std::size_t& patch_at) { ce_.jump_if_zero(ce_.c(0), patch_at); }

  // Element ranges of blocks [(v / m)·m, + m), in pieces of at most 16 KiB.
  void for_blocks_of(std::int32_t v, std::int64_t mask,
                     const std::function<void(std::int32_t, std::int32_t)>& body) {
    const std::int32_t first =
        ce_.op(BinaryOp::Mul, ce_.op(BinaryOp::Div, v, ce_.c(mask)), ce_.c(mask));
    const std::int32_t begin =
        ce_.op(BinaryOp::Div, ce_.op(BinaryOp::Mul, first, ce_.c(n_)), ce_.c(f_.pow2));
    const std::int32_t end = ce_.op(
        BinaryOp::Div, ce_.op(BinaryOp::Mul, ce_.op(BinaryOp::Add, first, ce_.c(mask)), ce_.c(n_)),
        ce_.c(f_.pow2));
    const std::int32_t len = ce_.op(BinaryOp::Sub, end, begin);
    ce_.for_pieces(begin, len, chunks_for((mask * n_ + f_.pow2 - 1) / f_.pow2, dtype_), body);
  }

  // The first real row of virtual rank u: u + min(u, rem).
  std::int32_t first_row(std::int32_t u) {
    return f_.rem == 0 ? u : ce_.op(BinaryOp::Add, u, ce_.op(BinaryOp::Min, u, ce_.c(f_.rem)));
  }
  // The rows of virtual ranks [(v / m)·m, + m), in pieces of at most 16 KiB
  // (of the most rows m virtual ranks own: m + min(m, rem)).
  void for_rows_of(std::int32_t v, std::int64_t mask,
                   const std::function<void(std::int32_t, std::int32_t)>& body) {
    const std::int64_t row = n_ / ce_.regs_.world;
    const std::int32_t first =
        ce_.op(BinaryOp::Mul, ce_.op(BinaryOp::Div, v, ce_.c(mask)), ce_.c(mask));
    const std::int32_t begin = first_row(first);
    const std::int32_t end = first_row(ce_.op(BinaryOp::Add, first, ce_.c(mask)));
    ce_.for_pieces(ce_.op(BinaryOp::Mul, begin, ce_.c(row)),
                   ce_.op(BinaryOp::Mul, ce_.op(BinaryOp::Sub, end, begin), ce_.c(row)),
                   chunks_for((mask + std::min(mask, f_.rem)) * row, dtype_), body);
  }

  // The whole window, in pieces of at most 16 KiB.
  void for_all(const std::function<void(std::int32_t, std::int32_t)>& body) {
    ce_.for_pieces(ce_.c(0), ce_.c(n_), chunks_for(n_, dtype_), body);
  }
  void copy_all_from(std::int32_t peer) {
    copy_from(peer, ce_.c(0), ce_.c(n_), chunks_for(n_, dtype_));
  }
  // Row `row` of P from `peer`'s window into mine.
  void copy_row_from(std::int32_t peer, std::int32_t row) {
    const std::int64_t len = n_ / ce_.regs_.world;
    copy_from(peer, ce_.op(BinaryOp::Mul, row, ce_.c(len)), ce_.c(len), chunks_for(len, dtype_));
  }
  void copy_from(std::int32_t peer, std::int32_t begin, std::int32_t len, std::int64_t pieces) {
    ce_.for_pieces(begin, len, pieces, [&](std::int32_t off, std::int32_t piece) {
      ce_.store_flat(data_, r_, off, ce_.load_flat(data_, peer, off, piece));
    });
  }
  // data[r] = data[peer] ⊕ data[r], peer = r - 1.
  void reduce_all_from_lower(std::int32_t peer) {
    for_all([&](std::int32_t off, std::int32_t len) {
      const std::int32_t acc = ce_.load_flat(data_, peer, off, len);
      ce_.reduce_into(acc, ce_.load_flat(data_, r_, off, len), call_.reduce);
      ce_.store_flat(data_, r_, off, acc);
    });
  }

  CollectiveEmitter& ce_;
  const CollectiveCall& call_;
  Folding f_;
  PeerCredits credits_;
  DType dtype_;
  std::int32_t data_ = -1, signal_ = -1, r_ = -1;
  std::int64_t n_ = 0;
  Place place_;
};

}  // namespace

void lower_recursive_doubling_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  LogAllreduce a(ce, call);
  a.run([&] { a.recursive_doubling(); });
}

void lower_rabenseifner_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  LogAllreduce a(ce, call);
  a.run([&] { a.rabenseifner(); });
}

void lower_tree_allreduce(CollectiveEmitter& ce, const CollectiveCall& call) {
  LogAllreduce(ce, call).binomial_tree();
}

void lower_recursive_halving_reduce_scatter(CollectiveEmitter& ce, const CollectiveCall& call) {
  LogAllreduce a(ce, call);
  a.run([&] { a.recursive_halving(); }, LogAllreduce::Fold::ReduceToRows);
}

void lower_recursive_doubling_allgather(CollectiveEmitter& ce, const CollectiveCall& call) {
  const std::int32_t src = call.views[0], dst = call.views[1];
  const std::int64_t n = call.numel[0];
  const std::int32_t r = ce.regs_.rank;
  ce.put_flat(dst, r, ce.op(BinaryOp::Mul, r, ce.c(n)), src, ce.c(0), ce.c(n));
  LogAllreduce a(ce, call, 1, 2);
  a.run([&] { a.recursive_doubling_allgather(); }, LogAllreduce::Fold::Gather);
}

}  // namespace anyp::compiler::collective
