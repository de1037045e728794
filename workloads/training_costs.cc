// SPDX-License-Identifier: Apache-2.0
#include "workloads/training_costs.h"

#include <algorithm>
#include <unordered_map>

#include "calibration/compute_cost.h"
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
  l.fabric_ratio = std::max(1.0, c.nic_bandwidth.bytes_per_s / fabric.bytes_per_s);
  l.nvlink_alpha = hw.eff.nvlink_collective_latency;
  l.net_alpha = hw.eff.network_collective_latency;
  return l;
}

TrainingLinks links_for_ring(const ScenarioConfig& cfg, const TrainingLinks& l, int64_t stride, int64_t members) {
  const NetworkConfig& n = cfg.network;
  const topo::ClosShape shape = topo::plan_clos(cfg.cluster, n, cfg.file);
  const int64_t tor_block = shape.gpus_per_group();
  const int64_t pod_block = shape.gpus_per_pod();
  const int64_t span = (std::max<int64_t>(members, 1) - 1) * stride + 1;
  // Leaving a block of B GPUs: its B / r uplinks, each f times slower than a NIC.
  auto slowdown = [&](int64_t block, double ratio) {
    const double r = ratio * l.fabric_ratio;
    if (r <= 1.0 || block <= 0 || span <= block) return 1.0;
    return std::max(1.0, r * static_cast<double>(std::min(stride, block)) / static_cast<double>(block));
  };
  double crossed = slowdown(tor_block, n.tor_oversubscription);
  if (n.tiers == 3) crossed = std::max(crossed, slowdown(pod_block, n.agg_oversubscription));
  TrainingLinks out = l;
  out.nic_per_gpu = Bandwidth{l.nic_local_per_gpu.bytes_per_s / crossed};
  out.oversubscription = crossed;
  return out;
}

TrainingLinks links_for_flows(const ScenarioConfig& cfg, const TrainingLinks& l, std::span<const coll::FlowSpec> flows) {
  const NetworkConfig& n = cfg.network;
  const topo::ClosShape shape = topo::plan_clos(cfg.cluster, n, cfg.file);
  std::unordered_map<int32_t, double> sent;  // inter-node bytes per GPU
  double busiest = 0;
  for (const coll::FlowSpec& f : flows) {
    if (!f.inter_node) continue;
    busiest = std::max(busiest, sent[f.src] += f.bytes.as_double());
  }
  auto slowdown = [&](int64_t block, double ratio) {
    const double r = ratio * l.fabric_ratio;
    if (r <= 1.0 || block <= 0 || busiest <= 0) return 1.0;
    std::unordered_map<int64_t, double> leaving;  // bytes leaving each block
    double most = 0;
    for (const coll::FlowSpec& f : flows) {
      if (f.inter_node && f.src / block != f.dst / block) most = std::max(most, leaving[f.src / block] += f.bytes.as_double());
    }
    return std::max(1.0, most * r / (static_cast<double>(block) * busiest));
  };
  double crossed = slowdown(shape.gpus_per_group(), n.tor_oversubscription);
  if (n.tiers == 3) crossed = std::max(crossed, slowdown(shape.gpus_per_pod(), n.agg_oversubscription));
  TrainingLinks out = l;
  out.nic_per_gpu = Bandwidth{l.nic_local_per_gpu.bytes_per_s / crossed};
  out.oversubscription = crossed;
  return out;
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
    // Backward: input gradient (m x n)(n x k) and weight gradient (k x m)(m x n).
    gemm_bwd += calib::gemm_time(g.m, g.k, g.n, prec, hw) + calib::gemm_time(g.k, g.n, g.m, prec, hw);
  }
  const AttentionFlops att = layer_attention_flops(cfg);
  const bool fused = cfg.training.flash_attention;
  const calib::AttentionKernel kernel = attention_kernel(cfg.training);
  const Time att_fwd = calib::attention_time(att.executed, kernel, prec, hw);
  const Time att_bwd = calib::attention_time(Flops{att.executed.n * (fused ? 2.5 : 2.0)}, kernel, prec, hw);
  const Bytes elem = layer_elementwise_bytes(cfg);
  const Time elem_fwd = calib::memory_time(elem, hw);
  const Time elem_bwd = calib::memory_time(Bytes{2 * elem.n}, hw);

  LayerTimes t;
  t.forward = gemm_fwd + att_fwd + elem_fwd;
  t.backward = gemm_bwd + att_bwd + elem_bwd;
  t.attention_fwd = att_fwd;
  if (cfg.training.recompute == Recompute::kFull) t.backward += t.forward;
  if (cfg.training.recompute == Recompute::kSelective) t.backward += att_fwd;
  return t;
}

