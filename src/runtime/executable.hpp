// executable.hpp — the runtime's part of a compiled plan: everything an
// engine needs to run one program at one P, and nothing symbolic. The
// compiler builds it (compiler/plan.hpp holds one next to the IR and the
// artifact texts); engines, the rank VM and observers read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anyp/dtype.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::runtime {

// A host argument as compiled: tensors with their bound shape; scalars are
// compiled into the code.
struct HostArgSpec {
  std::string name;
  bool is_tensor = true;
  DType dtype = DType::FP32;
  std::vector<std::int64_t> shape;  // tensors
};

struct Executable {
  std::string program;  // the host function's name
  std::int64_t world_size = 0;
  std::vector<std::int64_t> device_ids;
  std::vector<HostArgSpec> host_args;
  std::vector<WindowBuffer> buffers;  // symmetric: one layout for every rank
  std::vector<CommDomain> domains;    // pld::comm_domain, in declaration order
  std::int64_t window_bytes = 0;      // per rank
  std::vector<LoweredCode> codes;
  std::vector<std::vector<Dispatch>> ranks;  // ranks[r]: its dispatches, in host order
  std::shared_ptr<ShapePool> arg_shapes;     // where their arguments' shapes are
  // Multi-block launches (pl::blocks): every rank runs `blocks` agents (VM
  // contexts; the largest launch's count, 1 without launches), agent
  // block * world_size + rank for block `block` of `rank`. Their launch and
  // join cells are the window buffer `block_buffer` (-1: none): cell b
  // (b >= 1) starts block b, cell 0 counts the blocks that finished.
  std::int64_t blocks = 1;
  std::int32_t block_buffer = -1;
  // The cells of the dispatch order across ranks (Dispatch::waits; -1: no
  // dispatch waits for another rank's).
  std::int32_t order_buffer = -1;
  std::vector<OrderEdge> order_edges;  // Dispatch::edge_releases index these
  std::int64_t agents() const { return blocks * world_size; }
  std::int64_t rank_of_agent(std::int64_t agent) const { return agent % world_size; }
  std::int64_t block_of_agent(std::int64_t agent) const { return agent / world_size; }
};

}  // namespace anyp::runtime
