// SPDX-License-Identifier: Apache-2.0
// Serving runs (scenarios with an `inference:` section): results.json, summary and headline metrics.
#pragma once

#include <vector>

#include "sim/core/config.h"
#include "sim/engine/inference_sim.h"
#include "sim/report/json_writer.h"
#include "sim/report/run_scenario.h"

namespace clustersim::report {

// Mean, median and 99th percentile (nearest rank) of `values`; all zero when empty.
struct Percentiles {
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  int64_t count = 0;
};
Percentiles percentiles(std::vector<double> values);

// Builds results (kind "inference"), the summary and the metrics map from a finished run.
RunOutput inference_output(const ScenarioConfig& cfg, const engine::ServingResult& r);

// Runs the serving simulation of a validated scenario (engine::run_serving) and reports it.
RunOutput run_inference(const ScenarioConfig& cfg);

}  // namespace clustersim::report
