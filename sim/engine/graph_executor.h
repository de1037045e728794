// SPDX-License-Identifier: Apache-2.0
// Runs a TrainingGraph on a Clock and a Network: compute ops as timed activities, communications
// as flows of NCCL-style collectives, each op created only when its last predecessor ends.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "sim/collectives/collective_flows.h"
#include "sim/core/clock.h"
#include "sim/network/network.h"
#include "sim/network/route_source.h"
#include "workloads/training_graph.h"

namespace clustersim::engine {

struct OpTiming {
  Time start;
  Time end;
  int32_t releaser = -1;  // the predecessor whose end let the op start (-1: none)
  bool done = false;
};

struct ExecutorOptions {
  // Achieved / line-rate bandwidth of NCCL's protocol on each kind of link (the profile's
  // nvlink_busbw and network_busbw): a flow of b payload bytes puts b / efficiency on the wire.
  double nvlink_efficiency = 1.0;
  double network_efficiency = 1.0;
  coll::Algorithm all_reduce = coll::Algorithm::kRing;
  bool free_communication = false;  // every comm op takes no time (schedule tests)
  // Called after every `progress_every` finished ops with (ops finished, simulated time).
  std::function<void(int64_t, Time)> progress;
  int64_t progress_every = 4096;
  // When set, a comm set's carried flows (TrainingGraph::comm_set_waits) that share no link with
  // the flows the op waits for are left out: they cannot slow them but through third flows, and
  // folded runs would otherwise start every replica's copy (12,288 GPUs: 10x the flows). Sprayed
  // paths count with all their links.
  const net::RouteSource* routes = nullptr;
};

class GraphExecutor {
 public:
  // `graph`, `network` and `clock` must outlive the executor.
  GraphExecutor(const work::TrainingGraph& graph, net::Network& network, Clock& clock, ExecutorOptions options);

  // Starts the ops without predecessors at the clock's current time; run the clock afterwards.
  void start();

  const std::vector<OpTiming>& timings() const { return timing_; }
  std::vector<OpTiming> take_timings() { return std::move(timing_); }
  int64_t finished() const { return finished_; }
  int64_t flows() const { return flows_; }
  // The bytes the graph's communication puts on the network (NVLink included; carried flows
  // counted as start() would send them), before running it: what a packet-level run moves.
  double bytes_to_send();
  Time origin() const { return origin_; }

 private:
  void begin(int32_t op);
  void issue(int32_t op);
  void finish(int32_t op);
  // The flows of comm set `set` for one unit of bytes; the first `waited` belong to the instances
  // the op waits for (TrainingGraph::comm_set_waits), the rest are carried.
  struct Plan {
    std::vector<coll::FlowSpec> flows;
    size_t waited = 0;
  };
  const Plan& plan(int32_t set, coll::CollectiveOp c);
  // Bytes a flow of a plan or transfer set puts on the wire for an op `scale` times its size: over
  // its link's efficiency (NVLink's or the network's), as issue() sends it.
  double wire_bytes(const coll::FlowSpec& f, double scale) const;

  const work::TrainingGraph& graph_;
  net::Network& network_;
  Clock& clock_;
  ExecutorOptions options_;
  std::vector<OpTiming> timing_;
  std::vector<int32_t> waiting_;   // predecessors not yet ended
  std::vector<int32_t> pending_;   // flows not yet done per comm op
  // Flow plans per (comm set, collective) for a unit size, scaled by each op's bytes.
  std::map<std::pair<int32_t, int>, Plan> plans_;
  int64_t finished_ = 0;
  int64_t flows_ = 0;
  Time origin_;
};

}  // namespace clustersim::engine
