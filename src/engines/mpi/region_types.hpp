// region_types.hpp — a Region (runtime/region.hpp) as an MPI (count,
// datatype) pair for MPI_Put/MPI_Get/MPI_Accumulate. A region whose rows
// are adjacent is `count` contiguous units; a strided one is one
// hindexed-block type of its rows, built once per (unit, element size,
// view shape, extent) and cached, since its row displacements do not depend
// on where the region starts.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <map>
#include <vector>

#include "runtime/region.hpp"

namespace anyp::mpi {

struct RegionType {
  std::int64_t first = 0;  // byte offset of the first row from the buffer/argument start
  int count = 0;           // units of `type`
  MPI_Datatype type = MPI_BYTE;
};

class RegionTypes {
 public:
  RegionTypes() = default;
  RegionTypes(const RegionTypes&) = delete;
  RegionTypes& operator=(const RegionTypes&) = delete;
  ~RegionTypes();

  // The region in units of `unit`: MPI_BYTE for put and get, the element's
  // MPI type for an accumulate.
  RegionType of(const runtime::Region& r, MPI_Datatype unit) {
    if (r.contiguous && unit == MPI_BYTE)
      return RegionType{r.first, static_cast<int>(r.nbytes), unit};
    return of_elements_or_rows(r, unit);
  }

 private:
  RegionType of_elements_or_rows(const runtime::Region& r, MPI_Datatype unit);
  std::map<std::vector<std::int64_t>, MPI_Datatype> cache_;
};

// The MPI type of one element of `dtype` for MPI_SUM, or MPI_DATATYPE_NULL
// for FP16/BF16, which MPI cannot add.
MPI_Datatype sum_type(DType dtype);

}  // namespace anyp::mpi
