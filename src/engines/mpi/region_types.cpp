// region_types.cpp — MPI datatypes for regions, cached.
#include "engines/mpi/region_types.hpp"

#include "engines/mpi/mpi_world.hpp"

namespace anyp::mpi {

RegionTypes::~RegionTypes() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (auto& [key, type] : cache_) MPI_Type_free(&type);
}

RegionType RegionTypes::of_elements_or_rows(const runtime::Region& r, MPI_Datatype unit) {
  const auto esize = static_cast<std::int64_t>(dtype_bytes(r.dtype));
  const std::int64_t unit_bytes = unit == MPI_BYTE ? 1 : esize;
  if (r.contiguous) return RegionType{r.first, static_cast<int>(r.nbytes / unit_bytes), unit};
  runtime::RowCursor rows(r);
  std::int64_t first = 0, offset = 0;
  rows.next(first);
  // The unit is MPI_BYTE or the element's own type: the dtype names it.
  std::vector<std::int64_t> key{unit == MPI_BYTE ? -1 : static_cast<std::int64_t>(r.dtype), esize,
                                static_cast<std::int64_t>(r.shape.size())};
  key.insert(key.end(), r.shape.begin(), r.shape.end());
  key.insert(key.end(), r.extent.begin(), r.extent.end());
  auto [it, inserted] = cache_.try_emplace(std::move(key), MPI_DATATYPE_NULL);
  if (inserted) {
    std::vector<MPI_Aint> displacements{0};
    while (rows.next(offset)) displacements.push_back(offset - first);
    check_mpi(MPI_Type_create_hindexed_block(static_cast<int>(displacements.size()),
                                             static_cast<int>(rows.row_bytes() / unit_bytes),
                                             displacements.data(), unit, &it->second),
              "MPI_Type_create_hindexed_block");
    check_mpi(MPI_Type_commit(&it->second), "MPI_Type_commit");
  }
  return RegionType{first, 1, it->second};
}

MPI_Datatype sum_type(DType dtype) {
  switch (dtype) {
    case DType::FP32:
      return MPI_FLOAT;
    case DType::INT8:
      return MPI_INT8_T;
    case DType::INT16:
      return MPI_INT16_T;
    case DType::INT32:
      return MPI_INT32_T;
    case DType::INT64:
      return MPI_INT64_T;
    case DType::FP16:
    case DType::BF16:
      return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

}  // namespace anyp::mpi
