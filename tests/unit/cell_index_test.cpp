// cell_index_test.cpp — the cell -> slot table (the timeline's and the race checker's)
// (runtime/cell_index.hpp): every cell keeps the slot it was
// given through the table's growth, distinct cells never share one, `find`
// sees the same slots and adds nothing, in a
// buffer small enough for a flat array, in one that is not, and for cells
// that do not pack in 64 bits (an owner of 2^22 or more, a buffer of 2^10
// or more, a word of 2^32 or more).
#include "runtime/cell_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using anyp::runtime::Cell;
using anyp::runtime::CellIndex;

TEST(CellIndex, EveryCellKeepsItsOwnSlot) {
  // 300 ranks: buffer 0 is flat (40 words), buffer 1 (2^20 words) and
  // buffer 2 (not a buffer the plan knows) are in the table.
  CellIndex index(300, {40, std::int64_t{1} << 20});
  std::vector<Cell> cells;
  for (std::int64_t owner = 0; owner < 300; ++owner)
    for (std::int32_t buffer = 0; buffer < 3; ++buffer)
      for (std::int64_t word = 0; word < 40; word += 3) cells.push_back({owner, buffer, 4 * word});
  cells.push_back({std::int64_t{1} << 22, 0, 0});
  cells.push_back({5, 1 << 10, 0});
  cells.push_back({5, 0, std::int64_t{4} << 32});
  cells.push_back({5, 0, 8});                                // packs, beside the three that do not
  for (const Cell& c : cells) EXPECT_EQ(index.find(c), 0u);  // none yet, and none added
  std::uint32_t next = 1;
  for (const Cell& c : cells) {
    std::uint32_t& slot = index.slot(c);
    ASSERT_EQ(slot, 0u) << c.owner << " " << c.buffer << " " << c.offset;
    slot = next++;
  }
  next = 1;
  for (const Cell& c : cells) {
    EXPECT_EQ(index.find(c), next) << c.owner << " " << c.offset;
    EXPECT_EQ(index.slot(c), next++) << c.owner << " " << c.offset;
  }
  // Cells never given a slot: find sees none, in every kind of storage.
  for (const Cell& c :
       {Cell{7, 0, 4}, Cell{7, 1, 4000}, Cell{7, 2, 4}, Cell{(std::int64_t{1} << 22) + 1, 0, 0}})
    EXPECT_EQ(index.find(c), 0u) << c.owner << " " << c.buffer << " " << c.offset;
}

}  // namespace
