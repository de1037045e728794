// SPDX-License-Identifier: Apache-2.0
// `faults`: job-level reliability simulation over days of training (issue 9).
// Plain structs (no yaml-cpp); read_faults fills them from the scenario, validate_faults checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

struct FaultsConfig {
};

// Reads the `faults` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_faults(MapReader r, FaultsConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
void validate_faults(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
