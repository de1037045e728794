// SPDX-License-Identifier: Apache-2.0
// The transport when the binary is built without MPI: mpirun launches are refused clearly.
#include "sim/core/error.h"
#include "sim/report/sweep/transport.h"

namespace clustersim::sweep {

bool built_with_mpi() { return false; }

std::unique_ptr<Transport> make_mpi_transport() {
  throw BadInput(InputError{"", 0, "mpirun",
                            "this clustersim was built without MPI, so ranks cannot share a sweep; "
                            "install Open MPI (libopenmpi-dev), rebuild, or run without mpirun and use -j N"});
}

}  // namespace clustersim::sweep
