// SPDX-License-Identifier: Apache-2.0
// Small MoE scenarios for the tests, written as inline YAML.
#pragma once

#include <string>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"

namespace clustersim::moe_test {

// A Mixtral-shaped model cut to 4 layers on 16 H800s (2 nodes): 8 experts, top-2, ep 8 inside
// the node, sp attention; `extra` lines are appended at the top level (--set style overrides are
// applied after).
inline std::string small_yaml() {
  return R"(
cluster: {gpu: H800-SXM, gpus: 16, gpus_per_node: 8, nics_per_node: 8, nic_bandwidth: 400Gbps}
network: {fidelity: analytical, tiers: 2, switch_radix: 16}
model:
  layers: 4
  hidden: 1024
  heads: 8
  kv_heads: 2
  ffn_hidden: 2048
  seq_len: 2048
  vocab: 8192
  activation: swiglu
  tied_embeddings: false
  learned_positions: false
  moe: {experts: 8, top_k: 2, routing: uniform, seed: 1}
parallelism: {tp: 8, pp: 1, ep: 8, micro_batch: 1}
training:
  global_batch: 8
  attention_parallel: sp
)";
}

// The H800 profile the small scenarios run on, loaded once.
inline const calib::HardwareProfile& h800() {
  static const calib::HardwareProfile hw = calib::load_hardware_profile("H800-SXM");
  return hw;
}

inline ScenarioConfig load(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  YamlNode root = parse_yaml_text(yaml, "moe.yaml");
  for (const std::string& o : overrides) apply_override(root, o);
  return scenario_from_tree(root, "moe.yaml");
}

}  // namespace clustersim::moe_test