Time head_time(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const auto tokens = static_cast<int64_t>(static_cast<double>(p.micro_batch) * m.seq_len / p.cp);
  const int64_t v = (m.vocab + p.tp - 1) / p.tp;
  const Precision prec = cfg.training.precision;
  const Time gemm = calib::gemm_time(tokens, v, m.hidden, prec, hw) +
                    calib::gemm_time(tokens, m.hidden, v, prec, hw) +
                    calib::gemm_time(m.hidden, v, tokens, prec, hw);
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

Time tp_collectives_time(const ScenarioConfig& cfg, const TrainingLinks& l, int collectives) {
  const ParallelismConfig& p = cfg.parallelism;
  if (p.tp <= 1) return Time::zero();
  const TpLayerTraffic traffic = tp_layer_traffic(cfg);
  // As many ranks per node as the placement puts there (all tp of them unless a placement puts
  // TP outside the innermost dimensions): the part across nodes runs over the NICs.
  const Placement pl = placement_of(cfg);
  const GroupLinks g = group_links(p.tp, pl.first_group_ranks_per_node(Dim::kTp, cfg.cluster.gpus_per_node), l);
  // Per block (attention, MLP): all-gather + reduce-scatter with SP, or one all-reduce; the
  // parallel block (PaLM, MegaScale) shares one pair between attention and MLP.
  const Time per_block = p.sequence_parallel
                             ? collective_time(CollectiveOp::kAllGather, traffic.activation, g) +
                                   collective_time(CollectiveOp::kReduceScatter, traffic.activation, g)
                             : collective_time(CollectiveOp::kAllReduce, traffic.activation, g);
  int passes = 2;  // forward and backward
  if (cfg.training.recompute == Recompute::kFull) passes = 3;
  Time tp = static_cast<int64_t>(collectives * passes) * per_block;
  // Overlap splits each collective into tp chunks pipelined with the GEMM; the first
  // (all-gather) or last (reduce-scatter) chunk stays exposed (MegaScale section 3.2).
  if (cfg.training.overlap.tp_comm) tp = (1.0 / p.tp) * tp;
  return tp;
}

Time layer_tp_time(const ScenarioConfig& cfg, const TrainingLinks& tp, const TrainingLinks& l, const LayerTimes& lt) {
  const ParallelismConfig& p = cfg.parallelism;
  Time total = tp_collectives_time(cfg, tp, tp_layer_traffic(cfg).collectives);
  if (p.cp > 1) {
    // Context parallelism: K and V of every chunk pass around the CP ring (forward; the
    // backward sends them and their gradients), overlapped with the attention core. The ring has
    // as many ranks per node as the placement puts there.
    const Placement pl = placement_of(cfg);
    const int per_node = pl.first_group_ranks_per_node(Dim::kCp, cfg.cluster.gpus_per_node);
    const GroupLinks g = group_links(p.cp, per_node, l);
    const Time ring = collective_time(CollectiveOp::kAllGather, Bytes{cp_kv_bytes(cfg).n * p.cp}, g);
    const Time fwd = max(Time::zero(), ring - lt.attention_fwd);
    const Time bwd = max(Time::zero(), ring + ring - 2.5 * lt.attention_fwd);
    total += fwd + bwd;
  }
  return total;
}

Bytes cp_kv_bytes(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
  const double kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  return bytes_of(tokens * 2.0 * kv * (static_cast<double>(m.hidden) / m.heads) * 2.0 / p.tp);
}

double dp_bucket_params(const ScenarioConfig& cfg, int dp) {
  if (cfg.training.dp_bucket_size > 0) return static_cast<double>(cfg.training.dp_bucket_size);
  return std::max(40e6, 1e6 * dp);
}

}  // namespace clustersim::work
