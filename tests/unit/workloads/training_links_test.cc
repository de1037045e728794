// SPDX-License-Identifier: Apache-2.0
// The analytical level's link models: what an oversubscribed tier or a slower fabric charges a
// set of flows, from the bytes that leave each block (fabric_slowdown, hand-computed cases).
#include <gtest/gtest.h>

#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/config.h"
#include "topology/clos_shape.h"
#include "workloads/training_costs.h"

namespace clustersim::work {
namespace {

// 768 GPUs, 8 per node, 2-tier Clos of radix 64, ToR 3:1 (48 ports down, 16 up): rail-optimised,
// a ToR group is 48 servers, 384 GPUs.
ScenarioConfig cluster() {
  ScenarioConfig cfg;
  cfg.cluster.gpus = 768;
  cfg.cluster.gpus_per_node = 8;
  cfg.cluster.nics_per_node = 8;
  cfg.cluster.nic_bandwidth = gbps(400);
  cfg.network.tiers = 2;
  cfg.network.switch_radix = 64;
  cfg.network.tor_oversubscription = 3.0;
  return cfg;
}

// An all-to-all of `bytes` per pair among `gpus`, every GPU its own node's.
std::vector<coll::FlowSpec> all_to_all(const std::vector<int32_t>& gpus, Bytes bytes) {
  std::vector<coll::FlowSpec> out;
  for (const int32_t a : gpus) {
    for (const int32_t b : gpus) {
      if (a != b) out.push_back({a, b, bytes, a / 8 != b / 8});
    }
  }
  return out;
}

TEST(FabricSlowdown, OnlyBytesLeavingAToRMeetItsUplinks) {
  const ScenarioConfig cfg = cluster();
  ASSERT_EQ(topo::plan_clos(cfg.cluster, cfg.network, "").gpus_per_group(), 384);
  // The first GPU of each of a group's 48 servers: one rail, one ToR; nothing leaves it, so the
  // NICs run at line rate.
  std::vector<int32_t> rail;
  for (int32_t g = 0; g < 384; g += 8) rail.push_back(g);
  EXPECT_DOUBLE_EQ(fabric_slowdown(cfg, all_to_all(rail, Bytes{1 << 20})), 1.0);
  // All 768 GPUs, b bytes per pair. Each GPU's NIC sends and receives (767 - 7) b (its node's 7
  // go over NVLink). A ToR holds one rail of 48 servers: 48 GPUs, each sending 767 - 47 - 7 = 713
  // b out of it (traffic to other rails of its own group leaves it too), through 16 uplinks:
  // 48 x 713 / (16 x 760) = 2.8145.
  std::vector<int32_t> all;
  for (int32_t g = 0; g < 768; ++g) all.push_back(g);
  const std::vector<coll::FlowSpec> flows = all_to_all(all, Bytes{1 << 20});
  EXPECT_NEAR(fabric_slowdown(cfg, flows), 48.0 * 713 / (16.0 * 760), 1e-9);
  // 1:1 (32 servers per ToR, 32 uplinks): 32 x 729 / (32 x 760) < 1, nothing.
  ScenarioConfig flat = cfg;
  flat.network.tor_oversubscription = 1.0;
  EXPECT_DOUBLE_EQ(fabric_slowdown(flat, flows), 1.0);
  // Fabric links at half the NICs' rate: the 1:1 uplinks carry 32 x 729 / (16 x 760) = 1.92x. Per-flow
  // routing caps each flow that leaves its ToR at one such link, but a GPU's 760 flows take many
  // links: b / (0.5 x 760 b) is far below 1, so the uplinks decide, as when sprayed.
  flat.network.fabric_bandwidth = gbps(200);
  EXPECT_NEAR(fabric_slowdown(flat, flows), 32.0 * 729 / (16.0 * 760), 1e-9);
  flat.network.routing = Routing::kSpray;
  EXPECT_NEAR(fabric_slowdown(flat, flows), 32.0 * 729 / (16.0 * 760), 1e-9);
  // One flow per GPU, from the first 16 servers of each rail's ToR to the next server's next rail:
  // 16 flows leave each ToR through 16 half-rate uplinks (1x), but each flow is one link (2x).
  std::vector<coll::FlowSpec> shift;
  for (int32_t server = 0; server < 16; ++server) {
    for (int32_t r = 0; r < 8; ++r) shift.push_back({server * 8 + r, (server + 1) * 8 + (r + 1) % 8, Bytes{1 << 20}, true});
  }
  flat.network.routing = Routing::kEcmp;
  EXPECT_NEAR(fabric_slowdown(flat, shift), 2.0, 1e-9);
  flat.network.routing = Routing::kSpray;
  EXPECT_NEAR(fabric_slowdown(flat, shift), 1.0, 1e-9);
}

// Rings: a TP group across 8 nodes of one rail under one ToR meets no uplink; leaving the ToR,
// per-flow routing caps its edges at the fabric's link rate, spraying spreads them.
TEST(LinksForRing, EdgesLeavingAToRAreCappedByPerFlowRouting) {
  ScenarioConfig cfg = cluster();
  cfg.network.tor_oversubscription = 1.0;
  cfg.network.fabric_bandwidth = gbps(100);  // a quarter of the NICs' 400
  const TrainingLinks l = training_links(cfg, calib::load_hardware_profile("H100-SXM"));
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 8, 8).oversubscription, 1.0);  // 8 servers of one rail's ToR
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 64, 8).oversubscription, 4.0);  // 64 servers: two groups
  cfg.network.qps_per_connection = 2;
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 64, 8).oversubscription, 2.0);
  cfg.network.routing = Routing::kSpray;
  // Sprayed: 8 rings side by side each leave the group by one edge, over 8 x 32 uplinks at 1/4.
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 64, 8).oversubscription, 1.0);
}

