// SPDX-License-Identifier: Apache-2.0
// The flow fidelity level for training: builds the operation graph, runs one iteration on
// SimGrid's clock with every communication as flows on the Clos, and measures where time went.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/analytical_training.h"
#include "sim/engine/link_load.h"
#include "sim/network/dcqcn/congestion_trace.h"
#include "workloads/training_graph.h"

namespace clustersim::engine {

// Consecutive time of one kind spent by one rank group along a critical path.
struct CriticalSegment {
  int32_t group = 0;
  std::string kind;  // compute, tp, pp, dp, optimizer, ep (MoE all-to-all)
  Time time;
};

// One reported rank group: the representative replica's (DP replica 0 of a stage), or with
// stragglers also each straggling replica's.
struct RankGroupTiming {
  std::string name;
  int stage = 0;
  int dp = 0;
  Time end;                     // when its last op on the main line ended
  TrainingBreakdown breakdown;  // its own timeline, idle tail counted as bubble; sums to the iteration
  // The chain of ops whose ends released each other, back from the group's last op (chronological).
  std::vector<CriticalSegment> critical_path;
};

// One op as it ran, for the trace.
struct TraceSpan {
  int32_t group = 0;
  int32_t peer_group = -1;
  work::Stream stream = work::Stream::kCompute;
  work::OpRole role = work::OpRole::kForward;
  int32_t microbatch = -1;
  int32_t chunk = -1;
  int32_t layer = -1;  // MoE all-to-all and expert ops: the model layer
  Time start;
  Time end;
};

// What congestion control did during the iteration (flow+dcqcn and packet levels), with the
// queue and rate series cut to a bounded number of rows (see keep_largest_queues, keep_first_rates).
struct TrainingCongestion {
  net::CongestionCounters counters;
  Time max_queue_delay;                 // largest egress queue over its link's capacity
  std::vector<net::QueueSample> queues; // kept links' whole series, in time order
  std::map<net::LinkIndex, std::string> link_names;  // of the kept links ("tor_agg:45/up")
  int64_t queued_links = 0;             // links with a queue sample, kept or not
  int64_t queue_samples = 0;            // recorded by the network, kept or not
  std::vector<net::RateSample> rates;   // kept traced flows' whole series, in time order
  int64_t traced_flows = 0;             // flows with a rate sample, kept or not
  int64_t rate_samples = 0;             // recorded by the network, kept or not
  bool traced_from_first_cut = false;   // rates follow the first flows cut (flow+dcqcn), else the first started
  std::string represented;              // which ranks' flows the fabric carried (folding)
};

struct FlowTrainingResult {
  TrainingEstimate estimate;    // breakdown = the critical rank group's
  // The same scenario at the analytical level, for comparison: without network.faults, which
  // that level refuses (its routed collectives would price a degraded NIC and miss a degraded
  // NVLink; until 2026-12-06 it came with them, a figure no analytical run gives).
  TrainingEstimate analytical;
  bool folded = true;
  // training.fold_ranks auto folded a plan it leaves unfolded (TP groups across nodes) because
  // every replica's graph would hold this many ops, past kMaxGraphOps; 0 otherwise.
  int64_t auto_folded_ops = 0;
  // network.faults above the hosts (a ToR's uplinks or higher; FlowStragglers): every replica was
  // simulated for them (fabric_faults_unfolded), or the run stayed folded and may miss other
  // replicas' flows across them (fabric_faults_folded_ops: under fold_ranks auto, the ops every
  // replica's graph would have held, past kMaxGraphOps; -1 under fold_ranks true).
  bool fabric_faults_unfolded = false;
  int64_t fabric_faults_folded_ops = 0;
  int critical_group = 0;       // index into groups
  std::vector<RankGroupTiming> groups;
  std::vector<std::string> group_names;  // every simulated rank group, by index
  std::vector<TraceSpan> spans;          // ops of the representative groups
  std::vector<TierLoad> tiers;
  std::vector<LinkLoad> top_links;       // most loaded by peak utilisation, then bytes (<= 10)
  std::vector<LinkLoad> busiest_fabric_links;  // network links by time at line rate (<= 10)
  int64_t ops = 0;
  int64_t flows = 0;
  int64_t rank_groups = 0;               // simulated (pp with folding, pp x dp without)
  double wall_seconds = 0;
  // Stragglers (issue 9), when the scenario has them (see flow_stragglers in straggler_model.h).
  std::vector<int> slow_hosts;
  std::vector<int> slow_gpus;
  std::vector<std::string> straggling_groups;  // rank groups with a slow host or GPU: "stage3/dp17 (host 389)"
  std::vector<LinkLoad> degraded_links;        // link directions degraded or failed (network.faults, stragglers.nics), with their load
  int unfolded_replicas = 0;                   // replicas simulated on their own besides the representative
  std::optional<TrainingCongestion> congestion;  // flow+dcqcn and packet levels only
};

struct FlowTrainingOptions {
  bool use_simgrid = true;           // false: our own event queue (fluid solver only; tests)
  bool free_communication = false;   // comm ops take no time (schedule tests)
  bool keep_spans = true;
  std::optional<work::GraphCosts> costs;  // override the cost model (tests)
  // Progress messages (about every second of wall time once a run is past two seconds).
  std::function<void(const std::string&)> progress;
  // A line said before a long run starts (the packet level's estimate of its packets and time).
  std::function<void(const std::string&)> notice;
  // Rows kept of each congestion series (queues, rates): 500,000 queue rows are about 17 MB of CSV.
  int64_t max_series_rows = 500'000;
  // DP replicas simulated on their own even where nothing slows them (when folded):
  // runs that are to be compared unfold the same replicas, so that folding moves none of them
  // (the what-if's variants, the reliability study's cluster states).
  std::vector<int> unfold_replicas;
};

// The scenario without its network.faults: what the analytical level, which refuses them, is
// compared on (FlowTrainingResult::analytical, report::analytical_peer).
ScenarioConfig without_network_faults(const ScenarioConfig& cfg);

// Runs one iteration of a validated training scenario at the flow level, with its `stragglers`
// (compute factors per rank group, uneven stages, degraded NICs as fabric faults; with folding,
// the straggling replicas are simulated on their own and the rest stay folded). Throws BadInput
// for unsupported settings (network.solver lmm with use_simgrid false).
FlowTrainingResult simulate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                     const FlowTrainingOptions& options = {});

