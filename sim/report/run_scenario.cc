// SPDX-License-Identifier: Apache-2.0
#include "sim/report/run_scenario.h"

#include "calibration/hardware_profile.h"
#include "sim/core/error.h"
#include "sim/engine/analytical_training.h"
#include "sim/report/training_report.h"

namespace clustersim::report {
namespace {

int line_of(const ScenarioConfig& cfg, const std::string& key) {
  const auto it = cfg.lines.find(key);
  return it == cfg.lines.end() ? 0 : it->second;
}

RunOutput run_training(const ScenarioConfig& cfg) {
  const calib::HardwareProfile hw = [&] {
    try {
      return calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
    } catch (const BadInput& e) {
      // Point the reader at the scenario key as well as at the profile.
      std::vector<InputError> errors = e.errors();
      for (InputError& err : errors) {
        if (err.file.empty()) {
          err.file = cfg.file;
          err.line = line_of(cfg, "cluster.gpu");
        }
      }
      throw BadInput(errors);
    }
  }();
  if (cfg.network.fidelity != Fidelity::kAnalytical) {
    throw BadInput(InputError{cfg.file, line_of(cfg, "network.fidelity"), "network.fidelity",
                              std::string("training at the '") + to_string(cfg.network.fidelity) +
                                  "' level is not built yet; use 'analytical' (the flow level runs "
                                  "network microbenchmarks: scenarios/net-*.yaml)"});
  }
  if (auto errors = engine::check_memory_fit(cfg, hw); !errors.empty()) throw BadInput(errors);
  const engine::TrainingEstimate est = engine::estimate_training(cfg, hw);
  RunOutput out;
  out.results = training_results(cfg, hw, est);
  out.summary = training_summary(cfg, hw, est);
  out.metrics = {{"iteration_time_s", est.iteration.as_s()},
                 {"tokens_per_s", est.tokens_per_s},
                 {"mfu", est.mfu},
                 {"hfu", est.hfu}};
  return out;
}

}  // namespace

RunOutput run_scenario(const ScenarioConfig& cfg) {
  if (cfg.traffic) {
    throw BadInput(InputError{cfg.file, line_of(cfg, "traffic"), "traffic",
                              "network microbenchmarks need the flow level, which this build lacks"});
  }
  return run_training(cfg);
}

}  // namespace clustersim::report
