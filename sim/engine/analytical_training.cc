// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/analytical_training.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "calibration/compute_cost.h"
#include "sim/collectives/collective_cost.h"

namespace clustersim::engine {

const char* const kMfuDefinition =
    "MFU = model FLOPs per iteration / (iteration time x GPUs x dense peak of the training "
    "precision); model FLOPs = 3 x forward (no recomputation), attention counted over the whole "
    "score matrix (or the sliding window) as in Megatron-LM (SC'21 eq. 3) and PaLM. HFU adds "
    "recomputation.";

namespace {

using coll::CollectiveOp;
using coll::GroupLinks;

// Megatron-LM's default gradient bucket (--ddp-bucket-size): 40M parameters; the last bucket's
// reduction cannot overlap with backward.
constexpr double kBucketParams = 40e6;
// Bytes touched per parameter by a fused Adam step: read FP32 master, m, v, gradient (16), write
// master, m, v (12), write the 16-bit copy (2).
constexpr double kAdamBytesPerParam = 30.0;

struct Links {
  Bandwidth nvlink_busbw;   // achieved
  Bandwidth nic_per_gpu;    // achieved, across the fabric
  Time nvlink_alpha;
  Time net_alpha;
};

Links links(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const ClusterConfig& c = cfg.cluster;
  const NetworkConfig& n = cfg.network;
  Links l;
  const Bandwidth nvlink = n.nvlink_bandwidth.value_or(hw.nvlink_bandwidth);
  l.nvlink_busbw = hw.eff.nvlink_busbw * nvlink;
  // Each GPU's share of the node's NICs; oversubscribed tiers divide what crosses them (the
  // analytical level assumes a group's traffic crosses every tier).
  const double share = static_cast<double>(c.nics_per_node) / c.gpus_per_node;
  const double oversub = n.tor_oversubscription * (n.tiers == 3 ? n.agg_oversubscription : 1.0);
  const Bandwidth fabric = n.fabric_bandwidth.value_or(c.nic_bandwidth);
  const double nic = std::min(c.nic_bandwidth.bytes_per_s, fabric.bytes_per_s) * share / oversub;
  l.nic_per_gpu = Bandwidth{nic * hw.eff.network_busbw};
  l.nvlink_alpha = hw.eff.nvlink_collective_latency;
  l.net_alpha = hw.eff.network_collective_latency;
  return l;
}

GroupLinks group(int ranks, int ranks_per_node, const Links& l) {
  GroupLinks g;
  g.ranks = ranks;
  g.ranks_per_node = std::max(1, std::min(ranks, ranks_per_node));
  g.intra_busbw = l.nvlink_busbw;
  g.nic_per_gpu = l.nic_per_gpu;
  g.intra_alpha = l.nvlink_alpha;
  g.inter_alpha = l.net_alpha;
  return g;
}

// Forward and backward time of one layer for one micro-batch on one GPU.
struct LayerTimes {
  Time forward;
  Time backward;      // includes recomputation
  Time attention_fwd; // the attention core alone (for context-parallel overlap)
};

LayerTimes layer_times(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const Precision prec = cfg.training.precision;
  Time gemm_fwd, gemm_bwd;
  for (const work::GemmShape& g : work::layer_gemms(cfg)) {
    gemm_fwd += calib::gemm_time(g.m, g.n, g.k, prec, hw);
    // Backward: input gradient (m x n)(n x k) and weight gradient (k x m)(m x n).
    gemm_bwd += calib::gemm_time(g.m, g.k, g.n, prec, hw) + calib::gemm_time(g.k, g.n, g.m, prec, hw);
  }
  const work::AttentionFlops att = work::layer_attention_flops(cfg);
  const bool fused = cfg.training.flash_attention;
  const Time att_fwd = calib::attention_time(att.executed, fused, prec, hw);
  // Backward attention: 2x the forward GEMM work, plus the recomputed scores in fused kernels
  // (FlashAttention-2 backward does 2.5x the forward FLOPs; Dao 2023, section 3.1).
  const Time att_bwd = calib::attention_time(Flops{att.executed.n * (fused ? 2.5 : 2.0)}, fused, prec, hw);
  const Bytes elem = work::layer_elementwise_bytes(cfg);
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

// Exposed tensor/sequence-parallel and context-parallel communication of one layer, one
// micro-batch (forward + backward).
Time layer_tp_time(const ScenarioConfig& cfg, const Links& l, const LayerTimes& lt) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  Time total;
  if (p.tp > 1) {
    const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
    const Bytes activation = bytes_of(tokens * m.hidden * 2.0);
    const GroupLinks g = group(p.tp, p.tp, l);
    // Per block (attention, MLP): all-gather + reduce-scatter with SP, or one all-reduce; the
    // parallel block (PaLM, MegaScale) shares one pair between attention and MLP.
    const Time per_block = p.sequence_parallel
                               ? collective_time(CollectiveOp::kAllGather, activation, g) +
                                     collective_time(CollectiveOp::kReduceScatter, activation, g)
                               : collective_time(CollectiveOp::kAllReduce, activation, g);
    const int blocks = cfg.training.parallel_block ? 1 : 2;
    int passes = 2;  // forward and backward
    if (cfg.training.recompute == Recompute::kFull) passes = 3;
    Time tp = static_cast<int64_t>(blocks * passes) * per_block;
    // Overlap splits each collective into tp chunks pipelined with the GEMM; the first
    // (all-gather) or last (reduce-scatter) chunk stays exposed (MegaScale section 3.2).
    if (cfg.training.overlap.tp_comm) tp = (1.0 / p.tp) * tp;
    total += tp;
  }
  if (p.cp > 1) {
    // Context parallelism: K and V of every chunk pass around the CP ring (forward; the
    // backward sends them and their gradients), overlapped with the attention core.
    const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
    const double kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
    const Bytes kv_bytes = bytes_of(tokens * 2.0 * kv * (static_cast<double>(m.hidden) / m.heads) * 2.0 / p.tp);
    const int per_node = std::min(p.cp, std::max(1, cfg.cluster.gpus_per_node / p.tp));
    const GroupLinks g = group(p.cp, per_node, l);
    const Time ring = collective_time(CollectiveOp::kAllGather, Bytes{kv_bytes.n * p.cp}, g);
    const Time fwd = max(Time::zero(), ring - lt.attention_fwd);
    const Time bwd = max(Time::zero(), ring + ring - 2.5 * lt.attention_fwd);
    total += fwd + bwd;
  }
  return total;
}

// The LM head and loss on the last stage, per micro-batch: forward + backward.
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

}  // namespace

TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const ParallelismConfig& p = cfg.parallelism;
  const ModelConfig& m = cfg.model;
  const ClusterConfig& c = cfg.cluster;
  TrainingEstimate est;
  est.dp = data_parallel_size(cfg);
  est.micro_batches = micro_batches_per_iteration(cfg);
  est.flops = work::iteration_flops(cfg);
  est.memory = work::memory_per_gpu(cfg);
  est.memory_capacity = hw.hbm_capacity - hw.memory_reserved;
  const FlopRate peak = hw.peak(cfg.training.precision);
  const Links l = links(cfg, hw);

