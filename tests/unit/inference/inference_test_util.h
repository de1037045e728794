// SPDX-License-Identifier: Apache-2.0
// Inline serving scenarios for the inference tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"

namespace clustersim::testing {

// A small MoE model (4 layers, 8 experts, top-2) on 16 H100 GPUs, colocated in 2 instances of 8.
inline const char* const kServing =
    "name: tiny-serving\n"
    "cluster: {gpu: H100-SXM, gpus: 16, gpus_per_node: 8}\n"
    "model: {layers: 4, hidden: 1024, heads: 16, kv_heads: 4, ffn_hidden: 2048, seq_len: 2048,\n"
    "        vocab: 32000, activation: swiglu, tied_embeddings: false, learned_positions: false}\n"
    "inference:\n"
    "  mode: colocated\n"
    "  seed: 7\n"
    "  requests: 200\n"
    "  rate_per_s: 400\n"
    "  prompt_tokens: {dist: uniform, min: 64, max: 512}\n"
    "  output_tokens: {dist: uniform, min: 1, max: 64}\n"
    "  max_batch: 64\n"
    "  tpot_limit: 50ms\n"
    "  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024}\n"
    "  pools:\n"
    "    colocated: {gpus: 16, tp: 2, ep: 8, price_per_hour: 2.5}\n";

// kServing with "key.path=value" overrides applied (YAML values), loaded and validated.
inline ScenarioConfig serving(const std::vector<std::string>& overrides = {}, const char* text = kServing) {
  YamlNode root = parse_yaml_text(text, "serving.yaml");
  for (const std::string& o : overrides) apply_override(root, o);
  return scenario_from_tree(root, "serving.yaml");
}

// Deletes a top-level-path key ("inference.pools.colocated") from the tree before loading.
inline ScenarioConfig serving_without(const std::string& path, const std::vector<std::string>& overrides = {}) {
  YamlNode root = parse_yaml_text(kServing, "serving.yaml");
  for (const std::string& o : overrides) apply_override(root, o);
  YamlNode* node = &root;
  std::string rest = path;
  while (true) {
    const size_t dot = rest.find('.');
    const std::string key = rest.substr(0, dot);
    if (dot == std::string::npos) {
      auto& m = node->map;
      for (auto it = m.begin(); it != m.end(); ++it) {
        if (it->first == key) {
          m.erase(it);
          break;
        }
      }
      break;
    }
    node = node->find(key);
    rest = rest.substr(dot + 1);
  }
  return scenario_from_tree(root, "serving.yaml");
}

// The messages of the BadInput thrown by `f`, joined; empty when nothing was thrown.
template <typename F>
std::string bad_input_of(F f) {
  try {
    f();
  } catch (const BadInput& e) {
    std::string all;
    for (const InputError& err : e.errors()) all += err.to_string() + "\n";
    return all;
  }
  return "";
}

}  // namespace clustersim::testing
