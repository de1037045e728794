// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/fabric_contention.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "sim/core/error.h"
#include "sim/engine/scenario_nvlink.h"
#include "sim/network/fabric_routes.h"
#include "topology/clos_shape.h"
#include "topology/fabric_router.h"
#include "workloads/moe.h"
#include "workloads/placement.h"
#include "workloads/training_graph.h"

namespace clustersim::engine {

namespace {

// Bytes each link carries when `flows` are routed (each flow split evenly over its paths) and the
// links touched; intra-node flows only with `with_intra_node`.
struct LinkLoads {
  std::vector<double> bytes;
  std::vector<topo::LinkId> touched;
};
LinkLoads link_loads(const topo::Fabric& fabric, const net::RouteSource& routes, std::span<const coll::FlowSpec> flows,
                     bool with_intra_node) {
  LinkLoads out;
  out.bytes.assign(static_cast<size_t>(fabric.link_count()), 0.0);
  std::vector<net::Path> paths;
  for (const coll::FlowSpec& f : flows) {
    if ((!f.inter_node && !with_intra_node) || f.bytes.n <= 0 || f.src == f.dst) continue;
    routes.paths(f.src, f.dst, f.connection, paths);
    const double per_path = static_cast<double>(f.bytes.n) / static_cast<double>(paths.size());
    for (const net::Path& p : paths) {
      for (size_t i = 0; i < p.links.size(); ++i) {
        const topo::LinkId l = p.links[i];
        if (out.bytes[l] == 0.0) out.touched.push_back(l);
        out.bytes[l] += per_path * p.share(i);
      }
    }
  }
  return out;
}

// Per stage (`stages` entries), the mean over its flows of each one's slowdown: the most loaded
// link its paths cross, with all `flows` started together, against the busiest NIC (>= 1). The
// mean, not the slowest: replicas meet only at the step's end, and at the flow level (unfolded)
// they drift out of step, so a send meets the collisions of its own route on average. On 13
// Megatron-LM plans without overlap (512 to 12,288 GPUs, docs/results.md) the mean is within 1.0%
// of the unfolded flow level's step (mean 0.32%); the slowest replica's slowest send came out up
// to 2.9% over, the most loaded link of all up to 5.1% over (2026-12-05).
std::vector<double> mean_flow_slowdowns(const topo::Fabric& fabric, const net::RouteSource& routes,
                                        std::span<const coll::FlowSpec> flows, std::span<const int> stage, int stages) {
  const LinkLoads loads = link_loads(fabric, routes, flows, false);
  const double nic_rate = fabric.tier_spec(topo::LinkTier::kHost).bandwidth.bytes_per_s;
  double host_time = 0.0;
  for (const topo::LinkId l : loads.touched) {
    if (fabric.link_tier(l) == topo::LinkTier::kHost) host_time = std::max(host_time, loads.bytes[l] / nic_rate);
  }
  std::vector<double> sum(static_cast<size_t>(stages), 0.0);
  std::vector<int> count(static_cast<size_t>(stages), 0);
  std::vector<net::Path> paths;
  for (size_t i = 0; i < flows.size() && host_time > 0.0; ++i) {
    const coll::FlowSpec& f = flows[i];
    if (!f.inter_node || f.bytes.n <= 0 || f.src == f.dst) continue;
    routes.paths(f.src, f.dst, f.connection, paths);
    double worst = 0.0;
    for (const net::Path& p : paths) {
      for (const topo::LinkId l : p.links) {
        if (fabric.link_tier(l) == topo::LinkTier::kNvlink || fabric.is_failed(l)) continue;
        worst = std::max(worst, loads.bytes[l] / fabric.capacity(l).bytes_per_s);
      }
    }
    sum[static_cast<size_t>(stage[i])] += std::max(1.0, worst / host_time);
    ++count[static_cast<size_t>(stage[i])];
  }
  std::vector<double> out(static_cast<size_t>(stages), 1.0);
  for (size_t s = 0; s < out.size(); ++s) {
    if (count[s] > 0) out[s] = sum[s] / count[s];
  }
  return out;
}

}  // namespace

Time static_completion(const topo::Fabric& fabric, const net::RouteSource& routes,
                       std::span<const coll::FlowSpec> flows) {
  const LinkLoads loads = link_loads(fabric, routes, flows, true);
  double worst = 0.0;
  for (const topo::LinkId l : loads.touched) {
    if (fabric.is_failed(l) || fabric.capacity(l).bytes_per_s <= 0) continue;
    worst = std::max(worst, loads.bytes[l] / fabric.capacity(l).bytes_per_s);
  }
  return Time::s(worst);
}

StaticLoad static_contention(const topo::Fabric& fabric, const net::RouteSource& routes,
                             std::span<const coll::FlowSpec> flows) {
  StaticLoad all;
  stage_link_loads(fabric, routes, flows, {}, 0, &all);
  return all;
}

StageLinkLoads stage_link_loads(const topo::Fabric& fabric, const net::RouteSource& routes,
                                std::span<const coll::FlowSpec> flows, std::span<const int> stage, int stages,
                                StaticLoad* all, bool every_link) {
  StageLinkLoads out;
  out.of_stage.resize(static_cast<size_t>(stages));
  // One routing pass: each network link's bytes (summed in link_loads' order, so `all` is
  // static_contention's figure to the last bit), sub-flows and bytes per stage; links numbered
  // as first touched.
  std::vector<int32_t> compact(static_cast<size_t>(fabric.link_count()), -1);
  std::vector<topo::LinkId> link_of;
  std::vector<double> total;
  std::vector<int> sub_flows;
  std::vector<std::vector<double>> bytes;  // compact link -> bytes per stage
  std::vector<net::Path> paths;
  for (size_t i = 0; i < flows.size(); ++i) {
    const coll::FlowSpec& f = flows[i];
    if (!f.inter_node || f.bytes.n <= 0 || f.src == f.dst) continue;
    const size_t s = stages > 0 ? static_cast<size_t>(stage[i]) : 0;
    routes.paths(f.src, f.dst, f.connection, paths);
    const double per_path = static_cast<double>(f.bytes.n) / static_cast<double>(paths.size());
    for (const net::Path& p : paths) {
      for (size_t k = 0; k < p.links.size(); ++k) {
        const topo::LinkId l = p.links[k];
        if (fabric.link_tier(l) == topo::LinkTier::kNvlink || fabric.is_failed(l)) continue;
        int32_t& c = compact[static_cast<size_t>(l)];
        if (c < 0) {
          c = static_cast<int32_t>(link_of.size());
          link_of.push_back(l);
          total.push_back(0.0);
          sub_flows.push_back(0);
          bytes.emplace_back(static_cast<size_t>(stages), 0.0);
        }
        const double b = per_path * p.share(k);
        if (stages > 0) {
          std::vector<double>& by_stage = bytes[static_cast<size_t>(c)];
          if (by_stage[s] == 0.0) out.of_stage[s].push_back(c);
          by_stage[s] += b;
        }
        total[static_cast<size_t>(c)] += b;
        ++sub_flows[static_cast<size_t>(c)];
      }
    }
  }
  out.links.resize(link_of.size());
  // Against the NICs' line rate: slower switch-to-switch links (network.fabric_bandwidth) count
  // where the routes cross them, not for traffic that stays under its ToR.
  const double nic_rate = fabric.tier_spec(topo::LinkTier::kHost).bandwidth.bytes_per_s;
  double host_time = 0.0;
  double worst_time = 0.0;
  StaticLoad worst;
  for (size_t c = 0; c < link_of.size(); ++c) {
    const topo::LinkId l = link_of[c];
    const double t = total[c] / fabric.capacity(l).bytes_per_s;
    if (fabric.link_tier(l) == topo::LinkTier::kHost) host_time = std::max(host_time, total[c] / nic_rate);
    // Ties go to the lowest link id, so the named link does not depend on routing order.
    if (t > worst_time || (t == worst_time && worst.link >= 0 && l < worst.link)) {
      worst_time = t;
      worst.link = l;
      worst.sub_flows = sub_flows[c];
    }
  }
  if (all) {
    *all = StaticLoad{};
    if (host_time > 0.0 && worst_time > host_time) {
      *all = worst;
      all->contention = worst_time / host_time;
    }
  }
  if (host_time <= 0.0 || stages == 0) {
    for (std::vector<int32_t>& of : out.of_stage) of.clear();
    out.links.clear();
    return out;
  }
  // A link no slower than the busiest NIC with every stage's bytes on it is so with any share of
  // them: contention() never needs it (most links; the analytical level weighs the rest for every
  // stage three times per estimate).
  std::vector<bool> can_slow(link_of.size(), false);
  if (every_link) out.nic_rate_share.assign(link_of.size(), 0.0);
  for (size_t c = 0; c < link_of.size(); ++c) {
    const double capacity = fabric.capacity(link_of[c]).bytes_per_s;
    const double scale = 1.0 / (capacity * host_time);
    double sum = 0.0;
    for (int st = 0; st < stages; ++st) {
      const double b = bytes[c][static_cast<size_t>(st)];
      if (b > 0.0) out.links[c].emplace_back(st, b * scale);
      sum += b * scale;
    }
    can_slow[c] = sum > 1.0 || every_link;
    if (every_link && fabric.link_tier(link_of[c]) == topo::LinkTier::kHost) out.nic_rate_share[c] = capacity / nic_rate;
  }
  for (std::vector<int32_t>& of : out.of_stage) {
    of.erase(std::remove_if(of.begin(), of.end(), [&](int32_t c) { return !can_slow[static_cast<size_t>(c)]; }), of.end());
  }
  return out;
}

double StageLinkLoads::contention(int stage, std::span<const double> weight) const {
  double worst = 1.0;
  for (const int32_t l : of_stage[static_cast<size_t>(stage)]) {
    double t = 0.0;
    for (const auto& [s, x] : links[static_cast<size_t>(l)]) t += weight[static_cast<size_t>(s)] * x;
    worst = std::max(worst, t);
  }
  return worst;
}

double StageLinkLoads::contention_over_nics(int stage, std::span<const double> weight) const {
  double worst = 0.0, nic = 0.0;
  for (const int32_t l : of_stage[static_cast<size_t>(stage)]) {
    double t = 0.0;
    for (const auto& [s, x] : links[static_cast<size_t>(l)]) t += weight[static_cast<size_t>(s)] * x;
    worst = std::max(worst, t);
    nic = std::max(nic, t * nic_rate_share[static_cast<size_t>(l)]);
  }
  return nic > 0.0 ? std::max(1.0, worst / nic) : 1.0;
}

namespace {

// Pipeline sends routed together, with each one's sending stage.
struct PipelineSends {
  std::vector<coll::FlowSpec> flows;
  std::vector<int> stage;
};

// Every set fabric_contention routes, as the flow level's graph builds them: the dense and expert
// gradient rings of every stage, the tied-embedding pairs and the CP rings of every replica.
struct RingSets {
  std::vector<std::vector<int32_t>> dense, expert, embedding, cp, tp;
  std::vector<int> dense_stage, expert_stage, cp_stage;  // the pipeline stage of each dense, expert and CP ring
  std::vector<std::vector<std::vector<int32_t>>> a2a;  // per stage: its EP groups
  // The pipeline sends between nodes of every replica, in the sets that run at once (see
  // pipeline_sends).
  std::array<PipelineSends, 4> pp_sends;
};

// The pipeline sends of every replica that leave a node, in four sets: forward and backward, from
// the even and from the odd stages (set 2 x (stage % 2) + (backward ? 1 : 0)). In 1F1B's steady
// state neighbouring stages run opposite passes (while stage s runs a forward pass, s + 1 runs a
// backward one: Narayanan et al., SC'21, figure 4), so stages of one parity end the same pass at
// once and send the same way together. The last stage sends forward to the first, and the first
// backward to the last, only under interleaving (the chunk loop). Each GPU sends to the same TP
// and CP rank of the neighbour stage, as the flow level's graph.
void pipeline_sends(const ScenarioConfig& cfg, const work::Placement& pl, RingSets& out) {
  const ParallelismConfig& p = cfg.parallelism;
  const int gpn = cfg.cluster.gpus_per_node;
  for (int s = 0; p.pp > 1 && s < p.pp; ++s) {
    for (const int step : {1, -1}) {
      const int to = s + step;
      if ((to < 0 || to >= p.pp) && p.vpp == 1) continue;
      PipelineSends& set = out.pp_sends[static_cast<size_t>(2 * (s % 2) + (step == 1 ? 0 : 1))];
      for (int d = 0; d < pl.size(work::Dim::kDp); ++d) {
        for (int c = 0; c < p.cp; ++c) {
          for (int t = 0; t < p.tp; ++t) {
            const int32_t from = pl.gpu(t, c, d, s), dst = pl.gpu(t, c, d, (to + p.pp) % p.pp);
            if (from / gpn == dst / gpn) continue;
            set.flows.push_back(coll::FlowSpec{from, dst, Bytes{1 << 20}, true});
            set.stage.push_back(s);
          }
        }
      }
    }
  }
}

RingSets ring_sets(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  const work::Placement pl = work::placement_of(cfg);
  RingSets out;
  for (int d = 0; d < pl.size(work::Dim::kDp); ++d) {
    for (auto& pair : work::embedding_sync_pairs(cfg, pl, d)) out.embedding.push_back(std::move(pair));
    // TP groups that leave a node (placements that put tp after another dimension): every
    // replica's and stage's at once, as they run with each layer.
    if (p.tp > 1 && !cfg.model.moe) {
      for (int s = 0; s < p.pp; ++s) {
        for (auto& g : work::tp_groups(cfg, pl, d, s)) {
          if (work::spans_nodes(g, cfg.cluster.gpus_per_node)) out.tp.push_back(std::move(g));
        }
      }
    }
    if (p.cp <= 1) continue;
    for (int s = 0; s < p.pp; ++s) {
      for (auto& hop : work::cp_hops(cfg, pl, d, s)) {
        out.cp.push_back(std::move(hop));
        out.cp_stage.push_back(s);
      }
    }
  }
  pipeline_sends(cfg, pl, out);
  for (int s = 0; s < p.pp; ++s) {
    for (auto& r : work::dense_dp_rings(cfg, pl, s)) {
      if (r.size() <= 1) continue;
      out.dense.push_back(std::move(r));
      out.dense_stage.push_back(s);
    }
    if (!cfg.model.moe) continue;
    for (auto& r : work::expert_dp_rings(cfg, s)) {
      out.expert.push_back(std::move(r));
      out.expert_stage.push_back(s);
    }
    // The dispatch goes between GPUs of one expert-TP slice (work::dispatch_transfers).
    const work::ExpertLayout lay = work::expert_layout(cfg, s);
    std::vector<std::vector<int32_t>>& groups = out.a2a.emplace_back();
    for (int e = 0; e < lay.edp; ++e) {
      for (int t = 0; t < lay.etp; ++t) {
        std::vector<int32_t>& g = groups.emplace_back();
        for (int d = 0; d < lay.ep; ++d) g.push_back(lay.gpu(t, d, e));
      }
    }
  }
  return out;
}

// Whether some ring, pair or group of `set` spans two nodes (only those reach the fabric).
bool any_spans_nodes(const std::vector<std::vector<int32_t>>& set, int gpus_per_node) {
  return std::any_of(set.begin(), set.end(),
                     [gpus_per_node](const std::vector<int32_t>& g) { return work::spans_nodes(g, gpus_per_node); });
}

// Whether the expert all-to-all of some stage leaves a node.
bool a2a_leaves_node(const RingSets& r, int gpus_per_node) {
  return std::any_of(r.a2a.begin(), r.a2a.end(), [gpus_per_node](const auto& groups) { return any_spans_nodes(groups, gpus_per_node); });
}

// Whether anything of `r` reaches the fabric.
bool any_leaves_node(const RingSets& r, int gpus_per_node) {
  for (const auto* set : {&r.dense, &r.expert, &r.embedding, &r.cp, &r.tp}) {
    if (any_spans_nodes(*set, gpus_per_node)) return true;
  }
  return a2a_leaves_node(r, gpus_per_node) ||
         std::any_of(r.pp_sends.begin(), r.pp_sends.end(), [](const PipelineSends& set) { return !set.flows.empty(); });
}

}  // namespace

bool routes_dp_rings(const ScenarioConfig& cfg) {
  return any_leaves_node(ring_sets(cfg), cfg.cluster.gpus_per_node);
}

namespace {

// The routed slowdowns of one ECMP hash draw (`seed`) on `fabric`; only the routes depend on it.
FabricContention one_draw(const ScenarioConfig& cfg, const topo::Fabric& fabric, const RingSets& sets, uint64_t seed,
                          work::RoutingDraws* draws) {
  FabricContention out;
  NetworkConfig drawn = cfg.network;
  drawn.ecmp_seed = seed;
  out.routed = true;
  const net::FabricRoutes routes(fabric, topo::routing_options(drawn));
  // Reduce-scatter, all-gather and all-reduce rings share their edges (only the bytes per edge
  // differ by the op's factor), so one op stands for all three.
  const auto ring_flows = [&](const std::vector<std::vector<int32_t>>& rings, const std::vector<int>* stage_of,
                              std::vector<int>* stage, coll::CollectiveOp op = coll::CollectiveOp::kAllGather) {
    std::vector<coll::FlowSpec> flows;
    for (size_t i = 0; i < rings.size(); ++i) {
      coll::collective_flows(op, coll::Algorithm::kRing, Bytes{1 << 20}, rings[i], cfg.cluster.gpus_per_node, flows);
      if (stage) stage->resize(flows.size(), (*stage_of)[i]);
    }
    return flows;
  };
  const auto contention = [&](const std::vector<std::vector<int32_t>>& rings) {
    return static_contention(fabric, routes, ring_flows(rings, nullptr, nullptr));
  };
  // The gradient rings of every stage routed together, and what that gives each stage's rings.
  const int pp = cfg.parallelism.pp;
  const auto by_stage = [&](const std::vector<std::vector<int32_t>>& rings, const std::vector<int>& stage_of,
                            std::vector<double>& per_stage, std::shared_ptr<const StageLinkLoads>& loads) {
    std::vector<int> stage;
    const std::vector<coll::FlowSpec> flows = ring_flows(rings, &stage_of, &stage);
    StaticLoad all;
    auto l = std::make_shared<StageLinkLoads>(stage_link_loads(fabric, routes, flows, stage, pp, &all));
    const std::vector<double> every(static_cast<size_t>(pp), 1.0);
    per_stage.resize(static_cast<size_t>(pp));
    for (int s = 0; s < pp; ++s) per_stage[static_cast<size_t>(s)] = l->of_stage.empty() ? 1.0 : l->contention(s, every);
    loads = std::move(l);
    return all;
  };
  StageSlowdowns& stages = out.stage_draws.emplace_back();
  const StaticLoad dense = by_stage(sets.dense, sets.dense_stage, stages.dp, stages.dp_loads);
  const StaticLoad expert = by_stage(sets.expert, sets.expert_stage, stages.expert_dp, stages.expert_dp_loads);
  const StaticLoad embedding = contention(sets.embedding);
  // The CP rings stage by stage too, every link kept: the analytical level weighs them against
  // the stage's own NICs (StageLinkLoads::contention_over_nics).
  const StaticLoad cp = [&] {
    StaticLoad all;
    if (sets.cp.empty()) return all;
    std::vector<int> stage;
    const std::vector<coll::FlowSpec> flows = ring_flows(sets.cp, &sets.cp_stage, &stage, coll::CollectiveOp::kSendRecv);
    stages.cp_loads = std::make_shared<StageLinkLoads>(stage_link_loads(fabric, routes, flows, stage, pp, &all, true));
    return all;
  }();
  const StaticLoad tp = contention(sets.tp);
  out.dp = dense.contention;
  out.tp = tp.contention;
  out.expert_dp = expert.contention;
  out.embedding = embedding.contention;
  out.cp = cp.contention;
  const StaticLoad* worst = &dense;
  const char* worst_traffic = "DP rings";
  const std::pair<const StaticLoad*, const char*> named[] = {
      {&expert, "expert DP rings"}, {&embedding, "embedding sync"}, {&cp, "CP rings"}, {&tp, "TP groups"}};
  for (const auto& [l, traffic] : named) {
    if (l->contention > worst->contention) worst = l, worst_traffic = traffic;
  }
  // The pipeline sends, set by set: each stage's forward and backward sends at the slowdown of
  // their set (mean_flow_slowdowns). Their busiest link is a candidate for the one named (until
  // 2026-12-07 it was not: PP outermost over an 8:1 spine named a ToR uplink of 4 sub-flows while
  // its pipeline sends met 8 and more on the spine; QA).
  std::vector<StaticLoad> pp_loads;
  if (std::any_of(sets.pp_sends.begin(), sets.pp_sends.end(), [](const PipelineSends& set) { return !set.flows.empty(); })) {
    out.pp_forward.assign(static_cast<size_t>(pp), 1.0);
    out.pp_backward.assign(static_cast<size_t>(pp), 1.0);
    for (size_t i = 0; i < sets.pp_sends.size(); ++i) {
      const PipelineSends& set = sets.pp_sends[i];
      if (set.flows.empty()) continue;
      const std::vector<double> slowdown = mean_flow_slowdowns(fabric, routes, set.flows, set.stage, pp);
      std::vector<double>& into = i % 2 == 0 ? out.pp_forward : out.pp_backward;
      for (size_t s = i / 2; s < into.size(); s += 2) into[s] = slowdown[s];
      pp_loads.push_back(static_contention(fabric, routes, set.flows));
    }
  }
  for (const StaticLoad& l : pp_loads) {
    if (l.contention > worst->contention) worst = &l, worst_traffic = "pipeline sends";
  }
  std::vector<StaticLoad> a2a;
  if (a2a_leaves_node(sets, cfg.cluster.gpus_per_node)) {
    for (int layer = 0; layer < cfg.model.layers; ++layer) {
      if (!work::is_moe_layer(cfg.model, layer)) {
        out.a2a.push_back(1.0);
        continue;
      }
      a2a.push_back(static_contention(fabric, routes, work::layer_dispatch_flows(cfg, layer, draws)));
      out.a2a.push_back(a2a.back().contention);
    }
  }
  for (const StaticLoad& l : a2a) {
    if (l.contention > worst->contention) worst = &l, worst_traffic = "expert all-to-all";
  }
  if (worst->contention > 1.0) {
    out.link = fabric.link_name(worst->link);
    out.sub_flows = worst->sub_flows;
    out.link_traffic = worst_traffic;
  }
  out.dp_low = out.dp_high = out.dp;
  return out;
}

}  // namespace

FabricContention fabric_contention(const ScenarioConfig& cfg, work::RoutingDraws* routing_draws) {
  // A Clos that cannot be built (fractional port splits, too small a radix) is bad input here as
  // at the flow level and in `topo`: before 2026-11-21 the closed form priced it unrouted, so a 2:1
  // fabric could come out faster than a 1:1 one whose rings collide.
  topo::plan_clos(cfg.cluster, cfg.network, cfg.file);
  const RingSets sets = ring_sets(cfg);
  if (!any_leaves_node(sets, cfg.cluster.gpus_per_node)) return FabricContention{};  // as routes_dp_rings
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file, scenario_nvlink_bandwidth(cfg));
  FabricContention out = one_draw(cfg, fabric, sets, cfg.network.ecmp_seed, routing_draws);
  const int draws = cfg.network.routing == Routing::kEcmp ? cfg.network.ecmp_draws : 1;
  if (draws <= 1) return out;
  // Which flows ECMP's hash puts together is a draw: one seed can give 1x or 2x on the same plan.
  // The mean over seeds is what a job can expect; the most loaded link stays the first draw's.
  for (int k = 1; k < draws; ++k) {
    const FabricContention d =
        one_draw(cfg, fabric, sets, cfg.network.ecmp_seed + static_cast<uint64_t>(k), routing_draws);
    out.stage_draws.push_back(d.stage_draws.front());
    out.dp += d.dp;
    out.expert_dp += d.expert_dp;
    out.embedding += d.embedding;
    out.cp += d.cp;
    out.tp += d.tp;
    for (size_t i = 0; i < out.a2a.size() && i < d.a2a.size(); ++i) out.a2a[i] += d.a2a[i];
    for (size_t i = 0; i < out.pp_forward.size(); ++i) out.pp_forward[i] += d.pp_forward[i];
    for (size_t i = 0; i < out.pp_backward.size(); ++i) out.pp_backward[i] += d.pp_backward[i];
    out.dp_low = std::min(out.dp_low, d.dp);
    out.dp_high = std::max(out.dp_high, d.dp);
  }
  const double n = draws;
  out.dp /= n;
  out.expert_dp /= n;
  out.embedding /= n;
  out.cp /= n;
  out.tp /= n;
  for (double& a : out.a2a) a /= n;
  for (double& a : out.pp_forward) a /= n;
  for (double& a : out.pp_backward) a /= n;
  out.draws = draws;
  return out;
}

