// comm_group_programs_test.cpp — programs with sub-communicator groups
// (issue 12, item 2) beyond the one-kernel equivalence of
// comm_groups_test.cpp:
//   - PyPTO's multi-group test, at any P: overlapping pairs, one domain of
//     pairs {0, 1}, {2, 3}, ... and one of {1, 2}, {3, 4}, ..., so a rank
//     holds a window in each; every rank swaps with its partner in both
//     (P = 3, PyPTO's, and 4, 5, 8), race-checked;
//   - host-level collectives on a domain's views: a signal-free allreduce
//     per group (its signal synthesized in the domain), and a domain that
//     covers only some ranks (the others never run it);
//   - run-time errors and reports name the group: a peer outside the
//     group, a collective some ranks of a group never enter (deadlock), and
//     a race inside a group.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t S = 8;
const pl::Dim NR = pl::dynamic("NR");

// Swap x with the partner (peer 1 - rank) of the pair that `window` is in.
const pl::Function swap = pl::jit::incore(
    "swap",
    {pl::In("x", pl::Tensor({1, S}, pl::FP32)), pl::Out("y", pl::Tensor({1, S}, pl::FP32)),
     pl::InOut("window", pld::DistributedTensor({1, S}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({1, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value window, pl::Value signal) {
      const pl::Scalar partner = 1 - pld::rank(pld::get_comm_ctx(window));
      pld::tensor::put(window, partner, x);
      pld::system::notify(signal, partner, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
      pld::system::wait(signal, {0, 0}, 1, pld::WaitCmp::Ge);
      y = pl::store(pl::load(window, {0, 0}, {1, S}), {0, 0}, y);
    });
const pl::Function swap_rank = pl::jit::orchestration_for("swap_rank", swap);

const pl::HostFunction overlapping_pairs = pl::jit::host(
    "overlapping_pairs",
    {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
     pl::Out("y_even", pl::Tensor({NR, 1, S}, pl::FP32)),
     pl::Out("y_odd", pl::Tensor({NR, 1, S}, pl::FP32))},
    [](pl::Value x, pl::Value y_even, pl::Value y_odd) {
      const pl::Scalar P = pld::world_size();
      const pld::CommDomain even = pld::comm_domain("even"), odd = pld::comm_domain("odd");
      pl::range(P / 2, [&](pl::Scalar k) { pld::comm_group(even, 2 * k, 2); });
      pl::range((P - 1) / 2, [&](pl::Scalar k) { pld::comm_group(odd, 2 * k + 1, 2); });
      auto even_window = pld::alloc_window_buffer("even_window", {1, S}, pl::FP32, even);
      auto even_signal = pld::alloc_window_buffer("even_signal", {1, 1}, pl::INT32, even);
      auto odd_window = pld::alloc_window_buffer("odd_window", {1, S}, pl::FP32, odd);
      auto odd_signal = pld::alloc_window_buffer("odd_signal", {1, 1}, pl::INT32, odd);
      pl::range(2 * (P / 2), [&](pl::Scalar r) {
        swap_rank(x[r], y_even[r], pld::window(even_window, {1, S}, pl::FP32),
                  pld::window(even_signal, {1, 1}, pl::INT32), pl::device(r));
      });
      pl::range(1, 1 + 2 * ((P - 1) / 2), [&](pl::Scalar r) {
        swap_rank(x[r], y_odd[r], pld::window(odd_window, {1, S}, pl::FP32),
                  pld::window(odd_signal, {1, 1}, pl::INT32), pl::device(r));
      });
    });

class OverlappingPairs : public testing::TestWithParam<std::int64_t> {};

TEST_P(OverlappingPairs, EveryRankSwapsWithItsPartnerInBothDomains) {
  const std::int64_t P = GetParam();
  anyp::InputGenerator gen(24);
  const anyp::HostTensor x = gen.uniform({P, 1, S});
  anyp::HostTensor y_even = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
  anyp::HostTensor y_odd = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  const anyp::RunStats stats =
      overlapping_pairs.compile({x, y_even, y_odd}, config)(x, y_even, y_odd);
  for (std::int64_t r = 0; r < P; ++r) {
    const bool has_even = r < 2 * (P / 2), has_odd = r >= 1 && r < 1 + 2 * ((P - 1) / 2);
    const std::int64_t even_partner = r ^ 1, odd_partner = r % 2 ? r + 1 : r - 1;
    for (std::int64_t j = 0; j < S; ++j) {
      EXPECT_EQ(y_even.at({r, 0, j}), has_even ? x.at({even_partner, 0, j}) : 0.0) << r;
      EXPECT_EQ(y_odd.at({r, 0, j}), has_odd ? x.at({odd_partner, 0, j}) : 0.0) << r;
    }
    // One put and one notify per pair the rank is in.
    EXPECT_EQ(stats.cost[static_cast<std::size_t>(r)].rma, has_even + has_odd) << r;
    EXPECT_EQ(stats.cost[static_cast<std::size_t>(r)].notifies, has_even + has_odd) << r;
  }
}

INSTANTIATE_TEST_SUITE_P(P, OverlappingPairs, testing::Values(3, 4, 5, 8));

// Stage x, then y = x and z = the window after the host-level collective.
const pl::Function stage = pl::jit::orchestration_for(
    "stage", pl::jit::incore("stage_kernel",
                             {pl::In("x", pl::Tensor({1, S}, pl::FP32)),
                              pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32))},
                             [](pl::Value x, pl::Value data) {
                               data = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, data);
                             }));
const pl::Function unstage = pl::jit::orchestration_for(
    "unstage", pl::jit::incore("unstage_kernel",
                               {pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)),
                                pl::Out("y", pl::Tensor({1, S}, pl::FP32))},
                               [](pl::Value data, pl::Value y) {
                                 y = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, y);
                               }));
