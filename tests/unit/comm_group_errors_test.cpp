// comm_group_errors_test.cpp — every compile error of sub-communicator
// groups (pld::comm_domain / pld::comm_group, issue 12 item 2), with its
// exact message: a view dispatched outside its domain, groups that overlap,
// differ in size, leave [0, P) or repeat a rank, a group added after the
// domain's first buffer, a buffer in a domain without groups, a domain
// declared twice or in a loop, a collective whose shapes follow P instead of
// the group size, a collective over windows of two domains (in a kernel and
// at the host level), and a window variable re-bound to another domain.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t S = 8;
const pl::Dim NR = pl::dynamic("NR");

std::string compile_error(const pl::HostFunction& host, std::int64_t P) {
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
  try {
    host.compile({y}, anyp::RunConfig::for_world_size(P));
    return "compiled without error";
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
}

// A barrier on `signal`, then y = 1: the kernel every case dispatches.
const pl::Function barrier_kernel =
    pl::jit::incore("barrier_kernel",
                    {pl::InOut("y", pl::Tensor({1, S}, pl::FP32)),
                     pl::InOut("signal", pld::DistributedTensor({2, 1}, pl::INT32))},
                    [](pl::Value y, pl::Value signal) {
                      signal = pld::tensor::barrier(signal);
                      y = pl::store(pl::full({1, S}, 1.0, pl::FP32), {0, 0}, y);
                    });
const pl::Function per_rank = pl::jit::orchestration_for("per_rank", barrier_kernel);
// The same, for a rank outside every domain.
const pl::Function just_store = pl::jit::orchestration_for(
    "just_store",
    pl::jit::incore("store_only", {pl::InOut("y", pl::Tensor({1, S}, pl::FP32))}, [](pl::Value y) {
      y = pl::store(pl::full({1, S}, 1.0, pl::FP32), {0, 0}, y);
    }));

// host(y): `groups` declares domain "pair" and its groups; a [2, 1] signal
// in it; every rank in a group of the domain gets the barrier kernel, the
// others (with `others`) a plain store.
pl::HostFunction program(const std::function<void(const pld::CommDomain&)>& groups,
                         bool dispatch_everyone = false) {
  return pl::jit::host(
      "host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))},
      [groups, dispatch_everyone](pl::Value y) {
        const pld::CommDomain pair = pld::comm_domain("pair");
        groups(pair);
        auto signal = pld::alloc_window_buffer("signal", {2, 1}, pl::INT32, pair);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          if (dispatch_everyone) {
            per_rank(y[r], pld::window(signal, {2, 1}, pl::INT32), pl::device(r));
          } else {
            pl::if_(
                r < 2,
                [&] {
                  per_rank(y[r], pld::window(signal, {2, 1}, pl::INT32), pl::device(r));
                },
                [&] { just_store(y[r], pl::device(r)); });
          }
        });
      });
}

TEST(CommGroupErrors, AValidPairCompiles) {
  EXPECT_EQ(compile_error(program([](const pld::CommDomain& d) {
                            pld::comm_group(d, {0, 1});
                          }),
                          3),
            "compiled without error");
  EXPECT_EQ(compile_error(program([](const pld::CommDomain& d) { pld::comm_group(d, 0, 2); }), 5),
            "compiled without error");
}

TEST(CommGroupErrors, AViewDispatchedToARankOutsideItsDomain) {
  EXPECT_EQ(
      compile_error(program(
                        [](const pld::CommDomain& d) {
                          pld::comm_group(d, {0, 1});
                        },
                        true),
                    3),
      "compile error: function 'host' (host): dispatch of 'per_rank', argument 1 ('signal'): a "
      "view of window buffer 'signal' of comm domain 'pair' is dispatched to rank 2, which is in "
      "none of its groups ({0, 1}); dispatch it only to the ranks of its domain");
}

TEST(CommGroupErrors, OverlappingGroupsInOneDomain) {
  EXPECT_EQ(compile_error(program([](const pld::CommDomain& d) {
                            pld::comm_group(d, {0, 1});
                            pld::comm_group(d, {1, 2});
                          }),
                          3),
            "compile error: function 'host' (host): pld.comm_group of domain 'pair': rank 1 of the "
            "group {1, 2} is already in its group {0, 1}; the groups of one domain are disjoint "
            "(declare another domain for an overlapping group)");
}

