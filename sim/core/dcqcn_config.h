// SPDX-License-Identifier: Apache-2.0
// `network.dcqcn` and PFC: congestion-control parameters for the flow+dcqcn and packet levels (issue 6).
// Plain structs (no yaml-cpp); read_dcqcn fills them from the scenario, validate_dcqcn checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

struct DcqcnConfig {
};

// Reads the `network.dcqcn` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_dcqcn(MapReader r, DcqcnConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
void validate_dcqcn(const ScenarioConfig& cfg, std::vector<InputError>& errors);

}  // namespace clustersim
