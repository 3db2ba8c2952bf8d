// verify_schedules_test.cpp — anyp::verify_schedules (anyp/verify.hpp), the
// loop behind the examples' --verify: programs whose number of Mazurkiewicz
// traces is counted by hand (independent ranks: 1; P ranks Setting one cell:
// P!; P ranks adding to one cell: 1; a chain of handshakes: 1), checked
// exactly at several P; a deadlock that only some orders of two adds reach,
// found and replayed with RunConfig::replay_schedule; the budget's message;
// and the replay schedule's own errors.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <anyp/verify.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t S = 8;  // FP32 elements per rank
const pl::Dim NR = pl::dynamic("NR");

std::int64_t factorial(std::int64_t n) { return n <= 1 ? 1 : n * factorial(n - 1); }

// host(x, y): a window `flag` of one INT32 cell per rank, and
// kernel(x[r], y[r], flag) on every rank r.
using Body = std::function<void(pl::Value x, pl::Value y, pl::Value flag)>;
pl::HostFunction program(const std::string& name, const Body& body) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)), pl::Out("y", pl::Tensor({1, S}, pl::FP32)),
      pl::InOut("flag", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(name, params, body);
  const auto orch = pl::jit::orchestration_for(name + "_rank", kernel);
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [orch](pl::Value x, pl::Value y) {
                         auto flag = pld::alloc_window_buffer("flag", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], y[r], pld::window(flag, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

void copy_row(pl::Value x, pl::Value& y) { y = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, y); }

// Every rank copies its row: no step depends on another rank's.
const pl::HostFunction& independent() {
  static const pl::HostFunction p =
      program("independent", [](pl::Value x, pl::Value y, pl::Value) { copy_row(x, y); });
  return p;
}

// Every rank Sets rank 0's cell to its rank + 1: the last Set wins, so
// every order of the P Sets is its own trace.
const pl::HostFunction& racing_sets() {
  static const pl::HostFunction p =
      program("racing_sets", [](pl::Value x, pl::Value y, pl::Value flag) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(flag));
        copy_row(x, y);
        pld::system::notify(flag, 0, {0, 0}, me + 1, pld::NotifyOp::Set);
      });
  return p;
}

// Every rank adds 1 to rank 0's cell, which then waits for P: integer adds
// commute, so there is one trace.
const pl::HostFunction& counting_adds() {
  static const pl::HostFunction p =
      program("counting_adds", [](pl::Value x, pl::Value y, pl::Value flag) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(flag));
        const pl::Scalar n = pld::nranks(pld::get_comm_ctx(flag));
        copy_row(x, y);
        pld::system::notify(flag, 0, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
        pl::if_(me == 0, [&] { pld::system::wait(flag, {0, 0}, n, pld::WaitCmp::Eq); });
      });
  return p;
}

// Rank r > 0 waits for its cell, then every rank r < P - 1 raises rank
// r + 1's: a chain of P - 1 handshakes, one trace.
const pl::HostFunction& handshake_chain() {
  static const pl::HostFunction p = program("handshake_chain", [](pl::Value x, pl::Value y,
                                                                  pl::Value flag) {
    const pl::Scalar me = pld::rank(pld::get_comm_ctx(flag));
    const pl::Scalar n = pld::nranks(pld::get_comm_ctx(flag));
    pl::if_(me > 0, [&] { pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Eq); });
    copy_row(x, y);
    pl::if_(me < n - 1, [&] { pld::system::notify(flag, me + 1, {0, 0}, 1, pld::NotifyOp::Set); });
  });
  return p;
}

// Ranks 1 and 2 each add 1 to rank 0's cell; rank 0 waits for it to equal 1,
// then 2. When both adds land before rank 0's first check, the cell is 2
// and the wait for 1 never holds: a deadlock in some orders only.
const pl::HostFunction& eq_wait_between_adds() {
  static const pl::HostFunction p =
      program("eq_wait_between_adds", [](pl::Value x, pl::Value y, pl::Value flag) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(flag));
        copy_row(x, y);
        pl::if_(
            me == 0,
            [&] {
              pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Eq);
              pld::system::wait(flag, {0, 0}, 2, pld::WaitCmp::Eq);
            },
            [&] {
              pl::if_(me <= 2, [&] {
                pld::system::notify(flag, 0, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
              });
            });
      });
  return p;
}

