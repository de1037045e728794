// SPDX-License-Identifier: Apache-2.0
// A straggled training run in words and JSON, for the reports of runs with stragglers
// (faults_report.cc) and of the what-if (whatif_report.cc): the critical path the analytical
// level's schedule replay found (engine::StragglerImpact), and the flow level's critical path
// and degraded links (engine::FlowTrainingResult).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "sim/core/config.h"
#include "sim/engine/flow_training.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/json_writer.h"

namespace clustersim::report::internal {

// A list of whole numbers (host or GPU indices, layers per stage) as a JSON array.
Json index_array(const std::vector<int>& indices);
// "3,17,40": the first `limit` indices, then ",... (N)".
std::string index_list(const std::vector<int>& v, size_t limit = 12);
// What a run with stragglers is compared with: "with the layers split evenly" where an uneven
// stragglers.stage_layers is the only source (the plan itself, Llama 3's), else "without
// stragglers"; and the source in "the same ...": "stage_layers" or "stragglers".
const char* baseline_words(const ScenarioConfig& cfg);
const char* stragglers_name(const ScenarioConfig& cfg);
// "stage 7 of 8 (the last, which also runs the LM head)".
std::string stage_words(const ScenarioConfig& cfg, int stage);
// An MoE model's listed layer map (ParallelismConfig::stage_layers), "4, 4, ..., 1"; empty when
// its layers split evenly.
std::string layer_map_list(const ScenarioConfig& cfg);
// Why `source` ("hosts", "gpus", "nics", ..., "all") costs what it does: the replica and stage on
// the critical path, how far over the nominal bottleneck stage it runs, the other slowed stages.
std::string critical_words(const ScenarioConfig& cfg, const std::string& source, const engine::StragglerImpact& s);
// The `stragglers` block of results.json (and a what-if row): times, MFU lost, critical path.
Json impact_json(const ScenarioConfig& cfg, const std::string& source, const engine::StragglerImpact& s);
// The rank groups with the most compute on the flow level's critical path, slowest first.
std::string flow_critical_words(const engine::FlowTrainingResult& f, size_t limit = 3);
// The stage of the straggling rank group with the most compute on the critical path (-1: none).
int flow_critical_stage(const engine::FlowTrainingResult& f);
// With folding, the representative replica's rank group that has the most compute on the critical
// path when it is that and not a straggling one ("stage7/dp0"): the straggling replicas, simulated
// on their own, then finish before it, its in-step ECMP collisions hide their cost; else "".
std::string flow_pacing_representative(const engine::FlowTrainingResult& f);
// Why that understates the stragglers' cost, and what to set instead.
std::string representative_pacing_words(const std::string& group);
// The degraded links with their peak load, then the `limit` most loaded links.
std::string flow_link_words(const engine::FlowTrainingResult& f, size_t limit = 3);

}  // namespace clustersim::report::internal