std::string contention_key(const ScenarioConfig& cfg) {
  const ClusterConfig& c = cfg.cluster;
  const NetworkConfig& n = cfg.network;
  const ParallelismConfig& p = cfg.parallelism;
  char buf[512];
  // MoE: the rings depend on ep, expert_tp and the attention split too. Interleaving adds the
  // pipeline sends from the last stage to the first (any vpp > 1 the same).
  const bool moe = cfg.model.moe.has_value();
  std::snprintf(buf, sizeof buf, "%d/%d/%d/%.17g|%d/%d/%d/%.17g/%.17g/%.17g/%d/%d/%llu/%d|%d/%d/%d/%d/%s/%d|%d/%d/%d/%d",
                c.gpus, c.gpus_per_node, c.nics_per_node, c.nic_bandwidth.bytes_per_s, n.tiers,
                static_cast<int>(n.wiring), n.switch_radix, n.tor_oversubscription, n.agg_oversubscription,
                n.fabric_bandwidth ? n.fabric_bandwidth->bytes_per_s : -1.0, static_cast<int>(n.routing),
                n.qps_per_connection, static_cast<unsigned long long>(n.ecmp_seed), n.ecmp_draws, p.tp, p.cp, p.pp, p.vpp > 1 ? 1 : 0,
                p.placement.c_str(), cfg.model.tied_embeddings ? 1 : 0, moe ? 1 : 0, moe ? p.ep : 0, moe ? p.expert_tp : 0,
                moe ? static_cast<int>(cfg.training.attention_parallel) : 0);
  std::string key = buf;
  key += n.oversubscription_by == OversubscriptionBy::kPortSplit ? "|split" : "|uplinks";
  if (moe) {
    // The dispatch flows follow the routing draw of every layer (layer_dispatch_flows).
    const MoeConfig& r = *cfg.model.moe;
    std::snprintf(buf, sizeof buf, "|moe %d/%d/%d/%d/%.17g/%d/%.17g/%llu/%d/%d/%d/%d/%d/%d", r.experts, r.top_k,
                  r.moe_layer_frequency, r.first_dense_layers, r.capacity_factor, static_cast<int>(r.routing), r.zipf_s,
                  static_cast<unsigned long long>(r.seed), cfg.model.layers, cfg.model.seq_len, p.micro_batch, p.vpp,
                  cfg.model.hidden, static_cast<int>(cfg.training.comm_precision));
    key += buf;
    for (const double w : r.loads) {
      std::snprintf(buf, sizeof buf, ",%.17g", w);
      key += buf;
    }
    // A listed layer map moves layers, and their dispatch flows, between stages (review,
    // 2026-12-07: a sweep over two maps priced the second with the first's all-to-alls).
    key += "|layers";
    for (const int l : p.stage_layers) key += "," + std::to_string(l);
  }
  for (const FabricFault& f : n.faults) {
    std::snprintf(buf, sizeof buf, "|%s/%.17g", f.element.c_str(), f.bandwidth_factor);
    key += buf;
  }
  return key;
}

const FabricContention& ContentionCache::get(const ScenarioConfig& cfg, work::RoutingDraws* draws) {
  const std::string key = contention_key(cfg);
  auto it = cache_.find(key);
  if (it == cache_.end()) {
    // A sweep meets its keys in runs (candidates of one fabric and plan shape are contiguous):
    // a few recent ones are all that is reused. Kept whole, sweep-175b's 374 keys held about
    // 230 MB to the end (2026-12-06).
    if (cache_.size() >= kMaxEntries) cache_.clear();
    it = cache_.emplace(key, fabric_contention(cfg, draws)).first;
  }
  return it->second;
}

}  // namespace clustersim::engine
