// SPDX-License-Identifier: Apache-2.0
// Mixture-of-Experts arithmetic: which layers are MoE, parameters (total and active), the
// token-to-expert routing matrix of an expert-parallel group, and the per-layer costs both
// fidelity levels use (attention block, expert GEMMs of the busiest GPU, all-to-all, overlap).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/config.h"
#include "sim/core/units.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/training_costs.h"
#include "workloads/transformer.h"

namespace clustersim::work {

// Layer `layer` (0-based) is an MoE layer: not among the first_dense_layers, and every
// moe_layer_frequency-th layer after them (the first of them included).
bool is_moe_layer(const ModelConfig& m, int layer);
int moe_layer_count(const ModelConfig& m);
// The layers of virtual stage v (chunk v / pp of stage v mod pp), consecutive in model order:
// model.layers / (pp x vpp) each, or a stage's listed layers (parallelism.stage_layers, given as
// stragglers.stage_layers) over its vpp chunks, the virtual stages in order.
struct LayerRange {
  int first = 0;
  int count = 0;
};
LayerRange virtual_stage_layers(const ScenarioConfig& cfg, int v);
// MoE layers in each of stage `stage`'s vpp chunks (chunk c holds virtual stage c x pp + stage):
// dense leading layers or every other layer MoE leave some fewer or none, and those have no
// expert gradients to reduce or experts to gather.
std::vector<int> moe_layers_per_chunk(const ScenarioConfig& cfg, int stage);
// Width of one expert: moe.expert_ffn_hidden, else model.ffn_hidden (else 4h).
double expert_ffn_hidden(const ModelConfig& m);

// Parameters the MoE layers add over the dense model of the same shape, summed over all layers:
//   per MoE layer: (experts + shared) x expert MLP + router (h x experts) - dense MLP
// where an MLP of width f holds 3hf (SwiGLU) or 2hf + f + h (GELU with biases).
double moe_extra_params(const ModelConfig& m);
// The same for the GEMM parameters one token activates: (top_k + shared) x MLP GEMMs + router.
// Model FLOPs (and so MFU) count these active parameters only.
double moe_extra_active_gemm_params(const ModelConfig& m);
// Parameters one token activates, as MoE papers count them (Mixtral 8x7B: 12.9B of 46.7B):
//   every parameter but the routed experts it skips, total - MoE layers x (experts - top_k) x
//   expert MLP (biases included).
double moe_active_params(const ModelConfig& m);

// Where each GPU of a pipeline stage sits in the expert layout: GPUs of the stage in ascending
// order, q-th of them at expert-TP index q mod etp, EP index (q / etp) mod ep, expert-DP index
// q / (etp ep) (Megatron-LM's order: expert TP fastest, then EP, then expert DP).
struct ExpertLayout {
  int ep = 1, etp = 1, edp = 1;
  std::vector<int32_t> stage_gpus;  // ascending
  int32_t gpu(int etp_index, int ep_index, int edp_index) const {
    return stage_gpus[static_cast<size_t>((edp_index * ep + ep_index) * etp + etp_index)];
  }
};
ExpertLayout expert_layout(const ScenarioConfig& cfg, int stage);

// An expert domain (ep x expert_tp GPUs of stage 0) over more nodes than its size needs, where
// ep x expert_tp neither divides nor is a multiple of gpus_per_node: its all-to-alls cross the
// NICs. The first such domain's lowest and highest GPU and its nodes; nullopt when none.
struct StraddlingDomain {
  int32_t first_gpu = 0, last_gpu = 0;
  int nodes = 0;
};
std::optional<StraddlingDomain> straddling_expert_domain(const ScenarioConfig& cfg);

// Token-expert pairs of one micro-batch in one expert domain (ep x etp GPUs sharing a copy of
// the experts): sources are the domain's GPUs (index etp_index + etp x ep_index), each holding
// `tokens_per_gpu` tokens; destinations are the ep expert owners (experts / ep consecutive
// experts each). Every token draws top_k distinct experts from the routing weights with a seeded
// generator (splitmix64, identical on every platform); with a capacity factor cf > 0 each expert
// keeps at most ceil(cf x mean) pairs, dropping the rest evenly over sources.
struct RoutingMatrix {
  int sources = 0;
  int owners = 0;
  std::vector<double> pairs;          // [source x owners + owner]
  std::vector<double> expert_pairs;   // per expert, after drops
  double dropped = 0;                 // pairs dropped by the capacity factor
  double owner_pairs(int owner) const;
  // The busiest owner's pairs and every owner's together, after drops.
  struct OwnerTotals {
    double busiest = 0;
    double kept = 0;
  };
  OwnerTotals owner_totals() const;
  // Busiest owner's pairs / mean owner pairs (1 = balanced).
  double imbalance() const;
};
RoutingMatrix route_tokens(const MoeConfig& moe, int ep, int etp, int64_t tokens_per_gpu, uint64_t stream);

// Routing draws already made, for the callers that price many layers or plans: route_tokens is a
// pure function of the experts' routing, the expert layout's ep x etp, the tokens per GPU and the
// stream, and draws every token (256 experts, top 8, over 64 GPUs of 4,096 tokens: 10 ms a draw,
// four a layer). An estimate prices each layer's draw 0 twice (fabric_contention's routes and the
// layer's cost); a sweep's plans that differ in pp, vpp, ZeRO, overlap or precision draw alike.
// Held by the caller (an estimate, a sweep's evaluator): no state outside it. Keeps at most about
// kMaxBytes of matrices, then starts over; results are those of route_tokens, draw for draw.
class RoutingDraws {
 public:
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  RoutingMatrix draw(const MoeConfig& moe, int ep, int etp, int64_t tokens_per_gpu, uint64_t stream);
  size_t size() const { return done_.size(); }

