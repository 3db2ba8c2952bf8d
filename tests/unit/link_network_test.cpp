// link_network_test.cpp — max-min fair sharing of the modeled links
// (runtime/timeline/link_network.hpp): the progressive-filling rates of a
// network where equal shares would leave capacity unused, a flow's rate
// rising when its bottleneck's other flows end, unlimited links, and the
// figures a link keeps.
#include "runtime/timeline/link_network.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace {

using anyp::runtime::LinkNetwork;

// Links 0..4 of capacity 1. f1 crosses 0 and 1; f2 0 and 2; f3, f4 2 and
// 3, 2 and 4. Link 2 (three flows) is the bottleneck: f2, f3, f4 get 1/3;
// link 0 then has 2/3 left for f1 (an equal split of link 0 would give it
// 1/2 and waste 1/6).
TEST(LinkNetwork, RatesAreMaxMinFair) {
  LinkNetwork net({1, 1, 1, 1, 1});
  const std::size_t f1 = net.add({0, 1}, 100), f2 = net.add({0, 2}, 100), f3 = net.add({2, 3}, 100),
                    f4 = net.add({2, 4}, 100);
  net.share();
  EXPECT_DOUBLE_EQ(net.rate(f1), 2.0 / 3);
  EXPECT_DOUBLE_EQ(net.rate(f2), 1.0 / 3);
  EXPECT_DOUBLE_EQ(net.rate(f3), 1.0 / 3);
  EXPECT_DOUBLE_EQ(net.rate(f4), 1.0 / 3);
  const auto [first, at] = net.next_finish();
  EXPECT_EQ(first, f1);
  EXPECT_DOUBLE_EQ(at, 150);
}

// k equal flows into one port end together, k times later than one alone;
// when one ends early the others speed up.
TEST(LinkNetwork, AnIncastSharesThePortAndSpeedsUpAsFlowsEnd) {
  LinkNetwork net({2, 2, 2, 2});  // ports out of 0, 1, 2 and the port into 3
  const std::size_t a = net.add({0, 3}, 100), b = net.add({1, 3}, 100), c = net.add({2, 3}, 50);
  net.share();
  for (std::size_t f : {a, b, c}) EXPECT_DOUBLE_EQ(net.rate(f), 2.0 / 3);
  auto [done, at] = net.next_finish();
  EXPECT_EQ(done, c);
  EXPECT_DOUBLE_EQ(at, 75);
  net.advance(at);
  net.remove(c);
  net.share();
  EXPECT_DOUBLE_EQ(net.rate(a), 1);
  EXPECT_DOUBLE_EQ(net.remaining(a), 50);
  std::tie(done, at) = net.next_finish();
  EXPECT_DOUBLE_EQ(at, 125);
  net.advance(at);
  EXPECT_DOUBLE_EQ(net.bytes_carried(3), 250);
  EXPECT_DOUBLE_EQ(net.busy_ns(3), 125);
  EXPECT_DOUBLE_EQ(net.bytes_carried(2), 50);
  EXPECT_DOUBLE_EQ(net.busy_ns(2), 75);
}

// A flow through unlimited links only finishes at once; one that also
// crosses a limited link gets that link.
TEST(LinkNetwork, UnlimitedLinks) {
  LinkNetwork net({INFINITY, INFINITY, 4});
  const std::size_t free_flow = net.add({0, 1}, 1000), limited = net.add({0, 2}, 1000);
  net.share();
  EXPECT_TRUE(std::isinf(net.rate(free_flow)));
  EXPECT_DOUBLE_EQ(net.rate(limited), 4);
  const auto [first, at] = net.next_finish();
  EXPECT_EQ(first, free_flow);
  EXPECT_DOUBLE_EQ(at, 0);
  net.remove(free_flow);
  EXPECT_FALSE(net.active(free_flow));
  EXPECT_EQ(net.next_finish().first, limited);
  EXPECT_DOUBLE_EQ(net.next_finish().second, 250);
}

}  // namespace
