// SPDX-License-Identifier: Apache-2.0
#include "sim/core/inference_config.h"

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"

namespace clustersim {

void read_inference(MapReader r, InferenceConfig& out) {
  (void)out;
  r.finish();
}

void validate_inference(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  (void)cfg;
  (void)errors;
}

}  // namespace clustersim
