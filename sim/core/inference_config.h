// SPDX-License-Identifier: Apache-2.0
// `inference`: serving simulation (issue 8): arrivals, batching, deployment mode and pools.
// Plain structs (no yaml-cpp); read_inference fills them from the scenario, validate_inference checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

struct InferenceConfig {
};

// Reads the `inference` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_inference(MapReader r, InferenceConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
void validate_inference(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
