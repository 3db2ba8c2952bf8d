// lower_log_broadcast.cpp — the logarithmic broadcasts as VM code
// (docs/collectives.md §3.4a-b), on the mesh's [P, 1] signal with the
// counted per-peer credits of PeerCredits, over virtual ranks
// v = (r - root) mod P (real rank (v + root) mod P), so the root is v = 0.
//
// Both use the binomial tree of MPICH's broadcast: v's parent is v - m for
// m = v's lowest set bit, its children v + m for every power of two m below
// that bit (below 2^ceil(log2 P) for the root) with v + m < P; v's subtree
// is [v, v + min(lowbit, P - v)).
//
// Tree: a child waits for its parent's credit (the parent holds the data),
// pulls the whole vector, credits the parent back (read-done), then
// credits its children, largest subtree first. A parent leaves once every
// child's read-done is in.
//
// ScatterAllgather (van de Geijn): the data in P near-equal blocks
// [b·n/P, (b + 1)·n/P), block b belonging to virtual rank b. The binomial
// scatter gives v its subtree's blocks (pulled from the parent as in Tree,
// read-done right after); then a ring allgather over virtual ranks:
// round g = 0 .. P - 2, once the left neighbour's credit for round g is in,
// v pulls block (v - g - 1) mod P from it, unless v already holds it from
// the scatter (the last size(subtree) - 1 rounds), and credits its right
// neighbour for round g + 1. No block is written while anyone may read it
// (a rank writes only blocks it does not hold, and is read only for blocks
// it holds). At the end v credits its left neighbour (read-done) and waits
// for its children's and its right neighbour's.
//
// A peer's credits to one rank are counted in the order the peer sends
// them; where two roles coincide (the left neighbour is the parent of an
// odd v; at P = 2 left is right; the root's left is its child when P - 1
// is a power of two, and P - 1's right is its parent then) the waits add
// the earlier role's credits, and each role gives its own credits back
// after the last wait.
#include "compiler/lower_log_broadcast.hpp"

#include <cstdint>
#include <functional>
#include <vector>

