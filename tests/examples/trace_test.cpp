// trace_test.cpp — what `--trace FILE` and `--timeline` give for ladder
// steps 07 and 10 at P = 4, run as processes. The trace is Chrome Trace
// Event Format (what Perfetto and chrome://tracing open), parsed here with
// nlohmann-json:
//   - one process, one thread track per rank ("rank r", sorted by r);
//   - one complete slice ("X") per op, named by the user op, its category
//     the op's kind, args naming buffer or cell, peer and bytes; a track's
//     slices follow each other without overlap;
//   - a flow ("s" -> "f", one id each) from every notify to the wait it
//     satisfied, each end inside its slice: in step 07 (put mode) from the
//     left neighbour, in step 10's ring 2(P - 1) per rank, all from the left
//     neighbour;
//   - otherData: the model, the makespan (the last slice's end), rounds.
// And step 07's --timeline text, exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/build_paths.hpp"
#include "support/run_command.hpp"

namespace {

using nlohmann::json;

constexpr std::int64_t P = 4;

struct Slice {
  std::string name, cat;
  double ts = 0, dur = 0;
  json args;
};

struct Trace {
  json raw;
  std::map<std::int64_t, std::string> thread_names;
  std::map<std::int64_t, std::vector<Slice>> slices;  // by track, in time order
  struct Flow {
    std::int64_t from = -1, to = -1;
    double from_ts = 0, to_ts = 0;
    int starts = 0, ends = 0;
    std::string cat;  // "signal": notify -> wait; "dma": a transfer's issue -> the transfer
  };
  std::map<std::int64_t, Flow> flows;  // by id
};

// A model with two DMA engines per rank and shared links
// (docs/timeline.md §2a, §2b); the caller removes the file.
std::string async_model_file() {
  const auto path = std::filesystem::temp_directory_path() /
                    ("anyp_trace_async_" + std::to_string(getpid()) + ".model");
  std::ofstream(path) << "name = async\n"
                         "alpha_ns = 2000   # source: assumed\n"
                         "beta_ns_per_byte = 0.005   # source: assumed\n"
                         "local_alpha_ns = 100   # source: assumed\n"
                         "local_beta_ns_per_byte = 0   # source: assumed\n"
                         "notify_issue_ns = 100   # source: assumed\n"
                         "notify_ns = 700   # source: assumed\n"
                         "wait_ns = 50   # source: assumed\n"
                         "compute.*.* = 100   # source: assumed\n"
                         "dma_engines = 2   # source: assumed\n"
                         "dma_issue_ns = 50   # source: assumed\n"
                         "links_shared = 1   # source: assumed\n";
  return path.string();
}

// Runs `example -d 0,..,3 --trace FILE <extra>`, parses FILE.
Trace run_with_trace(const std::string& example, const std::string& extra = "") {
  const auto path = std::filesystem::temp_directory_path() /
                    ("anyp_trace_" + std::to_string(getpid()) + "_" + example + ".json");
  const auto result =
      anyp_test::run_command(anyp_test::examples_dir() + "/" + example + " -d 0,1,2,3 --trace " +
                             path.string() + " " + extra + " 2>&1");
  EXPECT_TRUE(result.ok) << result.out;
  EXPECT_EQ(result.out, "OK\n");
  Trace t;
  std::ifstream file(path);
  t.raw = json::parse(file);
  std::filesystem::remove(path);
  for (const json& e : t.raw.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "thread_name") {
      t.thread_names[e.at("tid")] = e.at("args").at("name");
    } else if (ph == "X") {
      t.slices[e.at("tid")].push_back(
          Slice{e.at("name"), e.at("cat"), e.at("ts"), e.at("dur"), e.at("args")});
    } else if (ph == "s" || ph == "f") {
      Trace::Flow& f = t.flows[e.at("id")];
      f.cat = e.at("cat");
      EXPECT_TRUE(f.cat == "signal" || f.cat == "dma") << f.cat;
      if (ph == "s") {
        ++f.starts;
        f.from = e.at("tid");
        f.from_ts = e.at("ts");
      } else {
        ++f.ends;
        f.to = e.at("tid");
        f.to_ts = e.at("ts");
        EXPECT_EQ(e.at("bp"), "e");
      }
    }
  }
  // In time order per track (a put_async's ops are written at its
  // wait_async, after ops that came later).
  for (auto& [tid, slices] : t.slices)
    std::stable_sort(slices.begin(), slices.end(),
                     [](const Slice& a, const Slice& b) { return a.ts < b.ts; });
  return t;
}

// The category of the slice of `track` that contains `ts` ("" for none).
std::string slice_at(const Trace& t, std::int64_t track, double ts) {
  for (const Slice& s : t.slices.at(track))
    if (s.ts <= ts && ts <= s.ts + s.dur) return s.cat;
  return "";
}

