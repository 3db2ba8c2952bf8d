// rank_vm.cpp — the rank interpreter: one dispatch loop over lowered code.
#include "runtime/rank_vm.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "runtime/memory_access.hpp"
#include "runtime/scheduler.hpp"

namespace anyp::runtime {
namespace {

struct VmFailure {
  std::string message;
};

std::string list_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::int64_t element_count(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

}  // namespace

RankVm::RankVm(std::int64_t rank, const std::vector<Dispatch>* dispatches, const RunContext* ctx)
    : rank_(rank), dispatches_(dispatches), ctx_(ctx) {}

void RankVm::fail(const Instr& in, const std::string& what) const {
  std::string where = "run error: rank " + std::to_string(rank_) + " (device " +
                      std::to_string((*ctx_->device_ids)[rank_]) + ")";
  if (in.site >= 0) {
    const Site& s = code_->sites[in.site];
    where += ", function '" + s.function + "', op " + s.op;
  }
  throw VmFailure{where + ": " + what};
}

bool RankVm::enter_dispatch() {
  if (dispatch_ >= dispatches_->size()) return false;
  const Dispatch& d = (*dispatches_)[dispatch_];
  code_ = &(*ctx_->codes)[d.code];
  s_.assign(static_cast<std::size_t>(code_->num_scalars), ScalarValue{});
  t_.resize(static_cast<std::size_t>(code_->num_tiles));
  v_.assign(static_cast<std::size_t>(code_->num_views), ViewReg{});
  for (const Instr& c : code_->constants)
    s_[c.dst] = c.is_float ? float_scalar(c.fimm) : int_scalar(c.imm);
  for (std::size_t i = 0; i < d.args.size(); ++i) {
    const ArgBinding& a = d.args[i];
    const std::int32_t reg = code_->param_regs[i];
    switch (a.kind) {
      case ArgBinding::Kind::Int:
        s_[reg] = int_scalar(a.int_value);
        break;
      case ArgBinding::Kind::Float:
        s_[reg] = float_scalar(a.float_value);
        break;
      case ArgBinding::Kind::HostTensor: {
        ViewReg v;
        v.host_base = (*ctx_->host_args)[a.host_param]->data() + a.byte_offset;
        v.dtype = a.dtype;
        v.shape = a.shape;
        v_[reg] = std::move(v);
        break;
      }
      case ArgBinding::Kind::Window: {
        ViewReg v;
        v.window = true;
        v.buffer = a.buffer;
        v.window_offset = (*ctx_->buffers)[a.buffer].offset;
        v.dtype = a.dtype;
        v.shape = a.shape;
        v_[reg] = std::move(v);
        break;
      }
    }
  }
  pc_ = 0;
  in_dispatch_ = true;
  return true;
}

RankVm::Outcome RankVm::run(std::int64_t budget) {
  try {
    for (;;) {
      if (!in_dispatch_ && !enter_dispatch()) return Outcome::Done;
      const auto& instrs = code_->instrs;
      while (pc_ < instrs.size()) {
        if (budget-- <= 0) return Outcome::Yield;
        bool parked = false;
        ++executed_;
        if (!step(instrs[pc_], parked)) {
          if (parked) return Outcome::Parked;
        }
      }
      in_dispatch_ = false;
      ++dispatch_;
    }
  } catch (const VmFailure& f) {
    error_ = f.message;
    return Outcome::Failed;
  }
}

std::int64_t RankVm::peer_of(const Instr& in, std::int32_t reg) const {
  const std::int64_t p = s_[reg].as_int();
  const std::int64_t n = ctx_->fabric->world_size();
  if (p < 0 || p >= n) {
    std::string msg =
        "peer " + std::to_string(p) + " is out of range [0, " + std::to_string(n) + ")";
    if (p < 0) {
      msg +=
          "\n  hint: a negative peer usually comes from (r - 1) % P, which C++ truncates to -1 "
          "at r = 0; write (r + P - 1) % P";
    }
    fail(in, msg);
  }
  return p;
}

std::vector<std::int64_t> RankVm::offsets(const Instr& in, std::size_t from,
                                          std::size_t count) const {
  std::vector<std::int64_t> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = s_[in.idx[from + i]].as_int();
  return out;
}

void RankVm::check_region(const Instr& in, const ViewReg& v, const std::vector<std::int64_t>& offs,
                          const std::vector<std::int64_t>& extent, const char* role) const {
  for (std::size_t d = 0; d < v.shape.size(); ++d) {
    if (offs[d] < 0 || offs[d] + extent[d] > v.shape[d]) {
      fail(in, std::string("region out of bounds: offsets ") + list_text(offs) + " + shape " +
                   list_text(extent) + " exceeds the " + role + " " + list_text(v.shape) +
                   " in dim " + std::to_string(d));
    }
  }
}

std::byte* RankVm::view_base(const Instr& in, const ViewReg& v, std::int64_t rank) const {
  if (!v.window) {
    if (rank != rank_) fail(in, "a host tensor is not reachable from another rank");
    return v.host_base;
  }
  return ctx_->fabric->window(rank) + v.window_offset;
}

std::string RankVm::cell_text(const ViewReg& v, const std::vector<std::int64_t>& idx) const {
  const std::string name = v.window ? (*ctx_->buffers)[v.buffer].name : std::string("?");
  return "signal '" + name + "' cell " + list_text(idx);
}

std::int32_t* RankVm::signal_cell(const Instr& in, const ViewReg& v, std::int64_t rank) const {
  std::int64_t flat = 0;
  for (std::size_t d = 0; d < in.idx.size(); ++d) {
    const std::int64_t i = s_[in.idx[d]].as_int();
    if (i < 0 || i >= v.shape[d]) {  // reported with the whole index
      check_region(in, v, offsets(in, 0, in.idx.size()),
                   std::vector<std::int64_t>(in.idx.size(), 1), "signal");
    }
    flat = flat * v.shape[d] + i;
  }
  return reinterpret_cast<std::int32_t*>(view_base(in, v, rank) + flat * 4);
}

void RankVm::window_written(const Instr& in, const ViewReg& v, std::int64_t rank) const {
  if (!v.window || rank == rank_) return;
  const std::byte* base = view_base(in, v, rank);
  ctx_->scheduler->on_window_write(
      rank, base, base + element_count(v.shape) * static_cast<std::int64_t>(dtype_bytes(v.dtype)));
}

void RankVm::count_rma(std::int64_t peer, std::int64_t bytes, bool inbound) {
  if (peer == rank_) return;
  ++cost_.rma;
  if (inbound) {
    cost_.bytes_in += bytes;
  } else {
    cost_.bytes_out += bytes;  // and the receiver takes the same bytes in
    (*ctx_->pushed_in)[static_cast<std::size_t>(peer)].fetch_add(bytes, std::memory_order_relaxed);
  }
}

void RankVm::check_flat(const Instr& in, const ViewReg& v, std::int64_t offset,
                        std::int64_t len) const {
  const std::int64_t n = element_count(v.shape);
  if (offset < 0 || len < 0 || offset + len > n) {
    fail(in, "elements [" + std::to_string(offset) + ", " + std::to_string(offset + len) +
                 ") are outside the " + std::to_string(n) + "-element window " +
                 list_text(v.shape));
  }
}

void RankVm::flat_op(const Instr& in) {
  const std::int64_t peer = peer_of(in, in.b);
  const ViewReg& v = v_[in.a];
  const std::size_t esize = dtype_bytes(v.dtype);
  const std::int64_t offset = s_[in.idx[0]].as_int();
  switch (in.op) {
    case Opcode::LoadFlat: {
      const std::int64_t len = s_[in.idx[1]].as_int();
      check_flat(in, v, offset, len);
      const std::byte* base = view_base(in, v, peer) + offset * static_cast<std::int64_t>(esize);
      TileReg& t = t_[in.dst];
      t.dtype = v.dtype;
      t.shape = {len};
      t.data.resize(static_cast<std::size_t>(len));
      for (std::int64_t k = 0; k < len; ++k)
        t.data[static_cast<std::size_t>(k)] =
            load_element(base + k * static_cast<std::int64_t>(esize), v.dtype);
      count_rma(peer, len * static_cast<std::int64_t>(esize), true);
      break;
    }
    case Opcode::StoreFlat: {
      const TileReg& t = t_[in.c];
      const auto len = static_cast<std::int64_t>(t.data.size());
      check_flat(in, v, offset, len);
      std::byte* base = view_base(in, v, peer) + offset * static_cast<std::int64_t>(esize);
      for (std::int64_t k = 0; k < len; ++k)
        store_element(base + k * static_cast<std::int64_t>(esize), v.dtype,
                      t.data[static_cast<std::size_t>(k)]);
      count_rma(peer, len * static_cast<std::int64_t>(esize), false);
      window_written(in, v, peer);
      break;
    }
    case Opcode::PutFlat: {
      const ViewReg& src = v_[in.c];
      const std::int64_t src_offset = s_[in.idx[1]].as_int();
      const std::int64_t len = s_[in.idx[2]].as_int();
      check_flat(in, v, offset, len);
      check_flat(in, src, src_offset, len);
      std::memcpy(view_base(in, v, peer) + offset * static_cast<std::int64_t>(esize),
                  view_base(in, src, rank_) + src_offset * static_cast<std::int64_t>(esize),
                  static_cast<std::size_t>(len) * esize);
      count_rma(peer, len * static_cast<std::int64_t>(esize), false);
      window_written(in, v, peer);
      break;
    }
    default:
      break;
  }
}

void RankVm::tile_binary(const Instr& in) {
  const TileReg& a = t_[in.a];
  TileReg& out = t_[in.dst];
  const auto op = static_cast<ir::BinaryOp>(in.sub);
  const bool scalar = in.count == 1;
  const double sv = scalar ? s_[in.b].as_double() : 0;
  const TileReg* b = scalar ? nullptr : &t_[in.b];
  std::vector<double> result(a.data.size());
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    const double x = a.data[i], y = scalar ? sv : b->data[i];
    double r = 0;
    switch (op) {
      case ir::BinaryOp::Add:
        r = x + y;
        break;
      case ir::BinaryOp::Sub:
        r = x - y;
        break;
      case ir::BinaryOp::Mul:
        r = x * y;
        break;
      case ir::BinaryOp::Max:
        r = std::max(x, y);
        break;
      case ir::BinaryOp::Min:
        r = std::min(x, y);
        break;
      default:
        fail(in, "unsupported tile operator");
    }
    result[i] = dtype_is_float(a.dtype)
                    ? round_to_dtype(r, a.dtype)
                    : scalar_cast(int_scalar(static_cast<std::int64_t>(r)), a.dtype).i;
  }
  out.dtype = a.dtype;
  out.shape = a.shape;
  out.data = std::move(result);
}

void RankVm::transfer(const Instr& in, bool is_put) {
  const std::int64_t peer = peer_of(in, in.b);
  const ViewReg& dst = v_[in.a];
  const ViewReg& src = v_[in.c];
  const std::size_t nd = dst.shape.size(), ns = src.shape.size();
  std::vector<std::int64_t> doff(nd, 0), soff(ns, 0), extent = in.shape;
  if (in.shape.empty()) {
    extent = dst.shape;
  } else {
    doff = offsets(in, 0, nd);
    soff = offsets(in, nd, ns);
  }
  check_region(in, dst, doff, extent, "destination");
  check_region(in, src, soff, extent, "source");
  count_rma(peer, element_count(extent) * static_cast<std::int64_t>(dtype_bytes(dst.dtype)),
            !is_put);
  std::byte* dbase = view_base(in, dst, is_put ? peer : rank_);
  const std::byte* sbase = view_base(in, src, is_put ? rank_ : peer);
  const std::size_t esize = dtype_bytes(dst.dtype);
  // Gather the source rows, then scatter into the destination (regions may
  // have different strides).
  std::vector<std::byte> buffer(static_cast<std::size_t>(element_count(extent)) * esize);
  std::size_t at = 0;
  for_each_region_row(
      src.shape, soff, extent, [&](std::int64_t start, std::int64_t len, std::int64_t) {
        std::memcpy(buffer.data() + at, sbase + start * static_cast<std::int64_t>(esize),
                    static_cast<std::size_t>(len) * esize);
        at += static_cast<std::size_t>(len) * esize;
      });
  const bool atomic = static_cast<ir::AtomicKind>(in.sub) == ir::AtomicKind::Add;
  std::unique_lock<std::mutex> lock;
  if (atomic && dst.window)
    lock = std::unique_lock<std::mutex>(ctx_->fabric->atomic_lock(is_put ? peer : rank_));
  at = 0;
  for_each_region_row(
      dst.shape, doff, extent, [&](std::int64_t start, std::int64_t len, std::int64_t) {
        std::byte* d = dbase + start * static_cast<std::int64_t>(esize);
        if (!atomic) {
          std::memcpy(d, buffer.data() + at, static_cast<std::size_t>(len) * esize);
        } else {
          for (std::int64_t k = 0; k < len; ++k) {
            std::byte* p = d + k * static_cast<std::int64_t>(esize);
            const double sum =
                load_element(p, dst.dtype) +
                load_element(buffer.data() + at + static_cast<std::size_t>(k) * esize, dst.dtype);
            store_element(p, dst.dtype, sum);
          }
        }
        at += static_cast<std::size_t>(len) * esize;
      });
  if (lock.owns_lock()) lock.unlock();
  window_written(in, dst, is_put ? peer : rank_);
}

bool RankVm::step(const Instr& in, bool& parked) {
  switch (in.op) {
    case Opcode::Const:
      s_[in.dst] = in.is_float ? float_scalar(in.fimm) : int_scalar(in.imm);
      break;
    case Opcode::Mov:
      s_[in.dst] = s_[in.a];
      break;
    case Opcode::MovTile:
      t_[in.dst] = t_[in.a];
      break;
    case Opcode::MovView:
      v_[in.dst] = v_[in.a];
      break;
    case Opcode::ScalarBin: {
      std::string error;
      auto r =
          scalar_binary(static_cast<ir::BinaryOp>(in.sub), s_[in.a], s_[in.b], in.dtype, &error);
      if (!r) fail(in, error);
      s_[in.dst] = *r;
      break;
    }
    case Opcode::ScalarNot:
      s_[in.dst] = int_scalar(s_[in.a].as_double() == 0);
      break;
    case Opcode::ScalarCast:
      s_[in.dst] = scalar_cast(s_[in.a], in.dtype);
      break;
    case Opcode::Jump:
      pc_ = static_cast<std::size_t>(in.imm);
      return true;
    case Opcode::JumpIfZero:
      if (s_[in.a].as_double() == 0) {
        pc_ = static_cast<std::size_t>(in.imm);
        return true;
      }
      break;
    case Opcode::JumpIfGe:
      if (s_[in.a].as_int() >= s_[in.b].as_int()) {
        pc_ = static_cast<std::size_t>(in.imm);
        return true;
      }
      break;
    case Opcode::Load:
    case Opcode::RemoteLoad: {
      const ViewReg& v = v_[in.a];
      const std::int64_t src_rank = in.op == Opcode::Load ? rank_ : peer_of(in, in.b);
      auto offs = offsets(in, 0, in.idx.size());
      check_region(in, v, offs, in.shape, "source");
      const std::byte* base = view_base(in, v, src_rank);
      if (in.op == Opcode::RemoteLoad) {
        count_rma(src_rank,
                  element_count(in.shape) * static_cast<std::int64_t>(dtype_bytes(v.dtype)), true);
      }
      TileReg& t = t_[in.dst];
      t.dtype = v.dtype;
      t.shape = in.shape;
      t.data.resize(static_cast<std::size_t>(element_count(in.shape)));
      const std::size_t esize = dtype_bytes(v.dtype);
      for_each_region_row(
          v.shape, offs, in.shape, [&](std::int64_t start, std::int64_t len, std::int64_t row) {
            for (std::int64_t k = 0; k < len; ++k) {
              t.data[static_cast<std::size_t>(row * len + k)] =
                  load_element(base + (start + k) * static_cast<std::int64_t>(esize), v.dtype);
            }
          });
      break;
    }
    case Opcode::Store:
    case Opcode::RemoteStore: {
      const bool remote = in.op == Opcode::RemoteStore;
      const TileReg& t = t_[remote ? in.c : in.a];
      const ViewReg& v = v_[remote ? in.a : in.b];
      const std::int64_t dst_rank = remote ? peer_of(in, in.b) : rank_;
      auto offs = offsets(in, 0, in.idx.size());
      check_region(in, v, offs, t.shape, "target");
      std::byte* base = view_base(in, v, dst_rank);
      const std::size_t esize = dtype_bytes(v.dtype);
      if (remote)
        count_rma(dst_rank, element_count(t.shape) * static_cast<std::int64_t>(esize), false);
      const bool atomic = remote && static_cast<ir::AtomicKind>(in.sub) == ir::AtomicKind::Add;
      std::unique_lock<std::mutex> lock;
      if (atomic) lock = std::unique_lock<std::mutex>(ctx_->fabric->atomic_lock(dst_rank));
      for_each_region_row(v.shape, offs, t.shape,
                          [&](std::int64_t start, std::int64_t len, std::int64_t row) {
                            for (std::int64_t k = 0; k < len; ++k) {
                              std::byte* p = base + (start + k) * static_cast<std::int64_t>(esize);
                              double x = t.data[static_cast<std::size_t>(row * len + k)];
                              if (atomic) x += load_element(p, v.dtype);
                              store_element(p, v.dtype, x);
                            }
                          });
      if (lock.owns_lock()) lock.unlock();
      window_written(in, v, dst_rank);
      break;
    }
    case Opcode::Read:
    case Opcode::Write: {
      const ViewReg& v = v_[in.a];
      auto idx = offsets(in, 0, in.idx.size());
      std::vector<std::int64_t> one(idx.size(), 1);
      check_region(in, v, idx, one, "tensor");
      std::int64_t flat = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) flat = flat * v.shape[d] + idx[d];
      std::byte* p =
          view_base(in, v, rank_) + flat * static_cast<std::int64_t>(dtype_bytes(v.dtype));
      if (in.op == Opcode::Read) {
        const double x = load_element(p, v.dtype);
        s_[in.dst] =
            dtype_is_float(v.dtype) ? float_scalar(x) : int_scalar(static_cast<std::int64_t>(x));
      } else {
        store_element(p, v.dtype, s_[in.b].as_double());
        window_written(in, v, rank_);
      }
      break;
    }
    case Opcode::TileBin:
      tile_binary(in);
      break;
    case Opcode::TileCast: {
      TileReg r = t_[in.a];
      for (double& x : r.data) x = scalar_cast(float_scalar(x), in.dtype).as_double();
      r.dtype = in.dtype;
      t_[in.dst] = std::move(r);
      break;
    }
    case Opcode::Rank:
      s_[in.dst] = int_scalar(rank_);
      break;
    case Opcode::NRanks:
      s_[in.dst] = int_scalar(ctx_->fabric->world_size());
      break;
    case Opcode::Notify: {
      const std::int64_t peer = peer_of(in, in.b);
      std::int32_t* cell = signal_cell(in, v_[in.a], peer);
      ++(peer == rank_ ? cost_.local_notifies : cost_.notifies);
      ctx_->scheduler->notify(rank_, cell, static_cast<ir::NotifyKind>(in.sub),
                              static_cast<std::int32_t>(s_[in.c].as_int()));
      break;
    }
    case Opcode::Wait: {
      const ViewReg& v = v_[in.a];
      std::int32_t* cell = signal_cell(in, v, rank_);
      auto describe = [&] {
        const Site& s = code_->sites[in.site];
        return "function '" + s.function + "', op " + s.op + ": waits for " +
               cell_text(v, offsets(in, 0, in.idx.size()));
      };
      if (!ctx_->scheduler->wait_or_park(rank_, cell, static_cast<ir::WaitKind>(in.sub),
                                         s_[in.b].as_int(), describe)) {
        parked = true;
        return false;  // pc stays on the wait; it re-checks when the rank resumes
      }
      ++cost_.waits;
      break;
    }
    case Opcode::LoadFlat:
    case Opcode::StoreFlat:
    case Opcode::PutFlat:
      flat_op(in);
      break;
    case Opcode::CheckCount:
      if (s_[in.a].as_int() < 0 || s_[in.a].as_int() > s_[in.b].as_int()) {
        fail(in, "send count " + std::to_string(s_[in.a].as_int()) + " is out of range [0, " +
                     std::to_string(s_[in.b].as_int()) + "] (the row length)");
      }
      break;
    case Opcode::Put:
      transfer(in, true);
      break;
    case Opcode::Get:
      transfer(in, false);
      break;
  }
  ++pc_;
  return true;
}

}  // namespace anyp::runtime
