// collective_errors_test.cpp — every compile error a user can provoke with a
// builtin collective in a kernel, with its exact message
// (anyp::CompileError::what(), compared whole): signals of the wrong shape
// for the mode (ring [2 * (NR - 1), NR], mesh and the others [NR, 1]) or of
// the wrong dtype, INT32 data to a reduction, broadcast roots out of range or
// not compile-time constants, a window as the source of allgather /
// all_to_all (it could alias the target), target and source sizes that do
// not fit, reduce_scatter data without NR rows, all_to_all_v inside a loop
// (of the kernel, or of the orchestration that dispatches its kernel), and a
// ring allreduce at P = 1 (pld.hpp; docs/collectives.md §2, §3.8 and §7).
//
// Every case uses one small program (host -> per_rank -> kernel) whose
// windows `data` and `signal` take the shape and dtype each case asks for;
// most cases also compile the call in a valid form, at the same P, so the
// message belongs to the one thing that is wrong.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "support/source_locations.hpp"

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");

using pld::AllreduceMode;
using pld::ReduceOp;

// The kernel's parameters: plain tensors x [NR, SIZE], row [1, SIZE] and
// counts [NR, 1] INT32; windows data and signal (shapes and dtypes per case)
// and recv [NR, 1] INT32.
struct Windows {
  pl::Shape data = {NR, SIZE};
  pl::DType data_dtype = pl::FP32;
  pl::Shape signal = {NR, 1};
  pl::DType signal_dtype = pl::INT32;
};

struct Args {
  pl::Value& x;
  pl::Value& row;
  pl::Value& counts;
  pl::Value& data;
  pl::Value& recv;
  pl::Value& signal;
};

using Body = std::function<void(Args)>;

pl::HostFunction program(const Body& body, const Windows& w = {}) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({NR, SIZE}, pl::FP32)),
      pl::In("row", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::In("counts", pl::Tensor({NR, 1}, pl::INT32)),
      pl::InOut("data", pld::DistributedTensor(w.data, w.data_dtype)),
      pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
      pl::InOut("signal", pld::DistributedTensor(w.signal, w.signal_dtype))};
  const auto kernel = pl::jit::incore("kernel", params,
                                      [body](pl::Value x, pl::Value row, pl::Value counts,
                                             pl::Value data, pl::Value recv, pl::Value signal) {
                                        body(Args{x, row, counts, data, recv, signal});
                                      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel](pl::Value x, pl::Value row, pl::Value counts, pl::Value data, pl::Value recv,
               pl::Value signal) { kernel(x, row, counts, data, recv, signal); });
  return pl::jit::host(
      "host",
      {pl::In("x", pl::Tensor({NR, NR, SIZE}, pl::FP32)),
       pl::In("row", pl::Tensor({NR, 1, SIZE}, pl::FP32)),
       pl::In("counts", pl::Tensor({NR, NR, 1}, pl::INT32))},
      [per_rank, w](pl::Value x, pl::Value row, pl::Value counts) {
        auto data_buf = pld::alloc_window_buffer("data", w.data, w.data_dtype);
        auto recv_buf = pld::alloc_window_buffer("recv", {NR, 1}, pl::INT32);
        auto signal_buf = pld::alloc_window_buffer("signal", w.signal, w.signal_dtype);
        pl::range(pld::world_size(), [&](pl::Scalar r) {
          pl::Value xr = x[r];
          pl::Value row_r = row[r];
          pl::Value counts_r = counts[r];
          per_rank(xr, row_r, counts_r, pld::window(data_buf, w.data, w.data_dtype),
                   pld::window(recv_buf, {NR, 1}, pl::INT32),
                   pld::window(signal_buf, w.signal, w.signal_dtype), pl::device(r));
        });
      });
}

