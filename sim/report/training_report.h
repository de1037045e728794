// SPDX-License-Identifier: Apache-2.0
// Turns a training estimate into results.json and the human summary. Keys are documented in
// docs/results.md and are a stable interface.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/analytical_training.h"
#include "sim/engine/flow_training.h"
#include "sim/report/json_writer.h"
#include "sim/report/run_scenario.h"

namespace clustersim::report {

// The headline of a run that stragglers slow (analytical level): iteration, tokens/s, MFU and
// HFU with them, as results.json reports them; the estimate's breakdown stays straggler-free.
struct SlowedHeadline {
  Time iteration;
  double tokens_per_s = 0;
  double mfu = 0;
  double hfu = 0;
};

// The parts of a breakdown as results.json names them (without the "_s"), in order: `ep_exposed`
// for MoE runs only, `step_stall` only where it is not 0. They add up to the iteration they break
// down; the text summary, results.json and report.html show these.
std::vector<std::pair<const char*, Time>> breakdown_parts(const engine::TrainingBreakdown& b, bool moe);

// The results.json object of a training run; with `slowed`, the headline figures (iteration,
// tokens/s, MFU, HFU, mfu_causal and the achieved TFLOP/s) are its, the breakdown the estimate's.
Json training_results(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                      const engine::TrainingEstimate& est,
                      const std::optional<SlowedHeadline>& slowed = std::nullopt);

// A few lines for a terminal: plan, iteration time, tokens/s, MFU, breakdown, memory. With
// `slowed`, the headline is its figures, each beside the estimate's ("without stragglers").
std::string training_summary(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const engine::TrainingEstimate& est,
                             const std::optional<SlowedHeadline>& slowed = std::nullopt);

// The results.json object of a flow-level run: the same keys as training_results (breakdown of the
// critical rank group), plus `flow` (run facts and the analytical level's figures), `rank_groups`
// (per representative rank group: end, breakdown, critical path) and `links` (per-tier load and
// the most loaded links). Documented in docs/results.md.
Json flow_training_results(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                           const engine::FlowTrainingResult& flow);

// The analytical level's iteration and MFU that a flow-level run is compared with: of the same
// scenario, its stragglers included (the straggler model's replay, milliseconds to a second
// beside the flow simulation; `with_stragglers`), else the closed form without them
// (FlowTrainingResult::analytical): no stragglers, or a replay past kMaxPassesPerReplay. Always
// without network.faults (`without_faults`), which the analytical level refuses: its routed
// collectives would see a degraded NIC or fabric link and miss a degraded NVLink, a figure no
// analytical run gives.
struct AnalyticalPeer {
  Time iteration;
  double mfu = 0;
  bool with_stragglers = false;
  bool without_faults = false;
};
AnalyticalPeer analytical_peer(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                               const engine::FlowTrainingResult& flow);

// training_summary plus the analytical figures beside (`peer`, labelled with or without the
// scenario's stragglers), the rank groups, the critical path's shape and the fabric load.
std::string flow_training_summary(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                  const engine::FlowTrainingResult& flow, const AnalyticalPeer& peer);

// The headline numbers of a training estimate, by results.json key (RunOutput::metrics).
std::map<std::string, double> training_metrics(const engine::TrainingEstimate& est);

// A flow-level training run as the CLI writes it: results.json, summary, trace.json,
// report.html and the headline metrics.
RunOutput flow_training_output(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                               const engine::FlowTrainingResult& flow);

}  // namespace clustersim::report
