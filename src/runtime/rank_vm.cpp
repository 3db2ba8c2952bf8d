// rank_vm.cpp — the rank interpreter: one dispatch loop over lowered code,
// and its memory, signal and collective instructions. Memory and signals
// are reached only through the Fabric (the door). The other protocols have
// files of their own: rank_vm_addressing.cpp (places), rank_vm_async.cpp
// (put_async), rank_vm_blocks.cpp (block launches), rank_vm_dispatch.cpp
// (the dispatch list and its order), rank_vm_compute.cpp (tile ops) and
// rank_vm_tensor.cpp (tensor-level ops).
#include "runtime/rank_vm.hpp"

#include <algorithm>
#include <cstdint>
#include <new>

#include "common/element_codec.hpp"
#include "common/internal_check.hpp"
#include "runtime/diagnostic_text.hpp"
#include "runtime/executable_text.hpp"
#include "runtime/out_of_memory.hpp"
#include "runtime/tile_structured.hpp"

namespace anyp::runtime {
namespace {

struct VmFailure {
  std::string message;
};

bool is_atomic(const Instr& in) {
  return static_cast<ir::AtomicKind>(in.sub) == ir::AtomicKind::Add;
}

}  // namespace

RankVm::RankVm(std::int64_t agent, const RunContext* ctx)
    : agent_(agent),
      rank_(ctx->exec->rank_of_agent(agent)),
      block_(ctx->exec->block_of_agent(agent)),
      ctx_(ctx),
      dispatches_(&ctx->exec->ranks[static_cast<std::size_t>(rank_)]) {
  ANYP_CHECK(block_ == 0 || ctx->launches != nullptr, "a block agent without launch slots");
}

void RankVm::fail(const Instr& in, const std::string& what) const {
  std::string where = run_error_where(*ctx_->exec, rank_, site(in));
  if (launch_blocks_ > 1) {  // "run error: rank 1 (device 1), block 2 of 4, function ..."
    const std::size_t at = where.find(')') + 1;
    where.insert(
        at, ", block " + std::to_string(launch_index_) + " of " + std::to_string(launch_blocks_));
  }
  throw VmFailure{where + ": " + what};
}

RankVm::Outcome RankVm::run(std::int64_t budget, bool stop_after_visible) {
  // pc and the instruction count live in registers here; save() puts them
  // back before every way out of the loop (a failure included), and before
  // a wait: a wait that parks the rank may hand it to another worker at
  // once, so the VM must touch no member after it.
  std::size_t pc = pc_;
  std::int64_t ran = 0;
  auto save = [&] {
    pc_ = pc;
    executed_ += ran;
    ran = 0;
  };
  try {
    for (;;) {
      if (!in_dispatch_ && block_ == 0) {
        save();  // a wait for another rank's dispatch may park the rank
        const DispatchEntry entry = enter_dispatch();
        if (entry == DispatchEntry::Parked) return Outcome::Parked;
        if (entry == DispatchEntry::Done) {
          if (!released_) release_blocks();
          return Outcome::Done;
        }
      }
      if (!in_dispatch_) {  // a block other than 0, between launches
        const LaunchEntry entry = enter_launch();
        if (entry == LaunchEntry::Parked) return Outcome::Parked;
        if (entry == LaunchEntry::Quit) return Outcome::Done;
      }
      const Instr* const code = code_->instrs.data();
      const std::size_t size = code_->instrs.size();
      ScalarValue* const s = s_.data();  // not resized within a dispatch
      pc = pc_;
      while (pc < size) {
        if (budget-- <= 0 || compute_elements_ >= compute_mark_) {
          save();
          return Outcome::Yield;
        }
        ++ran;
        const Instr& in = code[pc];
        switch (in.op) {
          case Opcode::Const:
            s[in.dst] = in.is_float ? float_scalar(in.fimm) : int_scalar(in.imm);
            break;
          case Opcode::Mov:
            s[in.dst] = s[in.a];
            break;
          case Opcode::MovTile:
            t_[in.dst] = t_[in.a];
            break;
          case Opcode::MovView:
            v_[in.dst] = v_[in.a];
            break;
          case Opcode::ScalarBin: {
            const ScalarValue& x = s[in.a];
            const ScalarValue& y = s[in.b];
            // Integers inline (loop counters, offsets, peers); floats and
            // a division by zero's message in scalar_bin.
            std::optional<std::int64_t> v;
            if (!x.is_float && !y.is_float)
              v = integer_binary(static_cast<ir::BinaryOp>(in.sub), x.i, y.i, in.dtype);
            if (v) {
              s[in.dst] = int_scalar(*v);
            } else {
              scalar_bin(in);
            }
            break;
          }
          case Opcode::ScalarNot:
            s[in.dst] = int_scalar(s[in.a].as_double() == 0);
            break;
          case Opcode::ScalarCast:
            s[in.dst] = scalar_cast(s[in.a], in.dtype);
            break;
          case Opcode::Jump:
            pc = static_cast<std::size_t>(in.imm);
            continue;
          case Opcode::JumpIfZero:
            if (s[in.a].as_double() == 0) {
              pc = static_cast<std::size_t>(in.imm);
              continue;
            }
            break;
          case Opcode::JumpIfGe:
            if (s[in.a].as_int() >= s[in.b].as_int()) {
              pc = static_cast<std::size_t>(in.imm);
              continue;
            }
            break;
          case Opcode::Load:
          case Opcode::RemoteLoad:
            load(in);
            break;
          case Opcode::Store:
          case Opcode::RemoteStore:
            store(in);
            break;
          case Opcode::Read:
          case Opcode::Write:
            read_or_write(in);
            break;
          case Opcode::TileBin:
            tile_binary(in);
            break;
          case Opcode::TileCast:
            tile_cast(in);
            break;
          case Opcode::FullTile:
            full_tile(in);
            break;
          case Opcode::ReshapeTile:
            reshape_tile(in);
            break;
          case Opcode::TileUnary:
            tile_unary(in);
            break;
          case Opcode::TileCmp:
            tile_cmp(in);
            break;
          case Opcode::Select:
            tile_select(in);
            break;
          case Opcode::TileReduce:
            tile_reduce(in);
            break;
          case Opcode::TileExpand:
            tile_expand(in);
            break;
          case Opcode::Matmul:
            tile_matmul(in);
            break;
          case Opcode::Transpose:
            tile_transpose(in);
            break;
          case Opcode::SliceTile:
            tile_slice(in);
            break;
          case Opcode::ConcatTile:
            tile_concat(in);
            break;
          case Opcode::Arange:
            tile_arange(in);
            break;
          case Opcode::Rank:
            s[in.dst] =
                int_scalar(in.a >= 0 && v_[in.a].domain >= 0
                               ? domain_of(v_[in.a]).index_of[static_cast<std::size_t>(rank_)]
                               : rank_);
            break;
          case Opcode::BlockIdx:
            s[in.dst] = int_scalar(launch_index_);
            break;
          case Opcode::BlockNum:
            s[in.dst] = int_scalar(launch_blocks_);
            break;
          case Opcode::BlockLaunch:
            block_launch(in);
            break;
          case Opcode::BlockEnd:
            // Block 0 parks until the others are done (pc stays on the
            // end, which re-checks); another block's part is over.
            save();
            if (!block_end(in)) return Outcome::Parked;
            if (block_ != 0) {
              if (stop_after_visible) return Outcome::Yield;
              goto next_launch;
            }
            break;
          case Opcode::NRanks:
            s[in.dst] =
                int_scalar(in.a >= 0 && v_[in.a].domain >= 0 ? domain_of(v_[in.a]).group_size
                                                             : ctx_->exec->world_size);
            break;
          case Opcode::Notify:
            notify(in);
            break;
          case Opcode::Wait:
            // Parked: pc stays on the wait, which re-checks on resume.
            save();
            if (!wait(in)) return Outcome::Parked;
            break;
          case Opcode::Put:
          case Opcode::Get:
            transfer(in, in.op == Opcode::Put);
            break;
          case Opcode::PutAsync:
            put_async(in);
            break;
          case Opcode::WaitAsync:
            wait_async(in);
            break;
          case Opcode::CheckAsync:
            check_no_puts_in_flight();
            break;
          case Opcode::Task:
            ctx_->fabric->task(agent_, site(in), in.sub == 0);
            break;
          case Opcode::LoadFlat:
          case Opcode::StoreFlat:
          case Opcode::PutFlat:
            flat_op(in);
            break;
          case Opcode::SliceView:
            slice_view(in);
            break;
          case Opcode::CreateView:
            create_view(in);
            break;
          case Opcode::CopyView:
            copy_view(in);
            break;
          case Opcode::TensorBin:
            tensor_binary(in);
            break;
          case Opcode::CheckCount:
            check_count(in);
            break;
          case Opcode::LoopStep: {
            std::int64_t next = 0;
            if (__builtin_add_overflow(s[in.a].i, s[in.b].i, &next)) {
              pc = static_cast<std::size_t>(in.imm);
              continue;
            }
            s[in.a] = int_scalar(next);
            break;
          }
          case Opcode::CheckStep:
            if (s[in.a].as_int() == 0) fail(in, "the step is 0 (read at run time)");
            break;
          case Opcode::Collective:
            enter_collective(in);
            break;
          case Opcode::HostWorker:
            host_worker(in);
            break;
        }
        ++pc;
        // A visible op (vm_opcodes.hpp): a data access, a notify, a
        // satisfied wait (a parked one returned above), a launch or join.
        if (stop_after_visible && opcode_has(in.op, kVisible)) {
          save();
          if (pc >= size) end_dispatch();
          return Outcome::Yield;
        }
      }
      save();
      end_dispatch();
    next_launch:;
    }
  } catch (const VmFailure& f) {
    save();
    error_ = f.message;
    return Outcome::Failed;
  } catch (const std::bad_alloc& e) {
    save();
    // Name the instruction that needed the memory when there is one.
    std::string where = "run error: " + agent_text(*ctx_->exec, agent_);
    if (in_dispatch_ && code_ && pc_ < code_->instrs.size())
      where = run_error_where(*ctx_->exec, rank_, site(code_->instrs[pc_]));
    const auto* refused = dynamic_cast<const OutOfMemory*>(&e);
    error_ = where + ": " +
             (refused ? std::string(refused->what())
                      : "out of memory (std::bad_alloc); the run (or its race checker) needs more "
                        "memory than this machine has at this P");
    return Outcome::Failed;
  } catch (const std::exception& e) {  // an InternalError, or anything else unexpected
    save();
    error_ = e.what();
    return Outcome::Failed;
  }
}

std::byte* RankVm::shape_tile(TileReg& t, DType dtype, std::span<const std::int64_t> shape,
                              std::int64_t n) {
  t.dtype = dtype;
  t.shape.assign(shape.begin(), shape.end());
  t.data.resize(static_cast<std::size_t>(n) * dtype_bytes(dtype));
  return t.data.data();
}

std::span<const std::int64_t> RankVm::valid_extents(const Instr& in,
                                                    std::span<const std::int64_t> tile,
                                                    Index& into) const {
  if (in.count == 0) return in.valid;  // static (or none: empty)
  const std::size_t first = in.idx.size() - static_cast<std::size_t>(in.count);
  for (std::size_t d = 0; d < static_cast<std::size_t>(in.count); ++d)
    into[d] = s_[in.idx[first + d]].as_int();
  const std::span<const std::int64_t> valid(into.data(), static_cast<std::size_t>(in.count));
  for (std::size_t d = 0; d < valid.size(); ++d) {
    if (valid[d] < 1 || valid[d] > tile[d]) [[unlikely]] {
      fail(in, "valid_shape " + list_text(valid) + " is outside the tile " + list_text(tile) +
                   " in dim " + std::to_string(d) + ": each extent is in [1, the tile's]");
    }
  }
  return valid;
}

void RankVm::load(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const std::int64_t owner = in.op == Opcode::Load ? rank_ : peer_of(in, in.b, v);
  const std::size_t n = in.idx.size() - static_cast<std::size_t>(in.count);
  const Index offs = offsets(in, 0, n);
  const std::span<const std::int64_t> at(offs.data(), n);
  Index run_time_valid;
  const auto valid = valid_extents(in, in.shape, run_time_valid);
  if (!valid.empty()) {  // a partial tile: read the valid region, pad with 0
    check_region(in, v, owner, at, valid, "source");
    const Region r = region(in, v, owner, at, valid);
    scratch_.resize(static_cast<std::size_t>(r.nbytes));
    ctx_->fabric->read(agent_, site(in), r, scratch_.data());
    std::byte* out = shape_tile(t_[in.dst], v.dtype, in.shape, element_count(in.shape));
    tile_embed(in.shape, dtype_bytes(v.dtype), valid, scratch_.data(), out);
    return;
  }
  check_region(in, v, owner, at, in.shape, "source");
  const Region r = region(in, v, owner, at, in.shape);
  ctx_->fabric->read(agent_, site(in), r, shape_tile(t_[in.dst], v.dtype, in.shape, r.elements()));
}

void RankVm::store(const Instr& in) {
  const bool remote = in.op == Opcode::RemoteStore;
  const TileReg& t = t_[remote ? in.c : in.a];
  const ViewReg& v = v_[remote ? in.a : in.b];
  const std::int64_t owner = remote ? peer_of(in, in.b, v) : rank_;
  const std::size_t n = in.idx.size() - static_cast<std::size_t>(in.count);
  const Index offs = offsets(in, 0, n);
  const std::span<const std::int64_t> at(offs.data(), n);
  if (t.shape.empty()) [[unlikely]]
    fail(in,
         "the tile it stores has no value here: it is assigned only where the run did not "
         "go (a loop that ran no iteration, or a branch not taken)");
  ANYP_CHECK(t.dtype == v.dtype, "store of a tile into a view of another dtype");
  Index run_time_valid;
  const auto valid = valid_extents(in, t.shape, run_time_valid);
  if (!valid.empty()) {  // a partial tile: write its top-left valid corner
    ANYP_CHECK(valid.size() == t.shape.size(), "store.valid of another rank");
    check_region(in, v, owner, at, valid, "target");
    const Region r = region(in, v, owner, at, valid);
    if (owner == rank_) guard_sources(in, r);
    scratch_.resize(static_cast<std::size_t>(r.nbytes));
    const std::vector<std::int64_t> origin(t.shape.size(), 0);
    runtime::tile_slice(t.shape, dtype_bytes(t.dtype), origin, valid, t.data.data(),
                        scratch_.data());
    ctx_->fabric->write(agent_, site(in), r, scratch_.data(), remote && is_atomic(in));
    return;
  }
  check_region(in, v, owner, at, t.shape, "target");
  const Region r = region(in, v, owner, at, t.shape);
  if (owner == rank_) guard_sources(in, r);
  ctx_->fabric->write(agent_, site(in), r, t.data.data(), remote && is_atomic(in));
}

void RankVm::read_or_write(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const Index idx = offsets(in, 0, in.idx.size());
  const std::span<const std::int64_t> at(idx.data(), in.idx.size());
  Index ones{};
  ones.fill(1);
  const std::span<const std::int64_t> one(ones.data(), in.idx.size());
  check_region(in, v, rank_, at, one, "tensor");
  const Region r = region(in, v, rank_, at, one);
  std::byte cell[8];
  if (in.op == Opcode::Read) {
    ctx_->fabric->read(agent_, site(in), r, cell);
    s_[in.dst] = dtype_is_float(v.dtype) ? float_scalar(decode_element(cell, v.dtype))
                                         : int_scalar(decode_integer(cell, v.dtype));
  } else {
    guard_sources(in, r);
    const ScalarValue& x = s_[in.b];
    if (x.is_float) {
      encode_element(cell, v.dtype, x.f);
    } else {
      encode_integer(cell, v.dtype, x.i);
    }
    ctx_->fabric->write(agent_, site(in), r, cell, false);
  }
}

void RankVm::transfer(const Instr& in, bool is_put) {
  const ViewReg& dst = v_[in.a];
  const ViewReg& src = v_[in.c];
  const std::int64_t peer = peer_of(in, in.b, is_put ? dst : src);  // the remote side's view
  const std::int64_t dst_owner = is_put ? peer : rank_, src_owner = is_put ? rank_ : peer;
  if (in.shape.empty()) {  // whole views, of one shape (checked when compiled)
    ANYP_CHECK(
        std::equal(dst.extent.begin(), dst.extent.end(), src.extent.begin(), src.extent.end()),
        "a whole-view put/get between views of different shapes");
    const Region d = whole_region(in, dst, dst_owner);
    if (dst_owner == rank_) guard_sources(in, d);
    ctx_->fabric->copy(agent_, site(in), d, whole_region(in, src, src_owner), is_atomic(in));
    return;
  }
  const std::size_t nd = dst.shape.size(), ns = src.shape.size();
  const Index doff = offsets(in, 0, nd), soff = offsets(in, nd, ns);
  const std::span<const std::int64_t> dat(doff.data(), nd), sat(soff.data(), ns);
  check_region(in, dst, dst_owner, dat, in.shape, "destination");
  check_region(in, src, src_owner, sat, in.shape, "source");
  const Region d = region(in, dst, dst_owner, dat, in.shape);
  if (dst_owner == rank_) guard_sources(in, d);
  ctx_->fabric->copy(agent_, site(in), d, region(in, src, src_owner, sat, in.shape), is_atomic(in));
}

void RankVm::flat_op(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const std::int64_t peer = peer_of(in, in.b, v);
  const std::array<std::int64_t, 1> flat_shape{v.elements};
  const std::array<std::int64_t, 1> offset{s_[in.idx[0]].as_int()};
  switch (in.op) {
    case Opcode::LoadFlat: {
      const std::array<std::int64_t, 1> len{s_[in.idx[1]].as_int()};
      check_flat(in, v, peer, offset[0], len[0]);
      const Region r = flat_region(in, v, peer, flat_shape, offset, len);
      ctx_->fabric->read(agent_, site(in), r, shape_tile(t_[in.dst], v.dtype, len, len[0]));
      return;
    }
    case Opcode::StoreFlat: {
      const TileReg& t = t_[in.c];
      ANYP_CHECK(t.dtype == v.dtype, "store.flat of a tile into a view of another dtype");
      const std::array<std::int64_t, 1> len{t.elements()};
      check_flat(in, v, peer, offset[0], len[0]);
      const Region r = flat_region(in, v, peer, flat_shape, offset, len);
      if (peer == rank_) guard_sources(in, r);
      ctx_->fabric->write(agent_, site(in), r, t.data.data(), false);
      return;
    }
    case Opcode::PutFlat: {
      const ViewReg& src = v_[in.c];
      const std::array<std::int64_t, 1> src_shape{src.elements};
      const std::array<std::int64_t, 1> src_offset{s_[in.idx[1]].as_int()};
      const std::array<std::int64_t, 1> len{s_[in.idx[2]].as_int()};
      check_flat(in, v, peer, offset[0], len[0]);
      check_flat(in, src, rank_, src_offset[0], len[0]);
      const Region d = flat_region(in, v, peer, flat_shape, offset, len);
      const Region s = flat_region(in, src, rank_, src_shape, src_offset, len);
      if (peer == rank_) guard_sources(in, d);
      ctx_->fabric->copy(agent_, site(in), d, s, false);
      return;
    }
    default:
      ANYP_UNREACHABLE(std::string("flat_op on ") + opcode_name(in.op));
  }
}

void RankVm::notify(const Instr& in) {
  const std::int64_t peer = peer_of(in, in.b, v_[in.a]);
  const Cell cell = signal_cell(in, v_[in.a], peer);
  if (peer == rank_ && !pending_.empty()) {  // the cell may be a put_async's source
    const ViewReg& v = v_[in.a];
    const std::array<std::int64_t, 1> all{element_count(v.shape)}, at{(cell.offset - v.base) / 4},
        one{1};
    guard_sources(in, Region::flat(Space::Window, v.id, rank_, v.base, DType::INT32, all, at, one));
  }
  const std::int64_t value = s_[in.c].as_int();
  if (value < INT32_MIN || value > INT32_MAX) {
    fail(in, "notify value " + std::to_string(value) +
                 " does not fit the INT32 signal cell (range [-2147483648, 2147483647])");
  }
  ctx_->fabric->notify(agent_, site(in), cell, static_cast<ir::NotifyKind>(in.sub),
                       static_cast<std::int32_t>(value));
}

bool RankVm::wait(const Instr& in) {
  const ViewReg& v = v_[in.a];
  const Cell cell = signal_cell(in, v, rank_);
  // Two pointers of capture: the std::function below keeps it inline (no
  // allocation per wait).
  auto describe = [this, &in] {
    const Site& s = code_->sites[in.site];
    const Index idx = offsets(in, 0, in.idx.size());
    return "function '" + s.function + "', op " + s.located_op() + ": waits for " +
           cell_text(v_[in.a], std::vector<std::int64_t>(idx.begin(), idx.begin() + in.idx.size()));
  };
  return ctx_->fabric->wait(agent_, site(in), cell, static_cast<ir::WaitKind>(in.sub),
                            s_[in.b].as_int(), describe);
}

void RankVm::enter_collective(const Instr& in) {
  const CollectiveDesc& d = code_->collectives[static_cast<std::size_t>(in.imm)];
  for (std::size_t i = 0; i < d.views.size(); ++i) {
    if (v_[d.views[i]].sliced) {
      fail(in, "the " + d.roles[i] +
                   " is a pl::tensor::slice; a builtin collective takes whole views (pass a "
                   "pld::window view, a sub-window at an offset if need be)");
    }
  }
  for (std::size_t i = 0; i < d.views.size(); ++i) {
    const ViewReg& a = v_[d.views[i]];
    if (a.space != Space::Window) continue;
    const WindowSpan sa = window_span(a.id, a.base, a.dtype, a.shape);
    for (std::size_t j = i + 1; j < d.views.size(); ++j) {
      const ViewReg& b = v_[d.views[j]];
      if (b.space == Space::Window && sa.overlaps(window_span(b.id, b.base, b.dtype, b.shape))) {
        fail(in, shared_window_message(d.roles[i], d.roles[j],
                                       ctx_->exec->buffers[static_cast<std::size_t>(a.id)].name));
      }
    }
  }
  const ViewReg& signal = v_[d.views.back()];
  if (signal.space != Space::Window) fail(in, "the signal must be a window view");
  // The windows every rank's matching call must name alike: buffer and, for
  // a sub-window, its byte offset (a collective addresses a peer's window
  // through this rank's view, so the views must be the same on every rank).
  CallWindows windows;
  for (std::size_t i = 0; i < d.views.size(); ++i) {
    const ViewReg& v = v_[d.views[i]];
    if (v.space != Space::Window) continue;
    const bool is_signal = i + 1 == d.views.size();
    if (is_signal && v.base == 0) continue;  // the signal buffer keys the call sequence
    windows.add(CallWindows::Operand{static_cast<std::int32_t>(i), v.id, v.base});
  }
  if (launch_index_ != 0) return;  // a multi-block collective is one call of block 0's
  const std::string mismatch = ctx_->collectives->enter(rank_, signal.id, d, windows, site(in));
  if (!mismatch.empty()) fail(in, mismatch);
}

void RankVm::scalar_bin(const Instr& in) {
  std::string error;
  const std::optional<ScalarValue> r =
      scalar_binary(static_cast<ir::BinaryOp>(in.sub), s_[in.a], s_[in.b], in.dtype, &error);
  if (!r) fail(in, error);
  s_[in.dst] = *r;
}

void RankVm::check_count(const Instr& in) const {
  const std::int64_t count = s_[in.a].as_int(), row = s_[in.b].as_int();
  if (count < 0 || count > row) {
    fail(in, "send count " + std::to_string(count) + " is out of range [0, " + std::to_string(row) +
                 "] (the row length)");
  }
}

}  // namespace anyp::runtime