const pl::Function copy_out = pl::jit::orchestration_for(
    "copy_out", pl::jit::incore("copy_kernel",
                                {pl::In("x", pl::Tensor({1, S}, pl::FP32)),
                                 pl::Out("y", pl::Tensor({1, S}, pl::FP32))},
                                [](pl::Value x, pl::Value y) {
                                  y = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, y);
                                }));

// Groups of G = `group` contiguous ranks starting at rank `first`, `count`
// of them; the ranks outside get copy_out, the ranks inside stage, a host
// allreduce of their group and unstage.
pl::HostFunction host_allreduce_program(std::int64_t first, std::int64_t group,
                                        std::int64_t count) {
  return pl::jit::host(
      "host_group_allreduce",
      {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
       pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32))},
      [=](pl::Value x, pl::Value y) {
        const pld::CommDomain g = pld::comm_domain("g");
        pl::range(count, [&](pl::Scalar k) { pld::comm_group(g, first + k * group, group); });
        auto data = pld::alloc_window_buffer("data", {1, S}, pl::FP32, g);
        const std::int64_t end = first + group * count;
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::if_(
              r >= first && r < end,
              [&] {
                stage(x[r], pld::window(data, {1, S}, pl::FP32), pl::device(r));
              },
              [&] { copy_out(x[r], y[r], pl::device(r)); });
        });
        auto view = pld::window(data, {1, S}, pl::FP32);
        view = pld::tensor::allreduce(view);  // the signal is synthesized in "g"
        pl::range(first, end, [&](pl::Scalar r) { unstage(view, y[r], pl::device(r)); });
      });
}

struct HostGroupCase {
  std::int64_t P, first, group, count;
};
class HostGroupAllreduce : public testing::TestWithParam<HostGroupCase> {};

