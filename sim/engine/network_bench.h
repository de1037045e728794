// SPDX-License-Identifier: Apache-2.0
// Network microbenchmarks (scenarios with a `traffic:` section): generate a traffic pattern, run
// it on the chosen network backend, report completion time against the ideal and link load.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "sim/engine/link_load.h"
#include "sim/core/config.h"
#include "sim/core/units.h"
#include "sim/network/dcqcn/congestion_trace.h"
#include "sim/network/flow/lmm_options.h"
#include "sim/network/network.h"

namespace clustersim::engine {

// One transfer of a pattern, all starting at time 0.
struct TrafficTransfer {
  net::GpuId src = 0;
  net::GpuId dst = 0;
  Bytes bytes;
  uint32_t connection = 0;  // as coll::FlowSpec::connection (a PXN relay's sender)
};

// The transfers of `cfg.traffic` on `cfg.cluster.gpus` GPUs:
//   shift               GPU i sends bytes_per_pair to GPU (i + shift) mod gpus
//                       (shift 0 = gpus_per_node: the same local rank on the next node)
//   random_permutation  GPU i sends to p(i), p = random_derangement(gpus, seed): every GPU sends
//                       and receives once, never to itself
//   ring_allreduce      NCCL's ring all-reduce over every GPU (coll::collective_flows): each
//                       node's NVLink ring carries 2(n-1)/n * bytes_per_pair per edge, n the GPUs,
//                       and each GPU sends 1/k of that to the same local rank on the next node (k
//                       GPUs per node, one channel per rail). NCCL pipelines the 2(n-1) steps over a
//                       channel, so a ring edge is one long flow (Patarasuk & Yuan, JPDC 69(2),
//                       2009, for the byte count).
//   all_to_all          every GPU sends bytes_per_pair to every other GPU
//   incast              incast_senders GPUs send bytes_per_pair each to GPU 0; senders are local
//                       rank 0 of nodes 1, 2, ..., then local rank 1 of nodes 0, 1, ... when more
// Throws BadInput (keys "traffic.*") for patterns the cluster cannot hold.
// The pattern's transfers (run_traffic moves all_to_all's through PXN, network.pxn).
std::vector<TrafficTransfer> make_traffic(const ClusterConfig& cluster, const TrafficConfig& traffic);

// A permutation p of 0 .. n-1 (n >= 2; fewer has none: zeros come back) with no fixed point (p(i) != i), uniform over all such
// derangements and the same for a seed on every standard library: Fisher-Yates shuffles drawn
// from mt19937_64(seed) until one has no fixed point (rejection; about e = 2.72 shuffles expected,
// as the share of derangements tends to 1/e; Knuth, TAOCP vol. 2, 3.4.2, Algorithm P). A seed whose
// first shuffle has no fixed point gives that shuffle. Before 2026-12-05 the pattern kept the first
// shuffle and dropped its fixed points: 2 GPUs at seed 3 ran no transfer and reported 100% of ideal.
std::vector<net::GpuId> random_derangement(int n, uint64_t seed);

struct TrafficResult {
  std::string scenario;
  std::string pattern, fidelity, solver, routing;
  int gpus = 0;
  int qps_per_connection = 1;
  int64_t transfers = 0;
  int64_t flows = 0;                // sub-flows (transfers x queue pairs)
  int64_t incomplete_transfers = 0; // > 0 only when a path has no capacity
  Bytes total_bytes;
  // Completion of the last transfer, and the bound no schedule can beat:
  //   ideal = max(max over transfers (latency + bytes / path bottleneck),
  //               max over endpoint links (bytes they must carry / capacity) + min latency)
  // The endpoint links (each path's first and last) are the same on every equal-cost path, so
  // the bound does not depend on routing.
  Time completion_time;
  Time ideal_time;
  double slowdown = 0;              // completion / ideal, >= 1
  Bandwidth achieved_bandwidth;     // total_bytes / completion_time (aggregate)
  Bandwidth ideal_bandwidth;        // total_bytes / ideal_time
  // Per transfer, over the completed ones: the mean time from the start to its end, and the mean
  // of its bytes over that time (set by the worst collision, the aggregate above hides how the
  // typical transfer fared; ECMP literature's per-flow throughput). At the analytical level each
  // transfer's time alone. Under PXN (all-to-all with network.pxn) the relay legs are averaged, not
  // the pattern's transfers.
  Time mean_transfer_time;
  Bandwidth mean_transfer_rate;
  // ring_allreduce only: nccl-tests' bus bandwidth, 2(n-1)/n x the buffer per rank / completion.
  std::optional<Bandwidth> bus_bandwidth;
  // ring_allreduce only: the ring's step latency, in completion_time and ideal_time
  Time step_latency;
  std::vector<LinkLoad> links;   // every link direction, by id
  std::vector<LinkLoad> top_links;  // most loaded: peak utilisation, then bytes (<= 10)
  std::vector<LinkLoad> degraded_links;  // network.faults as applied, with their load (degraded_links)
  std::vector<TierLoad> tiers;   // in tier order
  double wall_seconds = 0;          // run time of the simulation itself
  int64_t solver_events = 0;        // rate recomputations (fluid solver only)
  // flow+dcqcn and packet levels (has_congestion): counters, queue and rate time series.
  bool has_congestion = false;
  net::CongestionCounters congestion;
  std::vector<net::QueueSample> queue_samples;
  std::vector<net::RateSample> rate_samples;
  std::vector<net::LinkCongestion> link_congestion;  // by link id
  Time max_queue_delay;             // largest queue / its link's capacity
};

struct TrafficOptions {
  net::LmmOptions lmm;  // for solver lmm
  int top_links = 10;
};

// Builds the fabric, the backend (network.fidelity / network.solver), runs `cfg.traffic` to
// completion on SimGrid's clock and collects the result. Uses the process's s4u::Engine (creating
// it): run one scenario per process when the solver is lmm. Throws BadInput on a bad scenario.
TrafficResult run_traffic(const ScenarioConfig& cfg, const TrafficOptions& options = {});

// links.csv: link,tier,direction,capacity_gbps,bytes,peak_utilisation (one row per direction).
void write_links_csv(const TrafficResult& result, std::ostream& out);

// queues.csv: time_us,link,bytes (egress queues while non-empty; congestion levels only).
void write_queues_csv(const TrafficResult& result, std::ostream& out);
// rates.csv: time_us,flow,src,dst,rate_gbps,target_gbps (traced sub-flows' DCQCN rates).
void write_rates_csv(const TrafficResult& result, std::ostream& out);
// The same two files from bare samples (training runs use these): `link_name(l)` names link
// direction l as links.csv does ("tor_agg:45/up"). Times are in us to the nanosecond.
void write_queues_csv(const std::vector<net::QueueSample>& samples,
                      const std::function<const std::string&(net::LinkIndex)>& link_name, std::ostream& out);
void write_rates_csv(const std::vector<net::RateSample>& samples, std::ostream& out);

// The human report: completion vs ideal, per-tier load and the most loaded links.
std::string format_traffic_report(const TrafficResult& result);

}  // namespace clustersim::engine
