// 14_reduce_scatter — rank r ends with chunk r reduced over all ranks.
//
// Every rank stages all P chunks of its x into the rows of its [NR, SIZE]
// window. hand: after the hand-rolled barrier (hbar), rank r seeds the
// accumulator with its own row r and folds in row r of every peer (pulled with
// pld::tile::remote_load) with the chosen op. builtin:
// pld::tensor::reduce_scatter(data, signal, op) does the same in place (it
// overwrites row r, so it runs a second, read-done barrier before the store);
// rank r then reads its row r. Both modes accept every ReduceOp.
//   14_reduce_scatter                                 (hand, sum, P = 2)
//   14_reduce_scatter -d 0,1,2,3 --mode builtin --op max --cost
// Golden: y[r][j] = OP_k x[k][0][r*SIZE + j], close.
// Cost (S = 256 B, N = P * S): (P-1)/P * N in, as P-1 RMA of N/P each. hand:
// P-1 notify, 1 round; builtin: 2(P-1) notify (+E P-1), 2 rounds.
#include <algorithm>
#include <anyp/anyp.hpp>
#include <anyp/example_cli.hpp>
#include <string>

namespace {

constexpr std::int64_t SIZE = 64;
const pl::Dim NR = pl::dynamic("NR");  // the rank count is a runtime dimension

using pld::NotifyOp;
using pld::ReduceOp;
using pld::WaitCmp;

ReduceOp parse_op(const std::string& op) {
  if (op == "max") return ReduceOp::Max;
  if (op == "min") return ReduceOp::Min;
  if (op == "prod") return ReduceOp::Prod;
  return ReduceOp::Sum;
}

// The tile op of a ReduceOp, for the hand-written loop.
pl::Tile combine(ReduceOp op, const pl::Tile& a, const pl::Tile& b) {
  switch (op) {
    case ReduceOp::Max:
      return pl::maximum(a, b);
    case ReduceOp::Min:
      return pl::minimum(a, b);
    case ReduceOp::Prod:
      return pl::mul(a, b);
    default:
      return pl::add(a, b);
  }
}

// Chunk c of x (columns [c*SIZE, (c+1)*SIZE)) into row c of the window.
void stage_chunks(const pl::Value& x, pl::Value& data, const pl::Scalar& P) {
  pl::range(P, [&](pl::Scalar c) {
    data = pl::store(pl::load(x, {0, c * SIZE}, {1, SIZE}), {c, 0}, data);
  });
}

pl::HostFunction make_program(bool builtin, ReduceOp op) {
  const std::vector<pl::Param> params = {
      pl::In("x", pl::Tensor({1, NR * SIZE}, pl::FP32)),
      pl::Out("y", pl::Tensor({1, SIZE}, pl::FP32)),
      pl::InOut("data", pld::DistributedTensor({NR, SIZE}, pl::FP32)),
      pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32))};
  const auto hand_kernel = [op](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
    auto ctx = pld::get_comm_ctx(data);
    pl::Scalar r = pld::rank(ctx);
    pl::Scalar P = pld::nranks(ctx);
    stage_chunks(x, data, P);
    // hbar(signal): every rank has staged every chunk.
    pl::range(P, [&](pl::Scalar p) {
      pl::if_(p != r, [&] { pld::system::notify(signal, p, {r, 0}, 1, NotifyOp::AtomicAdd); });
    });
    pl::range(P, [&](pl::Scalar s) {
      pl::if_(s != r, [&] { pld::system::wait(signal, {s, 0}, 1, WaitCmp::Ge); });
    });
    // Seeded with my own row r (the loop skips p == r), never with zero.
    pl::Tile acc = pl::load(data, {r, 0}, {1, SIZE});
    pl::range(P, [&](pl::Scalar p) {
      pl::if_(p != r, [&] {
        acc = combine(op, acc, pld::tile::remote_load(data, p, {r, 0}, {1, SIZE}));
      });
    });
    y = pl::store(acc, {0, 0}, y);
  };
  const auto builtin_kernel = [op](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
    auto ctx = pld::get_comm_ctx(data);
    pl::Scalar r = pld::rank(ctx);
    pl::Scalar P = pld::nranks(ctx);
    stage_chunks(x, data, P);
    data = pld::tensor::reduce_scatter(data, signal, op);  // in place: row r is reduced
    y = pl::store(pl::load(data, {r, 0}, {1, SIZE}), {0, 0}, y);
  };
  const pl::Function kernel =
      builtin ? pl::jit::incore("builtin_reduce_scatter", params, builtin_kernel)
              : pl::jit::incore("hand_reduce_scatter", params, hand_kernel);
  const auto per_rank = pl::jit::orchestration(
      "per_rank", params, [kernel](pl::Value x, pl::Value y, pl::Value data, pl::Value signal) {
        kernel(x, y, data, signal);
      });
  return pl::jit::host(builtin ? "reduce_scatter_builtin" : "reduce_scatter_hand",
                       {pl::In("x", pl::Tensor({NR, 1, NR * SIZE}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, SIZE}, pl::FP32))},
                       [per_rank](pl::Value x, pl::Value y) {
                         auto data_buf = pld::alloc_window_buffer("data", {NR, SIZE}, pl::FP32);
                         auto signal_buf = pld::alloc_window_buffer("signal", {NR, 1}, pl::INT32);
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           per_rank(x[r], y[r], pld::window(data_buf, {NR, SIZE}, pl::FP32),
                                    pld::window(signal_buf, {NR, 1}, pl::INT32), pl::device(r));
                         });
                       });
}

double combine(ReduceOp op, double a, double b) {
  switch (op) {
    case ReduceOp::Max:
      return std::max(a, b);
    case ReduceOp::Min:
      return std::min(a, b);
    case ReduceOp::Prod:
      return a * b;
    default:
      return a + b;
  }
}

int run(const anyp::cli::Options& opt) {
  const std::int64_t P = opt.world_size();
  const ReduceOp op = parse_op(opt.op);
  anyp::InputGenerator gen(opt.seed);
  anyp::HostTensor x = gen.uniform({P, 1, P * SIZE});
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  const pl::HostFunction program = make_program(opt.mode == "builtin", op);
  anyp::CompiledProgram compiled = program.compile({x, y}, opt.config());
  if (opt.compile_only) return anyp::cli::finish_compile_only(compiled, opt);
  const anyp::RunStats stats = compiled(x, y);
  // The golden, in double: chunk r reduced over every rank's x.
  anyp::HostTensor expected = anyp::HostTensor::zeros({P, 1, SIZE}, pl::FP32);
  for (std::int64_t r = 0; r < P; ++r) {
    for (std::int64_t j = 0; j < SIZE; ++j) {
      double acc = x.at({0, 0, r * SIZE + j});
      for (std::int64_t k = 1; k < P; ++k) acc = combine(op, acc, x.at({k, 0, r * SIZE + j}));
      expected.set_at({r, 0, j}, acc);
    }
  }
  return anyp::cli::report({anyp::cli::check_close("y", y, expected, P)}, opt, stats);
}

}  // namespace

int main(int argc, char** argv) {
  anyp::cli::ExampleSpec spec;
  spec.name = "14_reduce_scatter";
  spec.step = 14;
  spec.modes = {"hand", "builtin"};
  spec.ops = {"sum", "max", "min", "prod"};
  return anyp::cli::run_example(argc, argv, spec, run);
}
