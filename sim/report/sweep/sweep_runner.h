// SPDX-License-Identifier: Apache-2.0
// Runs a sweep's two stages (every candidate analytically, then the best k at the finer level)
// over local worker processes and, under mpirun, over ranks; every result is appended to the
// results log as it arrives, so an interrupted sweep resumes where it stopped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/report/sweep/result_log.h"
#include "sim/report/sweep/sweep_spec.h"
#include "sim/report/sweep/transport.h"

namespace clustersim::sweep {

struct RunOptions {
  int jobs = 1;                  // local worker processes (per rank)
  std::string log_path;          // results log (JSON lines)
  bool resume = false;           // continue the log at log_path
  bool restart = false;          // discard it
  std::optional<int> top_k;      // overrides spec.flow_top_k
  bool progress = false;         // progress bar with rate and ETA on stderr
  Transport* transport = nullptr;  // set under mpirun
  // Called on rank 0 after each record is appended, with the number appended by this run
  // (tests use it to interrupt a sweep).
  std::function<void(int64_t appended)> after_append;
  // Called on rank 0 once the log at log_path is open and accepted (new, resumed or restarted),
  // before any candidate runs: a refused sweep (an existing log without --resume, another
  // sweep's or another build's) never reaches it.
  std::function<void()> after_log_opened;
};

struct StageStats {
  int64_t candidates = 0;  // in the stage
  int64_t reused = 0;      // already in the log
  int64_t ran = 0;         // run now
  double seconds = 0;      // wall time of the runs
};

struct SweepRun {
  std::vector<Record> records;  // rank 0: every record, previous and new; empty on other ranks
  StageStats analytical;
  StageStats finer;
  int top_k = 0;
  // What the sweep says beside its results (objective, analytical screen, flow-stage folding):
  // printed as `note: ...` and kept in sweep.json's "notes" and sweep.html (since 2026-12-07;
  // before, on stderr only).
  std::vector<std::string> notes;
};

SweepRun run_sweep(const SweepSpec& spec, const RunOptions& options);

// Peak memory of rank 0 for a sweep of `candidates`, in bytes: every result is held (log
// records, the table, the output files as text) until the files are written.
int64_t sweep_memory_estimate(int64_t candidates);

// Empty when a sweep of `candidates` fits in `available_bytes`; else why it is refused, naming
// the count and the memory it would need.
std::string sweep_memory_refusal(int64_t candidates, int64_t available_bytes);

}  // namespace clustersim::sweep
