// specialize_host.hpp — pass 2: run the host function at compile time for
// one P. Its rank loop unrolls into a dispatch list (rank r -> orchestration
// function + argument bindings); window buffers become allocation requests.
//
// Requires: dims bound (bind_dims). Guarantees: every dispatch targets a rank
// in [0, P), every x[r] is in range, every argument matches its parameter's
// bound type, buffers are allocated once (not in a loop), every buffer is
// viewed and every view reaches a dispatch, every comm domain's groups are
// disjoint, of one size and within [0, P), and a view of a domain's buffer
// reaches only the ranks of that domain — else a CompileError.
#pragma once

#include <memory>
#include <vector>

#include "anyp/arg_ref.hpp"
#include "ir/function.hpp"
#include "runtime/lowered_code.hpp"

namespace anyp::compiler {

struct HostDispatch {
  const ir::Function* callee = nullptr;
  std::vector<runtime::ArgBinding> args;
  std::int64_t issued = 0;  // its place among all ranks' dispatches, in host order
  // Its dispatch group (order_dispatches.hpp), numbered in order of first
  // issue: the dispatches one host call makes in one run of its innermost
  // loop (the rank loop), or the per-rank dispatches of a host collective.
  std::int64_t group = 0;
};

struct HostSpecialization {
  std::vector<runtime::WindowBuffer> buffers;  // offsets not yet assigned
  std::vector<runtime::CommDomain> domains;    // pld::comm_domain, in declaration order
  std::vector<std::vector<HostDispatch>> ranks;
  std::shared_ptr<runtime::ShapePool> arg_shapes =
      std::make_shared<runtime::ShapePool>();  // their arguments' shapes
  // Orchestration functions made for host-level collectives (dispatches
  // point into these).
  std::vector<std::shared_ptr<const ir::Function>> synthesized;
};

// A dim that only a dispatched function's parameters name (not the host's)
// is bound from the first dispatch's argument, as bind_dims binds the
// host's (an extent with one unknown dim, solved); later dispatches must
// agree. Such bindings are added to `bindings`.
HostSpecialization specialize_host(const ir::Function& host, ir::DimBindings& bindings,
                                   const std::vector<ArgRef>& args, std::int64_t world_size);

// Evaluates a shape; throws CompileError "<context>, dim i: ..." when an
// extent is not a positive exact integer.
std::vector<std::int64_t> eval_shape(const std::vector<ir::Expr>& shape,
                                     const ir::DimBindings& bindings, const std::string& context);

}  // namespace anyp::compiler