  // --- One micro-batch on the slowest stage (the last one, which also runs the LM head).
  const LayerTimes lt = layer_times(cfg, hw);
  const double layers_per_stage = static_cast<double>(m.layers) / p.pp;
  const Time stage_compute = layers_per_stage * (lt.forward + lt.backward) + head_time(cfg, hw);
  const Time stage_tp = layers_per_stage * layer_tp_time(cfg, l, lt);
  const Time mb = stage_compute + stage_tp;
  est.microbatch_stage_time = mb;

  TrainingBreakdown& b = est.breakdown;
  const int64_t mbs = est.micro_batches;
  b.compute = mbs * stage_compute;
  b.tp_exposed = mbs * stage_tp;
  // Interleaved 1F1B: the fill and drain cost (pp-1)/vpp micro-batch slots (Narayanan et al.
  // SC'21, section 2.2.2); plain 1F1B is vpp = 1.
  b.bubble = (static_cast<double>(p.pp - 1) / p.vpp) * mb;

  // --- Pipeline point-to-point: each TP rank sends its 1/tp slice of the activation over its
  // own rail (Megatron's scatter/gather optimisation), forward and backward at each of the vpp
  // stage boundaries a micro-batch crosses on this rank.
  if (p.pp > 1) {
    const double tokens = static_cast<double>(p.micro_batch) * m.seq_len / p.cp;
    const Bytes msg = bytes_of(tokens * m.hidden * 2.0 / p.tp);
    const Time one = l.net_alpha + serialization_time(msg, l.nic_per_gpu);
    // Without overlap every transfer waits; with it only the fill and drain ones do (never more
    // than without).
    int64_t exposed_transfers = 2 * mbs * p.vpp;
    if (cfg.training.overlap.pp_p2p) exposed_transfers = std::min<int64_t>(exposed_transfers, 2 * (p.pp - 1));
    b.pp_exposed = exposed_transfers * one;
  }

