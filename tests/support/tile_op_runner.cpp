// tile_op_runner.cpp — one tile op in a real program (tile_op_runner.hpp).
#include "support/tile_op_runner.hpp"

#include "support/source_locations.hpp"

namespace anyp_test {
namespace {

constexpr std::size_t kMaxInputs = 3;

pl::Shape dims(const std::vector<std::int64_t>& shape) {
  return pl::Shape(shape.begin(), shape.end());
}

pl::HostFunction program(const std::vector<TileInput>& inputs, std::int64_t m, pl::DType out,
                         const TileOpBody& body) {
  const pl::Dim NR = pl::dynamic("NR");
  std::vector<pl::Param> params, host_params;
  for (std::size_t i = 0; i < kMaxInputs; ++i) {
    const bool used = i < inputs.size();
    const std::int64_t n = used ? inputs[i].data.shape()[2] : 8;
    const pl::DType d = used ? inputs[i].data.dtype() : pl::FP32;
    const std::string name = "x" + std::to_string(i);
    params.push_back(pl::In(name, pl::Tensor({1, n}, d)));
    host_params.push_back(pl::In(name, pl::Tensor({NR, 1, n}, d)));
  }
  params.push_back(pl::Out("y", pl::Tensor({1, m}, out)));
  host_params.push_back(pl::Out("y", pl::Tensor({NR, 1, m}, out)));
  const std::size_t count = inputs.size();
  std::vector<std::vector<std::int64_t>> shapes;
  std::vector<std::int64_t> sizes;
  for (const TileInput& in : inputs) {
    shapes.push_back(in.shape);
    sizes.push_back(in.data.shape()[2]);
  }
  const auto kernel =
      pl::jit::incore("op", params, [=](pl::Value x0, pl::Value x1, pl::Value x2, pl::Value y) {
        const pl::Value xs[kMaxInputs] = {x0, x1, x2};
        std::vector<pl::Tile> tiles;
        for (std::size_t i = 0; i < count; ++i)
          tiles.push_back(pl::reshape(pl::load(xs[i], {0, 0}, {1, sizes[i]}), dims(shapes[i])));
        y = pl::store(pl::reshape(body(tiles), {1, m}), {0, 0}, y);
      });
  const auto per_rank = pl::jit::orchestration_for("per_rank", kernel);
  return pl::jit::host(
      "tile_op", host_params, [=](pl::Value x0, pl::Value x1, pl::Value x2, pl::Value y) {
        pl::range(pld::world_size(),
                  [&](pl::Scalar r) { per_rank(x0[r], x1[r], x2[r], y[r], pl::device(r)); });
      });
}

anyp::HostTensor run(const std::vector<TileInput>& inputs, std::int64_t m, pl::DType out,
                     const TileOpBody& body, int workers = 0) {
  const std::int64_t P = inputs.at(0).data.shape()[0];
  std::vector<anyp::HostTensor> args;
  for (std::size_t i = 0; i < kMaxInputs; ++i)
    args.push_back(i < inputs.size() ? inputs[i].data
                                     : anyp::HostTensor::zeros({P, 1, 8}, pl::FP32));
  anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, m}, out);
  args.push_back(y);
  anyp::RunConfig config;
  config.distributed.device_ids.clear();
  for (std::int64_t d = 0; d < P; ++d) config.distributed.device_ids.push_back(d);
  config.workers = workers;
  const pl::HostFunction host = program(inputs, m, out, body);
  std::vector<anyp::ArgRef> refs(args.begin(), args.end());
  host.compile(refs, config)(args[0], args[1], args[2], args[3]);
  return y;
}

}  // namespace

anyp::HostTensor run_tile_op(const std::vector<TileInput>& inputs, std::int64_t out_elements,
                             pl::DType out_dtype, const TileOpBody& body) {
  return run(inputs, out_elements, out_dtype, body);
}

std::string tile_op_error(const std::vector<TileInput>& inputs, std::int64_t out_elements,
                          pl::DType out_dtype, const TileOpBody& body) {
  try {
    // One worker: ranks run in order, so when several fail the first one
    // reports, whatever the machine's timing (sanitizer builds included).
    run(inputs, out_elements, out_dtype, body, 1);
  } catch (const anyp::Error& e) {
    return anyp_test::without_locations(e.what());
  }
  return "no error";
}

anyp::HostTensor make_input(std::int64_t P, std::int64_t n, pl::DType dtype,
                            const std::function<double(std::int64_t, std::int64_t)>& value) {
  anyp::HostTensor t = anyp::HostTensor::zeros({P, 1, n}, dtype);
  for (std::int64_t r = 0; r < P; ++r)
    for (std::int64_t i = 0; i < n; ++i) t.set(r * n + i, value(r, i));
  return t;
}

}  // namespace anyp_test
