// SPDX-License-Identifier: Apache-2.0
// A SimGrid netzone whose routes are computed on the fly by a callback (our Clos routing).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <simgrid/kernel/routing/NetZoneImpl.hpp>

namespace clustersim::net::internal {

// SimGrid's own zones store routes or route one fixed path per host pair; a Clos with ECMP per
// flow needs neither: SimGrid asks get_local_route() at every communication start, and we answer
// with the path our routing picked for that sub-flow. Hosts are numbered in creation order (the
// NetPoint id), which is the GPU index.
//
// Every route reports the same latency, kRouteLatency: CM02 uses the route latency as the flow's
// sharing penalty (weight), and equal penalties give equal max-min shares. The real per-path
// latency is put back by the network model's latency-factor callback (see LmmNetwork).
class FabricZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  static constexpr double kRouteLatency = 1e-9;  // s
  // Appends the links of the route from host `src` to host `dst` (GPU indices).
  using Resolver =
      std::function<void(unsigned long src, unsigned long dst,
                         std::vector<simgrid::kernel::resource::StandardLinkImpl*>& into)>;

  FabricZone(const std::string& name, Resolver resolver)
      : NetZoneImpl(name), resolver_(std::move(resolver)) {}

 protected:
  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  Resolver resolver_;
};

}  // namespace clustersim::net::internal
