// SPDX-License-Identifier: Apache-2.0
#include "sim/core/dcqcn_config.h"

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"

namespace clustersim {

void read_dcqcn(MapReader r, DcqcnConfig& out) {
  (void)out;
  r.finish();
}

void validate_dcqcn(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  (void)cfg;
  (void)errors;
}

}  // namespace clustersim
