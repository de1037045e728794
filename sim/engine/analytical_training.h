// SPDX-License-Identifier: Apache-2.0
// The analytical fidelity level for dense 3D-parallel training: one iteration's time, its
// breakdown, tokens/s and MFU in closed form (no event simulation; the gradient rings' routes give
// their contention once: fabric_contention.h).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/config.h"
#include "sim/core/error.h"
#include "sim/core/units.h"
#include "sim/engine/fabric_contention.h"
#include "workloads/moe.h"
#include "workloads/pipeline_schedule.h"
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
  Bytes a2a_bytes_max_gpu;  // busiest GPU's dispatch bytes, sent or received
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
  work::MemoryEstimate memory;  // on the most loaded GPU (work::most_loaded_memory_per_gpu)
  Bytes memory_capacity;   // usable: HBM minus the profile's reserve
  TrainingBreakdown breakdown;
  // Plan facts for reports.
  int dp = 1;
  int micro_batches = 1;   // per pipeline per iteration
  Time microbatch_stage_time;  // forward + backward of one micro-batch on the slowest stage
  std::vector<MoeLayerReport> moe_layers;  // MoE only: critical_stage's MoE layers
  int critical_stage = -1;                 // MoE only: the stage with the longest micro-batch, or the longest with MoE layers where it has none
  FabricContention contention;             // what the routes cost the DP rings (dense models)
  // ZeRO-3 whose per-pass gathers pace the step: how much longer the compute and bubble could run
  // before they, not the gathers, would pace it (0 otherwise). A slower pipeline (stragglers)
  // fills this first.
  Time gather_slack;
  // The DP exposure by pipeline stage (pp entries where gradients sync, else empty): what stage
  // s's collectives leave exposed after its last backward pass (dp_end: the reduction) and before
  // its first forward pass (dp_start: an overlapped gather; a gather that does not overlap, which
  // runs after every stage's reduction, with dp_start_pass 0; ZeRO-3's first per-pass gather, or
  // all of them without overlap), each at
  // the stage's own ring slowdown. Stage s ends its last backward pass s x dp_end_pass before the
  // first stage and starts its first forward pass s x dp_start_pass after it (chunk passes: the
  // time in one the stage's NIC share is free), so breakdown.dp_exposed is staged_dp_exposed of
  // these, or dp_paced, the step ZeRO-3's overlapped gathers pace, when that is larger. The
  // first and last stage then sync the tied embeddings (embedding_sync, part of
  // breakdown.optimizer), which the other stages' reductions have as more room.
  std::vector<Time> dp_end;
  std::vector<Time> dp_start;
  Time dp_end_pass;
  Time dp_start_pass;
  Time dp_paced;
  // ZeRO-2/3 with several micro-batches: what the per-micro-batch gradient reductions add to the
  // DP exposure, the part that does not fit in the passes (in each dp_end entry; the most any
  // stage gets) and, ZeRO-3 without the gather overlap, the gathers' waits beside them (in each
  // dp_start entry); 0 otherwise.
  Time dp_micro_batch_backlog;
  // Of breakdown.pp_exposed with overlap.pp_p2p: what the steady state's pipeline sends add
  // beyond the fill and drain transfers, where the busiest stage's NIC share takes longer to send
  // a micro-batch's activations and gradients than the slowest stage computes it (0 otherwise).
  Time pp_send_paced;
  // With pp > 1: each virtual stage's sends to the next and the one before as
  // work::pipeline_send_delays replayed them (work::sends_to_replay; blocking without
  // overlap.pp_p2p; empty with one stage), so that replays of the schedule (the straggler model)
  // wait for them as this estimate does (since 2026-12-06 also without overlap).
  work::PipelineSends pp_sends;
  Time embedding_sync;  // the tied-embedding all-reduce of the first and last stage (0 without)
};

// The MFU definition printed with every result (and, for MoE models, the active-parameter note).
extern const char* const kMfuDefinition;
extern const char* const kMoeMfuNote;

