// SPDX-License-Identifier: Apache-2.0
// Boost.Graph views: max-flow agrees with the structural bisection, connectivity, export sizes.
#include "topology/fabric_graph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "sim/core/error.h"
#include "tests/unit/topology/topology_test_configs.h"
#include "topology/internal/text.h"
#include "topology/fabric_stats.h"

namespace clustersim::topo {
namespace {

using testing::cluster;
using testing::network;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FabricGraph, MaxFlowBetweenHalvesMatchesBisection) {
  const std::vector<Fabric> fabrics = {
      build_fabric(cluster(128, 4, 4), network(3, 8)),
      build_fabric(cluster(192, 2, 2), network(3, 8, Wiring::kRailOptimized, 3.0)),
      build_fabric(cluster(192, 2, 2), network(3, 8, Wiring::kRailOptimized, 1.0, 3.0)),
      build_fabric(cluster(32, 4, 4), network(2, 8)),
      build_fabric(cluster(48, 2, 2), network(2, 8, Wiring::kRailOptimized, 3.0)),
      build_fabric(cluster(1024, 4, 4), network(3, 16, Wiring::kTorPerServer)),
  };
  for (const Fabric& f : fabrics) {
    SCOPED_TRACE(format_summary(f));
    EXPECT_NEAR(halves_max_flow(f).as_gbps(), fabric_stats(f).bisection.as_gbps(), 1e-6);
  }
}

// Odd numbers of pods and groups, and partly filled last groups and pods: a half must split a pod
// or a group, so the cut takes lower tiers' links too (before 2026-12-05 the summary took half of
// one tier's uplinks: 3 full pods of radix 16 at 3:1 came out 19.2 Tbps against 32).
TEST(FabricGraph, MaxFlowMatchesBisectionWhateverTheFilling) {
  int checked = 0;
  int above_tier_formula = 0;
  for (const int tiers : {2, 3}) {
    for (const Wiring wiring : {Wiring::kRailOptimized, Wiring::kTorPerServer}) {
      for (const double tor : {1.0, 3.0}) {
        for (const double agg : {1.0, 3.0}) {
          for (const int gpus : {36, 38, 72, 104, 200, 578}) {  // 19 and 289 servers: a middle one
            if (tiers == 2 && agg != 1.0) continue;
            NetworkConfig n = network(tiers, 16, wiring, tor, agg);
            const ClusterConfig c = cluster(gpus, 2, 2);
            std::optional<Fabric> f;
            try {
              f.emplace(build_fabric(c, n));
            } catch (const BadInput&) {
              continue;  // more GPUs than this radix and these ratios hold
            }
            SCOPED_TRACE(format_summary(*f));
            const FabricStats st = fabric_stats(*f);
            EXPECT_NEAR(halves_max_flow(*f).as_gbps(), st.bisection.as_gbps(), 1e-6);
            double by_tier = 0;
            for (const double b : st.bisection_by_tier) by_tier += b;
            EXPECT_NEAR(by_tier, st.bisection.bytes_per_s, 1e-6 * st.bisection.bytes_per_s);
            const ClosShape& s = f->shape();
            double formula = s.nics * 400e9 / 8 / 2;
            if (s.groups >= 2) formula = std::min(formula, s.tors * s.tor_up * 400e9 / 8 / 2);
            if (s.tiers == 3 && s.pods >= 2) formula = std::min(formula, s.aggs * s.agg_up * 400e9 / 8 / 2);
            above_tier_formula += st.bisection.bytes_per_s > formula * (1 + 1e-9) ? 1 : 0;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GE(checked, 40);
  EXPECT_GE(above_tier_formula, 5);  // the shapes where the old formula fell short are in the sample
}

TEST(FabricStats, OddPodsSplitAPod) {
  // 576 GPUs, 4 rails, radix 16, agg 3:1: 3 pods of 3 groups of 8 servers. The first half is pod
  // 0 and a group and a half of pod 1: pod 0's core uplinks (8 aggs x 4 x 400 Gbps = 12.8 Tbps)
  // and the host links of pod 1's first 12 servers (48 NICs, 19.2 Tbps; as narrow: the first
  // group's ToR uplinks, 12.8, and the next 4 servers' host links, 6.4, where ties take the host).
  const Fabric f = build_fabric(cluster(576, 8, 4), network(3, 16, Wiring::kRailOptimized, 1.0, 3.0));
  const FabricStats st = fabric_stats(f);
  EXPECT_NEAR(st.bisection.as_gbps(), 32000, 1e-6);
  EXPECT_NEAR(st.bisection_by_tier[static_cast<int>(LinkTier::kAggCore)] * 8 / 1e9, 12800, 1e-6);
  EXPECT_NEAR(st.bisection_by_tier[static_cast<int>(LinkTier::kHost)] * 8 / 1e9, 19200, 1e-6);
  EXPECT_EQ(st.bisection_tier, LinkTier::kHost);
  EXPECT_NE(format_summary(f).find("across tiers: host 19.2 Tbps, agg_core 12.8 Tbps"), std::string::npos)
      << format_summary(f);
}

TEST(FabricGraph, FaultedBisectionBoundsTheMaxFlow) {
  // Symmetric faults (whole cables and switches): the merged tree's cut is an upper bound.
  for (const char* element : {"agg:0.0", "tor:1", "host:5", "core:3", "agg_core:2"}) {
    NetworkConfig n = network(3, 8, Wiring::kRailOptimized, 1.0, 3.0);
    n.faults = {{element, 0.0, {}}, {"tor_agg:7", 0.5, {}}};
    const Fabric f = build_fabric(cluster(192, 2, 2), n);
    SCOPED_TRACE(element);
    const FabricStats st = fabric_stats(f);
    EXPECT_LE(halves_max_flow(f).as_gbps(), st.bisection_with_faults.as_gbps() + 1e-6);
    EXPECT_LE(st.bisection_with_faults.bytes_per_s, st.bisection.bytes_per_s);
  }
}

// Faults on one direction of different cables: each direction loses one cable, and the bound is
// taken per direction. Before 2026-12-05 each cable counted at its slower direction, so both were
// subtracted and the "at most" figure fell below the max flow (5.6 Tbps against 6.0 each way).
TEST(FabricGraph, OneDirectionFaultsBoundEachDirectionsMaxFlow) {
  // 128 GPUs, 8 per server, 2 NICs each: 32 NICs at 400 Gbps, bisection 16 x 400 = 6.4 Tbps.
  NetworkConfig n = network(3, 8);
  n.faults = {{"agg_core:0/up", 0.0, {}}, {"agg_core:1/down", 0.0, {}}};
  const Fabric f = build_fabric(cluster(128, 8, 2), n);
  const FabricStats st = fabric_stats(f);
  const double forward = halves_max_flow(f, HalfToHalf::kFirstToLast).as_gbps();
  const double backward = halves_max_flow(f, HalfToHalf::kLastToFirst).as_gbps();
  EXPECT_NEAR(forward, 6000, 1e-6);
  EXPECT_NEAR(backward, 6000, 1e-6);
  EXPECT_NEAR(st.bisection_forward_with_faults.as_gbps(), 6000, 1e-6);
  EXPECT_NEAR(st.bisection_backward_with_faults.as_gbps(), 6000, 1e-6);
  EXPECT_NEAR(st.bisection_with_faults.as_gbps(), 6000, 1e-6);
  EXPECT_NE(format_summary(f).find("with the faults at most 6 Tbps (93.8% of as built) each direction"), std::string::npos)
      << format_summary(f);
  // Faults on one direction of single cables, anywhere: each direction's figure bounds its flow.
  int checked = 0;
  for (const char* a : {"host:0/up", "tor_agg:3/down", "agg_core:5/up", "host:20/down"}) {
    for (const char* b : {"agg_core:9/down", "tor_agg:30/up", "host:31/up", "agg_core:0/up"}) {
      NetworkConfig m = network(3, 8);
      m.faults = {{a, 0.0, {}}, {b, 0.25, {}}};
      const Fabric g = build_fabric(cluster(128, 8, 2), m);
      const FabricStats gs = fabric_stats(g);
      SCOPED_TRACE(std::string(a) + " " + b);
      EXPECT_LE(halves_max_flow(g, HalfToHalf::kFirstToLast).as_gbps(), gs.bisection_forward_with_faults.as_gbps() + 1e-6);
      EXPECT_LE(halves_max_flow(g, HalfToHalf::kLastToFirst).as_gbps(), gs.bisection_backward_with_faults.as_gbps() + 1e-6);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 16);
}

TEST(FabricGraph, MaxFlowSeesFaults) {
  // Failing the 4 aggs of pod 0 leaves its 16 NICs (servers 0-3) inside the pod: 48 of the first
  // half's 64 NICs can still cross.
  NetworkConfig n = network(3, 8);
  n.faults = {
      {"agg:0.0", 0.0, {}}, {"agg:0.1", 0.0, {}}, {"agg:0.2", 0.0, {}}, {"agg:0.3", 0.0, {}}};
  const Fabric f = build_fabric(cluster(128, 4, 4), n);
  EXPECT_NEAR(halves_max_flow(f).as_gbps(), 48 * 400.0, 1e-6);
}

TEST(FabricGraph, Connectivity) {
  const Fabric healthy = build_fabric(cluster(128, 4, 4), network(3, 8));
  EXPECT_EQ(check_connectivity(healthy).components, 1);
  EXPECT_EQ(check_connectivity(healthy).isolated_nics, 0);
  NetworkConfig n = network(3, 8);
  n.faults = {{"tor:0", 0.0, {}}};
  const Connectivity c = check_connectivity(build_fabric(cluster(128, 4, 4), n));
  EXPECT_EQ(c.isolated_nics, 4);       // d_t = 4 NICs on ToR 0
  EXPECT_EQ(c.components, 1 + 1 + 4);  // the rest, ToR 0 alone, its 4 NICs alone
}

TEST(FabricGraph, ExportsHaveEveryNodeAndCable) {
  const Fabric f = build_fabric(cluster(128, 4, 4), network(3, 8));
  const int cables = f.link_count() / 2;
  std::ostringstream dot;
  write_dot(f, dot);
  EXPECT_EQ(count(dot.str(), "--"), cables);
  EXPECT_NE(dot.str().find("label=\"agg:2.1\""), std::string::npos);
  EXPECT_NE(dot.str().find("name=\"tor_agg:45\""), std::string::npos);
  std::ostringstream graphml;
  write_graphml(f, graphml);
  EXPECT_EQ(count(graphml.str(), "<edge "), cables);
  EXPECT_EQ(count(graphml.str(), "<node "), f.node_count());
  std::ostringstream csv;
  write_link_list(f, csv);
  EXPECT_EQ(count(csv.str(), "\n"), f.link_count() + 1);
  EXPECT_NE(csv.str().find("host:97/up,host,nic:97,tor:"), std::string::npos);
}

// The line of `text` that holds `what`.
std::string line_with(const std::string& text, const std::string& what) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return "";
  const size_t begin = text.rfind('\n', at) + 1;  // npos + 1 = 0 on the first line
  return text.substr(begin, text.find('\n', at) - begin);
}

// A link degraded to 1e-6 (the smallest factor a scenario takes) is not failed: its capacity
// reads 0.0004 Gbps, not 0 (before 2026-12-05 three decimals printed it as 0).
TEST(FabricGraph, SmallCapacitiesNeverReadAsZero) {
  NetworkConfig n = network(3, 8);
  n.faults = {{"host:5/up", 1e-6, {}}, {"host:6", 0.0004, {}}, {"host:7", 0.0, {}}};
  const Fabric f = build_fabric(cluster(128, 4, 4), n);
  std::ostringstream csv, dot;
  write_link_list(f, csv);
  write_dot(f, dot);
  EXPECT_NE(csv.str().find("host:5/up,host,nic:5,tor:1,0.0004,"), std::string::npos) << line_with(csv.str(), "host:5/up");
  EXPECT_NE(csv.str().find("host:6/down,host,tor:2,nic:6,0.16,"), std::string::npos) << line_with(csv.str(), "host:6/down");
  EXPECT_NE(csv.str().find("host:7/up,host,nic:7,tor:3,0,"), std::string::npos) << line_with(csv.str(), "host:7/up");
  EXPECT_NE(line_with(dot.str(), "name=\"host:5\"").find("up_gbps=0.0004,down_gbps=400,"), std::string::npos)
      << line_with(dot.str(), "name=\"host:5\"");
  // No exponent, which Graphviz cannot parse unquoted (50 Gbps x 1e-6 read "5e-05" until 2026-12-06).
  EXPECT_EQ(internal::nonzero_decimal(5e-5), "0.00005");
  EXPECT_EQ(internal::nonzero_decimal(4.56e-7), "0.000000456");
  const std::string summary = format_summary(f);
  EXPECT_NE(summary.find("host:5/up: bandwidth x0.000001 on 1 link direction"), std::string::npos) << summary;
  EXPECT_NE(summary.find("host:6: bandwidth x0.0004 on 2 link directions"), std::string::npos) << summary;
  EXPECT_NE(summary.find("host:7: bandwidth x0 on 2 link directions"), std::string::npos) << summary;
}

// Both directions' latency are exported: a fault's extra latency on the down direction showed
// nowhere before 2026-12-05 (latency_us is the up direction's; kept for existing readers).
TEST(FabricGraph, ExportsEachDirectionsLatency) {
  NetworkConfig n = network(3, 8);
  n.faults = {{"host:5/down", 1.0, Time::us(3)}};
  const Fabric f = build_fabric(cluster(128, 4, 4), n);
  const std::string up = internal::short_decimal(f.latency(f.host_link(5, Direction::kUp)).as_us(), 6);
  const std::string down = internal::short_decimal(f.latency(f.host_link(5, Direction::kDown)).as_us(), 6);
  ASSERT_NE(up, down);
  std::ostringstream dot, graphml;
  write_dot(f, dot);
  write_graphml(f, graphml);
  const std::string edge = line_with(dot.str(), "name=\"host:5\"");
  EXPECT_NE(edge.find("latency_us=" + up + ",up_latency_us=" + up + ",down_latency_us=" + down + "]"), std::string::npos)
      << edge;
  for (const char* key : {"\"latency_us\"", "\"up_latency_us\"", "\"down_latency_us\""}) {
    EXPECT_NE(graphml.str().find(std::string("attr.name=") + key), std::string::npos) << key;
  }
  // GraphML writes doubles at full precision: the down direction's value is there.
  std::ostringstream want;
  want.precision(17);
  want << f.latency(f.host_link(5, Direction::kDown)).as_us();
  EXPECT_NE(graphml.str().find(">" + want.str() + "<"), std::string::npos) << want.str();
}

}  // namespace
}  // namespace clustersim::topo
