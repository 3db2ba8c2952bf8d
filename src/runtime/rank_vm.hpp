// rank_vm.hpp — one rank: an interpreter over lowered code whose whole state
// is (dispatch index, pc, registers), so it can stop at any wait and resume
// later on any worker. run() executes until the rank finishes, parks on an
// unsatisfied wait (pc stays on the wait, which re-checks on resume), uses
// up its budget (preempted), or fails (error() names rank, function, op and
// values).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "anyp/compiled_program.hpp"
#include "runtime/fabric.hpp"
#include "runtime/lowered_code.hpp"
#include "runtime/scalar_math.hpp"

namespace anyp::runtime {

class Scheduler;

struct TileReg {
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
  std::vector<double> data;
};

struct ViewReg {
  bool window = false;
  std::byte* host_base = nullptr;  // host tensors: start of the view
  std::int32_t buffer = -1;        // windows
  std::int64_t window_offset = 0;  // windows: bytes from a rank's window base
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;
};

// Everything the ranks of one run share, read-only.
struct RunContext {
  const std::vector<LoweredCode>* codes = nullptr;
  const std::vector<WindowBuffer>* buffers = nullptr;
  const std::vector<const HostTensor*>* host_args = nullptr;
  const std::vector<std::int64_t>* device_ids = nullptr;
  Fabric* fabric = nullptr;
  Scheduler* scheduler = nullptr;
  // Per rank: payload bytes that peers pushed into it (put, remote_store);
  // added to that rank's bytes_in when the run ends.
  std::vector<std::atomic<std::int64_t>>* pushed_in = nullptr;
};

class RankVm {
 public:
  enum class Outcome { Done, Parked, Yield, Failed };

  RankVm(std::int64_t rank, const std::vector<Dispatch>* dispatches, const RunContext* ctx);
  Outcome run(std::int64_t budget);
  const std::string& error() const { return error_; }
  std::int64_t instructions() const { return executed_; }
  const RankCost& cost() const { return cost_; }

 private:
  bool enter_dispatch();
  bool step(const Instr& in, bool& parked);
  [[noreturn]] void fail(const Instr& in, const std::string& what) const;
  std::byte* view_base(const Instr& in, const ViewReg& v, std::int64_t rank) const;
  std::int64_t peer_of(const Instr& in, std::int32_t reg) const;
  std::vector<std::int64_t> offsets(const Instr& in, std::size_t from, std::size_t count) const;
  void check_region(const Instr& in, const ViewReg& v, const std::vector<std::int64_t>& offs,
                    const std::vector<std::int64_t>& extent, const char* role) const;
  std::string cell_text(const ViewReg& v, const std::vector<std::int64_t>& idx) const;
  // The INT32 cell at in.idx (registers) of `rank`'s copy of signal view v.
  std::int32_t* signal_cell(const Instr& in, const ViewReg& v, std::int64_t rank) const;
  void transfer(const Instr& in, bool is_put);
  void flat_op(const Instr& in);
  // Counts a data op between this rank and `peer` (only when peer != rank).
  void count_rma(std::int64_t peer, std::int64_t bytes, bool inbound);
  // Checks [offset, offset + len) lies inside the view's elements.
  void check_flat(const Instr& in, const ViewReg& v, std::int64_t offset, std::int64_t len) const;
  void tile_binary(const Instr& in);
  // Lets parked waits on cells of this window view re-check after a write.
  void window_written(const Instr& in, const ViewReg& v, std::int64_t rank) const;

  std::int64_t rank_;
  const std::vector<Dispatch>* dispatches_;
  const RunContext* ctx_;
  std::size_t dispatch_ = 0;
  const LoweredCode* code_ = nullptr;
  std::size_t pc_ = 0;
  bool in_dispatch_ = false;
  std::vector<ScalarValue> s_;
  std::vector<TileReg> t_;
  std::vector<ViewReg> v_;
  std::string error_;
  std::int64_t executed_ = 0;
  RankCost cost_;
};

}  // namespace anyp::runtime
