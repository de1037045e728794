// SPDX-License-Identifier: Apache-2.0
// Dense GPT/Llama-style transformer arithmetic: parameter counts, FLOPs per iteration, GEMM
// shapes per layer, and memory per GPU under a parallel plan.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/units.h"

namespace clustersim::work {

// One attention head's width d: model.head_dim, else hidden / heads; and the query (and
// attention context) width q = heads x d, which is hidden unless head_dim says otherwise (Qwen3-32B:
// 64 heads of 128 on a hidden of 5,120, q = 8,192).
double head_dim(const ModelConfig& m);
double query_width(const ModelConfig& m);

// Parameter counts (as doubles: 1e12-parameter models are routine).
// Per layer (GPT, GELU, biases, LayerNorm with bias), q = heads x d:
//   QKV h(q + 2 kv d) + (q + 2 kv d), output q h + h, MLP 2hf + f + h, two LayerNorms 4h
// which for kv = heads, q = h and f = 4h is 12h^2 + 13h (Narayanan et al., SC'21, eq. 2).
// SwiGLU (Llama) models: MLP 3hf, RMSNorm h each, no biases.
struct ParamCount {
  double per_layer = 0;
  double embedding = 0;  // token (+ learned position) embedding
  double lm_head = 0;    // 0 when tied to the embedding
  double final_norm = 0;
  double total = 0;
};
ParamCount count_params(const ModelConfig& m);

// The share of a chunk's gradient reduction (or parameter gather) in its last (first) bucket, for
// the chunk that holds the input embedding (the first stage's first): Megatron-LM buckets the
// parameters in reverse order, so the embedding, the first module forward and the last gradient
// backward, closes the last bucket (a tied one has its own), ready only once backward ends and
// gathered first for the forward. `chunk_params` and `buckets` as the level splits the chunk;
// at least 1 / buckets, at most 1. Until 2026-12-07 every bucket was an even share, and a small
// model's large embedding reduced under its layers' backward (QA: 525M embedding parameters among
// 740M, 10% of the step).
double embedding_bucket_share(const ScenarioConfig& cfg, double chunk_params, int64_t buckets);

// When bucket j (0-based) of a chunk's `buckets` is ready, as a fraction of the chunk's backward
// pass: (j + 1) / B, as backward walks through the parameters; in the chunk holding the embedding,
// where its bucket stands apart (`embedding_share`, embedding_bucket_share's, above 1 / B; pass 0
// for other chunks), the layers' B - 1 buckets over the whole pass and the embedding's at its end
// (its backward takes next to no time). The flow level's graph issues the reductions so, and the
// analytical level prices the part of the last pass before the first piece as hiding nothing.
double bucket_ready_at(int j, int64_t buckets, double embedding_share);

// FLOPs of one training iteration over the whole cluster.
//   model:    3 x forward (forward + backward, no recomputation). Forward per sequence:
//             sum over layers of 2 s (GEMM parameters) + 4 s s_att q, plus the LM head 2 s h V,
//             with s_att = s (Megatron-LM / PaLM convention: the whole score matrix is counted)
//             or the sliding window. For GPT shapes this is 72 B s l h^2 (1 + s/6h + V/12lh).
//   hardware: model plus recomputation: full recompute adds one forward of every layer,
//             giving 96 B s l h^2 (1 + s/6h + V/16lh) (SC'21 eq. 3); selective adds the
//             attention core.
// MFU = model / (time x GPUs x peak); HFU uses hardware.
// model_causal: model with attention counted over the causal triangle it executes, (s + 1)/2 keys
// per query (sliding window: s w - w^2/2 pairs per sequence), as MegaScale-MoE counts
// (arXiv:2505.11432 section 6.1): at 8K tokens about 4% under model, at 1M tokens half.
// hardware_causal: hardware counted the same way (the recomputed attention too).
struct FlopCount {
  Flops model;
  Flops hardware;
  Flops model_causal;
  Flops hardware_causal;
};
FlopCount iteration_flops(const ScenarioConfig& cfg);
// Model FLOPs per trained token (the factor tokens/s turns into MFU).
double model_flops_per_token(const ModelConfig& m);

// One GEMM of a layer, per TP rank, forward: (m x k) * (k x n).
struct GemmShape {
  std::string name;
  int64_t m = 0, n = 0, k = 0;
};
// The forward GEMMs of one transformer layer for one micro-batch on one TP rank (with CP, each
// rank holds seq_len / cp tokens). Backward runs two GEMMs of the same size for each.
std::vector<GemmShape> layer_gemms(const ScenarioConfig& cfg);

// The two backward GEMMs of forward GEMM `fwd` (m tokens, n outputs, k inputs), as the probe
// times them (kernels_probe/probe_shapes.cc): the input gradient (m x n)(n x k), m x k x n, and
// the weight gradient in the weight's own out x in layout, (n x m)(m x k), n x k x m. Until
// 2026-12-06 the weight gradient was timed as k x n x m, its transpose, which a fitted tile of
// unequal sides quantises differently (an LM head's: 6.10 against 6.20 ms).
struct BackwardGemms {  // shapes only (names empty)
  GemmShape data_grad;
  GemmShape weight_grad;
};
BackwardGemms backward_gemms(const GemmShape& fwd);

// Attention-core FLOPs (QK^T and AV) of one layer, one micro-batch, one TP rank, forward.
//   counted:  4 b s_q s_att (q/tp)        -- for MFU
//   executed: what the kernel does: causal fused kernels skip masked blocks (about half),
//             the unfused chain computes the whole matrix.
struct AttentionFlops {
  Flops counted;
  Flops executed;
  double score_elements = 0;  // unfused: the score matrix on one GPU, b (a/t) (s/c) s
};
AttentionFlops layer_attention_flops(const ScenarioConfig& cfg);

// Bytes moved by the memory-bound kernels (norms, activations, dropout, residual adds, softmax
// when unfused) of one layer, one micro-batch, one TP rank, forward. Backward moves about twice.
Bytes layer_elementwise_bytes(const ScenarioConfig& cfg);
// Of them, the MLP activation kernel's (GeLU: read f, write f; SwiGLU: read gate and up, 2f,
// write f; f per token per TP rank), twice as much when unfused (training.fused_kernels: false).
Bytes mlp_activation_bytes(const ScenarioConfig& cfg);
// The same kernel for `rows` tokens of any MLP (routed and shared experts, serving): it reads the
// up projection, `up` wide (2f under SwiGLU, f under GeLU), and writes `f` wide, `element_bytes`
// an element.
Bytes activation_kernel_bytes(double rows, double up, double f, double element_bytes);
// Of them, the unfused attention's over the score matrix (scale-mask-softmax and attention
// dropout; 0 with flash attention): what selective recomputation runs again with the attention
// core's matmuls.
Bytes attention_score_elementwise_bytes(const ScenarioConfig& cfg);

// Activation bytes stored per layer per micro-batch on one GPU (Korthikanti et al. 2022,
// "Reducing Activation Recomputation in Large Transformer Models", Table 2), generalised to GQA
// and SwiGLU widths; see transformer.cc.
Bytes activation_bytes_per_layer(const ScenarioConfig& cfg);

// Bytes per value of the main gradient buffer the backward pass accumulates into: FP32 with
// training.fp32_grad_reduce (Megatron-LM's accumulate_allreduce_grads_in_fp32), else BF16.
double main_grad_bytes(const TrainingConfig& t);
// Bytes per value the gradient syncs send (DP reduction, tied-embedding all-reduce):
// training.comm_precision where given (MoE only), else the main gradient's.
double grad_bytes_per_value(const TrainingConfig& t);

// Memory per GPU on the most loaded pipeline stage (the one whose parts add up to the most).
struct MemoryEstimate {
  Bytes weights;
  Bytes gradients;
  Bytes optimizer;
  Bytes activations;
  Bytes total() const { return weights + gradients + optimizer + activations; }
  double params_on_gpu = 0;  // parameters held before ZeRO sharding, on the stage with the most
  // The largest optimizer state of any stage (the optimizer step's time: every stage steps at
  // once, the slowest paces it), which need not be the most loaded stage's.
  Bytes most_optimizer;
  double expert_params_on_gpu = 0;  // MoE: of params_on_gpu, the experts' (synced over expert DP)
};
MemoryEstimate memory_per_gpu(const ScenarioConfig& cfg);
// Memory on the most loaded GPU of the run: memory_per_gpu's, where a
// stragglers.sequence_imbalance (max_over_mean > 1) gives the heaviest replicas longer sequences
// (with_heavy_sequences): their sequences' activations beside the nominal weights, gradients and
// optimizer state. What runs report and check.
MemoryEstimate most_loaded_memory_per_gpu(const ScenarioConfig& cfg);

// The working set of sharded gradients and weights beside their shards: from ZeRO-2, the layer's
// gradients whole before they are reduce-scattered (stage 2 reduces every micro-batch's as stage
// 3 does; since 2026-12-06, when a ZeRO-2 plan read less memory than the same plan at ZeRO-3, 37.4
// against 37.8 GiB on the 352B MoE plan), and at ZeRO-3 the 16-bit weights of the layer computing
// and of the next, prefetched, gathered whole. FSDP and DeepSpeed gather per module (a
// transformer layer); the time model gathers a chunk per pass in one collective, the same bytes.
// `layer_params` is one layer's parameters on the GPU (after TP and EP); `grad_bytes` per
// gradient value. Nothing below stage 2.
void add_zero_working_set(MemoryEstimate& e, int zero_stage, double layer_params, double grad_bytes);

}  // namespace clustersim::work
