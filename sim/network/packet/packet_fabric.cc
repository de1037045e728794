// SPDX-License-Identifier: Apache-2.0
// packet_fabric: per-link ends and delays from the topology layer.
#include "sim/network/packet/packet_fabric.h"

#include "topology/fabric.h"

namespace clustersim::net {

PacketFabric packet_fabric(const topo::Fabric& fabric) {
  PacketFabric out;
  out.is_switch.resize(static_cast<size_t>(fabric.node_count()));
  for (topo::NodeId n = 0; n < fabric.node_count(); ++n) {
    const topo::NodeKind k = fabric.node_kind(n);
    out.is_switch[n] = k == topo::NodeKind::kTor || k == topo::NodeKind::kAgg ||
                       k == topo::NodeKind::kCore || k == topo::NodeKind::kNvSwitch;
  }
  out.links.resize(static_cast<size_t>(fabric.link_count()));
  for (topo::LinkId l = 0; l < fabric.link_count(); ++l) {
    const topo::LinkEnds ends = fabric.link_ends(l);
    const topo::NodeKind to = fabric.node_kind(ends.to);
    const bool routed_switch = to == topo::NodeKind::kTor || to == topo::NodeKind::kAgg || to == topo::NodeKind::kCore;
    PacketLink& p = out.links[l];
    p.from = ends.from;
    p.to = ends.to;
    p.delay = fabric.latency(l) + (routed_switch ? fabric.switch_latency() : Time::zero());
    p.ecn = fabric.link_tier(l) != topo::LinkTier::kNvlink;
    const topo::LinkTier tier = fabric.link_tier(l);
    const int level = tier == topo::LinkTier::kNvlink || tier == topo::LinkTier::kHost ? 0
                      : tier == topo::LinkTier::kTorAgg                                ? 1
                                                                                       : 2;
    p.order = static_cast<int8_t>(topo::Fabric::link_direction(l) == topo::Direction::kUp ? level : 5 - level);
  }
  return out;
}

}  // namespace clustersim::net
