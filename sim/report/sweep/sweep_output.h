// SPDX-License-Identifier: Apache-2.0
// A sweep's result files and summary: sweep.csv and sweep.json (one row per candidate with its
// plan, key metrics and status), the terminal summary, and sweep.html (sweep_html.cc).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sim/report/json_writer.h"
#include "sim/report/sweep/sweep_runner.h"
#include "sim/report/sweep/sweep_table.h"

namespace clustersim::sweep {

// Metric columns shown for this sweep (depends on the scenario kind, prices and train_tokens).
std::vector<std::string> metric_columns(const SweepSpec& spec);

std::string sweep_csv(const CandidateSpace& space, const SweepTable& table);
report::Json sweep_json(const CandidateSpace& space, const SweepTable& table, const SweepRun& run);
// sweep_json(...).dump(1), written row by row: the text without the whole tree in memory (the
// tree took about half a large sweep's peak memory, 2026-12-05).
std::string sweep_json_text(const CandidateSpace& space, const SweepTable& table, const SweepRun& run);
std::string sweep_summary(const CandidateSpace& space, const SweepTable& table, const SweepRun& run);

// The column header of axis `key` among the sweep's axis `keys`: its shortest trailing part (whole
// dot-separated segments) no other key ends with ("tp"; "attention.tp" beside "expert.tp") and
// that names none of the other `columns` (a name -> the scenario key whose value that column
// repeats, "" for none) unless that column repeats `key` itself: "expert.gpus" beside the metric
// gpus, "gpus" for cluster.gpus in a training sweep, whose gpus column is cluster.gpus.
std::string axis_header(const std::string& key, const std::vector<std::string>& keys,
                        const std::map<std::string, std::string>& columns = {});
// The columns a sweep's tables show beside its axes (plan facts, metrics, rank) for axis_header.
std::map<std::string, std::string> non_axis_columns(const SweepSpec& spec);
std::string sweep_html(const CandidateSpace& space, const SweepTable& table, const SweepRun& run);

// The rows of the stage-change table: every candidate run at the finer level, by finer rank.
std::string ranking_change_text(const CandidateSpace& space, const SweepTable& table);

}  // namespace clustersim::sweep
