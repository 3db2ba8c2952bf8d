// link_network_test.cpp — max-min fair sharing of the modeled links
// (runtime/timeline/link_network.hpp): the progressive-filling rates of a
// network where equal shares would leave capacity unused, a flow's rate
// rising when its bottleneck's other flows end, unlimited links, the
// figures a link keeps, and (against a from-scratch reference over the
// whole network) the rates, remaining bytes and figures after random
// changes refilled per component.
#include "runtime/timeline/link_network.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

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

// The max-min fair rates of `flows` (links per flow) over the whole
// network, by progressive filling from scratch.
std::map<std::size_t, double> reference_rates(
    const std::vector<double>& caps,
    const std::map<std::size_t, std::array<std::size_t, 2>>& flows) {
  std::vector<double> left = caps;
  std::vector<std::size_t> open(caps.size(), 0);
  for (const auto& [id, ls] : flows) {
    ++open[ls[0]];
    if (ls[1] != ls[0]) ++open[ls[1]];
  }
  std::map<std::size_t, double> rate;
  while (rate.size() < flows.size()) {
    double share = INFINITY;
    std::size_t bottleneck = 0;
    for (std::size_t l = 0; l < caps.size(); ++l)
      if (open[l] > 0 && left[l] / static_cast<double>(open[l]) < share) {
        share = left[l] / static_cast<double>(open[l]);
        bottleneck = l;
      }
    for (const auto& [id, ls] : flows) {
      if (rate.count(id) || (ls[0] != bottleneck && ls[1] != bottleneck)) continue;
      rate[id] = share;
      for (std::size_t k = 0; k < (ls[0] == ls[1] ? 1u : 2u); ++k) {
        left[ls[k]] = std::max(0.0, left[ls[k]] - share);
        --open[ls[k]];
      }
    }
  }
  return rate;
}

// Random adds and removes on 16 links of mixed capacity, the clock moving
// on between them: after every change each flow's rate is the whole
// network's max-min share, each flow's remaining bytes are what its rates
// moved, and each link's bytes carried are the sum of what its flows moved.
TEST(LinkNetwork, RefillingPerComponentMatchesTheWholeNetwork) {
  const std::vector<double> caps = {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4};
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng(seed);
    LinkNetwork net(caps);
    std::map<std::size_t, std::array<std::size_t, 2>> flows;
    std::map<std::size_t, double> remaining, rates;
    std::vector<double> carried(caps.size(), 0);
    double now = 0;
    for (int change = 0; change < 200; ++change) {
      const double dt = static_cast<double>(rng() % 7) / 4;
      for (auto& [id, left] : remaining) {
        // A link carries a flow's rate until the flow is removed (the
        // simulation removes it when it finishes).
        const double moved = rates[id] * dt;
        left = std::max(0.0, left - moved);
        carried[flows[id][0]] += moved;
        if (flows[id][1] != flows[id][0]) carried[flows[id][1]] += moved;
      }
      now += dt;
      net.advance(now);
      if (flows.empty() || rng() % 3 != 0) {
        const std::array<std::size_t, 2> ls{rng() % caps.size(), rng() % caps.size()};
        const double bytes = 1 + rng() % 100;
        const std::size_t id = net.add(ls, bytes);
        flows[id] = ls;
        remaining[id] = bytes;
      } else {
        auto it = flows.begin();
        std::advance(it, static_cast<long>(rng() % flows.size()));
        net.remove(it->first);
        EXPECT_FALSE(net.active(it->first));
        remaining.erase(it->first);
        flows.erase(it);
      }
      net.share();
      rates = reference_rates(caps, flows);
      for (const auto& [id, rate] : rates) {
        ASSERT_TRUE(net.active(id));
        EXPECT_NEAR(net.rate(id), rate, 1e-9 * rate) << "seed " << seed << " change " << change;
        EXPECT_NEAR(net.remaining(id), remaining[id], 1e-9 * (1 + remaining[id]));
      }
      for (std::size_t l = 0; l < caps.size(); ++l)
        EXPECT_NEAR(net.bytes_carried(l), carried[l], 1e-9 * (1 + carried[l]));
      // The first to finish: the least remaining / rate, the lowest id of a tie.
      std::size_t first = LinkNetwork::kNone;
      double at = INFINITY;
      for (const auto& [id, rate] : rates) {
        const double t = now + remaining[id] / rate;
        if (t < at * (1 - 1e-12)) {
          at = t;
          first = id;
        }
      }
      const auto [got, got_at] = net.next_finish();
      if (first != LinkNetwork::kNone) {
        EXPECT_NEAR(got_at, at, 1e-9 * at);
      }
      EXPECT_EQ(got == LinkNetwork::kNone, first == LinkNetwork::kNone);
    }
  }
}

}  // namespace
