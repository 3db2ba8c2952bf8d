// order_dispatches.cpp — PyPTO's task dependencies between host dispatches
// of different ranks (order_dispatches.hpp).
#include "compiler/order_dispatches.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>

namespace anyp::compiler {
namespace {

struct TaskRef {
  std::int64_t rank = 0;
  std::int64_t index = 0;  // in its rank's dispatch list
};

// One dependency: waiter (rank, index) on source (rank, index) through a key.
struct Edge {
  TaskRef waiter, source;
  std::int32_t host_param = -1;
  std::int64_t byte_offset = 0;
};

// Where two dispatches' host-tensor arguments overlap and one of them
// writes: the first such argument of `a` (a host tensor and a byte offset).
std::optional<std::pair<std::int32_t, std::int64_t>> conflict(const HostDispatch& a,
                                                              const HostDispatch& b) {
  auto bytes = [](const runtime::ArgBinding& x) {
    std::int64_t n = static_cast<std::int64_t>(dtype_bytes(x.dtype));
    for (std::int64_t e : x.shape) n *= e;
    return n;
  };
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    const runtime::ArgBinding& x = a.args[i];
    if (x.kind != runtime::ArgBinding::Kind::HostTensor) continue;
    const bool x_writes = a.callee->params[i].intent != ir::Intent::In;
    for (std::size_t j = 0; j < b.args.size(); ++j) {
      const runtime::ArgBinding& y = b.args[j];
      if (y.kind != runtime::ArgBinding::Kind::HostTensor || y.host_param != x.host_param) continue;
      if (!x_writes && b.callee->params[j].intent == ir::Intent::In) continue;
      if (x.byte_offset < y.byte_offset + bytes(y) && y.byte_offset < x.byte_offset + bytes(x))
        return std::make_pair(x.host_param, x.byte_offset);
    }
  }
  return std::nullopt;
}

// Host workers run in host order with every dispatch of another rank whose
// host tensors conflict with theirs (order_dispatches.hpp), both ways.
void order_host_workers(const std::vector<std::vector<HostDispatch>>& ranks,
                        const std::vector<TaskRef>& issued, std::vector<Edge>& edges) {
  for (std::size_t w = 0; w < issued.size(); ++w) {
    const HostDispatch& worker = ranks[issued[w].rank][issued[w].index];
    if (!ir::is_host_worker(*worker.callee)) continue;
    for (std::size_t t = 0; t < issued.size(); ++t) {
      if (issued[t].rank == issued[w].rank) continue;  // its own rank runs in host order
      const auto key = conflict(worker, ranks[issued[t].rank][issued[t].index]);
      if (!key) continue;
      edges.push_back(t < w ? Edge{issued[w], issued[t], key->first, key->second}
                            : Edge{issued[t], issued[w], key->first, key->second});
    }
  }
}

// The group edges (order_dispatches.hpp): appended after the pairs' cells.
void order_groups(const std::vector<std::vector<HostDispatch>>& ranks, DispatchOrder& order) {
  std::map<std::int64_t, std::vector<TaskRef>> members;  // group -> its dispatches, by rank
  for (std::size_t r = 0; r < ranks.size(); ++r)
    for (std::size_t i = 0; i < ranks[r].size(); ++i)
      members[ranks[r][i].group].push_back(
          TaskRef{static_cast<std::int64_t>(r), static_cast<std::int64_t>(i)});
  struct GroupEdge {
    std::int64_t source, waiter;
    std::int32_t buffer;
  };
  std::vector<GroupEdge> edges;
  std::map<std::int32_t, std::int64_t> last_group;  // window buffer -> the last group passing it
  for (const auto& [group, tasks] : members) {
    std::set<std::int32_t> buffers;
    for (const TaskRef& t : tasks)
      for (const runtime::ArgBinding& a : ranks[t.rank][t.index].args)
        if (a.kind == runtime::ArgBinding::Kind::Window) buffers.insert(a.buffer);
    std::set<std::int64_t> after;  // groups this one already waits for
    for (std::int32_t b : buffers) {
      const auto it = last_group.find(b);
      if (it != last_group.end() && after.insert(it->second).second)
        edges.push_back(GroupEdge{it->second, group, b});
      last_group[b] = group;
    }
  }
  const std::int64_t first_cell = order.cells;
  for (const GroupEdge& e : edges) {
    const auto edge = static_cast<std::int64_t>(order.edges.size());
    runtime::OrderEdge out;
    out.cell = first_cell + edge;
    const std::vector<TaskRef>& sources = members.at(e.source);
    std::set<std::int64_t> waiting;  // ranks whose first dispatch of the group waits
    for (const TaskRef& w : members.at(e.waiter)) {
      if (!waiting.insert(w.rank).second) continue;
      std::int64_t count = 0;
      TaskRef last{-1, -1};
      for (const TaskRef& s : sources) {
        if (s.rank == w.rank) continue;
        ++count;
        if (last.rank < 0 || ranks[s.rank][s.index].issued > ranks[last.rank][last.index].issued)
          last = s;
      }
      if (count == 0) continue;
      out.waiters.push_back(w.rank);
      runtime::DispatchWait wait;
      wait.cell = out.cell;
      wait.count = count;
      wait.source_rank = last.rank;
      wait.source_dispatch = last.index;
      wait.buffer = e.buffer;
      order.waits[static_cast<std::size_t>(w.rank)][static_cast<std::size_t>(w.index)].push_back(
          wait);
    }
    if (out.waiters.empty()) continue;
    for (const TaskRef& s : sources)
      order.edge_releases[static_cast<std::size_t>(s.rank)][static_cast<std::size_t>(s.index)]
          .push_back(edge);
    order.cells = out.cell + 1;
    order.edges.push_back(std::move(out));
  }
}

}  // namespace

