// SPDX-License-Identifier: Apache-2.0
// Local worker processes for a sweep: chunks of candidates run in forked children, each child
// writing one line per candidate back over a pipe. Analytical chunks go to `jobs` children that
// each run chunk after chunk (told the next chunk's number over a second pipe); flow-level ones
// to a fresh child per chunk (SimGrid allows one simulation per process).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace clustersim::sweep {

class WorkerPool {
 public:
  // Runs in a child: the result line (no newline) for one candidate.
  using Work = std::function<std::string(int64_t index)>;
  // In the parent, for each line as it arrives.
  using OnLine = std::function<void(int64_t index, const std::string& line)>;
  // In the parent, for each candidate whose child ended without reporting it.
  using OnLost = std::function<void(int64_t index, const std::string& why)>;

  // `jobs` children at most at once. `fork_always`: a fresh child per chunk even with one job (a
  // fresh process per flow-level run); otherwise one job runs in this process, and more reuse
  // their children (a child that dies is replaced; its chunk's unreported candidates are lost).
  // Until 2026-12-05 every chunk forked a child: with a parent holding hundreds of MB of results,
  // -j 2 ran slower than -j 1.
  WorkerPool(int jobs, bool fork_always) : jobs_(jobs < 1 ? 1 : jobs), fork_always_(fork_always) {}

  // Runs every chunk. `idle` is called at least every 20 ms while children run (MPI polling).
  // If a callback throws, the children still running are killed before it propagates.
  void run(const std::vector<std::vector<int64_t>>& chunks, const Work& work, const OnLine& on_line,
           const OnLost& on_lost, const std::function<void()>& idle);

 private:
  int jobs_;
  bool fork_always_;
};

// Splits `todo` into chunks for `jobs` workers: small enough to balance, show progress and lose
// little to a crash, large enough to cost little to hand out (`max_chunk` caps it; 1 for flow runs).
std::vector<std::vector<int64_t>> make_chunks(const std::vector<int64_t>& todo, int jobs, int max_chunk);

}  // namespace clustersim::sweep
