// SPDX-License-Identifier: Apache-2.0
// Transformer arithmetic against published sizes and formulas: GPT-3 and Megatron-LM SC'21
// Table 1 parameter counts, the SC'21 FLOP formulas, Llama GQA/SwiGLU shapes, activation memory
// (Korthikanti et al. 2022, Table 2) and what each ZeRO stage shards.
#include "workloads/transformer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tests/unit/core/unit_printers.h"
#include "workloads/placement.h"
#include "workloads/training_graph.h"

namespace clustersim::work {
namespace {

// A GPT-style model (GELU, learned positions, tied embeddings) with the SC'21 vocabulary and
// sequence length unless told otherwise.
ModelConfig gpt(int layers, int hidden, int heads, int vocab = 51200, int seq_len = 2048) {
  ModelConfig m;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.vocab = vocab;
  m.seq_len = seq_len;
  return m;
}

// Llama-2 style: SwiGLU, RMSNorm, rotary positions, untied head, optional GQA.
ModelConfig llama(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab = 32000, int seq_len = 4096) {
  ModelConfig m = gpt(layers, hidden, heads, vocab, seq_len);
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.activation = Activation::kSwiglu;
  m.tied_embeddings = false;
  m.learned_positions = false;
  return m;
}

ScenarioConfig scenario(const ModelConfig& m, int gpus, int tp, int pp, int global_batch, int micro_batch = 1) {
  ScenarioConfig cfg;
  cfg.model = m;
  cfg.cluster.gpus = gpus;
  cfg.parallelism.tp = tp;
  cfg.parallelism.pp = pp;
  cfg.parallelism.micro_batch = micro_batch;
  cfg.training.global_batch = global_batch;
  return cfg;
}

// SC'21 eq. 2 (parameters, without the final LayerNorm): 12 l h^2 (1 + 13/12h + (V+s)/12lh).
double sc21_params(double l, double h, double V, double s) {
  return 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (V + s) / (12.0 * l * h));
}

TEST(CountParams, Gpt3Is174p6Billion) {
  // GPT-3 175B: l 96, h 12288, V 51200, s 2048:
  //   12 l h^2         = 1152 x 150,994,944          = 173,946,175,488
  //   13 l h           = 13 x 96 x 12288             =      15,335,424
  //   (V + s) h        = 53,248 x 12,288             =     654,311,424
  //   sum (SC'21 eq. 2)                              = 174,615,822,336
  // plus the final LayerNorm (weight + bias, 2h = 24,576) that eq. 2 leaves out.
  const ParamCount p = count_params(gpt(96, 12288, 96));
  EXPECT_DOUBLE_EQ(sc21_params(96, 12288, 51200, 2048), 174'615'822'336.0);
  EXPECT_DOUBLE_EQ(p.total, 174'615'822'336.0 + 2 * 12288.0);
  EXPECT_NEAR(p.total / 1e9, 174.6, 0.05);
  // Parts: per layer 12h^2 + 13h; embedding (V + s) h; tied head; final norm 2h.
  EXPECT_DOUBLE_EQ(p.per_layer, 12.0 * 12288.0 * 12288.0 + 13.0 * 12288.0);
  EXPECT_DOUBLE_EQ(p.embedding, (51200.0 + 2048.0) * 12288.0);
  EXPECT_DOUBLE_EQ(p.lm_head, 0.0);
  EXPECT_DOUBLE_EQ(p.final_norm, 2 * 12288.0);
}

TEST(CountParams, MegatronSc21Table1) {
  // Narayanan et al. SC'21 Table 1 (copied in shared/reference/training_a100.yaml,
  // megatron_sc21_weak_scaling): V 51200, s 2048; params_b is printed to 0.1 B, so the count must
  // lie within 0.05 B of it. (18.4 B: 18.4497 B; 76.1 B: 76.0507 B are the closest calls.)
  struct Row {
    double params_b;
    int heads, hidden, layers;
  };
  const std::vector<Row> rows = {
      {1.7, 24, 2304, 24},       {3.6, 32, 3072, 30},       {7.5, 32, 4096, 36},     {18.4, 48, 6144, 40},
      {39.1, 64, 8192, 48},      {76.1, 80, 10240, 60},     {145.6, 96, 12288, 80},  {310.1, 128, 16384, 96},
      {529.6, 128, 20480, 105},  {1008.0, 160, 25600, 128},
  };
  for (const Row& r : rows) {
    const double total = count_params(gpt(r.layers, r.hidden, r.heads)).total;
    EXPECT_NEAR(total / 1e9, r.params_b, 0.05) << r.params_b << "B";
    // And it is eq. 2 plus the final LayerNorm.
    EXPECT_DOUBLE_EQ(total, sc21_params(r.layers, r.hidden, 51200, 2048) + 2.0 * r.hidden) << r.params_b << "B";
  }
}

TEST(CountParams, Llama2SevenAndSeventyBillion) {
  // Llama-2-7B: l 32, h 4096, 32 heads (no GQA), f 11008, V 32000, untied head, RMSNorm, no biases:
  //   layer = 4h^2 (QKVO) + 3hf (SwiGLU) + 2h = 67,108,864 + 135,266,304 + 8,192 = 202,383,360
  //   total = 32 x 202,383,360 + 2 x V h (embedding + head) + h
  //         = 6,476,267,520 + 262,144,000 + 4,096 = 6,738,415,616 (the published checkpoint's count).
  const ParamCount p7 = count_params(llama(32, 4096, 32, 32, 11008));
  EXPECT_DOUBLE_EQ(p7.per_layer, 202'383'360.0);
  EXPECT_DOUBLE_EQ(p7.total, 6'738'415'616.0);
  // Llama-2-70B: l 80, h 8192, 64 heads of 128, 8 KV heads, f 28672:
  //   QKV h (h + 2 x 8 x 128) = 8192 x 10240 = 83,886,080; output h^2 = 67,108,864;
  //   MLP 3hf = 704,643,072; norms 2h = 16,384 -> layer = 855,654,400
  //   total = 80 x 855,654,400 + 2 x 32000 x 8192 + 8192 = 68,976,648,192 (published count).
  const ParamCount p70 = count_params(llama(80, 8192, 64, 8, 28672));
  EXPECT_DOUBLE_EQ(p70.per_layer, 855'654'400.0);
  EXPECT_DOUBLE_EQ(p70.total, 68'976'648'192.0);
}

TEST(IterationFlops, MatchesSc21FormulasForGptShapes) {
  // SC'21 eq. 3 with full recomputation (hardware FLOPs): F = 96 B s l h^2 (1 + s/6h + V/16lh);
  // without recomputation (model FLOPs, 3 x forward):  F = 72 B s l h^2 (1 + s/6h + V/12lh).
  struct Shape {
    int layers, hidden, heads, batch;
  };
  for (const Shape& sh : {Shape{96, 12288, 96, 1536}, Shape{24, 2304, 24, 512}, Shape{128, 25600, 160, 3072},
                          Shape{40, 6144, 48, 1024}}) {
    ScenarioConfig cfg = scenario(gpt(sh.layers, sh.hidden, sh.heads), 8, 1, 1, sh.batch);
    cfg.training.recompute = Recompute::kFull;
    const double B = sh.batch, s = 2048, l = sh.layers, h = sh.hidden, V = 51200;
    const double hardware = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
    const double model = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
    const FlopCount f = iteration_flops(cfg);
    EXPECT_NEAR(f.hardware.n / hardware, 1.0, 1e-9) << sh.hidden;
    EXPECT_NEAR(f.model.n / model, 1.0, 1e-9) << sh.hidden;
    // Model FLOPs do not depend on recomputation; without it hardware = model.
    cfg.training.recompute = Recompute::kNone;
    EXPECT_DOUBLE_EQ(iteration_flops(cfg).model.n, f.model.n);
    EXPECT_DOUBLE_EQ(iteration_flops(cfg).hardware.n, f.model.n);
    // Per token: model FLOPs / (B s).
    EXPECT_NEAR(model_flops_per_token(cfg.model) * B * s / model, 1.0, 1e-9);
  }
}

TEST(IterationFlops, SelectiveRecomputeAddsTheAttentionCore) {
  // Selective recomputation re-runs QK^T and AV: 4 s h per token per layer (forward), B s tokens.
  ScenarioConfig cfg = scenario(gpt(24, 2304, 24), 8, 1, 1, 512);
  cfg.training.recompute = Recompute::kSelective;
  const FlopCount f = iteration_flops(cfg);
  const double B = 512, s = 2048, l = 24, h = 2304;
  EXPECT_NEAR((f.hardware.n - f.model.n) / (B * s * l * 4 * s * h), 1.0, 1e-12);
}

TEST(IterationFlops, SlidingWindowCountsTheWindow) {
  // With a window w < s, attention counts 4 w h per token instead of 4 s h (both 3x for fwd+bwd).
  ModelConfig full = gpt(24, 2304, 24);
  ModelConfig windowed = full;
  windowed.attention_window = 512;
  const double l = 24, h = 2304, s = 2048, w = 512;
  EXPECT_NEAR((model_flops_per_token(full) - model_flops_per_token(windowed)) / (3 * l * 4 * (s - w) * h), 1.0, 1e-12);
}

// The causal count takes attention over the triangle flash attention runs: per token and layer,
// 3 x the forward's executed attention FLOPs per query token, (s + 1)/2 keys (window w < s:
// w - w^2/2s), where the model count takes s (or w).
TEST(IterationFlops, CausalCountsTheAttentionFlashRuns) {
  for (const int window : {0, 512}) {
    ScenarioConfig cfg = scenario(gpt(24, 2304, 24), 8, 1, 1, 512);
    cfg.model.attention_window = window;
    cfg.training.flash_attention = true;
    const double B = 512, s = 2048, l = 24, h = 2304;
    const double span = window > 0 ? window : s;
    const FlopCount f = iteration_flops(cfg);
    const double executed_per_token = layer_attention_flops(cfg).executed.n / s;  // tp 1, micro-batch 1
    const double counted_per_token = 4 * span * h;
    EXPECT_NEAR((f.model.n - f.model_causal.n) / (B * s * 3 * l * (counted_per_token - executed_per_token)), 1.0,
                1e-9)
        << window;
    EXPECT_LT(f.model_causal.n, f.model.n);
    // Without recomputation the hardware count is the model's; with it the recomputed forward's
    // attention is counted the same way (since 2026-12-08: hfu_causal).
    EXPECT_EQ(f.hardware_causal.n, f.model_causal.n) << window;
    for (const Recompute r : {Recompute::kSelective, Recompute::kFull}) {
      cfg.training.recompute = r;
      const FlopCount g = iteration_flops(cfg);
      EXPECT_NEAR((g.hardware.n - g.hardware_causal.n) / (B * s * 4 * l * (counted_per_token - executed_per_token)), 1.0,
                  1e-9)
          << window;
    }
    cfg.training.recompute = Recompute::kNone;
  }
}

// The MLP activation reads the up projection and writes f wide: 3 f elements a token under
// SwiGLU (gate and up in), 2 f under GeLU; unfused twice. Until 2026-12-07 SwiGLU was charged 4 f.
TEST(ElementwiseBytes, MlpActivationReadsTheUpProjectionAndWritesF) {
  const ScenarioConfig swiglu = scenario(llama(80, 8192, 64, 8, 28672), 8, 8, 1, 1);
  const double tokens = 4096, f = 28672.0 / 8, bytes = 2;
  EXPECT_NEAR(mlp_activation_bytes(swiglu).as_double(), 3 * tokens * f * bytes, 1.0);
  ScenarioConfig unfused = swiglu;
  unfused.training.fused_kernels = false;
  EXPECT_NEAR(mlp_activation_bytes(unfused).as_double(), 2 * 3 * tokens * f * bytes, 1.0);
  const ScenarioConfig gelu = scenario(gpt(24, 2304, 24), 8, 1, 1, 8);
  EXPECT_NEAR(mlp_activation_bytes(gelu).as_double(), 2 * 2048 * 4 * 2304 * bytes, 1.0);
  // Part of the layer's memory-bound traffic, once: the rest is the norms (2 x (r + w)) and the
  // bias-dropout-residual-adds (4 elements each) of width h, sequence parallel or not (flash
  // attention: no score-matrix kernels).
  ScenarioConfig flash = swiglu;
  flash.training.flash_attention = true;
  const double e_h = tokens * 8192 / (flash.parallelism.sequence_parallel ? 8.0 : 1.0);
  EXPECT_NEAR(layer_elementwise_bytes(flash).as_double() - mlp_activation_bytes(flash).as_double(),
              (2 * 2 * e_h + 2 * 4 * e_h) * bytes, 1.0);
}

TEST(LayerGemms, GqaSwigluShapesSumToTheGemmParameters) {
  // Llama-2-70B on tp 8, micro-batch 1, s 4096: per TP rank
  //   qkv           4096 x (8192 + 2 x 8 x 128)/8 = 1280    x 8192
  //   attention_out 4096 x 8192                   x 8192/8 = 1024
  //   mlp_up        4096 x 2 x 28672/8 = 7168     x 8192   (gate and up fused)
  //   mlp_down      4096 x 8192                   x 28672/8 = 3584
  const ScenarioConfig cfg = scenario(llama(80, 8192, 64, 8, 28672), 8, 8, 1, 1);
  const std::vector<GemmShape> g = layer_gemms(cfg);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0].name, "qkv");
  EXPECT_EQ(g[0].m, 4096);
  EXPECT_EQ(g[0].n, 1280);
  EXPECT_EQ(g[0].k, 8192);
  EXPECT_EQ(g[1].n, 8192);
  EXPECT_EQ(g[1].k, 1024);
  EXPECT_EQ(g[2].n, 7168);
  EXPECT_EQ(g[2].k, 8192);
  EXPECT_EQ(g[3].n, 8192);
  EXPECT_EQ(g[3].k, 3584);
  // Weights k x n over all TP ranks = the layer's GEMM parameters:
  //   8 x 8192 x (1280 + 1024 + 7168 + 3584) = 855,638,016 = 83,886,080 + 67,108,864 + 704,643,072.
  double weights = 0;
  for (const GemmShape& s : g) weights += static_cast<double>(s.k) * s.n * 8;
  EXPECT_DOUBLE_EQ(weights, 855'638'016.0);
}

// Heads wider than hidden / heads (model.head_dim; training refused them until 2026-12-07).
// Qwen3-32B (Hugging Face config.json): l 64, h 5120, 64 heads of 128 (q = 8192), 8 KV heads,
// f 25600, V 151936, untied head:
//   QKV h (q + 2 x 8 x 128) = 5120 x 10240 = 52,428,800; output q h = 41,943,040;
//   MLP 3hf = 393,216,000; norms 2h = 10,240 -> layer 487,598,080
//   total = 64 x 487,598,080 + 2 x 151936 x 5120 + 5120 = 32,762,106,880: the model card's 32.8B
//   (its per-head q and k RMSNorms, 256 a layer, left out).
TEST(CountParams, WideHeadsCountTheirOwnWidth) {
  ModelConfig m = llama(64, 5120, 64, 8, 25600, 151936, 4096);
  m.head_dim = 128;
  const ParamCount p = count_params(m);
  EXPECT_DOUBLE_EQ(p.per_layer, 487'598'080.0);
  EXPECT_DOUBLE_EQ(p.total, 32'762'106'880.0);
  // Attention's core per token and layer: 4 s q, not 4 s h.
  ModelConfig narrow = m;
  narrow.head_dim = 0;  // 80-wide heads, q = h
  const double core_gap = model_flops_per_token(m) - model_flops_per_token(narrow);
  const double gemm_gap = 3.0 * 64 * 2.0 * (count_params(m).per_layer - count_params(narrow).per_layer);
  EXPECT_NEAR(core_gap - gemm_gap, 3.0 * 64 * 4.0 * 4096 * (8192 - 5120), 1e-3 * core_gap);
  // The GEMMs on tp 8: qkv (q + 2 kv d) / 8 = 1280 columns, the output projection 8192 / 8 rows.
  const ScenarioConfig cfg = scenario(m, 8, 8, 1, 1);
  const std::vector<GemmShape> g = layer_gemms(cfg);
  EXPECT_EQ(g[0].n, 1280);
  EXPECT_EQ(g[1].k, 1024);
  EXPECT_EQ(g[1].n, 5120);
}

TEST(LayerGemms, FewerKvHeadsThanTpRanksAreReplicated) {
  // One KV head (multi-query) over tp 8: each rank computes the head's K and V whole, a replica,
  // not an eighth of it: QKV columns h / 8 + 2 d (until 2026-12-05 (h + 2 d) / 8).
  ScenarioConfig cfg = scenario(llama(32, 4096, 32, 1, 14336), 64, 8, 1, 64);
  const std::vector<GemmShape> g = layer_gemms(cfg);
  EXPECT_EQ(g[0].name, "qkv");
  EXPECT_EQ(g[0].n, 4096 / 8 + 2 * 128);
  // With 8 KV heads each rank holds one: the same columns.
  cfg.model.kv_heads = 8;
  EXPECT_EQ(layer_gemms(cfg)[0].n, 4096 / 8 + 2 * 128);
}

TEST(LayerGemms, ContextParallelSplitsTokens) {
  // GPT h 4096, f 4h, micro-batch 2, s 2048, cp 4: 2 x 2048 / 4 = 1024 tokens per rank.
  ScenarioConfig cfg = scenario(gpt(32, 4096, 32), 32, 2, 1, 64, 2);
  cfg.parallelism.cp = 4;
  for (const GemmShape& g : layer_gemms(cfg)) EXPECT_EQ(g.m, 1024) << g.name;
  EXPECT_EQ(layer_gemms(cfg)[2].n, 4 * 4096 / 2);  // GELU MLP up: f / tp
}

TEST(LayerAttentionFlops, CausalFlashIsAboutHalfOfCounted) {
  // Counted: 4 b s s h / tp. Flash skips masked blocks: executed / counted = (s + 1) / 2s.
  ScenarioConfig cfg = scenario(gpt(24, 2304, 24), 8, 2, 1, 8);
  const AttentionFlops a = layer_attention_flops(cfg);
  const double s = 2048, h = 2304;
  EXPECT_DOUBLE_EQ(a.counted.n, 4 * s * s * h / 2);
  EXPECT_NEAR(a.executed.n / a.counted.n, (s + 1) / (2 * s), 1e-12);
  EXPECT_NEAR(a.executed.n / a.counted.n, 0.5, 1e-3);
  // The unfused chain computes the whole score matrix.
  cfg.training.flash_attention = false;
  const AttentionFlops u = layer_attention_flops(cfg);
  EXPECT_DOUBLE_EQ(u.executed.n, u.counted.n);
}

TEST(ActivationBytes, KorthikantiTable2) {
  // Korthikanti et al. 2022 Table 2, bytes per layer (GPT, f = 4h, 16-bit):
  //   no parallelism:              s b h (34 + 5 a s / h)
  //   tensor parallel (no SP):     s b h (10 + 24/t + 5 a s / (h t))
  //   tensor + sequence parallel:  s b h (34/t + 5 a s / (h t))
  //   full recomputation:          2 s b h  (only the layer input; / t with SP)
  // h 2048, a 16, s 2048, b 1, t 4, unfused attention (keeps the 5 a s^2 b scores).
  const double s = 2048, b = 1, h = 2048, a = 16, t = 4;
  ScenarioConfig cfg = scenario(gpt(8, 2048, 16), 4, 1, 1, 4);
  cfg.training.flash_attention = false;
  EXPECT_NEAR(activation_bytes_per_layer(cfg).as_double(), s * b * h * (34 + 5 * a * s / h), 1.0);
  cfg.parallelism.tp = 4;
  cfg.parallelism.sequence_parallel = false;
  EXPECT_NEAR(activation_bytes_per_layer(cfg).as_double(), s * b * h * (10 + 24 / t + 5 * a * s / (h * t)), 1.0);
  cfg.parallelism.sequence_parallel = true;
  EXPECT_NEAR(activation_bytes_per_layer(cfg).as_double(), s * b * h * (34 / t + 5 * a * s / (h * t)), 1.0);
  // Flash attention drops the 5 a s^2 b term.
  cfg.training.flash_attention = true;
  EXPECT_NEAR(activation_bytes_per_layer(cfg).as_double(), s * b * h * 34 / t, 1.0);
  cfg.training.recompute = Recompute::kFull;
  EXPECT_NEAR(activation_bytes_per_layer(cfg).as_double(), 2 * s * b * h / t, 1.0);
}

// Without dropout no attention dropout runs: of the unfused scores' 5 a s^2 b bytes the softmax
// output's 2 stay, and its traffic (r + w + mask, 3 elements a score) goes; the hidden masks'
// 2 s b h go from memory. Until 2026-12-06 the traffic was charged whatever training.dropout said.
TEST(ActivationBytes, WithoutDropoutNoAttentionDropout) {
  const double s = 2048, b = 1, h = 2048, a = 16, t = 4;
  ScenarioConfig cfg = scenario(gpt(8, 2048, 16), 4, 1, 1, 4);
  cfg.training.flash_attention = false;
  cfg.parallelism.tp = 4;
  cfg.parallelism.sequence_parallel = true;
  const double with = activation_bytes_per_layer(cfg).as_double();
  const double traffic = layer_elementwise_bytes(cfg).as_double();
  cfg.training.dropout = false;
  EXPECT_NEAR(with - activation_bytes_per_layer(cfg).as_double(), 2 * s * b * h / t + 3 * a * s * s * b / t, 1.0);
  const double scores = a / t * s * s * b;
  EXPECT_NEAR(traffic - layer_elementwise_bytes(cfg).as_double(), 3 * scores * 2, 1.0);
}

// GPT 7.5B-like on 64 GPUs, tp 2, pp 2 -> dp 16.
ScenarioConfig zero_case(int stage) {
  ScenarioConfig cfg = scenario(gpt(36, 4096, 32), 64, 2, 2, 64);
  cfg.parallelism.zero_stage = stage;
  return cfg;
}

TEST(MemoryPerGpu, ZeroStagesShardWhatTheyShould) {
  // dp = 64 / (2 x 2) = 16. ZeRO-1 shards optimizer state, ZeRO-2 also gradients, ZeRO-3 also
  // weights; each shard is 1/dp of the unsharded amount.
  const MemoryEstimate z0 = memory_per_gpu(zero_case(0));
  const MemoryEstimate z1 = memory_per_gpu(zero_case(1));
  const MemoryEstimate z2 = memory_per_gpu(zero_case(2));
  const MemoryEstimate z3 = memory_per_gpu(zero_case(3));
  const double dp = 16;
  EXPECT_NEAR(z0.optimizer.as_double() / z1.optimizer.as_double(), dp, 1e-6);
  EXPECT_EQ(z1.gradients, z0.gradients);
  EXPECT_EQ(z1.weights, z0.weights);
  // ZeRO-2 keeps, beside its gradient shard, one layer's FP32 gradients whole before they are
  // reduce-scattered (since 2026-12-06; ZeRO-3 did, and a plan read less memory at stage 2).
  const double layer = count_params(gpt(36, 4096, 32)).per_layer / 2;  // tp 2
  EXPECT_NEAR(z2.gradients.as_double(), z1.gradients.as_double() / dp + layer * 4.0, 1.0);
  EXPECT_EQ(z2.optimizer, z1.optimizer);
  EXPECT_EQ(z2.weights, z0.weights);
  // ZeRO-3 keeps, beside its shards, two layers' gathered 16-bit weights (the one computing and
  // the next, prefetched) and the same layer of FP32 gradients (before 2026-12-05 none: a 70B
  // model at tp 2, pp 1 held 0.1 GiB of weights).
  EXPECT_NEAR(z3.weights.as_double(), z2.weights.as_double() / dp + 2 * layer * 2.0, 1.0);
  EXPECT_EQ(z3.gradients, z2.gradients);
  EXPECT_LT(z3.total(), z2.total());
  // With dp 1 nothing is sharded and nothing gathered: ZeRO-3 holds what ZeRO-2 does.
  ScenarioConfig alone = scenario(gpt(36, 4096, 32), 4, 2, 2, 64);
  alone.parallelism.zero_stage = 2;
  const MemoryEstimate two = memory_per_gpu(alone);
  alone.parallelism.zero_stage = 3;
  EXPECT_EQ(memory_per_gpu(alone).total(), two.total());
  EXPECT_EQ(z3.optimizer, z2.optimizer);
  // Activations do not depend on the ZeRO stage; the unsharded parameter count does not either.
  EXPECT_EQ(z3.activations, z0.activations);
  EXPECT_DOUBLE_EQ(z3.params_on_gpu, z0.params_on_gpu);
  // Bytes per parameter before sharding: 2 (16-bit weights), 4 (FP32 gradients), 12 (Adam).
  EXPECT_NEAR(z0.weights.as_double() / z0.params_on_gpu, 2.0, 1e-9);
  EXPECT_NEAR(z0.gradients.as_double() / z0.params_on_gpu, 4.0, 1e-9);
  EXPECT_NEAR(z0.optimizer.as_double() / z0.params_on_gpu, 12.0, 1e-9);
  EXPECT_LT(z3.total(), z2.total());
  EXPECT_LT(z2.total(), z1.total());
  EXPECT_LT(z1.total(), z0.total());
}

TEST(MemoryPerGpu, ZeroShardsOverTheContextParallelRanksToo) {
  // 36 layers, tp 2, pp 2: 16 GPUs give dp 4; 32 GPUs with cp 2 the same dp 4 and 8 ranks that
  // hold the same weights (Megatron-LM's DP x CP group): ZeRO-3 shards weights, gradients and
  // optimizer state over 8, half of cp 1's (before 2026-12-05 over the dp 4 alone).
  ScenarioConfig one = scenario(gpt(36, 4096, 32), 16, 2, 2, 64);
  one.parallelism.zero_stage = 3;
  ScenarioConfig two = scenario(gpt(36, 4096, 32), 32, 2, 2, 64);
  two.parallelism.zero_stage = 3;
  two.parallelism.cp = 2;
  EXPECT_EQ(gradient_sync_size(one), 4);
  EXPECT_EQ(gradient_sync_size(two), 8);
  const MemoryEstimate a = memory_per_gpu(one), b = memory_per_gpu(two);
  EXPECT_DOUBLE_EQ(b.params_on_gpu, a.params_on_gpu);
  EXPECT_NEAR(b.optimizer.as_double(), a.optimizer.as_double() / 2, 1.0);
  const double layer = count_params(gpt(36, 4096, 32)).per_layer / 2;  // the ZeRO-3 working set
  EXPECT_NEAR(b.gradients.as_double() - layer * 4.0, (a.gradients.as_double() - layer * 4.0) / 2, 1.0);
}

TEST(DenseDpRings, ARingRunsOverTheDataAndContextParallelRanks) {
  // tp 2, cp 2, dp 2, pp 2 on 16 GPUs in the default order tp-cp-dp-pp: stage 0 holds GPUs 0-7,
  // GPU = t + 2 c + 4 d. One ring per TP position over the 4 DP x CP ranks, in GPU order.
  ScenarioConfig cfg = scenario(gpt(8, 1024, 8), 16, 2, 2, 8);
  cfg.parallelism.cp = 2;
  const Placement pl(cfg.parallelism.placement, 2, 2, 2, 2);
  const std::vector<std::vector<int32_t>> rings = dense_dp_rings(cfg, pl, 0);
  ASSERT_EQ(rings.size(), 2u);
  EXPECT_EQ(rings[0], (std::vector<int32_t>{0, 2, 4, 6}));
  EXPECT_EQ(rings[1], (std::vector<int32_t>{1, 3, 5, 7}));
  EXPECT_EQ(dense_dp_rings(cfg, pl, 1)[0], (std::vector<int32_t>{8, 10, 12, 14}));
}

TEST(MemoryPerGpu, Bf16GradientsHalveGradientMemory) {
  ScenarioConfig cfg = zero_case(0);
  const MemoryEstimate fp32 = memory_per_gpu(cfg);
  cfg.training.fp32_grad_reduce = false;
  EXPECT_NEAR(fp32.gradients.as_double() / memory_per_gpu(cfg).gradients.as_double(), 2.0, 1e-9);
}

TEST(MemoryPerGpu, ParamsOnGpuOfTheMostLoadedStage) {
  // pp 1, tp 1: the whole model is on the GPU.
  const ModelConfig m = gpt(24, 2304, 24);
  EXPECT_DOUBLE_EQ(memory_per_gpu(scenario(m, 8, 1, 1, 8)).params_on_gpu, count_params(m).total);
  // tp 2: half of it.
  EXPECT_DOUBLE_EQ(memory_per_gpu(scenario(m, 8, 2, 1, 8)).params_on_gpu, count_params(m).total / 2);
  // pp 2: half the layers plus the larger end (the embedding with positions on the first stage).
  const ParamCount p = count_params(m);
  EXPECT_DOUBLE_EQ(memory_per_gpu(scenario(m, 8, 1, 2, 8)).params_on_gpu, 12 * p.per_layer + p.embedding);
}

TEST(MemoryPerGpu, NoDropoutDropsTheTwoMasks) {
  // Korthikanti et al. Table 2: the attention-output and MLP-output dropout masks are 1 byte per
  // element each, 2 sbh of the 34 sbh (flash attention, no sequence parallelism: kept whole).
  ScenarioConfig cfg = scenario(gpt(24, 2048, 16), 8, 2, 1, 8);
  cfg.parallelism.sequence_parallel = false;
  const double s = 2048, b = 1, h = 2048;
  const double with = activation_bytes_per_layer(cfg).as_double();
  cfg.training.dropout = false;
  EXPECT_NEAR(with - activation_bytes_per_layer(cfg).as_double(), 2 * s * b * h, 1.0);
}

TEST(MemoryPerGpu, ListedStageLayersSetTheMostLoadedStage) {
  // 1F1B: stage s holds pp - s micro-batches of its own layers. 32 layers over pp 4, even: the
  // first stage holds 4 x 8 = 32 layers' activations. Listed 6, 9, 9, 8: stage 1 holds 3 x 9 = 27,
  // stage 0 4 x 6 = 24, so 27; weights follow the largest stage (9 layers, not 8 + embedding).
  ScenarioConfig cfg = scenario(llama(32, 4096, 32, 8, 14336), 32, 8, 4, 32);
  const MemoryEstimate even = memory_per_gpu(cfg);
  cfg.stragglers.stage_layers = {6, 9, 9, 8};
  const MemoryEstimate listed = memory_per_gpu(cfg);
  const double per_layer = activation_bytes_per_layer(cfg).as_double();
  const double logits = even.activations.as_double() - 32 * per_layer;
  EXPECT_NEAR(listed.activations.as_double(), 27 * per_layer + logits, 1.0);
  const ParamCount p = count_params(cfg.model);
  EXPECT_DOUBLE_EQ(listed.params_on_gpu, std::max(9 * p.per_layer, 8 * p.per_layer + 32000.0 * 4096 + p.final_norm) / 8);
}

TEST(MemoryPerGpu, FullRecomputeShrinksActivations) {
  ScenarioConfig cfg = scenario(gpt(36, 4096, 32), 64, 2, 2, 64);
  const Bytes none = memory_per_gpu(cfg).activations;
  cfg.training.recompute = Recompute::kSelective;
  const Bytes selective = memory_per_gpu(cfg).activations;
  cfg.training.recompute = Recompute::kFull;
  const Bytes full = memory_per_gpu(cfg).activations;
  EXPECT_LT(full, none);
  EXPECT_LE(selective, none);
  // Full recomputation keeps 2 sbh/t per layer (with SP) instead of 34 sbh/t: at least 5x less here
  // (the one layer being recomputed and the logits are kept in both).
  EXPECT_LT(full.as_double() * 5, none.as_double());
  // The parameters are untouched (the most loaded stage may change: here the last, whose LM head
  // and logits outweigh the first stage's embedding once the activations shrink).
  EXPECT_EQ(memory_per_gpu(cfg).params_on_gpu, memory_per_gpu(scenario(gpt(36, 4096, 32), 64, 2, 2, 64)).params_on_gpu);
}

TEST(MemoryPerGpu, InterleavingRaisesActivationsByKorthikantiFactor) {
  // 1F1B holds l layers' activations on the first stage; interleaving multiplies that by
  // 1 + (pp - 1) / (pp vpp). pp 2, vpp 2: 1 + 1/4 = 1.25 (logits term subtracted out).
  ScenarioConfig cfg = scenario(gpt(36, 4096, 32), 64, 2, 2, 64);
  const double per_layer = activation_bytes_per_layer(cfg).as_double();
  const double plain = memory_per_gpu(cfg).activations.as_double();
  cfg.parallelism.vpp = 2;
  const double interleaved = memory_per_gpu(cfg).activations.as_double();
  EXPECT_NEAR((interleaved - plain) / (per_layer * 36), 0.25, 1e-6);
}

// The logits (16-bit and their FP32 copy, b s v / t) are the last stage's: with pp > 1 the most
// loaded stage is the first, which holds its in-flight micro-batches' layers and no logits. A
// 6.7B GPT, tp 4 pp 2, 16 micro-batches: 2 x 16 layers on the first stage, 2.125 GiB (2.27 with
// the last stage's logits on top, until 2026-12-06).
TEST(MemoryPerGpu, TheLogitsAreTheLastStagesAlone) {
  ScenarioConfig cfg = scenario(gpt(32, 4096, 32), 64, 4, 2, 128);
  const double per_layer = activation_bytes_per_layer(cfg).as_double();
  EXPECT_NEAR(memory_per_gpu(cfg).activations.as_double(), 2 * 16 * per_layer, 1.0);
  // pp 1: the one stage holds both.
  const ScenarioConfig whole = scenario(gpt(32, 4096, 32), 64, 4, 1, 128);
  const double logits = 1.0 * 2048 * 51200 / 4 * (2 + 4);
  EXPECT_NEAR(memory_per_gpu(whole).activations.as_double(), 1 * 32 * per_layer + logits, 1.0);
}

TEST(MemoryPerGpu, APipelineHoldsNoMoreMicroBatchesThanItHas) {
  // 48 layers over pp 8 (6 a stage), dp 1: m micro-batches per pipeline. The first stage holds
  // min(pp, m) of them (pp whatever m until 2026-12-05); interleaved (m a multiple of pp) at most
  // all m: with m = pp = 8 and vpp 2, 8 x 6 layers, not 8 x 6 x (1 + 7/16).
  const auto acts = [](int global_batch, int vpp) {
    ScenarioConfig cfg = scenario(gpt(48, 4096, 32), 8, 1, 8, global_batch);
    cfg.parallelism.vpp = vpp;
    return memory_per_gpu(cfg).activations.as_double();
  };
  // The logits are the last stage's, beside its one micro-batch (since 2026-12-06; they were added
  // to the first stage's layers before).
  ScenarioConfig one = scenario(gpt(48, 4096, 32), 8, 1, 8, 1);
  const double per_layer = activation_bytes_per_layer(one).as_double();
  const double last = 6 * per_layer + 1.0 * 2048 * 51200 * 6;  // one micro-batch of 6 layers and the logits
  EXPECT_NEAR(acts(1, 1), last, 1.0);
  for (const int m : {1, 2, 4, 8, 16}) {
    EXPECT_NEAR(acts(m, 1), std::max(std::min(m, 8) * 6 * per_layer, last), 1.0) << m;
  }
  // Interleaved with m = pp every stage runs all its forwards first: the last holds as many layers
  // as the first, and its logits beside them (b s v / t x 6 bytes; read off the first stage's count
  // until 2026-12-06).
  const double logits = 1.0 * 2048 * 51200 * 6;
  EXPECT_NEAR(acts(8, 2), 8 * 6 * per_layer + logits, 1.0);
  EXPECT_NEAR(acts(16, 2), 8 * 6 * per_layer * (1.0 + 7.0 / 16.0), 1.0);
}

}  // namespace
}  // namespace clustersim::work
