// SPDX-License-Identifier: Apache-2.0
// Clos dimensions for hand-checked shapes, and the errors for fabrics that cannot be built.
#include "topology/clos_shape.h"

#include <gtest/gtest.h>

#include "sim/core/error.h"
#include "tests/unit/topology/topology_test_configs.h"

namespace clustersim::topo {
namespace {

using testing::cluster;
using testing::network;

// Runs plan_clos expecting BadInput; returns its errors.
std::vector<InputError> plan_errors(const ClusterConfig& c, const NetworkConfig& n) {
  try {
    plan_clos(c, n, "s.yaml");
  } catch (const BadInput& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected BadInput";
  return {};
}

TEST(SplitPorts, WholeSplitsOnly) {
  // up = k / (1 + r): 64 / 2 = 32; 64 / 4 = 16; 64 / 3 is not whole.
  EXPECT_EQ(split_ports(64, 1.0)->up, 32);
  EXPECT_EQ(split_ports(64, 3.0)->down, 48);
  EXPECT_FALSE(split_ports(64, 2.0));
  EXPECT_FALSE(split_ports(64, 1.5));  // 25.6 up
  EXPECT_EQ(split_ports(60, 1.5)->up, 24);
  EXPECT_FALSE(split_ports(64, 0.5));  // ratios below 1 are not oversubscription
  EXPECT_FALSE(split_ports(1, 1.0));
}

TEST(ClosShape, ClassicFatTreeRadix4) {
  // Al-Fares k = 4 fat tree: k^3/4 = 16 hosts, k pods of k/2 edge + k/2 agg, (k/2)^2 = 4 cores.
  // One NIC per single-GPU server, ToR-per-server: d_t = 2 servers per ToR, 2 ToRs per pod.
  const ClosShape s = plan_clos(cluster(16, 1, 1), network(3, 4, Wiring::kTorPerServer));
  EXPECT_EQ(s.tor_down, 2);
  EXPECT_EQ(s.tor_up, 2);
  EXPECT_EQ(s.max_gpus, 16);
  EXPECT_EQ(s.pods, 4);
  EXPECT_EQ(s.tors, 8);
  EXPECT_EQ(s.aggs, 8);
  EXPECT_EQ(s.cores, 4);
}

TEST(ClosShape, ThreeTierRailRadix8) {
  // k = 8, 1:1: d_t = u_t = d_a = u_a = 4. Rail groups: 4 servers on 4 rail ToRs; a pod holds
  // floor(4 / 4) = 1 group; at most 8 pods -> 8 * 4 servers * 4 GPUs = 128 GPUs.
  const ClosShape s = plan_clos(cluster(128, 4, 4), network(3, 8));
  EXPECT_EQ(s.servers_per_group, 4);
  EXPECT_EQ(s.tors_per_group, 4);
  EXPECT_EQ(s.groups_per_pod, 1);
  EXPECT_EQ(s.max_gpus, 128);
  EXPECT_EQ(s.servers, 32);
  EXPECT_EQ(s.groups, 8);
  EXPECT_EQ(s.pods, 8);
  EXPECT_EQ(s.tors, 32);   // 8 groups x 4 rails
  EXPECT_EQ(s.aggs, 32);   // 8 pods x u_t
  EXPECT_EQ(s.cores, 16);  // u_t x u_a
}

TEST(ClosShape, TwoTierRailUsesOnePodOfSpines) {
  // Leaf/spine, k = 8: leaves 4 down / 4 up -> 4 spines with 8 down ports = 2 rail groups of
  // 4 leaves; 2 groups x 4 servers x 4 GPUs = 32 GPUs at most.
  const ClosShape s = plan_clos(cluster(32, 4, 4), network(2, 8));
  EXPECT_EQ(s.max_gpus, 32);
  EXPECT_EQ(s.pods, 1);
  EXPECT_EQ(s.tors, 8);
  EXPECT_EQ(s.aggs, 4);
  EXPECT_EQ(s.agg_up, 0);
  EXPECT_EQ(s.cores, 0);
}

TEST(ClosShape, PartialClusterBuildsOnlyWhatItNeeds) {
  // k = 64, 8 rails: group = 32 servers; 1,000 servers -> 32 groups (last one 8 servers);
  // 4 groups per pod -> 8 pods; ToRs = 32 x 8 = 256; aggs = 8 x 32; cores = 32 x 32.
  const ClosShape s = plan_clos(cluster(8000), network(3, 64));
  EXPECT_EQ(s.max_gpus, 65536);
  EXPECT_EQ(s.groups, 32);
  EXPECT_EQ(s.pods, 8);
  EXPECT_EQ(s.tors, 256);
  EXPECT_EQ(s.aggs, 256);
  EXPECT_EQ(s.cores, 1024);
}

TEST(ClosShape, TorOversubscriptionShrinksUplinks) {
  // k = 8, ToR 3:1 -> 6 down, 2 up; 2 rails: groups of 6 servers on 2 leaves; 2 spines with
  // 8 ports -> 4 groups -> 24 servers x 2 GPUs = 48 GPUs.
  const ClosShape s = plan_clos(cluster(48, 2, 2), network(2, 8, Wiring::kRailOptimized, 3.0));
  EXPECT_EQ(s.tor_down, 6);
  EXPECT_EQ(s.tor_up, 2);
  EXPECT_EQ(s.max_gpus, 48);
  EXPECT_EQ(s.aggs, 2);
}

// oversubscription_by: fewer_uplinks keeps the 1:1 down ports (the same groups and pods) and
// cables down / ratio uplinks, where port_split grows the pods (added 2026-12-06).
TEST(ClosShape, FewerUplinksKeepThePodsAndDropUplinks) {
  NetworkConfig flat = network(3, 64, Wiring::kTorPerServer);
  NetworkConfig tapered = network(3, 64, Wiring::kTorPerServer, 1.0, 4.0);
  tapered.oversubscription_by = OversubscriptionBy::kFewerUplinks;
  const ClosShape a = plan_clos(cluster(16384), flat), b = plan_clos(cluster(16384), tapered);
  EXPECT_EQ(b.agg_down, 32);
  EXPECT_EQ(b.agg_up, 8);
  EXPECT_EQ(b.tors_per_pod, a.tors_per_pod);
  EXPECT_EQ(b.pods, a.pods);
  EXPECT_EQ(b.cores, a.cores / 4);
  // Split at the ratio the pods grow: 51 ToRs a pod at 51:13.
  const ClosShape split = plan_clos(cluster(16384), network(3, 64, Wiring::kTorPerServer, 1.0, 51.0 / 13.0));
  EXPECT_EQ(split.tors_per_pod, 51);
  // The ratio must take half the radix into whole ports: 32 / 3 is not whole; an odd radix has no half.
  tapered.agg_oversubscription = 3.0;
  const std::vector<InputError> e = plan_errors(cluster(16384), tapered);
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].key_path, "network.agg_oversubscription");
  EXPECT_NE(e[0].message.find("keeps 32 of radix 64's ports down (as at 1:1) and gives 10.67 up"), std::string::npos)
      << e[0].message;
  EXPECT_NE(e[0].message.find("32:10 (3.2) or 32:11"), std::string::npos) << e[0].message;
  tapered.agg_oversubscription = 4.0;
  tapered.switch_radix = 63;
  // An odd radix is the radix's error under fewer_uplinks, whatever the ratio (until 2026-12-06
  // it was blamed on the ratio key).
  const std::vector<InputError> odd = plan_errors(cluster(64), tapered);
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0].key_path, "network.switch_radix");
  EXPECT_NE(odd[0].message.find("must be even with network.oversubscription_by: fewer_uplinks"), std::string::npos)
      << odd[0].message;
  // Where port_split cannot make the ratio, its error offers fewer_uplinks.
  const std::vector<InputError> s4 = plan_errors(cluster(16384), network(3, 64, Wiring::kTorPerServer, 1.0, 4.0));
  ASSERT_FALSE(s4.empty());
  EXPECT_NE(s4[0].message.find("or network.oversubscription_by: fewer_uplinks (32:8"), std::string::npos) << s4[0].message;
}

