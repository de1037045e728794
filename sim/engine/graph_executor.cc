// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/graph_executor.h"

#include <algorithm>
#include <cassert>
#include <unordered_set>

namespace clustersim::engine {

namespace {
// Plans are computed once for this size and scaled (every flow's bytes are linear in the size).
constexpr double kUnitBytes = 1099511627776.0;  // 2^40
}  // namespace

GraphExecutor::GraphExecutor(const work::TrainingGraph& graph, net::Network& network, Clock& clock,
                             ExecutorOptions options)
    : graph_(graph),
      network_(network),
      clock_(clock),
      options_(std::move(options)),
      timing_(graph.ops.size()),
      waiting_(graph.ops.size()),
      pending_(graph.ops.size(), 0) {
  for (size_t i = 0; i < graph.ops.size(); ++i) waiting_[i] = graph.ops[i].preds;
}

void GraphExecutor::start() {
  origin_ = clock_.now();
  // Roots first: beginning one may end it at once and release others whose count reaches zero.
  std::vector<int32_t> roots;
  for (size_t i = 0; i < graph_.ops.size(); ++i) {
    if (waiting_[i] == 0) roots.push_back(static_cast<int32_t>(i));
  }
  for (const int32_t id : roots) begin(id);
}

double GraphExecutor::wire_bytes(const coll::FlowSpec& f, double scale) const {
  return f.bytes.as_double() * scale / (f.inter_node ? options_.network_efficiency : options_.nvlink_efficiency);
}

double GraphExecutor::bytes_to_send() {
  double total = 0;
  for (const work::Op& op : graph_.ops) {
    if (op.kind == work::OpKind::kCompute || op.bytes.n <= 0) continue;
    if (op.transfer_set >= 0) {
      const double all = graph_.transfer_set_bytes[op.transfer_set].as_double();
      if (all <= 0) continue;
      for (const coll::FlowSpec& f : graph_.transfer_sets[op.transfer_set]) total += wire_bytes(f, op.bytes.as_double() / all);
      continue;
    }
    if (op.comm_set < 0) continue;
    for (const coll::FlowSpec& f : plan(op.comm_set, op.collective).flows) total += wire_bytes(f, op.bytes.as_double() / kUnitBytes);
  }
  return total;
}

const GraphExecutor::Plan& GraphExecutor::plan(int32_t set, coll::CollectiveOp c) {
  const auto key = std::pair{set, static_cast<int>(c)};
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  Plan p;
  const std::vector<std::vector<int32_t>>& instances = graph_.comm_sets[set];
  const size_t waits = static_cast<size_t>(graph_.comm_set_waits[set]);
  for (size_t i = 0; i < instances.size(); ++i) {
    coll::collective_flows(c, options_.all_reduce, Bytes{static_cast<int64_t>(kUnitBytes)}, instances[i],
                           graph_.gpus_per_node, p.flows);
    if (i + 1 == waits) p.waited = p.flows.size();
  }
  if (options_.routes != nullptr && p.flows.size() > p.waited) {
    // Every link of every path counts, sprayed ones included: a sprayed path meets nearly every
    // other flow of its ToR and pod, evenly, so many replicas' copies are kept (the sprayed
    // 12,288-GPU default: 17 s, against 0.9 s when only their NICs counted, which made folded
    // runs placed DP first up to 42% fast where the fabric binds); the flow solver treats each
    // sprayed hop as one link (FluidNetwork's groups), so they stay affordable.
    std::vector<net::Path> paths;
    std::unordered_set<net::LinkIndex> own;
    for (size_t i = 0; i < p.waited; ++i) {
      options_.routes->paths(p.flows[i].src, p.flows[i].dst, paths);
      for (const net::Path& path : paths) {
        own.insert(path.links.begin(), path.links.end());
      }
    }
    const auto meets = [&](const coll::FlowSpec& f) {
      options_.routes->paths(f.src, f.dst, paths);
      return std::any_of(paths.begin(), paths.end(), [&](const net::Path& path) {
        return std::any_of(path.links.begin(), path.links.end(), [&](net::LinkIndex l) { return own.count(l) > 0; });
      });
    };
    const auto carried = std::stable_partition(p.flows.begin() + static_cast<std::ptrdiff_t>(p.waited), p.flows.end(), meets);
    p.flows.erase(carried, p.flows.end());
  }
  return plans_.emplace(key, std::move(p)).first->second;
}

void GraphExecutor::begin(int32_t id) {
  const work::Op& op = graph_.ops[id];
  OpTiming& t = timing_[id];
  t.start = clock_.now();
  if (op.kind == work::OpKind::kCompute) {
    if (op.duration == Time::zero()) {
      finish(id);
      return;
    }
    clock_.at(t.start + op.duration, [this, id] { finish(id); });
    return;
  }
  if (options_.free_communication) {
    finish(id);
    return;
  }
  // The collective's latency (alpha), then its flows.
  if (op.duration > Time::zero()) {
    clock_.at(t.start + op.duration, [this, id] { issue(id); });
  } else {
    issue(id);
  }
}

void GraphExecutor::issue(int32_t id) {
  const work::Op& op = graph_.ops[id];
  if (op.transfer_set >= 0) {
    // Explicit transfers (MoE all-to-all), scaled to the op's bytes; a combine runs them reversed.
    const std::vector<coll::FlowSpec>& flows = graph_.transfer_sets[op.transfer_set];
    const double total = graph_.transfer_set_bytes[op.transfer_set].as_double();
    if (flows.empty() || total <= 0 || op.bytes.n <= 0) {
      clock_.at(clock_.now(), [this, id] { finish(id); });
      return;
    }
    const double scale = op.bytes.as_double() / total;
    pending_[id] = static_cast<int32_t>(flows.size());
    for (const coll::FlowSpec& f : flows) {
      ++flows_;
      network_.send(
          op.reversed ? f.dst : f.src, op.reversed ? f.src : f.dst, bytes_of(wire_bytes(f, scale)),
          [this, id](Time) {
            if (--pending_[id] == 0) finish(id);
          },
          f.connection);
    }
    return;
  }
  if (op.bytes.n <= 0 || op.comm_set < 0) {
    clock_.at(clock_.now(), [this, id] { finish(id); });
    return;
  }
  const Plan& p = plan(op.comm_set, op.collective);
  if (p.waited == 0) {
    // Nothing of its own to wait for (a carried set alone never happens; an empty one does).
    clock_.at(clock_.now(), [this, id] { finish(id); });
    return;
  }
  const double scale = op.bytes.as_double() / kUnitBytes;
  pending_[id] = static_cast<int32_t>(p.waited);
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const coll::FlowSpec& f = p.flows[i];
    const Bytes wire = bytes_of(wire_bytes(f, scale));
    ++flows_;
    if (i < p.waited) {
      network_.send(
          f.src, f.dst, wire,
          [this, id](Time) {
            if (--pending_[id] == 0) finish(id);
          },
          f.connection);
    } else {
      network_.send(f.src, f.dst, wire, [](Time) {}, f.connection);  // carried: load only
    }
  }
}

void GraphExecutor::finish(int32_t id) {
  OpTiming& t = timing_[id];
  assert(!t.done && "an op ends once");
  t.end = clock_.now();
  t.done = true;
  ++finished_;
  if (options_.progress && finished_ % options_.progress_every == 0) options_.progress(finished_, t.end);
  for (const int32_t s : graph_.successors(id)) {
    if (--waiting_[s] == 0) {
      timing_[s].releaser = id;
      begin(s);
    }
  }
}

}  // namespace clustersim::engine
