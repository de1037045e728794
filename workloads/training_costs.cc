// SPDX-License-Identifier: Apache-2.0
#include "workloads/training_costs.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include "calibration/compute_cost.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/error.h"
#include "topology/clos_shape.h"
#include "workloads/placement.h"
#include "workloads/transformer.h"

namespace clustersim::work {

using coll::CollectiveOp;
using coll::GroupLinks;

TrainingLinks training_links(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const ClusterConfig& c = cfg.cluster;
  const NetworkConfig& n = cfg.network;
  TrainingLinks l;
  const Bandwidth nvlink = n.nvlink_bandwidth.value_or(hw.nvlink_bandwidth);
  l.nvlink_busbw = hw.eff.nvlink_busbw * nvlink;
  // Each GPU's share of the node's NICs; oversubscribed tiers divide what crosses them (the
  // analytical level assumes a group's traffic crosses every tier).
  const double share = static_cast<double>(c.nics_per_node) / c.gpus_per_node;
  const double oversub = n.tor_oversubscription * (n.tiers == 3 ? n.agg_oversubscription : 1.0);
  const Bandwidth fabric = n.fabric_bandwidth.value_or(c.nic_bandwidth);
  const double nic = std::min(c.nic_bandwidth.bytes_per_s, fabric.bytes_per_s) * share / oversub;
  l.nic_per_gpu = Bandwidth{nic * hw.eff.network_busbw};
  l.oversubscription = oversub;
  l.nic_local_per_gpu = Bandwidth{c.nic_bandwidth.bytes_per_s * share * hw.eff.network_busbw};
  l.nvlink_alpha = hw.eff.nvlink_collective_latency;
  l.net_alpha = hw.eff.network_collective_latency;
  return l;
}

namespace {

// A tier's blocks and their uplinks, for the ring and flow models below. Rail-optimised: a ToR
// serves one rail (NIC) of each server of its group, so traffic between rails leaves it too.
struct TierBlocks {
  int64_t gpus = 0;          // GPUs per block (ToR group, pod)
  double uplink_nics = 0;    // the block's uplinks (all its ToRs'), in NIC line rates (links x fabric / nic)
  int rails = 1;             // ToRs per block (rail-optimised ToR tier), else 1
};

// Per tier, the slowdown of flows leaving a block: bytes out over the uplinks' rate, against the
// busiest GPU's bytes over its NIC share.
double block_slowdown(double leaving, double busiest, const TierBlocks& t, double share) {
  if (leaving <= 0 || busiest <= 0 || t.uplink_nics <= 0) return 1.0;
  return std::max(1.0, leaving * share / (t.uplink_nics * busiest));
}

// The rail (the node's NIC, in order) GPU g's traffic leaves on: a node's GPUs share its
// nics_per_node NICs in order, as the fabric wires them.
int64_t rail_of(const ScenarioConfig& cfg, int64_t g) {
  const int gpn = cfg.cluster.gpus_per_node;
  return (g % gpn) * cfg.cluster.nics_per_node / gpn;
}

std::vector<TierBlocks> tier_blocks(const topo::ClosShape& shape, const ScenarioConfig& cfg) {
  const NetworkConfig& n = cfg.network;
  const Bandwidth fabric = n.fabric_bandwidth.value_or(cfg.cluster.nic_bandwidth);
  const double f = fabric.bytes_per_s / cfg.cluster.nic_bandwidth.bytes_per_s;  // a fabric link in NICs
  std::vector<TierBlocks> out;
  // ToR: each of a group's tors_per_group ToRs has tor_up uplinks.
  out.push_back({shape.gpus_per_group(), static_cast<double>(shape.tors_per_group) * shape.tor_up * f,
                 n.wiring == Wiring::kRailOptimized ? shape.tors_per_group : 1});
  // Pod: its aggs_per_pod aggregation switches have agg_up uplinks each.
  if (n.tiers == 3) out.push_back({shape.gpus_per_pod(), static_cast<double>(shape.aggs_per_pod) * shape.agg_up * f, 1});
  return out;
}

// Whether a tier's blocks carry less out than their GPUs' NICs: oversubscription, or fabric
// links slower than the NICs.
bool tapered(const TierBlocks& t, const ScenarioConfig& cfg) {
  const double nics_per_gpu = static_cast<double>(cfg.cluster.nics_per_node) / cfg.cluster.gpus_per_node;
  return t.uplink_nics < static_cast<double>(t.gpus) * nics_per_gpu * (1 - 1e-9);
}

}  // namespace

int gpus_per_nic(const ClusterConfig& c) { return std::max(1, c.gpus_per_node / std::max(1, c.nics_per_node)); }

bool fabric_tapered(const ScenarioConfig& cfg) {
  try {
    const std::vector<TierBlocks> tiers = tier_blocks(topo::plan_clos(cfg.cluster, cfg.network, cfg.file), cfg);
    return std::any_of(tiers.begin(), tiers.end(), [&](const TierBlocks& t) { return tapered(t, cfg); });
  } catch (const BadInput&) {
    return false;  // the run that builds the fabric says what is wrong with it
  }
}

bool replica_lines_cross_taper(const ScenarioConfig& cfg) { return replica_lines_leave(cfg, {}); }

bool replica_lines_leave(const ScenarioConfig& cfg, ReplicaLines which) {
  const int dp = data_parallel_size(cfg);
  if (dp < 2) return false;
  const ParallelismConfig& p = cfg.parallelism;
  const int cp = which.cp_rings ? p.cp : 1;
  if (p.pp < 2 && cp < 2) return false;
  topo::ClosShape shape;
  try {
    shape = topo::plan_clos(cfg.cluster, cfg.network, cfg.file);
  } catch (const BadInput&) {
    return false;  // the run that builds the fabric says what is wrong with it
  }
  // The blocks: the smallest tapered ones (a tapered ToR tier's groups lie inside any pod), or
  // the top tier's (pods, or the ToR groups of 2 tiers).
  const std::vector<TierBlocks> tiers = tier_blocks(shape, cfg);
  const auto it = which.tapered_only
                      ? std::find_if(tiers.begin(), tiers.end(), [&](const TierBlocks& t) { return tapered(t, cfg); })
                      : tiers.end() - 1;
  if (it == tiers.end() || it->gpus <= 0) return false;
  const TierBlocks& blocks = *it;
  const int gpn = cfg.cluster.gpus_per_node;
  // A line between two GPUs leaves the block's uplinks when they sit in different blocks, or, at
  // a rail-optimised ToR tier, on different nodes and rails (each rail has its own ToR).
  const auto crosses = [&](int64_t a, int64_t b) {
    return a / blocks.gpus != b / blocks.gpus ||
           (blocks.rails > 1 && a / gpn != b / gpn && rail_of(cfg, a) != rail_of(cfg, b));
  };
  const Placement pl = placement_of(cfg);
  // Interleaved stages send from the last stage to the first too (chunk v to chunk v + 1).
  const int pairs = p.vpp > 1 ? p.pp : p.pp - 1;
  for (int r = 0; r < dp; ++r) {
    for (int ci = 0; ci < p.cp; ++ci) {
      for (int t = 0; t < p.tp; ++t) {
        for (int s = 0; s < pairs; ++s) {
          if (crosses(pl.gpu(t, ci, r, s), pl.gpu(t, ci, r, (s + 1) % p.pp))) return true;
        }
        for (int s = 0; s < p.pp && ci > 0 && cp > 1; ++s) {
          if (crosses(pl.gpu(t, ci, r, s), pl.gpu(t, ci - 1, r, s))) return true;
        }
      }
    }
  }
  return false;
}

namespace {

// Per-flow routing (ECMP, D-mod-k) puts each flow's queue pairs on single switch-to-switch links:
// a flow of `flow` bytes that leaves its ToR runs at most at qps fabric links' rate, while the
// busiest GPU moves `busiest` bytes at its NIC share (share x nic):
//   slowdown = max(1, flow / busiest x share x nic / (qps x fabric))
// A GPU whose traffic is one flow (a ring edge) gets share x nic / (qps x fabric); one that sends to
// k peers at once (an all-to-all) k times less, as its flows take k links.
double per_flow_cap(const ScenarioConfig& cfg, double flow, double busiest) {
  const NetworkConfig& n = cfg.network;
  if (flow <= 0 || busiest <= 0 || n.routing == Routing::kSpray) return 1.0;
  const Bandwidth fabric = n.fabric_bandwidth.value_or(cfg.cluster.nic_bandwidth);
  const double share = static_cast<double>(cfg.cluster.nics_per_node) / cfg.cluster.gpus_per_node;
  const double line = cfg.cluster.nic_bandwidth.bytes_per_s * share;
  return std::max(1.0, flow / busiest * line / (std::max(1, n.qps_per_connection) * fabric.bytes_per_s));
}

}  // namespace

TrainingLinks links_for_ring(const ScenarioConfig& cfg, const TrainingLinks& l, int64_t stride, int64_t members,
                             int64_t starts, double nic_scale) {
  const NetworkConfig& n = cfg.network;
  const topo::ClosShape shape = topo::plan_clos(cfg.cluster, n, cfg.file);
  const int gpn = cfg.cluster.gpus_per_node;
  const double share = nic_scale * cfg.cluster.nics_per_node / gpn;
  const int64_t span = (std::max<int64_t>(members, 1) - 1) * stride + 1;
  // A ring whose edges between nodes join different rails leaves its ToR at every such edge. With
  // k members on each node, the ring runs k channels, member c of one node to member c of the
  // next (coll::collective_flows), k x stride GPUs apart; a ring split unevenly over nodes runs
  // member to member, stride apart.
  std::vector<int32_t> ring(static_cast<size_t>(std::max<int64_t>(members, 0)));
  for (size_t i = 0; i < ring.size(); ++i) ring[i] = static_cast<int32_t>(static_cast<int64_t>(i) * stride);
  const std::vector<std::vector<int32_t>> nodes = coll::members_by_node(ring, gpn);
  const int64_t k = nodes.empty() ? 0 : static_cast<int64_t>(nodes.front().size());
  const bool uniform = coll::splits_evenly(nodes);
  bool hops_rails = false;
  if (members > 1 && span > gpn) {
    if (uniform) {
      for (int64_t c = 0; c < k; ++c) hops_rails = hops_rails || rail_of(cfg, c * stride) != rail_of(cfg, c * stride + k * stride);
    } else {
      for (int64_t i = 0; i + 1 < members; ++i) {
        const int64_t g = i * stride;
        hops_rails = hops_rails || (g / gpn != (g + stride) / gpn && rail_of(cfg, g) != rail_of(cfg, g + stride));
      }
    }
  }
  double crossed = 1.0;
  bool leaves = false;
  for (const TierBlocks& t : tier_blocks(shape, cfg)) {
    // The ring starting furthest into a block (offset min(starts, B) - 1) reaches past it when
    // that offset plus its span passes the block.
    const int64_t offset = std::min(std::max<int64_t>(starts, 1), t.gpus) - 1;
    const bool out = offset + span > t.gpus || (t.rails > 1 && hops_rails);
    if (!out || t.gpus <= 0) continue;
    leaves = true;
    // min(stride, B) rings side by side each leave the block by one edge (every edge when the ring
    // hops rails): the block's GPUs send min(stride, B) (or B) NICs' worth through its uplinks.
    const double edges = t.rails > 1 && hops_rails ? static_cast<double>(t.gpus)
                                                   : static_cast<double>(std::min(stride, t.gpus));
    crossed = std::max(crossed, block_slowdown(edges, 1.0, t, share));
  }
  // Each GPU sends one ring edge: its whole traffic is one flow.
  return links_at_contention(with_nic_scale(l, nic_scale),
                             std::max(crossed, leaves ? per_flow_cap(cfg, nic_scale, 1.0) : 1.0));
}

double nic_sender_scale(const ScenarioConfig& cfg, int gpus, int64_t period, const std::function<bool(int)>& sends) {
  const int gpn = cfg.cluster.gpus_per_node;
  const int npn = cfg.cluster.nics_per_node;
  const int full = (gpn + npn - 1) / npn;  // the most GPUs behind one NIC: no credit once reached
  int64_t scan = gpus;
  if (period > 0) scan = std::min<int64_t>(gpus, std::lcm(period, static_cast<int64_t>(gpn)));
  std::vector<int> senders(static_cast<size_t>(npn), 0);  // this node's NICs
  int most = 0;
  for (int64_t g = 0; g < scan && most < full; ++g) {
    if (g % gpn == 0) std::fill(senders.begin(), senders.end(), 0);
    if (!sends(static_cast<int>(g))) continue;
    most = std::max(most, ++senders[static_cast<size_t>(topo::nic_of_gpu(g, gpn, npn) % npn)]);
  }
  const double per_nic = static_cast<double>(gpn) / npn;
  return most > 0 ? std::max(1.0, per_nic / most) : 1.0;
}

TrainingLinks with_nic_scale(const TrainingLinks& l, double scale) {
  TrainingLinks out = l;
  out.nic_per_gpu = Bandwidth{scale * l.nic_per_gpu.bytes_per_s};
  out.nic_local_per_gpu = Bandwidth{scale * l.nic_local_per_gpu.bytes_per_s};
  return out;
}

double fabric_slowdown(const ScenarioConfig& cfg, std::span<const coll::FlowSpec> flows) {
  const NetworkConfig& n = cfg.network;
  const topo::ClosShape shape = topo::plan_clos(cfg.cluster, n, cfg.file);
  const int gpn = cfg.cluster.gpus_per_node;
  const int npn = cfg.cluster.nics_per_node;
  const double share = static_cast<double>(npn) / gpn;
  std::unordered_map<int32_t, double> sent, received;  // inter-node bytes per GPU
  double busiest = 0;
  for (const coll::FlowSpec& f : flows) {
    if (!f.inter_node) continue;
    busiest = std::max({busiest, sent[f.src] += f.bytes.as_double(), received[f.dst] += f.bytes.as_double()});
  }
  double crossed = 1.0;
  double largest_leaving = 0;  // the largest flow that leaves its ToR (the first tier)
  bool tor_tier = true;
  for (const TierBlocks& t : tier_blocks(shape, cfg)) {
    if (t.gpus <= 0 || busiest <= 0) continue;
    // A block is one ToR: (group, rail) when rail-optimised, else the group or the pod.
    const auto block = [&](int32_t g) {
      return (g / t.gpus) * t.rails + (t.rails > 1 ? (g % gpn) * npn / gpn : 0);
    };
    std::unordered_map<int64_t, double> out_bytes, in_bytes;
    double most = 0;
    for (const coll::FlowSpec& f : flows) {
      if (!f.inter_node || block(f.src) == block(f.dst)) continue;
      const double b = f.bytes.as_double();
      if (tor_tier) largest_leaving = std::max(largest_leaving, b);
      most = std::max({most, out_bytes[block(f.src)] += b, in_bytes[block(f.dst)] += b});
    }
    tor_tier = false;
    TierBlocks one = t;
    one.uplink_nics = t.uplink_nics / t.rails;  // per ToR
    crossed = std::max(crossed, block_slowdown(most, busiest, one, share));
  }
  return std::max(crossed, per_flow_cap(cfg, largest_leaving, busiest));
}

TrainingLinks links_at_contention(const TrainingLinks& l, double slowdown) {
  TrainingLinks out = l;
  out.oversubscription = std::max(1.0, slowdown);
  out.nic_per_gpu = Bandwidth{l.nic_local_per_gpu.bytes_per_s / out.oversubscription};
  return out;
}

calib::AttentionKernel attention_kernel(const TrainingConfig& t) {
  if (!t.flash_attention) return calib::AttentionKernel::kUnfused;
  return t.flash_attention_version == 1 ? calib::AttentionKernel::kFlash1 : calib::AttentionKernel::kFlash2;
}

Precision attention_precision(Precision training) {
  return training == Precision::kFp8 ? Precision::kBf16 : training;
}

GroupLinks group_links(int ranks, int ranks_per_node, const TrainingLinks& l) {
  GroupLinks g;
  g.ranks = ranks;
  g.ranks_per_node = std::max(1, std::min(ranks, ranks_per_node));
  g.intra_busbw = l.nvlink_busbw;
  g.nic_per_gpu = l.nic_per_gpu;
  g.intra_alpha = l.nvlink_alpha;
  g.inter_alpha = l.net_alpha;
  return g;
}

LayerTimes layer_times(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const Precision prec = cfg.training.precision;
  Time gemm_fwd, gemm_bwd;
  for (const GemmShape& g : layer_gemms(cfg)) {
    gemm_fwd += calib::gemm_time(g.m, g.n, g.k, prec, hw);
    const BackwardGemms b = backward_gemms(g);
    gemm_bwd += calib::gemm_time(b.data_grad.m, b.data_grad.n, b.data_grad.k, prec, hw) +
                calib::gemm_time(b.weight_grad.m, b.weight_grad.n, b.weight_grad.k, prec, hw);
  }
  const AttentionFlops att = layer_attention_flops(cfg);
  const bool fused = cfg.training.flash_attention;
  const calib::AttentionKernel kernel = attention_kernel(cfg.training);
  const Precision att_prec = attention_precision(prec);
  const Time att_fwd = calib::attention_time(att.executed, kernel, att_prec, hw, att.score_elements);
  const Time att_bwd = calib::attention_time(Flops{att.executed.n * (fused ? 2.5 : 2.0)}, kernel, att_prec, hw,
                                             att.score_elements, true);
  const Bytes elem = layer_elementwise_bytes(cfg);
  const Time elem_fwd = calib::memory_time(elem, hw);
  const Time elem_bwd = calib::memory_time(Bytes{2 * elem.n}, hw);

  LayerTimes t;
  t.forward = gemm_fwd + att_fwd + elem_fwd;
  t.backward = gemm_bwd + att_bwd + elem_bwd;
  t.attention_fwd = att_fwd;
  if (cfg.training.recompute == Recompute::kFull) t.backward += t.forward;
  if (cfg.training.recompute == Recompute::kSelective) t.backward += selective_recompute_time(cfg, hw, att_fwd);
  return t;
}

Time head_time(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const auto tokens = static_cast<int64_t>(static_cast<double>(p.micro_batch) * m.seq_len / p.cp);
  const int64_t v = (m.vocab + p.tp - 1) / p.tp;
  const Precision prec = cfg.training.precision;
  const GemmShape logits{"lm_head", tokens, v, m.hidden};
  const BackwardGemms b = backward_gemms(logits);
  const Time gemm = calib::gemm_time(logits.m, logits.n, logits.k, prec, hw) +
                    calib::gemm_time(b.data_grad.m, b.data_grad.n, b.data_grad.k, prec, hw) +
                    calib::gemm_time(b.weight_grad.m, b.weight_grad.n, b.weight_grad.k, prec, hw);
  // Cross-entropy in FP32 over the logits: read, softmax, write gradient.
  const Time loss = calib::memory_time(bytes_of(static_cast<double>(tokens) * v * (2.0 + 4.0 + 4.0 + 2.0)), hw);
  return gemm + loss;
}

TpLayerTraffic tp_layer_traffic(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  TpLayerTraffic t;
  if (p.tp <= 1) return t;
  const double tokens = static_cast<double>(p.micro_batch) * cfg.model.seq_len / p.cp;
  t.activation = bytes_of(tokens * cfg.model.hidden * 2.0);
  t.sequence_parallel = p.sequence_parallel;
  t.collectives = cfg.training.parallel_block ? 1 : 2;
  return t;
}

namespace {

// The TP collectives of one micro-batch on one layer, forward and backward, each priced by
// `price` (coll::collective_time, or collective_nic_time for the NIC share they keep busy).
template <class Price>
std::pair<Time, Time> tp_passes(const ScenarioConfig& cfg, const TrainingLinks& l, int collectives, Price price) {
  const ParallelismConfig& p = cfg.parallelism;
  const TpLayerTraffic traffic = tp_layer_traffic(cfg);
  // As many ranks per node as the placement puts there (all tp of them unless a placement puts
  // TP outside the innermost dimensions): the part across nodes runs over the NICs.
  const Placement pl = placement_of(cfg);
  const GroupLinks g = group_links(p.tp, pl.ranks_per_node(Dim::kTp, cfg.cluster.gpus_per_node), l);
  // Per block (attention, MLP): all-gather + reduce-scatter with SP, or one all-reduce; the
  // parallel block (PaLM, MegaScale) shares one pair between attention and MLP.
  const Time per_block = p.sequence_parallel ? price(CollectiveOp::kAllGather, traffic.activation, g) +
                                                   price(CollectiveOp::kReduceScatter, traffic.activation, g)
                                             : price(CollectiveOp::kAllReduce, traffic.activation, g);
  const Time fwd = collectives * per_block;
  // The backward pass carries the recomputed forward's collectives too.
  const Time bwd = (cfg.training.recompute == Recompute::kFull ? 2 : 1) * fwd;
  return {fwd, bwd};
}

}  // namespace

Time tp_collectives_nic_time(const ScenarioConfig& cfg, const TrainingLinks& l, int collectives) {
  if (cfg.parallelism.tp <= 1) return Time::zero();
  const auto [fwd, bwd] = tp_passes(cfg, l, collectives, coll::collective_nic_time);
  return fwd + bwd;
}

Time tp_collectives_time(const ScenarioConfig& cfg, const TrainingLinks& l, int collectives, Time fwd_window,
                         Time bwd_window) {
  const ParallelismConfig& p = cfg.parallelism;
  if (p.tp <= 1) return Time::zero();
  const auto [fwd, bwd] = tp_passes(cfg, l, collectives, coll::collective_time);
  if (!cfg.training.overlap.tp_comm) return fwd + bwd;
  // Overlap splits each collective into tp chunks pipelined with the GEMMs; the first
  // (all-gather) or last (reduce-scatter) chunk stays exposed (MegaScale section 3.2), and the
  // rest hides only under as much compute as the pass has (the flow level's graph runs it beside
  // the pass's compute):
  //   exposed = T/tp + max(0, (1 - 1/tp) T - compute of the pass)
  const auto exposed = [&](Time t, Time window) {
    const Time hidden = (1.0 - 1.0 / p.tp) * t;
    return (1.0 / p.tp) * t + max(Time::zero(), hidden - window);
  };
  return exposed(fwd, fwd_window) + exposed(bwd, bwd_window);
}

bool recomputes_attention(const TrainingConfig& t) { return t.recompute != Recompute::kNone; }

double cp_backward_rings(const TrainingConfig& t) { return recomputes_attention(t) ? 3.0 : 2.0; }

double cp_rings_per_layer(const TrainingConfig& t) { return 1.0 + cp_backward_rings(t); }

double cp_backward_window(const TrainingConfig& t) { return recomputes_attention(t) ? 3.5 : 2.5; }

Time selective_recompute_time(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, Time core_fwd) {
  const Bytes scores = attention_score_elementwise_bytes(cfg);
  return scores.n > 0 ? core_fwd + calib::memory_time(scores, hw) : core_fwd;
}

Time layer_tp_time(const ScenarioConfig& cfg, const TrainingLinks& tp, const TrainingLinks& l, const LayerTimes& lt) {
  const ParallelismConfig& p = cfg.parallelism;
  // Context parallelism: K and V of every chunk pass around the CP ring (forward; the backward
  // sends them and their gradients, after the recomputed forward's where the attention core is
  // recomputed), overlapped with the attention core (2.5x the forward's in the backward, and the
  // recomputed forward).
  Time cp_hidden_fwd, cp_hidden_bwd, cp_exposed;
  if (p.cp > 1) {
    const Time ring = cp_ring_time(cfg, l);
    const Time bwd_rings = cp_backward_rings(cfg.training) * ring;
    cp_hidden_fwd = min(ring, lt.attention_fwd);
    cp_hidden_bwd = min(bwd_rings, cp_backward_window(cfg.training) * lt.attention_fwd);
    cp_exposed = (ring - cp_hidden_fwd) + (bwd_rings - cp_hidden_bwd);
  }
  // Where both the TP groups and the CP rings leave the node they send through the same NICs:
  // the time the ring hides under the attention core is not also there for the TP collectives
  // (before 2026-12-05 both hid under it, and twice the FLOP rate, shrinking both windows, made
  // a tp 8 cp 4 plan with TP across nodes 11.6% slower).
  const int gpn = cfg.cluster.gpus_per_node;
  const auto leave = [&] {
    const Placement pl = placement_of(cfg);
    return pl.spans_nodes(Dim::kTp, gpn) && pl.spans_nodes(Dim::kCp, gpn);
  };
  const bool one_nic = p.cp > 1 && p.tp > 1 && leave();
  const Time fwd_window = one_nic ? max(Time::zero(), lt.forward - cp_hidden_fwd) : lt.forward;
  const Time bwd_window = one_nic ? max(Time::zero(), lt.backward - cp_hidden_bwd) : lt.backward;
  return tp_collectives_time(cfg, tp, tp_layer_traffic(cfg).collectives, fwd_window, bwd_window) + cp_exposed;
}

namespace {

// The CP ring's group: as many ranks per node as the placement puts there.
GroupLinks cp_group(const ScenarioConfig& cfg, const TrainingLinks& l) {
  const Placement pl = placement_of(cfg);
  return group_links(cfg.parallelism.cp, pl.ranks_per_node(Dim::kCp, cfg.cluster.gpus_per_node), l);
}

}  // namespace

// Transformer Engine's p2p exchange: cp - 1 steps, each rank sending its block to the next
// point to point, a step as long as its slowest hop. Where the ring crosses nodes, a node's k
// ranks of it cross on one GPU's NIC: the node's boundary senders (one per ring it holds) share
// its NICs, each at most its own NIC, so a hop runs at nic_per_gpu x min(k, GPUs per NIC). (Until
// 2026-12-08 an NCCL all-gather ring, k x nic_per_gpu, its k ranks crossing on k NICs: Llama-3-8B
// at 65,536 tokens, tp 1, cp 16 on 2 nodes of 8 NICs, 0.71 ms a pass where one NIC a hop takes
// 5.3; QA.) The NIC's bytes are the all-gather ring's (cp_ring_nic_time).
Time cp_ring_time(const ScenarioConfig& cfg, const TrainingLinks& l) {
  const ParallelismConfig& p = cfg.parallelism;
  if (p.cp <= 1) return Time::zero();
  const GroupLinks g = cp_group(cfg, l);
  double hop = g.intra_busbw.bytes_per_s;
  if (g.nodes() > 1) hop = std::min(hop, g.nic_per_gpu.bytes_per_s * std::min(g.ranks_per_node, gpus_per_nic(cfg.cluster)));
  const double bytes = static_cast<double>(p.cp - 1) * cp_kv_bytes(cfg).as_double();
  return coll::collective_latency(CollectiveOp::kAllGather, coll::Algorithm::kRing, g) +
         (hop > 0 ? Time::s(bytes / hop) : Time::max());
}

Time cp_ring_nic_time(const ScenarioConfig& cfg, const TrainingLinks& l) {
  const ParallelismConfig& p = cfg.parallelism;
  if (p.cp <= 1) return Time::zero();
  return coll::collective_nic_time(CollectiveOp::kAllGather, Bytes{cp_kv_bytes(cfg).n * p.cp}, cp_group(cfg, l));
}

Bytes cp_kv_bytes(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  // KV heads over the TP ranks, a replica of one on each where there are fewer (as the GEMMs).
  const double kv = std::max<double>(m.kv_heads > 0 ? m.kv_heads : m.heads, p.tp);
  return bytes_of(tokens * 2.0 * kv * head_dim(m) * 2.0 / p.tp);
}

double dp_bucket_params(const ScenarioConfig& cfg, int dp) {
  if (cfg.training.dp_bucket_size > 0) return static_cast<double>(cfg.training.dp_bucket_size);
  return std::max(40e6, 1e6 * dp);
}

}  // namespace clustersim::work
