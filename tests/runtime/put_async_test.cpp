// put_async_test.cpp — pld::tensor::put_async and pld::system::wait_async
// (issue 12, item 6; PyPTO's put_async / wait_async_event): a ring shift
// whose put overlaps tile math, in the whole and the region form, at
// P = 2, 3, 5, 8, race-checked; the IR it records; and the mistakes: a
// notify before the wait (the peer reads early: a race report), a write to
// the source while the put is in flight, a kernel that returns with a put
// in flight, and a second wait on one event (run errors naming the op).
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t S = 16;
const pl::Dim NR = pl::dynamic("NR");

using Body = std::function<void(pl::Value&, pl::Value&, pl::Value&, pl::Value&, pl::Value&)>;

// host(x, y, z) -> kernel(x, y, z, inbox window [2, S], flag [1, 1]) on every rank.
pl::HostFunction program(const std::string& name, const Body& body) {
  const auto kernel = pl::jit::incore(
      name,
      {pl::InOut("x", pl::Tensor({1, S}, pl::FP32)), pl::Out("y", pl::Tensor({1, S}, pl::FP32)),
       pl::Out("z", pl::Tensor({1, S}, pl::FP32)),
       pl::InOut("inbox", pld::DistributedTensor({2, S}, pl::FP32)),
       pl::InOut("flag", pld::DistributedTensor({1, 1}, pl::INT32))},
      [body](pl::Value x, pl::Value y, pl::Value z, pl::Value inbox, pl::Value flag) {
        body(x, y, z, inbox, flag);
      });
  const auto orch = pl::jit::orchestration_for(name + "_rank", kernel);
  return pl::jit::host(name,
                       {pl::InOut("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::Out("z", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y, pl::Value z) {
                         auto inbox = pld::alloc_window_buffer("inbox", {2, S}, pl::FP32);
                         auto flag = pld::alloc_window_buffer("flag", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], y[r], z[r], pld::window(inbox, {2, S}, pl::FP32),
                                pld::window(flag, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

pl::Scalar right_of(const pl::Value& window) {
  const pld::CommCtx ctx = pld::get_comm_ctx(window);
  return (pld::rank(ctx) + 1) % pld::nranks(ctx);
}

// The ring shift: put x into the right neighbour's inbox row 0 (whole
// rows) or row 1 (region form), compute z = 3x while it flies, wait, then
// tell the neighbour.
Body ring_shift(bool region) {
  return [region](pl::Value& x, pl::Value& y, pl::Value& z, pl::Value& inbox, pl::Value& flag) {
    const pl::Scalar right = right_of(inbox);
    const pld::AsyncEvent sent =
        region ? pld::tensor::put_async(inbox, right, x, {1, 0}, {0, 0}, {1, S})
               : pld::tensor::put_async(inbox, right, x, {0, 0}, {0, 0}, {1, S});
    z = pl::store(pl::mul(pl::load(x, {0, 0}, {1, S}), 3.0), {0, 0}, z);  // overlaps the put
    pld::system::wait_async(sent);
    pld::system::notify(flag, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
    pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Ge);
    y = pl::store(pl::load(inbox, {region ? 1 : 0, 0}, {1, S}), {0, 0}, y);
  };
}

struct Shifted {
  anyp::HostTensor x, y, z;
};

Shifted run(const pl::HostFunction& host, std::int64_t P, bool races = true) {
  anyp::InputGenerator gen(71);
  Shifted r{gen.uniform({P, 1, S}), anyp::HostTensor::zeros({P, 1, S}, pl::FP32),
            anyp::HostTensor::zeros({P, 1, S}, pl::FP32)};
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = races;
  config.workers = 1;
  host.compile({r.x, r.y, r.z}, config)(r.x, r.y, r.z);
  return r;
}

class PutAsync : public testing::TestWithParam<std::int64_t> {};

TEST_P(PutAsync, ARingShiftOverlapsItsPutWithTileMath) {
  const std::int64_t P = GetParam();
  for (bool region : {false, true}) {
    const Shifted r = run(program(region ? "shift_region" : "shift_rows", ring_shift(region)), P);
    for (std::int64_t k = 0; k < P; ++k) {
      for (std::int64_t j = 0; j < S; ++j) {
        ASSERT_EQ(r.y.at({k, 0, j}), r.x.at({(k + P - 1) % P, 0, j})) << k << " " << j;
        ASSERT_EQ(r.z.at({k, 0, j}),
                  static_cast<double>(static_cast<float>(r.x.at({k, 0, j})) * 3.0f));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(P, PutAsync, testing::Values(2, 3, 5, 8));

TEST(PutAsyncIr, TheEventIsAScalarOfThePutAndTheWaitNamesIt) {
  const pl::Function k =
      pl::jit::incore("ir_probe",
                      {pl::In("x", pl::Tensor({1, S}, pl::FP32)),
                       pl::InOut("inbox", pld::DistributedTensor({1, S}, pl::FP32))},
                      [](pl::Value x, pl::Value inbox) {
                        const pld::AsyncEvent e = pld::tensor::put_async(inbox, 1, x);
                        pld::system::wait_async(e);
                      });
  const std::string ir = k.ir_text();
  EXPECT_NE(ir.find("%2 = pld.tensor.put_async %inbox <- %x peer=1 atomic=None"), std::string::npos)
      << ir;
  EXPECT_NE(ir.find("pld.system.wait_async %2"), std::string::npos) << ir;
}

std::string failure(const Body& body, bool races) {
  try {
    run(program("mistake", body), 3, races);
    return "ran without error";
  } catch (const anyp::RunError& e) {
    return anyp_test::without_locations(e.what());
  }
}

TEST(PutAsyncMistakes, ANotifyBeforeTheWaitLetsThePeerReadEarly) {
  const std::string report = failure(
      [](pl::Value& x, pl::Value& y, pl::Value&, pl::Value& inbox, pl::Value& flag) {
        const pl::Scalar right = right_of(inbox);
        const pld::AsyncEvent sent =
            pld::tensor::put_async(inbox, right, x, {0, 0}, {0, 0}, {1, S});
        pld::system::notify(flag, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);  // too early
        pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Ge);
        y = pl::store(pl::load(inbox, {0, 0}, {1, S}), {0, 0}, y);
        pld::system::wait_async(sent);
      },
      true);
  EXPECT_EQ(report.rfind("race report: ", 0), 0u) << report;
  EXPECT_NE(report.find("op pld.tensor.put_async"), std::string::npos) << report;
  EXPECT_NE(report.find("op pl.load"), std::string::npos) << report;
}

TEST(PutAsyncMistakes, WritingTheSourceWhileThePutIsInFlight) {
  EXPECT_EQ(failure(
                [](pl::Value& x, pl::Value&, pl::Value&, pl::Value& inbox, pl::Value&) {
                  const pld::AsyncEvent sent =
                      pld::tensor::put_async(inbox, right_of(inbox), x, {0, 0}, {0, 0}, {1, S});
                  x = pl::store(pl::full({1, S}, 0.0, pl::FP32), {0, 0}, x);
                  pld::system::wait_async(sent);
                },
                false),
            "run error: rank 0 (device 0), function 'mistake', op pl.store: it writes host tensor "
            "'x', the source of the pld.tensor.put_async in function 'mistake' (event 1) still "
            "in flight; call pld::system::wait_async on its event before writing the source");
}

TEST(PutAsyncMistakes, AKernelThatReturnsWithAPutInFlight) {
  EXPECT_EQ(failure(
                [](pl::Value& x, pl::Value&, pl::Value&, pl::Value& inbox, pl::Value&) {
                  pld::tensor::put_async(inbox, right_of(inbox), x, {0, 0}, {0, 0}, {1, S});
                },
                false),
            "run error: rank 0 (device 0), function 'mistake', op pld.tensor.put_async: the "
            "kernel ended with this put in flight (event 1); wait for it with "
            "pld::system::wait_async before the kernel returns");
}

TEST(PutAsyncMistakes, AKernelThatReturnsWithAPutInFlightFailsBeforeTheNextKernel) {
  // Kernel "forgets" returns with its put in flight; "overwrites" (the next
  // kernel of the orchestration) would write the put's source: the error
  // names the first kernel, at its end.
  const auto forgets =
      pl::jit::incore("forgets",
                      {pl::InOut("x", pl::Tensor({1, S}, pl::FP32)),
                       pl::InOut("inbox", pld::DistributedTensor({2, S}, pl::FP32))},
                      [](pl::Value x, pl::Value inbox) {
                        pld::tensor::put_async(inbox, right_of(inbox), x, {0, 0}, {0, 0}, {1, S});
                      });
  const auto overwrites = pl::jit::incore(
      "overwrites", {pl::InOut("x", pl::Tensor({1, S}, pl::FP32))}, [](pl::Value x) {
        x = pl::store(pl::full({1, S}, 0.0, pl::FP32), {0, 0}, x);
      });
  const auto orch =
      pl::jit::orchestration("two_kernels",
                             {pl::InOut("x", pl::Tensor({1, S}, pl::FP32)),
                              pl::InOut("inbox", pld::DistributedTensor({2, S}, pl::FP32))},
                             [forgets, overwrites](pl::Value x, pl::Value inbox) {
                               forgets(x, inbox);
                               overwrites(x);
                             });
  const pl::HostFunction host = pl::jit::host(
      "two_kernels", {pl::InOut("x", pl::Tensor({NR, 1, S}, pl::FP32))}, [orch](pl::Value x) {
        auto inbox = pld::alloc_window_buffer("inbox", {2, S}, pl::FP32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          orch(x[r], pld::window(inbox, {2, S}, pl::FP32), pl::device(r));
        });
      });
  anyp::HostTensor x = anyp::HostTensor::zeros({2, 1, S}, pl::FP32);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(2);
  config.workers = 1;
  try {
    host.compile({x}, config)(x);
    ADD_FAILURE() << "ran without error";
  } catch (const anyp::RunError& e) {
    EXPECT_EQ(std::string(anyp_test::without_locations(e.what())),
              "run error: rank 0 (device 0), function 'forgets', op pld.tensor.put_async: the "
              "kernel ended with this put in flight (event 1); wait for it with "
              "pld::system::wait_async before the kernel returns");
  }
}

TEST(PutAsyncMistakes, APutIntoTheOwnWindowOverTheSourceOfAnother) {
  // The first put lands in the own inbox row 0 at its wait, while the
  // second put still sends that row to the neighbour.
  EXPECT_EQ(failure(
                [](pl::Value& x, pl::Value&, pl::Value&, pl::Value& inbox, pl::Value&) {
                  const pl::Scalar me = pld::rank(pld::get_comm_ctx(inbox));
                  const pld::AsyncEvent to_self =
                      pld::tensor::put_async(inbox, me, x, {0, 0}, {0, 0}, {1, S});
                  const pld::AsyncEvent onwards =
                      pld::tensor::put_async(inbox, right_of(inbox), inbox, {1, 0}, {0, 0}, {1, S});
                  pld::system::wait_async(to_self);
                  pld::system::wait_async(onwards);
                },
                false),
            "run error: rank 0 (device 0), function 'mistake', op pld.tensor.put_async: it writes "
            "rank 0's window 'inbox', the source of the pld.tensor.put_async in function "
            "'mistake' (event 2) still in flight; call pld::system::wait_async on its event "
            "before writing the source");
}

TEST(PutAsyncMistakes, WaitingTwiceOnOneEvent) {
  EXPECT_EQ(failure(
                [](pl::Value& x, pl::Value&, pl::Value&, pl::Value& inbox, pl::Value&) {
                  const pld::AsyncEvent sent =
                      pld::tensor::put_async(inbox, right_of(inbox), x, {0, 0}, {0, 0}, {1, S});
                  pld::system::wait_async(sent);
                  pld::system::wait_async(sent);
                },
                false),
            "run error: rank 0 (device 0), function 'mistake', op pld.system.wait_async: event 1 "
            "is not a put_async in flight: it was waited for already, or it is not the event of "
            "a pld::tensor::put_async of this kernel");
}

}  // namespace
