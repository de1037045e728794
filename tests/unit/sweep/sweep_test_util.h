// SPDX-License-Identifier: Apache-2.0
// Inline sweep files for the sweep tests.
#pragma once

#include <string>

#include "sim/core/yaml_tree.h"
#include "sim/report/sweep/sweep_spec.h"

namespace clustersim::sweep::testing {

// A 1.7B-parameter GPT on 16 A100 GPUs: small enough that every plan runs in microseconds.
inline const char* const kBase =
    "base:\n"
    "  cluster: {gpu: A100-SXM4-80GB, gpus: 16, nic_bandwidth: 200Gbps}\n"
    "  model: {layers: 24, hidden: 2304, heads: 24, seq_len: 2048, vocab: 51200}\n"
    "  parallelism: {tp: 1, pp: 1}\n"
    "  training: {global_batch: 384}\n";

inline SweepSpec spec_from(const std::string& body) {
  return sweep_spec_from_tree(parse_yaml_text(std::string(kBase) + body, "test.yaml"), "test.yaml");
}

}  // namespace clustersim::sweep::testing