TEST(CommGroupErrors, GroupsOfDifferentSizes) {
  EXPECT_EQ(compile_error(program([](const pld::CommDomain& d) {
                            pld::comm_group(d, {0, 1});
                            pld::comm_group(d, 2, 3);
                          }),
                          5),
            "compile error: function 'host' (host): pld.comm_group of domain 'pair': the group {2, "
            "3, 4} has 3 ranks, but the domain's first group {0, 1} has 2; the groups of one "
            "domain have one size (its kernels are compiled once for it)");
}

TEST(CommGroupErrors, ARankOutsideTheWorld) {
  EXPECT_EQ(compile_error(program([](const pld::CommDomain& d) {
                            pld::comm_group(d, {0, 3});
                          }),
                          3),
            "compile error: function 'host' (host): pld.comm_group of domain 'pair': rank 3 of the "
            "group {0, 3} is out of range [0, 3) for P = 3");
  // A group from a negative rank with a huge count: named at once.
  EXPECT_EQ(
      compile_error(
          program([](const pld::CommDomain& d) { pld::comm_group(d, -5, std::int64_t{1} << 40); }),
          3),
      "compile error: function 'host' (host): pld.comm_group of domain 'pair': rank -5 of the "
      "group {-5} is out of range [0, 3) for P = 3");
  // A strided group that runs past P, named by its first rank outside.
  EXPECT_EQ(
      compile_error(program([](const pld::CommDomain& d) { pld::comm_group(d, 0, 2, 3); }), 3),
      "compile error: function 'host' (host): pld.comm_group of domain 'pair': rank 3 of the "
      "group {0, 3} is out of range [0, 3) for P = 3");
}

TEST(CommGroupErrors, ARankTwiceInAGroup) {
  EXPECT_EQ(
      compile_error(program([](const pld::CommDomain& d) {
                      pld::comm_group(d, {1, 1});
                    }),
                    3),
      "compile error: function 'host' (host): pld.comm_group of domain 'pair': rank 1 appears "
      "twice in the group {1, 1}");
}

TEST(CommGroupErrors, ACountOrStrideBelowOne) {
  EXPECT_EQ(compile_error(program([](const pld::CommDomain& d) { pld::comm_group(d, 0, 0); }), 3),
            "compile error: function 'host' (host): pld.comm_group of domain 'pair': the count is "
            "0; a group needs at least one rank");
  EXPECT_EQ(
      compile_error(program([](const pld::CommDomain& d) { pld::comm_group(d, 0, 2, 0); }), 3),
      "compile error: function 'host' (host): pld.comm_group of domain 'pair': the stride is "
      "0; it must be positive");
}

TEST(CommGroupErrors, AGroupAfterTheDomainsFirstBuffer) {
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [](pl::Value y) {
        const pld::CommDomain pair = pld::comm_domain("pair");
        pld::comm_group(pair, {0, 1});
        auto signal = pld::alloc_window_buffer("signal", {2, 1}, pl::INT32, pair);
        pld::comm_group(pair, {2, 3});
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(y[r], pld::window(signal, {2, 1}, pl::INT32), pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 4),
            "compile error: function 'host' (host): pld.comm_group of domain 'pair': the domain "
            "already has a window buffer; add every group before the first "
            "pld::alloc_window_buffer in it");
}

TEST(CommGroupErrors, ABufferInADomainWithoutGroups) {
  EXPECT_EQ(compile_error(program([](const pld::CommDomain&) {}), 3),
            "compile error: function 'host' (host): pld.alloc_window_buffer 'signal': comm domain "
            "'pair' has no groups; add them with pld::comm_group before allocating in it");
}

TEST(CommGroupErrors, ADomainDeclaredTwiceOrInALoop) {
  const pl::HostFunction twice =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [](pl::Value y) {
        pld::comm_domain("pair");
        pld::comm_domain("pair");
        pl::range(pld::world_size(), [&](pl::Scalar r) { just_store(y[r], pl::device(r)); });
      });
  EXPECT_EQ(compile_error(twice, 2),
            "compile error: function 'host' (host): comm domain 'pair' is declared twice");
  const pl::HostFunction in_loop =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [](pl::Value y) {
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pld::comm_domain("pair");
          just_store(y[r], pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(in_loop, 2),
            "compile error: function 'host' (host): pld.comm_domain 'pair' is inside a loop: "
            "declare each domain once, above the loops that add its groups");
}

