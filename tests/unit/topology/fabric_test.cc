// SPDX-License-Identifier: Apache-2.0
// Fabric wiring (rails, ToR-per-server), ids and names, link ends, faults, and a 131k-GPU build.
#include "topology/fabric.h"

#include <gtest/gtest.h>

#include <set>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "tests/unit/topology/topology_test_configs.h"

namespace clustersim::topo {
namespace {

using testing::cluster;
using testing::network;

// 3 tiers, k = 8, 4 GPUs and 4 NICs per server, 128 GPUs: 32 servers, 8 groups of 4 servers on
// 4 rail ToRs, 1 group per pod, 8 pods (see clos_shape_test.cc).
Fabric small_rail_fabric(std::vector<FabricFault> faults = {}) {
  NetworkConfig n = network(3, 8);
  n.faults = std::move(faults);
  return build_fabric(cluster(128, 4, 4), n);
}

std::vector<InputError> build_errors(const ClusterConfig& c, const NetworkConfig& n) {
  try {
    build_fabric(c, n, "s.yaml");
  } catch (const BadInput& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected BadInput";
  return {};
}

TEST(Fabric, CountsPerTier) {
  const Fabric f = small_rail_fabric();
  // Cables: one NVLink per GPU, one host link per NIC, 32 ToRs x 4 up, 32 aggs x 4 up.
  EXPECT_EQ(f.cable_count(LinkTier::kNvlink), 128);
  EXPECT_EQ(f.cable_count(LinkTier::kHost), 128);
  EXPECT_EQ(f.cable_count(LinkTier::kTorAgg), 128);
  EXPECT_EQ(f.cable_count(LinkTier::kAggCore), 128);
  EXPECT_EQ(f.link_count(), 2 * 512);
  // Nodes: 128 GPUs + 32 NVSwitches + 128 NICs + 32 ToRs + 32 aggs + 16 cores.
  EXPECT_EQ(f.node_count(), 128 + 32 + 128 + 32 + 32 + 16);
  EXPECT_EQ(f.node_count(NodeKind::kCore), 16);
}

TEST(Fabric, RailWiringPutsNicIOnRailToRI) {
  const Fabric f = small_rail_fabric();
  // Server 5 = group 1, slot 1: its NIC i sits on ToR 1 * 4 + i, down port 1.
  for (int i = 0; i < 4; ++i) {
    const NicId nic = 5 * 4 + i;
    EXPECT_EQ(f.tor_of_nic(nic), 4 + i);
    EXPECT_EQ(f.tor_port_of_nic(nic), 1);
    EXPECT_EQ(f.link_ends(f.host_link(nic, Direction::kUp)).to, f.node(NodeKind::kTor, 4 + i));
  }
  // Every ToR serves one rail only, and d_t = 4 distinct servers.
  for (int tor = 0; tor < 32; ++tor) {
    std::set<int> rails;
    std::set<int> servers;
    for (LinkId l : f.links_of(f.node(NodeKind::kTor, tor))) {
      if (f.link_tier(l) != LinkTier::kHost || Fabric::link_direction(l) != Direction::kUp)
        continue;
      const NicId nic = f.node_index(f.link_ends(l).from);
      rails.insert(nic % 4);
      servers.insert(f.server_of_nic(nic));
    }
    EXPECT_EQ(rails.size(), 1u) << "tor " << tor;
    EXPECT_EQ(servers.size(), 4u) << "tor " << tor;
  }
}

TEST(Fabric, GpuUsesNicByLocalIndex) {
  // 8 GPUs, 4 NICs: GPU l uses NIC l * 4 / 8 = l / 2.
  const Fabric f = build_fabric(cluster(64, 8, 4), network(2, 16));
  EXPECT_EQ(f.nic_of_gpu(0), 0);
  EXPECT_EQ(f.nic_of_gpu(3), 1);
  EXPECT_EQ(f.nic_of_gpu(8 + 7), 4 + 3);
}

TEST(Fabric, TorPerServerPutsAllNicsOfAServerOnOneTor) {
  // k = 16, 4 NICs: 2 servers per ToR, ports 0-3 for the first, 4-7 for the second.
  const Fabric f = build_fabric(cluster(64, 8, 4), network(2, 16, Wiring::kTorPerServer));
  for (int server = 0; server < 8; ++server) {
    for (int i = 0; i < 4; ++i) {
      const NicId nic = server * 4 + i;
      EXPECT_EQ(f.tor_of_nic(nic), server / 2);
      EXPECT_EQ(f.tor_port_of_nic(nic), (server % 2) * 4 + i);
    }
  }
}

TEST(Fabric, LinkEndsAreConsistent) {
  const Fabric f = small_rail_fabric();
  std::set<std::string> names;
  for (LinkId l = 0; l < f.link_count(); ++l) {
    const LinkEnds e = f.link_ends(l);
    const LinkEnds r = f.link_ends(Fabric::reverse(l));
    EXPECT_EQ(e.from, r.to);
    EXPECT_EQ(e.to, r.from);
    // Up links climb exactly one level (GPU/NIC/ToR/agg -> NVSwitch/ToR/agg/core).
    const LinkEnds up = Fabric::link_direction(l) == Direction::kUp ? e : r;
    const NodeKind lower = f.node_kind(up.from);
    const NodeKind upper = f.node_kind(up.to);
    switch (f.link_tier(l)) {
      case LinkTier::kNvlink:
        EXPECT_TRUE(lower == NodeKind::kGpu && upper == NodeKind::kNvSwitch);
        break;
      case LinkTier::kHost: EXPECT_TRUE(lower == NodeKind::kNic && upper == NodeKind::kTor); break;
      case LinkTier::kTorAgg:
        EXPECT_TRUE(lower == NodeKind::kTor && upper == NodeKind::kAgg);
        break;
      case LinkTier::kAggCore:
        EXPECT_TRUE(lower == NodeKind::kAgg && upper == NodeKind::kCore);
        break;
    }
    names.insert(f.link_name(l));
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(f.link_count()));  // names are unique
}

TEST(Fabric, ToRsOfAPodMeshWithItsAggs) {
  const Fabric f = small_rail_fabric();
  // ToR 6 is in pod 1 (4 ToRs per pod); its 4 uplinks reach aggs 1.0 .. 1.3.
  for (int j = 0; j < 4; ++j) {
    const LinkEnds e = f.link_ends(f.tor_agg_link(6, j, Direction::kUp));
    EXPECT_EQ(f.node_name(e.to), "agg:1." + std::to_string(j));
  }
  // Core m of plane j links to agg j of every pod: core 6 = plane 1, m = 2.
  const auto core_links = f.links_of(f.node(NodeKind::kCore, 6));
  EXPECT_EQ(core_links.size(), 2u * 8);  // 8 pods, both directions
  for (LinkId l : core_links) {
    const NodeId agg =
        Fabric::link_direction(l) == Direction::kUp ? f.link_ends(l).from : f.link_ends(l).to;
    EXPECT_EQ(f.node_index(agg) % 4, 1);
  }
}

TEST(Fabric, NamesAndLatencies) {
  const Fabric f = small_rail_fabric();
  EXPECT_EQ(f.link_name(f.host_link(97, Direction::kUp)), "host:97/up");
  EXPECT_EQ(f.cable_name(f.tor_agg_link(11, 1, Direction::kDown)), "tor_agg:45");  // 11 * 4 + 1
  EXPECT_EQ(f.node_name(f.node(NodeKind::kAgg, 9)), "agg:2.1");
  EXPECT_EQ(f.latency(f.host_link(0, Direction::kUp)), Time::us(1));
  EXPECT_EQ(f.latency(f.nvlink(0, Direction::kUp)), Time::us(1));  // half of the 2 us default
  EXPECT_EQ(f.capacity(f.host_link(0, Direction::kUp)), gbps(400));
}

TEST(FabricFaults, DegradedAndFailedLinks) {
  const Fabric f = small_rail_fabric({{"tor_agg:45", 0.5, Time::us(3)}, {"host:7/up", 0.0, {}}});
  const LinkId up = f.tor_agg_link(11, 1, Direction::kUp);
  EXPECT_EQ(f.capacity(up), gbps(200));
  EXPECT_EQ(f.capacity(Fabric::reverse(up)), gbps(200));
  EXPECT_EQ(f.latency(up), Time::us(4));
  EXPECT_TRUE(f.is_failed(f.host_link(7, Direction::kUp)));
  EXPECT_FALSE(f.is_failed(f.host_link(7, Direction::kDown)));
  EXPECT_EQ(f.failed_directions(), 1);
  EXPECT_EQ(f.faults().size(), 2u);
}

TEST(FabricFaults, OneElementSpeltTwoWaysIsRefused) {
  // host:7 and host:007 are the same two link directions: their factors would multiply unseen.
  NetworkConfig n = network(3, 8);
  n.faults = {{"host:7", 0.5, {}}, {"host:007", 0.1, {}}};
  const std::vector<InputError> errors = build_errors(cluster(128, 4, 4), n);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "network.faults[1].element");
  EXPECT_NE(errors[0].message.find("names the same link directions as 'host:7'"), std::string::npos) << errors[0].message;
  // A link and the host it belongs to are different elements (the host's other direction differs).
  const Fabric f = small_rail_fabric({{"host:7", 0.5, {}}, {"host:7/up", 0.5, {}}});
  EXPECT_EQ(f.capacity(f.host_link(7, Direction::kUp)), gbps(100));
}

// An element the fabric lacks: the message names the fault's line in the file (none until
// 2026-12-06) and counts one pod as one ("1 pods").
TEST(FabricFaults, AnUnknownElementNamesItsLineAndTheFabricsCounts) {
  NetworkConfig n = network(3, 8);
  FabricFault f;
  f.element = "agg:9.0";
  f.line = 12;
  n.faults = {f};
  const std::vector<InputError> errors = build_errors(cluster(16, 4, 4), n);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 12);
  EXPECT_EQ(errors[0].key_path, "network.faults[0].element");
  EXPECT_NE(errors[0].message.find("no fabric element 'agg:9.0'"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("this fabric has 4 ToRs, 1 pod of"), std::string::npos) << errors[0].message;
}

// In 2 tiers the help names leaves and spines (agg:0.J) and no core tier (QA 2026-12-07: it
// offered core:N and agg_core:N, which a leaf/spine fabric lacks, and never the spines' spelling).
TEST(FabricFaults, AnUnknownElementOfALeafSpineFabricNamesItsSpines) {
  NetworkConfig n = network(2, 8);
  n.faults = {{"spine:0", 0.0, {}}};
  const std::vector<InputError> errors = build_errors(cluster(16, 4, 4), n);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("agg:0.J (spines)"), std::string::npos) << errors[0].message;
  EXPECT_NE(errors[0].message.find("this 2-tier fabric has 4 leaves and 4 spines"), std::string::npos)
      << errors[0].message;
  EXPECT_EQ(errors[0].message.find("core"), std::string::npos) << errors[0].message;
}

TEST(FabricFaults, FailedSwitchTakesDownAllItsLinks) {
  const Fabric f = small_rail_fabric({{"agg:2.1", 0.0, {}}});
  const auto links = f.links_of(f.node(NodeKind::kAgg, 9));
  EXPECT_EQ(links.size(), 2u * (4 + 4));  // 4 ToRs below, 4 cores above
  for (LinkId l : links) EXPECT_TRUE(f.is_failed(l));
  EXPECT_EQ(f.failed_directions(), 16);
}

TEST(FabricFaults, SwitchDelayOnEnteringLinksOnly) {
  const Fabric f = small_rail_fabric({{"core:6", 1.0, Time::us(5)}});
  for (LinkId l : f.links_of(f.node(NodeKind::kCore, 6))) {
    const bool enters = Fabric::link_direction(l) == Direction::kUp;
    EXPECT_EQ(f.latency(l), enters ? Time::us(6) : Time::us(1));
  }
}

TEST(FabricFaults, BadFaultsNameTheirKeys) {
  NetworkConfig n = network(3, 8);
  n.faults = {{"tor:99", 0.0, {}}, {"host:3", 1.5, {}}, {"spine:1", 0.0, {}}};
  const auto errors = build_errors(cluster(128, 4, 4), n);
  ASSERT_EQ(errors.size(), 1u);  // range errors first; elements are checked once values are sane
  EXPECT_EQ(errors[0].key_path, "network.faults[1].bandwidth_factor");

  n.faults = {{"tor:99", 0.0, {}}, {"host:3/sideways", 0.0, {}}, {"agg:1.0", 0.0, {}}};
  const auto element_errors = build_errors(cluster(128, 4, 4), n);
  ASSERT_EQ(element_errors.size(), 2u);
  EXPECT_EQ(element_errors[0].key_path, "network.faults[0].element");
  EXPECT_NE(element_errors[0].message.find("32 ToRs"), std::string::npos);
  EXPECT_EQ(element_errors[1].key_path, "network.faults[1].element");
}

TEST(FabricErrors, ScenarioOverloadNamesTheFile) {
  ScenarioConfig scenario;
  scenario.file = "big.yaml";
  scenario.cluster = cluster(4096);
  scenario.network = network(3, 16);
  try {
    build_fabric(scenario);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors().at(0).file, "big.yaml");
  }
}

