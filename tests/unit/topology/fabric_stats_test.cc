// SPDX-License-Identifier: Apache-2.0
// Injection and bisection bandwidth for full and oversubscribed Clos shapes; the summary text.
#include "topology/fabric_stats.h"

#include <gtest/gtest.h>

#include "tests/unit/topology/topology_test_configs.h"
#include "topology/internal/text.h"

namespace clustersim::topo {
namespace {

using testing::cluster;
using testing::network;

TEST(FabricStats, FullBisectionClos) {
  // k = 8, 1:1, 128 NICs at 400 Gbps: injection 51.2 Tbps, bisection half of it.
  const Fabric f = build_fabric(cluster(128, 4, 4), network(3, 8));
  const FabricStats st = fabric_stats(f);
  EXPECT_EQ(st.tors, 32);
  EXPECT_EQ(st.aggs, 32);
  EXPECT_EQ(st.cores, 16);
  EXPECT_EQ(st.cables[static_cast<int>(LinkTier::kHost)], 128);
  EXPECT_DOUBLE_EQ(st.injection.as_gbps(), 128 * 400.0);
  EXPECT_DOUBLE_EQ(st.bisection.as_gbps(), 64 * 400.0);
  EXPECT_DOUBLE_EQ(st.bisection_ratio, 1.0);
  EXPECT_EQ(st.bisection_tier, LinkTier::kHost);
}

TEST(FabricStats, TorOversubscriptionSetsBisection) {
  // k = 8, ToR 3:1 (6 down, 2 up), 2 rails, 192 GPUs: 96 servers in 16 groups of 6, 32 ToRs.
  // Cut: min(192 NICs, 32 ToRs x 2 up, 16 aggs x 4 up) x 400 Gbps / 2 = 64 x 200 Gbps: 1/3.
  const Fabric f = build_fabric(cluster(192, 2, 2), network(3, 8, Wiring::kRailOptimized, 3.0));
  const FabricStats st = fabric_stats(f);
  EXPECT_EQ(st.tors, 32);
  EXPECT_EQ(st.aggs, 16);
  EXPECT_DOUBLE_EQ(st.bisection.as_gbps(), 64 * 200.0);
  EXPECT_NEAR(st.bisection_ratio, 1.0 / 3, 1e-12);
  EXPECT_EQ(st.bisection_tier, LinkTier::kTorAgg);
}

TEST(FabricStats, AggOversubscriptionSetsBisection) {
  // k = 8, agg 3:1 (6 down, 2 up), 2 rails, 192 GPUs: 8 pods of 6 ToRs and 4 aggs.
  // Cut: min(192, 48 x 4, 32 x 2) x 400 Gbps / 2 = 64 x 200 Gbps.
  const Fabric f =
      build_fabric(cluster(192, 2, 2), network(3, 8, Wiring::kRailOptimized, 1.0, 3.0));
  const FabricStats st = fabric_stats(f);
  EXPECT_EQ(st.aggs, 32);
  EXPECT_DOUBLE_EQ(st.bisection.as_gbps(), 64 * 200.0);
  EXPECT_EQ(st.bisection_tier, LinkTier::kAggCore);
}

TEST(FabricStats, CountsFailedAndDegradedDirections) {
  NetworkConfig n = network(3, 8);
  n.faults = {{"tor:0", 0.0, {}}, {"host:100", 0.5, {}}};
  const FabricStats st = fabric_stats(build_fabric(cluster(128, 4, 4), n));
  EXPECT_EQ(st.failed_directions, 2 * (4 + 4));  // 4 NICs below, 4 aggs above
  EXPECT_EQ(st.degraded_directions, 2);
  // What the faults leave: ToR 0's 4 NICs and host 100 at half rate out of 128 NICs; ToR 0's 4
  // uplinks out of the tier's. The built figures stay as built.
  const double nic = st.injection.bytes_per_s / 128;
  EXPECT_DOUBLE_EQ(st.injection_with_faults.bytes_per_s, (128 - 4 - 0.5) * nic);
  EXPECT_LT(st.bisection_with_faults.bytes_per_s, st.bisection.bytes_per_s);
  const FabricStats healthy = fabric_stats(build_fabric(cluster(128, 4, 4), network(3, 8)));
  EXPECT_EQ(healthy.bisection_with_faults.bytes_per_s, healthy.bisection.bytes_per_s);
  EXPECT_EQ(healthy.injection.bytes_per_s, st.injection.bytes_per_s);
}

// Injection with faults per direction: a failed host:0/up leaves NIC 0 receiving, a failed
// host:1/down NIC 1 sending; 31 of 32 NICs can send and 31 receive (12.4 Tbps each way). Before
// 2026-12-05 each host link counted at its slower direction: 30 NICs, 12 Tbps.
TEST(FabricStats, InjectionWithFaultsPerDirection) {
  NetworkConfig n = network(3, 8);
  n.faults = {{"host:0/up", 0.0, {}}, {"host:1/down", 0.0, {}}, {"host:2/up", 0.5, {}}};
  const Fabric f = build_fabric(cluster(128, 8, 2), n);
  const FabricStats st = fabric_stats(f);
  EXPECT_DOUBLE_EQ(st.sending_with_faults.as_gbps(), 30.5 * 400);
  EXPECT_DOUBLE_EQ(st.receiving_with_faults.as_gbps(), 31 * 400.0);
  EXPECT_DOUBLE_EQ(st.injection_with_faults.as_gbps(), 30.5 * 400);
  const std::string s = format_summary(f);
  EXPECT_NE(s.find("injection bandwidth: 12.8 Tbps as built; with the faults 12.2 Tbps (95.3% of as built) sending, 12.4 Tbps "
                   "(96.9% of as built) receiving\n"),
            std::string::npos)
      << s;
  n.faults = {{"host:0/up", 0.0, {}}, {"host:1/down", 0.0, {}}};
  EXPECT_NE(format_summary(build_fabric(cluster(128, 8, 2), n))
                .find("injection bandwidth: 12.8 Tbps as built; 12.4 Tbps (96.9% of as built) with the faults, each "
                      "direction\n"),
            std::string::npos);
}

// A figure the faults left reads differently from the as-built one wherever they differ, with
// its share (QA 2026-12-07: one failed host link of 16,384 GPUs left "3.28 Pbps" both ways).
TEST(FabricSummary, AFaultedFigureNeverReadsAsBuilt) {
  using internal::faulted_bandwidth;
  EXPECT_EQ(faulted_bandwidth(gbps(3276400), gbps(3276800)), "3.276 Pbps (99.99% of as built)");
  EXPECT_EQ(faulted_bandwidth(gbps(204796), gbps(204800)), "204.796 Tbps (99.998% of as built)");
  EXPECT_EQ(faulted_bandwidth(gbps(6000), gbps(6400)), "6 Tbps (93.8% of as built)");
  EXPECT_EQ(faulted_bandwidth(gbps(6400), gbps(6400)), "6.4 Tbps");
  EXPECT_EQ(faulted_bandwidth(gbps(0), gbps(6400)), "0 Gbps (0% of as built)");
}

TEST(FabricSummary, RatioAsCabledAndCoresOfAPartFabric) {
  // Radix 16, agg 3:1 (12 down, 4 up), 8 rails: a pod holds 1 group of 8 ToRs, on 8 of the 12
  // down ports. 512 GPUs: 8 pods of the 16 the cores are sized for; 64 aggs x 4 uplinks = 256
  // agg_core links, which 16 cores of 16 ports would carry.
  const std::string s =
      format_summary(build_fabric(cluster(512), network(3, 16, Wiring::kRailOptimized, 1.0, 3.0)));
  EXPECT_NE(s.find("12:4           2:1 as cabled (8 of 12 down ports; 3:1 as split)"), std::string::npos) << s;
  EXPECT_NE(s.find("core tier sized for 16 pods, 8 built: its 256 agg_core links would fit 16 cores"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("each up to 1 group = 8 ToRs"), std::string::npos) << s;
  // With the fabric's switch count at those cores: 64 ToRs + 64 aggs + 16 (since 2026-12-06).
  EXPECT_NE(s.find("16 cores of 16 ports, 144 switches in all"), std::string::npos) << s;
}

// Uplinks faster than the NICs: the ports' ratio and the bandwidth's (3:1 ports, 800 Gbps up
// over 400 Gbps down: 1.5:1); one server has no bisection to give (it read "0 Gbps (0% of full
// bisection ...)" until 2026-12-06, the ratio in ports alone).
TEST(FabricSummary, RatioInBandwidthAndOneServer) {
  NetworkConfig n = network(3, 8, Wiring::kRailOptimized, 3.0);
  n.fabric_bandwidth = gbps(800);
  const std::string s = format_summary(build_fabric(cluster(192, 8, 2), n));
  EXPECT_NE(s.find("3:1 in ports, 1.5:1 in bandwidth (400 Gbps down, 800 Gbps up)"), std::string::npos) << s;
  const std::string one = format_summary(build_fabric(cluster(8, 8, 2), network(3, 8)));
  EXPECT_NE(one.find("bisection bandwidth: none (one server"), std::string::npos) << one;
}

TEST(FabricSummary, NamesCountsAndBisection) {
  NetworkConfig n = network(3, 128);
  n.faults = {{"core:7", 0.0, {}}};
  const std::string s = format_summary(build_fabric(cluster(131072), n));
  EXPECT_NE(s.find("131,072 GPUs in 16,384 servers"), std::string::npos) << s;
  EXPECT_NE(s.find("core            4,096"), std::string::npos) << s;
  EXPECT_NE(s.find("bisection bandwidth: 26.21 Pbps (100% of full bisection"), std::string::npos)
      << s;
  EXPECT_NE(s.find("core:7: bandwidth x0 on 64 link directions"), std::string::npos) << s;
  EXPECT_NE(s.find("tier; as built); with the faults at most"), std::string::npos) << s;
  EXPECT_EQ(s.find("healthy fabric"), std::string::npos) << s;
}

}  // namespace
}  // namespace clustersim::topo
