// SPDX-License-Identifier: Apache-2.0
// One scenario, end to end: load the hardware profile, check the plan fits, run the chosen
// fidelity level, and produce results.json and the human summary.
#pragma once

#include <map>
#include <string>

#include "sim/core/config.h"
#include "sim/report/json_writer.h"

namespace clustersim::report {

struct RunOutput {
  Json results;           // the results.json object
  std::string summary;    // for a terminal
  std::string links_csv;  // per-link statistics (flow level); empty when not simulated
  std::map<std::string, double> metrics;  // the headline numbers of `results`, by key
};

// Runs a validated scenario. Throws BadInput for problems only visible with the hardware
// profile (unknown GPU, plan does not fit in memory, level not built for this kind of run).
RunOutput run_scenario(const ScenarioConfig& cfg);

}  // namespace clustersim::report