// A shape error from a loaded scenario carries the key's line, as the reader's errors do (before
// 2026-12-05 "b.yaml: network.switch_radix" without one).
TEST(FabricErrors, ScenarioShapeErrorsNameTheLine) {
  const ScenarioConfig cfg = scenario_from_tree(
      parse_yaml_text("cluster: {gpu: H100-SXM, gpus: 64, gpus_per_node: 8, nics_per_node: 8}\n"
                      "network:\n  switch_radix: 4\n"
                      "traffic: {pattern: shift, bytes_per_pair: 1MiB, shift: 8}\n",
                      "b.yaml"),
      "b.yaml");
  try {
    build_fabric(cfg);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors().at(0).key_path, "network.switch_radix");
    EXPECT_EQ(e.errors().at(0).line, 3);
  }
}

TEST(FabricErrors, ShapeAndSpeedProblemsTogether) {
  ClusterConfig c = cluster(4096);
  c.nic_bandwidth = Bandwidth{0};
  NetworkConfig n = network(3, 16);
  n.qps_per_connection = 0;
  const auto errors = build_errors(c, n);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0].key_path, "network.switch_radix");
  EXPECT_EQ(errors[1].key_path, "cluster.nic_bandwidth");
  EXPECT_EQ(errors[2].key_path, "network.qps_per_connection");
}

