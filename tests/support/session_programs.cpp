// session_programs.cpp — the stateful programs of session_programs.hpp.
#include "support/session_programs.hpp"

namespace anyp_test {
namespace {

constexpr std::int64_t S = kSessionRow;
const pl::Dim NR = pl::dynamic("NR");

const std::vector<pl::Param> row_params = {pl::In("x", pl::Tensor({1, S}, pl::FP32)),
                                           pl::Out("y", pl::Tensor({1, S}, pl::FP32))};

// host(x, y): one window buffer per entry of `windows` (name, shape), each
// viewed whole, and `orch(x[r], y[r], views...)` on every rank.
pl::HostFunction row_host(const std::string& name, const pl::Function& orch,
                          std::vector<std::pair<std::string, pl::Shape>> windows,
                          std::vector<pl::DType> dtypes) {
  return pl::jit::host(name,
                       {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                        pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32))},
                       [=](pl::Value x, pl::Value y) {
                         std::vector<pl::Value> buffers;
                         for (std::size_t i = 0; i < windows.size(); ++i) {
                           buffers.push_back(pld::alloc_window_buffer(
                               windows[i].first, windows[i].second, dtypes[i]));
                         }
                         pl::range(pld::world_size(), [&](pl::Scalar r) {
                           auto view = [&](std::size_t i) {
                             return pld::window(buffers[i], windows[i].second, dtypes[i]);
                           };
                           if (windows.size() == 1) {
                             orch(x[r], y[r], view(0), pl::device(r));
                           } else {
                             orch(x[r], y[r], view(0), view(1), pl::device(r));
                           }
                         });
                       });
}

}  // namespace

const pl::HostFunction& accumulate_program() {
  static const pl::HostFunction program = [] {
    std::vector<pl::Param> params = row_params;
    params.push_back(pl::InOut("acc", pld::DistributedTensor({1, S}, pl::FP32)));
    const auto kernel =
        pl::jit::incore("accumulate", params, [](pl::Value x, pl::Value y, pl::Value acc) {
          acc = pl::store(pl::add(pl::load(acc, {0, 0}, {1, S}), pl::load(x, {0, 0}, {1, S})),
                          {0, 0}, acc);
          y = pl::store(pl::load(acc, {0, 0}, {1, S}), {0, 0}, y);
        });
    return row_host("accumulate", pl::jit::orchestration_for("accumulate_rank", kernel),
                    {{"acc", {1, S}}}, {pl::FP32});
  }();
  return program;
}

const pl::HostFunction& allreduce_program() {
  static const pl::HostFunction program = [] {
    std::vector<pl::Param> params = row_params;
    params.push_back(pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)));
    params.push_back(pl::InOut("signal", pld::DistributedTensor({NR, 1}, pl::INT32)));
    const auto kernel = pl::jit::incore(
        "session_allreduce", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value sig) {
          data = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, data);
          data = pld::tensor::allreduce(data, sig);
          y = pl::store(pl::load(data, {0, 0}, {1, S}), {0, 0}, y);
        });
    return row_host("session_allreduce",
                    pl::jit::orchestration_for("session_allreduce_rank", kernel),
                    {{"data", {1, S}}, {"signal", {NR, 1}}}, {pl::FP32, pl::INT32});
  }();
  return program;
}

const pl::HostFunction& handoff_program() {
  static const pl::HostFunction program = [] {
    std::vector<pl::Param> params = row_params;
    params.push_back(pl::InOut("data", pld::DistributedTensor({1, S}, pl::FP32)));
    params.push_back(pl::InOut("flag", pld::DistributedTensor({1, 1}, pl::INT32)));
    const auto kernel = pl::jit::incore(
        "handoff", params, [](pl::Value x, pl::Value y, pl::Value data, pl::Value flag) {
          const pld::CommCtx ctx = pld::get_comm_ctx(data);
          const pl::Scalar me = pld::rank(ctx), n = pld::nranks(ctx);
          data = pl::store(pl::load(x, {0, 0}, {1, S}), {0, 0}, data);
          pld::system::notify(flag, (me + 1) % n, {0, 0}, 1, pld::NotifyOp::AtomicAdd);
          pld::system::wait(flag, {0, 0}, 1, pld::WaitCmp::Ge);
          y = pl::store(pld::tile::remote_load(data, (me + n - 1) % n, {0, 0}, {1, S}), {0, 0}, y);
        });
    return row_host("handoff", pl::jit::orchestration_for("handoff_rank", kernel),
                    {{"data", {1, S}}, {"flag", {1, 1}}}, {pl::FP32, pl::INT32});
  }();
  return program;
}

const pl::HostFunction& scale_program() {
  static const pl::HostFunction program = [] {
    std::vector<pl::Param> params = row_params;
    params.push_back(pl::InOut("w", pl::Tensor({1, S}, pl::FP32)));
    const auto kernel = pl::jit::incore("scale", params, [](pl::Value x, pl::Value y, pl::Value w) {
      const pl::Tile weight = pl::load(w, {0, 0}, {1, S});
      y = pl::store(pl::mul(pl::load(x, {0, 0}, {1, S}), weight), {0, 0}, y);
      w = pl::store(pl::mul(weight, 2.0), {0, 0}, w);
    });
    const auto orch = pl::jit::orchestration_for("scale_rank", kernel);
    return pl::jit::host("scale",
                         {pl::In("x", pl::Tensor({NR, 1, S}, pl::FP32)),
                          pl::Out("y", pl::Tensor({NR, 1, S}, pl::FP32)),
                          pl::InOut("w", pl::Tensor({NR, 1, S}, pl::FP32))},
                         [orch](pl::Value x, pl::Value y, pl::Value w) {
                           pl::range(pld::world_size(),
                                     [&](pl::Scalar r) { orch(x[r], y[r], w[r], pl::device(r)); });
                         });
  }();
  return program;
}

}  // namespace anyp_test
