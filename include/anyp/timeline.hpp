// timeline.hpp — modeled time of a run (RunConfig::timeline): every op of
// every rank placed on a clock by the platform's cost model
// (models/<platform>.model, or RunConfig::model_file). Ops of one rank run
// in program order; a remote transfer costs alpha + bytes * beta; a notify
// reaches its cell notify_ns after it was issued; a wait ends no earlier
// than the arrival of the notify that made its comparison true. The clock
// is computed after the run from what each rank did, so it depends only on
// the program, P and the model: the same for every schedule, worker count
// and engine. docs/timeline.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace anyp {

// One op of one rank on the modeled clock.
struct TimelineOp {
  enum class Kind : std::uint8_t {
    LocalRead,    // a load of the own window or a host tensor, the local side of a put/get
    LocalWrite,   // a store into them
    RemoteRead,   // a pull from a peer (get, remote_load, a collective's flat load)
    RemoteWrite,  // a push into a peer (put, remote_store, flat put), atomic adds included
    Compute,      // tile math
    Notify,
    Wait,
  };
  Kind kind = Kind::Compute;
  std::int64_t rank = 0;
  std::int64_t block = 0;  // its block, in a kernel launched over pl::blocks(n)
  double start_ns = 0, end_ns = 0;
  double blocked_ns = 0;  // the part of [start, end) spent blocked: a wait for its
                          // notify, an op for a transfer of its rank it depends on
  // A transfer carried out by DMA engine `engine` of its rank (a model with
  // dma_engines; docs/timeline.md §2a): [start, end) is on the engine, and
  // the rank spent the model's dma_issue_ns issuing it from issued_ns.
  // -1: on the rank's own clock.
  std::int32_t engine = -1;
  double issued_ns = 0;
  bool continues_transfer = false;  // the second op of a put or get on an engine
  std::uint32_t function = 0;       // user function, index into Timeline::names ("get_step")
  std::uint32_t op = 0;             // user op, index into Timeline::names ("pld.tensor.get")
  std::uint32_t memory = 0;         // what it touches, into names ("rank 1's window 'dst'",
                                    // "signal 'sig' cell [0, 1] of rank 2"; 0: none)
  std::int64_t peer = -1;           // the other rank of a remote access or notify
  std::int64_t bytes = 0;           // data accesses
  std::int64_t elements = 0;        // compute
};
const char* timeline_op_kind_name(TimelineOp::Kind k);  // "remote read", ...

// A notify and the wait it satisfied (indices into Timeline::ops).
struct TimelineFlow {
  std::size_t notify = 0;
  std::size_t wait = 0;
};

struct RankTimeline {
  double finish_ns = 0;     // when the rank's last op ended
  double busy_ns = 0;       // time in ops (waits' own cost included)
  double wait_ns = 0;       // time blocked in waits
  std::int64_t rounds = 0;  // longest chain of notify -> wait edges between ranks up to its end
  // Its transfers on DMA engines (a model with dma_engines) and the time
  // its engines were busy with them, summed over the engines.
  std::int64_t transfers = 0;
  double engine_busy_ns = 0;
};

// A port of the modeled fabric that carried data (a model with shared
// links, docs/timeline.md §2b).
struct TimelineLink {
  enum class Port : std::uint8_t { Out, In, InterNodeOut, InterNodeIn };
  std::int64_t rank = 0;
  Port port = Port::Out;
  double bytes = 0;    // carried
  double busy_ns = 0;  // with at least one transfer on it
};
const char* timeline_port_name(TimelineLink::Port p);  // "port out", "inter-node port in", ...

struct Timeline {
  std::string model;  // the cost model's name ("a2a3sim")
  // The model's DMA engines per rank and issue time (0: synchronous
  // transfers, docs/timeline.md §2a).
  std::int64_t dma_engines = 0;
  double dma_issue_ns = 0;
  std::vector<TimelineLink> links;  // the ports that carried data, by rank then port
  double makespan_ns = 0;
  std::int64_t rounds = 0;  // the longest chain of dependent notify -> wait edges between ranks
  std::vector<RankTimeline> ranks;
  std::vector<TimelineOp> ops;  // by rank, in program order
  std::vector<TimelineFlow> flows;
  // The ops that fixed the finish time, in time order: program order on one
  // rank, and notify -> wait edges where a wait was blocked.
  std::vector<std::size_t> critical_path;
  std::vector<std::string> names;  // names[0] is ""
  // Non-empty when some wait could not be placed exactly (a wait the run
  // satisfied by a data write into its cell, or one the modeled order never
  // satisfies): what was assumed.
  std::string note;
  const std::string& name(std::uint32_t i) const { return names[i]; }
};

}  // namespace anyp
