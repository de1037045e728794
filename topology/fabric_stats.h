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
  // Bisection bandwidth as built (faults not counted): one direction across the narrowest cut
  // between the first half of the servers and the last half (fabric_stats.cc, narrowest_cut). On
  // fully populated, even pods and groups that is the bottleneck tier,
  //   min(nics * nic_bw, tors * u_t * fabric_bw [>= 2 groups], aggs * u_a * fabric_bw [>= 2 pods])
  //   / 2,
  // and otherwise more: with 3 pods, or a last group partly filled, a half must split a pod or a
  // group, and the cut takes lower tiers' links too. fabric_graph.h's halves_max_flow checks it.
  Bandwidth bisection;
  double bisection_ratio = 0;                 // bisection / what the first half injects; 1 = full bisection
  LinkTier bisection_tier = LinkTier::kHost;  // the tier that holds the largest share of the cut
  std::array<double, kLinkTierCount> bisection_by_tier{};  // the cut's bytes/s per tier
  // With network.faults: the same figures over the capacity the faults leave, each direction on
  // its own (failed: 0); equal to the built figures without faults. Injection: the NICs' host
  // links up (sending) and down (receiving). Bisection: the same halves' narrowest cut, first half
  // to last (forward) and last to first (backward); each is then an upper bound on that
  // direction's max flow (a fault that treats alike switches unlike can open a narrower cut).
  Bandwidth sending_with_faults;
  Bandwidth receiving_with_faults;
  Bandwidth injection_with_faults;  // the smaller of sending and receiving
  Bandwidth bisection_forward_with_faults;
  Bandwidth bisection_backward_with_faults;
  Bandwidth bisection_with_faults;  // the smaller of forward and backward
};

FabricStats fabric_stats(const Fabric& fabric);

// A multi-line, human-readable summary: shape, switch and link counts per tier, speeds,
// latencies, oversubscription, injection and bisection bandwidth, faults. What `clustersim topo`
// prints. Ends with a newline.
std::string format_summary(const Fabric& fabric);

}  // namespace clustersim::topo