// What every trace must be: the tracks, slices that follow each other,
// flows from a notify slice to a wait slice, the makespan at the end.
// No two slices of one track overlap, their ends added in doubles as a
// viewer adds them (speedscope nests a slice that starts before the one
// before it ends).
void expect_no_overlap(const Trace& t) {
  for (const auto& [tid, slices] : t.slices) {
    for (std::size_t i = 1; i < slices.size(); ++i)
      EXPECT_LE(slices[i - 1].ts + slices[i - 1].dur, slices[i].ts)
          << t.thread_names.at(tid) << ": " << slices[i - 1].name << " then " << slices[i].name;
  }
}

// The simple twin of a2a3sim (every transfer on its issuer's clock): the
// layout below, one track per rank.
std::string simple_model() {
  return std::string("--model ") + anyp_test::source_dir() + "/models/simple/a2a3sim.model";
}

void expect_well_formed(const Trace& t) {
  expect_no_overlap(t);
  ASSERT_EQ(t.thread_names.size(), static_cast<std::size_t>(P));
  double last_end = 0;
  for (std::int64_t r = 0; r < P; ++r) {
    EXPECT_EQ(t.thread_names.at(r), "rank " + std::to_string(r));
    ASSERT_TRUE(t.slices.count(r)) << "no slices on rank " << r;
    double at = 0;
    for (const Slice& s : t.slices.at(r)) {
      EXPECT_NEAR(s.ts, at, 1e-9) << "rank " << r << ": " << s.name << " does not follow";
      EXPECT_GE(s.dur, 0);
      EXPECT_EQ(s.args.at("kind"), s.cat);
      at = s.ts + s.dur;
    }
    last_end = std::max(last_end, at);
  }
  for (const auto& [id, f] : t.flows) {
    EXPECT_EQ(f.starts, 1) << "flow " << id;
    EXPECT_EQ(f.ends, 1) << "flow " << id;
    EXPECT_EQ(slice_at(t, f.from, f.from_ts), "notify") << "flow " << id;
    EXPECT_EQ(slice_at(t, f.to, f.to_ts), "wait") << "flow " << id;
    EXPECT_LT(f.from_ts, f.to_ts) << "flow " << id;
  }
  EXPECT_EQ(t.raw.at("otherData").at("model"), "a2a3sim-simple");
  EXPECT_NEAR(t.raw.at("otherData").at("makespan_us").get<double>(), last_end, 1e-9);
}

