// SPDX-License-Identifier: Apache-2.0
// Picks the network backend a scenario asks for (network.fidelity, network.solver).
#pragma once

#include <memory>

#include "sim/core/clock.h"
#include "sim/core/config.h"
#include "sim/network/flow/lmm_options.h"
#include "sim/network/network.h"
#include "sim/network/route_source.h"

namespace clustersim::net {

// analytical -> AnalyticalNetwork; flow -> FluidNetwork (solver fluid, merge_tolerance) or
// LmmNetwork (solver lmm, with `lmm`: needs a fresh s4u::Engine and a SimGridClock);
// flow+dcqcn -> FluidDcqcnNetwork, packet -> PacketNetwork (both with network.dcqcn and their
// random draws seeded with network.ecmp_seed + 1; they need `routes` to be FabricRoutes and
// throw BadInput for spray routing). `routes` and `clock` must outlive the network.
std::unique_ptr<Network> make_network(const NetworkConfig& config, const RouteSource& routes,
                                      Clock& clock, const LmmOptions& lmm = {});

}  // namespace clustersim::net
