// lower_bruck_all_to_all.hpp — Bruck's all_to_all as VM code
// (docs/collectives.md §3.7c), and the schedule facts its estimate shares.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "compiler/collective_emitter.hpp"

namespace anyp::compiler::collective {

// ceil(log2 P) rounds; round k packs the rows whose Bruck index has bit k
// set into one put to rank r + 2^k, through a scratch window of
// 3 floor(P / 2) rows the compiler adds; on the mesh's [P, 1] signal.
void lower_bruck_all_to_all(CollectiveEmitter& ce, const CollectiveCall& call);

// Round k's runs of Bruck indices with bit k set: [a, a + len) for run
// m = 0 .. runs - 1, a = (2m + 1)·2^k, len = min(2^k, P - a); `blocks`
// rows in all, packed run after run.
struct BruckRound {
  std::int64_t distance = 1;  // 2^k
  std::int64_t runs = 0;
  std::int64_t blocks = 0;
};
std::vector<BruckRound> bruck_all_to_all_rounds(std::int64_t P);

// The credits rank q receives in one call, by the sender's distance
// (sender - q mod P), each sender's in its program order: Ready(k) (round
// k's rows are in q's receive half) from q - 2^k, Free(k) (q may put round
// k's rows into the sender's receive half) from q + 2^k.
enum class BruckCredit { Ready, Free };
struct BruckCreditAt {
  BruckCredit kind;
  std::int64_t round;
};
std::map<std::int64_t, std::vector<BruckCreditAt>> bruck_all_to_all_credits(std::int64_t P);

// The count, among its sender's credits in one call, of credit `c`
// (1-based): what a Ge wait for it waits for.
std::int64_t bruck_credit_count(const std::map<std::int64_t, std::vector<BruckCreditAt>>& credits,
                                std::int64_t P, BruckCreditAt c);

// Whether rank x's rows of one run of round k wrap past row P - 1 (two
// copies instead of one): x and x + 1 both < P with bit k set.
bool bruck_run_wraps(std::int64_t x, std::int64_t distance, std::int64_t P);

}  // namespace anyp::compiler::collective