TEST(Trace, Step07PutHasAFlowFromTheLeftNeighbour) {
  const Trace t = run_with_trace("07_dynamic_rank_count", "--mode put " + simple_model());
  expect_well_formed(t);
  const std::vector<std::string> ops = {"pl.load",        "pl.store",          "pld.tensor.put",
                                        "pld.tensor.put", "pld.system.notify", "pld.system.wait",
                                        "pl.load",        "pl.store"};
  for (std::int64_t r = 0; r < P; ++r) {
    const std::vector<Slice>& s = t.slices.at(r);
    ASSERT_EQ(s.size(), ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(s[i].name, ops[i]) << "op " << i;
    const std::int64_t right = (r + 1) % P;
    EXPECT_EQ(s[3].cat, "remote write");
    EXPECT_EQ(s[3].args.at("buffer"), "rank " + std::to_string(right) + "'s window 'dst_buf'");
    EXPECT_EQ(s[3].args.at("peer"), right);
    EXPECT_EQ(s[3].args.at("bytes"), 256);
    EXPECT_EQ(s[3].args.at("function"), "put_step");
    EXPECT_EQ(s[4].args.at("cell"),
              "signal 'signal_buf' cell [0, 0] of rank " + std::to_string(right));
    EXPECT_NEAR(s[5].args.at("blocked_us").get<double>(), 1.5, 1e-9);
  }
  ASSERT_EQ(t.flows.size(), static_cast<std::size_t>(P));
  std::map<std::int64_t, int> into;
  for (const auto& [id, f] : t.flows) {
    EXPECT_EQ(f.from, (f.to + P - 1) % P) << "flow " << id;
    ++into[f.to];
  }
  for (std::int64_t r = 0; r < P; ++r) EXPECT_EQ(into[r], 1) << "rank " << r;
  EXPECT_EQ(t.raw.at("otherData").at("rounds"), 1);
}

TEST(Trace, Step10RingHasAFlowPerHop) {
  const Trace t = run_with_trace("10_allreduce_ring", simple_model());
  expect_well_formed(t);
  ASSERT_EQ(t.flows.size(), static_cast<std::size_t>(2 * (P - 1) * P));
  std::map<std::int64_t, int> into;
  for (const auto& [id, f] : t.flows) {
    EXPECT_EQ(f.from, (f.to + P - 1) % P) << "flow " << id;
    ++into[f.to];
  }
  for (std::int64_t r = 0; r < P; ++r) {
    EXPECT_EQ(into[r], 2 * (P - 1)) << "rank " << r;
    int waits = 0, remote_reads = 0;
    for (const Slice& s : t.slices.at(r)) {
      waits += s.cat == "wait";
      remote_reads += s.cat == "remote read";
      if (s.cat == "remote read") {
        EXPECT_EQ(s.name, "pld.tile.remote_load");
        EXPECT_EQ(s.args.at("peer"), (r + P - 1) % P);
        EXPECT_EQ(s.args.at("bytes"), 4 * 960 / P);
      }
    }
    EXPECT_EQ(waits, 2 * (P - 1));
    EXPECT_EQ(remote_reads, 2 * (P - 1));
  }
  EXPECT_EQ(t.raw.at("otherData").at("rounds"), 2 * (P - 1));
}

TEST(Timeline, Step07GetText) {
  const auto result = anyp_test::run_command(anyp_test::examples_dir() +
                                             "/07_dynamic_rank_count -d 0,1,2,3 --mode get "
                                             "--timeline 2>&1");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.out,
            "OK\n"
            "timeline (model a2a3sim, P=4): makespan 4.302 us, 1 round\n"
            "  rank   finish_us     busy_us     wait_us  rounds\n"
            "     0       4.302       0.701       3.601       1\n"
            "     1       4.302       0.701       3.601       1\n"
            "     2       4.302       0.701       3.601       1\n"
            "     3       4.302       0.701       3.601       1\n"
            "dma engines (4 per rank, issue 0.100 us):\n"
            "  rank   transfers   engine_busy_us   utilisation\n"
            "     0           1            2.101        12.2 %\n"
            "     1           1            2.101        12.2 %\n"
            "     2           1            2.101        12.2 %\n"
            "     3           1            2.101        12.2 %\n"
            "links (shared; the 8 busiest of 8 ports that carried data):\n"
            "  rank 0 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 0 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 1 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 1 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 2 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 2 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 3 port out: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "  rank 3 port in: 256 B, busy 0.001 us (0.0 % of the makespan)\n"
            "critical path (8 ops, in time order):\n"
            "       0.000 -      0.100 us  rank 1  local read 256 B of host tensor 'x' (get_step: "
            "pl.load)\n"
            "       0.100 -      0.200 us  rank 1  local write 256 B of rank 1's window 'src_buf' "
            "(get_step: pl.store)\n"
            "       0.200 -      0.300 us  rank 1  notify of signal 'signal_buf' cell [0, 0] of "
            "rank 0 (get_step: pld.system.notify)\n"
            "       0.300 -      1.900 us  rank 0  wait of signal 'signal_buf' cell [0, 0] of rank "
            "0, blocked 1.500 us (get_step: pld.system.wait)\n"
            "       2.000 -      4.002 us  rank 0  remote read 256 B of rank 1's window 'src_buf' "
            "(get_step: pld.tensor.get)\n"
            "       4.002 -      4.102 us  rank 0  local write 256 B of rank 0's window 'dst_buf' "
            "(get_step: pld.tensor.get)\n"
            "       2.000 -      4.202 us  rank 0  local read 256 B of rank 0's window 'dst_buf', "
            "held 2.101 us (get_step: pl.load)\n"
            "       4.202 -      4.302 us  rank 0  local write 256 B of host tensor 'y' (get_step: "
            "pl.store)\n");
}

// The simple twin reproduces the text -p a2a3sim printed before DMA
// engines and links, to the digit.
TEST(Timeline, Step07GetTextOnTheSimpleTwin) {
  const auto result = anyp_test::run_command(anyp_test::examples_dir() +
                                             "/07_dynamic_rank_count -d 0,1,2,3 --mode get "
                                             "--timeline " +
                                             simple_model() + " 2>&1");
  EXPECT_TRUE(result.ok);
  EXPECT_EQ(result.out,
            "OK\n"
            "timeline (model a2a3sim-simple, P=4): makespan 4.202 us, 1 round\n"
            "  rank   finish_us     busy_us     wait_us  rounds\n"
            "     0       4.202       2.702       1.500       1\n"
            "     1       4.202       2.702       1.500       1\n"
            "     2       4.202       2.702       1.500       1\n"
            "     3       4.202       2.702       1.500       1\n"
            "critical path (8 ops, in time order):\n"
            "       0.000 -      0.100 us  rank 1  local read 256 B of host tensor 'x' (get_step: "
            "pl.load)\n"
            "       0.100 -      0.200 us  rank 1  local write 256 B of rank 1's window 'src_buf' "
            "(get_step: pl.store)\n"
            "       0.200 -      0.300 us  rank 1  notify of signal 'signal_buf' cell [0, 0] of "
            "rank 0 (get_step: pld.system.notify)\n"
            "       0.300 -      1.900 us  rank 0  wait of signal 'signal_buf' cell [0, 0] of rank "
            "0, blocked 1.500 us (get_step: pld.system.wait)\n"
            "       1.900 -      3.902 us  rank 0  remote read 256 B of rank 1's window 'src_buf' "
            "(get_step: pld.tensor.get)\n"
            "       3.902 -      4.002 us  rank 0  local write 256 B of rank 0's window 'dst_buf' "
            "(get_step: pld.tensor.get)\n"
            "       4.002 -      4.102 us  rank 0  local read 256 B of rank 0's window 'dst_buf' "
            "(get_step: pl.load)\n"
            "       4.102 -      4.202 us  rank 0  local write 256 B of host tensor 'y' (get_step: "
            "pl.store)\n");
}

