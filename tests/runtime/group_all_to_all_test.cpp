// group_all_to_all_test.cpp — every all_to_all algorithm (Mesh, Pairwise,
// Bruck, and what Auto picks) on the groups of a declared comm domain, with
// several groups at once: contiguous groups ({0..G-1}, {G..2G-1}, ...) and
// strided ones ({0, K, 2K, ...}), whose indices are not world ranks. Rank
// with group index i must receive, in its dst row j, row i of the src of
// its group's j-th rank — bit for bit, race-checked, the signal 0 again.
// Bruck's compiler-made scratch window once addressed peers as world ranks:
// in a group other than {0..G-1} it wrote into other groups' scratch and
// gave wrong rows with no error.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "support/sweep.hpp"

namespace {

using pld::AllToAllMode;

const pl::Dim NR = pl::dynamic("NR");
const pl::Dim G = pl::dynamic("G");
constexpr std::int64_t C = 8;  // elements of a row (one 32-byte unit)

enum class Layout { Contiguous, Strided };

// host(x [NR, G, C], y [NR, G, C], cells [NR, G, 1]): domain "g" of groups
// of G ranks in the layout; rank r sends x[r] with one all_to_all on a
// [G, C] window of the domain and copies what it received into y[r], and
// its signal cells into cells[r].
pl::HostFunction program(AllToAllMode mode, Layout layout) {
  const pl::Shape rows{G, C}, sig{G, 1};
  const auto kernel = pl::jit::incore(
      "group_all_to_all",
      {pl::In("x", pl::Tensor(rows, pl::FP32)), pl::Out("y", pl::Tensor(rows, pl::FP32)),
       pl::Out("cells", pl::Tensor(sig, pl::INT32)),
       pl::InOut("dst", pld::DistributedTensor(rows, pl::FP32)),
       pl::InOut("signal", pld::DistributedTensor(sig, pl::INT32))},
      [mode](pl::Value x, pl::Value y, pl::Value cells, pl::Value dst, pl::Value signal) {
        dst = pld::tensor::all_to_all(x, dst, signal, mode);
        pl::range(G, [&](pl::Scalar i) {
          y = pl::store(pl::load(dst, {i, 0}, {1, C}), {i, 0}, y);
          pl::write(cells, {i, 0}, pl::read(signal, {i, 0}));
        });
      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host("group_all_to_all_host",
                       {pl::In("x", pl::Tensor({NR, G, C}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, G, C}, pl::FP32)),
                        pl::Out("cells", pl::Tensor({NR, G, 1}, pl::INT32))},
                       [per_rank, layout, rows, sig](pl::Value x, pl::Value y, pl::Value cells) {
                         const pld::CommDomain g = pld::comm_domain("g");
                         pl::range(NR / G, [&](pl::Scalar k) {
                           if (layout == Layout::Contiguous) {
                             pld::comm_group(g, k * G, G);
                           } else {
                             pld::comm_group(g, k, G, NR / G);
                           }
                         });
                         auto dst_buf = pld::alloc_window_buffer("dst", rows, pl::FP32, g);
                         auto signal_buf = pld::alloc_window_buffer("signal", sig, pl::INT32, g);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], cells[r], pld::window(dst_buf, rows, pl::FP32),
                                    pld::window(signal_buf, sig, pl::INT32), pl::device(r));
                         });
                       });
}

// The world rank of index i of the group of world rank w.
std::int64_t member(Layout layout, std::int64_t w, std::int64_t i, std::int64_t g,
                    std::int64_t groups) {
  return layout == Layout::Contiguous ? w / g * g + i : w % groups + i * groups;
}
std::int64_t index_in_group(Layout layout, std::int64_t w, std::int64_t g, std::int64_t groups) {
  return layout == Layout::Contiguous ? w % g : w / groups;
}

// "" when every rank got its group's rows and every cell is 0; else the
// first difference.
std::string check(AllToAllMode mode, Layout layout, std::int64_t g, std::int64_t groups) {
  const std::int64_t W = g * groups;
  anyp::HostTensor x = anyp::HostTensor::zeros({W, g, C}, pl::FP32);
  anyp::HostTensor y = anyp::HostTensor::zeros({W, g, C}, pl::FP32);
  anyp::HostTensor cells = anyp::HostTensor::zeros({W, g, 1}, pl::INT32);
  for (std::int64_t e = 0; e < x.numel(); ++e) x.set(e, static_cast<double>(e % 997) + 0.25);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(W);
  config.check_races = true;
  program(mode, layout).compile({x, y, cells}, config)(x, y, cells);
  for (std::int64_t w = 0; w < W; ++w) {
    const std::int64_t me = index_in_group(layout, w, g, groups);
    for (std::int64_t j = 0; j < g; ++j) {
      const std::int64_t from = member(layout, w, j, g, groups);
      for (std::int64_t e = 0; e < C; ++e) {
        const double got = y.get((w * g + j) * C + e), want = x.get((from * g + me) * C + e);
        if (got != want)
          return "rank " + std::to_string(w) + " row " + std::to_string(j) + " element " +
                 std::to_string(e) + ": got " + std::to_string(got) + ", want " +
                 std::to_string(want) + " (row " + std::to_string(me) + " of rank " +
                 std::to_string(from) + ")";
      }
    }
  }
  for (std::int64_t e = 0; e < cells.numel(); ++e)
    if (cells.get_int(e) != 0) return "signal cell " + std::to_string(e) + " is not 0";
  return "";
}

const char* mode_name(AllToAllMode m) {
  switch (m) {
    case AllToAllMode::Mesh:
      return "Mesh";
    case AllToAllMode::Pairwise:
      return "Pairwise";
    case AllToAllMode::Bruck:
      return "Bruck";
    case AllToAllMode::Auto:
      return "Auto";
  }
  return "?";
}

class GroupAllToAll : public testing::TestWithParam<std::tuple<AllToAllMode, Layout>> {};

TEST_P(GroupAllToAll, EveryRankGetsItsGroupsRowsAtEveryGroupSize) {
  const auto [mode, layout] = GetParam();
  for (std::int64_t g : anyp_test::sweep(anyp_test::every_p(2, 17), {2, 3, 5, 8, 13})) {
    for (std::int64_t groups : {2, 3}) {
      EXPECT_EQ(check(mode, layout, g, groups), "")
          << mode_name(mode) << " G=" << g << " groups=" << groups;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GroupAllToAll,
                         testing::Combine(testing::Values(AllToAllMode::Mesh,
                                                          AllToAllMode::Pairwise,
                                                          AllToAllMode::Bruck, AllToAllMode::Auto),
                                          testing::Values(Layout::Contiguous, Layout::Strided)),
                         [](const auto& info) {
                           return std::string(mode_name(std::get<0>(info.param))) +
                                  (std::get<1>(info.param) == Layout::Contiguous ? "_contiguous"
                                                                                 : "_strided");
                         });

}  // namespace