DispatchOrder order_dispatches(const std::vector<std::vector<HostDispatch>>& ranks) {
  const std::size_t P = ranks.size();
  DispatchOrder order;
  order.waits.resize(P);
  order.releases.resize(P);
  order.edge_releases.resize(P);
  std::vector<TaskRef> issued;  // every dispatch, in host order
  for (std::size_t r = 0; r < P; ++r) {
    order.waits[r].resize(ranks[r].size());
    order.releases[r].resize(ranks[r].size());
    order.edge_releases[r].resize(ranks[r].size());
    for (std::size_t i = 0; i < ranks[r].size(); ++i)
      issued.push_back(TaskRef{static_cast<std::int64_t>(r), static_cast<std::int64_t>(i)});
  }
  std::sort(issued.begin(), issued.end(), [&](const TaskRef& a, const TaskRef& b) {
    return ranks[a.rank][a.index].issued < ranks[b.rank][b.index].issued;
  });
  // The TensorMap: (host tensor, view offset) -> its last writer.
  std::map<std::pair<std::int32_t, std::int64_t>, TaskRef> last_writer;
  std::vector<Edge> edges;
  for (const TaskRef& t : issued) {
    const HostDispatch& d = ranks[t.rank][t.index];
    for (std::size_t k = 0; k < d.args.size() && k < d.callee->params.size(); ++k) {
      const runtime::ArgBinding& a = d.args[k];
      if (a.kind != runtime::ArgBinding::Kind::HostTensor) continue;
      const ir::Intent intent = d.callee->params[k].intent;
      const std::pair<std::int32_t, std::int64_t> key{a.host_param, a.byte_offset};
      if (intent != ir::Intent::Out) {
        const auto it = last_writer.find(key);
        if (it != last_writer.end() && it->second.rank != t.rank)
          edges.push_back(Edge{t, it->second, a.host_param, a.byte_offset});
      }
      if (intent != ir::Intent::In) last_writer[key] = t;
    }
  }
  order_host_workers(ranks, issued, edges);
  // Per (source, waiter) pair: the source's dispatches that release it, in
  // order, and the waiter's cell for the source.
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::int64_t>> released_by;
  for (const Edge& e : edges) released_by[{e.source.rank, e.waiter.rank}].push_back(e.source.index);
  std::vector<std::map<std::int64_t, std::int64_t>> cell_of(P);  // waiter -> source -> cell
  for (auto& [pair, sources] : released_by) {
    std::sort(sources.begin(), sources.end());
    sources.erase(std::unique(sources.begin(), sources.end()), sources.end());
    auto& cells = cell_of[static_cast<std::size_t>(pair.second)];
    const std::int64_t cell = static_cast<std::int64_t>(cells.size());
    cells.emplace(pair.first, cell);
    order.cells = std::max(order.cells, cell + 1);
    for (std::int64_t j : sources)
      order.releases[static_cast<std::size_t>(pair.first)][static_cast<std::size_t>(j)].push_back(
          runtime::DispatchRelease{pair.second, cell});
  }
  for (const Edge& e : edges) {
    const auto& sources = released_by.at({e.source.rank, e.waiter.rank});
    const std::int64_t count =
        std::lower_bound(sources.begin(), sources.end(), e.source.index) - sources.begin() + 1;
    const std::int64_t cell = cell_of[static_cast<std::size_t>(e.waiter.rank)].at(e.source.rank);
    auto& waits = order.waits[static_cast<std::size_t>(e.waiter.rank)]
                             [static_cast<std::size_t>(e.waiter.index)];
    // One wait per cell: the latest release it needs.
    auto same = std::find_if(waits.begin(), waits.end(),
                             [&](const runtime::DispatchWait& w) { return w.cell == cell; });
    const runtime::DispatchWait w{cell,           count,        e.source.rank,
                                  e.source.index, e.host_param, e.byte_offset};
    if (same == waits.end()) {
      waits.push_back(w);
    } else if (same->count < count) {
      *same = w;
    }
  }
  order_groups(ranks, order);
  return order;
}

}  // namespace anyp::compiler
