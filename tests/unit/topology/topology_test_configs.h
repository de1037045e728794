// SPDX-License-Identifier: Apache-2.0
// Inline cluster/network configs and small helpers shared by the topology tests.
#pragma once

#include <algorithm>
#include <vector>

#include "sim/core/config.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim::topo::testing {

inline ClusterConfig cluster(int gpus, int gpus_per_node = 8, int nics_per_node = 8) {
  ClusterConfig c;
  c.gpus = gpus;
  c.gpus_per_node = gpus_per_node;
  c.nics_per_node = nics_per_node;
  c.nic_bandwidth = gbps(400);
  return c;
}

inline NetworkConfig network(int tiers, int radix, Wiring wiring = Wiring::kRailOptimized,
                             double tor_ratio = 1.0, double agg_ratio = 1.0) {
  NetworkConfig n;
  n.tiers = tiers;
  n.switch_radix = radix;
  n.wiring = wiring;
  n.tor_oversubscription = tor_ratio;
  n.agg_oversubscription = agg_ratio;
  return n;
}

// Flows per link direction when every GPU g sends one flow to (g + shift) mod gpus.
inline std::vector<int> shift_loads(const FabricRouter& router, int shift) {
  const Fabric& f = router.fabric();
  std::vector<int> load(static_cast<size_t>(f.link_count()), 0);
  for (GpuId g = 0; g < f.gpus(); ++g) {
    const Path p = router.route(g, (g + shift) % f.gpus(), 0);
    for (LinkId l : p.links()) ++load[l];
  }
  return load;
}

inline int max_load(const std::vector<int>& load) {
  return load.empty() ? 0 : *std::max_element(load.begin(), load.end());
}

}  // namespace clustersim::topo::testing