TEST(ClosShape, TorPerServerGroupsServersOnOneTor) {
  // k = 16, 4 NICs per server: d_t = 8 -> 2 servers per ToR.
  const ClosShape s = plan_clos(cluster(64, 8, 4), network(2, 16, Wiring::kTorPerServer));
  EXPECT_EQ(s.servers_per_group, 2);
  EXPECT_EQ(s.tors_per_group, 1);
  EXPECT_EQ(s.tors, 4);  // 8 servers / 2
}

TEST(ClosShapeErrors, RadixTooSmallNamesTheLimitAndAFix) {
  // k = 16, 1:1, 8 rails: 8 servers per group, floor(8 / 8) = 1 group per pod, 16 pods
  // -> 128 servers = 1,024 GPUs. Radix 32 gives 2 groups x 16 servers x 32 pods = 8,192 GPUs.
  const auto errors = plan_errors(cluster(4096), network(3, 16));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.switch_radix");
  EXPECT_EQ(errors[0].file, "s.yaml");
  EXPECT_NE(errors[0].message.find("radix 16 supports at most 1,024 GPUs"), std::string::npos)
      << errors[0].message;
  EXPECT_NE(errors[0].message.find("4,096 requested"), std::string::npos);
  EXPECT_NE(errors[0].message.find("radix 32 would fit"), std::string::npos);
}

