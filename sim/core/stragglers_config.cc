// SPDX-License-Identifier: Apache-2.0
#include "sim/core/stragglers_config.h"

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"

namespace clustersim {

void read_stragglers(MapReader r, StragglersConfig& out) {
  (void)out;
  r.finish();
}

void validate_stragglers(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  (void)cfg;
  (void)errors;
}

}  // namespace clustersim
