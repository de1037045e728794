// SPDX-License-Identifier: Apache-2.0
// make_network: fidelity and solver keys to a backend.
#include "sim/network/make_network.h"

#include <string>

#include "sim/core/error.h"
#include "sim/network/analytical/analytical_network.h"
#include "sim/network/flow/fluid_network.h"
#include "sim/network/flow/lmm_network.h"

namespace clustersim::net {

std::unique_ptr<Network> make_network(const NetworkConfig& config, const RouteSource& routes,
                                      Clock& clock, const LmmOptions& lmm) {
  switch (config.fidelity) {
    case Fidelity::kAnalytical:
      return std::make_unique<AnalyticalNetwork>(routes, clock);
    case Fidelity::kFlow:
      if (config.solver == FlowSolver::kLmm) return std::make_unique<LmmNetwork>(routes, clock, lmm);
      return std::make_unique<FluidNetwork>(routes, clock, config.merge_tolerance);
    case Fidelity::kFlowDcqcn:
    case Fidelity::kPacket:
      break;
  }
  throw BadInput(InputError{"", 0, "network.fidelity",
                            std::string("fidelity '") + to_string(config.fidelity) +
                                "' is not built yet; use 'analytical' or 'flow'"});
}

}  // namespace clustersim::net