// Compiles `host` at P; returns the CompileError's what(), or a description
// of what happened instead.
std::string compile_error(const pl::HostFunction& host, std::int64_t P) {
  const anyp::HostTensor x = anyp::HostTensor::zeros({P, P, SIZE}, pl::FP32);
  const anyp::HostTensor row = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  const anyp::HostTensor counts = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  try {
    host.compile({x, row, counts}, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + anyp_test::without_locations(e.what());
  }
  return "compiled without error";
}

std::string compile_error(const Body& body, const Windows& w, std::int64_t P) {
  return compile_error(program(body, w), P);
}

Windows ring_windows() {
  Windows w;
  w.data = {1, SIZE};
  w.signal = {2 * (NR - 1), NR};
  return w;
}

Body allreduce_body(AllreduceMode mode) {
  return [mode](Args a) { a.data = pld::tensor::allreduce(a.data, a.signal, ReduceOp::Sum, mode); };
}

// ---- signals -----------------------------------------------------------------------------

// The mesh's [NR, 1] signal passed to a ring allreduce (step 11's fatal mistake,
// docs/ladder-steps.md §8: a signal shape that does not match the mode).
TEST(CollectiveErrors, RingSignalOfTheWrongShape) {
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), ring_windows(), 4),
            "compiled without error");
  Windows w = ring_windows();
  w.signal = {NR, 1};  // the compact form (the mesh's), and its one-dim twin
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 4), "compiled without error");
  w.signal = {NR};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 3), "compiled without error");
  w.signal = {NR, 2 * (NR - 1)};  // transposed: one column per round
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.allreduce: the Ring signal "
            "must be [2 * (P - 1), P] (or PyPTO's [2 * (P - 1) + 1, P], or [P, 1]) INT32, which "
            "is [6, 4] at P = 4, got [4, 6]");
  w.signal = {NR, 2};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.allreduce: the Ring signal "
            "must be [2 * (P - 1), P] (or PyPTO's [2 * (P - 1) + 1, P], or [P, 1]) INT32, which "
            "is [4, 3] at P = 3, got [3, 2]");
  w.signal = {2 * NR, NR};  // one row per round, but 2 NR rounds
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.allreduce: the Ring signal "
            "must be [2 * (P - 1), P] (or PyPTO's [2 * (P - 1) + 1, P], or [P, 1]) INT32, which "
            "is [4, 3] at P = 3, got [6, 3]");
  w.signal = {2 * (NR - 1) + 1, NR};  // PyPTO's host ring signal: one row more
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 3), "compiled without error");
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 5), "compiled without error");
}

TEST(CollectiveErrors, MeshSignalOfTheWrongShape) {
  Windows w;
  w.data = {1, SIZE};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 3), "compiled without error");
  w.signal = {2 * (NR - 1), NR};  // the ring's signal passed to a mesh allreduce
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.allreduce: the Mesh signal "
            "must be [P, 1] INT32, which is [3, 1] at P = 3, got [4, 3]");
  w.signal = {1, 1};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.allreduce: the Mesh signal "
            "must be [P, 1] INT32, which is [3, 1] at P = 3, got [1, 1]");
}

TEST(CollectiveErrors, BarrierSignalOfTheWrongShape) {
  const Body barrier = [](Args a) { a.signal = pld::tensor::barrier(a.signal); };
  EXPECT_EQ(compile_error(barrier, {}, 3), "compiled without error");
  Windows w;
  w.signal = {1, NR};  // transposed
  EXPECT_EQ(compile_error(barrier, w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.barrier: the signal must be "
            "[P, 1] INT32, which is [3, 1] at P = 3, got [1, 3]");
  w.signal = {NR, 1, 1};
  EXPECT_EQ(compile_error(barrier, w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.barrier: the signal must be "
            "[P, 1] INT32, which is [3, 1] at P = 3, got [3, 1, 1]");
}

// The [NR, 1] signal of every other collective.
TEST(CollectiveErrors, OtherCollectivesWithAWrongSignalShape) {
  Windows w;
  w.signal = {NR, 2};
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::broadcast(a.data, a.signal, 0); }, w, 2),
      "compile error: function 'kernel' (incore), op pld.tensor.broadcast: the signal must be [P, "
      "1] INT32, which is [2, 1] at P = 2, got [2, 2]");
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::allgather(a.row, a.data, a.signal); }, w, 2),
      "compile error: function 'kernel' (incore), op pld.tensor.allgather: the signal must be [P, "
      "1] INT32, which is [2, 1] at P = 2, got [2, 2]");
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::reduce_scatter(a.data, a.signal); }, w, 2),
      "compile error: function 'kernel' (incore), op pld.tensor.reduce_scatter: the signal must be "
      "[P, 1] INT32, which is [2, 1] at P = 2, got [2, 2]");
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::all_to_all(a.x, a.data, a.signal); }, w, 2),
      "compile error: function 'kernel' (incore), op pld.tensor.all_to_all: the signal must be [P, "
      "1] INT32, which is [2, 1] at P = 2, got [2, 2]");
  w.signal = {NR, 1, 1};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 2),
            "compile error: function 'kernel' (incore): pld.tensor.allreduce: the signal must have "
            "1 or 2 dims ([NR] or [NR, 1]), got DistributedTensor[NR, 1, 1] INT32");
}