// A kernel whose collective shapes follow P is refused on a domain's
// windows: there the count is the group size.
TEST(CommGroupErrors, ASignalSizedForPInAGroupOfTwo) {
  const pl::Function kernel = pl::jit::incore(
      "world_sized", {pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))},
      [](pl::Value signal) { signal = pld::tensor::barrier(signal); });
  const pl::Function orch = pl::jit::orchestration_for("world_sized_rank", kernel);
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [orch](pl::Value) {
        const pld::CommDomain pairs = pld::comm_domain("pairs");
        pl::range(NR / 2, [&](pl::Scalar k) { pld::comm_group(pairs, 2 * k, 2); });
        auto signal = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32, pairs);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(pld::window(signal, {NR, 1}, pl::INT32), pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 4),
            "compile error: function 'world_sized' (incore), op pld.tensor.barrier: the signal "
            "must be [G, 1] INT32, which is [2, 1] at G = 2 (the group size of domain 'pairs'), "
            "got [4, 1]");
}

TEST(CommGroupErrors, ACollectiveOverWindowsOfTwoDomains) {
  const pl::Function kernel = pl::jit::incore(
      "mixed",
      {pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor({2, 1}, pl::INT32))},
      [](pl::Value data, pl::Value signal) { data = pld::tensor::allreduce(data, signal); });
  const pl::Function orch = pl::jit::orchestration_for("mixed_rank", kernel);
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [orch](pl::Value) {
        const pld::CommDomain pair = pld::comm_domain("pair");
        pld::comm_group(pair, {0, 1});
        auto data = pld::alloc_window_buffer("data", {1, S}, pl::FP32, pair);
        auto signal = pld::alloc_window_buffer("signal", {2, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(pld::window(data, {1, S}, pl::FP32), pld::window(signal, {2, 1}, pl::INT32),
               pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'mixed' (incore), op pld.tensor.allreduce: the data is a view "
            "in domain 'pair', but the signal is a view in the world; a collective's windows must "
            "be in one domain");
}

TEST(CommGroupErrors, AHostCollectiveOverWindowsOfTwoDomains) {
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [](pl::Value y) {
        const pld::CommDomain pair = pld::comm_domain("pair");
        pld::comm_group(pair, {0, 1});
        auto data = pld::alloc_window_buffer("data", {1, S}, pl::FP32);
        auto signal = pld::alloc_window_buffer("signal", {2, 1}, pl::INT32, pair);
        pl::range(pld::world_size(), [&](pl::Scalar r) { just_store(y[r], pl::device(r)); });
        pld::tensor::allreduce(pld::window(data, {1, S}, pl::FP32),
                               pld::window(signal, {2, 1}, pl::INT32));
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'host' (host): pld.tensor.allreduce: argument 1 is a view of "
            "'signal' in comm domain 'pair', but the arguments before it are in the world; a "
            "collective's windows must be in one domain");
}

TEST(CommGroupErrors, AWindowVariableKeepsItsDomain) {
  const pl::Function kernel =
      pl::jit::incore("rebind",
                      {pl::InOut("grouped", pld::DistributedTensor({1, S}, pl::FP32)),
                       pl::InOut("world", pld::DistributedTensor({1, S}, pl::FP32))},
                      [](pl::Value grouped, pl::Value world) { grouped = world; });
  const pl::Function orch = pl::jit::orchestration_for("rebind_rank", kernel);
  const pl::HostFunction host =
      pl::jit::host("host", {pl::InOut("y", pl::Tensor({NR, 1, S}, pl::FP32))}, [orch](pl::Value) {
        const pld::CommDomain pair = pld::comm_domain("pair");
        pld::comm_group(pair, {0, 1});
        auto grouped = pld::alloc_window_buffer("grouped", {1, S}, pl::FP32, pair);
        auto world = pld::alloc_window_buffer("world", {1, S}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(pld::window(grouped, {1, S}, pl::FP32), pld::window(world, {1, S}, pl::FP32),
               pl::device(r));
        });
      });
  EXPECT_EQ(compile_error(host, 2),
            "compile error: function 'rebind' (incore), op assign: 'grouped' is a view in domain "
            "'pair', and a view in the world is assigned to it; a window variable keeps its comm "
            "domain");
}

}  // namespace
