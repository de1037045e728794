// SPDX-License-Identifier: Apache-2.0
// The straggler what-if (`clustersim whatif`): each straggler source of a scenario and each
// pipeline stage's slow hosts alone and removed, what they cost and regain, where they sit on the
// critical path, and the cause; at the analytical level in this process, at the flow level one
// detailed simulation per variant (the CLI forks a child for each).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/json_writer.h"

namespace clustersim::report {

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
  std::string cause;                // the repair that regains the most, in words
  WhatIfDraws draws;                // count 0 unless run_whatif was asked for draws
};
// The `placements` / `draws` block of results.json, and its lines in a summary.
Json draws_json(const WhatIfDraws& d);
std::string draws_words(const WhatIfDraws& d, uint64_t seed);

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
  // Folded: the representative replica's rank group that paces the run instead of a straggling
  // one ("stage7/dp0"; its in-step ECMP collisions hide the stragglers' cost), else empty.
  std::string representative_paces;
  std::string error;       // set when the child failed
  bool bad_input = false;  // ... on the input (clustersim::BadInput: exit 2), not an internal error
};
// The variants to simulate: "baseline", "all", then per source (with more than one) the source
// alone and all but it, per stage holding slow hosts or GPUs (when more than one does) all but
// that stage's, then for seeds seed+1 .. seed+draws-1 "baseline, seed K" and "all, seed K".
std::vector<std::pair<std::string, ScenarioConfig>> flow_whatif_variants(const ScenarioConfig& cfg, int draws);
// The DP replicas that any of `configs` simulates on its own at the flow level (with
// training.fold_ranks: those holding a straggler or behind a degraded NIC): runs to be compared
// unfold them all (engine::FlowTrainingOptions::unfold_replicas), so folding moves none of them
// against another (folded, a baseline ran in step with the representative's ECMP collisions
// where the straggled run's unfolded replicas did not: several percent either way on small or
// oversubscribed fabrics).
std::vector<int> replicas_to_unfold(const std::vector<const ScenarioConfig*>& configs, const calib::HardwareProfile& hw);
// What each of `variants` (flow_whatif_variants) unfolds: the replicas any variant of its group
// does, the groups being each redraw's pair ("baseline, seed K", "all, seed K") and the rest.
std::vector<std::vector<int>> unfold_per_variant(const std::vector<std::pair<std::string, ScenarioConfig>>& variants,
                                                 const calib::HardwareProfile& hw);
// The baseline `v` is priced against: its redraw's ("baseline, seed K" for "all, seed K"), else
// the first variant; null when that one failed.
const FlowVariant* baseline_of(const std::vector<FlowVariant>& variants, const FlowVariant& v);
// One variant at the flow level, unfolding `unfold` beside its own straggling replicas.
FlowVariant run_flow_variant(const std::string& name, const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const std::vector<int>& unfold = {});
// `variants` (name, scenario at the flow level), each run by run_flow_variant in a forked child
// (SimGrid allows one simulation per process), at most `jobs` at once, variant i unfolding
// unfold[i]; a child that fails leaves its variant's `error`. The straggler-free baselines
// ("baseline", "baseline, seed K") are one scenario: one that unfolds what an earlier baseline
// does gets that run's result under its own name (with GPU speed variation every draw unfolds
// every replica). The results do not depend on `jobs`.
std::vector<FlowVariant> run_flow_variants(const std::vector<std::pair<std::string, ScenarioConfig>>& variants,
                                           const calib::HardwareProfile& hw, const std::vector<std::vector<int>>& unfold,
                                           int jobs);
std::string encode_variant(const FlowVariant& v);  // one line, tab-separated key=value
FlowVariant decode_variant(const std::string& line);
Json whatif_flow_json(const ScenarioConfig& cfg, const std::vector<FlowVariant>& v);
std::string whatif_flow_table(const ScenarioConfig& cfg, const std::vector<FlowVariant>& v);

}  // namespace clustersim::report