TEST(CollectiveErrors, SignalThatIsNotInt32) {
  Windows w;
  w.signal_dtype = pl::FP32;
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 2),
            "compile error: function 'kernel' (incore): pld.tensor.allreduce: the signal must be "
            "INT32, got DistributedTensor[NR, 1] FP32");
  EXPECT_EQ(compile_error([](Args a) { a.signal = pld::tensor::barrier(a.signal); }, w, 2),
            "compile error: function 'kernel' (incore): pld.tensor.barrier: the signal must be "
            "INT32, got DistributedTensor[NR, 1] FP32");
  w.signal_dtype = pl::INT64;
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::broadcast(a.data, a.signal, 0); }, w, 2),
      "compile error: function 'kernel' (incore): pld.tensor.broadcast: the signal must be INT32, "
      "got DistributedTensor[NR, 1] INT64");
}

// A plain tensor is not a signal: peers cannot reach it.
TEST(CollectiveErrors, SignalThatIsNotAWindow) {
  EXPECT_EQ(compile_error([](Args a) { a.data = pld::tensor::allreduce(a.data, a.counts); }, {}, 2),
            "compile error: function 'kernel' (incore): pld.tensor.allreduce: the signal must be a "
            "DistributedTensor (window view), got Tensor[NR, 1] INT32");
}

// ---- data ---------------------------------------------------------------------------------

// Tiles are typed: integer data reduces exactly (results in typed_tiles_test).
TEST(CollectiveErrors, IntegerDataToReductionsCompiles) {
  for (pl::DType dtype : {pl::INT8, pl::INT16, pl::INT32, pl::INT64}) {
    Windows w;
    w.data = {1, SIZE};
    w.data_dtype = dtype;
    EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 2), "compiled without error");
    w.signal = {2 * (NR - 1), NR};
    EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 2), "compiled without error");
    const Body body = [](Args a) { a.data = pld::tensor::reduce_scatter(a.data, a.signal); };
    Windows rs;
    rs.data_dtype = dtype;
    EXPECT_EQ(compile_error(body, rs, 4), "compiled without error");
  }
}

