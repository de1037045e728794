// SPDX-License-Identifier: Apache-2.0
// Stragglers in lockstep 3D-parallel training: slow hosts/GPUs, degraded NICs, uneven pipeline
// stages and sequence-length imbalance turned into a straggled iteration time, by replaying the
// (interleaved) 1F1B schedule of every affected pipeline replica with per-stage times.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/engine/analytical_training.h"
#include "workloads/pipeline_schedule.h"
#include "workloads/training_graph.h"

namespace clustersim::engine {

// Where iteration times come from. The analytical level today; the flow level plugs in here.
using TrainingLevel = std::function<TrainingEstimate(const ScenarioConfig&, const calib::HardwareProfile&)>;
TrainingLevel analytical_level();

// One chunk's forward and backward time, and one replica's 1F1B makespan: workloads/pipeline_schedule.h.
using work::ChunkTime;
using work::pipeline_makespan;

// One layer's and the LM head's time for one micro-batch on one stage, as the training level
// sees them, found by probing it: (one more layer per stage) - (as is) gives a layer's forward +
// backward; full minus no recomputation gives the forward; the rest of the last stage is the head
// (split 1:2 between forward and backward, as its three GEMMs are). Compute and the exposed
// TP/SP/CP communication are kept apart (the level's breakdown.compute against the rest of its
// micro-batch stage time): a slow GPU stretches its kernels, not its NVLink or NIC transfers.
struct LayerCosts {
  Time layer_forward;        // compute
  Time layer_backward;       // compute, with recomputation as configured
  Time layer_forward_comm;   // exposed TP/SP/CP communication of the forward
  Time layer_backward_comm;  // of the backward (and the recomputed forward)
  Time head_forward;         // LM head and loss, compute
  Time head_backward;
  Time head_comm;            // whatever else the level puts on the last stage (split like the head)
};
LayerCosts probe_layer_costs(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const TrainingLevel& level);

// A pipeline stage of the critical replica that holds a compute straggler.
struct SlowStage {
  int stage = -1;
  std::vector<int> hosts;  // its slow hosts
  Time stage_time;         // its forward + backward per micro-batch, slowed
  Time alone;              // the replica's makespan grows by this with only this stage slowed
  Time saved;              // the replica's makespan shortens by this with the stage at nominal speed
};

// Where the straggled iteration's time is decided.
struct CriticalPath {
  int replica = -1;                 // DP replica (pipeline) that finishes last; -1 if none slower
  int stage = -1;                   // the stage that costs the most: the slowed stage that alone
                                    // stretches the replica most; with none slowed, the slowest stage
  std::vector<int> hosts;           // slow hosts holding that stage of that replica
  Time stage_time;                  // that stage's forward + backward per micro-batch
  Time nominal_stage_time;          // the slowest stage's, without stragglers (the last: LM head)
  int nominal_stage = 0;            // that stage (the last, unless an MoE model's layer map moves it)
  std::vector<SlowStage> slow_stages;  // every slowed stage of that replica, by stage
  std::vector<std::string> links;   // degraded NICs, and the groups whose collectives they slow
  bool by_nics = false;             // named for its degraded NICs: its collectives slow the step, not its pipeline
};

struct StragglerImpact {
  Time baseline;           // iteration without stragglers (the training level's)
  Time iteration;          // with them
  double baseline_mfu = 0;
  double mfu = 0;
  Time pipeline_delta;     // slower pipeline (critical replica's makespan - nominal); the iteration
                           // grows by less where ZeRO-3's gathers pace it (TrainingEstimate::gather_slack)
  Time communication_delta;  // wider exposed DP / PP communication (degraded NICs)
  std::vector<int> slow_hosts;  // every host with a compute straggler (listed or drawn)
  std::vector<int> slow_gpus;   // every GPU listed or drawn under `stragglers.gpus`
  CriticalPath critical;
  // With `variation`: the iteration and MFU with the variation alone (the cluster's GPUs as they
  // are, the other sources repaired); without it, the baseline's.
  Time variation_iteration;
  double variation_mfu = 0;
  bool variation = false;  // whether this run had `variation`
  double slowdown() const { return iteration / baseline; }
};

// The straggled iteration for `cfg.stragglers` (none: iteration == baseline exactly).
// GPUs are mapped to (replica, stage) cells through parallelism.placement (Megatron-LM's
// tp-cp-dp-pp by default), as the flow level maps them; a host holds gpus_per_node / (tp cp) cells
// when TP and CP come first. A compute straggler slows its cell's forward and/or backward compute,
// LM head included (TP and CP ranks run in lockstep, so the slowest GPU sets the pace), not its
// exposed communication nor the optimizer step (memory-bound; the flow level leaves it alone too);
// DP makes every replica wait for the last one at the gradient reduction.
// What simulate_stragglers prices on the straggler-free scenario: the same for every draw of the
// stragglers (seeds), so a redraw loop computes it once (an MoE plan's level takes tens of ms; 100
// placements of Mixtral on 256 GPUs took 24 s computing it each time).
struct StragglerBase {
  TrainingEstimate clean;
  LayerCosts costs;                          // probe_layer_costs of the clean scenario
  std::optional<LayerCosts> heavy;           // sequence_imbalance: at the longer sequences
  std::optional<TrainingEstimate> nic_degraded;  // stragglers.nics: the clean run at their rate
};
StragglerBase straggler_base(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const TrainingLevel& level);
// `base`, when given, is straggler_base of a scenario that differs from `cfg` at most in the
// stragglers' seed or in dropping sources.
StragglerImpact simulate_stragglers(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                    const TrainingLevel& level, const StragglerBase* base = nullptr);

// The pipeline passes (one chunk's forward or backward for one micro-batch) simulate_stragglers
// replays for `cfg`: the nominal pipeline, every replica a source touches (with the seed's draw),
// and for each the per-stage what-ifs it replays when it is the slowest so far (counted as if
// every one were). 0 without stragglers. An upper estimate of its work, computed in microseconds.
double replay_passes(const ScenarioConfig& cfg);

// A replayed pass takes about 10 ns of wall time (and 20 bytes while its replay lasts): 1,000,000
// micro-batches on 4 stages, 9 replays a placement, took 0.8 s a placement and 190 MB, and the
// default 100 placements of `run` 78 s; `whatif --draws 10000`, hours. Past kMaxReplayPasses
// (about a minute) a study is refused up front: throws BadInput naming `key`, with the figures:
// `passes` over `runs` runs of the straggler model, `what` saying which ("the seed's
// placement and 100 drawn for the spread") and `remedy` what else lowers them (", or ...").
// One replay holds its passes' end times and order at once: past kMaxPassesPerReplay (2 GB) it
// is refused too.
inline constexpr double kMaxReplayPasses = 5e9;
inline constexpr double kMaxPassesPerReplay = 1e8;
void check_replay_work(const ScenarioConfig& cfg, const std::string& key, int runs, double passes,
                       const std::string& what, const std::string& remedy);

// The straggler sources present in `s`, by key ("hosts", "gpus", "nics", "stage_layers",
// "sequence_imbalance", "variation"), and `s` reduced to one source or with one removed.
std::vector<std::string> straggler_sources(const StragglersConfig& s);
StragglersConfig only_source(const StragglersConfig& s, const std::string& source);
StragglersConfig without_source(const StragglersConfig& s, const std::string& source);

// Hosts (or GPUs) picked by a compute straggler entry out of `units`, sorted; drawn ones are a
// uniform sample without replacement from seed `seed` (std::mt19937_64, whose sequence the C++
// standard fixes, so every platform draws the same).
std::vector<int> pick_units(const ComputeStraggler& c, int units, uint64_t seed);

// Every GPU's compute time factor under `stragglers.variation` (all 1 without it): 1 + sigma z,
// z standard normal drawn in GPU order from `stragglers.seed` (Box-Muller over std::mt19937_64,
// so every platform draws the same), sigma = spread / 5.396, floored at 0.5.
std::vector<double> speed_factors(const ScenarioConfig& cfg);

// The hosts ("hosts") or GPUs ("gpus") that `cfg.stragglers` slows, listed or drawn, sorted.
std::vector<int> slow_units(const ScenarioConfig& cfg, const std::string& source);

// The same, by the pipeline stages they hold (through parallelism.placement; a host holding GPUs
// of several stages is listed under each).
std::map<int, std::vector<int>> slow_units_by_stage(const ScenarioConfig& cfg, const std::string& source);

// `cfg.stragglers` with the compute stragglers of `source` ("hosts" or "gpus") turned into an
// explicit list (the drawn ones as simulate_stragglers draws them) less `units`: the what-if of
// those slow hosts or GPUs repaired. With none left the source is removed.
StragglersConfig without_units(const ScenarioConfig& cfg, const std::string& source, const std::vector<int>& units);

// The `stragglers` section as the flow level applies it. Slow hosts and GPUs (listed or drawn as
// simulate_stragglers draws them) are mapped to their rank groups through the placement; a rank
// group runs at its slowest GPU's pace (its TP/CP ranks are in lockstep). The heaviest replicas
// of a sequence imbalance get the layer and head times of the longer sequence (from the cost
// model, so attention grows quadratically) and proportionally more TP/CP/PP bytes. Uneven stages
// scale every replica's stage by its layers over the even share. Degraded NICs become `nic:N`
// fabric faults (capacity x bandwidth_factor, + extra_latency), and the replicas behind them are
// listed with unit factors so that folding keeps their own pipeline sends.
struct FlowStragglers {
  // Replicas listed with unit factors run on their own besides the folded representative: those
  // behind a degraded NIC (stragglers.nics) or a faulted NVLink, NVSwitch, NIC or host link
  // (network.faults). Where a network.faults entry touches a ToR's uplinks or a link above, a
  // folded run carries only the pipeline, TP and CP flows between nodes that meet the
  // representative's: under training.fold_ranks auto fabric_faults_unfold asks for every replica
  // (engine::unfold_for_fabric_faults), under true fabric_faults_folded says the run stays folded.
  work::GraphStragglers graph;
  bool fabric_faults_unfold = false;
  bool fabric_faults_folded = false;
  std::vector<FabricFault> faults;
  std::vector<int> slow_hosts;
  std::vector<int> slow_gpus;
  std::map<std::pair<int, int>, std::vector<int>> hosts_of;  // (replica, stage) -> its slow hosts
};
FlowStragglers flow_stragglers(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

}  // namespace clustersim::engine
