// SPDX-License-Identifier: Apache-2.0
// Serving cost models: weights and KV cache per GPU, and the time of one batched step (prefill
// and decode tokens together) in each deployment mode. Pure functions of shapes and profiles.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/collectives/collective_cost.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/config.h"
#include "sim/core/error.h"
#include "sim/core/units.h"
#include "sim/engine/inference_trace.h"

namespace clustersim::engine {

// The served model: the dense `model` section plus `inference.moe`. Attention is grouped-query
// (kv_heads), the MLP SwiGLU (3 matrices) or GELU (2); no biases (serving models rarely have any).
struct ServingModel {
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;
  int ffn_hidden = 0;  // dense MLP width
  int vocab = 0;
  bool swiglu = true;
  bool tied_embeddings = false;
  MoeServingConfig moe;     // experts == 0: dense
  // inference.weight_precision: the linear layers' (attention projections, MLPs, experts) bytes
  // per parameter and GEMM precision; fp8 also feeds those GEMMs fp8 inputs. Embeddings, the LM
  // head and the router stay bf16, as do attention's own kernels, hidden states between layers
  // and every collective (ModelOpt's FP8 recipe, which TensorRT-LLM serves).
  double weight_bytes = 2;
  Precision precision = Precision::kBf16;
  double kv_bytes = 2;      // per KV element (bf16 or fp8)
  static constexpr double kBf16Bytes = 2;  // everything the weight precision leaves unquantised

