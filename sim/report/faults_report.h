// SPDX-License-Identifier: Apache-2.0
// Reports for issue 9: the reliability study of a scenario with `faults:` (ETTR, goodput, time
// lost per cause, checkpoint-interval optimum), a training run slowed by `stragglers:`, and the
// straggler what-if (each source's cost and where it sits on the critical path).
#pragma once

#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/reliability_sim.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/run_scenario.h"

namespace clustersim::report {

// `faults:` present: the reliability study (kind "faults"); otherwise a training run with its
// stragglers (kind "training", with a `stragglers` block). Throws BadInput like run_scenario.
RunOutput run_reliability(const ScenarioConfig& cfg);

// The hardware profile of `cfg`, after the checks every training run makes (level built, plan
// fits in memory); errors point at the scenario keys.
calib::HardwareProfile training_profile(const ScenarioConfig& cfg);

// The reliability simulation's inputs for `cfg` (whose `faults` must be set), every default
// resolved: rates x units, checkpoint costs from the model size, comm-init scaling, and the
// degraded iteration of a straggling host on each pipeline stage from the straggler model.
engine::ReliabilityInputs reliability_inputs(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                             const engine::TrainingLevel& level, Time healthy_iteration);

// One straggler source on its own, and what removing it from the full set saves.
struct WhatIfRow {
  std::string source;           // "hosts", "gpus", "nics", "stage_layers", "sequence_imbalance"
  engine::StragglerImpact alone;
  Time saved_if_removed;        // all sources - all but this one
  std::string cause;            // ranks, stages, links on its critical path, in words
};
struct WhatIf {
  engine::StragglerImpact all;
  std::vector<WhatIfRow> rows;
};
WhatIf run_whatif(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const engine::TrainingLevel& level);
Json whatif_json(const ScenarioConfig& cfg, const WhatIf& w);
std::string whatif_table(const ScenarioConfig& cfg, const WhatIf& w);

}  // namespace clustersim::report