TEST_P(HostGroupAllreduce, SumsOverEachGroupAndLeavesTheOtherRanksAlone) {
  const auto [P, first, group, count] = GetParam();
  anyp::InputGenerator gen(25);
  const anyp::HostTensor x = gen.uniform({P, 1, S});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  const anyp::CompiledProgram prog =
      host_allreduce_program(first, group, count).compile({x, y}, config);
  const anyp::RunStats stats = prog(x, y);
  EXPECT_NE(prog.window_layout().find("host_allreduce_0_signal"), std::string::npos);
  for (std::int64_t r = 0; r < P; ++r) {
    const bool inside = r >= first && r < first + group * count;
    const std::int64_t base = inside ? first + (r - first) / group * group : r;
    for (std::int64_t j = 0; j < S; ++j) {
      float sum = 0;  // the mesh allreduce's order: group index 0, 1, ...
      for (std::int64_t m = base; m < base + (inside ? group : 1); ++m)
        sum += static_cast<float>(x.at({m, 0, j}));
      EXPECT_EQ(y.at({r, 0, j}), static_cast<double>(sum)) << "rank " << r << " element " << j;
    }
    EXPECT_EQ(stats.cost[static_cast<std::size_t>(r)].bytes_in, inside ? (group - 1) * S * 4 : 0)
        << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Groups, HostGroupAllreduce,
                         testing::Values(HostGroupCase{4, 0, 2, 2}, HostGroupCase{6, 0, 3, 2},
                                         HostGroupCase{9, 0, 3, 3}, HostGroupCase{4, 1, 2, 1},
                                         HostGroupCase{7, 1, 3, 2}));

// The run-time errors and reports, on groups of two at P = 4.
std::string run_failure(const pl::Function& kernel, bool races = false) {
  const pl::Function orch = pl::jit::orchestration_for("orch", kernel);
  const pl::HostFunction host = pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [orch](pl::Value y) {
        const pld::CommDomain pairs = pld::comm_domain("pairs");
        pl::range(NR / 2, [&](pl::Scalar k) { pld::comm_group(pairs, 2 * k, 2); });
        auto data = pld::alloc_window_buffer("data", {1, S}, pl::FP32, pairs);
        auto signal = pld::alloc_window_buffer("signal", {2, 1}, pl::INT32, pairs);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(y[r], pld::window(data, {1, S}, pl::FP32), pld::window(signal, {2, 1}, pl::INT32),
               pl::device(r));
        });
      });
  anyp::HostTensor y = anyp::HostTensor::zeros({4, 1, S}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(4);
  config.check_races = races;
  config.workers = 1;
  try {
    host.compile({y}, config)(y);
    return "ran without error";
  } catch (const anyp::RunError& e) {
    return anyp_test::without_locations(e.what());
  }
}

const std::vector<pl::Param> pair_params = {
    pl::InOut("y", pl::Tensor({1, S}, pl::FP32)),
    pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)),
    pl::InOut("signal", pld::DistributedTensor({2, 1}, pl::INT32))};

TEST(CommGroupRuns, APeerOutsideTheGroupIsARunError) {
  const pl::Function kernel =
      pl::jit::incore("far_notify", pair_params, [](pl::Value, pl::Value, pl::Value signal) {
        pld::system::notify(signal, 2, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
      });
  EXPECT_EQ(run_failure(kernel),
            "run error: rank 0 (device 0), function 'far_notify', op pld.system.notify: peer 2 is "
            "out of range [0, 2) of this rank's group {0, 1} in domain 'pairs' (window 'signal'; "
            "a peer is an index into the group)");
}

TEST(CommGroupRuns, ACollectiveOneRankOfAGroupSkipsIsADeadlockNamingTheGroup) {
  const pl::Function kernel =
      pl::jit::incore("half_barrier", pair_params, [](pl::Value, pl::Value data, pl::Value signal) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(data));
        pl::if_(me == 0, [&] { signal = pld::tensor::barrier(signal); });
      });
  const std::string report = run_failure(kernel);
  EXPECT_NE(report.find("collective call #1 on signal 'signal' (group {0, 1} of domain 'pairs'), "
                        "pld.tensor.barrier in function 'half_barrier': entered by rank 0; never "
                        "entered by rank 1 (finished)"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("collective call #1 on signal 'signal' (group {2, 3} of domain 'pairs'), "
                        "pld.tensor.barrier in function 'half_barrier': entered by rank 2; never "
                        "entered by rank 3 (finished)"),
            std::string::npos)
      << report;
}

TEST(CommGroupRuns, AnUnorderedReadInAGroupIsARace) {
  // Each rank reads its partner's data with no barrier after the partner
  // wrote it: the race checker reports it, between the group's ranks.
  const pl::Function kernel =
      pl::jit::incore("unordered", pair_params, [](pl::Value y, pl::Value data, pl::Value) {
        const pl::Scalar partner = 1 - pld::rank(pld::get_comm_ctx(data));
        data = pl::store(pl::full({1, S}, 1.0, pl::FP32), {0, 0}, data);
        y = pl::store(pld::tile::remote_load(data, partner, {0, 0}, {1, S}), {0, 0}, y);
      });
  const std::string report = run_failure(kernel, true);
  EXPECT_EQ(report.rfind("race report: ", 0), 0u) << report;
  // Rank 0's partner is rank 1 (peer 1 of group {0, 1}).
  EXPECT_NE(report.find("race 1: window 'data' of rank 1, elements [0, 0:8]\n    first:  read by "
                        "rank 0 (device 0), function 'unordered', op pld.tile.remote_load\n    "
                        "second: write by rank 1 (device 1), function 'unordered', op pl.store"),
            std::string::npos)
      << report;
}

}  // namespace
