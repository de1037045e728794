// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/analytical_training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <utility>

#include "calibration/compute_cost.h"
#include "sim/core/scenario.h"
#include "sim/core/stragglers_config.h"
#include "sim/collectives/collective_cost.h"
#include "topology/clos_shape.h"
#include "workloads/moe.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/placement.h"
#include "workloads/training_costs.h"
#include "workloads/training_graph.h"

namespace clustersim::engine {

const char* const kMfuDefinition =
    "MFU = model FLOPs per iteration / (iteration time x GPUs x dense peak of the training "
    "precision); model FLOPs = 3 x forward (no recomputation), attention counted over the whole "
    "score matrix (or the sliding window) as in Megatron-LM (SC'21 eq. 3 without its "
    "recomputed forward) and PaLM. HFU adds recomputation.";

const char* const kMoeMfuNote =
    "MoE: model FLOPs count the active parameters only (attention, router, top_k routed and the "
    "shared experts per token), not all experts.";

namespace {

using coll::CollectiveOp;
using coll::GroupLinks;
using work::group_links;
using work::LayerTimes;
using work::TrainingLinks;

// The most pipeline stages whose GPUs share one of node 0's NICs (the step waits for the most
// shared): 1 where every NIC serves one stage's GPUs (Megatron-LM's default order puts a stage's
// GPUs together), more where the placement puts pp before tp or cp and a NIC serves several GPUs.
int stages_per_nic(const ScenarioConfig& cfg, const work::Placement& pl) {
  std::map<int64_t, std::set<int>> stages;  // NIC -> stages behind it
  for (int g = 0; g < cfg.cluster.gpus_per_node && g < pl.gpus(); ++g) {
    stages[topo::nic_of_gpu(g, cfg.cluster.gpus_per_node, cfg.cluster.nics_per_node)].insert(pl.coord(g, work::Dim::kPp));
  }
  size_t most = 1;
  for (const auto& [nic, behind] : stages) most = std::max(most, behind.size());
  return static_cast<int>(most);
}

// The TP and CP links of a stage whose traffic meets other pipeline stages' on its NIC (placements
// that put pp before cp or tp, such as tp-pp-cp-dp: k stages behind one NIC) or, for the CP rings,
// on the fabric's links (`cp_fabric`, below), for the groups that leave the node (`tp_leaves`,
// `cp_leaves`). The closed forms give every GPU its share of its NIC at once, and the routed CP
// rings every stage's rings at once (FabricContention::cp), as if the stages communicated together;
// they run different micro-batches, so one stage's traffic meets another's only while that one
// sends its own. Mean field: each other stage runs beside the critical one a fraction `beside` of
// the time (the caller's schedule count) and keeps its traffic busy a fraction d of its micro-batch
// slot, independently of the others'. On the NIC a stage's GPUs get k times the closed form's share
// divided by 1 + (k - 1) beside d; on the fabric the CP rings meet the other stages' rings weighted
// by beside d_cp (cp_fabric_slowdown), where
//
//   d    = layers x (r x CP ring pass + TP collectives) / slot,  slot = layers x (forward + backward + exposed TP/CP)
//   d_cp = layers x r x CP ring pass / slot
//
// (r = work::cp_rings_per_layer ring passes per layer: the forward's K and V, the backward's and
// their gradients', and the recomputed forward's where the attention core is recomputed; the
// TP collectives whole, hidden or not), iterated from d = 1 down to its fixed point (the map rises
// with d). With `cp_fabric`, closed.cp is the CP rings' NIC share, uncontended.
struct StaggeredLinks {
  TrainingLinks tp;
  TrainingLinks cp;
};
StaggeredLinks staggered_links(const ScenarioConfig& cfg, const StaggeredLinks& closed, const LayerTimes& lt,
                               double layers, int k, double beside, bool tp_leaves, bool cp_leaves,
                               const std::function<double(double)>& cp_fabric) {
  StaggeredLinks out = closed;
  const int collectives = work::tp_layer_traffic(cfg).collectives;
  const auto share = [&](double d, double d_cp) {
    const double f = k / (1.0 + (k - 1) * beside * d);
    const TrainingLinks cp = cp_fabric ? work::links_at_contention(closed.cp, cp_fabric(beside * d_cp)) : closed.cp;
    if (tp_leaves) out.tp.nic_per_gpu = Bandwidth{closed.tp.nic_per_gpu.bytes_per_s * f};
    if (cp_leaves) {
      out.cp = cp;
      out.cp.nic_per_gpu = Bandwidth{cp.nic_per_gpu.bytes_per_s * f};
    }
  };
  double d = 1.0, d_cp = 1.0;
  for (int i = 0; i < 100; ++i) {
    share(d, d_cp);
    const Time rings = cp_leaves ? layers * work::cp_rings_per_layer(cfg.training) * work::cp_ring_time(cfg, out.cp) : Time::zero();
    const Time busy =
        rings + (tp_leaves ? layers * work::tp_collectives_time(cfg, out.tp, collectives, Time::zero(), Time::zero()) : Time::zero());
    const Time slot = layers * (lt.forward + lt.backward + work::layer_tp_time(cfg, out.tp, out.cp, lt));
    const double next = std::min(1.0, busy / slot);
    const double next_cp = std::min(1.0, rings / slot);
    if (std::abs(next - d) < 1e-9 && (!cp_fabric || std::abs(next_cp - d_cp) < 1e-9)) break;
    d = next;
    d_cp = next_cp;
  }
  share(d, d_cp);
  return out;
}

// The CP rings' slowdown on the fabric when every other stage's rings run beside the critical
// stage's for `beside` of their bytes (its replicas' for all of theirs): per ECMP draw the most
// slowed stage against its own NICs (StageLinkLoads::contention_over_nics), the mean over the draws.
double cp_fabric_slowdown(const FabricContention& c, int pp, double beside) {
  std::vector<double> weight(static_cast<size_t>(pp));
  double sum = 0.0;
  int draws = 0;
  for (const StageSlowdowns& d : c.stage_draws) {
    if (!d.cp_loads) continue;
    double worst = 1.0;
    for (int s = 0; s < pp; ++s) {
      std::fill(weight.begin(), weight.end(), beside);
      weight[static_cast<size_t>(s)] = 1.0;
      worst = std::max(worst, d.cp_loads->contention_over_nics(s, weight));
    }
    sum += worst;
    ++draws;
  }
  return draws > 0 ? sum / draws : c.cp;
}

// The time one micro-batch's passes over `layers` layers keep a GPU's NIC share busy with its TP
// groups' and CP rings' traffic, hidden or not, at the share's own rate (none where they stay on
// NVLink): per layer the TP collectives and the CP ring passes (work::cp_rings_per_layer, as
// work::layer_tp_time prices them).
Time stage_tp_cp_nic_time(const ScenarioConfig& cfg, const TrainingLinks& l, double layers) {
  const TrainingLinks own = work::links_at_contention(l, 1.0);
  return layers * (work::tp_collectives_nic_time(cfg, own, work::tp_layer_traffic(cfg).collectives) +
                   work::cp_rings_per_layer(cfg.training) * work::cp_ring_nic_time(cfg, own));
}

// ZeRO-3's per-pass parameter gathers, overlapped: one stage's stream of them (2 m vpp passes),
// at the DP rings' links and at the NICs' own share (coll::collective_nic_time).
struct GatherStream {
  Time time;
  Time nic;
};

// The exposed TP/CP time of a micro-batch slot and of the fill and drain's slots (as
// layer_tp_time prices them over `layers`) where ZeRO-3's overlapped gathers share the GPUs'
// NICs with the CP rings. The gathers run one after another through the step, each pass's
// starting as the pass before it does (the flow level's graph, as FSDP's prefetch; until
// 2026-12-07 nothing held them back there). A CP ring pass that runs beside one has one flow on its GPU's NIC beside the gather
// ring's (its channel through that GPU), so max-min fair sharing leaves it half the NIC share, or
// what the gather leaves where something else (NVLink, the fabric) holds the gather below it:
//
//   share = max(1/2, 1 - gather's NIC time / gather's time),  rate = min(ring's own, share x NIC)
//
// The passes in the stream's first G seconds of the step's T run beside a gather, a share
//
//   f = min(1, G / T),  G = max(stream, stream's NIC time + f x the stage's CP rings' NIC time)
//   T = m (t + tp(f)) + (pp - 1) / vpp (t + fill tp(f)),  tp(f) = (1 - f) tp(alone) + f tp(beside)
//
// (G: the NIC carries the gathers and the rings that run beside them; T: the passes, as the
// bubble prices them; the exposures averaged over the passes, since a ring's exposure is convex in
// its time), iterated from f = 0 (both rise with f). TP groups that leave the node meet the
// gathers alike and are left out. Returns {tp(f), fill tp(f)}.
std::pair<Time, Time> rings_beside_gathers(const ScenarioConfig& cfg, const TrainingLinks& l, const StaggeredLinks& slot,
                                           const StaggeredLinks& fill, const LayerTimes& lt, double layers,
                                           const GatherStream& gathers, double micro_batches, Time stage_compute,
                                           Time head) {
  const ParallelismConfig& p = cfg.parallelism;
  const TrainingLinks own = work::links_at_contention(l, 1.0);
  const double used = gathers.time > Time::zero() ? std::min(1.0, gathers.nic / gathers.time) : 0.0;
  const double share = std::max(0.5, 1.0 - used);
  const auto beside = [&](TrainingLinks x) {
    x.nic_per_gpu = Bandwidth{std::min(x.nic_per_gpu.bytes_per_s, share * own.nic_per_gpu.bytes_per_s)};
    return x;
  };
  const Time slot_alone = layers * work::layer_tp_time(cfg, slot.tp, slot.cp, lt);
  const Time slot_beside = layers * work::layer_tp_time(cfg, slot.tp, beside(slot.cp), lt);
  const Time fill_alone = layers * work::layer_tp_time(cfg, fill.tp, fill.cp, lt);
  const Time fill_beside = layers * work::layer_tp_time(cfg, fill.tp, beside(fill.cp), lt);
  const Time rings_nic = micro_batches * layers * work::cp_rings_per_layer(cfg.training) * work::cp_ring_nic_time(cfg, own);
  double f = 0.0;
  for (int i = 0; i < 100; ++i) {
    const Time tp = (1.0 - f) * slot_alone + f * slot_beside;
    const Time fill_tp = (1.0 - f) * fill_alone + f * fill_beside;
    const Time step = micro_batches * (stage_compute + tp) + ((p.pp - 1.0) / p.vpp) * (stage_compute - head + fill_tp);
    const Time stream = max(gathers.time, gathers.nic + f * rings_nic);
    const double next = step > Time::zero() ? std::min(1.0, stream / step) : 1.0;
    if (std::abs(next - f) < 1e-9) break;
    f = next;
  }
  return {(1.0 - f) * slot_alone + f * slot_beside, (1.0 - f) * fill_alone + f * fill_beside};
}

// The most loaded link of any stage's DP rings counting that stage's own bytes only, against
// the busiest NIC's time of every stage's rings (StageLinkLoads' unit; not floored at 1): how
// slow one stage's rings are on the fabric while the other stages' are quiet.
double own_rings_load(const StageLinkLoads& loads) {
  double worst = 0.0;
  for (size_t s = 0; s < loads.of_stage.size(); ++s) {
    for (const int32_t link : loads.of_stage[s]) {
      for (const auto& [stage, x] : loads.links[static_cast<size_t>(link)]) {
        if (static_cast<size_t>(stage) == s) worst = std::max(worst, x);
      }
    }
  }
  return worst;
}

// One stage's ZeRO-3 gather of a pass that is not overlapped (it starts when the stage's previous
// pass ends, and the pass waits for it) where the stages' gathers share NICs or fabric links: a
// gather takes `alone` with the others' rings quiet and `every_stage` with every stage's at once.
// Mean field, as staggered_links: the other stages gather independently for the same fraction
// d = g / (g + c) of their passes, c the pass's time off the network, so
//
//   g = alone + d (every_stage - alone)   =>   g = T - c,  T = (s + sqrt(s^2 - 4 (every_stage - alone) c)) / 2,
//   s = every_stage + c
//
// (the larger root: the fixed point reached from d = 1). T >= every_stage: the shared NIC or
// link carries every stage's gather within each stage's pass, the bound the stages' passes pace
// to where their gathers take longer than c; and T falls with c.
Time unoverlapped_gather(Time alone, Time every_stage, Time c) {
  const double a = alone.as_s(), b = every_stage.as_s() - a, cs = c.as_s();
  if (b <= 0.0) return every_stage;
  const double sum = a + b + cs;
  const double t = 0.5 * (sum + std::sqrt(std::max(0.0, sum * sum - 4.0 * b * cs)));
  return max(Time::zero(), Time::s(t) - c);
}

}  // namespace

Time staged_dp_exposed(std::span<const Time> end, std::span<const Time> end_room, std::span<const Time> start,
                       std::span<const Time> start_room) {
  const auto latest = [](std::span<const Time> exposed, std::span<const Time> room) {
    Time worst = exposed.empty() ? Time::zero() : exposed[0] - room[0];
    for (size_t s = 1; s < exposed.size(); ++s) worst = max(worst, exposed[s] - room[s]);
    return worst;
  };
  return latest(end, end_room) + latest(start, start_room);
}

DpRooms dp_rooms(const TrainingEstimate& est, std::span<const double> passes_per_stage) {
  const size_t n = passes_per_stage.empty() ? est.dp_end.size() : passes_per_stage.size();
  DpRooms r{std::vector<Time>(n), std::vector<Time>(n)};
  double earlier = 0.0;  // chunk passes of the stages before this one
  for (size_t s = 0; s < n; ++s) {
    r.end[s] = earlier * est.dp_end_pass;
    r.start[s] = earlier * est.dp_start_pass;
    if (s > 0 && s + 1 < n) r.end[s] += est.embedding_sync;
    earlier += passes_per_stage.empty() ? 1.0 : passes_per_stage[s];
  }
  return r;
}

Time staged_dp_exposed(const TrainingEstimate& est) {
  const DpRooms r = dp_rooms(est);
  return staged_dp_exposed(est.dp_end, r.end, est.dp_start, r.start);
}

int64_t exposed_pipeline_transfers(const ScenarioConfig& cfg, int64_t micro_batches) {
  const ParallelismConfig& p = cfg.parallelism;
  const int64_t every = 2 * micro_batches * p.vpp;
  return cfg.training.overlap.pp_p2p ? std::min<int64_t>(every, 2 * (static_cast<int64_t>(p.pp) * p.vpp - 1)) : every;
}

Time chunked_dp_exposed(Time total, Time last, Time chunk_pass, int pp, int vpp, double first_ready) {
  const Time per_chunk = (1.0 / vpp) * total;
  const double own = 1.0 - std::clamp(first_ready, 0.0, 1.0);  // of the last pass, after its first piece
  const Time later_passes = (static_cast<double>(static_cast<int64_t>(vpp - 1) * pp) + own) * chunk_pass;
  return max(last, max(per_chunk - own * chunk_pass, total - later_passes));
}

TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  // The routes' MoE dispatch and the layers' costs share each layer's routing draw.
  work::RoutingDraws draws;
  const FabricContention contention = fabric_contention(cfg, &draws);
  return estimate_training(cfg, hw, contention, &draws);
}

TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                   const FabricContention& contention, work::RoutingDraws* routing_draws) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const ClusterConfig& c = cfg.cluster;
  TrainingEstimate est;
  est.dp = data_parallel_size(cfg);
  est.micro_batches = micro_batches_per_iteration(cfg);
  est.flops = work::iteration_flops(cfg);
  est.memory = work::most_loaded_memory_per_gpu(cfg);
  est.memory_capacity = hw.hbm_capacity - hw.memory_reserved;
  const FlopRate peak = hw.peak(cfg.training.precision);
  const TrainingLinks l = work::training_links(cfg, hw);
  // DP rings meet the ECMP collisions and oversubscription of their routes (fabric_contention;
  // a fabric that does not build was refused there); pipeline neighbour pairs, and DP rings that
  // never leave a node, the oversubscription their crossings of the tiers add up to.
  const work::Placement pl(p.placement, p.tp, p.cp, static_cast<int>(est.dp), p.pp);
  est.contention = contention;
  // Gradients sync, and ZeRO shards, over the DP x CP ranks (gradient_sync_size): `sync` ranks,
  // `sync_per_node` on a node (the rings' members per node, work::dense_dp_rings), the first
  // ring's first two GPUs `sync_stride` apart.
  const int sync = gradient_sync_size(cfg);
  const int sync_per_node = work::dense_dp_ring_members_per_node(cfg, pl);
  const std::vector<int32_t> first_ring = work::dense_dp_rings(cfg, pl, 0).front();
  const int64_t sync_stride = first_ring.size() > 1 ? first_ring[1] - first_ring[0] : 0;
  const TrainingLinks dp_l = contention.routed ? work::links_at_contention(l, contention.dp)
                                               : work::links_for_ring(cfg, l, sync_stride, sync);
  // Pipeline pairs start at every GPU of a stage: with pp placed outermost (stride = a stage's
  // GPUs) those are contiguous, and the pairs near a block's edge cross it.
  const int64_t pp_stride = p.pp > 1 ? pl.gpu(0, 0, 0, 1) : 0;
  // Of a node's GPUs only those whose neighbour stage is on another node send there (a node
  // holding 4 stages of 2 replicas: 2 of its 8): they share the NICs, not every GPU (before
  // 2026-12-05 every GPU's share, 4x too slow there against the flow level).
  const auto node_of = [&](int g) { return g / c.gpus_per_node; };
  const auto next_apart = [&](int g, int step) {
    const int s = pl.coord(g, work::Dim::kPp);
    const int to = s + step;
    if (to < 0 || to >= p.pp) {
      if (p.vpp == 1) return false;  // interleaved: the last stage sends on to the first
    }
    const int peer = g + ((to + p.pp) % p.pp - s) * static_cast<int>(pp_stride);
    return node_of(g) != node_of(peer);
  };
  // Forward and backward senders counted apart: a node in the middle of the pipeline sends forward
  // from its last stage and backward from its first, at different points of each slot (counted
  // together, 24 GPUs at pp 12 on one NIC per node came out 12% over the flow level's 0.313 s;
  // apart, 4% over).
  const int64_t pp_period = pp_stride * p.pp;
  const double pp_scale =
      p.pp > 1 ? std::min(work::nic_sender_scale(cfg, c.gpus, pp_period, [&](int g) { return next_apart(g, 1); }),
                          work::nic_sender_scale(cfg, c.gpus, pp_period, [&](int g) { return next_apart(g, -1); }))
               : 1.0;
  const TrainingLinks pp_l = work::links_for_ring(cfg, l, pp_stride, p.pp > 1 ? 2 : 1,
                                                  pp_stride * p.pp == c.gpus ? pp_stride : 1, pp_scale);

  // --- One micro-batch on the slowest stage (the last one, which also runs the LM head).
  const LayerTimes lt = work::layer_times(cfg, hw);
  const double layers_per_stage = static_cast<double>(m.layers) / p.pp;
  const Time head = work::head_time(cfg, hw);
  Time stage_compute = layers_per_stage * (lt.forward + lt.backward) + head;
  // CP rings, every replica's and stage's at once (they run with each attention core), meet
  // their routes' contention like the DP rings; unrouted, the tiers their members cross.
  TrainingLinks cp_l = contention.routed ? work::links_at_contention(l, contention.cp)
                                         : work::links_for_ring(cfg, l, p.cp > 1 ? pl.gpu(0, 1, 0, 0) : 0, p.cp);
  // TP groups across nodes: their routes' contention where they leave a node (every replica's and
  // stage's groups at once: ECMP collisions, placements that put DP first); else the tiers their
  // members cross, as a ring of tp GPUs.
  const bool tp_routed = contention.routed && !m.moe && pl.spans_nodes(work::Dim::kTp, c.gpus_per_node);
  TrainingLinks tp_l = tp_routed ? work::links_at_contention(l, contention.tp)
                                 : work::links_for_ring(cfg, l, p.tp > 1 ? pl.gpu(1, 0, 0, 0) : 0, p.tp);
  // TP groups and CP rings of several stages through one NIC, and CP rings of several stages on
  // the fabric's links, meet only part of the time (staggered_links).
  const int nic_stages = stages_per_nic(cfg, pl);
  std::optional<Time> fill_tp;
  TrainingLinks fill_tp_l = tp_l, fill_cp_l = cp_l;  // the fill and drain's (staggered_links)
  const bool tp_leaves = pl.spans_nodes(work::Dim::kTp, c.gpus_per_node);
  const bool cp_leaves = pl.spans_nodes(work::Dim::kCp, c.gpus_per_node);
  const bool cp_routed = cp_leaves && p.pp > 1 && contention.routed &&
                         std::any_of(contention.stage_draws.begin(), contention.stage_draws.end(),
                                     [](const StageSlowdowns& d) { return d.cp_loads != nullptr; });
  if (((nic_stages > 1 && (tp_leaves || cp_leaves)) || cp_routed) && !m.moe) {
    // How long each other stage runs beside the critical stage, on average. 1F1B: of another
    // stage's m micro-batch slots, pp / (2 vpp) fall in the fill and drain (column j of the fill
    // runs stages 0..j), so the critical stage's m slots meet 1 - pp / (2 m vpp) of them; a fill or
    // drain column meets (pp - 2) / 2 of the other pp - 1 on average over the columns (a rough
    // figure: weighted by the stages running it is higher, 4/3 rather than 1 at pp 4).
    const double during_slots = std::max(0.0, 1.0 - p.pp / (2.0 * static_cast<double>(est.micro_batches) * p.vpp));
    const double during_fill = p.pp > 1 ? 0.5 * (p.pp - 2) / (p.pp - 1) : 0.0;
    // Routed, the CP rings meet the other stages' on the fabric's links as far as those run beside
    // them, against the critical stage's NICs. Before 2026-12-05 every stage's rings met at once
    // (FabricContention::cp): 32 GPUs at pp 8 placed tp-pp-cp-dp, a ToR per server at 2:1 (radix
    // 16, ECMP), priced the rings 6x and the step 24.9% over the unfolded flow level (12.0% after);
    // over the audit's 580 random plans the mean |error| went 1.25% -> 1.15%, those over 8% 21 -> 17.
    const std::function<double(double)> cp_fabric =
        cp_routed ? std::function<double(double)>([&](double beside) { return cp_fabric_slowdown(contention, p.pp, beside); })
                  : std::function<double(double)>();
    if (cp_routed) cp_l = work::links_at_contention(l, 1.0);
    const StaggeredLinks s =
        staggered_links(cfg, {tp_l, cp_l}, lt, layers_per_stage, nic_stages, during_slots, tp_leaves, cp_leaves, cp_fabric);
    const StaggeredLinks f =
        staggered_links(cfg, {tp_l, cp_l}, lt, layers_per_stage, nic_stages, during_fill, tp_leaves, cp_leaves, cp_fabric);
    fill_tp = layers_per_stage * work::layer_tp_time(cfg, f.tp, f.cp, lt);
    fill_tp_l = f.tp;
    fill_cp_l = f.cp;
    tp_l = s.tp;
    cp_l = s.cp;
  }
  Time stage_tp = layers_per_stage * work::layer_tp_time(cfg, tp_l, cp_l, lt);
  if (p.zero_stage == 3 && cfg.training.overlap.dp_param_gather && cp_leaves && !m.moe && sync > 1 &&
      sync_per_node < sync) {
    // ZeRO-3's overlapped gathers share the GPUs' NICs with the CP rings where both leave the
    // node (rings_beside_gathers). Before 2026-12-05 the rings had the NIC to themselves: 256
    // H100s, tp 1 pp 8 cp 2, a 400 Gbps NIC for two GPUs, no fabric contention, came out at
    // 0.636 s (exposed TP/CP 0.130 s) against the unfolded flow level's 0.755 s (0.305 s), whose
    // forward K/V passes take 5.7 ms beside a gather and 2.9 ms without; now 0.758 s (0.215 s),
    // f = 0.63. Over the audit's 580 random plans mean |error| 1.08% -> 1.06%, 13 -> 12 beyond
    // 8%, no other plan moved by a point.
    const Bytes weights = bytes_of(est.memory.params_on_gpu / p.vpp * 2.0);
    const GatherStream gathers{
        2.0 * static_cast<double>(est.micro_batches) * p.vpp *
            collective_time(CollectiveOp::kAllGather, weights, group_links(sync, sync_per_node, dp_l)),
        2.0 * static_cast<double>(est.micro_batches) * p.vpp *
            coll::collective_nic_time(CollectiveOp::kAllGather, weights,
                                      group_links(sync, sync_per_node, work::links_at_contention(l, 1.0)))};
    const auto [slot_tp, fill] =
        rings_beside_gathers(cfg, l, {tp_l, cp_l}, {fill_tp_l, fill_cp_l}, lt, layers_per_stage, gathers,
                             static_cast<double>(est.micro_batches), stage_compute, head);
    stage_tp = slot_tp;
    fill_tp = fill;
  }
  Time stage_ep;
  // MoE: the critical stage's all-to-alls per micro-batch (dispatch and combine, forward and
  // backward), as far as their bytes leave the node: the time they keep the NICs busy.
  Time stage_a2a_nic;
  Time bwd_window = layers_per_stage * lt.backward;
  Time fwd_window = layers_per_stage * lt.forward;
  // The other stages' micro-batch times added up: the pipeline's fill and drain run on them.
  Time others = (p.pp - 1) * (stage_compute - head + fill_tp.value_or(stage_tp));
  // Each stage's micro-batch (forward and backward of all its chunks): the dense stages alike but
  // for the last one's LM head.
  std::vector<Time> stage_slots(static_cast<size_t>(p.pp), stage_compute - head + stage_tp);
  stage_slots.back() += head;
  std::optional<Time> moe_bubble;  // MoE: the replayed fill and drain
  if (m.moe) {
    // MoE: every stage's layers priced one by one (routing differs per layer); the slowest stage
    // (with the LM head on the last) sets the pace.
    work::MoeLinks moe_l = work::moe_links(cfg, l);
    moe_l.cp = cp_l;  // routed where the CP rings are
    moe_l.a2a = contention.a2a;
    const std::vector<work::MoeStageCost> stages = work::moe_stage_costs(cfg, hw, moe_l, routing_draws);
    const auto own_head = [&](const work::MoeStageCost& sc) { return sc.stage == p.pp - 1 ? head : Time::zero(); };
    const auto slot = [&](const work::MoeStageCost& sc) { return sc.compute + own_head(sc) + sc.tp_exposed + sc.ep_exposed; };
    Time all_stages = Time::zero();
    for (const work::MoeStageCost& sc : stages) {
      all_stages += slot(sc);
      stage_slots[static_cast<size_t>(sc.stage)] = slot(sc);
    }
    Time worst = Time::zero();
    for (const work::MoeStageCost& sc : stages) {
      const Time t = slot(sc);
      if (t <= worst) continue;
      others = all_stages - t;
      worst = t;
      stage_compute = sc.compute + own_head(sc);
      stage_tp = sc.tp_exposed;
      stage_ep = sc.ep_exposed;
      stage_a2a_nic = Time::zero();
      for (const work::MoeLayerCost& lc : sc.costs) {
        if (!lc.moe) continue;
        // Forward and backward; full recomputation runs the forward's all-to-alls again. The
        // busiest NIC's bytes between nodes at its line rate (PXN's NVLink relays are not NIC
        // time; since 2026-12-06, before the all-to-all's time times its share of bytes leaving).
        const double passes = cfg.training.recompute == Recompute::kFull ? 3.0 : 2.0;
        stage_a2a_nic += passes * (lc.dispatch_nic + lc.combine_nic);
      }
      bwd_window = sc.backward;
      fwd_window = sc.forward;
      est.critical_stage = sc.stage;
      est.moe_layers.clear();
      for (size_t i = 0; i < sc.layers.size(); ++i) {
        const work::MoeLayerCost& lc = sc.costs[i];
        if (lc.moe) est.moe_layers.push_back(moe_layer_report(sc.layers[i], lc, lc.ep_exposed()));
      }
    }
    // The fill and drain of unequal stages (a listed layer map, dense first layers, the LM head's
    // stage): the schedule replayed with each chunk's passes, each stage's scaled to its slot. The
    // closed form below, m x slowest + the others / vpp, charges the other stages' fill and drain in
    // full, where 1F1B hides them behind a slowest stage that runs early (QA, 2026-12-07: Mixtral
    // 8x7B with layers [11, 7, 7, 7] read 4.084 s against the flow level's 3.967 s).
    if (p.vpp == 1 || est.micro_batches % p.pp == 0) {
      std::vector<work::ChunkTime> chunks(static_cast<size_t>(p.pp) * p.vpp);
      for (const work::MoeStageCost& sc : stages) {
        Time sum;
        for (int ch = 0; ch < p.vpp; ++ch) {
          work::ChunkTime& t = chunks[static_cast<size_t>(ch) * p.pp + sc.stage];
          t = sc.chunks[static_cast<size_t>(ch)];
          if (sc.stage == p.pp - 1 && ch == p.vpp - 1) {
            t.forward += (1.0 / 3.0) * head;  // one of the head's three GEMMs forward
            t.backward += head - (1.0 / 3.0) * head;
          }
          sum += t.forward + t.backward;
        }
        const double k = sum > Time::zero() ? slot(sc) / sum : 1.0;
        for (int ch = 0; ch < p.vpp; ++ch) {
          work::ChunkTime& t = chunks[static_cast<size_t>(ch) * p.pp + sc.stage];
          t = {k * t.forward, k * t.backward};
        }
      }
      const Time span = work::pipeline_makespan(chunks, p.pp, p.vpp, static_cast<int>(est.micro_batches));
      moe_bubble = max(Time::zero(), span - est.micro_batches * worst);
    }
    // Where the slowest stage holds no MoE layer (dense first layers, or the LM head's stage), the
    // report shows the slowest stage that does, as the flow level does (empty until 2026-12-07).
    if (est.moe_layers.empty()) {
      const work::MoeStageCost* shown = nullptr;
      for (const work::MoeStageCost& sc : stages) {
        const bool has_moe = std::any_of(sc.costs.begin(), sc.costs.end(), [](const work::MoeLayerCost& lc) { return lc.moe; });
        if (has_moe && (shown == nullptr || slot(sc) > slot(*shown))) shown = &sc;
      }
      if (shown != nullptr) {
        est.critical_stage = shown->stage;
        for (size_t i = 0; i < shown->layers.size(); ++i) {
          const work::MoeLayerCost& lc = shown->costs[i];
          if (lc.moe) est.moe_layers.push_back(moe_layer_report(shown->layers[i], lc, lc.ep_exposed()));
        }
      }
    }
  }
  const Time mb = stage_compute + stage_tp + stage_ep;
  est.microbatch_stage_time = mb;

  TrainingBreakdown& b = est.breakdown;
  const int64_t mbs = est.micro_batches;
  b.compute = mbs * stage_compute;
  b.tp_exposed = mbs * stage_tp;
  b.ep_exposed = mbs * stage_ep;
  // Interleaved 1F1B: the fill and drain cost (pp-1)/vpp micro-batch slots (Narayanan et al.
  // SC'21, section 2.2.2; plain 1F1B is vpp = 1), slots of the other stages: the slowest stage
  // paces the m micro-batches and the rest fill and drain, so the step is
  // m x t_slowest + (sum of the other stages' t) / vpp. With equal stages that is (pp-1)/vpp x mb;
  // the LM head lengthens only the last stage's slots.
  b.bubble = moe_bubble.value_or((1.0 / p.vpp) * others);

  // Whether stages `from` and `to` (replica 0's, as placed) sit on different nodes.
  const auto stages_apart = [&](int from, int to) {
    return pl.gpu(0, 0, 0, from) / c.gpus_per_node != pl.gpu(0, 0, 0, to) / c.gpus_per_node;
  };

  // When each stage runs its backward passes (the schedule replayed with the chunks below):
  // where ZeRO-2 and -3 reduce every micro-batch's gradients. Empty with one stage, below ZeRO-2
  // or with one micro-batch.
  work::BackwardPasses backward_passes;

  // --- Pipeline point-to-point: each TP rank sends its 1/tp slice of the activation over its
  // own rail (Megatron's scatter/gather optimisation), forward and backward at each of the vpp
  // stage boundaries a micro-batch crosses on this rank.
  if (p.pp > 1) {
    const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
    const Bytes msg = bytes_of(tokens * m.hidden * 2.0 / p.tp);
    const Time intra = l.nvlink_alpha + serialization_time(msg, l.nvlink_busbw);
    // Routed (fabric_contention), a stage's sends to another node meet the ECMP collisions and
    // oversubscription of the sends that run with them, forward and backward apart.
    const bool pp_routed = !contention.pp_forward.empty();
    const auto send_time = [&](int s, bool forward, bool nic_only) {
      const double slowdown = pp_routed ? (forward ? contention.pp_forward : contention.pp_backward)[static_cast<size_t>(s)] : 1.0;
      const TrainingLinks at = pp_routed ? work::links_at_contention(work::with_nic_scale(l, pp_scale), slowdown) : pp_l;
      return (nic_only ? Time::zero() : at.net_alpha) + serialization_time(msg, at.nic_per_gpu);
    };
    // How long a send to another node holds its NIC: its bytes at the uncontended NIC share. The
    // fabric's collisions lengthen the send (send_time) but are not the NIC's time: counted as NIC
    // time, and shared again between a stage's sends, two NICs a node whose routes collide came
    // out 9% slower than one (2026-12-06 review).
    const Time nic_hold = serialization_time(
        msg, (pp_routed ? work::links_at_contention(work::with_nic_scale(l, pp_scale), 1.0) : pp_l).nic_per_gpu);
    // What stage s sends per micro-batch, at send_time to another node and `within` on NVLink:
    // vpp chunks forward to the next stage and vpp backward to the one before (the last and first
    // stage vpp - 1 around the interleaved loop, none without it).
    const auto stage_sends = [&](int s, bool nic_only, Time within) {
      const auto cost = [&](int to, bool forward) { return stages_apart(s, to) ? send_time(s, forward, nic_only) : within; };
      const int fwd = s + 1 < p.pp ? p.vpp : p.vpp - 1;
      const int bwd = s > 0 ? p.vpp : p.vpp - 1;
      return fwd * cost((s + 1) % p.pp, true) + bwd * cost((s + p.pp - 1) % p.pp, false);
    };
    // Each virtual stage's chunk (c x pp + s: chunk c of stage s, its stage's slot over vpp, the
    // LM head on the last stage's last chunk) and its sends to the next and the one before (on
    // NVLink within a node; to another node holding the NIC for its bytes at the NIC share).
    const size_t virtual_stages = static_cast<size_t>(p.pp) * p.vpp;
    std::vector<work::ChunkTime> chunks(virtual_stages);
    work::PipelineSends sends_of;
    for (std::vector<Time>* v : {&sends_of.forward, &sends_of.backward, &sends_of.forward_nic, &sends_of.backward_nic})
      v->resize(virtual_stages);
    const double fwd_share = lt.forward / (lt.forward + lt.backward);
    for (size_t v = 0; v < virtual_stages; ++v) {
      const int s = static_cast<int>(v % static_cast<size_t>(p.pp));
      const bool last = v + 1 == virtual_stages;  // the LM head's chunk
      const Time stage_head = s + 1 == p.pp ? head : Time::zero();
      const Time slot = (1.0 / p.vpp) * (stage_slots[static_cast<size_t>(s)] - stage_head) + (last ? stage_head : Time::zero());
      chunks[v].forward = fwd_share * slot;
      chunks[v].backward = slot - chunks[v].forward;
      const int next = (s + 1) % p.pp, before = (s + p.pp - 1) % p.pp;
      sends_of.forward[v] = stages_apart(s, next) ? send_time(s, true, false) : intra;
      sends_of.backward[v] = stages_apart(s, before) ? send_time(s, false, false) : intra;
      sends_of.forward_nic[v] = stages_apart(s, next) ? min(nic_hold, sends_of.forward[v]) : Time::zero();
      sends_of.backward_nic[v] = stages_apart(s, before) ? min(nic_hold, sends_of.backward[v]) : Time::zero();
    }
    // Stages behind one NIC (two stages a node on one NIC, replica 0's first TP rank's; a stage
    // whose TP ranks span NICs, as tp 2 on 6 GPUs and 4 NICs a node, is taken at its first's) share it:
    // the replay counts every send through it. Each stage's hold is at its own senders' share, so
    // a node's forward sends from its last stage and backward sends from its first, in flight at
    // once, split the NIC. Until 2026-12-06 each stage had a NIC of its own: tp 2, pp 8, 8 GPUs
    // and one 25 Gbps NIC a node read 1.461 s against the flow level's 2.172 s, below the 1.37 s
    // the sends of one node take at line rate.
    std::vector<int> nic_of(static_cast<size_t>(p.pp));
    std::map<int64_t, int> nic_index;
    for (int s = 0; s < p.pp; ++s) {
      const int64_t n = topo::nic_of_gpu(pl.gpu(0, 0, 0, s), c.gpus_per_node, c.nics_per_node);
      nic_of[static_cast<size_t>(s)] = nic_index.emplace(n, static_cast<int>(nic_index.size())).first->second;
    }
    if (static_cast<int>(nic_index.size()) < p.pp) sends_of.nic = nic_of;
    // Without overlap a stage waits for its own sends (Megatron's batched isend/irecv and wait):
    // the schedule replayed with each send holding its device until delivered, the sends sharing
    // the NICs. Until 2026-12-06 a closed form, each stage's slot its compute and its own sends and
    // the slowest such slot pacing the step (m T_p + the other stages' T / vpp): the same within
    // 0.05% on the shipped Megatron-LM plans, but blind to the sends' chain down the pipeline and
    // to a NIC taking two sends at once: pp 8, tp 8, one 25 Gbps NIC per node, 0.8 ms of compute
    // against 2.8 ms sends per micro-batch, 0.37 s of sends against the flow level's 0.54 s (now
    // 0.56 s).
    if (p.zero_stage >= 2 && mbs > 1) backward_passes = work::backward_passes(chunks, p.pp, p.vpp, static_cast<int>(mbs));
    work::PipelineSends blocking = sends_of;
    blocking.blocking = true;
    const bool overlapped = cfg.training.overlap.pp_p2p;
    const std::vector<Time> delays = work::pipeline_send_delays(
        chunks, p.pp, p.vpp, static_cast<int>(mbs),
        overlapped ? std::vector<work::PipelineSends>{blocking, sends_of} : std::vector<work::PipelineSends>{blocking});
    b.pp_exposed = delays.front();
    est.pp_sends = work::sends_to_replay(chunks, p.pp, p.vpp, overlapped ? sends_of : blocking);  // the straggler model's
    if (overlapped) {
      // The fill and drain wait for their transfers, each at the mean over the pp vpp - 1 stage
      // boundaries a micro-batch crosses each way (on NVLink where a placement puts the stages
      // on one node; routed, at their stage's slowdown: before 2026-12-05 at the NIC share, and
      // a send-paced pipeline through one NIC per node on a 3:1 ECMP fabric came out 14% below
      // the flow level).
      Time all_sends;  // one micro-batch's sends, every boundary each way
      for (int s = 0; s < p.pp; ++s) all_sends += stage_sends(s, false, intra);
      const Time one = (1.0 / (2.0 * (p.pp * p.vpp - 1))) * all_sends;
      const int64_t waited_for = exposed_pipeline_transfers(cfg, mbs);
      // The steady state waits for sends too: in plain 1F1B a stage's backward waits for a
      // gradient that left a send after its forward's activation did; interleaved, a chunk's
      // input crosses the ring of stages vpp times, and a device's forward and backward sends
      // share its NIC (and its neighbours'). The replay above with the chunks and the sends (the
      // second of `delays`). Until 2026-12-06 plain 1F1B replayed sends side by side, and
      // interleaved plans charged the fill and drain alone: 2 stages, vpp 2, one 25 Gbps NIC each,
      // 0.794 s against the flow level's 1.025 s (now 1.025 s).
      const Time replayed = delays.back();
      // A stage runs its micro-batches no faster than its NIC sends their activations and
      // gradients on: those to another node at the NIC share. Where that outlasts the slowest
      // stage's micro-batch, the steady state is paced by the sends (before 2026-12-05 only the
      // fill and drain were charged: MegaScale's 256-GPU 175B plan cut to 24 layers of hidden
      // 2048, tp 8 pp 8 vpp 3, on one 100 Gbps NIC per node and H100s came out at 0.506 s,
      // below the 0.773 s its 9.7 GB of sends per node take at line rate; now 0.996 s, the flow
      // level 1.111 s).
      Time nic_busy;
      for (int s = 0; s < p.pp; ++s) nic_busy = max(nic_busy, stage_sends(s, true, Time::zero()));
      const Time send_paced = mbs * max(Time::zero(), nic_busy - mb);
      // Not capped by the blocking replay (delays.front()): where sends are as long as the passes,
      // a device's forward and backward sends in flight share its NIC and slow the ones the next
      // pass waits for, and overlap can lose, as at the flow level. Until 2026-12-06 it was capped
      // ("never more than without overlap"): tp 8, pp 8, SP, 25 Gbps per GPU, 0.144 s against the
      // flow level's 0.164 s (now 0.162 s; blocking 0.144 s, flow 0.147 s).
      b.pp_exposed = max(replayed, waited_for * one + send_paced);
      est.pp_send_paced = max(Time::zero(), b.pp_exposed - waited_for * one);
    }
  }

  // The tied-embedding gradient all-reduce between the first and last stage, after their
  // reductions (breakdown.optimizer holds it), at the gradient sync's bytes per value: the main
  // gradients' as Megatron-LM's _allreduce_word_embedding_grads runs it (FP32 only with
  // fp32_grad_reduce), or an MoE plan's training.comm_precision where given (FP32 always until
  // 2026-12-06).
  if (p.pp > 1 && m.tied_embeddings) {
    const Bytes emb = bytes_of(static_cast<double>(m.vocab) * m.hidden / p.tp * work::grad_bytes_per_value(cfg.training));
    // Every replica's pairs at once, far apart in the fabric: routed like the DP rings. Only the
    // first and last stages' GPUs send, sharing their NICs among themselves.
    const double emb_scale =
        !stages_apart(0, p.pp - 1) ? 1.0
                                   : work::nic_sender_scale(cfg, c.gpus, pp_period, [&](int g) {
                                       const int s = pl.coord(g, work::Dim::kPp);
                                       return s == 0 || s == p.pp - 1;
                                     });
    const TrainingLinks emb_base = work::with_nic_scale(l, emb_scale);
    const TrainingLinks emb_l = contention.routed ? work::links_at_contention(emb_base, contention.embedding) : emb_base;
    // Over NVLink where the placement puts the first and last stage on one node.
    est.embedding_sync = collective_time(CollectiveOp::kAllReduce, emb, group_links(2, stages_apart(0, p.pp - 1) ? 1 : 2, emb_l));
  }

  // --- Data parallelism: gradients reduce-scattered (ZeRO >= 1) or all-reduced (ZeRO-0), then
  // updated parameters all-gathered. A node holds as many ranks of a DP group as the placement
  // puts there: gpus_per_node / (tp cp) in Megatron-LM's default order tp-cp-dp-pp, fewer when
  // pp (or more of cp) comes before dp.
  const double params = est.memory.params_on_gpu;
  // The DP collectives' overlap windows: the time in a pass the GPU's NIC share is free of its
  // own TP groups' and CP rings' traffic. Dense models: the pass's compute and the TP/CP time
  // left exposed in it, less the time those groups keep the NIC busy where they leave the node
  // (work::tp_collectives_nic_time); where they stay on NVLink the NIC is free all the pass.
  // Split between the forward and backward passes as their compute is. (Before 2026-12-04 the
  // windows were the compute alone: where TP stays on NVLink that ignored the exposed TP time,
  // and where it leaves the node it ignored that the TP traffic hidden under the compute holds
  // the NIC, so a faster GPU, whose shorter passes hide less TP, exposed more reduction: +1.2%
  // at twice the FLOP rate on MegaScale's 768-GPU plan placed DP first.) MoE alike where its
  // all-to-alls leave the node, less what they keep on the NIC, with its exposed expert time (since
  // 2026-12-06; before, the compute alone, and with experts across nodes on 2 NICs a node the
  // reductions and the all-to-alls each had the whole NIC: Mixtral-like on 64 GPUs, ep 16, read the
  // same step at top_k 1 to 6, 24% under the flow level at top_k 4, below the NIC's bytes); MoE
  // inside a node, and ZeRO-3, whose per-pass gathers hold the NIC through the passes (below):
  // the compute.
  Time bwd_free = bwd_window;
  Time fwd_free = fwd_window;
  // The room of the per-micro-batch reductions (ZeRO-2/3, below): in 1F1B's steady state every
  // stage runs at the pace of the slowest (mb, the LM head's stage included), so a stage's NIC is
  // free for that cycle less what its own TP groups and CP rings (MoE: its all-to-alls) keep on it.
  // stage_nic: what a dense stage's TP groups and CP rings keep its NIC share busy per micro-batch.
  const Time stage_nic = m.moe ? Time::zero() : stage_tp_cp_nic_time(cfg, l, layers_per_stage);
  const Time nic_busy = m.moe ? stage_a2a_nic : stage_nic;
  const Time micro_batch_free = max(Time::zero(), mb - nic_busy);
  const double forward_share = lt.forward / (lt.forward + lt.backward);
  if (p.zero_stage < 3 && (!m.moe || nic_busy > Time::zero())) {
    const Time pass = bwd_window + fwd_window;
    const Time free = max(Time::zero(), pass + stage_tp + stage_ep - nic_busy);  // stage_ep: 0 for dense
    const double bwd_share = !m.moe             ? lt.backward / (lt.forward + lt.backward)
                             : pass > Time::zero() ? bwd_window / pass
                                                   : 0.5;
    bwd_free = bwd_share * free;
    fwd_free = (1.0 - bwd_share) * free;
  }
  if (sync > 1 || m.moe) {  // MoE: expert and sp replicas sync even when dp is 1
    const int per_node = sync_per_node;
    const GroupLinks g = group_links(sync, per_node, dp_l);
    const double grad_bytes = work::grad_bytes_per_value(cfg.training);
    // MoE: dense and expert parameters over their own DP groups (moe_dp_times), at the given
    // slowdowns of their rings; the flow level's buckets and ZeRO-3 gathers cover the dense part.
    const auto moe_times = [&](double dense_c, double expert_c) -> std::optional<work::MoeDpTimes> {
      if (!m.moe) return std::nullopt;
      // Unrouted (no ring leaves a node): every tier's oversubscription on both groups.
      return contention.routed ? work::moe_dp_times(cfg, work::links_at_contention(l, dense_c),
                                                     work::links_at_contention(l, expert_c))
                               : work::moe_dp_times(cfg, l, l);
    };
    const std::optional<work::MoeDpTimes> moe_dp = moe_times(contention.dp, contention.expert_dp);
    const double synced = moe_dp ? moe_dp->dense_params : params;
    // Buckets: training.dp_bucket_size, or Megatron-LM's rule (dp_bucket_params), per chunk; the
    // last of the vpp x buckets waits for the last pass.
    const double bucket = work::dp_bucket_params(cfg, sync);
    const int64_t buckets_per_chunk =
        std::max<int64_t>(1, static_cast<int64_t>(std::ceil(synced / p.vpp / std::max(1.0, bucket))));
    // The part of the reduction that waits for the step's last backward work: its last bucket. An
    // MoE chunk's last layer releases the last dense bucket and that layer's experts together (the
    // flow level's graph), so its share is one dense bucket's and one MoE layer's expert part
    // (since 2026-12-07; before, one dense bucket's share of both, the whole reduction where the
    // dense parameters fill one bucket: 7.66 ms exposed on 16 GPUs, ep 8, where the graph shows 3.9).
    // The first stage's (the last to end its backward) last bucket holds the input embedding
    // (work::embedding_bucket_share: at least its share of the chunk, as the flow level's graph).
    const auto last_bucket_share = [&](double dense_share) {
      return moe_dp && moe_dp->reduce > Time::zero()
                 ? std::min(1.0, (dense_share * moe_dp->reduce_dense +
                                  (1.0 / std::max(1, moe_dp->expert_layers)) * moe_dp->reduce_expert) /
                                     moe_dp->reduce)
                 : dense_share;
    };
    const double embedding_share = work::embedding_bucket_share(cfg, synced / p.vpp, buckets_per_chunk);
    const double bucket_share = last_bucket_share(1.0 / static_cast<double>(p.vpp * buckets_per_chunk));
    const double first_stage_share = last_bucket_share(embedding_share / p.vpp);
    // How far into a chunk's last backward pass its first gradient piece is ready (chunked_dp_exposed),
    // as the flow level's graph releases them: dense buckets as work::bucket_ready_at has them (the
    // first stage's first chunk with its embedding's bucket); an MoE chunk releases each layer's
    // experts as its backward ends, the first after one layer (an approximation where
    // first_dense_layers, moe_layer_frequency or listed stage_layers make chunks uneven or without
    // experts: the graph then releases later).
    const double first_ready = m.moe ? 1.0 / std::max(1.0, static_cast<double>(m.layers) / (p.pp * p.vpp))
                                     : work::bucket_ready_at(0, buckets_per_chunk, 0.0);
    const double first_stage_ready = m.moe ? first_ready : work::bucket_ready_at(0, buckets_per_chunk, embedding_share);
    const Bytes grads = bytes_of(params * grad_bytes);
    const Bytes weights = bytes_of(params * 2.0);
    // One reduction of the gradients and, with ZeRO >= 1, one gather of the 16-bit weights, over
    // the DP group's links `dg` (MoE: `md`, the dense and expert groups'); reduce_together (dense
    // models): the reduction with every stage on a node at once (no stagger credit).
    struct DpTimes {
      Time reduce, gather, reduce_together;
    };
    const CollectiveOp op = p.zero_stage == 0 ? CollectiveOp::kAllReduce : CollectiveOp::kReduceScatter;
    const auto dp_times = [&](const GroupLinks& dg, const std::optional<work::MoeDpTimes>& md) {
      DpTimes t;
      if (md) {
        // One collective per dense bucket of each chunk, and for the experts one reduction per
        // MoE layer (since 2026-12-07; before, one per chunk) and one gather per chunk with MoE
        // layers (as the flow level's graph runs them), each paying its ring's latency; the bytes once.
        const int64_t dense_collectives = p.vpp * buckets_per_chunk;
        const auto latencies = [&](CollectiveOp o, int expert_collectives) {
          return (dense_collectives - 1) * coll::collective_latency(o, coll::Algorithm::kRing, md->dense_group) +
                 (expert_collectives - 1) * coll::collective_latency(o, coll::Algorithm::kRing, md->expert_group);
        };
        t.reduce = md->reduce + latencies(op, md->expert_layers);
        t.gather = md->gather + (work::gathers_weights_each_step(p) ? latencies(CollectiveOp::kAllGather, md->expert_chunks)
                                                                    : Time::zero());
        return t;
      }
      // One collective per bucket of each chunk, each paying the ring's latency (as the flow
      // level's graph runs them): vpp x buckets latencies and the bytes once.
      const int64_t collectives = p.vpp * buckets_per_chunk;
      const auto reduction = [&](const GroupLinks& links) {
        return collective_time(op, grads, links) +
               (collectives - 1) * coll::collective_latency(op, coll::Algorithm::kRing, links);
      };
      t.reduce = reduction(dg);
      t.reduce_together = t.reduce;
      // k stages on a node share its NICs, but 1F1B ends their last backward passes one chunk
      // pass apart, the last stage first: the first stage's reduction ends after
      // max(its own alone, all k together less the (k - 1) passes the others started earlier).
      const int k = pl.ranks_per_node(work::Dim::kPp, c.gpus_per_node);
      if (k > 1) {
        GroupLinks alone = dg;
        const double more = std::min(static_cast<double>(c.gpus_per_node) / c.nics_per_node, static_cast<double>(k));
        alone.nic_per_gpu = Bandwidth{dg.nic_per_gpu.bytes_per_s * more};
        t.reduce = max(reduction(alone), t.reduce - (k - 1) * ((1.0 / p.vpp) * bwd_free));
      }
      if (work::gathers_weights_each_step(p)) {
        t.gather = collective_time(CollectiveOp::kAllGather, weights, dg) +
                   (collectives - 1) * coll::collective_latency(CollectiveOp::kAllGather, coll::Algorithm::kRing, dg);
      }
      return t;
    };
    // At the worst stage's slowdowns: what ZeRO-3's gather-paced bound below charges (its
    // gathers run through the step, every stage's at once).
    const DpTimes worst_stage = dp_times(g, moe_dp);
    const Time reduce = worst_stage.reduce;
    const Time reduce_together = worst_stage.reduce_together;
    // Overlap windows: the backward passes after a chunk's last for its reduction, the forward
    // passes before a chunk's first for its gather (chunked_dp_exposed); the last bucket is
    // always exposed. A gather not overlapped runs after the step's update, behind the
    // reduction. Stage s ends its last backward pass s chunk passes before the first stage and
    // starts its first forward s chunk passes after it, so where the stages' rings are slowed
    // differently (contention.stage_draws: ECMP collisions on some stages' routes only) each stage
    // is priced at its own slowdown with that much more room, and the worst stage is exposed,
    // at the end of the step and at its start apart (before 2026-12-05 every stage at the worst
    // slowdown on the first stage's windows: MegaScale-MoE's 352B plan 3.860 s against the flow
    // level's 3.696 s).
    const Time reduce_pass = (1.0 / p.vpp) * bwd_free;
    const Time gather_pass = (1.0 / p.vpp) * fwd_free;
    // The last piece of a dense reduction: its share of the bytes and one collective's latency
    // (the other collectives' latencies are the other pieces'; until 2026-12-07 the share of every
    // latency: GPT 1.7B's shape with 4 layers and a 256K vocabulary in 65 buckets charged 0.7 of 65
    // latencies to the embedding's bucket, 19.3 ms of DP exposed against the flow level's 12.4; QA).
    const auto last_reduce_piece = [&](Time total, double share) {
      if (m.moe) return share * total;
      const Time latency = coll::collective_latency(op, coll::Algorithm::kRing, g);
      return share * max(Time::zero(), total - static_cast<double>(p.vpp * buckets_per_chunk) * latency) + latency;
    };
    const bool gather_overlaps = cfg.training.overlap.dp_param_gather && work::gathers_weights_each_step(p);
    // Stage s's {after its last backward pass, before its first forward pass}.
    const auto exposed = [&](const DpTimes& t, int s) {
      const double share = s == 0 ? first_stage_share : bucket_share;
      const Time r = cfg.training.overlap.dp_grad_reduce
                         ? chunked_dp_exposed(t.reduce, last_reduce_piece(t.reduce, share), reduce_pass, p.pp, p.vpp,
                                              s == 0 ? first_stage_ready : first_ready)
                         : t.reduce;
      if (!gather_overlaps) return std::pair{r, t.gather};
      return std::pair{r, chunked_dp_exposed(t.gather, share * t.gather, gather_pass, p.pp, p.vpp, 0.0)};
    };
    est.dp_end.resize(static_cast<size_t>(p.pp));
    est.dp_start.resize(static_cast<size_t>(p.pp));
    for (int s = 0; s < p.pp; ++s) {
      std::tie(est.dp_end[static_cast<size_t>(s)], est.dp_start[static_cast<size_t>(s)]) = exposed(worst_stage, s);
    }
    est.dp_end_pass = reduce_pass;
    // A gather not overlapped runs once every stage has reduced and the update is done, all
    // stages' at once: the latest reduction's end, then the slowest gather, none with room (before
    // 2026-12-05 each stage's gather followed its own reduction, with its room and its staggered
    // slowdown, so overlapping the gather could come out 2.8% slower than not).
    est.dp_start_pass = gather_overlaps || !work::gathers_weights_each_step(p) ? gather_pass : Time::zero();
    std::map<std::pair<double, double>, DpTimes> priced;  // per distinct pair of slowdowns
    const auto priced_at = [&](double dc, double ec) -> const DpTimes& {
      auto it = priced.find({dc, ec});
      if (it == priced.end()) {
        const GroupLinks sg = group_links(sync, per_node, work::links_at_contention(l, dc));
        it = priced.emplace(std::pair{dc, ec}, dp_times(sg, moe_times(dc, ec))).first;
      }
      return it->second;
    };
    // Each stage's exposure after its last backward pass and before its first forward pass at one
    // ECMP draw's slowdowns (`d`).
    const auto price_stages = [&](const StageSlowdowns& d, std::vector<Time>& end_of, std::vector<Time>& start_of) {
      const std::vector<double>& dense_c = d.dp;
      const std::vector<double>& expert_c = d.expert_dp;
      const bool experts = m.moe && static_cast<int>(expert_c.size()) == p.pp;
      std::vector<Time> reduce_of(static_cast<size_t>(p.pp));
      for (int s = 0; s < p.pp; ++s) {
        const size_t i = static_cast<size_t>(s);
        const DpTimes& t = priced_at(dense_c[i], experts ? expert_c[i] : 1.0);
        std::tie(end_of[i], start_of[i]) = exposed(t, s);
        reduce_of[i] = t.reduce;
      }
      // The stages' reductions do not all run at once: stage s's starts s backward chunk passes
      // before the first stage's and lasts its own reduction, so another stage's rings load its
      // links only for the part of theirs inside its window (StageLinkLoads, each weighted by that
      // share of its bytes). The parameter gathers all start together at the step's start and
      // keep every stage's rings at once. Refined three times from every stage at once (the
      // windows shrink with the reductions; a fourth round moves MegaScale-MoE's step by 0.6 ms).
      // Before 2026-12-05 every stage's reduction met every other's in full: MegaScale-MoE's four
      // collided stages reduce in 158-164 ms at the flow level, against 131 ms uncollided, not 2x.
      const StageLinkLoads* dense_loads = d.dp_loads.get();
      const StageLinkLoads* expert_loads = experts ? d.expert_dp_loads.get() : nullptr;
      const bool collides = std::any_of(dense_c.begin(), dense_c.end(), [](double x) { return x > 1.0; }) ||
                            (experts && std::any_of(expert_c.begin(), expert_c.end(), [](double x) { return x > 1.0; }));
      if (!collides || p.pp == 1 || !dense_loads || dense_loads->of_stage.empty()) return;
      std::vector<double> weight(static_cast<size_t>(p.pp));
      for (int round = 0; round < 3; ++round) {
        const auto from = [&](int s) { return -1.0 * (static_cast<double>(s) * reduce_pass).as_s(); };
        const auto to = [&](int s) { return from(s) + reduce_of[static_cast<size_t>(s)].as_s(); };
        std::vector<Time> next(reduce_of.size());
        for (int s = 0; s < p.pp; ++s) {
          for (int j = 0; j < p.pp; ++j) {
            const double span = to(j) - from(j);
            const double inside = std::min(to(s), to(j)) - std::max(from(s), from(j));
            weight[static_cast<size_t>(j)] = j == s ? 1.0 : span > 0.0 ? std::clamp(inside / span, 0.0, 1.0) : 0.0;
          }
          const size_t i = static_cast<size_t>(s);
          const double dc = std::min(dense_c[i], dense_loads->contention(s, weight));
          const double ec = !experts ? 1.0
                            : expert_loads && !expert_loads->of_stage.empty() ? std::min(expert_c[i], expert_loads->contention(s, weight))
                                                                              : expert_c[i];
          const DpTimes& t = priced_at(dc, ec);
          end_of[i] = exposed(t, s).first;
          next[i] = t.reduce;
        }
        reduce_of = std::move(next);
      }
    };
    // With network.ecmp_draws > 1 every draw is priced stage by stage and the exposures averaged
    // (the worst stage of the draws' mean slowdowns would be below the mean of each draw's worst);
    // est.dp_end and dp_start hold the draws' mean by stage, and `draw_excess` what the mean of
    // the draws' exposures adds to theirs (>= 0: a maximum's mean is at least the mean's maximum).
    Time draw_excess;
    const std::vector<StageSlowdowns>& draws = contention.stage_draws;
    const bool by_stage = contention.routed && !draws.empty() &&
                          std::all_of(draws.begin(), draws.end(), [&](const StageSlowdowns& d) {
                            return static_cast<int>(d.dp.size()) == p.pp;
                          });
    if (by_stage) {
      const DpRooms rooms = dp_rooms(est);
      const double n = static_cast<double>(draws.size());
      std::fill(est.dp_end.begin(), est.dp_end.end(), Time::zero());
      std::fill(est.dp_start.begin(), est.dp_start.end(), Time::zero());
      Time mean_exposure;
      for (const StageSlowdowns& d : draws) {
        std::vector<Time> end_of(static_cast<size_t>(p.pp)), start_of(static_cast<size_t>(p.pp));
        price_stages(d, end_of, start_of);
        for (size_t i = 0; i < end_of.size(); ++i) {
          est.dp_end[i] += (1.0 / n) * end_of[i];
          est.dp_start[i] += (1.0 / n) * start_of[i];
        }
        mean_exposure += (1.0 / n) * staged_dp_exposed(end_of, rooms.end, start_of, rooms.start);
      }
      if (draws.size() > 1) draw_excess = max(Time::zero(), mean_exposure - staged_dp_exposed(est));
    }
    // ZeRO-3: each chunk's weights gathered again before each of its forward and backward passes,
    // one after another, prefetched while the previous pass computes or the pipeline fills and
    // drains (as the flow level's graph orders them). The first gather waits, the others hide
    // under the compute and bubble, and the reduction's exposure follows (ZeRO-3 has no step
    // gather). Where the gathers take longer than the compute, they pace the step.
    //
    // ZeRO-2 and ZeRO-3 hold a shard of the gradients only, so every micro-batch's gradients are
    // reduce-scattered after its backward pass, as DeepSpeed's ZeRO and PyTorch FSDP do under
    // gradient accumulation (ZeRO-0/1 accumulate them whole and reduce once per step). Between a
    // stage's first and last backward pass lie about mbs - 1 pipeline cycles (plain 1F1B: each
    // stage's backward passes come at the pace of the stage after it, a forward pass apart; with
    // one stage exactly), and its NIC is free in each for micro_batch_free; with several stages
    // the span is the replayed schedule's (below: the interleaved drain runs the warm-up's extra
    // chunks' backward passes without forwards between them; MegaScale's 175B on 768 GPUs,
    // ZeRO-2: 29.30 s against the flow level's 29.54 s). All the reductions
    // must fit there or after the last backward pass, so the stage's reduction is exposed at least
    //   mbs x reduction - room
    // (what does not fit piles up, and the last micro-batch's reduction, whose buckets then queue
    // behind it, follows); where it fits, the last reduction's overlap stays as priced above.
    // Every stage's reductions run at once (reduce_together). Not overlapped, each blocks the
    // passes after it: mbs x reduction. (Before 2026-12-05 ZeRO-2 and -3 reduced once per step,
    // as stage 1, with a shard's memory.)
    const bool reduces_per_micro_batch = p.zero_stage >= 2 && mbs > 1;
    // (MoE: the micro-batches' reductions are one expert collective per chunk, as the flow level's
    // graph runs them; only the last, layer by layer, pays a latency per MoE layer.)
    const Time per_micro_batch =
        m.moe ? reduce - (moe_dp->expert_layers - moe_dp->expert_chunks) *
                             coll::collective_latency(op, coll::Algorithm::kRing, moe_dp->expert_group)
              : reduce_together;
    Time gather_waits;  // ZeRO-3 without the gather overlap: what the reductions add to the gathers
    //
    // With several stages the schedule is replayed (backward_passes): each chunk's reduction,
    // R / vpp, is issued as its backward pass ends (as the flow level's graph issues them), and
    // the NIC works through them in order, free for `free` a cycle (pace) of the time between;
    // what is left after the stage's last backward pass is the most that any run of reductions
    // to the last issues beyond the NIC's room from that run's first:
    //   max over k of (n - k) R / vpp - free x (end of the last pass - end of pass k) / pace
    // (k = 0 with every micro-batch: m R less the room of the whole span, the bound above, past
    // the replayed micro-batches each adding R and a cycle; the last pass's own reduction alone
    // is the overlap priced above, dp_end). Until 2026-12-07 the bound alone, at
    // (m - 1) cycles less the drain's missing forwards ((vpp - 1)(pp - 1) / vpp of them): it
    // missed the interleaved drain, whose backward passes come one after another and issue
    // their reductions faster than the NIC takes them, and undercounted the room where every
    // forward runs first (m = pp): Llama-3-70B-like on 2,048 GPUs, tp 4, pp 2, vpp 5, ZeRO-2,
    // 2 micro-batches 3.199 s against the flow level's 2.622 s, 8 micro-batches 8.441 s against
    // 8.383 s (QA).
    const auto backlog_of = [&](size_t stage, Time free) {
      if (!cfg.training.overlap.dp_grad_reduce) return mbs * per_micro_batch;
      const bool replayed = stage < backward_passes.passes.size() && !backward_passes.passes[stage].empty() &&
                            backward_passes.pace > Time::zero();
      if (!replayed) {
        const double backward_only = std::min((p.vpp - 1.0) * (p.pp - 1.0) / p.vpp, mbs - 1.0);
        return mbs * per_micro_batch - max(Time::zero(), (mbs - 1) * free - backward_only * forward_share * free);
      }
      const std::vector<work::BackwardPasses::Pass>& passes = backward_passes.passes[stage];
      const Time pace = backward_passes.pace;
      const Time last_end = passes.back().end;
      const Time piece = (1.0 / p.vpp) * per_micro_batch;
      const int64_t n = static_cast<int64_t>(passes.size());
      const int64_t beyond = mbs - backward_passes.replayed;  // micro-batches past the replay
      // A chunk's last pass's reduction goes bucket by bucket on a stream of its own, after that
      // chunk's earlier reductions but beside the other chunks' (one collective a pass, on
      // theirs): where both are queued their ring latencies overlap, a piece's for each pair but
      // the first and last (the flow level's trace, 2 micro-batches of 5 chunks: 10 pieces of
      // 0.175 s cleared in 1.57 s). With one chunk nothing runs beside them.
      const Time latency = m.moe || p.vpp == 1 ? Time::zero() : buckets_per_chunk * coll::ring_latency(op, g);
      int64_t lasts = 0;  // chunk-last pieces from k on
      Time worst;
      for (int64_t k = n - 1; k >= 0; --k) {
        const work::BackwardPasses::Pass& pass = passes[static_cast<size_t>(k)];
        lasts += pass.chunk_last ? 1 : 0;
        if (k + 1 == n) continue;  // the last pass's own: dp_end
        const int64_t pieces = k == 0 ? mbs * p.vpp : n - k;  // k = 0: every micro-batch's
        const int64_t earlier = pieces - lasts;
        const Time span = last_end - pass.end + (k == 0 ? beyond * pace : Time::zero());
        const int64_t overlapping = std::max<int64_t>(0, std::min(earlier, lasts) - 1);
        worst = max(worst, pieces * piece - overlapping * latency - (span / pace) * free);
      }
      return worst;
    };
    const auto set_backlog = [&](Time free) {
      Time most;
      for (size_t i = 0; i < est.dp_end.size(); ++i) {
        const Time added = max(Time::zero(), backlog_of(i, free) - est.dp_end[i]);
        est.dp_end[i] += added;
        most = max(most, added);
      }
      est.dp_micro_batch_backlog = most + gather_waits;
    };
    // ZeRO-3 whose gathers block the passes prices its room in its own branch below.
    const bool gathers_block = p.zero_stage == 3 && !cfg.training.overlap.dp_param_gather;
    if (reduces_per_micro_batch && !gathers_block) set_backlog(micro_batch_free);
    // ZeRO-3 without the gather overlap: a chunk's reduction, issued as its backward pass ends,
    // shares the NIC with the next forward pass's gather, which the pass waits for; each runs at
    // half its rate until the shorter is done, so the gather takes
    //   gather + min(gather, reduction / vpp)
    // longer for each of the (mbs - 1) x vpp forward passes that follow a backward one, and the
    // reduction has done that much by then. Returns the per-pass share; adds the waits. Without
    // the reduction overlap (dp_grad_reduce: false) each reduction blocks the passes after it, so
    // none runs beside a gather: set_backlog charges them all whole, and nothing is shared (until
    // 2026-12-06 the waits were added too, ZeRO-3 with both overlaps off paid (mbs - 1) x vpp
    // gathers twice: 8 GPUs, 4 micro-batches, 324 ms against the flow level's 280 ms).
    const auto shared_with_gather = [&](Time gather) {
      if (!cfg.training.overlap.dp_grad_reduce) return Time::zero();
      const Time shared = min(gather, (1.0 / p.vpp) * per_micro_batch);
      gather_waits = ((mbs - 1) * p.vpp) * shared;
      for (Time& t : est.dp_start) t += gather_waits;
      return shared;
    };
    b.dp_exposed = staged_dp_exposed(est) + draw_excess;
    if (p.zero_stage == 3) {
      // One gather of the chunk's weights per pass (one latency, as the flow level runs it); MoE
      // gathers the chunk's experts over their own group after its dense weights.
      Time per_pass =
          collective_time(CollectiveOp::kAllGather, bytes_of(synced / p.vpp * 2.0), moe_dp ? moe_dp->dense_group : g);
      if (moe_dp) {
        // The chunks with MoE layers gather their share of the experts: on average per pass.
        const int k = moe_dp->expert_chunks;
        per_pass += (static_cast<double>(k) / p.vpp) *
                    collective_time(CollectiveOp::kAllGather, bytes_of(moe_dp->expert_params / k * 2.0), moe_dp->expert_group);
      }
      const int64_t passes = 2 * mbs * p.vpp;
      if (cfg.training.overlap.dp_param_gather) {
        // Paced by the gathers: the links gather for passes x per_pass, then reduce. The first
        // stage's last chunk reaches it (pp - 1) chunk passes into the drain, and only then can
        // that chunk's share of the reduction start.
        const Time last_pass = (1.0 / p.vpp) * bwd_window;
        const Time drain_to_first = (p.pp - 1) * last_pass;
        // The passes run their compute and exposed TP/CP (MoE: and expert all-to-all)
        // communication while the next gathers run, so the
        // gathers pace the step when their stream, or the NIC shares it runs on, take longer
        // than that. Two bounds, neither of which moves with the compute (before 2026-12-04
        // the exposed TP time was added on top of the gathers' bound, and a faster GPU, whose
        // shorter passes hide less TP, made the step up to 19% slower; GPT-175B, ZeRO-3, DP
        // placed first, A100 -> H100):
        //   stream = passes x per-pass gather + the reduction after the drain
        //   NIC    = what the collectives sharing a GPU's NIC share keep it busy
        //            (coll::collective_nic_time, at the share's own rate): the gathers, the
        //            reduction, and the TP groups and CP rings that leave the node, hidden
        //            behind compute or not (the pipeline sends and the tied-embedding
        //            all-reduce, small beside them, are left out)
        // The reduction is priced with every stage on a node at once: the credit for stages
        // that end their backward passes apart (above) assumes a NIC idle meanwhile, which a
        // gather-paced step's is not (with it, full recomputation came out faster than
        // selective).
        // The pipeline sends' steady-state waits (est.pp_send_paced: NIC pacing, and in plain
        // 1F1B the inputs in flight) stretch the passes the gathers run beside, so they hide
        // there too (until 2026-12-06 they came on top of a gather-paced step).
        const Time passes_take = b.compute + b.bubble + b.tp_exposed + b.ep_exposed + est.pp_send_paced;
        const Time red = m.moe ? reduce : reduce_together;
        // ZeRO-3 reduces every micro-batch's gradients: mbs - 1 reductions beside the gathers,
        // then the last one's after the drain. The reductions run on their own stream, so only
        // their bytes queue with the gathers' (their ring latencies apart: vpp x buckets, and MoE
        // one per MoE layer).
        const Time red_latency =
            moe_dp ? (p.vpp * buckets_per_chunk) * coll::ring_latency(op, moe_dp->dense_group) +
                         moe_dp->expert_layers * coll::ring_latency(op, moe_dp->expert_group)
                   : (p.vpp * buckets_per_chunk) * coll::ring_latency(op, g);
        Time bound = passes * per_pass + (mbs - 1) * max(Time::zero(), red - red_latency) +
                     max(red, drain_to_first + (1.0 / p.vpp) * red);
        // MoE: the all-to-alls share the NICs with the gathers, hidden behind compute or not:
        // their time on the NICs adds to the gathers' stream (before 2026-12-05 only their
        // exposed part came on top of it, so a faster GPU, hiding less of them, made the step
        // slower: Mixtral 8x7B, ZeRO-3, a2a_chunks 4, 7.56 s at H100's peak, 7.92 s at twice it;
        // the flow level 8.31 and 8.24 s).
        if (m.moe) bound += mbs * stage_a2a_nic;
        if (!m.moe && per_node < sync) {
          // At the NIC's own share: where ECMP collisions or oversubscription slow a collective
          // in the fabric, its NIC is that much less busy, and free for the others.
          const GroupLinks nic_g = group_links(sync, per_node, work::links_at_contention(l, 1.0));
          const Time nic =
              passes * coll::collective_nic_time(CollectiveOp::kAllGather, bytes_of(synced / p.vpp * 2.0), nic_g) +
              mbs * coll::collective_nic_time(op, grads, nic_g) + mbs * stage_nic;
          bound = max(bound, nic);
        }
        const Time gather_bound = bound - passes_take;
        for (Time& t : est.dp_start) t += per_pass;
        Time compute_paced = staged_dp_exposed(est) + draw_excess;
        if (!cfg.training.overlap.dp_grad_reduce) {
          // Each pass's gather starts as the pass before it on the stage does (one pass ahead,
          // the flow level's graph and FSDP's prefetch), and a reduction that blocks keeps the
          // NIC from gathering ahead through the passes: a pass waits for what its gather takes
          // beyond the pass before it, a forward's (its exposed TP share with it) before each
          // backward and a backward's before each forward (the reduction after it then shares
          // the NIC with what is left):
          //   waits = m vpp (max(0, gather - forward slot) + max(0, gather - backward slot))
          // (until 2026-12-07 only the stream bound above: 64 GPUs, tp 8, 8 micro-batches,
          // 0.570 s against the flow level's 0.618 s, now 0.630 s; review). With the reductions
          // overlapped the stream bound stays: charging these waits there too moved 9 ZeRO-3
          // plans of compare_levels (seed 1) from -1.9%..0.0% to -0.5%..+3.5% against the flow
          // level, no closer.
          const Time tp_f = forward_share * stage_tp;
          const Time fwd_slot = (1.0 / p.vpp) * (fwd_window + tp_f);
          const Time bwd_slot = (1.0 / p.vpp) * (bwd_window + (stage_tp - tp_f));
          compute_paced += (mbs * p.vpp) * (max(Time::zero(), per_pass - fwd_slot) + max(Time::zero(), per_pass - bwd_slot));
        }
        est.dp_paced = gather_bound;
        b.dp_exposed = max(compute_paced, gather_bound);
        est.gather_slack = max(Time::zero(), gather_bound - compute_paced);
      } else if (m.moe) {
        for (Time& t : est.dp_start) t += passes * per_pass;
        if (reduces_per_micro_batch) set_backlog(micro_batch_free + p.vpp * shared_with_gather(per_pass));
        b.dp_exposed = staged_dp_exposed(est) + draw_excess;
      } else {
        // Not overlapped, each pass's gather runs after the stage's previous pass and before its
        // own. per_pass has every stage's gathers at once, on the NICs they share (stages_per_nic)
        // and the fabric links their rings cross (contention.dp); but the stages gather while
        // the others compute, so each meets the others' gathers only part of the time
        // (unoverlapped_gather). Alone, a stage has its NIC k times over (k stages behind it),
        // and on the fabric its own rings' load (own_rings_load; unrouted, the closed form's
        // tiers). The time a pass holds the NIC free: its compute and exposed TP/CP less what
        // its TP groups and CP rings keep on the NIC (as the ZeRO-0/1/2 windows above), split
        // between forward and backward as the compute is. Before 2026-12-05 every pass paid the
        // gathers of every stage at once on top of its compute: 175B, pp 8, 4 NICs for 8 stages
        // per node 83.56 s against the flow level's 71.79 s (now 75.15 s); 64 GPUs, pp 2, each
        // stage's rings on the same ToR uplinks 42.64 s against 35.30 s (now 37.46 s).
        TrainingLinks alone_l = dp_l;
        alone_l.nic_per_gpu = Bandwidth{dp_l.nic_per_gpu.bytes_per_s * nic_stages};
        if (by_stage && std::all_of(draws.begin(), draws.end(), [](const StageSlowdowns& d) {
              return d.dp_loads && !d.dp_loads->of_stage.empty();
            })) {
          double own = 0.0;
          for (const StageSlowdowns& d : draws) own += own_rings_load(*d.dp_loads) / static_cast<double>(draws.size());
          alone_l.nic_per_gpu = Bandwidth{l.nic_local_per_gpu.bytes_per_s / std::max(1.0 / nic_stages, own)};
        }
        const Time alone = min(per_pass, collective_time(CollectiveOp::kAllGather, bytes_of(synced / p.vpp * 2.0),
                                                         group_links(sync, per_node, alone_l)));
        const Time nic_free =
            max(Time::zero(), bwd_window + fwd_window + stage_tp - stage_nic);
        const Time fwd_gather = unoverlapped_gather(alone, per_pass, (forward_share / p.vpp) * nic_free);
        const Time bwd_gather = unoverlapped_gather(alone, per_pass, ((1.0 - forward_share) / p.vpp) * nic_free);
        for (Time& t : est.dp_start) t += (mbs * p.vpp) * (fwd_gather + bwd_gather);
        // The other stages' gathers take per_pass - alone of each pass's NIC-free time: the
        // per-micro-batch reductions have what is left (none where the gathers fill the NIC, so
        // a faster GPU, whose gathers then grow as its passes shrink, is no slower). Each chunk's
        // reduction starts as its backward pass ends, beside the next forward pass's gather,
        // which waits: the two share the NIC until the shorter is done (shared_with_gather).
        if (reduces_per_micro_batch) {
          const Time taken = per_pass - alone;
          const Time fwd_room = max(Time::zero(), (forward_share / p.vpp) * nic_free - taken);
          const Time bwd_room = max(Time::zero(), ((1.0 - forward_share) / p.vpp) * nic_free - taken);
          const Time shared = shared_with_gather(fwd_gather);
          set_backlog(p.vpp * (fwd_room + bwd_room + shared));
        }
        b.dp_exposed = staged_dp_exposed(est) + draw_excess;
      }
    }
  }

  // --- Optimizer step over this rank's shard, and the tied-embedding gradient all-reduce.
  double shard = p.zero_stage >= 1 ? params / sync : params;
  if (m.moe) shard = est.memory.most_optimizer.as_double() / 12.0;  // dense and expert shards differ; the largest stage's
  b.optimizer = calib::memory_time(bytes_of(shard * work::kAdamBytesPerParam), hw);
  b.optimizer += est.embedding_sync;

  // Idle time once per step, outside the schedule (MegaScale section 3.4: data loading at the
  // start of each step): nothing overlaps it.
  b.step_stall = cfg.training.step_stall;
  est.iteration = b.compute + b.tp_exposed + b.pp_exposed + b.bubble + b.dp_exposed + b.optimizer + b.ep_exposed +
                  b.step_stall;
  const double seconds = est.iteration.as_s();
  const double tokens = static_cast<double>(cfg.training.global_batch) * m.seq_len;
  est.tokens_per_s = tokens / seconds;
  est.mfu = est.flops.model.n / (seconds * c.gpus * peak.per_s);
  est.hfu = est.flops.hardware.n / (seconds * c.gpus * peak.per_s);
  return est;
}