  bool is_moe() const { return moe.experts > 0; }
  // MoE layers: from dense_layers on, every moe_layer_frequency-th (the first of them MoE); the
  // others have the dense MLP (model.ffn_hidden).
  bool is_moe_layer(int layer) const {
    return is_moe() && layer >= moe.dense_layers && (layer - moe.dense_layers) % moe.moe_layer_frequency == 0;
  }
  int moe_layers() const {
    return is_moe() ? (layers - moe.dense_layers + moe.moe_layer_frequency - 1) / moe.moe_layer_frequency : 0;
  }
  int dense_mlp_layers() const { return layers - moe_layers(); }
  int expert_ffn() const { return moe.expert_ffn_hidden > 0 ? moe.expert_ffn_hidden : ffn_hidden; }
  int mlp_matrices() const { return swiglu ? 3 : 2; }
};
ServingModel serving_model(const ScenarioConfig& cfg);

// Parameter counts (no biases; norms are 2h per layer):
//   attention  h (heads d) + 2 h (kv d) + (heads d) h + 2h          (Q, K, V, O projections)
//   MLP        matrices x h x f                                     (f = ffn or expert width)
//   router     h x experts
//   embedding  V h, LM head V h unless tied
double attention_params_per_layer(const ServingModel& m);
double mlp_params(const ServingModel& m, int width);
double total_params(const ServingModel& m);

// KV cache of one token, whole model: layers x 2 (K and V) x kv_heads x head_dim x kv_bytes.
// With tensor parallelism each rank holds ceil(kv_heads / tp) heads (replicated when tp > kv_heads).
Bytes kv_bytes_per_token(const ServingModel& m, int tp = 1);

// One pool placed on the cluster: GPUs [first_gpu, first_gpu + gpus).
enum class PoolRole { kColocated, kPrefill, kDecode, kAttention, kExpert };
const char* to_string(PoolRole r);

struct PoolPlan {
  PoolRole role = PoolRole::kColocated;
  calib::HardwareProfile hw;
  int first_gpu = 0;
  int gpus = 0;
  int tp = 1;           // attention tensor parallelism (expert pool: per expert)
  int ep = 1;           // GPUs per instance (colocated, prefill, decode); attention pool: tp
  int expert_tp = 1;    // GPUs each expert is split over inside an instance (colocated, prefill, decode)
  double price_per_gpu_hour = 0;
  int max_batch = 256;  // sequences in one step of an instance (the pool's max_batch, else inference.max_batch)
  std::string max_batch_key = "inference.max_batch";  // the key that set it
  // Derived.
  int instances = 1;          // gpus / ep (attention and expert pools: 1, the deployment)
  int attention_replicas = 1; // data-parallel attention replicas per instance (ep / tp; attention pool gpus / tp)
  Bytes weights_per_gpu;
  Bytes kv_budget_per_gpu;     // KV cache room on each GPU
  int64_t kv_tokens_per_replica = 0;  // KV tokens one attention replica holds
};

// GPUs each expert is split over in an instance of `ep` GPUs when the pool does not say
// (expert_tp): ep / experts when the instance has more GPUs than experts, else 1 (1 for a dense
// model).
int default_expert_tp(const ServingModel& m, int ep);

// The links a pool's collectives and transfers use (already scaled by achieved efficiency).
struct ServingLinks {
  Bandwidth nvlink_busbw;  // per GPU, inside a node
  Bandwidth nic_per_gpu;   // per GPU across the fabric: its share of its node's NICs at line rate
  // What the fabric adds (>= 1) to the pool's collectives that leave a node, against nic_per_gpu:
  double tp_slowdown = 1.0;  // its TP groups (tp consecutive GPUs; the expert pool's expert TP groups)
  double ep_slowdown = 1.0;  // its instances' expert all-to-alls (ep consecutive GPUs, all instances at once)
  Time nvlink_alpha;       // per collective inside a node
  Time net_alpha;          // per step across nodes
  int gpus_per_node = 8;
  int nics_per_node = 8;
  bool pxn = true;          // network.pxn: the expert all-to-all's sends to other rails go by NVLink first
  Bandwidth nic_line_rate;  // one NIC at line rate (cluster.nic_bandwidth)
  // Fewest ranks of one TP group / one instance on a node, as the pool is placed (a pool need not
  // start on a node boundary, so an instance can straddle two nodes; a TP group that would is
  // refused by make_serving_setup); 0: gpus_per_node.
  int tp_ranks_per_node = 0;
  int ep_ranks_per_node = 0;
};
// work::fabric_slowdown of `flows`; where the planner cannot build the fabric, every tier's
// oversubscription x max(1, nic / fabric_bandwidth).
double serving_fabric_slowdown(const ScenarioConfig& cfg, std::span<const coll::FlowSpec> flows);
// The links of pool `p` (placed at p.first_gpu): NIC share x network_busbw, and the slowdowns of
// its TP groups and expert all-to-alls from the bytes that leave each ToR and pod
// (serving_fabric_slowdown; ECMP collisions not counted: route_pool_links adds them).
ServingLinks serving_links(const ScenarioConfig& cfg, const PoolPlan& p);
// TP groups' collectives over tp_slowdown; group_links_ep for the expert all-to-all (ep_slowdown).
coll::GroupLinks group_links(int ranks, const ServingLinks& l);
coll::GroupLinks group_links_ep(int ranks, const ServingLinks& l);

// The flows of a pool's TP groups (a ring all-reduce of `size` per group) and of its instances'
// expert all-to-alls (`size` per instance; none for the attention and expert pools), every group
// and instance at once.
std::vector<coll::FlowSpec> pool_tp_flows(const PoolPlan& p, Bytes size, int gpus_per_node);
// The expert all-to-all of every instance of `p` at once (none for the attention_ffn pools), its
// sends to other rails through PXN where `l.pxn` (coll::route_through_pxn).
std::vector<coll::FlowSpec> pool_ep_flows(const PoolPlan& p, Bytes size, const ServingLinks& l);
// One layer's M2N (attention -> expert pool) and N2M back for `tokens` tokens of model `m`
// (m2n_bytes, n2m_bytes), each spread evenly over the a x e pairs, as the M2N probe sends them:
// at once, so that where both directions leave a ToR by the same uplinks (a rail-optimised ToR
// holds attention and expert GPUs of its rail) they share them.
std::vector<coll::FlowSpec> m2n_exchange_flows(const PoolPlan& a, const PoolPlan& e, const ServingModel& m,
                                               int64_t tokens, int gpus_per_node);

// Memory per GPU of a pool: weights held, then the KV budget (inference.kv_cache_per_gpu, or HBM
// minus the profile's reserve, the weights and an activation workspace of
// max_prefill_tokens x hidden x 2 bytes x 8 live buffers). Throws BadInput at
// "inference.pools.<role>" when the weights or the longest request's KV cache do not fit.
void size_pool_memory(const ServingModel& m, const InferenceConfig& in, const std::string& key, PoolPlan& p);

// What one step computes, summed over its sequences.
struct StepLoad {
  int64_t decode_seqs = 0;      // sequences generating one token
  double decode_context = 0;    // sum of their context lengths (tokens read from the KV cache)
  int64_t prefill_seqs = 0;
  int64_t prefill_tokens = 0;   // prompt tokens processed
  double prefill_pairs = 0;     // sum of s^2 / 2 over prompts (causal attention pairs)
  int64_t longest_prompt = 0;   // a request lives on one replica: its work cannot be split
  double largest_pairs = 0;     // the pairs of that one request's prompt (or chunk)
  int64_t longest_context = 0;
  int64_t tokens() const { return decode_seqs + prefill_tokens; }
  int64_t seqs() const { return decode_seqs + prefill_seqs; }
  void add_decode(int64_t context);
  void add_prefill(int64_t prompt);
  // `chunk` prompt tokens after `done` already cached: each attends to the cached ones and the
  // chunk's earlier ones, chunk x done + chunk^2 / 2 pairs (add_prefill is done = 0).
  void add_prefill_chunk(int64_t done, int64_t chunk);
  // The busiest of `replicas` (data-parallel attention replicas, each holding whole requests),
  // requests spread by count as a round-robin router does: ceil(n / replicas) requests of the
  // mean size, and never less than the largest single request (one 4,096-token prompt on 8
  // replicas is still 4,096 tokens on one; 9 equal prompts put two on one). Decode and prefill
  // are dealt separately, so with both in a step it may be heavier than any real replica, and
  // where sizes differ lighter. The serving simulation knows where each request sits and passes
  // the busiest replica's load instead (busiest_replica); sweeps of uniform loads use this.
  StepLoad share(int replicas) const;
};

// One step's time and where it went. attention + ffn + communication + idle = total, counting an
// instant as attention when the attention side computes, else FFN when experts compute, else
// communication when bytes are in flight, else idle (ping-pong overlap would otherwise count twice).
struct StepTiming {
  Time total;
  Time attention;
  Time ffn;
  Time communication;
  Time idle;
  Time attention_busy;  // attention-side compute (colocated: the same GPUs as the FFN)
  Time ffn_busy;        // expert / MLP compute
};

// A GEMM that has fewer output tiles than SMs, run as cuBLAS and CUTLASS do with split-K ("parallel
// split-K", CUTLASS docs, efficient_gemm.md): K cut into s = min(SMs / tiles, K / 512) slices so
// that tiles x s fill the SMs; the efficiencies of calib::gemm_shape_efficiency applied to the
// split shape (wave quantisation over tiles x s, inner loop K / s). `count` identical GEMMs
// (grouped) share one launch and their tiles fill the SMs together.
Time split_k_gemm_time(int64_t m, int64_t n, int64_t k, Precision p, const calib::HardwareProfile& hw,
                       int64_t count = 1);

// Roofline time of one GEMM (m x k) * (k x n) on one GPU (Williams, Waterman & Patterson,
// "Roofline", CACM 52(4), 2009): max(compute = the faster of calib::gemm_time and split-K,
// launch + bytes / (HBM x efficiency)) with bytes = w (n k + m k) + 2 m n for weight, input (w
// bytes per element each: bf16, or fp8 quantised) and output (bf16). Decode GEMMs have small m
// and come out memory-bound (weights streamed once per step).
Time gemm_roofline(int64_t m, int64_t n, int64_t k, double w, Precision p, const calib::HardwareProfile& hw,
                   int64_t count = 1);

// Attention-side compute of one layer on one GPU of a replica with `tp` ranks holding `load`
// (this replica's share): QKV and output projections, the attention core (decode: max of
// 4 C (heads/tp) d FLOPs and the KV bytes C x 2 x ceil(kv/tp) x d x kv_bytes; prefill: causal
// fused attention over the prompt pairs, bf16), two norms and residual adds (8 x tokens x h x 2
// bytes).
Time attention_layer_time(const ServingModel& m, const calib::HardwareProfile& hw, const StepLoad& load, int tp);
// Dense MLP of one layer for `tokens` tokens, sharded over `shards` GPUs (TP columns/rows).
Time dense_mlp_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t tokens, int width, int shards);
// Routed experts of one MoE layer on the busiest GPU, for `tokens` tokens entering a group of
// `groups` x `etp` GPUs (E / groups experts per group, each split over etp GPUs). Tokens route
// uniformly: the expected number of experts hit is E (1 - (1 - k/E)^T), each with T k / active
// tokens (times moe.load_imbalance on the busiest); only experts hit stream their weights. Up
// projection, activation kernel (read the up output, write f wide, bf16) and down projection.
Time expert_layer_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t tokens, int groups, int etp);
// Gathering a GPU's `tokens` into expert order before the dispatch and scattering them back after
// the combine: read + write h bf16 values per token-expert pair each way, 4 x tokens x top_k x h
// x 2 bytes (as the training model prices it, workloads/moe.cc).
Time permute_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t tokens);
// LM head: (seqs x h) * (h x V/tp).
Time lm_head_time(const ServingModel& m, const calib::HardwareProfile& hw, int64_t seqs, int tp);

