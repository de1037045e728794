// SPDX-License-Identifier: Apache-2.0
// Counts per tier, injection and bisection bandwidth of a Fabric, and the text summary.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "sim/core/units.h"
#include "topology/fabric.h"

namespace clustersim::topo {

struct FabricStats {
  int gpus = 0;
  int servers = 0;
  int nics = 0;
  int pods = 0;
  int tors = 0;                                  // leaves in 2 tiers
  int aggs = 0;                                  // spines in 2 tiers
  int cores = 0;                                 // 0 in 2 tiers
  std::array<int64_t, kLinkTierCount> cables{};  // full-duplex links per LinkTier
  int failed_directions = 0;                     // link directions at capacity 0
  int degraded_directions = 0;                   // link directions below their tier's speed

  // Sum of all NIC speeds, one direction.
  Bandwidth injection;
  // Bisection bandwidth as built (faults not counted): one direction across the worst cut that
  // splits the servers into two equal halves along the Clos subtrees (whole pods, else whole
  // ToR groups). For a Clos that cut is the bottleneck tier:
  //   min(nics * nic_bw, tors * u_t * fabric_bw [>= 2 groups], aggs * u_a * fabric_bw [>= 2 pods])
  //   / 2
  // Exact for fully populated pods; fabric_graph.h's halves_max_flow checks it by max-flow.
  Bandwidth bisection;
  double bisection_ratio = 0;                 // bisection / (injection / 2); 1 = full bisection
  LinkTier bisection_tier = LinkTier::kHost;  // the tier that sets the bisection
  // With network.faults: the same two figures over what the faults leave, each cable at its
  // slower direction (failed: 0). The bisection is then an upper bound (the tier sums above; a
  // fault can cut one half's share of a tier more than the other's). Equal to the built figures
  // without faults.
  Bandwidth injection_with_faults;
  Bandwidth bisection_with_faults;
};

FabricStats fabric_stats(const Fabric& fabric);

// A multi-line, human-readable summary: shape, switch and link counts per tier, speeds,
// latencies, oversubscription, injection and bisection bandwidth, faults. What `clustersim topo`
// prints. Ends with a newline.
std::string format_summary(const Fabric& fabric);

}  // namespace clustersim::topo