 private:
  std::map<std::string, RoutingMatrix> done_;
  size_t bytes_ = 0;
};

// The transfers of one dispatch all-to-all of `routing` in domain `edp_index` of `layout`:
// source GPU (etp i, ep j) sends pairs[s][d] x bytes_per_pair to GPU (etp i, ep d). The combine
// is the same with source and destination swapped.
std::vector<coll::FlowSpec> dispatch_transfers(const RoutingMatrix& routing, const ExpertLayout& layout,
                                               int edp_index, double bytes_per_pair, int gpus_per_node);
// dispatch_transfers of every expert domain of `layout` (they dispatch at once), domain 0's first.
std::vector<coll::FlowSpec> all_domains_dispatch(const RoutingMatrix& routing, const ExpertLayout& layout,
                                                 double bytes_per_pair, int gpus_per_node);
// The dispatch flows of MoE layer `layer` as moe_layer_cost prices them: the layer's routing draw
// (route_tokens, stream = layer) in every expert domain of its stage.
// `draws` (optional) keeps the draws for the layer's cost (moe_stage_costs) to reuse.
std::vector<coll::FlowSpec> layer_dispatch_flows(const ScenarioConfig& cfg, int layer, RoutingDraws* draws = nullptr);

// Bytes per value of the all-to-all under training.comm_precision (the gradient sync's:
// grad_bytes_per_value, transformer.h).
double a2a_bytes_per_value(const TrainingConfig& t);

// The scenario as attention computes it: with attention_parallel sp each GPU of the tp group
// computes 1/tp of the attention with the whole weights (the shapes of cp x tp ranks, tp 1; the
// FLOPs of Ulysses' h/tp heads over the whole sequence are the same); with tp it is unchanged.
// Its communication is priced in moe_layer_cost (Ulysses all-to-alls, not a context-parallel ring).
ScenarioConfig attention_view(const ScenarioConfig& cfg);

// Costs of one layer for one micro-batch on one GPU. For an MoE layer the expert part is that of
// the busiest GPU of the domain (the all-to-all makes every GPU wait for it).
struct MoeLayerCost {
  bool moe = false;
  Time attention_fwd, attention_bwd;  // attention block, norms, router, permutation, shared experts
  // Of attention_fwd + attention_bwd (forward + backward, recomputation excluded): QKV and output
  // GEMMs, attention core, norms / residuals, router GEMM + token permutation, shared experts.
  Time part_attention_gemm, part_attention_core, part_elementwise, part_router_permute, part_shared;
  Time attention_core_fwd;            // attention core alone (the K/V all-gather hides behind it)
  Time attention_comm;                // TP / SP traffic of the attention block (and, under tp,
                                      // the shared experts' TP pair), fwd + bwd, exposed
  Time expert_fwd, expert_bwd;        // busiest GPU, whole micro-batch in one piece
  Time dispatch, combine;             // one all-to-all each (plus expert-TP gather / scatter)
  int chunks = 1;                     // chunk count chosen (<= overlap.a2a_chunks)
  Time moe_fwd, moe_bwd;              // dispatch + experts + combine with the chosen chunking
  double imbalance = 1.0;
  double dropped_fraction = 0;        // token-expert pairs the capacity factor drops / all pairs
  Bytes a2a_bytes_max_gpu;            // busiest GPU's dispatch bytes, sent or received
  // For the flow level: the dispatch transfers of every expert domain of the stage, as NCCL moves
  // them (through PXN, network.pxn); the combine's, stored reversed (the flow level runs a
  // combine's set reversed; empty: the dispatch's, as without PXN the combine is the dispatch
  // reversed); and the part of dispatch (and combine) that is not those transfers' bandwidth
  // time: the all-to-all and expert-TP latencies, paid once per all-to-all however many chunks,
  // and the expert-TP gather's bandwidth time, spread over the chunks.
  std::vector<coll::FlowSpec> dispatch_flows;
  std::vector<coll::FlowSpec> combine_flows;
  // What one dispatch (combine) keeps on the NICs: the busiest NIC's bytes between nodes, sent or
  // received, of every expert domain of the stage at once and through PXN, at the NIC's line rate
  // (since 2026-12-06; before, the all-to-all's time times the share of its bytes leaving the
  // node, which undercounted where the NICs bound it).
  Time dispatch_nic, combine_nic;
  Time a2a_latency;
  Time etp_bandwidth_time;
  // Forward + backward of the whole layer as the analytical level counts it.
  Time compute() const { return attention_fwd + attention_bwd + (moe ? expert_fwd + expert_bwd : Time::zero()); }
  // Never below 0: moe_fwd covers expert_fwd (a few picoseconds of rounding aside).
  Time ep_exposed() const { return moe ? max(Time::zero(), moe_fwd + moe_bwd - expert_fwd - expert_bwd) : Time::zero(); }
};

// The links an MoE layer's collectives use. From one TrainingLinks (every tier's oversubscription)
// all are the same; the analytical level gives each group kind its own.
struct MoeLinks {
  MoeLinks(const TrainingLinks& l) : base(l), tp(l), cp(l) {}  // NOLINT: implicit on purpose
  TrainingLinks base;  // expert TP groups
  TrainingLinks tp;    // the attention block's TP (or Ulysses) groups and the shared experts' TP pair
  TrainingLinks cp;    // the attention block's CP ring
  // Per layer (optional): what the routed fabric adds to the layer's dispatch (sim/engine's
  // fabric_contention routes layer_dispatch_flows: ECMP collisions and a skewed routing's large
  // flows on single links included). The all-to-all runs at the larger of it and
  // fabric_slowdown's block model of the same flows (one stage's expert domains at once: other
  // stages' all-to-alls are taken to run at other times), from `base`.
  std::vector<double> a2a;
};
// `l` with the attention block's TP groups and CP rings priced by the tiers their members cross
// as placed (links_for_ring), as a dense model's are.
MoeLinks moe_links(const ScenarioConfig& cfg, const TrainingLinks& l);

// One layer's costs. `layer` picks the routing draw (seed, layer) and whether it is MoE.
// Every GEMM of an MoE layer is priced as the slower of its tensor-core time and its HBM traffic
// (moe_gemm_time): expert GEMMs see only the tokens routed to one expert, so their weight
// gradients (K = those tokens) are short enough to be bound by the FP32 main-grad update.
// `draws` (optional): routing draws made before, and kept for later (RoutingDraws).
MoeLayerCost moe_layer_cost(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const MoeLinks& l, int layer,
                            RoutingDraws* draws = nullptr);

// Forward GEMM (m x k)(k x n) and its two backward GEMMs, each the slower of calib::gemm_time and
// its HBM traffic (roofline; Williams, Waterman, Patterson, CACM 52(4), 2009): operands read once
// at `operand_bytes` per element, the output written once. The weight gradient (k x m)(m x n)
// accumulates into the main-grad buffer of `grad_bytes` per element, read and written (Megatron-LM
// gradient_accumulation_fusion: the wgrad GEMM's epilogue adds into the FP32 main_grad,
// megatron/core/tensor_parallel/layers.py; Transformer Engine's GroupedLinear does the same for
// expert GEMMs with fuse_wgrad_accumulation). So per element of a weight 2 x grad_bytes move per
// micro-batch, and a weight gradient over few tokens m is bound by them (about m / grad_bytes
// FLOP per byte, against peak / HBM bandwidth = 260 on an H800).
struct GemmPassTimes {
  Time fwd, bwd;
};
GemmPassTimes moe_gemm_time(int64_t m, int64_t n, int64_t k, Precision precision, double operand_bytes,
                            double grad_bytes, const calib::HardwareProfile& hw);

// Pipelined dispatch / experts / combine in c chunks, given one chunk's dispatch d, expert
// compute e and combine k (each chunk's stage runs after the previous chunk's on the same
// resource). Dispatch and combine share each GPU's NIC and the fabric (both send and receive),
// so a chunk's communication d + k is one stage and the experts the other:
//   T(c) = d + e + k + (c - 1) max(d + k, e)
// moe_layer_cost evaluates c = 1 .. overlap.a2a_chunks and keeps the fastest. As in COMET (Zhang
// et al., MLSys 2025: tile-level overlap inside fused kernels, adaptively sized), a chunk is 1/c
// of the transfer and of the expert GEMM work and the all-to-all latency is paid once, so
// T = 2 latency + chunk_pipeline_time(d/c, e/c, k/c, c) <= d + e + k: never slower than none.
Time chunk_pipeline_time(Time d, Time e, Time k, int chunks);

// Per-micro-batch costs of one pipeline stage (its layers in order) and the slowest stage.
struct MoeStageCost {
  int stage = 0;
  Time compute;      // forward + backward compute (experts unchunked)
  Time forward, backward;  // with communication on the line (for DP overlap windows)
  Time tp_exposed;   // attention TP / SP communication
  Time ep_exposed;   // all-to-all (and expert-TP) time not hidden by expert compute
  std::vector<int> layers;
  std::vector<MoeLayerCost> costs;
  std::vector<size_t> chunk_begin;  // where each of the stage's vpp chunks starts in `layers`, and the end (vpp + 1)
  std::vector<ChunkTime> chunks;    // each chunk's forward and backward, as `forward` and `backward` add them up
};
std::vector<MoeStageCost> moe_stage_costs(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const MoeLinks& l,
                                          RoutingDraws* draws = nullptr);

// Memory per GPU of an MoE plan: attention and dense layers sharded by tp (replicated under sp)
// and ZeRO over their data-parallel group; experts sharded by ep x expert_tp and ZeRO over the
// expert-data-parallel group (gpus / pp / (ep x expert_tp)).
MemoryEstimate moe_memory_per_gpu(const ScenarioConfig& cfg);

// Gradient reduce and parameter gather of one iteration on the most loaded stage: the dense part
// over its data-parallel group, the experts over their expert-data-parallel group (rings,
// collective_time), at the comm_precision's gradient bytes.
struct MoeDpTimes {
  Time reduce;
  Time gather;
  double dense_params = 0;   // on one GPU
  double expert_params = 0;  // on one GPU
  int expert_chunks = 1;     // chunks with MoE layers on the stage with the most: one expert gather each
  int expert_layers = 1;     // MoE layers on the stage with the most: one expert reduction each (flow graph)
  Time reduce_dense;         // reduce's two parts: the dense parameters' and the experts'
  Time reduce_expert;
  coll::GroupLinks dense_group;   // the dense parameters' replicas (dp, or dp x tp under sp attention)
  coll::GroupLinks expert_group;  // the expert parameters' replicas (expert dp)
};
// `dense_l` and `expert_l`: the links each group's rings see (the analytical level gives each its
// own fabric contention).
MoeDpTimes moe_dp_times(const ScenarioConfig& cfg, const TrainingLinks& dense_l, const TrainingLinks& expert_l);

}  // namespace clustersim::work
