// comm_groups_test.cpp — sub-communicator groups (issue 12, item 2): one
// kernel that uses every builtin collective (mesh and ring allreduce,
// broadcast, allgather, reduce_scatter, all_to_all, all_to_all_v, barrier),
// pld::rank / nranks, and every peer op (put, get, remote_load,
// remote_store, notify) on windows of a pld::comm_domain, run at P with
// groups of G ranks — contiguous ({0..G-1}, {G..2G-1}, ...) and strided
// ({0, K, 2K, ...}, K = P / G) — must give every rank exactly what the same
// kernel gives the same rank of its group run alone as a world of G ranks
// (bit for bit, with the same cost card row), race-checked. The 2-D splits
// of P = 4, 6, 8, 9, 12; a few values are also checked by hand, so a
// program that ignored groups would fail both ways.
#include <gtest/gtest.h>

#include <anyp/anyp.hpp>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace {

constexpr std::int64_t S = 16;  // a data row
constexpr std::int64_t C = 8;   // an all_to_all row
const pl::Dim NR = pl::dynamic("NR");
const pl::Dim G = pl::dynamic("G");  // the group size (a world of G ranks in the reference)

// The outputs, per rank: name and shape.
struct Out {
  const char* name;
  pl::Shape shape;
  pl::DType dtype;
};
const std::vector<Out> outs = {
    {"mesh", {1, S}, pl::FP32},     {"ring", {1, S}, pl::FP32},      {"bcast", {1, S}, pl::FP32},
    {"gathered", {G, S}, pl::FP32}, {"scattered", {G, S}, pl::FP32}, {"a2a", {G, C}, pl::FP32},
    {"a2av", {G, C}, pl::FP32},     {"pushed", {1, S}, pl::FP32},    {"pulled", {1, S}, pl::FP32},
    {"got", {1, S}, pl::FP32},      {"stored", {1, S}, pl::FP32},    {"coords", {1, 8}, pl::INT32}};

struct Win {
  const char* name;
  pl::Shape shape;
  pl::DType dtype;
};
const std::vector<Win> wins = {
    {"data", {1, S}, pl::FP32},        {"ring_signal", {2 * (G - 1), G}, pl::INT32},
    {"signal", {G, 1}, pl::INT32},     {"gathered_w", {G, S}, pl::FP32},
    {"scatter_w", {G, S}, pl::FP32},   {"dst", {G, C}, pl::FP32},
    {"vdst", {G, C}, pl::FP32},        {"recv_counts", {G, 1}, pl::INT32},
    {"stage", {1, S}, pl::FP32},       {"inbox", {1, S}, pl::FP32},
    {"inbox_flag", {G, 1}, pl::INT32}, {"landing", {1, S}, pl::FP32}};

std::vector<pl::Param> kernel_params() {
  std::vector<pl::Param> p = {pl::In("x", pl::Tensor({1, S}, pl::FP32)),
                              pl::In("src", pl::Tensor({G, C}, pl::FP32)),
                              pl::In("counts", pl::Tensor({G, 1}, pl::INT32))};
  for (const Out& o : outs) p.push_back(pl::Out(o.name, pl::Tensor(o.shape, o.dtype)));
  for (const Win& w : wins)
    p.push_back(pl::InOut(w.name, pld::DistributedTensor(w.shape, w.dtype)));
  return p;
}

// The parameters as handles (27 of them: the body takes a list, not a lambda
// of 27 arguments).
std::vector<pl::Value> handles(const std::vector<anyp::detail::VarRef>& vars) {
  std::vector<pl::Value> out;
  out.reserve(vars.size());  // no reallocation: a moved handle records nothing, a copy would
  for (const auto& v : vars) out.emplace_back(v);
  return out;
}