struct Verified {
  anyp::VerifyResult result;
  std::int64_t wrong = 0;  // runs whose y was not x
};

Verified verify(const pl::HostFunction& fn, std::int64_t P, std::int64_t budget = 100000) {
  anyp::InputGenerator gen(5);
  const anyp::HostTensor x = gen.uniform({P, 1, S});
  Verified v;
  v.result =
      anyp::verify_schedules({.config = anyp::RunConfig::for_world_size(P), .budget = budget},
                             [&](const anyp::RunConfig& c) {
                               anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
                               fn.compile({x, y}, c)(x, y);
                               const bool ok = anyp::equal_exact(y, x);
                               v.wrong += ok ? 0 : 1;
                               return anyp::ScheduleOutcome{ok ? 0 : 1};
                             });
  return v;
}

class VerifyTraces : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(VerifyTraces, IndependentRanksAreOneTraceAndOneSchedule) {
  const Verified v = verify(independent(), GetParam());
  EXPECT_TRUE(v.result.complete);
  EXPECT_EQ(v.result.traces, 1);
  EXPECT_EQ(v.result.schedules, 1);
  EXPECT_GT(v.result.pruned, 0);  // every other order of the ranks' steps, cut
  EXPECT_EQ(v.result.text(), "verified: 1 trace (1 schedule run, " +
                                 std::to_string(v.result.pruned) +
                                 " pruned), no deadlock, no race, golden holds");
}

TEST_P(VerifyTraces, AddsIntoOneCellAreOneTrace) {
  const Verified v = verify(counting_adds(), GetParam());
  EXPECT_TRUE(v.result.complete) << v.result.text() << v.result.error;
  EXPECT_EQ(v.result.traces, 1);
  // The wait's reversals with the adds would only park it: not run.
  EXPECT_EQ(v.result.schedules, 1);
  EXPECT_EQ(v.wrong, 0);
}

TEST_P(VerifyTraces, AChainOfHandshakesIsOneTrace) {
  const Verified v = verify(handshake_chain(), GetParam());
  EXPECT_TRUE(v.result.complete) << v.result.text() << v.result.error;
  EXPECT_EQ(v.result.traces, 1);
  EXPECT_EQ(v.result.schedules, 1);
}

INSTANTIATE_TEST_SUITE_P(P, VerifyTraces, ::testing::Values(2, 3, 4, 5, 8));

class VerifySets : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(VerifySets, PRanksSettingOneCellArePFactorialTraces) {
  const std::int64_t P = GetParam();
  const Verified v = verify(racing_sets(), P);
  EXPECT_TRUE(v.result.complete) << v.result.text() << v.result.error;
  EXPECT_EQ(v.result.traces, factorial(P));
  EXPECT_EQ(v.result.schedules, factorial(P));  // source-DPOR runs no trace twice here
  EXPECT_EQ(v.result.text(), "verified: " + std::to_string(factorial(P)) + " traces (" +
                                 std::to_string(factorial(P)) + " schedules run, " +
                                 std::to_string(v.result.pruned) +
                                 " pruned), no deadlock, no race, golden holds");
}

INSTANTIATE_TEST_SUITE_P(P, VerifySets, ::testing::Values(2, 3, 4, 5));

TEST(Verify, ADeadlockOnlySomeOrdersReachIsFoundAndReplayed) {
  for (const std::int64_t P : {3, 4}) {
    const Verified v = verify(eq_wait_between_adds(), P);
    ASSERT_FALSE(v.result.clean()) << v.result.text();
    EXPECT_FALSE(v.result.complete);
    EXPECT_EQ(v.result.code, 1);
    EXPECT_EQ(v.result.schedules, 2);  // the first schedule passes
    EXPECT_EQ(v.result.text(),
              "verify: schedule 2 failed (the exploration had covered 2 traces, this one's "
              "included)");
    EXPECT_NE(v.result.error.find("deadlock"), std::string::npos) << v.result.error;
    // The schedule it prints replays the deadlock.
    anyp::RunConfig replay = anyp::RunConfig::for_world_size(P);
    replay.replay_schedule = *v.result.failed_schedule;
    anyp::InputGenerator gen(5);
    const anyp::HostTensor x = gen.uniform({P, 1, S});
    anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
    EXPECT_THROW(eq_wait_between_adds().compile({x, y}, replay)(x, y), anyp::DeadlockError)
        << *v.result.failed_schedule;
    // The explorer's first schedule (op by op, the lowest ready agent first)
    // passes: only some orders deadlock (a free run may reach one).
    anyp::RunConfig first = anyp::RunConfig::for_world_size(P);
    first.replay_schedule = "0";
    EXPECT_NO_THROW(eq_wait_between_adds().compile({x, y}, first)(x, y));
  }
}