// Colocated (and prefill / decode pool) step on one instance of `p` (ep GPUs, ep/tp attention
// replicas, experts over the ep GPUs): every layer runs attention, TP all-reduce, router, EP
// all-to-all dispatch (at the expert GEMMs' input precision: fp8 under weight_precision fp8),
// experts (+ shared experts over the instance), combine (bf16), then the LM head.
// Sequential on the same GPUs, so idle = 0.
// `replica` is the busiest attention replica's share of `load` (whose attention sets each layer's
// pace); without it, load.share(p.attention_replicas).
StepTiming colocated_step(const ServingModel& m, const PoolPlan& p, const ServingLinks& l, const StepLoad& load);
StepTiming colocated_step(const ServingModel& m, const PoolPlan& p, const ServingLinks& l, const StepLoad& load,
                          const StepLoad& replica);

// Of the loads of a pool's attention replicas (requests as placed), the one whose attention layer
// takes longest (attention_layer_time; the first on ties): the replica every layer waits for.
StepLoad busiest_replica(const ServingModel& m, const PoolPlan& p, std::span<const StepLoad> replicas);

// Expected expert groups a token's top_k experts fall in, the experts spread evenly over `groups`
// groups (experts / groups each) and routed uniformly (top_k distinct experts): one minus the
// hypergeometric chance of missing a group, times the groups,
//   hit = groups x (1 - C(experts - experts/groups, top_k) / C(experts, top_k))
// top_k when each group holds one expert, 1 when one group holds them all.
double expert_groups_hit(int experts, int groups, int top_k);

