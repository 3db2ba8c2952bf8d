// signal_buffers_test.cpp — which window buffers the compiler marks as
// signals and as credit-only (compiler/mark_signal_buffers.cpp), read from
// the window layout text: a buffer used only by AtomicAdd notifies and Ge
// waits holds credits only (the MPI engine may complete them together); a
// Set notify, another comparison, or any data access of the buffer (here or
// in another dispatch) makes it an ordinary signal; a buffer no notify or
// wait reaches is no signal.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <functional>
#include <string>
#include <vector>

namespace {

using pld::NotifyOp;
using pld::WaitCmp;

constexpr std::int64_t P = 3;
const pl::Dim NR = pl::dynamic("NR");

// A kernel over a data window [1, 8] FP32 and a signal window [NR, 1].
using Body = std::function<void(pl::Value&, pl::Value&)>;

std::string layout_of(const std::string& name, const Body& body, const Body& second = {}) {
  const std::vector<pl::Param> params = {
      pl::InOut("data", pld::DistributedTensor({1, 8}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      name + "_k", params, [body](pl::Value data, pl::Value signal) { body(data, signal); });
  const auto per_rank = pl::jit::orchestration_for(name + "_o", kernel);
  const auto kernel2 =
      pl::jit::incore(name + "_k2", params, [second](pl::Value data, pl::Value signal) {
        if (second) second(data, signal);
      });
  const auto per_rank2 = pl::jit::orchestration_for(name + "_o2", kernel2);
  const pl::HostFunction host =
      pl::jit::host(name, {pl::In("x", pl::Tensor({NR, 1, 8}, pl::FP32))}, [&](pl::Value) {
        auto data_buf = pld::alloc_window_buffer("data", {1, 8}, pl::FP32);
        auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          per_rank(pld::window(data_buf, {1, 8}, pl::FP32),
                   pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
          if (second) {
            per_rank2(pld::window(data_buf, {1, 8}, pl::FP32),
                      pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
          }
        });
      });
  const anyp::HostTensor x = anyp::HostTensor::zeros({P, 1, 8}, pl::FP32);
  return host.compile({x}, anyp::RunConfig::for_world_size(P)).window_layout();
}

// The signal buffer's line of the layout ("" if none).
std::string signal_line(const std::string& layout) {
  const auto at = layout.find("  signal:");
  return at == std::string::npos ? "" : layout.substr(at, layout.find('\n', at) - at);
}

const std::string kCredits = "  signal: offset 32, slot 32 B, used 12 B, signal (credits only)";
const std::string kSignal = "  signal: offset 32, slot 32 B, used 12 B, signal";

TEST(SignalBuffers, AHandRolledBarrierHoldsCreditsOnly) {
  const std::string layout = layout_of("hbar", [](pl::Value&, pl::Value& signal) {
    pl::Scalar r = pld::rank(pld::get_comm_ctx(signal));
    pl::range(pld::nranks(pld::get_comm_ctx(signal)), [&](pl::Scalar p) {
      pld::system::notify(signal, p, {r, 0}, 1, NotifyOp::AtomicAdd);
    });
    pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
  });
  EXPECT_EQ(signal_line(layout), kCredits);
  // The data window is no signal.
  EXPECT_NE(layout.find("  data: offset 0, slot 32 B, used 32 B\n"), std::string::npos) << layout;
}

TEST(SignalBuffers, BuiltinCollectivesHoldCreditsOnly) {
  EXPECT_EQ(signal_line(layout_of("builtin",
                                  [](pl::Value& data, pl::Value& signal) {
                                    signal = pld::tensor::barrier(signal);
                                    data = pld::tensor::allreduce(data, signal);
                                  })),
            kCredits);
}

TEST(SignalBuffers, ASetNotifyMakesAnOrdinarySignal) {
  EXPECT_EQ(signal_line(layout_of("set",
                                  [](pl::Value&, pl::Value& signal) {
                                    pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::Set);
                                    pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                                  })),
            kSignal);
}

TEST(SignalBuffers, AnEqWaitMakesAnOrdinarySignal) {
  EXPECT_EQ(signal_line(layout_of("eq",
                                  [](pl::Value&, pl::Value& signal) {
                                    pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
                                    pld::system::wait(signal, {0, 0}, 1, WaitCmp::Eq);
                                  })),
            kSignal);
}

TEST(SignalBuffers, AReadOfTheSignalMakesAnOrdinarySignal) {
  EXPECT_EQ(signal_line(layout_of("read",
                                  [](pl::Value&, pl::Value& signal) {
                                    pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
                                    pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                                    pl::Scalar seen = pl::read(signal, {0, 0});
                                    (void)seen;
                                  })),
            kSignal);
}

TEST(SignalBuffers, ADataUseInAnotherDispatchCounts) {
  // The first dispatch only counts credits; the second reads a cell of the
  // signal as data: the buffer is an ordinary signal.
  EXPECT_EQ(signal_line(layout_of(
                "two",
                [](pl::Value&, pl::Value& signal) {
                  pld::system::notify(signal, 0, {0, 0}, 1, NotifyOp::AtomicAdd);
                  pld::system::wait(signal, {0, 0}, 1, WaitCmp::Ge);
                },
                [](pl::Value&, pl::Value& signal) {
                  pl::Scalar cell = pl::read(signal, {0, 0});
                  (void)cell;
                })),
            kSignal);
}

}  // namespace
