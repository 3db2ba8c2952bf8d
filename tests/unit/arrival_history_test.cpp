// arrival_history_test.cpp — the signal cells' arrivals in one pool
// (runtime/timeline/arrival_history.hpp): each cell's chain reads back
// newest first, cells interleaved in the pool keep their own, a chain that
// reaches `limit` is cut back to `keep`, and the nodes cut off are reused
// before the pool grows.
#include "runtime/timeline/arrival_history.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace anyp::runtime::timeline_sim {
namespace {

// A chain: its newest node and its length.
struct Chain {
  std::uint32_t newest = 0;
  std::uint16_t length = 0;
};

void push(ArrivalPool& pool, Chain& c, const Applied& a) { pool.push(c.newest, c.length, a); }

// The ops of h's chain, newest first.
std::vector<std::uint32_t> chain(const ArrivalPool& pool, const Chain& h) {
  std::vector<std::uint32_t> ops;
  for (std::uint32_t n = h.newest; n != 0; n = pool.before(n)) ops.push_back(pool.at(n).op);
  return ops;
}

Applied applied(std::uint32_t op) { return Applied{op, static_cast<std::int32_t>(op) * 10, 1, 2}; }

TEST(ArrivalPool, CellsInterleavedKeepTheirOwnChains) {
  ArrivalPool pool(4, 8);
  Chain a, b;
  EXPECT_EQ(chain(pool, a), std::vector<std::uint32_t>{});
  push(pool, a, applied(1));
  push(pool, b, applied(2));
  push(pool, a, applied(3));
  push(pool, b, applied(4));
  push(pool, a, applied(5));
  EXPECT_EQ(chain(pool, a), (std::vector<std::uint32_t>{5, 3, 1}));
  EXPECT_EQ(chain(pool, b), (std::vector<std::uint32_t>{4, 2}));
  EXPECT_EQ(a.length, 3u);
  EXPECT_EQ(pool.at(a.newest).value_after, 50);
  EXPECT_EQ(pool.nodes(), 5u);
}

TEST(ArrivalPool, AChainAtItsLimitIsCutBackAndItsNodesReused) {
  ArrivalPool pool(3, 6);
  Chain h;
  for (std::uint32_t op = 1; op <= 5; ++op) push(pool, h, applied(op));
  EXPECT_EQ(chain(pool, h), (std::vector<std::uint32_t>{5, 4, 3, 2, 1}));
  push(pool, h, applied(6));  // the sixth (the limit): cut to the newest three
  EXPECT_EQ(chain(pool, h), (std::vector<std::uint32_t>{6, 5, 4}));
  EXPECT_EQ(h.length, 3u);
  EXPECT_EQ(pool.nodes(), 6u);
  Chain other;
  for (std::uint32_t op = 7; op <= 9; ++op) push(pool, other, applied(op));  // the three freed
  EXPECT_EQ(pool.nodes(), 6u);
  EXPECT_EQ(chain(pool, other), (std::vector<std::uint32_t>{9, 8, 7}));
  EXPECT_EQ(chain(pool, h), (std::vector<std::uint32_t>{6, 5, 4}));
  push(pool, other, applied(10));  // none free: the pool grows
  EXPECT_EQ(pool.nodes(), 7u);
  // A long run on one cell stays within `limit` nodes of its own.
  Chain busy;
  for (std::uint32_t op = 100; op < 1100; ++op) push(pool, busy, applied(op));
  EXPECT_LE(pool.nodes(), 7u + 6u);
  EXPECT_EQ(chain(pool, busy).front(), 1099u);
  EXPECT_LT(chain(pool, busy).size(), 6u);
}

}  // namespace
}  // namespace anyp::runtime::timeline_sim
