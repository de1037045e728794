// SPDX-License-Identifier: Apache-2.0
// Local worker processes for a sweep: chunks of candidates run in forked children (SimGrid allows
// one simulation per process), each child writing one line per candidate back over a pipe.
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

  // `jobs` children at most at once. `fork_always`: a child per chunk even with one job (a
  // fresh process per flow-level run); otherwise one job runs in this process.
  WorkerPool(int jobs, bool fork_always) : jobs_(jobs < 1 ? 1 : jobs), fork_always_(fork_always) {}

  // Runs every chunk. `idle` is called at least every 20 ms while children run (MPI polling).
  // If a callback throws, the children still running are killed before it propagates.
  void run(const std::vector<std::vector<int64_t>>& chunks, const Work& work, const OnLine& on_line,
           const OnLost& on_lost, const std::function<void()>& idle);

 private:
  int jobs_;
  bool fork_always_;
};

// Splits `todo` into chunks for `jobs` workers: small enough to balance and show progress,
// large enough that a fork per chunk costs little (`max_chunk` caps it; 1 for flow runs).
std::vector<std::vector<int64_t>> make_chunks(const std::vector<int64_t>& todo, int jobs, int max_chunk);

}  // namespace clustersim::sweep
