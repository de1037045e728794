// SPDX-License-Identifier: Apache-2.0
// What the packet level needs beyond routes: which node transmits and receives on each link
// direction, the delay to the next queue, and which links carry ECN-capable (RoCE) traffic.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/units.h"

namespace clustersim::topo {
class Fabric;
}

namespace clustersim::net {

struct PacketLink {
  int32_t from = 0;   // node that owns the egress queue
  int32_t to = 0;     // node the packet reaches
  Time delay;         // end of transmission to arrival in the next queue: propagation + switch latency
  bool ecn = true;    // RED/ECN marking on this queue (false for NVLink)
  int8_t order = 0;   // position along any path: a path's links have non-decreasing order
};

struct PacketFabric {
  std::vector<PacketLink> links;   // by LinkIndex
  std::vector<uint8_t> is_switch;  // by node: 1 = switch (shared buffer, PFC), 0 = host/NIC/GPU
};

// From a Clos fabric: ToR/agg/core and NVSwitch nodes are switches; the delay of a link is its
// latency plus the switch latency when it enters a ToR, agg or core switch (the router counts
// the same per path, so the per-hop delays add up to Path::latency); NVLink queues do not mark.
PacketFabric packet_fabric(const topo::Fabric& fabric);

}  // namespace clustersim::net
