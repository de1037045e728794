// SPDX-License-Identifier: Apache-2.0
// The dense plan the engine tests share: a GPT 1.3B-class model (l 24, h 2048, 16 heads, s 2048,
// V 51200) on A100 servers of 8 GPUs and 8 x 200 Gbps NICs.
#pragma once

#include <gtest/gtest.h>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"

namespace clustersim::engine_test {

inline const calib::HardwareProfile& a100() {
  static const calib::HardwareProfile hw = calib::load_hardware_profile("A100-SXM4-80GB");
  return hw;
}

// Not validated: callers change it, then check it with validated().
inline ScenarioConfig gpt_1p3b(int gpus, int tp, int pp, int global_batch, int vpp = 1) {
  ScenarioConfig cfg;
  cfg.file = "plan.yaml";
  cfg.cluster.gpu = "A100-SXM4-80GB";
  cfg.cluster.gpus = gpus;
  cfg.cluster.nic_bandwidth = gbps(200);
  cfg.model.layers = 24;
  cfg.model.hidden = 2048;
  cfg.model.heads = 16;
  cfg.model.seq_len = 2048;
  cfg.model.vocab = 51200;
  cfg.parallelism.tp = tp;
  cfg.parallelism.pp = pp;
  cfg.parallelism.vpp = vpp;
  cfg.training.global_batch = global_batch;
  return cfg;
}

// `cfg`, with a test failure for each problem validate_scenario finds in it.
inline ScenarioConfig validated(ScenarioConfig cfg) {
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test plan is invalid: " << e.to_string();
  return cfg;
}

}  // namespace clustersim::engine_test
