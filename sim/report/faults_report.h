// SPDX-License-Identifier: Apache-2.0
// The reliability study of a scenario with `faults:` (ETTR, goodput, time lost per cause, the
// checkpoint-interval optimum) and a training run slowed by `stragglers:`. The straggler what-if
// is whatif_report.h.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/flow_training.h"
#include "sim/engine/reliability_sim.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/run_scenario.h"

namespace clustersim::report {

// `faults:` present: the reliability study (kind "faults"); otherwise a training run with its
// stragglers (kind "training", with a `stragglers` block). Throws BadInput like run_scenario.
RunOutput run_reliability(const ScenarioConfig& cfg, const RunOptions& options = {});

// The reliability simulation's event loop handles about ten million failures a second, and a
// slow host (a degrade component's arrival) costs about kSlowHostCost of them: it is found, waits
// for a spare and is swapped out, each through ordered indexes over the slow hosts present (a
// million per window, waiting on 8 spares, took 1.2 us each and 270 MB). Throws BadInput, with
// the figures, for a study of `cfg` (faults set) past 1e7 failures' work per window or 1e9 over
// its windows (seeds x (1 + up to 2 x sweep_points - 1)): minutes to hours of events.
inline constexpr double kSlowHostCost = 10;
void check_failure_budget(const ScenarioConfig& cfg);

// The `stragglers` block of a training run at a level that runs the operation graph (flow,
// flow+dcqcn, packet), and its summary lines: slow hosts and GPUs, straggling rank groups, degraded
// links, the critical path.
void add_flow_stragglers(const ScenarioConfig& cfg, const engine::FlowTrainingResult& flow, RunOutput& out);

// The hardware profile of `cfg`, after the checks every training run makes (level built, plan
// fits in memory); errors point at the scenario keys. Stragglers alone run at `analytical` or
// `flow`; `faults` take their level from faults.iteration_time_fidelity (checked at load).
calib::HardwareProfile training_profile(const ScenarioConfig& cfg);

// A cluster state whose iteration time the reliability simulation needs: the healthy job (on its
// own hosts or on spares, which are alike), then for each distinct (slowdown, phase) among the
// `degrade` components one slow host on each pipeline stage in turn (replica 0: every replica is
// alike). The job never runs shrunk: without a spare it waits for a repaired host.
struct ClusterState {
  std::string name;    // "healthy", "host 16 (stage 1) x1.5 all"
  ScenarioConfig cfg;  // the scenario in that state
};
std::vector<ClusterState> reliability_states(const ScenarioConfig& cfg);

// The iteration time of each state (by index into the states), from one training level.
struct StateTimes {
  IterationTimeFidelity fidelity = IterationTimeFidelity::kAnalytical;
  std::vector<Time> iteration;
  std::vector<double> wall_s;  // wall time spent timing each state
};
// Analytical: in this process (the straggler model's schedule replay). Flow: one detailed
// simulation per state, each in a forked worker (SimGrid allows one simulation per process),
// at most `jobs` at once; the result does not depend on `jobs`. A failed flow simulation throws
// BadInput naming faults.iteration_time_fidelity and the state.
StateTimes state_iteration_times(const ScenarioConfig& cfg, const std::vector<ClusterState>& states,
                                 const calib::HardwareProfile& hw, IterationTimeFidelity fidelity, int jobs);

// The reliability simulation's inputs for `cfg` (whose `faults` must be set), every default
// resolved: rates x units, checkpoint costs from the model size, comm-init scaling, and for each
// degrade component the speed of each of its states, healthy / degraded iteration at one level.
engine::ReliabilityInputs reliability_inputs(const ScenarioConfig& cfg, const std::vector<ClusterState>& states,
                                             const StateTimes& times);

}  // namespace clustersim::report
