// SPDX-License-Identifier: Apache-2.0
// The dimensions of a Clos fabric (ports per tier, rail groups, pods) derived from the scenario.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/core/config.h"

namespace clustersim::topo {

// Every count of a 2- or 3-tier Clos, derived from the radix k and the two down:up ratios. Pure
// arithmetic on these numbers maps NICs to ToRs, ToRs to pods and links to indices (fabric.h).
//
//   core   [c0 .. c(u_a-1)] [..] ... [..]     u_t planes of u_a cores; core m of plane j has one
//               \      \         /             link to agg j of every pod (at most k pods)
//   agg     pod 0: [a0 a1 .. a(u_t-1)]  pod 1: [..]  ...   d_a ports down, u_a up
//                    | \ /  \  / |             full mesh inside a pod: each ToR has one link
//                    |  X    X   |             to each of the pod's u_t aggs
//   ToR            [t0 t1 ...... t(tors_per_pod-1)]        d_t ports down, u_t up
//                   |   |            |
//   NIC    rail-optimised: NIC i of each of the d_t servers of a group goes to the group's ToR i
//          (a group = nics_per_node ToRs, one per rail); ToR-per-server: the nics_per_node NICs of
//          d_t / nics_per_node servers share one ToR (a group = 1 ToR)
//   GPU    gpus_per_node GPUs per server, each on one NVSwitch port; GPU l uses NIC
//          l * nics_per_node / gpus_per_node
//
// Port split at a tier with radix k and oversubscription r (down:up): up = k / (1 + r),
// down = k - up; both must be whole numbers (r = 1, k = 64: 32 down, 32 up).
// A pod holds floor(d_a / tors_per_group) whole groups; aggs_per_pod = u_t.
// 3 tiers: at most k pods (each core has k ports, one per pod); cores = u_t * u_a.
// 2 tiers (leaf/spine): one pod whose aggs are the spines, d_a = k, no core.
// Capacity: max servers = max_pods * groups_per_pod * servers_per_group
//   (k = 64, 1:1, 8 rails, 3 tiers: 64 pods * 4 groups * 32 servers = 8,192 servers = 65,536 GPUs).
// Smaller clusters build only the groups and pods they need (the last ones may be partly filled);
// cores are always u_t * u_a, using one port per built pod.
struct ClosShape {
  int tiers = 3;
  Wiring wiring = Wiring::kRailOptimized;
  OversubscriptionBy oversubscription_by = OversubscriptionBy::kPortSplit;
  int radix = 0;

  int gpus = 0;
  int gpus_per_node = 0;
  int nics_per_node = 0;
  int servers = 0;
  int nics = 0;

  int tor_down = 0;  // d_t: NIC ports per ToR
  int tor_up = 0;    // u_t: one per agg of the pod
  int agg_down = 0;  // d_a: ToR ports per agg (k in 2 tiers)
  int agg_up = 0;    // u_a: core ports per agg (0 in 2 tiers)

  int servers_per_group = 0;
  int tors_per_group = 0;  // nics_per_node (rail-optimised) or 1
  int groups = 0;
  int groups_per_pod = 0;
  int tors_per_pod = 0;
  int pods = 0;
  int max_pods = 0;  // k (3 tiers) or 1

  int tors = 0;
  int aggs_per_pod = 0;  // = tor_up
  int aggs = 0;
  int cores = 0;

  int64_t max_gpus = 0;  // GPUs this radix and these ratios can hold

  // GPUs under one ToR group and under one pod: the blocks whose uplinks the ToR and aggregation
  // oversubscription throttle.
  int64_t gpus_per_group() const { return static_cast<int64_t>(servers_per_group) * gpus_per_node; }
  // Down ports cabled per ToR and per aggregation switch (of a full group and pod): a ToR-per-server
  // ToR holds whole servers and a pod whole groups, so some of the split's down ports may stay
  // empty and the tier runs below its down:up ratio (radix 16, 3:1 at the aggs, 8 rails: a pod
  // holds 1 group of 8 ToRs on 8 of 12 down ports, 2:1). Spines (2 tiers) count the built ToRs.
  int tor_down_cabled() const {
    return wiring == Wiring::kRailOptimized ? servers_per_group : servers_per_group * nics_per_node;
  }
  int agg_down_cabled() const { return tiers == 2 ? tors : tors_per_pod; }
  int64_t gpus_per_pod() const { return gpus_per_group() * groups_per_pod; }
};

// Down and up ports of a switch with `radix` ports at down:up ratio `ratio`; nullopt when they are
// not whole numbers (or one side would be empty).
struct PortSplit {
  int down = 0;
  int up = 0;
};
std::optional<PortSplit> split_ports(int radix, double ratio);

// The NIC (numbered over the cluster, nics_per_node per server) that GPU `gpu` uses: GPU l of a
// server uses its NIC l x nics_per_node / gpus_per_node.
inline int64_t nic_of_gpu(int64_t gpu, int gpus_per_node, int nics_per_node) {
  return gpu / gpus_per_node * nics_per_node + gpu % gpus_per_node * nics_per_node / gpus_per_node;
}

// Checks the `cluster` and `network` keys that shape the fabric and derives every count. Throws
// BadInput listing all problems at once (key paths such as "network.switch_radix"; `file` goes
// into each error). Link speeds, latencies and faults are checked by build_fabric.
ClosShape plan_clos(const ClusterConfig& cluster, const NetworkConfig& network,
                    const std::string& file = "");

}  // namespace clustersim::topo
