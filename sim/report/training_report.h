// SPDX-License-Identifier: Apache-2.0
// Turns a training estimate into results.json and the human summary. Keys are documented in
// docs/results.md and are a stable interface.
#pragma once

#include <string>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/analytical_training.h"
#include "sim/report/json_writer.h"

namespace clustersim::report {

// The results.json object of a training run.
Json training_results(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                      const engine::TrainingEstimate& est);

// A few lines for a terminal: plan, iteration time, tokens/s, MFU, breakdown, memory.
std::string training_summary(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const engine::TrainingEstimate& est);

}  // namespace clustersim::report
