// SPDX-License-Identifier: Apache-2.0
// The results of a sweep as one row per candidate: constraints applied, derived metrics (cost,
// time to train) added, ranked by the objective at each stage, reasons counted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/sweep/candidate_space.h"
#include "sim/report/sweep/result_log.h"

namespace clustersim::sweep {

struct StageResult {
  bool ran = false;
  std::string status;  // kOk, kRejected, kInvalid, kNoFit, kError, kFailed
  std::string reason;
  std::map<std::string, double> metrics;  // raw and derived
  std::map<std::string, std::string> info;
  std::optional<double> objective;        // when status is kOk
  int rank = 0;                           // 1 = best at this stage; 0 = not ranked
};

struct Row {
  int64_t index = 0;
  std::string id;
  std::vector<int> choice;  // value index per axis
  StageResult analytical;
  StageResult finer;
};

struct SweepTable {
  std::vector<Row> rows;                            // by candidate index, one per candidate
  std::map<std::string, int64_t> status_counts;     // analytical stage
  std::map<std::string, int64_t> reason_counts;     // "status: reason class" -> candidates
  std::map<std::string, std::string> reason_example;  // class -> the first candidate's "status: reason"
  std::vector<int64_t> ranking;                     // row positions, best first (analytical)
  std::vector<int64_t> finer_ranking;               // row positions, best first (finer stage)
};

// Builds the table from log records (first record per candidate and stage wins).
SweepTable build_table(const CandidateSpace& space, const std::vector<Record>& records);

// Adds derived metrics and applies the constraints; sets status kRejected with the reason.
void finish_stage(const SweepSpec& spec, StageResult& s);

// Empty when some candidate is ranked at the analytical stage; else why none is: "none of the N
// candidates is valid: 3 x invalid: ...; 2 x rejected: ..." (most frequent reason first).
std::string no_valid_candidates(const SweepTable& table);

// Empty unless the finer stage simulated some finalists folded (one representative DP replica,
// metric `folded` 1) and others unfolded, as training.fold_ranks auto does by placement and fabric:
// then a note that their figures differ in kind (folded ones ran a few percent off: Llama 3 405B,
// PP outermost, 1:1 spine, 7.103 s folded against 6.865 s unfolded) and how to compare alike; and,
// where finalists ran folded over a tapered tier their pipeline sends or CP rings cross
// (kFoldedOverTaperInfo, training.fold_ranks: true), that those can be off either way; and where
// finalists ran folded with pipeline sends leaving their pods (kFoldedInStepInfo), that those read a
// few percent slow, and with TP/CP groups across nodes (kFoldedGroupsAcrossInfo), that those can read
// fast. Empty when none applies.
std::string folding_mix_note(const SweepTable& table);

// A reason with its numbers masked, so that the same cause counts once ("tp: must divide # ...").
std::string reason_class(const std::string& status, const std::string& reason);

// A reason class as printed: the class, or for a class of one candidate its own reason, numbers
// and all (nothing is grouped).
std::string shown_reason(const SweepTable& table, const std::string& cls);

// Whether two objective values are one value: equal within a relative 1e-9, the noise of
// summing one plan's times in another order.
bool same_objective(double a, double b);

// "12.3 s", "1.98M", "55.2%": a metric as people read it.
std::string format_metric(const std::string& metric, double v);

// A rate of candidates a second: whole above 10, two significant digits below (24 MoE plans in
// 99.5 s read "0 candidates/s" until 2026-12-07; QA). The summary and the progress line.
std::string rate_text(double per_s);

}  // namespace clustersim::sweep
