// SPDX-License-Identifier: Apache-2.0
// Per-op costs of one training step shared by the analytical and flow levels: layer compute
// times from the cost model, the LM head, TP/CP communication and the links collectives see.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "calibration/compute_cost.h"
#include "calibration/hardware_profile.h"
#include "sim/collectives/collective_cost.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/config.h"
#include "sim/core/units.h"

namespace clustersim::work {

// Achieved link speeds and collective latencies of a scenario (efficiencies from the profile).
struct TrainingLinks {
  Bandwidth nvlink_busbw;   // NVLink line rate x nvlink_busbw efficiency
  // Each GPU's share of its node's NICs x network_busbw, capped at network.fabric_bandwidth and
  // divided by every tier's oversubscription: a group whose traffic crosses every tier.
  Bandwidth nic_per_gpu;
  double oversubscription = 1.0;  // what nic_per_gpu was divided by: every tier's (a group spanning pods)
  // The same share at the NICs' line rate, neither capped nor divided: traffic that stays under
  // one ToR group never meets the fabric's switch-to-switch links.
  Bandwidth nic_local_per_gpu;
  Time nvlink_alpha;        // per NCCL collective inside a node
  Time net_alpha;           // per ring step across nodes
};
TrainingLinks training_links(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// `l` for a ring of `members` GPUs `stride` GPUs apart in rank order (a DP ring; a pipeline
// neighbour pair is a ring of 2; a TP group), instead of every tier's oversubscription
// (training_links). A tier whose blocks (ToR group, pod) of B GPUs the ring spans beyond one is
// crossed by one ring edge per block boundary (by every edge, at the ToR tier of a rail-optimised
// fabric, when the ring hops rails: its edges between nodes, k x stride apart with k members on
// each node, join different rails); all min(stride, B) rings that run side by side through a
// block cross its uplinks together: slowdown = max(1, edges x NIC share / the block's uplinks in
// NIC line rates), the block's real uplinks (tor_up per ToR, agg_up per aggregation switch) at
// network.fabric_bandwidth. With per-flow routing (ECMP, D-mod-k) an edge that leaves its block
// also runs on qps_per_connection single links: at most qps x fabric_bandwidth against the GPU's
// NIC share. The slower tier
// sets the rate; a ring inside one ToR runs at the NICs' line rate. Blocks are taken as aligned
// with the first ring; with `starts` > 1 rings start at each of GPUs 0 .. starts - 1 (the
// pipeline pairs of a stage laid out contiguously), and a block leaves when any of them crosses
// its edge (stages of 256 GPUs under ToRs of 384: a third of the pairs stay inside, the rest
// cross; aligned with the first pair only, none did). Throws BadInput (topo::plan_clos) when the
// fabric cannot be built. `nic_scale` multiplies each GPU's NIC share, for traffic that only some
// of a NIC's GPUs send at once (nic_sender_scale).
TrainingLinks links_for_ring(const ScenarioConfig& cfg, const TrainingLinks& l, int64_t stride, int64_t members,
                             int64_t starts = 1, double nic_scale = 1.0);

// Whether a pipeline send or CP ring of some DP replica leaves a ToR group or pod whose uplinks
// carry less than its GPUs' NICs (a tapered tier: oversubscription, or fabric links slower than
// the NICs): folded, every replica's such sends meet on those uplinks in step, which overstates
// what the taper costs (work::folds_replicas). False with fewer than 2 DP replicas, and where
// the fabric cannot be built (the run that builds it says why).
bool replica_lines_cross_taper(const ScenarioConfig& cfg);
// GPUs sharing one NIC (at least 1): GPU i of a node uses NIC i / gpus_per_nic.
int gpus_per_nic(const ClusterConfig& c);
// Whether some tier of the fabric carries less out of its blocks (ToR groups, pods) than their
// GPUs' NICs: oversubscription, or fabric links slower than the NICs. False where the fabric
// cannot be built (the run that builds it says why).
bool fabric_tapered(const ScenarioConfig& cfg);
// Which lines and blocks replica_lines_leave looks at.
struct ReplicaLines {
  bool cp_rings = true;       // CP rings as well as pipeline sends
  bool tapered_only = true;   // blocks under a tapered tier; else pods (3 tiers) or ToR groups (2 tiers)
};
// Whether such a line of some DP replica leaves such a block (replica_lines_cross_taper is
// replica_lines_leave(cfg, {})); false with fewer than 2 DP replicas or where the fabric cannot
// be built.
bool replica_lines_leave(const ScenarioConfig& cfg, ReplicaLines which);

// How many times its NIC share (nics_per_node / gpus_per_node of the node's NICs) a GPU gets for
// traffic that only the GPUs `sends(g)` put across nodes at once: the GPUs behind a NIC over the
// most of them behind one NIC that send (pipeline sends of a node holding several stages, of
// which one sends to another node; the tied-embedding all-reduce of the first and last stage).
// 1 when every GPU sends, or none does. `sends` repeats every `period` GPUs (the placement's
// pattern), so the scan covers lcm(period, gpus_per_node) GPUs at most.
double nic_sender_scale(const ScenarioConfig& cfg, int gpus, int64_t period, const std::function<bool(int)>& sends);

// `l` with each GPU's NIC share (capped and at line rate) `scale` times as large.
TrainingLinks with_nic_scale(const TrainingLinks& l, double scale);

// How much the fabric slows `flows` that run at once (one pipeline stage's expert all-to-alls, a
// serving pool's exchanges) against each GPU's NIC share at line rate: per tier, the ToR (one rail
// of a group when rail-optimised, so traffic between rails leaves it) or pod whose flows send or
// receive the most bytes across its uplinks, against the busiest NIC:
//   slowdown = max(1, bytes through the block's uplinks x NIC share / (its uplinks in NIC line
//                     rates x the busiest GPU's bytes))
// and with per-flow routing (ECMP, D-mod-k) at least largest flow leaving its ToR / busiest GPU's
// bytes x NIC share / (qps x fabric): a flow runs on qps single links, while a GPU's flows to many
// peers take many. ECMP hash collisions are not counted. Throws BadInput (topo::plan_clos) when
// the fabric cannot be built.
double fabric_slowdown(const ScenarioConfig& cfg, std::span<const coll::FlowSpec> flows);

// `l` for collectives that the fabric's routes slow by `slowdown` (>= 1) against each GPU's NIC
// share at line rate (ECMP collisions, oversubscription and slower fabric links together, as
// sim/engine's fabric_contention finds them), instead of every tier's oversubscription.
TrainingLinks links_at_contention(const TrainingLinks& l, double slowdown);

// The attention kernel a training run uses (training.flash_attention and its version).
calib::AttentionKernel attention_kernel(const TrainingConfig& t);

// The precision attention's core (scores, softmax, scores x values) runs at: FP8 training casts
// the linear layers' GEMM inputs only and keeps attention in BF16 (DeepSeek-V3 technical report,
// section 3.3.1: "attention operators" retain their original precision; Transformer Engine's
// DotProductAttention likewise unless its FP8 attention is asked for). FP16 and BF16 run as given.
Precision attention_precision(Precision training);

// The GroupLinks of a group of `ranks` ranks with `ranks_per_node` of them on each node.
coll::GroupLinks group_links(int ranks, int ranks_per_node, const TrainingLinks& l);

// Forward and backward time of one layer for one micro-batch on one GPU.
struct LayerTimes {
  Time forward;
  Time backward;       // includes recomputation
  Time attention_fwd;  // the attention core alone (for context-parallel overlap)
};
// GEMMs (gemm_time per shape, backward = input- and weight-gradient GEMMs), attention (fused
// backward = 2.5x forward FLOPs, FlashAttention-2, Dao 2023 section 3.1), memory-bound kernels
// (backward moves twice the bytes); full recomputation adds a forward, selective the attention.
LayerTimes layer_times(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// The LM head and loss on the last stage, one micro-batch, forward + backward: three GEMMs of
// tokens x vocab/tp x hidden and an FP32 cross-entropy pass over the logits.
Time head_time(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// Tensor/sequence-parallel traffic of one layer, one micro-batch, one pass (forward, or backward
// without recomputation): `pairs` collectives on `activation` bytes each (per block: all-gather +
// reduce-scatter with SP, one all-reduce without; one block with the parallel block, else two).
struct TpLayerTraffic {
  int collectives = 0;   // per pass
  Bytes activation;      // tokens x hidden x 2 bytes per collective (nccl-tests size)
  bool sequence_parallel = true;
};
TpLayerTraffic tp_layer_traffic(const ScenarioConfig& cfg);

// Exposed time of `collectives` TP collective pairs (sequence parallel: all-gather +
// reduce-scatter of the activation; else one all-reduce) per pass, over a micro-batch's passes
// (forward, backward, and the recomputed forward under full recomputation), TP overlap applied:
// what it hides runs beside the pass's compute, `fwd_window` and `bwd_window`, and hides no more
// than that. 0 when tp is 1.
Time tp_collectives_time(const ScenarioConfig& cfg, const TrainingLinks& l, int collectives, Time fwd_window,
                         Time bwd_window);

// The time the TP collectives of one micro-batch's passes on one layer keep a member's NIC share
// busy (coll::collective_nic_time, hidden or not); 0 when the group stays inside a node.
Time tp_collectives_nic_time(const ScenarioConfig& cfg, const TrainingLinks& l, int collectives);

// Exposed tensor/sequence-parallel and context-parallel communication of one layer, one
// micro-batch (forward + backward), as the analytical level counts it: the TP collectives over
// `tp`, the CP ring over `cp`.
Time layer_tp_time(const ScenarioConfig& cfg, const TrainingLinks& tp, const TrainingLinks& cp, const LayerTimes& lt);

// One pass of K and V around the CP ring of one layer and micro-batch over `l`: cp - 1 point-to-
// point steps of cp_kv_bytes (Transformer Engine's p2p exchange, cp_hops); a layer runs
// cp_rings_per_layer of them. 0 when cp is 1.
Time cp_ring_time(const ScenarioConfig& cfg, const TrainingLinks& l);

// Whether the backward pass re-runs the attention core's forward: full recomputation, or
// selective (Korthikanti et al. 2022 recompute the core attention); with context parallelism its
// K/V ring runs again with it.
bool recomputes_attention(const TrainingConfig& t);

// CP ring passes of one layer and micro-batch: the forward's K and V, the backward's K, V and
// their gradients (two), and the recomputed forward's where recomputes_attention. Until
// 2026-12-06 three whatever the recomputation (2 A100s, cp 2, 8k tokens, full recompute: 14% short).
double cp_rings_per_layer(const TrainingConfig& t);
// Of them, in the backward pass (with the recomputed forward's).
double cp_backward_rings(const TrainingConfig& t);
// The attention compute the backward's rings run beside, in forward attention cores: 2.5 (its
// backward) and the recomputed forward's where recomputes_attention.
double cp_backward_window(const TrainingConfig& t);

// What selective recomputation adds to a layer's backward: the attention core's forward again,
// its matmuls (`core_fwd`) and, unfused, the softmax and dropout over the score matrix of `cfg`'s
// view (Korthikanti et al. 2022, section 5; the matmuls alone until 2026-12-06: 8 layers of
// h 4096, s 4096 on 8 A100s, +0.26 ms a layer where about 0.64 is due). Dense and MoE layers.
Time selective_recompute_time(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, Time core_fwd);

// The time one CP ring pass keeps a member's NIC share busy (coll::collective_nic_time).
Time cp_ring_nic_time(const ScenarioConfig& cfg, const TrainingLinks& l);

// Bytes of K and V one CP rank holds for one layer and micro-batch (the ring passes cp of them).
Bytes cp_kv_bytes(const ScenarioConfig& cfg);

// Gradient bucket size in parameters at the flow level: training.dp_bucket_size, or Megatron-LM's
// rule for its distributed optimizer, max(40M, 1M x dp) (megatron/core/distributed, DDP config).
double dp_bucket_params(const ScenarioConfig& cfg, int dp);

// Whether each step ends with a gather of the updated 16-bit weights over the DP group. ZeRO-1
// and -2 (Megatron-LM's distributed optimizer) gather every shard once per step; ZeRO-3 keeps the
// weights sharded and gathers them before each pass instead (Rajbhandari et al., "ZeRO", SC'20,
// section 5.3), so it has no step gather; ZeRO-0 holds whole weights.
inline bool gathers_weights_each_step(const ParallelismConfig& p) { return p.zero_stage == 1 || p.zero_stage == 2; }

// Bytes touched per parameter by a fused Adam step: read FP32 master, m, v, gradient (16), write
// master, m, v (12), write the 16-bit copy (2).
inline constexpr double kAdamBytesPerParam = 30.0;

}  // namespace clustersim::work