// Closed-form estimate for a validated training scenario (throws BadInput if the precision is
// not supported by the profile). Does not check memory: see check_memory_fit. The DP rings run
// at the rate `contention` leaves them (fabric_contention: their routes on the fabric); the
// two-argument form routes them itself. `draws` (optional) holds MoE routing draws already made,
// and keeps this estimate's (work::RoutingDraws): results are the same with or without it.
TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                   const FabricContention& contention, work::RoutingDraws* draws = nullptr);
TrainingEstimate estimate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

// The DP exposure of a step whose stage s leaves end[s] exposed after its last backward pass,
// which ends end_room[s] before the first stage's, and start[s] before its first forward pass,
// which starts start_room[s] after the first stage's: the step waits for the latest of each,
//   max over s of (end[s] - end_room[s]) + max over s of (start[s] - start_room[s])
// (every span one entry per stage; 0 for none).
Time staged_dp_exposed(std::span<const Time> end, std::span<const Time> end_room, std::span<const Time> start,
                       std::span<const Time> start_room);
// The room each stage of `est` has beyond the first stage's: at the end of the step the earlier
// stages' backward chunk passes (dp_end_pass each) and, for the stages between the first and the
// last, the tied-embedding all-reduce those two run after their reductions (embedding_sync); at
// its start the earlier stages' forward chunk passes (dp_start_pass). Stage j counts
// passes_per_stage[j] passes (its layers over the even split's; empty: 1 each, for every stage
// of est.dp_end).
struct DpRooms {
  std::vector<Time> end;
  std::vector<Time> start;
};
DpRooms dp_rooms(const TrainingEstimate& est, std::span<const double> passes_per_stage = {});
// The same for an estimate's own parts (TrainingEstimate::dp_end, dp_start, with dp_rooms).
Time staged_dp_exposed(const TrainingEstimate& est);

// What a stage's DP reduction (or parameter gather) of `total` time leaves exposed when it runs
// chunk by chunk beside the pipeline: the first stage finishes last, and under interleaved 1F1B
// its chunks' last backward passes end pp passes apart (chunk vpp-1 first), each `chunk_pass`
// long, so the reduction of all but the last chunk hides behind the passes that follow
// (Narayanan et al. SC'21 section 2.2's schedule; the gather mirrors it before the first
// forwards). One stream runs the chunks' shares in order:
//   exposed = max(last, total/vpp - (1 - first_ready) chunk_pass,
//                 total - ((vpp-1) pp + 1 - first_ready) chunk_pass)
// `last` is the last piece (bucket; MoE: with its layer's experts), which waits for the last pass;
// `first_ready` the fraction of a chunk's pass before its first piece is ready, which the stream
// cannot use: pieces ready evenly at k/n of the pass leave max(R/n, R - (n-1)/n P) after it (the
// flow level's graph issues them so; until 2026-12-07 the whole pass counted, and a 4-layer MoE
// stage, its experts' reduction issued layer by layer, read 9.5% fast; QA). vpp = 1 gives
// max(last, total - (1 - first_ready) chunk_pass).
Time chunked_dp_exposed(Time total, Time last, Time chunk_pass, int pp, int vpp, double first_ready);

// The pipeline transfers whose time a step waits for, besides any send-paced steady state
// (TrainingEstimate::pp_send_paced): every one without overlap.pp_p2p, 2 x micro_batches x vpp
// (forward and backward at each virtual stage boundary); with it the fill and drain's only,
// 2 (pp x vpp - 1): the first micro-batch's forward crosses all pp x vpp - 1 boundaries before the
// first backward starts, and the last backward crosses them back (never more than without).
int64_t exposed_pipeline_transfers(const ScenarioConfig& cfg, int64_t micro_batches);

// Errors when the plan's memory on its most loaded GPU (work::most_loaded_memory_per_gpu)
// exceeds the profile's usable capacity, with the numbers (weights, gradients, optimizer,
// activations) that show why, whatever training.memory_check says; an overflow that only a
// sequence imbalance's heaviest replicas make names stragglers.sequence_imbalance.max_over_mean.
std::vector<InputError> memory_misfit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);
// memory_misfit, unless training.memory_check is false: what a run refuses.
std::vector<InputError> check_memory_fit(const ScenarioConfig& cfg, const calib::HardwareProfile& hw);

}  // namespace clustersim::engine