TEST(ClosShapeErrors, NonIntegerTorRatio) {
  const auto errors = plan_errors(cluster(1024), network(3, 64, Wiring::kRailOptimized, 1.5));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.tor_oversubscription");
  // 64 / 2.5 = 25.6 up; nearest whole splits 39:25 and 38:26.
  EXPECT_NE(errors[0].message.find("25.6 up"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("39:25"), std::string::npos);
}

// The nearest splits offered are ones a scenario may give: down >= up, at most 64:1 (before
// 2026-12-05 radix 63 offered 31:32, below 1, and radix 129 at 64 offered "128:1").
TEST(ClosShapeErrors, OfferedSplitsAreValidRatios) {
  const auto odd = plan_errors(cluster(64), network(3, 63));
  ASSERT_GE(odd.size(), 1u);
  EXPECT_NE(odd[0].message.find("32:31"), std::string::npos) << odd[0].message;
  EXPECT_EQ(odd[0].message.find("31:32"), std::string::npos) << odd[0].message;
  const auto steep = plan_errors(cluster(64), network(3, 129, Wiring::kRailOptimized, 64.0, 1.0));
  ASSERT_GE(steep.size(), 1u);
  EXPECT_EQ(steep[0].key_path, "network.tor_oversubscription");
  EXPECT_EQ(steep[0].message.find("128:1"), std::string::npos) << steep[0].message;
  EXPECT_NE(steep[0].message.find("127:2"), std::string::npos) << steep[0].message;
}

// An odd radix at 1:1 is blamed on the radix, once (until 2026-12-06 on both ratio keys, which a
// scenario may not write, so the error had no line).
TEST(ClosShapeErrors, AnOddRadixAtOneToOneNamesTheRadix) {
  for (int tiers : {2, 3}) {
    const auto errors = plan_errors(cluster(64), network(tiers, 7));
    ASSERT_EQ(errors.size(), 1u) << tiers;
    EXPECT_EQ(errors[0].key_path, "network.switch_radix");
    EXPECT_NE(errors[0].message.find("got 7: use 6 or 8"), std::string::npos) << errors[0].message;
  }
}

// A ratio the radix cannot split also names the nearest radices that keep it (before 2026-12-05
// only other ratios were offered: 2:1 at radix 64 is 43:21 or 42:22, which ECMP treats unlike).
TEST(ClosShapeErrors, OfferedRadicesKeepTheRatio) {
  const auto errors = plan_errors(cluster(64), network(3, 64, Wiring::kRailOptimized, 2.0, 1.0));
  ASSERT_GE(errors.size(), 1u);
  // 63 would split 2:1 but not the agg tier's 1:1.
  EXPECT_NE(errors[0].message.find("or keep 2:1 with network.switch_radix 60 (40:20) or 66 (44:22)"), std::string::npos)
      << errors[0].message;
}

TEST(ClosShapeErrors, OfferedRadicesSplitBothTiers) {
  // ToR 3:1 and agg 2:1 at radix 64: 63 splits 2:1 but not 3:1 (it offered 63, whose ToR error then
  // offered 60 or 64); 60 and 72 split both.
  const auto errors = plan_errors(cluster(64), network(3, 64, Wiring::kRailOptimized, 3.0, 2.0));
  ASSERT_GE(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.agg_oversubscription");
  EXPECT_NE(errors[0].message.find("switch_radix 60 (40:20) or 72 (48:24)"), std::string::npos) << errors[0].message;
}

TEST(ClosShapeErrors, NonIntegerAggRatio) {
  const auto errors = plan_errors(cluster(1024), network(3, 64, Wiring::kRailOptimized, 1.0, 2.0));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.agg_oversubscription");
}

TEST(ClosShapeErrors, AggRatioNeedsThreeTiers) {
  const auto errors = plan_errors(cluster(64), network(2, 64, Wiring::kRailOptimized, 1.0, 3.0));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.agg_oversubscription");
}

TEST(ClosShapeErrors, AllIndependentProblemsAtOnce) {
  ClusterConfig c = cluster(1001);  // not a whole number of 8-GPU nodes
  NetworkConfig n = network(4, 64);
  n.tor_oversubscription = 0.5;
  const auto errors = plan_errors(c, n);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].key_path, "cluster.gpus");
  EXPECT_EQ(errors[1].key_path, "network.tiers");
  EXPECT_EQ(errors[2].key_path, "network.tor_oversubscription");
}

TEST(ClosShapeErrors, TorPerServerNeedsRoomForOneServer) {
  // k = 8, 1:1 -> 4 down ports, but a server has 8 NICs.
  const auto errors = plan_errors(cluster(64), network(2, 8, Wiring::kTorPerServer));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.switch_radix");
}

TEST(ClosShapeErrors, RailGroupMustFitUnderOneAgg) {
  // k = 8, 1:1 -> aggs have 4 down ports, fewer than the 8 rail ToRs of a group.
  const auto errors = plan_errors(cluster(64), network(3, 8));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.switch_radix");
}

}  // namespace
}  // namespace clustersim::topo
