// SPDX-License-Identifier: Apache-2.0
// How the ranks of an MPI sweep talk: rank 0 decides the work and gathers every result line.
// Built on MPI when CMake finds it; without MPI there is only the single-process case.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace clustersim::sweep {

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Rank 0's `values` replace every other rank's.
  virtual void broadcast(std::vector<int64_t>& values) = 0;
  // Ranks other than 0: result lines (newline-terminated) for rank 0.
  virtual void send_lines(const std::string& lines) = 0;
  // Ranks other than 0: this rank has finished the current stage.
  virtual void send_done() = 0;
  // Rank 0: appends the lines that have arrived; returns how many done reports came with them.
  virtual int receive(std::vector<std::string>& lines) = 0;
};

// True when this binary was built with MPI.
bool built_with_mpi();

// True when the environment says the process was started by mpirun/mpiexec with more than one rank.
bool launched_by_mpirun();

// Initialises MPI and returns its transport (finalised when destroyed). Throws BadInput when
// the binary was built without MPI.
std::unique_ptr<Transport> make_mpi_transport();

}  // namespace clustersim::sweep
