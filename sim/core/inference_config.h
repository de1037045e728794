// SPDX-License-Identifier: Apache-2.0
// `inference`: serving simulation (issue 8): arrivals, batching, deployment mode and pools.
// Plain structs (no yaml-cpp); read_inference fills them from the scenario, validate_inference checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

// How the GPUs serve the model.
//   colocated       every GPU of an instance runs whole layers (prefill and decode mixed)
//   prefill_decode  a prefill pool and a decode pool; the KV cache crosses the network between them
//   attention_ffn   an attention pool (KV caches) and an expert pool; hidden states cross the
//                   network twice per layer (M2N, N2M), a batch split into micro-batches
enum class ServingMode { kColocated, kPrefillDecode, kAttentionFfn };

// Distribution of prompt or output lengths, in tokens.
//   fixed        always `mean`
//   uniform      uniform integer in [min, max]
//   exponential  mean `mean`, rounded, clamped to [min, max]
enum class LengthDist { kFixed, kUniform, kExponential };
struct LengthConfig {
  LengthDist dist = LengthDist::kFixed;
  int mean = 0;
  int min = 1;
  int max = 0;  // 0 = no upper bound (fixed, exponential); required for uniform
};

// How an instance's MoE layer moves its tokens to the experts and back (colocated, prefill and
// decode pools): an all-to-all of each token to its top_k experts' GPUs and back, or an all-gather
// of every token to every GPU of the instance and a reduce-scatter of the outputs.
enum class MoeDispatch { kAllToAll, kAllGather };

// `inference.moe`: a mixture-of-experts FFN, self-contained here (the training `model` section
// describes a dense transformer). Absent (experts = 0): every layer has the dense `model` MLP.
struct MoeServingConfig {
  int experts = 0;              // routed experts per MoE layer
  int top_k = 1;                // experts each token visits
  int expert_ffn_hidden = 0;    // width of one expert's MLP (0 = model.ffn_hidden)
  int shared_experts = 0;       // experts every token visits (DeepSeekMoE style)
  int dense_layers = 0;         // leading layers with a dense MLP (model.ffn_hidden) instead
  int moe_layer_frequency = 1;  // after them every n-th layer is MoE, the others dense (Llama 4: 2)
  double load_imbalance = 1.0;  // busiest expert's tokens / mean (1 = perfectly balanced)
  MoeDispatch dispatch = MoeDispatch::kAllToAll;
};

// One pool of GPUs of one type. Instances inside a pool are `ep` GPUs (attention: `tp` per
// replica); the expert pool of attention_ffn is one expert-parallel group over all its GPUs.
struct PoolConfig {
  std::string gpu;              // hardware profile; empty = cluster.gpu
  int gpus = 0;                 // GPUs in the pool (required for the pools the mode uses)
  int tp = 1;                   // tensor parallelism of attention (expert pool: of each expert)
  int ep = 0;                   // GPUs per instance holding the experts; 0 = tp (colocated, prefill, decode)
  int expert_tp = 0;            // GPUs each expert is split over inside an instance; 0 = ep / experts when
                                // ep exceeds the experts, else 1 (colocated, prefill, decode)
  double price_per_gpu_hour = 0.0;  // price of one GPU-hour, any currency; 0 = unknown
  int max_batch = 0;            // sequences in one step of an instance; 0 = inference.max_batch
                                // (colocated, prefill, decode; attention_ffn's is the deployment's)
};

enum class KvPrecision { kBf16, kFp8 };
enum class WeightPrecision { kBf16, kFp8 };

struct InferenceConfig {
  ServingMode mode = ServingMode::kColocated;
  uint64_t seed = 0;             // arrivals and lengths
  // Arrivals: a Poisson process of `rate_per_s` for `requests` requests, or a trace file.
  int requests = 1000;
  double rate_per_s = 10.0;
  std::string trace;             // CSV: arrival_s,prompt_tokens,output_tokens (relative to the scenario)
  double trace_speed = 1.0;      // the trace replayed this many times as fast: its arrivals divided by it
  LengthConfig prompt{LengthDist::kFixed, 1024, 1, 0};
  LengthConfig output{LengthDist::kFixed, 256, 1, 0};
  // Batching (continuous, per instance; attention_ffn: per deployment).
  int max_batch = 256;           // sequences decoding together
  int max_prefill_tokens = 8192; // prompt tokens admitted per step (chunked: all tokens of a step)
  // Chunked prefill (Sarathi-Serve; vLLM's and TensorRT-LLM's chunked context): a prompt is
  // processed in chunks that fill the step's token budget, max_prefill_tokens less the step's
  // decode tokens, beside the running decodes; false: whole prompts, a longer one alone.
  bool chunked_prefill = false;
  std::optional<Bytes> kv_cache_per_gpu;  // KV cache budget per GPU; default: HBM left after weights
  // Share of the HBM left after weights and workspace that the KV cache takes (the rest the engine
  // keeps: TensorRT-LLM's free_gpu_memory_fraction, 0.9 by default); unused with kv_cache_per_gpu.
  double kv_cache_fraction = 1.0;
  KvPrecision kv_precision = KvPrecision::kBf16;
  // Linear layers' weights and GEMMs: bf16, or fp8 (W8A8 as ModelOpt quantises: 1 B weights and
  // GEMM inputs at the profile's fp8 peak; embeddings, LM head and router stay bf16).
  WeightPrecision weight_precision = WeightPrecision::kBf16;
  int micro_batches = 1;         // attention_ffn ping-pong micro-batches (m)
  Time tpot_limit = Time::zero();  // service objective for the sweep and goodput; 0 = none
  Time ttft_limit = Time::zero();  // service objective for goodput (slo_attainment); 0 = none
  MoeServingConfig moe;
  // Pools by role; which are used depends on `mode`.
  std::optional<PoolConfig> colocated, prefill, decode, attention, expert;
};

const char* to_string(ServingMode m);

// The pools the scenario gives, in pool order (colocated, prefill, decode, attention, expert).
std::vector<const PoolConfig*> given_pools(const InferenceConfig& in);

// GPUs the deployment's pools hold (they sit on GPUs 0.. of the cluster, in pool order).
int serving_gpus(const InferenceConfig& in);

// Reads the `inference` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_inference(MapReader r, InferenceConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
// Checks the `model` section for serving too (heads, kv_heads, tp). Memory fit needs the hardware
// profile and is checked when the run starts (sim/engine/inference_cost.h).
void validate_inference(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
