// SPDX-License-Identifier: Apache-2.0
// What the fabric's routes cost the data-parallel rings at the analytical level: ECMP collisions
// and oversubscription, found by routing every ring edge the way the flow level does and taking
// the most loaded link (no event simulation).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/collectives/collective_flows.h"
#include "sim/core/config.h"
#include "sim/network/route_source.h"
#include "topology/fabric.h"
#include "workloads/moe.h"

namespace clustersim::engine {

// The network links the gradient (or CP) rings of the pipeline stages cross, with each stage's
// load on each: what a stage's rings meet when the others' run only part of the time beside them.
struct StageLinkLoads {
  // Per link (compact index): (stage, its bytes on the link / capacity / the busiest NIC's time
  // of all the stages' rings at line rate), for the stages with bytes there.
  std::vector<std::vector<std::pair<int, double>>> links;
  std::vector<std::vector<int32_t>> of_stage;  // per stage: the links its rings cross that could bind
  // Per link (compact index), kept only with every link (stage_link_loads' `every_link`): for a
  // NIC's link its capacity over the NICs' line rate (the closed forms' rate), 0 for the others.
  std::vector<double> nic_rate_share;
  // Stage `stage`'s slowdown when stage j's rings run beside it for `weight[j]` of their bytes
  // (weight[stage] 1: its own): the most loaded of its links, static_contention's rule, >= 1.
  // Every weight 1 gives StageSlowdowns::dp.
  double contention(int stage, std::span<const double> weight) const;
  // The same against the stage's own NICs, weighted alike: the most loaded link it crosses over
  // the most loaded NIC it crosses at line rate, >= 1. Where several stages' GPUs share a NIC the
  // closed form prices the NIC's share apart, so only what the fabric adds counts. Needs every
  // link's loads (stage_link_loads with `every_link`); every weight 1 and one stage per NIC gives
  // contention(stage, weight).
  double contention_over_nics(int stage, std::span<const double> weight) const;
};

// One ECMP draw's gradient rings, routed with every stage's at once, stage by stage.
struct StageSlowdowns {
  // Per pipeline stage (pp entries): its dense (expert, MoE only) rings' slowdown on the links
  // its own rings cross. FabricContention::dp (expert_dp) is the largest of one draw; a stage
  // whose rings meet no collision has 1 even where another's do. The stages end their backward
  // passes one chunk pass apart, so where the slowdowns differ the exposure is the worst over
  // stages, not the first stage's at the worst slowdown.
  std::vector<double> dp;
  std::vector<double> expert_dp;
  // The loads behind them: the analytical level prices each stage's reduction against the other
  // stages' rings only for the part of theirs that runs beside it.
  std::shared_ptr<const StageLinkLoads> dp_loads;
  std::shared_ptr<const StageLinkLoads> expert_dp_loads;
  // The CP rings of every replica and stage, with every link's loads (null when cp is 1): the
  // analytical level weighs the other stages' rings by the part of their time they run beside
  // the critical stage's (FabricContention::cp has them all at once).
  std::shared_ptr<const StageLinkLoads> cp_loads;
};

// How much longer than the closed form (each GPU at its share of its NICs) the DP rings take on
// the fabric, with every stage's rings running at once: interleaved 1F1B frees each chunk's
// gradients through the cool-down, when every stage drains together (and ZeRO-3 gathers all
// through the step), so stages' rings meet on the ToR and aggregation uplinks wherever a stage
// does not fill whole ToR groups. Against the flow level on 23 plans (docs/results.md) this
// beat routing each stage alone. stage_draws then gives each stage's rings their own part of that
// routing, which the analytical level prices the DP collectives by (since 2026-12-05).
struct FabricContention {
  double dp = 1.0;         // dense gradients' rings: >= 1; 1 when no ring leaves a node or nothing collides
  double expert_dp = 1.0;  // MoE: the expert-data-parallel rings, likewise (1 for dense models)
  double embedding = 1.0;  // the tied-embedding all-reduce pairs (first and last stage of every replica), likewise
  double cp = 1.0;         // the context-parallel K/V rings of every replica and stage, likewise (cp > 1; StageSlowdowns::cp_loads stage by stage)
  double tp = 1.0;         // the tensor-parallel groups of every replica and stage, likewise (1 unless one leaves a node)
  // MoE, per layer (1 for dense layers): its dispatch as priced (work::layer_dispatch_flows, every
  // expert domain of its stage at once; other stages' run at other times), likewise; empty when no
  // EP group of any stage leaves a node.
  std::vector<double> a2a;
  // Per pipeline stage (pp entries where some pipeline send leaves a node, else empty): its
  // forward and backward sends' slowdown (>= 1), the mean over its sends of the most loaded link
  // each crosses, routed with every replica's sends of the stages that send the same way at once
  // (neighbouring stages run opposite passes, so the even stages' forward sends go together, and
  // so on).
  std::vector<double> pp_forward;
  std::vector<double> pp_backward;
  // The DP rings stage by stage, one entry per ECMP draw (network.ecmp_draws with ECMP, else one;
  // the analytical level prices each draw and averages the exposures); empty when not routed.
  std::vector<StageSlowdowns> stage_draws;
  // network.ecmp_draws > 1 with ECMP: each slowdown above is the mean over the draws, and these
  // the lowest and highest DP ring slowdown of one draw (both dp otherwise).
  int draws = 1;
  double dp_low = 1.0;
  double dp_high = 1.0;
  std::string link;        // most loaded link direction of the slowest set ("tor_agg:45/up"); empty when every slowdown is 1
  int sub_flows = 0;       // sub-flows (queue pairs) through it
  // Whose flows those are: "DP rings", "expert DP rings", "embedding sync", "CP rings",
  // "TP groups", "pipeline sends" or "expert all-to-all" (the slowest set by its slowdown, not by
  // the time it costs the step).
  std::string link_traffic;
  bool routed = false;     // false: not routed (no ring leaves a node)
};

// The static bottleneck of `flows` started together (each flow's bytes split evenly over its
// sub-flows as `routes` gives them), relative to the NICs:
//
//   contention = max over network links of bytes(link) / capacity(link)
//                / max over host links of bytes(link) / host capacity
//
// With max-min fair sharing every flow through the most loaded link gets at most its capacity
// shared by their bytes, so the set ends no sooner than the numerator (and no later while each
// flow has one bottleneck, as rings do); the denominator is the busiest NIC's time at its line
// rate (slower switch-to-switch links count where routes cross them, in the numerator), what the
// closed forms charge where a node holds as many ring members
// as they assume (gpus_per_node / (tp cp) for DP; other placements are priced against the NIC
// load their routes give). Intra-node flows are
// skipped. Returns 1 when nothing leaves a node. Links of zero capacity are skipped (the flow
// level refuses them anyway).
struct StaticLoad {
  double contention = 1.0;
  topo::LinkId link = -1;  // the most loaded network link, -1 when contention is 1
  int sub_flows = 0;
};
StaticLoad static_contention(const topo::Fabric& fabric, const net::RouteSource& routes,
                             std::span<const coll::FlowSpec> flows);

// The StageLinkLoads of `flows` (flow i of pipeline stage `stage[i]`, 0 <= stage < stages), each
// split evenly over its paths: every network link some flow crosses that could be slower than the
// busiest NIC, with each stage's bytes on it; and, in `all` when given, static_contention of every
// flow (the same routing pass; stages 0 and an empty `stage`: that alone). With `every_link`, every
// link some flow crosses, NICs' included (what contention_over_nics needs).
StageLinkLoads stage_link_loads(const topo::Fabric& fabric, const net::RouteSource& routes,
                                std::span<const coll::FlowSpec> flows, std::span<const int> stage, int stages,
                                StaticLoad* all = nullptr, bool every_link = false);

// The static completion time of `flows` started together, at the links' line rates: the most
// loaded link's bytes over its capacity, over every tier (NVLink included: intra-node flows
// count), each flow split evenly over the paths `routes` gives it. A lower bound on the flow
// level's time for the set, and equal to it while each flow has one bottleneck.
Time static_completion(const topo::Fabric& fabric, const net::RouteSource& routes,
                       std::span<const coll::FlowSpec> flows);

// The gradient-sync rings of every pipeline stage (work::dense_dp_rings; MoE: and, as a second
// set, work::expert_dp_rings), the tied-embedding pairs of every replica
// (work::embedding_sync_pairs), the CP rings (work::cp_rings), the TP groups of dense models
// (work::tp_groups; an MoE model's attention keeps the block model) and, per MoE layer, its dispatch
// (work::layer_dispatch_flows) and every replica's pipeline sends that leave a node (the stages
// that send the same way at once together; FabricContention::pp_forward), each set routed together on the scenario's
// fabric with its routing, queue pairs and ECMP seed, as the flow level routes them. The default
// when no ring, pair or EP group leaves a node. Throws BadInput when the fabric cannot be built (topo::plan_clos,
// topo::build_fabric), whether or not anything is routed.
// `draws` (optional) keeps the MoE layers' routing draws for the estimate that follows.
FabricContention fabric_contention(const ScenarioConfig& cfg, work::RoutingDraws* draws = nullptr);
// Whether fabric_contention routes anything for `cfg` (some ring, embedding pair, EP group or
// pipeline send that leaves a node): whether network.routing, qps_per_connection and ecmp_seed matter to the analytical
// training level.
bool routes_dp_rings(const ScenarioConfig& cfg);

// fabric_contention, remembered per distinct input (cluster shape and NICs, the network's
// topology and routing keys, the parallel plan's sizes and placement): sweeps and placement draws
// price many scenarios that share a fabric and a plan. At most kMaxEntries are kept (emptied
// when full). The reference `get` returns holds until the next call. Not thread-safe.
class ContentionCache {
 public:
  static constexpr size_t kMaxEntries = 16;
  const FabricContention& get(const ScenarioConfig& cfg, work::RoutingDraws* draws = nullptr);
  size_t size() const { return cache_.size(); }

 private:
  std::unordered_map<std::string, FabricContention> cache_;
};

// The inputs fabric_contention reads, as one string (the cache's key).
std::string contention_key(const ScenarioConfig& cfg);

}  // namespace clustersim::engine
