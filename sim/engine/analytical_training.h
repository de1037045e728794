// SPDX-License-Identifier: Apache-2.0
// The analytical fidelity level for dense 3D-parallel training: one iteration's time, its
// breakdown, tokens/s and MFU in closed form (no event simulation; the gradient rings' routes give
// their contention once: fabric_contention.h).
#pragma once

#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/core/error.h"
#include "sim/core/units.h"
#include "sim/engine/fabric_contention.h"
#include "workloads/moe.h"
#include "workloads/transformer.h"

namespace clustersim::engine {

// Where one iteration's time goes on the critical (slowest) pipeline stage. The parts add up to
// the iteration time.
struct TrainingBreakdown {
  Time compute;       // forward, backward and recomputation of every micro-batch
  Time tp_exposed;    // tensor/sequence/context-parallel collectives not hidden by compute
  Time pp_exposed;    // pipeline send/recv on the critical path
  Time bubble;        // pipeline fill and drain: (pp-1)/vpp micro-batch slots of the other stages
  Time dp_exposed;    // data-parallel gradient reduce and parameter gather not hidden
  Time optimizer;     // optimizer step and the embedding gradient sync
  Time ep_exposed;    // MoE: expert all-to-all (and expert-TP) not hidden by expert compute
  Time step_stall;    // GPUs idle once per step outside the schedule (training.step_stall: data loading)
};

// One MoE layer of the slowest stage, per micro-batch (forward + backward).
struct MoeLayerReport {
  int layer = 0;
  double imbalance = 1.0;   // busiest GPU's token-expert pairs / mean
  double dropped_fraction = 0;  // token-expert pairs the capacity factor drops / all pairs
  Time a2a;                 // dispatch + combine, forward and backward, unhidden
  Time a2a_exposed;         // what the chunked overlap leaves on the line
  Time expert_compute;      // busiest GPU's expert GEMMs, forward + backward
  int chunks = 1;           // chunk count chosen
  Bytes a2a_bytes_max_gpu;  // busiest GPU's dispatch send bytes
};
// The report of MoE layer `layer` from its cost, with `exposed` as what the level left unhidden
// (the analytical overlap formula, or the flow level's measured wait).
MoeLayerReport moe_layer_report(int layer, const work::MoeLayerCost& cost, Time exposed);

struct TrainingEstimate {
  Time iteration;
  double tokens_per_s = 0;
  double mfu = 0;   // model FLOPs (no recomputation) / (time x GPUs x dense peak)
  double hfu = 0;   // hardware FLOPs (with recomputation) / (time x GPUs x dense peak)
  work::FlopCount flops;
  work::MemoryEstimate memory;
  Bytes memory_capacity;   // usable: HBM minus the profile's reserve
  TrainingBreakdown breakdown;
  // Plan facts for reports.
  int dp = 1;
  int micro_batches = 1;   // per pipeline per iteration
  Time microbatch_stage_time;  // forward + backward of one micro-batch on the slowest stage
  std::vector<MoeLayerReport> moe_layers;  // MoE only: the slowest stage's MoE layers
  int critical_stage = -1;                 // MoE only: the stage with the longest micro-batch
  FabricContention contention;             // what the routes cost the DP rings (dense models)
  // ZeRO-3 whose per-pass gathers pace the step: how much longer the compute and bubble could run
  // before they, not the gathers, would pace it (0 otherwise). A slower pipeline (stragglers)
  // fills this first.
  Time gather_slack;
};

// The MFU definition printed with every result (and, for MoE models, the active-parameter note).
extern const char* const kMfuDefinition;
extern const char* const kMoeMfuNote;

// Closed-form estimate for a validated training scenario (throws BadInput if the precision is
// not supported by the profile). Does not check memory: see check_memory_fit. The DP rings run
// at the rate `contention` leaves them (fabric_contention: their routes on the fabric); the
// two-argument form routes them itself.
TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                   const FabricContention& contention);
TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// What a stage's DP reduction (or parameter gather) of `total` time leaves exposed when it runs
// chunk by chunk beside the pipeline: the first stage finishes last, and under interleaved 1F1B
// its chunks' last backward passes end pp passes apart (chunk vpp-1 first), each `chunk_pass`
// long, so the reduction of all but the last chunk hides behind the passes that follow
// (Narayanan et al. SC'21 section 2.2's schedule; the gather mirrors it before the first
// forwards). One stream runs the chunks' shares in order:
//   exposed = max(bucket_share x total, total/vpp - chunk_pass, total - ((vpp-1) pp + 1) chunk_pass)
// The first term is the last bucket, which waits for the last pass; vpp = 1 gives
// max(bucket_share x total, total - chunk_pass).
Time chunked_dp_exposed(Time total, Time chunk_pass, int pp, int vpp, double bucket_share);

// Errors when the plan's memory per GPU exceeds the profile's usable capacity, with the numbers
// (weights, gradients, optimizer, activations) that show why, whatever training.memory_check says.
std::vector<InputError> memory_misfit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);
// memory_misfit, unless training.memory_check is false: what a run refuses.
std::vector<InputError> check_memory_fit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

}  // namespace clustersim::engine
