// SPDX-License-Identifier: Apache-2.0
// make_network: fidelity and solver keys to a backend.
#include "sim/network/make_network.h"

#include <string>

#include "sim/core/error.h"
#include "sim/network/analytical/analytical_network.h"
#include "sim/network/dcqcn/fluid_dcqcn_network.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/flow/fluid_network.h"
#include "sim/network/flow/lmm_network.h"
#include "sim/network/packet/packet_network.h"

namespace clustersim::net {

namespace {

// The congestion-controlled levels need the fabric's link ends, and one path per packet.
PacketFabric fabric_of(const NetworkConfig& config, const RouteSource& routes) {
  const auto* fabric_routes = dynamic_cast<const FabricRoutes*>(&routes);
  if (!fabric_routes) {
    throw BadInput(InputError{"", 0, "network.fidelity",
                              std::string("the '") + to_string(config.fidelity) +
                                  "' level needs a Clos fabric (switches with queues, buffers and PFC); "
                                  "these routes come without one"});
  }
  if (config.routing == Routing::kSpray) {
    throw BadInput(InputError{"", 0, "network.routing",
                              std::string("the '") + to_string(config.fidelity) +
                                  "' level keeps each queue pair on one path: use 'ecmp' or 'dmodk' "
                                  "(more queue pairs spread the load: network.qps_per_connection)"});
  }
  return packet_fabric(fabric_routes->fabric());
}

}  // namespace

std::unique_ptr<Network> make_network(const NetworkConfig& config, const RouteSource& routes,
                                      Clock& clock, const LmmOptions& lmm) {
  switch (config.fidelity) {
    case Fidelity::kAnalytical:
      return std::make_unique<AnalyticalNetwork>(routes, clock);
    case Fidelity::kFlow:
      if (config.solver == FlowSolver::kLmm) return std::make_unique<LmmNetwork>(routes, clock, lmm);
      return std::make_unique<FluidNetwork>(routes, clock, config.merge_tolerance, config.rate_tolerance);
    case Fidelity::kFlowDcqcn:
      return std::make_unique<FluidDcqcnNetwork>(routes, fabric_of(config, routes), clock, config.dcqcn,
                                                 config.ecmp_seed + 1);
    case Fidelity::kPacket:
      return std::make_unique<PacketNetwork>(routes, fabric_of(config, routes), clock, config.dcqcn,
                                             config.ecmp_seed + 1);
  }
  throw BadInput(InputError{"", 0, "network.fidelity", "unknown fidelity"});
}

}  // namespace clustersim::net
