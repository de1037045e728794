// SPDX-License-Identifier: Apache-2.0
// `stragglers`: slow GPUs, hosts, links and stages in the detailed simulation (issue 9).
// Plain structs (no yaml-cpp); read_stragglers fills them from the scenario, validate_stragglers checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

struct StragglersConfig {
};

// Reads the `stragglers` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_stragglers(MapReader r, StragglersConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
void validate_stragglers(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
