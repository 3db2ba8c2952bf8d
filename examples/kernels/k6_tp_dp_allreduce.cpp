// k6_tp_dp_allreduce — a 2-D (tensor-parallel x data-parallel) allreduce
// with sub-communicator groups (pld::comm_domain / pld::comm_group).
//
// The lesson: a collective over a group is the same builtin collective on a
// window of a smaller domain. The P = DP x TP ranks form a grid, rank
// d * TP + t at row d, column t. Domain "tp" has one group per row (the TP
// ranks of replica d), domain "dp" one group per column (the DP replicas of
// shard t). A window buffer allocated in a domain is reached through the
// rank's group: pld::rank and pld::nranks of its view are the rank's index
// in the group and the group size, a peer is an index into the group, and
// pld::tensor::allreduce on it sums over the group only. Summing over the
// row and then over the column sums over the whole grid: with a mesh
// allreduce every rank pulls (TP - 1) + (DP - 1) copies instead of P - 1.
//
//   k6_tp_dp_allreduce -d 0,1,2,3,4,5 --cost            (2d: TP = 2, DP = 3)
//   k6_tp_dp_allreduce -d 0,1,2,3,4,5 --mode flat --cost (one world allreduce)
// The grid: TP is the largest divisor of P that is at most sqrt(P) (P = 4:
// 2 x 2, 6: 2 x 3, 9: 3 x 3, 12: 3 x 4; a prime P gives TP = 1, groups of
// one rank, where the row allreduce moves nothing).
// Golden: every rank's y is the sum over all ranks of x, in double; each
// rank's "coords" row holds its (rank, nranks) in "tp" and in "dp".
// Cost (mesh, N FP32 elements, per rank): bytes_in 4N ((TP-1) + (DP-1)) in
// 2d, 4N (P-1) flat.
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <cmath>

