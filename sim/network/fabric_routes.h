// SPDX-License-Identifier: Apache-2.0
// RouteSource over the topology layer: a Clos Fabric and its router (ECMP, D-mod-k, spraying).
#pragma once

#include <vector>

#include "sim/network/route_source.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim::net {

// A transfer between two GPUs is one NCCL connection: qps_per_connection sub-flows on source
// ports 0 .. qps-1 (the connection's queue pairs; repeated transfers between the same pair reuse
// them, as NCCL keeps its connections). With spraying, one sub-flow divided evenly over every
// equal-cost path (the router's SprayRoute), whatever qps_per_connection says.
// Not thread-safe (reuses a scratch buffer).
class FabricRoutes final : public RouteSource {
 public:
  // `fabric` must outlive this.
  FabricRoutes(const topo::Fabric& fabric, topo::RoutingOptions options);

  int gpu_count() const override { return fabric_.gpus(); }
  LinkIndex link_count() const override { return fabric_.link_count(); }
  Bandwidth capacity(LinkIndex link) const override { return fabric_.capacity(link); }
  using RouteSource::paths;
  // A connection's qps_per_connection sub-flows take source ports connection x qps, ... + qps - 1.
  void paths(GpuId src, GpuId dst, uint32_t connection, std::vector<Path>& out) const override;

  const topo::Fabric& fabric() const { return fabric_; }
  const topo::FabricRouter& router() const { return router_; }

 private:
  const topo::Fabric& fabric_;
  topo::FabricRouter router_;
  mutable std::vector<topo::Path> scratch_;
};

}  // namespace clustersim::net