// Bytes of one layer's attention <-> expert exchange for `tokens` tokens (also one GPU's share of a
// colocated instance's all-to-all dispatch and combine), each sent once to every GPU holding any of
// its top_k experts: `groups` groups of experts (expert_groups_hit of them per token), each over
// `etp` GPUs (w = weight_bytes per element: the dispatch carries the expert GEMMs' input
// precision, fp8 under fp8 weights; the outputs return bf16, 2 bytes):
//   M2N  tokens x hit x etp x h x w   every rank of an expert's TP group needs the whole hidden state
//   N2M  tokens x hit x h x 2         each group sums its experts' outputs for the token, its etp
//                                     ranks reduce-scatter them and each returns 1/etp
// As DeepEP's normal kernels and TensorRT-LLM's all-to-all send a token to a rank once and combine
// a rank's experts there (until 2026-12-05 every (token, expert) pair was sent on its own:
// top_k x etp copies, 64 per token with 8 experts sliced over 8 GPUs where 8 reach every GPU).
Bytes m2n_bytes(const ServingModel& m, int64_t tokens, int groups, int etp);
Bytes n2m_bytes(const ServingModel& m, int64_t tokens, int groups);

// The busiest expert group's share of an exchange over the mean group's: it holds the busiest
// expert (moe.load_imbalance x the mean) beside its other experts at the mean, as
// expert_layer_time charges it, (L - 1 + load_imbalance) / L with L experts a group, and it
// receives a token once however many of its experts the token picks, so at most every token:
// groups / expert_groups_hit. 1 when balanced. It divides neither side's bytes: the busiest
// group's GPUs receive the M2N (and send the N2M) that many times the mean (until 2026-12-06
// every group at the mean: load_imbalance 4 slowed the experts and left the exchange at 52.8 ms
// where the hot group's NICs take 2.8x that).
double busiest_group_skew(const ServingModel& m, int groups);
// Tokens the busiest expert group receives from `tokens` (the mean group's, tokens x
// expert_groups_hit / groups, times busiest_group_skew): what its expert-TP ranks reduce-scatter
// (at the mean group's until 2026-12-06, while its compute and exchange took the skew).
double busiest_group_tokens(const ServingModel& m, int64_t tokens, int groups);

