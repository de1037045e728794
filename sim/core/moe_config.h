// SPDX-License-Identifier: Apache-2.0
// `model.moe`: a Mixture-of-Experts model (issue 7). Plain struct (no yaml-cpp); read_moe fills it
// from the scenario, validate_moe checks it and the MoE plan keys against the rest of the
// scenario. Keys are documented in scenarios/README.md (section `model.moe`).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/error.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

// How tokens pick their experts (each token picks top_k distinct experts).
enum class MoeRouting {
  kUniform,  // every expert equally likely
  kZipf,     // expert of rank r (a seeded permutation) with weight 1 / r^zipf_s
  kLoads,    // weights given per expert in `loads`
};

struct MoeConfig {
  int experts = 0;                 // required: routed experts per MoE layer
  int top_k = 1;                   // routed experts per token
  int expert_ffn_hidden = 0;       // 0 = model.ffn_hidden
  int shared_experts = 0;          // experts every token visits (computed where the token is)
  int moe_layer_frequency = 1;     // every n-th layer (after first_dense_layers) is an MoE layer
  int first_dense_layers = 0;      // leading layers with the dense MLP (DeepSeek style)
  double capacity_factor = 0.0;    // 0 = dropless; else tokens per expert capped at cf x mean
  MoeRouting routing = MoeRouting::kUniform;
  double zipf_s = 1.0;             // kZipf exponent
  std::vector<double> loads;       // kLoads: one non-negative weight per expert
  uint64_t seed = 0;               // routing draws (a seed gives the same routing everywhere)
};

// Communication precision of the all-to-all and the gradient sync (training.comm_precision).
enum class CommPrecision {
  kDefault,  // all-to-all in the activation precision (2 B), gradients per fp32_grad_reduce
  kBf16,     // gradients reduced in BF16 (halves FP32 gradient traffic)
  kFp8,      // all-to-all and gradients in FP8 (1 B per value)
};

// How attention is split across the tp group (training.attention_parallel).
enum class AttentionParallel {
  kTp,  // Megatron tensor parallelism (with sequence parallelism when enabled)
  kSp,  // sequence parallelism, weights replicated, K/V all-gathered (MegaScale-MoE section 3)
};

const char* to_string(MoeRouting r);
const char* to_string(CommPrecision p);
const char* to_string(AttentionParallel a);

// The routing weights of `m`'s experts, relative: 1 each under uniform routing; the loads over the
// largest, expert by expert, under `loads` (uniform when they do not give one weight per expert);
// under zipf 1 / (rank + 1)^zipf_s by rank, heaviest first (which expert holds which rank is the
// routing draw's: workloads' expert_weights permutes them). One formula for the draws and for
// validate_moe's bound on their cost.
std::vector<double> routing_weights(const MoeConfig& m);

// Reads the `model.moe` mapping strictly (unknown keys are errors). Called by the loader.
void read_moe(MapReader r, MoeConfig& out);

// Cross-field checks of model.moe, parallelism.ep / expert_tp, training.attention_parallel,
// training.overlap.a2a_chunks and training.comm_precision; appends problems to `errors`.
void validate_moe(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