void kernel_body(std::vector<pl::Value>& a) {
  pl::Value &x = a[0], &src = a[1], &counts = a[2];
  pl::Value &mesh = a[3], &ring = a[4], &bcast = a[5], &gathered = a[6], &scattered = a[7],
            &a2a = a[8], &a2av = a[9], &pushed = a[10], &pulled = a[11], &got = a[12],
            &stored = a[13], &coords = a[14];
  pl::Value &data = a[15], &ring_signal = a[16], &signal = a[17], &gathered_w = a[18],
            &scatter_w = a[19], &dst = a[20], &vdst = a[21], &recv_counts = a[22], &stage = a[23],
            &inbox = a[24], &inbox_flag = a[25], &landing = a[26];
  const pld::CommCtx ctx = pld::get_comm_ctx(data);
  const pl::Scalar me = pld::rank(ctx), n = pld::nranks(ctx);
  pl::write(coords, {0, 0}, me);
  pl::write(coords, {0, 1}, n);
  const pl::Tile mine = pl::load(x, {0, 0}, {1, S});
  data = pl::store(mine, {0, 0}, data);
  data = pld::tensor::allreduce(data, signal);
  mesh = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, mesh);
  data = pl::store(mine, {0, 0}, data);
  data = pld::tensor::allreduce(data, ring_signal, pld::ReduceOp::Max, pld::AllreduceMode::Ring);
  ring = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, ring);
  data = pl::store(mine, {0, 0}, data);
  data = pld::tensor::broadcast(data, signal, G - 1);
  bcast = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, bcast);
  gathered_w = pld::tensor::allgather(x, gathered_w, signal);
  gathered = pl::store(pl::load(gathered_w, {0, 0}, {G, S}), {0, 0}, gathered);
  scatter_w = pl::store(pl::load(gathered_w, {0, 0}, {G, S}), {0, 0}, scatter_w);
  scatter_w = pld::tensor::reduce_scatter(scatter_w, signal);
  scattered = pl::store(pl::load(scatter_w, {0, 0}, {G, S}), {0, 0}, scattered);
  dst = pld::tensor::all_to_all(src, dst, signal);
  a2a = pl::store(pl::load(dst, {0, 0}, {G, C}), {0, 0}, a2a);
  vdst = pld::tensor::all_to_all_v(src, counts, vdst, recv_counts, signal);
  a2av = pl::store(pl::load(vdst, {0, 0}, {G, C}), {0, 0}, a2av);
  // Point to point in the group: right and left neighbours by group index.
  const pl::Scalar right = (me + 1) % n, left = (me + n - 1) % n;
  pld::tensor::put(inbox, right, x);
  pld::system::notify(inbox_flag, right, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
  pld::system::wait(inbox_flag, {0, 0}, 1, pld::WaitCmp::Ge);
  pushed = pl::store(pl::load(inbox, {0, 0}, {1, S}), {0, 0}, pushed);
  stage = pl::store(pl::mul(mine, 2.0), {0, 0}, stage);
  pld::tile::remote_store(pl::mul(mine, 3.0), landing, left, {0, 0});
  signal = pld::tensor::barrier(signal);
  pulled = pl::store(pld::tile::remote_load(stage, left, {0, 0}, {1, S}), {0, 0}, pulled);
  pld::tensor::get(got, right, stage);
  stored = pl::store(pl::load(landing, {0, 0}, {1, S}), {0, 0}, stored);
  signal = pld::tensor::barrier(signal);  // the stage is read before anyone leaves
}

const pl::Function kernel(anyp::detail::make_function(
    "every_group_op", anyp::detail::Level::Incore, kernel_params(), kernel_params().size(),
    [](const std::vector<anyp::detail::VarRef>& vars) {
      std::vector<pl::Value> a = handles(vars);
      kernel_body(a);
    }));
const pl::Function per_rank = pl::jit::orchestration_for("per_rank", kernel);

std::vector<pl::Param> host_params() {
  std::vector<pl::Param> p = {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                              pl::In("src", pl::Tensor({NR, G, C}, pl::FP32)),
                              pl::In("counts", pl::Tensor({NR, G, 1}, pl::INT32))};
  for (const Out& o : outs) {
    pl::Shape s = {NR};
    s.insert(s.end(), o.shape.begin(), o.shape.end());
    p.push_back(pl::Out(o.name, pl::Tensor(s, o.dtype)));
  }
  return p;
}

