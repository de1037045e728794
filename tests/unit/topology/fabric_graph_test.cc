// SPDX-License-Identifier: Apache-2.0
// Boost.Graph views: max-flow agrees with the structural bisection, connectivity, export sizes.
#include "topology/fabric_graph.h"

#include <gtest/gtest.h>

#include <sstream>

#include "tests/unit/topology/topology_test_configs.h"
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

}  // namespace
}  // namespace clustersim::topo