// On the shipped model (4 DMA engines per rank, shared links) a track per
// rank and per engine, every track's slices one after another: a viewer
// nests none of them (the check docs/timeline.md §3 describes, made in
// speedscope, found slices overlapping by a rounding error).
TEST(Trace, ShippedModelTracksNeverOverlap) {
  for (const std::string example : {"07_dynamic_rank_count", "k2_allgather_gemm"}) {
    SCOPED_TRACE(example);
    const Trace t = run_with_trace(example);
    std::size_t rank_tracks = 0;
    for (const auto& [tid, name] : t.thread_names) {
      const bool engine = name.find(" dma ") != std::string::npos;
      rank_tracks += !engine;
      EXPECT_EQ(name.rfind("rank ", 0), 0u) << name;
    }
    EXPECT_EQ(rank_tracks, static_cast<std::size_t>(P));
    EXPECT_GT(t.thread_names.size(), static_cast<std::size_t>(P));  // engines that ran transfers
    EXPECT_EQ(t.raw.at("otherData").at("model"), "a2a3sim");
    expect_no_overlap(t);
  }
}

// With DMA engines, k2's puts are on a track per engine ("rank r dma e",
// after the rank's track): 3 puts of two ops each per rank, no two at once
// on one engine; each put's issue is a slice on the rank's track with a
// "dma" flow to the transfer; --timeline adds the engines' table and the
// busiest ports.
TEST(Trace, AsyncModelHasATrackPerDmaEngine) {
  const std::string model = async_model_file();
  const Trace t = run_with_trace("k2_allgather_gemm", "--model " + model);
  std::map<std::string, std::int64_t> track_of;
  for (const auto& [tid, name] : t.thread_names) track_of[name] = tid;
  ASSERT_EQ(t.thread_names.size(), static_cast<std::size_t>(3 * P));
  for (std::int64_t r = 0; r < P; ++r) {
    std::size_t put_ops = 0;
    for (int e = 0; e < 2; ++e) {
      const std::string name = "rank " + std::to_string(r) + " dma " + std::to_string(e);
      ASSERT_TRUE(track_of.count(name)) << name;
      if (!t.slices.count(track_of[name])) continue;
      double free_at = 0;
      for (const Slice& s : t.slices.at(track_of[name])) {
        EXPECT_EQ(s.name, "pld.tensor.put");
        EXPECT_GE(s.ts, free_at) << name;
        free_at = s.ts + s.dur;
        ++put_ops;
      }
    }
    EXPECT_EQ(put_ops, 6u) << "rank " << r;
    std::size_t issues = 0;
    for (const Slice& s : t.slices.at(track_of["rank " + std::to_string(r)]))
      if (s.cat == "issue") {
        EXPECT_EQ(s.name, "issue pld.tensor.put");
        EXPECT_NEAR(s.dur, 0.05, 1e-12);
        ++issues;
      }
    EXPECT_EQ(issues, 3u) << "rank " << r;
  }
  std::size_t dma_flows = 0;
  for (const auto& [id, f] : t.flows) {
    if (f.cat != "dma") continue;
    ++dma_flows;
    EXPECT_EQ(slice_at(t, f.from, f.from_ts), "issue") << "flow " << id;
    EXPECT_NE(t.thread_names.at(f.to).find(" dma "), std::string::npos) << "flow " << id;
  }
  EXPECT_EQ(dma_flows, static_cast<std::size_t>(3 * P));
  const auto text =
      anyp_test::run_command(anyp_test::examples_dir() +
                             "/k2_allgather_gemm -d 0,1,2,3 --timeline --model " + model + " 2>&1");
  std::filesystem::remove(model);
  EXPECT_TRUE(text.ok) << text.out;
  EXPECT_NE(text.out.find("dma engines (2 per rank, issue 0.050 us):\n"
                          "  rank   transfers   engine_busy_us   utilisation\n"
                          "     0           3"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("links (shared; the 8 busiest of 8 ports that carried data):\n"),
            std::string::npos)
      << text.out;
}

}  // namespace