enum class Layout { World, Contiguous, Strided };

// Dispatches the kernel to every rank; with a layout other than World, on
// windows of domain "g" whose groups of G ranks follow the layout.
void host_body(Layout layout, std::vector<pl::Value>& args) {
  std::vector<pl::Value> buffers;
  if (layout == Layout::World) {
    for (const Win& w : wins) buffers.push_back(pld::alloc_window_buffer(w.name, w.shape, w.dtype));
  } else {
    const pld::CommDomain g = pld::comm_domain("g");
    pl::range(NR / G, [&](pl::Scalar k) {
      if (layout == Layout::Contiguous) {
        pld::comm_group(g, k * G, G);
      } else {
        pld::comm_group(g, k, G, NR / G);
      }
    });
    for (const Win& w : wins)
      buffers.push_back(pld::alloc_window_buffer(w.name, w.shape, w.dtype, g));
  }
  pl::range(pld::world_size(), [&](pl::Scalar r) {
    std::vector<pl::Value> slices, views;  // kept alive until the call is recorded
    slices.reserve(args.size());
    views.reserve(wins.size());
    std::vector<anyp::detail::CallArg> call;
    for (const pl::Value& t : args) call.emplace_back(slices.emplace_back(t[r]));
    for (std::size_t k = 0; k < wins.size(); ++k)
      call.emplace_back(views.emplace_back(pld::window(buffers[k], wins[k].shape, wins[k].dtype)));
    call.emplace_back(pl::device(r));
    anyp::detail::record_call(*per_rank.def(), call);
  });
}

pl::HostFunction make_host(Layout layout) {
  return pl::HostFunction(anyp::detail::make_function(
      "groups_" + std::to_string(static_cast<int>(layout)), anyp::detail::Level::Host,
      host_params(), host_params().size(), [layout](const std::vector<anyp::detail::VarRef>& vars) {
        std::vector<pl::Value> a = handles(vars);
        host_body(layout, a);
      }));
}
const pl::HostFunction world_program = make_host(Layout::World);
const pl::HostFunction contiguous_program = make_host(Layout::Contiguous);
const pl::HostFunction strided_program = make_host(Layout::Strided);

struct Result {
  std::vector<anyp::HostTensor> outs;
  std::vector<anyp::RankCost> cost;
};

anyp::HostTensor per_rank_tensor(std::int64_t P, const pl::Shape& shape, pl::DType dtype,
                                 std::int64_t g) {
  std::vector<std::int64_t> s = {P};
  for (const pl::Dim& d : shape) s.push_back(d.to_string() == "G" ? g : std::stoll(d.to_string()));
  return anyp::HostTensor::zeros(s, dtype);
}

// Runs `program` at P with group size g on the given inputs.
Result run(const pl::HostFunction& program, std::int64_t g, const anyp::HostTensor& x,
           const anyp::HostTensor& src, const anyp::HostTensor& counts) {
  const std::int64_t P = x.shape()[0];
  Result res;
  std::vector<anyp::ArgRef> args = {x, src, counts};
  for (const Out& o : outs) res.outs.push_back(per_rank_tensor(P, o.shape, o.dtype, g));
  for (const auto& t : res.outs) args.push_back(t);
  anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
  config.check_races = true;
  const anyp::RunStats stats = program.compile(args, config).run(args);
  res.cost = stats.cost;
  return res;
}

// The rows of `t` (one per world rank) that belong to `ranks`, in order.
anyp::HostTensor rows_of(const anyp::HostTensor& t, const std::vector<std::int64_t>& ranks) {
  std::vector<std::int64_t> shape = t.shape();
  shape[0] = static_cast<std::int64_t>(ranks.size());
  anyp::HostTensor out = anyp::HostTensor::zeros(shape, t.dtype());
  const std::int64_t row = t.numel() / t.shape()[0];
  for (std::size_t k = 0; k < ranks.size(); ++k)
    for (std::int64_t i = 0; i < row; ++i)
      out.set(static_cast<std::int64_t>(k) * row + i, t.get(ranks[k] * row + i));
  return out;
}