// reduce_scatter's window holds one row per rank.
TEST(CollectiveErrors, ReduceScatterDataWithoutNrRows) {
  const Body body = [](Args a) {
    a.data = pld::tensor::reduce_scatter(a.data, a.signal, ReduceOp::Max);
  };
  Windows w;
  w.data = {1, SIZE};
  EXPECT_EQ(compile_error(body, w, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.reduce_scatter: the data "
            "must have P = 4 rows (one per rank) in dim 0, got [1, 64]");
  w.data = {2, SIZE};
  EXPECT_EQ(compile_error(body, w, 2), "compiled without error");  // NR = 2 rows at P = 2
  EXPECT_EQ(compile_error(body, w, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.reduce_scatter: the data "
            "must have P = 4 rows (one per rank) in dim 0, got [2, 64]");
}

// ---- broadcast roots -------------------------------------------------------------------------

Body broadcast_body(const pl::ScalarArg& root) {
  return [root](Args a) { a.data = pld::tensor::broadcast(a.data, a.signal, root); };
}

TEST(CollectiveErrors, BroadcastRootOutOfRange) {
  EXPECT_EQ(compile_error(broadcast_body(3), {}, 4), "compiled without error");
  EXPECT_EQ(compile_error(broadcast_body(NR - 1), {}, 4), "compiled without error");
  EXPECT_EQ(compile_error(broadcast_body(4), {}, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.broadcast: root 4 is out of "
            "range [0, 4) for P = 4");
  EXPECT_EQ(compile_error(broadcast_body(-1), {}, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.broadcast: root -1 is out of "
            "range [0, 4) for P = 4");
  EXPECT_EQ(compile_error(broadcast_body(NR), {}, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.broadcast: root 3 is out of "
            "range [0, 3) for P = 3");
  // The same source is valid at one P and not at another.
  EXPECT_EQ(compile_error(broadcast_body(2), {}, 3), "compiled without error");
  EXPECT_EQ(compile_error(broadcast_body(2), {}, 2),
            "compile error: function 'kernel' (incore), op pld.tensor.broadcast: root 2 is out of "
            "range [0, 2) for P = 2");
}

TEST(CollectiveErrors, BroadcastRootIsARuntimeValue) {
  EXPECT_EQ(compile_error(
                [](Args a) {
                  pl::Scalar r = pld::rank(pld::get_comm_ctx(a.data));
                  a.data = pld::tensor::broadcast(a.data, a.signal, r);
                },
                {}, 2),
            "compile error: function 'kernel' (incore): pld.tensor.broadcast: root must be a "
            "compile-time integer constant in [0, P), got a run-time value; pass a constant such "
            "as ROOT = 0");
  EXPECT_EQ(compile_error(
                [](Args a) {
                  pl::Scalar root = pl::read(a.counts, {0, 0});
                  a.data = pld::tensor::broadcast(a.data, a.signal, root);
                },
                {}, 2),
            "compile error: function 'kernel' (incore): pld.tensor.broadcast: root must be a "
            "compile-time integer constant in [0, P), got a run-time value; pass a constant such "
            "as ROOT = 0");
  EXPECT_EQ(compile_error(broadcast_body(1.0), {}, 2),
            "compile error: function 'kernel' (incore): pld.tensor.broadcast: root must be an "
            "integer constant in [0, P), got a floating value");
}

// ---- sources and targets ---------------------------------------------------------------------

// A window source could be the target itself: pushes would overwrite rows that
// have not gone out yet (step 15's fatal mistake, docs/ladder-steps.md §8).
TEST(CollectiveErrors, AllgatherWithAWindowAsTheSource) {
  Windows w;
  w.data = {NR, SIZE};
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::allgather(a.row, a.data, a.signal); }, w, 3),
      "compiled without error");
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::allgather(a.data, a.data, a.signal); }, w,
                    3),
      "compile error: function 'kernel' (incore): pld.tensor.allgather: the source must be a plain "
      "tensor, a buffer separate from the target window, got DistributedTensor[NR, 64] FP32");
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::allgather(a.recv, a.data, a.signal); }, w,
                    3),
      "compile error: function 'kernel' (incore): pld.tensor.allgather: the source must be a plain "
      "tensor, a buffer separate from the target window, got DistributedTensor[NR, 1] INT32");
}

TEST(CollectiveErrors, AllToAllWithAWindowAsTheSource) {
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::all_to_all(a.x, a.data, a.signal); }, {}, 3),
      "compiled without error");
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::all_to_all(a.data, a.data, a.signal); }, {},
                    3),
      "compile error: function 'kernel' (incore): pld.tensor.all_to_all: the source must be a "
      "plain tensor, a buffer separate from the target window, got DistributedTensor[NR, 64] FP32");
}

TEST(CollectiveErrors, AllgatherTargetOfTheWrongSize) {
  const Body body = [](Args a) { a.data = pld::tensor::allgather(a.row, a.data, a.signal); };
  Windows w;
  w.data = {1, SIZE};  // room for one row, not NR
  EXPECT_EQ(compile_error(body, w, 3),
            "compile error: function 'kernel' (incore), op pld.tensor.allgather: the target [1, "
            "64] must hold P = 3 copies of the source [1, 64] (192 elements), got 64");
  w.data = {NR, SIZE};
  EXPECT_EQ(compile_error(body, w, 3), "compiled without error");
  // An [NR, SIZE] source needs NR * NR rows.
  EXPECT_EQ(
      compile_error([](Args a) { a.data = pld::tensor::allgather(a.x, a.data, a.signal); }, w, 3),
      "compile error: function 'kernel' (incore), op pld.tensor.allgather: the target [3, 64] must "
      "hold P = 3 copies of the source [3, 64] (576 elements), got 192");
  w.data = {1, NR * SIZE};  // any shape with NR copies of the source fits
  EXPECT_EQ(compile_error(body, w, 3), "compiled without error");
}