// A ring of 4 members 4 GPUs apart has 2 on each node and runs 2 channels, member c of one node
// to member c of the next, 8 GPUs apart: the same rail, under one rail ToR, at any
// oversubscription (before 2026-11-22 it was taken to hop rails at every edge: +59% against the
// flow level at 3:1). 3 GPUs apart it is split unevenly (0, 3, 6 | 9) and runs member to member,
// hopping rails. Inside one node it never leaves.
TEST(LinksForRing, ChannelsBetweenNodesKeepTheirRail) {
  ScenarioConfig cfg = cluster();
  cfg.network.tor_oversubscription = 3.0;
  const TrainingLinks l = training_links(cfg, calib::load_hardware_profile("H100-SXM"));
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 4, 4).oversubscription, 1.0);
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 3, 4).oversubscription, 3.0);
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 2, 4).oversubscription, 1.0);
  // GPUs 0 and 9: local indices 0 and 1, different rails with a NIC per GPU (3x), one rail when
  // two GPUs share each of 4 NICs (no uplink).
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 9, 2).oversubscription, 3.0);
  ScenarioConfig shared = cfg;
  shared.cluster.nics_per_node = 4;
  const TrainingLinks ls = training_links(shared, calib::load_hardware_profile("H100-SXM"));
  EXPECT_DOUBLE_EQ(links_for_ring(shared, ls, 9, 2).oversubscription, 1.0);
}

// Pipeline pairs of 3 stages of 256 GPUs under ToR groups of 384 (3:1): the first pair (GPUs 0
// and 256) stays under one ToR, but the pairs starting at GPUs 128 to 255 reach the next group.
// Taken as aligned with the first pair only, none left the ToR, and a 3:1 fabric priced the sends
// faster than 1:1 (13.6 s against 14.0 s; the flow level 14.5 s against 13.9 s).
TEST(LinksForRing, PairsStartingAcrossAStageReachPastTheirBlock) {
  const ScenarioConfig cfg = cluster();
  const TrainingLinks l = training_links(cfg, calib::load_hardware_profile("H100-SXM"));
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 256, 2).oversubscription, 1.0);
  EXPECT_GT(links_for_ring(cfg, l, 256, 2, 256).oversubscription, 1.0);
  // Starting anywhere inside a block of 384 and spanning 257, a pair crosses from offset 128 on;
  // with 100 starts (offsets 0..99) none does.
  EXPECT_DOUBLE_EQ(links_for_ring(cfg, l, 256, 2, 100).oversubscription, 1.0);
}

}  // namespace
}  // namespace clustersim::work
