// source_location_run_test.cpp — run errors, deadlock reports and race
// reports name the op with the line the user wrote it on ("op
// pld.system.wait at source_location_run_test.cpp:LINE"), exactly.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <string>

namespace {

constexpr std::int64_t ROW = 8;
const pl::Dim NR = pl::dynamic("NR");

std::string at(int line) { return " at source_location_run_test.cpp:" + std::to_string(line); }

// The error a run of `host` at P = 3 ends with (one worker, ranks in order,
// so the text is stable), or what happened instead.
std::string run_error(const pl::HostFunction& host, bool check_races) {
  anyp::RunConfig config = anyp::RunConfig::for_world_size(3);
  config.workers = 1;
  config.check_races = check_races;
  const anyp::HostTensor x = anyp::HostTensor::zeros({3, 1, ROW}, pl::FP32);
  try {
    host.compile({x}, config)(x);
  } catch (const anyp::Error& e) {
    return e.what();
  }
  return "ran without error";
}

// host(x [NR, 1, ROW]) dispatching `kernel(x[r], window)` to every rank,
// with a [NR, ROW] INT32 window that serves as data and signal.
pl::HostFunction host_of(const pl::Function& kernel) {
  const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host("host", {pl::InOut("x", pl::Tensor({NR, 1, ROW}, pl::FP32))},
                       [per_rank](pl::Value x) {
                         auto buf = pld::alloc_window_buffer("w", {NR, ROW}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], pld::window(buf, {NR, ROW}, pl::INT32), pl::device(r));
                         });
                       });
}

pl::Function kernel(const std::string& name,
                    const std::function<void(pl::Value, pl::Value)>& body) {
  return pl::jit::incore(name,
                         {pl::InOut("x", pl::Tensor({1, ROW}, pl::FP32)),
                          pl::InOut("w", pld::DistributedTensor({NR, ROW}, pl::INT32))},
                         body);
}

int wait_line = 0;
const auto waits_forever = kernel("waits_forever", [](pl::Value, pl::Value w) {
  pl::Scalar r = pld::rank(pld::get_comm_ctx(w));
  wait_line = __LINE__ + 1;
  pld::system::wait(w, {r, 0}, 1, pld::WaitCmp::Ge);
});

TEST(SourceLocationRun, ADeadlockReportNamesTheWaitsLine) {
  const std::string report = run_error(host_of(waits_forever), false);
  EXPECT_NE(report.find("rank 0: function 'waits_forever', op pld.system.wait" + at(wait_line) +
                        ": waits for signal 'w' cell"),
            std::string::npos)
      << report;
}

int notify_line = 0;
const auto notifies_too_far = kernel("notifies_too_far", [](pl::Value, pl::Value w) {
  pl::Scalar r = pld::rank(pld::get_comm_ctx(w));
  notify_line = __LINE__ + 1;
  pld::system::notify(w, r + 5, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
});

TEST(SourceLocationRun, ARunErrorNamesTheOpsLine) {
  const std::string error = run_error(host_of(notifies_too_far), false);
  EXPECT_EQ(error.substr(0, error.find(": peer")),
            "run error: rank 0 (device 0), function 'notifies_too_far', op pld.system.notify" +
                at(notify_line));
}

// Rank r writes row 0 of its right neighbour's window and of its own, with
// nothing ordering the two writes into one window.
int store_line = 0, local_line = 0;
const auto stores_unordered = kernel("stores_unordered", [](pl::Value, pl::Value w) {
  pl::Scalar r = pld::rank(pld::get_comm_ctx(w));
  store_line = __LINE__ + 1;
  pld::tile::remote_store(pl::full({1, ROW}, 1, pl::INT32), w, (r + 1) % 3, {0, 0});
  local_line = __LINE__ + 1;
  w = pl::store(pl::full({1, ROW}, 2, pl::INT32), {0, 0}, w);
});

TEST(SourceLocationRun, ARaceReportNamesBothOpsLines) {
  const std::string report = run_error(host_of(stores_unordered), true);
  EXPECT_NE(report.find("function 'stores_unordered', op pld.tile.remote_store" + at(store_line)),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("function 'stores_unordered', op pl.store" + at(local_line)),
            std::string::npos)
      << report;
}

}  // namespace
