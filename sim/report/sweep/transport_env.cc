// SPDX-License-Identifier: Apache-2.0
// Detecting an mpirun launch from the environment (Open MPI, MPICH/Hydra, PMIx, Slurm PMI).
#include <cstdlib>
#include <string>

#include "sim/report/sweep/transport.h"

namespace clustersim::sweep {

bool launched_by_mpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* v = std::getenv(var); v && std::atoi(v) > 1) return true;
  }
  return false;
}

}  // namespace clustersim::sweep