  // --- Data parallelism: gradients reduce-scattered (ZeRO >= 1) or all-reduced (ZeRO-0), then
  // updated parameters all-gathered. DP ranks follow TP (and CP) in rank order, so a node holds
  // gpus_per_node / (tp cp) ranks of each DP group (Megatron-LM's default order tp-cp-dp-pp).
  const double params = est.memory.params_on_gpu;
  if (est.dp > 1) {
    const int per_node = std::max(1, c.gpus_per_node / (p.tp * p.cp));
    const GroupLinks g = group(est.dp, per_node, l);
    const double grad_bytes = cfg.training.fp32_grad_reduce ? 4.0 : 2.0;
    const Bytes grads = bytes_of(params * grad_bytes);
    const Bytes weights = bytes_of(params * 2.0);
    Time reduce, gather;
    if (p.zero_stage == 0) {
      reduce = collective_time(CollectiveOp::kAllReduce, grads, g);
    } else {
      reduce = collective_time(CollectiveOp::kReduceScatter, grads, g);
      gather = collective_time(CollectiveOp::kAllGather, weights, g);
    }
    if (p.zero_stage == 3) {
      // Parameters gathered again for every micro-batch's forward and backward.
      gather += static_cast<int64_t>(2 * mbs) * collective_time(CollectiveOp::kAllGather, weights, g);
    }
    // Overlap windows: the last micro-batch's backward for the reduction, the first
    // micro-batch's forward for the gather; the last bucket is always exposed.
    const double bucket_share = std::min(1.0, kBucketParams / std::max(params, 1.0));
    const Time bwd_window = layers_per_stage * lt.backward;
    const Time fwd_window = layers_per_stage * lt.forward;
    const Time exposed_reduce = cfg.training.overlap.dp_grad_reduce
                                    ? max(bucket_share * reduce, reduce - bwd_window)
                                    : reduce;
    const Time exposed_gather = cfg.training.overlap.dp_param_gather && p.zero_stage >= 1
                                    ? max(bucket_share * gather, gather - fwd_window)
                                    : gather;
    b.dp_exposed = exposed_reduce + exposed_gather;
  }

  // --- Optimizer step over this rank's shard, and the tied-embedding gradient all-reduce
  // between the first and last stage.
  const double shard = p.zero_stage >= 1 ? params / est.dp : params;
  b.optimizer = calib::memory_time(bytes_of(shard * kAdamBytesPerParam), hw);
  if (p.pp > 1 && m.tied_embeddings) {
    const Bytes emb = bytes_of(static_cast<double>(m.vocab) * m.hidden / p.tp * 4.0);
    b.optimizer += collective_time(CollectiveOp::kAllReduce, emb, group(2, 1, l));
  }

  est.iteration = b.compute + b.tp_exposed + b.pp_exposed + b.bubble + b.dp_exposed + b.optimizer;
  const double seconds = est.iteration.as_s();
  const double tokens = static_cast<double>(cfg.training.global_batch) * m.seq_len;
  est.tokens_per_s = tokens / seconds;
  est.mfu = est.flops.model.n / (seconds * c.gpus * peak.per_s);
  est.hfu = est.flops.hardware.n / (seconds * c.gpus * peak.per_s);
  return est;
}

std::vector<InputError> check_memory_fit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const work::MemoryEstimate mem = work::memory_per_gpu(cfg);
  const Bytes usable = hw.hbm_capacity - hw.memory_reserved;
  if (mem.total() <= usable) return {};
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "the plan needs %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, "
                "activations %.1f) but one %s has %.1f GiB usable (%.1f GiB HBM minus %.1f GiB "
                "reserved); raise tp/pp, the ZeRO stage or recomputation, or lower micro_batch",
                mem.total().as_gib(), mem.weights.as_gib(), mem.gradients.as_gib(),
                mem.optimizer.as_gib(), mem.activations.as_gib(), hw.name.c_str(), usable.as_gib(),
                hw.hbm_capacity.as_gib(), hw.memory_reserved.as_gib());
  const auto it = cfg.lines.find("parallelism");
  return {InputError{cfg.file, it == cfg.lines.end() ? 0 : it->second, "parallelism", buf}};
}

}  // namespace clustersim::engine
