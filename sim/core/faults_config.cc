// SPDX-License-Identifier: Apache-2.0
#include "sim/core/faults_config.h"

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"

namespace clustersim {

void read_faults(MapReader r, FaultsConfig& out) {
  (void)out;
  r.finish();
}

void validate_faults(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  (void)cfg;
  (void)errors;
}

}  // namespace clustersim