// Every rank adds its row (as `dtype`: x * 1000) into rank 0's window with
// an atomic Add and notifies it; rank 0 waits for all P and copies the sum
// out (as FP32). Adds of floats round by their order: P! traces; of
// integers, or of floats taken as commuting: 1.
pl::HostFunction sum_into_root(pl::DType dtype) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, S}, pl::FP32)), pl::Out("y", pl::Tensor({1, S}, pl::FP32)),
      pl::InOut("acc", pld::DistributedTensor({1, S}, dtype)),
      pl::InOut("flag", pld::DistributedTensor({1, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "sum_into_root", params, [dtype](pl::Value x, pl::Value y, pl::Value acc, pl::Value flag) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(flag));
        const pl::Scalar n = pld::nranks(pld::get_comm_ctx(flag));
        const pl::Tile mine = pl::cast(pl::mul(pl::load(x, {0, 0}, {1, S}), 1000.0), dtype);
        pld::tile::remote_store(mine, acc, 0, {0, 0}, pld::AtomicType::Add);
        pld::system::notify(flag, 0, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
        pl::if_(me == 0, [&] {
          pld::system::wait(flag, {0, 0}, n, pld::WaitCmp::Ge);
          y = pl::store(pl::cast(pl::load(acc, {0, 0}, {1, S}), pl::FP32), {0, 0}, y);
        });
      });
  const auto orch = pl::jit::orchestration_for("sum_into_root_rank", kernel);
  return pl::jit::host("sum_into_root",
                       {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [orch, dtype](pl::Value x, pl::Value y) {
                         auto acc = pld::alloc_window_buffer("acc", {1, S}, dtype);
                         auto flag = pld::alloc_window_buffer("flag", {1, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           orch(x[r], y[r], pld::window(acc, {1, S}, dtype),
                                pld::window(flag, {1, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

// verify_schedules of sum_into_root(dtype) at P; every run's y[0] is
// checked against the sum in double (within 1e-3: the adds' order rounds).
anyp::VerifyResult verify_sum(pl::DType dtype, std::int64_t P, bool float_adds_commute) {
  anyp::InputGenerator gen(9);
  const anyp::HostTensor x = gen.uniform({P, 1, S});
  const pl::HostFunction fn = sum_into_root(dtype);
  return anyp::verify_schedules(
      {.config = anyp::RunConfig::for_world_size(P), .float_adds_commute = float_adds_commute},
      [&](const anyp::RunConfig& c) {
        anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
        fn.compile({x, y}, c)(x, y);
        for (std::int64_t i = 0; i < S; ++i) {
          double sum = 0;
          for (std::int64_t r = 0; r < P; ++r) {
            const double v = static_cast<float>(x.get(r * S + i) * 1000.0f);
            sum += dtype == pl::INT32 ? std::trunc(v) : v;
          }
          if (std::abs(y.get(i) - sum) > 1e-3 * std::abs(sum)) return anyp::ScheduleOutcome{1};
        }
        return anyp::ScheduleOutcome{0};
      });
}

TEST(Verify, FloatAddsInEveryOrderUnlessTakenAsCommuting) {
  for (const std::int64_t P : {2, 3, 4}) {
    const anyp::VerifyResult ordered = verify_sum(pl::FP32, P, false);
    EXPECT_TRUE(ordered.complete) << ordered.text() << ordered.error;
    EXPECT_EQ(ordered.traces, factorial(P));
    EXPECT_EQ(ordered.schedules, factorial(P));
    const anyp::VerifyResult commuting = verify_sum(pl::FP32, P, true);
    EXPECT_EQ(commuting.text(), "verified: 1 trace (1 schedule run, " +
                                    std::to_string(commuting.pruned) +
                                    " pruned; floating-point adds taken as commuting), no "
                                    "deadlock, no race, golden holds");
    const anyp::VerifyResult integers = verify_sum(pl::INT32, P, false);
    EXPECT_TRUE(integers.complete) << integers.text() << integers.error;
    EXPECT_EQ(integers.traces, 1);
    EXPECT_EQ(integers.schedules, 1);
  }
}

TEST(Verify, TheBudgetIsNeverExceededAndSaysWhatWasCovered) {
  const Verified v = verify(racing_sets(), 4, 5);
  EXPECT_FALSE(v.result.complete);
  EXPECT_TRUE(v.result.clean());
  EXPECT_EQ(v.result.schedules, 5);
  EXPECT_EQ(v.result.text(), "not verified: budget of 5 schedules reached after covering " +
                                 std::to_string(v.result.traces) + " traces (" +
                                 std::to_string(v.result.pruned) + " pruned); raise the budget");
  EXPECT_EQ(v.result.traces, 5);
}

// Rank 0 waits for its cell first; rank 1 copies, then Sets it.
const pl::HostFunction& waits_first() {
  static const pl::HostFunction p =
      program("waits_first", [](pl::Value x, pl::Value y, pl::Value flag) {
        const pl::Scalar me = pld::rank(pld::get_comm_ctx(flag));
        pl::if_(me == 0, [&] { pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Eq); });
        copy_row(x, y);
        pl::if_(me == 1, [&] { pld::system::notify(flag, 0, {0, 0}, 1, pld::NotifyOp::Set); });
      });
  return p;
}

TEST(Verify, ARunThatDoesNotRepeatItselfIsARunErrorNotAProof) {
  // The first run is one program, the next another: the replayed prefix
  // finds other agents ready, which verify reports instead of going on.
  constexpr std::int64_t P = 2;
  anyp::InputGenerator gen(5);
  const anyp::HostTensor x = gen.uniform({P, 1, S});
  int runs = 0;
  const anyp::VerifyResult r = anyp::verify_schedules(
      {.config = anyp::RunConfig::for_world_size(P)}, [&](const anyp::RunConfig& c) {
        anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
        const pl::HostFunction& fn = runs++ == 0 ? racing_sets() : waits_first();
        fn.compile({x, y}, c)(x, y);
        return anyp::ScheduleOutcome{0};
      });
  EXPECT_FALSE(r.clean());
  EXPECT_EQ(r.schedules, 2);
  EXPECT_EQ(r.error,
            "run error: verify: step 2 of a replayed schedule found other agents ready than "
            "before; the program does not repeat itself under one schedule (it depends on "
            "something besides its inputs and the schedule)");
}

// What compiling and running `fn` at P = 2 under replay_schedule `schedule`
// throws as E ("" when it throws nothing).
template <class E>
std::string replay_error(const pl::HostFunction& fn, const std::string& schedule) {
  constexpr std::int64_t P = 2;
  anyp::InputGenerator gen(5);
  const anyp::HostTensor x = gen.uniform({P, 1, S});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, S}, pl::FP32);
  anyp::RunConfig c = anyp::RunConfig::for_world_size(P);
  c.replay_schedule = schedule;
  try {
    fn.compile({x, y}, c)(x, y);
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

TEST(ReplaySchedule, AnAgentThatIsNotReadyIsARunErrorNamingTheStep) {
  EXPECT_EQ(replay_error<anyp::RunError>(handshake_chain(), "1,5"),
            "run error: the schedule's step 2 runs agent 5, which is not ready then (ready: 0)");
  EXPECT_EQ(replay_error<anyp::RunError>(handshake_chain(), "1,0*4,1*4"),
            "");  // rank 1 parks first
}

TEST(ReplaySchedule, ABadScheduleTextIsAConfigErrorNamingTheItem) {
  EXPECT_EQ(replay_error<anyp::ConfigError>(independent(), "1*2,two"),
            "replay_schedule: 'two' is not an agent or agent*count (the agents in order, "
            "comma-separated)");
  for (const auto& [text, item] : std::vector<std::pair<std::string, std::string>>{
           {"0,x", "'x'"}, {"0*0", "'0*0'"}, {"1,-1", "'-1'"}, {"0,,1", "''"}, {"2*", "'2*'"}}) {
    EXPECT_EQ(replay_error<anyp::ConfigError>(independent(), text),
              "replay_schedule: " + item +
                  " is not an agent or agent*count (the agents in order, comma-separated)");
  }
}

}  // namespace
