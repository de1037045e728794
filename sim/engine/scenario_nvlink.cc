// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/scenario_nvlink.h"

#include "sim/core/error.h"
#include "sim/core/scenario.h"

namespace clustersim::engine {

calib::HardwareProfile scenario_profile(const ScenarioConfig& cfg) {
  try {
    return calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
  } catch (const BadInput& e) {
    throw in_scenario(cfg, e);  // the loader knows the key, not the scenario
  }
}

Bandwidth scenario_nvlink_bandwidth(const ScenarioConfig& cfg) {
  if (cfg.network.nvlink_bandwidth) return *cfg.network.nvlink_bandwidth;
  return scenario_profile(cfg).nvlink_bandwidth;
}

}  // namespace clustersim::engine
