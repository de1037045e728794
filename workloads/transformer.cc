// SPDX-License-Identifier: Apache-2.0
#include "workloads/transformer.h"

#include <algorithm>

#include "workloads/moe.h"
#include "workloads/pipeline_schedule.h"

namespace clustersim::work {
namespace {

// Activations, weights and gradients travel as 16-bit values (FP8 recipes keep activations and
// master weights in 16/32 bits and cast only GEMM inputs).
constexpr double kAct = 2.0;

struct Dims {
  double b, s, h, a, kv, d, q, f, l, v;  // kv: KV heads over the TP ranks (at least one a rank); q = a d
  double t, p, vpp, c, dp;
  bool swiglu;
};

Dims dims(const ScenarioConfig& cfg) {
  const ModelConfig& m = cfg.model;
  const ParallelismConfig& p = cfg.parallelism;
  Dims x{};
  x.b = p.micro_batch;
  x.s = m.seq_len;
  x.h = m.hidden;
  x.a = m.heads;
  // KV heads over the TP ranks: with fewer KV heads than ranks each rank holds a replica of one
  // (validated: tp a multiple of kv_heads), not a fraction (until 2026-12-05 kv / tp each).
  x.kv = std::max<double>(m.kv_heads > 0 ? m.kv_heads : m.heads, p.tp);
  x.d = head_dim(m);
  x.q = query_width(m);
  x.f = m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden;
  x.l = m.layers;
  x.v = m.vocab;
  x.t = p.tp;
  x.p = p.pp;
  x.vpp = p.vpp;
  x.c = p.cp;
  x.dp = cfg.cluster.gpus > 0 ? static_cast<double>(cfg.cluster.gpus) / (p.tp * p.pp * p.cp) : 1;
  x.swiglu = m.activation == Activation::kSwiglu;
  return x;
}

double ffn_hidden(const ModelConfig& m) { return m.ffn_hidden > 0 ? m.ffn_hidden : 4.0 * m.hidden; }
double kv_heads(const ModelConfig& m) { return m.kv_heads > 0 ? m.kv_heads : m.heads; }

// GEMM parameters of one layer (weights only): QKV, output projection, MLP.
double layer_gemm_params(const ModelConfig& m) {
  const double h = m.hidden, q = query_width(m);
  const double qkv_out = q + 2.0 * kv_heads(m) * head_dim(m);
  const double mlp = (m.activation == Activation::kSwiglu ? 3.0 : 2.0) * h * ffn_hidden(m);
  return h * qkv_out + q * h + mlp;
}

// Attention span per query token used for FLOP counting: whole sequence, or the window.
double attention_span(const ModelConfig& m) {
  return m.attention_window > 0 ? std::min(m.attention_window, m.seq_len) : m.seq_len;
}

// Elements of the attention score matrix one GPU holds for a micro-batch: b (a/t) (s/c) s.
double score_matrix_elements(const Dims& x) { return x.b * (x.a / x.t) * (x.s / x.c) * x.s; }

}  // namespace

double head_dim(const ModelConfig& m) {
  return m.head_dim > 0 ? m.head_dim : static_cast<double>(m.hidden) / std::max(1, m.heads);
}
double query_width(const ModelConfig& m) { return m.heads * head_dim(m); }

ParamCount count_params(const ModelConfig& m) {
  const double h = m.hidden;
  const double qkv_out = query_width(m) + 2.0 * kv_heads(m) * head_dim(m);
  ParamCount p;
  if (m.activation == Activation::kSwiglu) {
    // Llama style: no biases, RMSNorm weight only.
    p.per_layer = layer_gemm_params(m) + 2.0 * h;
    p.final_norm = h;
  } else {
    p.per_layer = layer_gemm_params(m) + qkv_out + h + ffn_hidden(m) + h + 4.0 * h;
    p.final_norm = 2.0 * h;
  }
  p.embedding = static_cast<double>(m.vocab) * h + (m.learned_positions ? m.seq_len * h : 0.0);
  p.lm_head = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
  // MoE: experts, routers and shared experts replace the MLP of the MoE layers (workloads/moe.h);
  // per_layer becomes the mean over all layers.
  if (m.moe) p.per_layer += moe_extra_params(m) / m.layers;
  p.total = m.layers * p.per_layer + p.embedding + p.lm_head + p.final_norm;
  return p;
}

double embedding_bucket_share(const ScenarioConfig& cfg, double chunk_params, int64_t buckets) {
  if (buckets <= 1 || chunk_params <= 0) return 1.0;
  // Over TP, but whole on every GPU under an MoE model's Ulysses attention (attention_parallel:
  // sp), which splits the sequence, not the weights (as moe.cc counts the dense parameters).
  const bool sp = cfg.model.moe && cfg.training.attention_parallel == AttentionParallel::kSp;
  const double embedding = count_params(cfg.model).embedding / (sp ? 1 : cfg.parallelism.tp);
  return std::clamp(embedding / chunk_params, 1.0 / static_cast<double>(buckets), 1.0);
}

double bucket_ready_at(int j, int64_t buckets, double embedding_share) {
  const double b = static_cast<double>(buckets);
  if (buckets > 1 && embedding_share > 1.0 / b) return j + 1 >= buckets ? 1.0 : (j + 1.0) / (b - 1.0);
  return (j + 1.0) / b;
}

double model_flops_per_token(const ModelConfig& m) {
  double forward = m.layers * (2.0 * layer_gemm_params(m) + 4.0 * attention_span(m) * query_width(m)) +
                   2.0 * m.hidden * static_cast<double>(m.vocab);
  if (m.moe) forward += 2.0 * moe_extra_active_gemm_params(m);  // active parameters only
  return 3.0 * forward;
}

FlopCount iteration_flops(const ScenarioConfig& cfg) {
  const ModelConfig& m = cfg.model;
  const double tokens = static_cast<double>(cfg.training.global_batch) * m.seq_len;
  FlopCount out;
  out.model = Flops{tokens * model_flops_per_token(m)};
  double extra_per_token = 0;
  if (cfg.training.recompute == Recompute::kFull) {
    extra_per_token = m.layers * (2.0 * layer_gemm_params(m) + 4.0 * attention_span(m) * query_width(m)) +
                      2.0 * moe_extra_active_gemm_params(m);
  } else if (cfg.training.recompute == Recompute::kSelective) {
    extra_per_token = m.layers * 4.0 * attention_span(m) * query_width(m);
  }
  out.hardware = Flops{out.model.n + tokens * extra_per_token};
  // Per token, 3 x 4 q x (counted span - mean executed span) fewer attention FLOPs a layer.
  const double s = m.seq_len, span = attention_span(m);
  const double causal_span = span < s ? span - span * span / (2.0 * s) : (s + 1.0) / 2.0;
  const double not_run_per_pass = tokens * m.layers * 4.0 * query_width(m) * (span - causal_span);
  out.model_causal = Flops{out.model.n - 3.0 * not_run_per_pass};
  // Full and selective recomputation both run the attention core's forward once more.
  const double recomputed = recomputes_attention(cfg.training) ? 1.0 : 0.0;
  out.hardware_causal = Flops{out.hardware.n - (3.0 + recomputed) * not_run_per_pass};
  return out;
}

std::vector<GemmShape> layer_gemms(const ScenarioConfig& cfg) {
  const Dims x = dims(cfg);
  const auto tokens = static_cast<int64_t>(x.b * x.s / x.c);
  const auto h = static_cast<int64_t>(x.h);
  const auto qkv = static_cast<int64_t>((x.q + 2.0 * x.kv * x.d) / x.t);
  const auto f_per_rank = static_cast<int64_t>(x.f / x.t);
  std::vector<GemmShape> g;
  g.push_back({"qkv", tokens, qkv, h});
  g.push_back({"attention_out", tokens, h, static_cast<int64_t>(x.q / x.t)});
  g.push_back({"mlp_up", tokens, (x.swiglu ? 2 : 1) * f_per_rank, h});
  g.push_back({"mlp_down", tokens, h, f_per_rank});
  return g;
}

BackwardGemms backward_gemms(const GemmShape& fwd) {
  // Unnamed: this runs for every GEMM of every candidate of a sweep, and no caller reads a name.
  return {{{}, fwd.m, fwd.k, fwd.n}, {{}, fwd.n, fwd.k, fwd.m}};
}

AttentionFlops layer_attention_flops(const ScenarioConfig& cfg) {
  const Dims x = dims(cfg);
  const double span = attention_span(cfg.model);
  const double q_tokens = x.b * x.s / x.c;
  AttentionFlops a;
  a.counted = Flops{4.0 * q_tokens * span * x.q / x.t};
  if (!cfg.training.flash_attention) {
    a.executed = Flops{4.0 * q_tokens * x.s * x.q / x.t};  // the whole s x s matrix, masked after
    a.score_elements = score_matrix_elements(x);
  } else if (cfg.model.attention_window > 0 && span < x.s) {
    // Causal sliding window: each query sees up to `span` keys; the first `span` see fewer.
    a.executed = Flops{4.0 * x.b / x.c * (x.s * span - span * span / 2.0) * x.q / x.t};
  } else {
    a.executed = Flops{4.0 * q_tokens * (x.s + 1.0) / 2.0 * x.q / x.t};  // causal triangle
  }
  return a;
}

namespace {

// Elements the unfused attention's kernels over the score matrix read and write, forward:
// scale-mask-softmax (one fused kernel since Megatron-LM SC'21 section 4.2: r + w) and attention
// dropout (r + w + mask) over b (a/t) s s. None with flash attention.
double score_elementwise_elements(const ScenarioConfig& cfg) {
  if (cfg.training.flash_attention) return 0.0;
  const double dropout = cfg.training.dropout ? 1.0 : 0.0;
  const double scores = score_matrix_elements(dims(cfg));
  return 2.0 * scores + 3.0 * dropout * scores;
}

}  // namespace

Bytes activation_kernel_bytes(double rows, double up, double f, double element_bytes) {
  return bytes_of(rows * (up + f) * element_bytes);
}

Bytes mlp_activation_bytes(const ScenarioConfig& cfg) {
  const Dims x = dims(cfg);
  const double f = x.f / x.t;
  // Reads the up projection (gate and up under SwiGLU) and writes f wide: 3 f a token under
  // SwiGLU (4 until 2026-12-07, as if it wrote 2f: 0.23% of Llama 3 405B's step), 2 f under GeLU.
  // LayerNorm and GeLU as fine-grained kernels each make their own pass: MegaScale
  // (arXiv:2402.15627) section 3.3 fuses them as one of its "efficient operators".
  const double unfused = cfg.training.fused_kernels ? 1.0 : 2.0;
  return activation_kernel_bytes(x.b * x.s / x.c, (x.swiglu ? 2.0 : 1.0) * f, f, unfused * kAct);
}

Bytes layer_elementwise_bytes(const ScenarioConfig& cfg) {
  const Dims x = dims(cfg);
  const double tokens = x.b * x.s / x.c;
  // Activations of width h: sharded by TP under sequence parallelism, else replicated.
  const double e_h = tokens * x.h / (cfg.parallelism.sequence_parallel ? x.t : 1.0);
  // Each kernel reads and writes its operands once (element counts): 2 norms (r + w), twice as
  // much unfused (as the activation), 2 bias-dropout-residual-add (r 2, w 1, mask w; fused since
  // Megatron-LM SC'21 section 4.2), and the MLP activation (mlp_activation_bytes).
  const double norms = 2 * 2 * e_h * (cfg.training.fused_kernels ? 1.0 : 2.0);
  // Without dropout (training.dropout: false, Llama-style) no attention dropout runs (charged
  // whatever the setting until 2026-12-06). The bias-residual-adds' mask writes are still charged
  // (a quarter of their 4 e_h: 0.14% of Llama 3 405B's step).
  const double elements = norms + 2 * 4 * e_h + score_elementwise_elements(cfg);
  return Bytes{bytes_of(elements * kAct).n + mlp_activation_bytes(cfg).n};
}

Bytes attention_score_elementwise_bytes(const ScenarioConfig& cfg) {
  return bytes_of(score_elementwise_elements(cfg) * kAct);
}

Bytes activation_bytes_per_layer(const ScenarioConfig& cfg) {
  const Dims x = dims(cfg);
  const double sbh = x.s / x.c * x.b * x.h;
  const double sp = cfg.parallelism.sequence_parallel ? x.t : 1.0;
  if (cfg.training.recompute == Recompute::kFull) {
    return bytes_of(kAct * sbh / sp);  // only the layer input is kept
  }
  // Korthikanti et al. Table 2, per layer in bytes (16-bit activations, 1-byte dropout masks):
  //   attention: 11 sbh + 5 a s^2 b  ->  2 sbh (norm out) + 2 sbq (Q) + 4 sb kv d (K, V)
  //              + 2 sbq (context) + sbh (dropout mask), + softmax and its dropout: 5 a s^2 b
  //              (q = a d, hidden unless model.head_dim says otherwise)
  //   MLP:       19 sbh              ->  2 sbh (input) + 4 s b f (two f-wide tensors) + sbh (mask)
  //   norms:     4 sbh
  // Of these, 10 sbh (norm inputs, the two dropout masks, inputs of the first GEMMs) stay whole
  // without sequence parallelism; the rest is split by TP. Flash attention or selective
  // recomputation drops the 5 a s^2 b term; training without dropout (Llama) the masks' 2 sbh.
  const double sbf = x.s / x.c * x.b * x.f;
  const double sbq = x.s / x.c * x.b * x.q, sbkv = x.s / x.c * x.b * x.kv * x.d;
  const double split = 2.0 * sbq + 4.0 * sbkv + 2.0 * sbq + (x.swiglu ? 6.0 : 4.0) * sbf;
  const double whole = (cfg.training.dropout ? 10.0 : 8.0) * sbh;
  double bytes = split / x.t + whole / sp;
  const bool keep_scores = !cfg.training.flash_attention && cfg.training.recompute == Recompute::kNone;
  // The softmax output (2 a s^2 b), and with attention dropout its mask and output (3 a s^2 b).
  if (keep_scores) bytes += (cfg.training.dropout ? 5.0 : 2.0) * x.a * (x.s / x.c) * x.s * x.b / x.t;
  return bytes_of(bytes);
}

double main_grad_bytes(const TrainingConfig& t) { return t.fp32_grad_reduce ? 4.0 : 2.0; }

double grad_bytes_per_value(const TrainingConfig& t) {
  switch (t.comm_precision) {
    case CommPrecision::kFp8: return 1.0;
    case CommPrecision::kBf16: return 2.0;
    case CommPrecision::kDefault: break;
  }
  return main_grad_bytes(t);
}

void add_zero_working_set(MemoryEstimate& e, int zero_stage, double layer_params, double grad_bytes) {
  if (zero_stage >= 3) e.weights = e.weights + bytes_of(2.0 * layer_params * 2.0);
  if (zero_stage >= 2) e.gradients = e.gradients + bytes_of(layer_params * grad_bytes);
}

MemoryEstimate most_loaded_memory_per_gpu(const ScenarioConfig& cfg) {
  MemoryEstimate e = memory_per_gpu(cfg);
  const SequenceImbalance& si = cfg.stragglers.sequence_imbalance;
  // Only the activations grow with the heavy replicas' sequences: the weights (learned position
  // embeddings included) are the model's.
  if (si.max_over_mean > 1.0) e.activations = memory_per_gpu(with_heavy_sequences(cfg, si)).activations;
  return e;
}

MemoryEstimate memory_per_gpu(const ScenarioConfig& cfg) {
  if (cfg.model.moe) return moe_memory_per_gpu(cfg);
  const Dims x = dims(cfg);
  const ModelConfig& m = cfg.model;
  const ParamCount pc = count_params(m);
  // Layers per stage: even, or as listed (stragglers.stage_layers; Llama 3 gives the first and the
  // last stage one layer fewer to make room for the embedding and the LM head).
  const std::vector<int>& listed = cfg.stragglers.stage_layers;
  auto layers_of = [&](int s) { return listed.empty() ? x.l / x.p : static_cast<double>(listed[s]); };
  // Each stage's parameters: its layers plus the embedding (first stage) or the LM head (last
  // stage; a tied head is a second copy there when pp > 1).
  const int pp = static_cast<int>(x.p);
  const double vocab_part = static_cast<double>(m.vocab) * x.h;
  const auto params_of = [&](int s) {
    double p_s = layers_of(s) * pc.per_layer;
    if (s == 0) p_s += pc.embedding;
    if (s == pp - 1) p_s += (pp == 1 ? pc.lm_head : vocab_part) + pc.final_norm;
    return p_s / x.t;
  };

  const int zero = cfg.parallelism.zero_stage;
  const double grad_bytes = main_grad_bytes(cfg.training);
  // Mixed-precision Adam: 16-bit weights, FP32 master copy + two moments (12 bytes/parameter).
  // ZeRO shards over the DP x CP ranks (gradient_sync_size).
  const double shards = x.dp * x.c;

  // 1F1B keeps up to pp - s micro-batches in flight on stage s, each holding that stage's layers:
  // l layers' worth on the first stage of an even split; interleaving raises the first stage's by
  // (1 + (pp-1)/(pp vpp)) (Korthikanti et al. 4.2.3), and a later stage s holds 2 (pp - s - 1) +
  // (vpp - 1) pp + 1 chunks (Megatron-LM's warm-up and one more: chunks_in_flight, above the
  // formula's count for s > 0). A pipeline of m micro-batches never holds more than m of them:
  // min(pp - s, m), and interleaved at most every micro-batch's forward on the stage (m vpp
  // chunks). Until 2026-12-05 pp were counted whatever m (a 175B plan of one micro-batch: 77 GiB,
  // not 10); until 2026-12-06 every stage at the first stage's factor.
  // The logits (16-bit) and their FP32 copy for the loss are the last stage's alone: until
  // 2026-12-06 they were added to the most loaded stage's layers, the first's (6.7B, tp 4 pp 2:
  // 2.27 GiB where the first stage holds 2.125 GiB). What each stage holds as its passes run in
  // the schedule's order (chunks_in_flight, peak_held's count for equal chunks, as MoE models
  // replay it: an interleaved last stage holds more chunks than plain 1F1B's one micro-batch, and
  // the logits beside them), each chunk its stage's layers over vpp.
  const int vpp = static_cast<int>(x.vpp);
  const int m_in_pipeline = static_cast<int>(micro_batches_per_iteration(cfg));
  const double per_layer = activation_bytes_per_layer(cfg).as_double();
  const double logits = x.b * x.s / x.c * x.v / x.t * (kAct + 4.0);
  // Recomputing a layer needs its full activations once more.
  double recomputed = 0.0;
  if (cfg.training.recompute == Recompute::kFull) {
    ScenarioConfig no_rc = cfg;
    no_rc.training.recompute = Recompute::kNone;
    recomputed = activation_bytes_per_layer(no_rc).as_double();
  }

  // The most loaded GPU: the stage whose weights, gradients, optimizer state and activations add
  // up to the most. Until 2026-12-07 the most parameters of any stage beside the most activations
  // of any stage, which could be two stages (the first's embedding, the last's logits): an upper
  // bound.
  MemoryEstimate e;
  double most_params = 0.0, most_optimizer = 0.0;
  for (int s = 0; s < pp; ++s) {
    const double params = params_of(s);
    most_params = std::max(most_params, params);
    MemoryEstimate st;
    st.weights = bytes_of(params * 2.0 / (zero >= 3 ? shards : 1.0));
    st.gradients = bytes_of(params * grad_bytes / (zero >= 2 ? shards : 1.0));
    st.optimizer = bytes_of(params * 12.0 / (zero >= 1 ? shards : 1.0));
    if (shards > 1) add_zero_working_set(st, zero, pc.per_layer / x.t, grad_bytes);
    const double held = chunks_in_flight(pp, vpp, m_in_pipeline, s) * per_layer * layers_of(s) / vpp;
    st.activations = bytes_of(held + (s == pp - 1 ? logits : 0.0) + recomputed);
    most_optimizer = std::max(most_optimizer, st.optimizer.as_double());
    if (s == 0 || st.total() > e.total()) e = st;
  }
  // The DP collectives' bytes: the stage with the most parameters (what the time model sends).
  e.params_on_gpu = most_params;
  e.most_optimizer = bytes_of(most_optimizer);
  return e;
}

}  // namespace clustersim::work