MoeLayerReport moe_layer_report(int layer, const work::MoeLayerCost& cost, Time exposed) {
  MoeLayerReport rep;
  rep.layer = layer;
  rep.imbalance = cost.imbalance;
  rep.dropped_fraction = cost.dropped_fraction;
  rep.a2a = 2 * (cost.dispatch + cost.combine);
  rep.a2a_exposed = exposed;
  rep.expert_compute = cost.expert_fwd + cost.expert_bwd;
  rep.chunks = cost.chunks;
  rep.a2a_bytes_max_gpu = cost.a2a_bytes_max_gpu;
  return rep;
}

namespace {

// Errors when `mem` per GPU exceeds the profile's usable capacity, with its parts.
std::vector<InputError> plan_misfit(const ScenarioConfig& cfg, const work::MemoryEstimate& mem,
                                    const calib::HardwareProfile& hw) {
  const Bytes usable = hw.hbm_capacity - hw.memory_reserved;
  if (mem.total() <= usable) return {};
  char buf[768];
  std::snprintf(buf, sizeof buf,
                "the plan needs %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, "
                "activations %.1f) but one %s has %.1f GiB usable (%.1f GiB HBM minus %.1f GiB "
                "reserved); raise tp/pp/cp%s, the ZeRO stage (weights, gradients, optimizer) or recomputation (activations), or lower micro_batch "
                "(training.memory_check: false runs it anyway)",
                mem.total().as_gib(), mem.weights.as_gib(), mem.gradients.as_gib(),
                mem.optimizer.as_gib(), mem.activations.as_gib(), hw.name.c_str(), usable.as_gib(),
                hw.hbm_capacity.as_gib(), hw.memory_reserved.as_gib(),
                cfg.model.moe ? "/ep/expert_tp (the experts' weights split over ep x expert_tp)" : "");
  const auto it = cfg.lines.find("parallelism");
  std::string message = buf;
  // Skewed routing puts a hot expert's tokens on one GPU: its activations may be what does not
  // fit (2026-12-06 review: 92 GiB of them under zipf on 32 experts, and the message named only
  // the plan's knobs).
  if (cfg.model.moe && cfg.model.moe->routing != MoeRouting::kUniform) {
    message += "; the activations are the busiest expert owner's under model.moe.routing " +
               std::string(cfg.model.moe->routing == MoeRouting::kZipf ? "zipf" : "loads") +
               (cfg.model.moe->capacity_factor > 0 ? ": a lower model.moe.capacity_factor (at least 1) caps its tokens"
                                                   : ": a model.moe.capacity_factor (e.g. 1.25) caps its tokens");
  }
  return {InputError{cfg.file, it == cfg.lines.end() ? 0 : it->second, "parallelism", message}};
}

}  // namespace

