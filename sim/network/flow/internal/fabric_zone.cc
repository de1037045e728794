// SPDX-License-Identifier: Apache-2.0
// FabricZone: routes from a callback, one constant latency.
#include "sim/network/flow/internal/fabric_zone.h"

#include <simgrid/kernel/routing/NetPoint.hpp>

namespace clustersim::net::internal {

void FabricZone::get_local_route(const simgrid::kernel::routing::NetPoint* src,
                                 const simgrid::kernel::routing::NetPoint* dst,
                                 simgrid::kernel::routing::Route* into, double* latency) {
  resolver_(src->id(), dst->id(), into->link_list_);
  if (latency != nullptr) *latency += kRouteLatency;
}

}  // namespace clustersim::net::internal
