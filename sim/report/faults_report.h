// SPDX-License-Identifier: Apache-2.0
// Reports for issue 9: the reliability study of a scenario with `faults:` (ETTR, goodput, time
// lost per cause, checkpoint-interval optimum), a training run slowed by `stragglers:`, and the
// straggler what-if (each source's cost and where it sits on the critical path).
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

// One straggler source on its own, and what removing it from the full set saves.
struct WhatIfRow {
  std::string source;           // "hosts", "gpus", "nics", "stage_layers", "sequence_imbalance"
  engine::StragglerImpact alone;
  Time saved_if_removed;        // all sources - all but this one
  std::string cause;            // ranks, stages, links on its critical path, in words
};
// The slow hosts and GPUs holding one pipeline stage: what they cost alone, and what repairing
// them (every other straggler still there) saves.
struct WhatIfStage {
  int stage = -1;
  std::vector<int> hosts;
  std::vector<int> gpus;
  engine::StragglerImpact alone;
  Time saved_if_removed;
};
// Drawn stragglers redrawn with seeds seed .. seed + count - 1: the MFU lost over placements.
struct WhatIfDraws {
  int count = 0;
  double mfu_lost_mean = 0;
  double mfu_lost_ci95 = 0;  // half width of the 95% confidence interval of the mean (Student t)
  double mfu_lost_min = 0;
  double mfu_lost_max = 0;
  int last_stage = 0;        // draws whose costliest stage is the last (which also runs the LM head)
  bool placements = true;    // hosts or GPUs were redrawn (false: only the GPU speeds)
  // With `stragglers.variation` and other sources: what the other sources cost on top of the
  // variation alone (what repairing them regains), over the same draws.
  struct Spread {
    double mean = 0;
    double ci95 = 0;
    double min = 0;
    double max = 0;
  };
  std::optional<Spread> beyond_variation;
};
struct WhatIf {
  engine::StragglerImpact all;
  std::vector<WhatIfRow> rows;
  std::vector<WhatIfStage> stages;  // stages holding a slow host or GPU, by stage
  std::string cause;                // the stage whose slow hosts cost the most, in words
  WhatIfDraws draws;                // count 0 unless run_whatif was asked for draws
};
// Placements `clustersim run` and `whatif` price by default at the analytical level when slow hosts
// or GPUs are drawn (milliseconds at 12,288 GPUs).
inline constexpr int kDefaultPlacementDraws = 100;

// The MFU lost over `draws` placements of the drawn stragglers (seeds seed .. seed + draws - 1).
WhatIfDraws placement_draws(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                            const engine::TrainingLevel& level, int draws);
// `draws` > 1 also redraws the drawn stragglers (placement_draws).
WhatIf run_whatif(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const engine::TrainingLevel& level,
                  int draws = 1);
Json whatif_json(const ScenarioConfig& cfg, const WhatIf& w);
std::string whatif_table(const ScenarioConfig& cfg, const WhatIf& w);

// The what-if at the flow level: each variant is one detailed simulation (SimGrid allows one per
// process, so the CLI runs each in a forked child and passes this record back as one line).
struct FlowVariant {
  std::string name;        // "baseline", "all", a source alone ("hosts"), "all but hosts", "all, seed 4",
                           // "all but stage 7" (that stage's slow hosts and GPUs repaired)
  double iteration_s = 0;
  double mfu = 0;
  double wall_s = 0;
  int rank_groups = 0;     // simulated
  std::string critical;    // rank groups with the most compute on the critical path, in words
  std::string straggling;  // rank groups holding a slow host or GPU
  std::string links;       // degraded links (load) and the most loaded links
  int critical_stage = -1; // stage of the straggling rank group with the most compute on the critical path
  int repaired_stage = -1; // "all but stage N": N
  std::string error;       // set when the child failed
};
// The variants to simulate: "baseline", "all", then per source (with more than one) the source
// alone and all but it, per stage holding slow hosts or GPUs (when more than one does) all but
// that stage's, then "all" redrawn with seeds seed+1 .. seed+draws-1.
std::vector<std::pair<std::string, ScenarioConfig>> flow_whatif_variants(const ScenarioConfig& cfg, int draws);
FlowVariant run_flow_variant(const std::string& name, const ScenarioConfig& cfg, const calib::HardwareProfile& hw);
std::string encode_variant(const FlowVariant& v);  // one line, tab-separated key=value
FlowVariant decode_variant(const std::string& line);
Json whatif_flow_json(const ScenarioConfig& cfg, const std::vector<FlowVariant>& v);
std::string whatif_flow_table(const ScenarioConfig& cfg, const std::vector<FlowVariant>& v);

}  // namespace clustersim::report
