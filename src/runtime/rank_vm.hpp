// rank_vm.hpp — one rank: an interpreter over lowered code whose whole state
// is (dispatch index, pc, registers), so it can stop at any wait and resume
// later on any worker. Every window and host-tensor access and every signal
// operation goes through the run's Fabric (the door); the VM holds no
// pointer into any memory but its registers.
//
// run() executes until the rank finishes, parks on an unsatisfied wait (pc
// stays on the wait, which re-checks on resume), uses up its budget
// (preempted), or fails (error() names rank, device, function, op and
// values). With stop_after_visible it also returns Yield right after each
// visible op — a data access, a notify, or a satisfied wait — so a
// runner can interleave agents op by op (PCT).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "runtime/collective_tracker.hpp"
#include "runtime/executable.hpp"
#include "runtime/fabric.hpp"
#include "runtime/region.hpp"
#include "runtime/scalar_math.hpp"

namespace anyp::runtime {

// Tile storage: 64-byte aligned (a copy between a tile and a window, whose
// buffers start on 64-byte lines, then runs at full memcpy speed: 16-byte
// relative misalignment cost a third of it at 16 MiB), and grown without
// zero-filling (every op that sizes a tile writes all of it: a load, a
// result, a cast, a fill; zero-filling cost a pass over its bytes).
template <class T>
struct TileAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  TileAllocator() = default;
  template <class U>
  TileAllocator(const TileAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;  // default-initialised: no zeroing
  }
  template <class U, class... A>
  void construct(U* p, A&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(args)...);
  }
  template <class U>
  bool operator==(const TileAllocator<U>&) const noexcept {
    return true;
  }
};
using TileBytes = std::vector<std::byte, TileAllocator<std::byte>>;

// A tile: elements stored in their own dtype (row-major bytes), so every
// integer is exact over its whole range and FP16/BF16 keep their encodings.
struct TileReg {
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
  TileBytes data;
  std::int64_t elements() const {
    return static_cast<std::int64_t>(data.size() / dtype_bytes(dtype));
  }
};