// Serving pools of different GPU types on one fabric: each GPU's NVLink at its own speed, faults
// keeping their factor, the stats counting a slower GPU as built, not degraded.
TEST(Fabric, PerGpuNvlinkKeepsFaults) {
  const Fabric healthy = small_rail_fabric();
  Fabric f = small_rail_fabric({{"nvlink:1/up", 0.5, {}}, {"nvlink:2", 0.0, {}}});
  EXPECT_EQ(f.nvlink_bandwidth(0), gbytes_per_s(450));  // build_fabric's default
  for (GpuId g : {0, 1, 2}) f.set_nvlink_bandwidth(g, gbytes_per_s(200));
  EXPECT_EQ(f.capacity(f.nvlink(0, Direction::kUp)), gbytes_per_s(200));
  EXPECT_EQ(f.capacity(f.nvlink(0, Direction::kDown)), gbytes_per_s(200));
  EXPECT_DOUBLE_EQ(f.capacity(f.nvlink(1, Direction::kUp)).bytes_per_s, 100e9);  // x0.5 kept
  EXPECT_EQ(f.capacity(f.nvlink(1, Direction::kDown)), gbytes_per_s(200));
  EXPECT_TRUE(f.is_failed(f.nvlink(2, Direction::kUp)));  // failed stays failed
  EXPECT_EQ(f.failed_directions(), 2);
  EXPECT_EQ(f.built_capacity(f.nvlink(1, Direction::kUp)), gbytes_per_s(200));
  EXPECT_EQ(f.capacity(f.nvlink(3, Direction::kUp)), healthy.capacity(healthy.nvlink(3, Direction::kUp)));
  EXPECT_EQ(f.tier_spec(LinkTier::kNvlink).bandwidth, gbytes_per_s(450));
  f.set_nvlink_bandwidth(1, gbytes_per_s(300));
  EXPECT_DOUBLE_EQ(f.capacity(f.nvlink(1, Direction::kUp)).bytes_per_s, 150e9);
}

TEST(Fabric, Builds131kGpus) {
  // k = 128, 1:1, 8 rails: groups of 64 servers, 8 groups per pod; 16,384 servers -> 256 groups
  // -> 32 pods; 2,048 ToRs, 32 x 64 = 2,048 aggs, 64 x 64 = 4,096 cores.
  const Fabric f = build_fabric(cluster(131072), network(3, 128));
  EXPECT_EQ(f.shape().pods, 32);
  EXPECT_EQ(f.shape().tors, 2048);
  EXPECT_EQ(f.shape().aggs, 2048);
  EXPECT_EQ(f.shape().cores, 4096);
  EXPECT_EQ(f.cable_count(LinkTier::kTorAgg), 2048 * 64);
  EXPECT_EQ(f.cable_count(LinkTier::kAggCore), 2048 * 64);
  EXPECT_EQ(f.link_count(), 2 * 4 * 131072);
}

}  // namespace
}  // namespace clustersim::topo
