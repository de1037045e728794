// SPDX-License-Identifier: Apache-2.0
// FabricRoutes: topology paths converted to the backends' sub-flow paths.
#include "sim/network/fabric_routes.h"

namespace clustersim::net {

FabricRoutes::FabricRoutes(const topo::Fabric& fabric, topo::RoutingOptions options)
    : fabric_(fabric), router_(fabric, options) {}

void FabricRoutes::paths(GpuId src, GpuId dst, uint32_t connection, std::vector<Path>& out) const {
  if (router_.options().mode == Routing::kSpray) {
    const topo::SprayRoute spray = router_.spray(src, dst);
    out.resize(1);
    Path& p = out[0];
    p.links.clear();
    p.shares.clear();
    p.groups.clear();
    p.latency = spray.latency;
    bool split = false;
    for (const topo::LinkRange& hop : spray.hops) {
      for (int32_t i = 0; i < hop.count; ++i) {
        p.links.push_back(hop.first + i * hop.stride);
        p.shares.push_back(hop.share);
        split = split || hop.share != 1.0;
      }
      p.groups.push_back(hop.count);
    }
    if (!split) p.shares.clear();
    // Without failed links every hop is a whole group: all of a ToR's uplinks, all of a pod's
    // agg->core cables (topo::FabricRouter::spray). With failures the split depends on both
    // ends, so two paths may share part of a hop's links.
    if (!split || fabric_.has_failures()) p.groups.clear();
    return;
  }
  const auto qps = static_cast<uint32_t>(router_.options().qps_per_connection);
  router_.connection_paths(src, dst, connection * qps, scratch_);
  out.resize(scratch_.size());
  for (size_t k = 0; k < scratch_.size(); ++k) {
    const auto links = scratch_[k].links();
    out[k].links.assign(links.begin(), links.end());
    out[k].shares.clear();
    out[k].groups.clear();
    out[k].latency = scratch_[k].latency;
  }
}

}  // namespace clustersim::net