class CommGroups : public testing::TestWithParam<std::tuple<std::int64_t, std::int64_t, Layout>> {};

TEST_P(CommGroups, EveryRankGetsWhatItsGroupRunAloneGivesIt) {
  const auto [P, g, layout] = GetParam();
  const std::int64_t K = P / g;  // groups
  anyp::InputGenerator gen(static_cast<std::uint32_t>(P * 100 + g));
  const anyp::HostTensor x = gen.uniform({P, 1, S}), src = gen.uniform({P, g, C});
  anyp::HostTensor counts = anyp::HostTensor::zeros({P, g, 1}, pl::INT32);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t d = 0; d < g; ++d)
      counts.set(r * g + d, static_cast<double>((r + 3 * d) % (C + 1)));
  const Result grouped =
      run(layout == Layout::Contiguous ? contiguous_program : strided_program, g, x, src, counts);
  for (std::int64_t k = 0; k < K; ++k) {
    std::vector<std::int64_t> members;
    for (std::int64_t i = 0; i < g; ++i)
      members.push_back(layout == Layout::Contiguous ? k * g + i : k + i * K);
    const Result alone =
        run(world_program, g, rows_of(x, members), rows_of(src, members), rows_of(counts, members));
    for (std::size_t o = 0; o < outs.size(); ++o) {
      const anyp::HostTensor mine = rows_of(grouped.outs[o], members);
      ASSERT_TRUE(anyp::equal_exact(mine, alone.outs[o]))
          << outs[o].name << " of group " << k << ", max diff "
          << anyp::max_abs_diff(mine, alone.outs[o]);
    }
    for (std::int64_t i = 0; i < g; ++i) {
      EXPECT_EQ(grouped.cost[static_cast<std::size_t>(members[static_cast<std::size_t>(i)])],
                alone.cost[static_cast<std::size_t>(i)])
          << "cost card row of rank " << members[static_cast<std::size_t>(i)];
    }
    // By hand: the group index and size, the mesh sum over the members
    // only, and the right neighbour's push.
    for (std::int64_t i = 0; i < g; ++i) {
      const std::int64_t r = members[static_cast<std::size_t>(i)];
      EXPECT_EQ(grouped.outs[11].at({r, 0, 0}), static_cast<double>(i)) << "rank of " << r;
      EXPECT_EQ(grouped.outs[11].at({r, 0, 1}), static_cast<double>(g)) << "nranks of " << r;
      double sum = 0;
      for (const std::int64_t m : members) sum += x.at({m, 0, 3});
      EXPECT_FLOAT_EQ(grouped.outs[0].at({r, 0, 3}), sum) << "mesh sum on rank " << r;
      const std::int64_t from = members[static_cast<std::size_t>((i + g - 1) % g)];
      EXPECT_EQ(grouped.outs[7].at({r, 0, 5}), x.at({from, 0, 5})) << "push into rank " << r;
    }
  }
}

std::string layout_name(Layout l) {
  return l == Layout::Contiguous ? "contiguous" : l == Layout::Strided ? "strided" : "world";
}

INSTANTIATE_TEST_SUITE_P(
    Splits, CommGroups,
    testing::Values(std::tuple{4, 2, Layout::Contiguous}, std::tuple{4, 2, Layout::Strided},
                    std::tuple{6, 2, Layout::Contiguous}, std::tuple{6, 3, Layout::Strided},
                    std::tuple{8, 4, Layout::Contiguous}, std::tuple{8, 2, Layout::Strided},
                    std::tuple{9, 3, Layout::Contiguous}, std::tuple{9, 3, Layout::Strided},
                    std::tuple{12, 3, Layout::Contiguous}, std::tuple{12, 4, Layout::Strided},
                    std::tuple{12, 6, Layout::Contiguous}),
    [](const auto& info) {
      return "P" + std::to_string(std::get<0>(info.param)) + "_G" +
             std::to_string(std::get<1>(info.param)) + "_" + layout_name(std::get<2>(info.param));
    });

}  // namespace