TEST(CollectiveErrors, AllToAllSourceAndTargetShapesDiffer) {
  const Body body = [](Args a) { a.data = pld::tensor::all_to_all(a.x, a.data, a.signal); };
  Windows w;
  w.data = {NR, SIZE / 2};
  EXPECT_EQ(compile_error(body, w, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.all_to_all: the source [4, "
            "64] and the target [4, 32] must have the same shape");
  w.data = {1, NR * SIZE};  // the same size, another shape
  EXPECT_EQ(compile_error(body, w, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.all_to_all: the source [4, "
            "64] and the target [1, 256] must have the same shape");
  // A source without a block of rows per rank.
  EXPECT_EQ(compile_error([](Args a) { a.data = pld::tensor::all_to_all(a.row, a.data, a.signal); },
                          {}, 4),
            "compile error: function 'kernel' (incore), op pld.tensor.all_to_all: the source must "
            "have a multiple of P = 4 rows in dim 0 (a block of rows per rank), got [1, 64]");
}

// ---- all_to_all_v in a loop --------------------------------------------------------------------

TEST(CollectiveErrors, AllToAllVInsideARangeLoop) {
  const Body once = [](Args a) {
    a.data = pld::tensor::all_to_all_v(a.x, a.counts, a.data, a.recv, a.signal);
  };
  EXPECT_EQ(compile_error(once, {}, 3), "compiled without error");
  EXPECT_EQ(compile_error(
                [](Args a) {
                  pl::range(2, [&](pl::Scalar) {
                    a.data = pld::tensor::all_to_all_v(a.x, a.counts, a.data, a.recv, a.signal);
                  });
                },
                {}, 3),
            "compile error: function 'kernel' (incore): pld.tensor.all_to_all_v is inside a "
            "pl::range loop: its Set-published recv_counts have no read-done handshake, so a "
            "second call could overwrite counts a peer has not read; call it outside loops");
  // Also nested deeper, under a branch inside the loop.
  EXPECT_EQ(compile_error(
                [](Args a) {
                  pl::Scalar r = pld::rank(pld::get_comm_ctx(a.data));
                  pl::range(r + 1, [&](pl::Scalar) {
                    pl::if_(r >= 0, [&] {
                      a.data = pld::tensor::all_to_all_v(a.x, a.counts, a.data, a.recv, a.signal);
                    });
                  });
                },
                {}, 3),
            "compile error: function 'kernel' (incore): pld.tensor.all_to_all_v is inside a "
            "pl::range loop: its Set-published recv_counts have no read-done handshake, so a "
            "second call could overwrite counts a peer has not read; call it outside loops");
}

// docs/collectives.md §3.8: refused in loops at every level, so also a kernel that
// calls it, dispatched from a loop of the orchestration function.
// An all_to_all_v kernel, called `orch_calls` times per orchestration
// dispatch (a pl::range loop when > 1) and dispatched to every rank
// `host_rounds` times (a host loop around the rank loop when > 1); returns
// what compiling it at P gives.
std::string all_to_all_v_program_error(std::int64_t orch_calls, std::int64_t host_rounds,
                                       std::int64_t P) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({NR, SIZE}, pl::FP32)),
      pl::In("counts", pl::Tensor({NR, 1}, pl::INT32)),
      pl::InOut("data", pld::DistributedTensor({NR, SIZE}, pl::FP32)),
      pl::InOut("recv", pld::DistributedTensor({NR, 1}, pl::INT32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto kernel = pl::jit::incore(
      "exchange", params,
      [](pl::Value x, pl::Value counts, pl::Value data, pl::Value recv, pl::Value signal) {
        data = pld::tensor::all_to_all_v(x, counts, data, recv, signal);
      });
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params,
      [kernel, orch_calls](pl::Value x, pl::Value counts, pl::Value data, pl::Value recv,
                           pl::Value signal) {
        if (orch_calls == 1) return kernel(x, counts, data, recv, signal);
        pl::range(orch_calls, [&](pl::Scalar) { kernel(x, counts, data, recv, signal); });
      });
  const pl::HostFunction host =
      pl::jit::host("host",
                    {pl::In("x", pl::Tensor({NR, NR, SIZE}, pl::FP32)),
                     pl::In("counts", pl::Tensor({NR, NR, 1}, pl::INT32))},
                    [per_rank, host_rounds](pl::Value x, pl::Value counts) {
                      auto data_buf = pld::alloc_window_buffer("data", {NR, SIZE}, pl::FP32);
                      auto recv_buf = pld::alloc_window_buffer("recv", {NR, 1}, pl::INT32);
                      auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                      pl::range(host_rounds, [&](pl::Scalar) {
                        pl::range(pld::world_size(), [&](pl::Scalar r) {
                          pl::Value xr = x[r];
                          pl::Value counts_r = counts[r];
                          per_rank(xr, counts_r, pld::window(data_buf, {NR, SIZE}, pl::FP32),
                                   pld::window(recv_buf, {NR, 1}, pl::INT32),
                                   pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                        });
                      });
                    });
  const anyp::HostTensor x = anyp::HostTensor::zeros({P, P, SIZE}, pl::FP32);
  const anyp::HostTensor counts = anyp::HostTensor::zeros({P, P, 1}, pl::INT32);
  try {
    host.compile({x, counts}, anyp::RunConfig::for_world_size(P));
  } catch (const anyp::CompileError& e) {
    return anyp_test::without_locations(e.what());
  }
  return "compiled without error";
}

TEST(CollectiveErrors, AllToAllVKernelCalledInAnOrchestrationLoop) {
  EXPECT_EQ(all_to_all_v_program_error(1, 1, 3), "compiled without error");
  EXPECT_EQ(all_to_all_v_program_error(3, 1, 3),
            "compile error: function 'per_rank' (orchestration): the call of 'exchange' inside a "
            "pl::range loop runs pld.tensor.all_to_all_v, which is refused in loops at every "
            "level: its Set-published recv_counts have no read-done handshake");
}

// A host that dispatches an all_to_all_v kernel twice to every rank repeats
// it as a loop would.
TEST(CollectiveErrors, AllToAllVDispatchedTwiceByTheHost) {
  EXPECT_EQ(
      all_to_all_v_program_error(1, 2, 2),
      "compile error: function 'host' (host): dispatch of 'per_rank': rank 0 already runs "
      "pld.tensor.all_to_all_v in an earlier dispatch; it is refused in loops at every level (its "
      "Set-published recv_counts have no read-done handshake), and repeated dispatches repeat it");
}

// recv_counts and the signal in one window: the Set-published counts would
// overwrite the barrier's credits and leave the signal dirty.
TEST(CollectiveErrors, AllToAllVRecvCountsAliasingTheSignal) {
  EXPECT_EQ(compile_error(
                [](Args a) {
                  a.data = pld::tensor::all_to_all_v(a.x, a.counts, a.data, a.signal, a.signal);
                },
                {}, 3),
            "compile error: function 'kernel' (incore): pld.tensor.all_to_all_v: recv_counts and "
            "the signal must be different windows (the Set-published counts would overwrite the "
            "barrier's credits)");
}

// ---- ring allreduce at P = 1 ------------------------------------------------------------

TEST(CollectiveErrors, RingAllreduceAtPEqualsOne) {
  // The natural program: its [2 * (NR - 1), NR] signal has no rows at P = 1.
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), ring_windows(), 1),
            "compile error: function 'per_rank' (orchestration), parameter 'signal', dim 0: extent "
            "2 * (NR - 1) is not a positive exact integer (it is 0)");
  // With a signal whose shape does not depend on P.
  Windows w = ring_windows();
  w.signal = {2, 1};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Ring), w, 1),
            "compile error: function 'kernel' (incore), op pld.tensor.allreduce: a Ring allreduce "
            "needs P >= 2, got P = 1");
  // The mesh allreduce is fine at P = 1.
  w.signal = {NR, 1};
  EXPECT_EQ(compile_error(allreduce_body(AllreduceMode::Mesh), w, 1), "compiled without error");
}

}  // namespace