namespace {

constexpr std::int64_t N = 1024;  // elements per rank: one 4 KiB chunk
const pl::Dim P = pld::world_size();
const pl::Dim TP = pl::dynamic("TP");  // the group size of "tp" (bound from x's dims)
const pl::Dim DP = pl::dynamic("DP");  // the group size of "dp"

// Sums x over the rank's row group, then over its column group.
const pl::Function two_level = pl::jit::incore(
    "two_level_allreduce",
    {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
     pl::Out("coords", pl::Tensor({1, 8}, pl::INT32)),
     pl::InOut("row", pld::DistributedTensor({1, N}, pl::FP32)),
     pl::InOut("row_signal", pld::DistributedTensor({TP, 1}, pl::INT32)),
     pl::InOut("col", pld::DistributedTensor({1, N}, pl::FP32)),
     pl::InOut("col_signal", pld::DistributedTensor({DP, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value coords, pl::Value row, pl::Value row_signal,
       pl::Value col, pl::Value col_signal) {
      const pld::CommCtx in_row = pld::get_comm_ctx(row);
      const pld::CommCtx in_col = pld::get_comm_ctx(col);
      pl::write(coords, {0, 0}, pld::rank(in_row));
      pl::write(coords, {0, 1}, pld::nranks(in_row));
      pl::write(coords, {0, 2}, pld::rank(in_col));
      pl::write(coords, {0, 3}, pld::nranks(in_col));
      row = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, row);
      row = pld::tensor::allreduce(row, row_signal);  // over my TP group
      col = pl::store(pl::load(row, {0, 0}, {1, N}), {0, 0}, col);
      col = pld::tensor::allreduce(col, col_signal);  // over my DP group
      y = pl::store(pl::load(col, {0, 0}, {1, N}), {0, 0}, y);
    });

// The baseline: one allreduce over the world.
const pl::Function flat = pl::jit::incore(
    "flat_allreduce",
    {pl::In("x", pl::Tensor({1, N}, pl::FP32)), pl::Out("y", pl::Tensor({1, N}, pl::FP32)),
     pl::InOut("data", pld::DistributedTensor({1, N}, pl::FP32)),
     pl::InOut("signal", pld::DistributedTensor({P, 1}, pl::INT32))},
    [](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
      data = pl::store(pl::load(x, {0, 0}, {1, N}), {0, 0}, data);
      data = pld::tensor::allreduce(data, signal);
      y = pl::store(pl::load(data, {0, 0}, {1, N}), {0, 0}, y);
    });

const pl::Function two_level_per_rank = pl::jit::orchestration_for("per_rank", two_level);
const pl::Function flat_per_rank = pl::jit::orchestration_for("per_rank_flat", flat);

const std::vector<pl::Param> host_params = {
    pl::In("x", pl::Tensor({DP, TP, 1, N}, pl::FP32)),
    pl::Out("y", pl::Tensor({DP, TP, 1, N}, pl::FP32)),
    pl::Out("coords", pl::Tensor({DP, TP, 1, 8}, pl::INT32))};

const pl::HostFunction tp_dp_allreduce =
    pl::jit::host("tp_dp_allreduce", host_params, [](pl::Value x, pl::Value y, pl::Value coords) {
      // The grid's rows and columns, as two domains of disjoint groups.
      const pld::CommDomain tp = pld::comm_domain("tp");
      const pld::CommDomain dp = pld::comm_domain("dp");
      pl::range(DP, [&](pl::Scalar d) { pld::comm_group(tp, d * TP, TP); });  // d*TP + 0..TP-1
      pl::range(TP, [&](pl::Scalar t) { pld::comm_group(dp, t, DP, TP); });   // t, t+TP, ...
      auto row = pld::alloc_window_buffer("row", {1, N}, pl::FP32, tp);
      auto row_signal = pld::alloc_window_buffer("row_signal", {TP, 1}, pl::INT32, tp);
      auto col = pld::alloc_window_buffer("col", {1, N}, pl::FP32, dp);
      auto col_signal = pld::alloc_window_buffer("col_signal", {DP, 1}, pl::INT32, dp);
      pl::range(DP, [&](pl::Scalar d) {
        pl::range(TP, [&](pl::Scalar t) {
          two_level_per_rank(x[d][t], y[d][t], coords[d][t], pld::window(row, {1, N}, pl::FP32),
                             pld::window(row_signal, {TP, 1}, pl::INT32),
                             pld::window(col, {1, N}, pl::FP32),
                             pld::window(col_signal, {DP, 1}, pl::INT32), pl::device(d * TP + t));
        });
      });
    });

const pl::HostFunction flat_allreduce =
    pl::jit::host("flat_allreduce", host_params, [](pl::Value x, pl::Value y, pl::Value) {
      auto data = pld::alloc_window_buffer("data", {1, N}, pl::FP32);
      auto signal = pld::alloc_window_buffer("signal", {P, 1}, pl::INT32);
      pl::range(DP, [&](pl::Scalar d) {
        pl::range(TP, [&](pl::Scalar t) {
          flat_per_rank(x[d][t], y[d][t], pld::window(data, {1, N}, pl::FP32),
                        pld::window(signal, {P, 1}, pl::INT32), pl::device(d * TP + t));
        });
      });
    });

// The largest divisor of P that is at most sqrt(P).
std::int64_t grid_columns(std::int64_t p) {
  std::int64_t tp = 1;
  for (std::int64_t k = 1; k * k <= p; ++k)
    if (p % k == 0) tp = k;
  return tp;
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  const std::int64_t tp = grid_columns(P), dp = P / tp;
  anyp::InputGenerator gen(opt.seed);
  const anyp::HostTensor x = gen.uniform({dp, tp, 1, N});
  anyp::HostTensor y = anyp::HostTensor::zeros({dp, tp, 1, N}, pl::FP32);
  anyp::HostTensor coords = anyp::HostTensor::zeros({dp, tp, 1, 8}, pl::INT32);
  const pl::HostFunction& program = opt.mode == "flat" ? flat_allreduce : tp_dp_allreduce;
  anyp::CompiledProgram compiled = program.compile({x, y, coords}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y, coords);
  anyp::HostTensor expected = anyp::HostTensor::zeros({dp, tp, 1, N}, pl::FP32);
  for (std::int64_t i = 0; i < N; ++i) {
    double sum = 0;
    for (std::int64_t r = 0; r < P; ++r) sum += x.get(r * N + i);
    for (std::int64_t r = 0; r < P; ++r) expected.set(r * N + i, sum);
  }
  std::vector<bool> checks = {anyp::cli::check_close("y", y, expected, P)};
  if (opt.mode != "flat") {
    anyp::HostTensor want = anyp::HostTensor::zeros({dp, tp, 1, 8}, pl::INT32);
    for (std::int64_t d = 0; d < dp; ++d)
      for (std::int64_t t = 0; t < tp; ++t) {
        want.set_at({d, t, 0, 0}, static_cast<double>(t));  // index in the row group
        want.set_at({d, t, 0, 1}, static_cast<double>(tp));
        want.set_at({d, t, 0, 2}, static_cast<double>(d));  // index in the column group
        want.set_at({d, t, 0, 3}, static_cast<double>(dp));
      }
    checks.push_back(anyp::cli::check_exact("coords", coords, want, P));
  }
  return anyp::cli::report(checks, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "k6_tp_dp_allreduce";
  spec.step = 106;
  spec.modes = {"2d", "flat"};
  spec.default_devices = {0, 1, 2, 3};
  return anyp::cli::run_example(argc, argv, spec, run);
}
