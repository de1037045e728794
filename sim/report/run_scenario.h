// SPDX-License-Identifier: Apache-2.0
// One scenario, end to end: load the hardware profile, check the plan fits, run the chosen
// fidelity level, and produce results.json and the human summary.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/report/json_writer.h"

namespace clustersim::engine {
struct FlowTrainingResult;
}  // namespace clustersim::engine

namespace clustersim::report {

struct RunOutput {
  Json results;           // the results.json object
  std::string summary;    // for a terminal
  std::string links_csv;  // per-link statistics (flow level); empty when not simulated
  std::string trace_json;   // Chrome/Perfetto trace (flow-level training); empty otherwise
  std::string report_html;  // self-contained HTML report (flow-level training); empty otherwise
  std::map<std::string, double> metrics;  // the headline numbers of `results`, by key
  std::vector<std::pair<std::string, std::string>> extra_files;  // (file name, content) for --out
  std::vector<std::string> notes;  // keys the scenario gives that this run does not use (also results.json "notes")
};

// Failed or degraded links and switches (network.faults) exist only in the fabric the flow level
// builds: throws BadInput, naming the key and the switch to make, when `cfg` is timed at the
// analytical level (a training step, a reliability study's faults.iteration_time_fidelity, or a
// serving run; traffic runs take them at every level).
void require_flow_for_network_faults(const ScenarioConfig& cfg);

// The note on network.faults above the hosts against folding (engine::FlowStragglers): every
// replica simulated (`unfolded`), or folded anyway (`folded_ops`: the unfolded graph's ops past
// the limit, or -1 under training.fold_ranks: true); empty when neither applies. `run` takes its
// inputs from the flow result, `whatif` from fabric_faults_folding (whose variants fold alike).
std::string fabric_faults_note(bool unfolded, int64_t folded_ops);
// The message for network.faults that cut GPUs the run sends between off from each other (`why`:
// topo::NoRoute's, which names the failed links and the faults that failed them), with the remedy.
std::string no_path_words(const std::string& why);
// Adds to `out` the notes on what folding did in a flow-level training run: TP groups across
// nodes or pipeline sends across a tapered tier under fold_ranks auto, and network.faults above
// the hosts (fabric_faults_note).
void add_flow_fold_notes(const ScenarioConfig& cfg, const engine::FlowTrainingResult& flow, RunOutput& out);
std::string fabric_faults_folding_note(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// The keys `cfg` gives that the level it runs at does not use, one sentence each (empty when
// every given key counts): network.dcqcn below flow+dcqcn, for instance.
std::vector<std::string> unused_key_notes(const ScenarioConfig& cfg);
// The part of those about slow hosts or GPUs that slow nothing (a count of 0, a slowdown of 1),
// which `clustersim whatif` prints too.
std::vector<std::string> inert_straggler_notes(const ScenarioConfig& cfg);

// Simulated time is integer picoseconds and saturates at +-106 days (units.h): a time in seconds
// (a key ending in _s) at the limit in `results` is not a result but an overflow (a model far too
// large for its GPUs, latencies of days): throws BadInput naming the key instead of printing it.
void refuse_saturated_times(const ScenarioConfig& cfg, const Json& results);

// What a run adds beyond the scenario's own numbers.
struct RunOptions {
  // Drawn stragglers at the analytical level: also price 100 other placements (about 40 ms at
  // 12,288 GPUs). Sweeps, which compare plans by the seed's placement, turn it off.
  bool placement_draws = true;
  // Flow-level training without a terminal: a progress line a minute on stderr. `clustersim run`
  // sets it; sweeps, validation suites and the what-if's variants, whose lines would say nothing
  // of which run they belong to, do not.
  bool heartbeat = false;
};

// Runs a validated scenario. Throws BadInput for problems only visible with the hardware
// profile (unknown GPU, plan does not fit in memory, level not built for this kind of run).
RunOutput run_scenario(const ScenarioConfig& cfg, const RunOptions& options = {});

}  // namespace clustersim::report