std::vector<InputError> check_memory_fit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  if (!cfg.training.memory_check) return {};
  return memory_misfit(cfg, hw);
}

std::vector<InputError> memory_misfit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  if (std::vector<InputError> nominal = plan_misfit(cfg, work::memory_per_gpu(cfg), hw); !nominal.empty()) return nominal;
  // The heaviest replicas of a sequence imbalance hold their longer sequences' activations
  // (unchecked until 2026-12-05: 10x the tokens ran on a plan that fits the mean; and until
  // 2026-12-05 the sweep's memory_fits, which asks this, saw the mean only: an error, not no_fit).
  const SequenceImbalance& si = cfg.stragglers.sequence_imbalance;
  if (si.max_over_mean <= 1.0) return {};
  const int heavy_tokens = with_heavy_sequences(cfg, si).model.seq_len;
  std::vector<InputError> errors;
  for (const InputError& e : plan_misfit(cfg, work::most_loaded_memory_per_gpu(cfg), hw)) {
    errors.push_back(scenario_error(cfg, "stragglers.sequence_imbalance.max_over_mean",
                                    "the heaviest replicas' sequences of " + std::to_string(heavy_tokens) +
                                        " tokens (max_over_mean x model.seq_len): " + e.message));
  }
  return errors;
}

}  // namespace clustersim::engine