// The product of a shape's extents.
inline std::int64_t element_count(std::span<const std::int64_t> shape) {
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

// A tensor view: a window buffer (the same on every rank, so the owner is
// chosen per access) or a host argument, starting `base` bytes into it.
struct ViewReg {
  Space space = Space::Window;
  std::int32_t id = -1;   // window buffer index, or host argument index
  std::int64_t base = 0;  // bytes from the buffer/argument start
  DType dtype = DType::FP32;
  std::span<const std::int64_t> shape;  // the dispatch argument's (it outlives the run)
  std::int64_t elements = 0;            // the product of extent
  // A view of a comm_domain buffer: its domain and this rank's group there
  // (peers are indices into the group); -1: the world.
  std::int32_t domain = -1;
  std::int32_t group = -1;
  // The part of `shape` the view names: [origin, origin + extent). A whole
  // view has origin 0 and extent == shape; a slice (pl::tensor::slice) a
  // sub-box, whose offsets the VM shifts by origin at the door.
  std::span<const std::int64_t> extent{};
  std::array<std::int64_t, kMaxRank> origin{};
  bool sliced = false;
};

// What block 0 of a multi-block launch hands the rank's other blocks: the
// code and first instruction of the launched kernel, its block count, and
// a copy of block 0's scalar and view registers. Written by block 0 before
// it notifies the blocks' launch cells, read by each block after its wait
// on its cell, rewritten only after every block has joined.
struct LaunchSlot {
  std::int32_t code = -1;
  std::size_t pc = 0;
  std::int64_t blocks = 1;
  SiteRef site;       // the launch instruction's
  bool quit = false;  // the rank's run is over: the blocks finish
  std::vector<ScalarValue> s;
  std::vector<ViewReg> v;
};

// What the ranks of one run share.
struct RunContext {
  const Executable* exec = nullptr;
  Fabric* fabric = nullptr;
  CollectiveTracker* collectives = nullptr;
  // Per rank, when exec->blocks > 1 (the engine owns them).
  LaunchSlot* launches = nullptr;
};

class RankVm {
 public:
  enum class Outcome { Done, Parked, Yield, Failed };

  // `agent`: block * world_size + rank (Executable::agents). Block 0 runs
  // the rank's dispatches; another block idles until block 0 launches a
  // kernel over it, runs its part of the launch, and idles again.
  RankVm(std::int64_t agent, const RunContext* ctx);
  Outcome run(std::int64_t budget, bool stop_after_visible = false);
  const std::string& error() const { return error_; }
  // A block other than 0 between launches (its wait is for the next one).
  bool idle() const { return block_ != 0 && !in_dispatch_; }
  std::int64_t instructions() const { return executed_; }
  // The tile compute this VM has done: the elements its compute ops priced
  // (a matmul: batch * m * n * k). The runner weighs it against the
  // instructions to tell compute-bound ranks from signal-bound ones.
  std::int64_t compute_elements() const { return compute_elements_; }
  // run() also yields once compute_elements() has reached `mark` (the
  // runner's moment to recruit its other workers mid-slice); the default
  // never does.
  void set_compute_mark(std::int64_t mark) { compute_mark_ = mark; }

 private:
  using Index = std::array<std::int64_t, kMaxRank>;

  // Starts the rank's next dispatch once the dispatches of other ranks it
  // depends on have ended (Dispatch::waits); Done when there is none left.
  enum class DispatchEntry { Entered, Parked, Done };
  DispatchEntry enter_dispatch();
  // After a dispatch: releases the ranks whose dispatches wait for it.
  void release_dispatch(const Dispatch& d);
  Cell order_cell(std::int64_t owner, std::int64_t cell) const {
    return Cell{owner, ctx_->exec->order_buffer, 4 * cell};
  }
  // Multi-block launches (a block other than 0 waits in enter_launch).
  enum class LaunchEntry { Entered, Parked, Quit };
  LaunchEntry enter_launch();
  void block_launch(const Instr& in);
  // False: block 0 is parked until the other blocks have finished.
  bool block_end(const Instr& in);
  void release_blocks();  // block 0, after its last dispatch: the others finish
  Cell launch_cell(std::int64_t block) const {
    return Cell{rank_, ctx_->exec->block_buffer, 4 * block};
  }
  [[noreturn, gnu::cold]] void fail(const Instr& in, const std::string& what) const;
  SiteRef site(const Instr& in) const { return SiteRef{code_index_, in.site}; }
  // The world rank of the peer in scalar register `reg`, addressed through
  // view v: the peer itself, or for a group view the group's peer-th rank.
  std::int64_t peer_of(const Instr& in, std::int32_t reg, const ViewReg& v) const;
  [[noreturn, gnu::cold]] void peer_out_of_range(const Instr& in, std::int64_t peer,
                                                 const ViewReg& v) const;
  [[noreturn, gnu::cold]] void cell_out_of_bounds(const Instr& in, const ViewReg& v,
                                                  std::int64_t owner, std::size_t dim) const;
  Index offsets(const Instr& in, std::size_t from, std::size_t count) const;
  // Checks [offs, offs + extent) lies inside view v (of `owner`'s memory).
  void check_region(const Instr& in, const ViewReg& v, std::int64_t owner,
                    std::span<const std::int64_t> offs, std::span<const std::int64_t> extent,
                    const char* role) const;
  [[noreturn, gnu::cold]] void region_out_of_bounds(const Instr& in, const ViewReg& v,
                                                    std::int64_t owner,
                                                    std::span<const std::int64_t> offs,
                                                    std::span<const std::int64_t> extent,
                                                    const char* role, std::size_t dim) const;
  // Checks [offset, offset + len) lies inside the view's elements.
  void check_flat(const Instr& in, const ViewReg& v, std::int64_t owner, std::int64_t offset,
                  std::int64_t len) const;
  [[noreturn, gnu::cold]] void flat_out_of_bounds(const Instr& in, const ViewReg& v,
                                                  std::int64_t owner, std::int64_t offset,
                                                  std::int64_t len) const;
  // Elements [offset, offset + len) of `owner`'s copy of view v seen flat.
  Region flat_region(const Instr& in, const ViewReg& v, std::int64_t owner,
                     std::span<const std::int64_t, 1> flat_shape,
                     std::span<const std::int64_t, 1> offset,
                     std::span<const std::int64_t, 1> len) const;
  const CommDomain& domain_of(const ViewReg& v) const {
    return ctx_->exec->domains[static_cast<std::size_t>(v.domain)];
  }
  // "rank 1's window 'dst'", or "host tensor 'x'": whose memory v is.
  std::string memory_text(const ViewReg& v, std::int64_t owner) const;
  // The region [offs, offs + extent) of `owner`'s copy of view v, seen with
  // `shape` (default: the view's own; flat ops pass {elements}).
  Region region(const Instr& in, const ViewReg& v, std::int64_t owner,
                std::span<const std::int64_t> offs, std::span<const std::int64_t> extent,
                std::span<const std::int64_t> shape = {}) const;
  // The whole of `owner`'s copy of view v.
  Region whole_region(const Instr& in, const ViewReg& v, std::int64_t owner) const;
  // The INT32 cell at in.idx of `owner`'s copy of signal view v.
  Cell signal_cell(const Instr& in, const ViewReg& v, std::int64_t owner) const;
  std::string cell_text(const ViewReg& v, const std::vector<std::int64_t>& idx) const;

  void scalar_bin(const Instr& in);  // the general case (run() inlines integer operands)
  void check_count(const Instr& in) const;
  void load(const Instr& in);
  // A partial tile's valid_shape: Instr::valid, or its run-time extents
  // (the last Instr::count registers of idx), checked against `tile`.
  std::span<const std::int64_t> valid_extents(const Instr& in, std::span<const std::int64_t> tile,
                                              Index& into) const;
  void store(const Instr& in);
  void read_or_write(const Instr& in);
  void transfer(const Instr& in, bool is_put);
  // put.async: checks the regions, records the put (pending_) and gives
  // its event; wait.async performs it (the latest moment the program
  // allows), so a source written in between is caught (guard_sources).
  void put_async(const Instr& in);
  void wait_async(const Instr& in);
  // A write into this rank's memory `w` by `in`: a run error when it
  // overlaps the source of a put_async still in flight.
  void guard_sources(const Instr& in, const Region& w) const {
    if (!pending_.empty()) [[unlikely]]
      check_sources(in, w);
  }
  void check_sources(const Instr& in, const Region& w) const;
  struct PendingPut;
  // Its destination and source regions (checked against the views when
  // `check`: at the issue).
  std::pair<Region, Region> put_regions(const PendingPut& p, bool check) const;
  // The end of a kernel (check.async) or a dispatch: every put_async must
  // have been waited for.
  void check_no_puts_in_flight();
  void end_dispatch();
  void flat_op(const Instr& in);
  bool wait(const Instr& in);
  void notify(const Instr& in);
  void enter_collective(const Instr& in);
  // Tile compute (rank_vm_compute.cpp).
  // Counts `elements` of compute and prices them through the door.
  void price_compute(const Instr& in, ComputeClass cls, DType dtype, std::int64_t elements);
  void tile_binary(const Instr& in);
  // Tensor-level ops (rank_vm_tensor.cpp): views of this rank's memory.
  void create_view(const Instr& in);
  void slice_view(const Instr& in);
  void copy_view(const Instr& in);
  void host_worker(const Instr& in);  // rank_vm_host_worker.cpp
  void tensor_binary(const Instr& in);
  // The elements of the whole view v (this rank's), read through the door.
  const std::byte* read_view(const Instr& in, const ViewReg& v, TileBytes& into);
  void tile_cast(const Instr& in);
  void full_tile(const Instr& in);
  void reshape_tile(const Instr& in);
  void tile_unary(const Instr& in);
  void tile_cmp(const Instr& in);
  void tile_select(const Instr& in);
  void tile_reduce(const Instr& in);
  void tile_expand(const Instr& in);
  void tile_matmul(const Instr& in);
  void tile_transpose(const Instr& in);
  void tile_slice(const Instr& in);
  void tile_concat(const Instr& in);
  void tile_arange(const Instr& in);
  // Scalar s[in.b] as one element of `dtype` (a float for an integer tile,
  // or a value it cannot hold, is a run error).
  // s[reg] (in.b when reg < 0) converted to dtype: a run error naming
  // `operand_of` ("tile", "tensor") when it cannot be.
  void scalar_element(const Instr& in, DType dtype, std::byte* element, std::int32_t reg = -1,
                      const char* operand_of = "tile") const;
  // A result of `bytes` is written into scratch_ (its operands may be the
  // destination register), then becomes t[in.dst] with dtype and shape.
  std::byte* result_storage(std::size_t bytes);
  void commit_result(const Instr& in, DType dtype, std::vector<std::int64_t> shape);
  // Shapes tile t as (dtype, shape, n elements) and returns its storage.
  std::byte* shape_tile(TileReg& t, DType dtype, std::span<const std::int64_t> shape,
                        std::int64_t n);

  std::int64_t agent_;  // the issuer at the door
  std::int64_t rank_;   // whose memory, dispatches and rank this is
  std::int64_t block_;  // this agent's block (0: the rank's dispatches)
  const RunContext* ctx_;
  // The launch being run: this block's index in it and its block count
  // (0 and 1 outside a launch).
  std::int64_t launch_index_ = 0;
  std::int64_t launch_blocks_ = 1;
  bool released_ = false;  // block 0: release_blocks() done
  const std::vector<Dispatch>* dispatches_;
  std::size_t dispatch_ = 0;
  std::size_t order_waits_done_ = 0;  // of the next dispatch's waits
  const LoweredCode* code_ = nullptr;
  std::int32_t code_index_ = -1;
  std::size_t pc_ = 0;
  bool in_dispatch_ = false;
  std::vector<ScalarValue> s_;
  std::vector<TileReg> t_;
  std::vector<ViewReg> v_;
  TileBytes scratch_;                           // a tile result while its operands are still read
  TileBytes tensor_a_, tensor_b_, tensor_out_;  // a tensor op's operands and result
  // A put_async in flight: what the put needs, copied (registers may change
  // before its wait), and its source's byte ranges.
  struct PendingPut {
    std::int64_t event = 0;
    const Instr* issued = nullptr;
    ViewReg dst, src;
    std::int64_t peer = 0;  // world rank
    Index dst_offsets{}, src_offsets{};
    std::vector<std::pair<std::int64_t, std::int64_t>> src_bytes;  // [first, end) per row
  };
  std::vector<PendingPut> pending_;
  std::int64_t next_event_ = 1;
  std::string error_;
  std::int64_t executed_ = 0;
  std::int64_t compute_elements_ = 0;
  std::int64_t compute_mark_ = std::numeric_limits<std::int64_t>::max();
};

}  // namespace anyp::runtime
