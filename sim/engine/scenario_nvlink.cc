// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/scenario_nvlink.h"

#include "calibration/hardware_profile.h"
#include "sim/core/error.h"
#include "sim/core/scenario.h"

namespace clustersim::engine {

Bandwidth scenario_nvlink_bandwidth(const ScenarioConfig& cfg) {
  if (cfg.network.nvlink_bandwidth) return *cfg.network.nvlink_bandwidth;
  try {
    return calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir).nvlink_bandwidth;
  } catch (const BadInput& e) {
    throw in_scenario(cfg, e);  // the loader knows the key, not the scenario
  }
}

}  // namespace clustersim::engine