// Each op of the flow level's graph holds about 370 bytes while the run lasts (the op and its
// edges, its timing and trace span, its flows in flight) and takes about 3.5 us of wall time:
// 1,000,000 micro-batches of a 64-GPU tp 8 pp 2 plan, 1.4e7 ops, took 5.2 GB and 58 s. Past
// kMaxGraphOps (3.7 GB, about 35 s on a 2-core machine) a run is refused: throws BadInput naming
// training.global_batch with the figures. simulate_training checks the estimate
// (work::training_graph_ops) before it builds a graph of more than 4 pp micro-batches, and every
// graph once built.
inline constexpr int64_t kMaxGraphOps = 10'000'000;
void check_graph_ops(const ScenarioConfig& cfg, int64_t ops);

// The packet level's work for `bytes` to move (every flow's, NVLink included): refused (BadInput,
// with the figures) past a day of wall time at about 3 million packets a second; past a minute
// said to `notice` before the run starts.
void check_packet_work(const ScenarioConfig& cfg, double bytes, const std::function<void(const std::string&)>& notice);

// Whether network.faults above the hosts call for every DP replica to be simulated
// (FlowStragglers::fabric_faults_unfold) and that graph stays within kMaxGraphOps: simulate_training
// then runs unfolded, and the what-if unfolds every variant alike (its straggler-free baseline
// too); past the limit all stay folded, with a note. `ops`, where given, gets the unfolded
// graph's size (0 where nothing asks for it).
bool unfold_for_fabric_faults(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, int64_t* ops = nullptr);

// The queue series of the links with the largest sampled queue (ties: lower link index), whole
// series each, for as many links as fit in `max_rows`; the first link is cut to `max_rows` when
// it alone does not fit. Samples keep their time order.
std::vector<net::QueueSample> keep_largest_queues(const std::vector<net::QueueSample>& samples, int64_t max_rows);
// The rate series of the traced flows in trace order, whole series each, for as many flows as fit
// in `max_rows` (the first cut to `max_rows` when it alone does not fit).
std::vector<net::RateSample> keep_first_rates(const std::vector<net::RateSample>& samples, int64_t max_rows);

// The breakdown categories in results.json order and the role each op's time counts as.
const char* breakdown_kind(work::OpRole role);

}  // namespace clustersim::engine
