// sessions_agree.cpp — anyp::Session on the MPI engine (issue 12, item 4):
// under `mpirun -n P` (tests/mpi.cmake) every process runs the stateful
// programs of support/session_programs.hpp through a session on the
// threads engine (all P ranks here) and through one on the MPI engine (its
// own rank), several runs each, and compares every run's output byte for
// byte: persistent windows without a reset (accumulating), with a reset
// before every run, an explicit reset_windows(), the builtin allreduce back
// to back on persistent windows, and a resident tensor that runs update in
// place; submits on the MPI engine run before they return. Process 0 prints
// "OK", or each difference.
#include <anyp/anyp.hpp>
#include <cstring>
#include <iostream>
#include <string>

#include "support/session_programs.hpp"

namespace {

using anyp_test::kSessionRow;

int compare(const anyp::ProcessWorld& world) {
  const std::int64_t P = world.size;
  int differences = 0;
  auto report = [&](const std::string& text) {
    ++differences;
    if (world.rank == 0) std::cerr << text << '\n';
  };
  anyp::InputGenerator gen(51);
  const anyp::HostTensor x = gen.uniform({P, 1, kSessionRow});
  anyp::HostTensor w0 = gen.uniform({P, 1, kSessionRow});
  struct Case {
    std::string name;
    const pl::HostFunction& program;
    anyp::SessionOptions options;
    bool resident_w = false;
    bool reset_midway = false;
  };
  const Case cases[] = {
      {"accumulate, persistent", anyp_test::accumulate_program(), {true, false}},
      {"accumulate, reset every run", anyp_test::accumulate_program(), {true, true}},
      {"accumulate, reset_windows()", anyp_test::accumulate_program(), {true, false}, false, true},
      {"allreduce, persistent", anyp_test::allreduce_program(), {true, false}},
      {"resident weight", anyp_test::scale_program(), {}, true},
  };
  for (const Case& c : cases) {
    std::vector<anyp::HostTensor> outputs[2];
    for (int engine = 0; engine < 2; ++engine) {
      anyp::RunConfig config = anyp::RunConfig::for_world_size(P);
      config.engine = engine == 0 ? "threads" : "mpi";
      anyp::HostTensor y = anyp::HostTensor::zeros({P, 1, kSessionRow}, pl::FP32);
      std::vector<anyp::ArgRef> args = {x, y};
      if (c.resident_w) args.push_back(w0);
      anyp::Session session = c.program.compile(args, config).prepare(c.options);
      anyp::HostTensor w;
      if (c.resident_w) {
        w = session.resident(w0);
        args.back() = w;
      }
      for (int run = 0; run < 4; ++run) {
        if (c.reset_midway && run == 2) session.reset_windows();
        anyp::RunHandle h = session.submit(args);
        if (engine == 1 && !h.ready()) report(c.name + ": an MPI submit returned before its run");
        h.wait();
        outputs[engine].push_back(y.clone());
      }
      if (c.resident_w) outputs[engine].push_back(w.clone());
    }
    for (std::size_t k = 0; k < outputs[0].size(); ++k) {
      if (!anyp::equal_exact(outputs[0][k], outputs[1][k])) {
        report(c.name + ": output " + std::to_string(k) +
               " differs between the engines (max diff " +
               std::to_string(anyp::max_abs_diff(outputs[0][k], outputs[1][k])) + ")");
      }
    }
    // The runs must differ where state carries over, or the test shows nothing.
    if (c.options.persistent_windows && !c.options.reset_windows &&
        c.program.name() == "accumulate" && anyp::equal_exact(outputs[1][0], outputs[1][1])) {
      report(c.name + ": the second run did not see the first run's window");
    }
  }
  if (world.rank == 0 && differences == 0) std::cout << "OK\n";
  return differences == 0 ? 0 : 1;
}

}  // namespace

int main() {
  const anyp::ProcessWorld world = anyp::process_world("mpi");
  try {
    return compare(world);
  } catch (const std::exception& e) {
    if (world.rank == 0) std::cerr << e.what() << '\n';
    return 1;
  }
}