// Time of one exchange of `total` bytes from `senders` GPUs to `receivers` GPUs on other nodes,
// every sender to every receiver, spread evenly (alpha-beta, each GPU limited by its NIC share):
//   t = net_alpha + contention x max(send_skew x total / senders / send.nic_per_gpu,
//                                    recv_skew x total / receivers / recv.nic_per_gpu)
// `contention` (>= 1) is what the fabric adds beyond every GPU's NIC share (ECMP collisions, shared
// links): the M2N fabric factor measured by probe_m2n_exchange; 1 = a non-blocking fabric.
// `send_skew` / `recv_skew`: the busiest sender's / receiver's bytes over the mean
// (busiest_group_skew on the expert side).
Time exchange_time(Bytes total, int senders, int receivers, const ServingLinks& send, const ServingLinks& recv,
                   double contention = 1.0, double send_skew = 1.0, double recv_skew = 1.0);

// Per micro-batch, per layer costs of an attention/FFN disaggregated step.
struct PingPongCosts {
  std::vector<Time> attention;  // attention pool, one MoE layer (incl. shared experts)
  std::vector<Time> dense;      // attention pool, one dense layer (attention + MLP)
  std::vector<Time> m2n;
  std::vector<Time> ffn;        // expert pool, one MoE layer
  std::vector<Time> n2m;
  std::vector<Time> head;       // attention pool, LM head after the last layer
  int dense_layers = 0;  // leading
  int moe_layers = 0;
  // Every moe_layer_frequency-th layer from dense_layers on is MoE, the rest dense, over `layers`
  // (0: dense_layers + moe_layers).
  int moe_layer_frequency = 1;
  int layers = 0;
};

// The ping-pong pipeline (MegaScale-Infer, arXiv 2504.02263, section 4): m micro-batches go
// attention -> M2N -> experts -> N2M layer after layer; the attention pool and the expert pool each
// work on one micro-batch at a time in order (layer, micro-batch), the M2N and N2M directions each
// carry one micro-batch at a time. Exact event schedule of the step. With m = 1 and zero
// communication, total = layers x (attention + ffn) + head. When `spans` is given, appends every
// scheduled stretch (attention, M2N, experts, N2M per layer and micro-batch; the LM head as attention).
StepTiming ping_pong_step(const PingPongCosts& c, std::vector<StepSpan>* spans = nullptr);

// Splits `load` into m micro-batches (decode sequences and prompts dealt round-robin) and costs
// one step of the attention/FFN deployment.
struct AfdPlan {
  const PoolPlan* attention = nullptr;
  const PoolPlan* expert = nullptr;
  int micro_batches = 1;
  double m2n_factor = 1.0;  // fabric contention on M2N/N2M (exchange_time's `contention`)
};
// `replica_loads` (optional, one per micro-batch): the busiest attention replica's share of each;
// empty: micro_loads[i].share(attention replicas).
PingPongCosts afd_costs(const ServingModel& m, const AfdPlan& plan, const ServingLinks& attention_links,
                        const ServingLinks& expert_links, const std::vector<StepLoad>& micro_loads,
                        std::span<const StepLoad> replica_loads = {});
StepTiming afd_step(const ServingModel& m, const AfdPlan& plan, const ServingLinks& attention_links,
                    const ServingLinks& expert_links, const std::vector<StepLoad>& micro_loads,
                    std::vector<StepSpan>* spans = nullptr, std::span<const StepLoad> replica_loads = {});

}  // namespace clustersim::engine
