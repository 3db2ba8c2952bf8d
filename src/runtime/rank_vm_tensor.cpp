// rank_vm_tensor.cpp — the rank VM's tensor-level instructions
// (pl::create_tensor, pl::tensor::slice, copy, and the elementwise binary
// ops on whole views): a created tensor is a view of its window slot,
// zeroed through the door; a slice is a register operation; copy and the
// binary ops read their
// operands through the door into scratch, compute with the tile math
// (priced as a compute event, like a tile op) and write the result through
// the door, all on this rank's memory.
#include "common/element_codec.hpp"
#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/rank_vm.hpp"
#include "runtime/tile_math.hpp"

namespace anyp::runtime {

void RankVm::create_view(const Instr& in) {
  ViewReg v;
  v.space = Space::Window;
  v.id = static_cast<std::int32_t>(in.imm);
  v.dtype = in.dtype;
  v.shape = in.shape;
  v.extent = in.shape;
  v.elements = element_count(in.shape);
  const std::int64_t bytes = v.elements * static_cast<std::int64_t>(dtype_bytes(in.dtype));
  if (in.count > 1) v.base = block_ * ((bytes + 31) / 32 * 32);  // this block's slot
  if (in.a >= 0) {  // a builtin's scratch, reached through the group of the call's view
    v.domain = v_[in.a].domain;
    v.group = v_[in.a].group;
  }
  v_[in.dst] = v;
  if (in.sub == 1) return;  // a builtin collective's scratch: no zeroing
  tensor_out_.assign(static_cast<std::size_t>(bytes), std::byte{0});
  ctx_->fabric->write(agent_, site(in), whole_region(in, v, rank_), tensor_out_.data(), false);
}

void RankVm::slice_view(const Instr& in) {
  const ViewReg& src = v_[in.a];
  const std::size_t n = src.extent.size();
  ANYP_CHECK(in.shape.size() == n, "slice.view of another rank");
  const Index offs = offsets(in, 0, n);
  check_region(in, src, rank_, std::span<const std::int64_t>(offs.data(), n), in.shape, "tensor");
  ViewReg v = src;
  for (std::size_t d = 0; d < n; ++d) v.origin[d] = src.origin[d] + offs[d];
  v.extent = in.shape;
  v.elements = element_count(in.shape);
  v.sliced = true;
  v_[in.dst] = v;
}

const std::byte* RankVm::read_view(const Instr& in, const ViewReg& v, TileBytes& into) {
  const Region r = whole_region(in, v, rank_);
  into.resize(static_cast<std::size_t>(r.nbytes));
  ctx_->fabric->read(agent_, site(in), r, into.data());
  return into.data();
}

void RankVm::copy_view(const Instr& in) {
  const ViewReg& dst = v_[in.a];
  const ViewReg& src = v_[in.b];
  ANYP_CHECK(std::equal(dst.extent.begin(), dst.extent.end(), src.extent.begin(), src.extent.end()),
             "copy.view between views of different shapes");
  const std::byte* bytes = read_view(in, src, tensor_a_);
  if (dst.dtype != src.dtype) {
    const auto n = static_cast<std::size_t>(dst.elements);
    tensor_out_.resize(n * dtype_bytes(dst.dtype));
    convert_elements(bytes, src.dtype, tensor_out_.data(), dst.dtype, n);
    price_compute(in, ComputeClass::Cast, dst.dtype, dst.elements);
    bytes = tensor_out_.data();
  }
  const Region w = whole_region(in, dst, rank_);
  guard_sources(in, w);
  ctx_->fabric->write(agent_, site(in), w, bytes, false);
}

void RankVm::tensor_binary(const Instr& in) {
  const ViewReg& dst = v_[in.a];
  const ViewReg& a = v_[in.b];
  const auto op = static_cast<ir::BinaryOp>(in.sub);
  const bool scalar = in.count == 1;
  ANYP_CHECK(std::equal(dst.extent.begin(), dst.extent.end(), a.extent.begin(), a.extent.end()),
             "tensor.bin between views of different shapes");
  const std::byte* x = read_view(in, a, tensor_a_);
  std::byte element[8];
  const std::byte* y = element;
  if (scalar) {
    scalar_element(in, a.dtype, element, in.c, "tensor");
  } else {
    const ViewReg& b = v_[in.c];
    ANYP_CHECK(std::equal(b.extent.begin(), b.extent.end(), a.extent.begin(), a.extent.end()),
               "tensor.bin between views of different shapes");
    y = read_view(in, b, tensor_b_);
  }
  const auto n = static_cast<std::size_t>(a.elements);
  if (const auto bad = invalid_operand(op, a.dtype, y, scalar, n)) {
    const std::string which = scalar ? "the scalar operand"
                                     : "element " + std::to_string(*bad) + " of the second operand";
    if (op == ir::BinaryOp::Div) fail(in, "division by zero: " + which + " is 0");
    fail(in, "invalid operand: " + which);
  }
  tensor_out_.resize(n * dtype_bytes(a.dtype));
  tile_elementwise(op, a.dtype, x, y, scalar, tensor_out_.data(), n);
  price_compute(in, compute_class_of(op), a.dtype, a.elements);
  const Region w = whole_region(in, dst, rank_);
  guard_sources(in, w);
  ctx_->fabric->write(agent_, site(in), w, tensor_out_.data(), false);
}

}  // namespace anyp::runtime
