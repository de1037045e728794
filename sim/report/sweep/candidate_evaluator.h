// SPDX-License-Identifier: Apache-2.0
// Runs one candidate of a sweep at the analytical level (in process, microseconds) or at a finer
// level (through run_scenario; SimGrid allows one such run per process, so call it in a child).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/engine/fabric_contention.h"
#include "sim/report/sweep/candidate_space.h"

namespace clustersim::sweep {

// Status words in logs and tables.
inline constexpr const char* kOk = "ok";
inline constexpr const char* kInvalid = "invalid";      // the plan does not divide the model/cluster
inline constexpr const char* kNoFit = "no_fit";         // does not fit in GPU memory
inline constexpr const char* kError = "error";          // the run refused the scenario (e.g. level not built)
inline constexpr const char* kFailed = "failed";        // the worker crashed or an internal error
inline constexpr const char* kRejected = "rejected";    // ran, but a constraint excludes it (reports only)

// A serving candidate's GPUs by type (its pools may each have their own), in its `info` under
// this key as "COUNT NAME, COUNT NAME"; the sweep prices each type (cost_per_mtoken).
inline constexpr const char* kGpuCountsInfo = "gpus_by_type";
std::string gpu_counts_text(const std::map<std::string, int>& by_type);
// A flow-stage training candidate simulated folded over a tapered tier its pipeline sends or CP
// rings cross, in its `info` under this key ("true"); the sweep counts them (folding_mix_note).
inline constexpr const char* kFoldedOverTaperInfo = "folded_over_taper";
// A flow-stage training candidate simulated folded whose pipeline sends leave their pods (ToR
// groups in 2 tiers) on a fabric not tapered there: folded, the other replicas' sends start in
// step with replica 0's and meet its ECMP collisions every time, a few percent slow (run's note
// says so for one run). In its `info` under this key ("true"; since 2026-12-07).
inline constexpr const char* kFoldedInStepInfo = "folded_in_step";
// The same for one whose TP or CP groups span nodes (fold_ranks: true, or CP under auto): folded,
// it can come out fast (TP across nodes 18 to 47%; run's note). In its `info` ("true"; since 2026-12-07).
inline constexpr const char* kFoldedGroupsAcrossInfo = "folded_groups_across_nodes";
std::map<std::string, int> gpu_counts_from_text(const std::string& text);

// What one run of one candidate gave. `metrics` are the raw outputs (derived ones such as cost
// are computed when ranking); `info` holds text facts (GPU, plan).
struct Outcome {
  std::string status = kOk;
  std::string reason;
  std::map<std::string, double> metrics;
  std::map<std::string, std::string> info;
};

// The notes run_scenario would give (report::unused_key_notes) for the analytical screen, over a
// sample of the candidates (the first 1,000 and 1,000 evenly spread: every value of every axis
// in practice), each once: keys the screen cannot see, such as a routing axis.
std::vector<std::string> analytical_notes(const CandidateSpace& space);
// What the flow stage adds, where it adds nothing: colocated serving candidates among the
// `finalists` it re-ran (candidate indices; their collectives are priced in closed form at every
// level). Empty where it re-ran none of them.
std::vector<std::string> flow_stage_notes(const CandidateSpace& space, const std::vector<int64_t>& finalists);
// What a serving sweep's figures rest on, as `run` says it of one deployment: MoE candidates among
// the `ranked` (candidate indices, best first), whose layers are priced at their roofline costs
// (throughput an upper bound, cost a lower one: scenarios/validation/serving-moe.yaml), and a best
// candidate that does not keep up with the offered load (`best`: its metrics; served_fraction under
// 0.95 or ttft_growth over 0.01) where no constraint holds those metrics, and a best candidate
// whose arrivals are far from steady (its metric unsteady_arrivals). Empty otherwise (since
// 2026-12-07; QA: a sweep ranked by cost put first a deployment serving 78% of the load).
std::vector<std::string> serving_notes(const CandidateSpace& space, const std::vector<int64_t>& ranked,
                                       const std::map<std::string, double>& best);
// A training sweep under constraints.memory_fits: false whose best candidate (`best`: its
// metrics) overflows HBM: said, with its memory, since a ranking of plans that do not fit reads as
// a plan to buy (QA, 2026-12-07). Empty otherwise.
std::vector<std::string> memory_notes(const CandidateSpace& space, const std::map<std::string, double>& best);

class CandidateEvaluator {
 public:
  explicit CandidateEvaluator(const CandidateSpace& space);

  // The analytical level; never throws for bad candidates (they become statuses).
  Outcome analytical(int64_t index);
  // `spec.flow_fidelity` through run_scenario. Run it in a fresh process.
  Outcome finer(int64_t index);

 private:
  Outcome run(int64_t index, const std::string& fidelity, bool fast_path);
  const calib::HardwareProfile& profile(const std::string& gpu, const std::string& dir);

  const CandidateSpace& space_;
  std::map<std::string, std::unique_ptr<calib::HardwareProfile>> profiles_;  // "dir|gpu" -> profile
  engine::ContentionCache contention_;  // DP rings routed once per fabric and plan shape
  // MoE routing drawn once per expert layout and micro-batch: candidates that differ in pp, vpp,
  // ZeRO, overlap or precision share it (a DeepSeek-V3-sized plan spends most of its time there).
  work::RoutingDraws draws_;
};

}  // namespace clustersim::sweep