namespace anyp::compiler::collective {

namespace {

using ir::BinaryOp;

bool is_power_of_two(std::int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

class LogBroadcast {
 public:
  LogBroadcast(CollectiveEmitter& ce, const CollectiveCall& call)
      : ce_(ce),
        credits_(ce, call.views[1]),
        data_(call.views[0]),
        n_(call.numel[0]),
        dtype_(call.dtypes[0]),
        world_(ce.regs_.world),
        root_(call.root) {
    while ((std::int64_t{1} << levels_) < world_) ++levels_;
    vr_ = ce_.op(BinaryOp::Mod, ce_.op(BinaryOp::Add, ce_.regs_.rank, ce_.c(world_ - root_)),
                 ce_.c(world_));
    for (std::int64_t s = 0; s < levels_; ++s) {
      const std::int64_t m = std::int64_t{1} << s;
      const std::int32_t phase = ce_.op(BinaryOp::Mod, vr_, ce_.c(2 * m));
      Level l;
      l.mask = m;
      l.receives = ce_.op(BinaryOp::Eq, phase, ce_.c(m));
      l.sends = ce_.op(BinaryOp::And, ce_.op(BinaryOp::Eq, phase, ce_.c(0)),
                       ce_.op(BinaryOp::Lt, ce_.op(BinaryOp::Add, vr_, ce_.c(m)), ce_.c(world_)));
      l.parent = real(ce_.op(BinaryOp::Sub, vr_, ce_.c(m)));
      l.child = real(ce_.op(BinaryOp::Add, vr_, ce_.c(m)));
      at_.push_back(l);
    }
    // The subtree's size: min(lowbit(v), P - v), P for the root.
    std::int32_t lowbit = ce_.op(BinaryOp::Mul, ce_.op(BinaryOp::Eq, vr_, ce_.c(0)),
                                 ce_.c(std::int64_t{1} << levels_));
    for (const Level& l : at_)
      lowbit = ce_.op(BinaryOp::Add, lowbit, ce_.op(BinaryOp::Mul, l.receives, ce_.c(l.mask)));
    subtree_ = ce_.op(BinaryOp::Min, lowbit, ce_.op(BinaryOp::Sub, ce_.c(world_), vr_));
  }

  void tree() {
    for (const Level& l : at_) {
      ce_.when(l.receives, [&] {
        receive_from(l.parent);
        copy_from(l.parent, ce_.c(0), ce_.c(n_), chunks_for(n_, dtype_));
        credits_.credit(l.parent);  // read-done
      });
    }
    credit_children();
    wait_for_children();
    give_back_tree_credits();
  }

  void scatter_allgather() {
    if (world_ == 1) return;
    // Scatter: my subtree's blocks [v, v + subtree) from my parent.
    for (const Level& l : at_) {
      ce_.when(l.receives, [&] {
        receive_from(l.parent);
        const auto [begin, len] = blocks(vr_, subtree_);
        copy_from(l.parent, begin, len, chunks_for(l.mask * ceil_block(), dtype_));
        credits_.credit(l.parent);  // read-done
      });
    }
    credit_children();
    // Ring allgather over the virtual ranks.
    const std::int32_t left = real(ce_.op(BinaryOp::Add, vr_, ce_.c(world_ - 1)));
    const std::int32_t right = real(ce_.op(BinaryOp::Add, vr_, ce_.c(1)));
    const std::int32_t odd = ce_.op(BinaryOp::Mod, vr_, ce_.c(2));
    const std::int32_t is_root = ce_.op(BinaryOp::Eq, vr_, ce_.c(0));
    const std::int32_t zero = ce_.c(0), one = ce_.c(1);
    const bool wraps = is_power_of_two(world_ - 1);  // P - 1 is the root's child
    // Credits my left neighbour sent before its ring credits: the scatter
    // data (it is my parent when v is odd), its scatter read-done (it is my
    // child: the root's left when P - 1 is a power of two).
    const std::int32_t left_before = ce_.op(BinaryOp::Add, odd, wraps ? is_root : zero);
    const std::int32_t pull_rounds = ce_.op(BinaryOp::Sub, ce_.c(world_), subtree_);
    credits_.credit(right);  // my blocks, for its round 0
    ce_.e_.for_range(zero, ce_.c(world_ - 1), -1, [&](std::int32_t g) {
      credits_.wait_for_reg(left,
                            ce_.op(BinaryOp::Add, ce_.op(BinaryOp::Add, g, one), left_before));
      ce_.when(ce_.op(BinaryOp::Lt, g, pull_rounds), [&] {
        const std::int32_t k = ce_.op(
            BinaryOp::Mod, ce_.op(BinaryOp::Sub, ce_.op(BinaryOp::Add, vr_, ce_.c(world_ - 1)), g),
            ce_.c(world_));
        const auto [begin, len] = blocks(k, one);
        copy_from(left, begin, len, chunks_for(ceil_block(), dtype_));
      });
      ce_.when(ce_.op(BinaryOp::Lt, g, ce_.c(world_ - 2)), [&] { credits_.credit(right); });
    });
    credits_.credit(left);  // read-done
    wait_for_children();
    // My right neighbour's read-done, after what it sent before: its
    // scatter read-done (my child: v even), the scatter data (my parent:
    // v = P - 1 when P - 1 is a power of two), its ring credits (P = 2).
    const std::int32_t right_is_child =
        ce_.op(BinaryOp::And, ce_.op(BinaryOp::Eq, odd, zero),
               ce_.op(BinaryOp::Lt, ce_.op(BinaryOp::Add, vr_, one), ce_.c(world_)));
    const std::int32_t right_is_parent =
        wraps ? ce_.op(BinaryOp::Eq, vr_, ce_.c(world_ - 1)) : zero;
    credits_.wait_for_reg(
        right, ce_.op(BinaryOp::Add, ce_.op(BinaryOp::Add, right_is_child, right_is_parent),
                      ce_.c(1 + (world_ == 2 ? world_ - 1 : 0))));
    // Every wait is done: each role gives back what it received.
    give_back_tree_credits();
    credits_.give_back(left, world_ - 1);
    credits_.give_back(right, 1);
  }

 private:
  struct Level {
    std::int64_t mask = 1;
    std::int32_t receives = -1, sends = -1, parent = -1, child = -1;
  };

  std::int32_t real(std::int32_t v) {
    return ce_.op(BinaryOp::Mod, ce_.op(BinaryOp::Add, v, ce_.c(root_)), ce_.c(world_));
  }
  std::int64_t ceil_block() const { return (n_ + world_ - 1) / world_; }
  // Blocks [first, first + count) as an element range (offset, length).
  std::pair<std::int32_t, std::int32_t> blocks(std::int32_t first, std::int32_t count) {
    const std::int32_t begin =
        ce_.op(BinaryOp::Div, ce_.op(BinaryOp::Mul, first, ce_.c(n_)), ce_.c(world_));
    const std::int32_t end =
        ce_.op(BinaryOp::Div, ce_.op(BinaryOp::Mul, ce_.op(BinaryOp::Add, first, count), ce_.c(n_)),
               ce_.c(world_));
    return {begin, ce_.op(BinaryOp::Sub, end, begin)};
  }

  // The parent's credit: it holds what I pull.
  void receive_from(std::int32_t parent) { credits_.wait_for(parent, 1); }
  void copy_from(std::int32_t peer, std::int32_t begin, std::int32_t len, std::int64_t pieces) {
    ce_.for_pieces(begin, len, pieces, [&](std::int32_t off, std::int32_t piece) {
      ce_.store_flat(data_, ce_.regs_.rank, off, ce_.load_flat(data_, peer, off, piece));
    });
  }
  // Largest subtree first.
  void credit_children() {
    for (auto l = at_.rbegin(); l != at_.rend(); ++l)
      ce_.when(l->sends, [&] { credits_.credit(l->child); });
  }
  void wait_for_children() {
    for (const Level& l : at_) ce_.when(l.sends, [&] { credits_.wait_for(l.child, 1); });
  }
  // The parent's data credit and the children's read-dones, after the last
  // wait (a cell may serve two roles, whose waits count both).
  void give_back_tree_credits() {
    for (const Level& l : at_) {
      ce_.when(l.receives, [&] { credits_.give_back(l.parent, 1); });
      ce_.when(l.sends, [&] { credits_.give_back(l.child, 1); });
    }
  }

  CollectiveEmitter& ce_;
  PeerCredits credits_;
  std::int32_t data_;
  std::int64_t n_;
  DType dtype_;
  std::int64_t world_, root_;
  std::int64_t levels_ = 0;
  std::int32_t vr_ = -1, subtree_ = -1;
  std::vector<Level> at_;
};

}  // namespace

void lower_tree_broadcast(CollectiveEmitter& ce, const CollectiveCall& call) {
  LogBroadcast(ce, call).tree();
}

void lower_scatter_allgather_broadcast(CollectiveEmitter& ce, const CollectiveCall& call) {
  LogBroadcast(ce, call).scatter_allgather();
}

}  // namespace anyp::compiler::collective
