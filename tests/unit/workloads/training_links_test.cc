// SPDX-License-Identifier: Apache-2.0
// The analytical level's link models: what an oversubscribed tier or a slower fabric charges a
// set of flows, from the bytes that leave each block (links_for_flows, hand-computed cases).
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

TEST(LinksForFlows, OnlyBytesLeavingABlockMeetItsUplinks) {
  const ScenarioConfig cfg = cluster();
  const TrainingLinks l = training_links(cfg, calib::load_hardware_profile("H100-SXM"));
  const int64_t block = topo::plan_clos(cfg.cluster, cfg.network, "").gpus_per_group();
  ASSERT_GE(block, 16);
  ASSERT_LE(2 * block, cfg.cluster.gpus);
  // The first GPU of every node of the first block: the all-to-all never leaves it, so no
  // uplink is met and the NICs run at line rate.
  std::vector<int32_t> inside;
  for (int32_t g = 0; g < block; g += 8) inside.push_back(g);
  const TrainingLinks in = links_for_flows(cfg, l, all_to_all(inside, Bytes{1 << 20}));
  EXPECT_DOUBLE_EQ(in.nic_per_gpu.bytes_per_s, l.nic_local_per_gpu.bytes_per_s);
  // Every GPU of two blocks in one all-to-all: each sends half its bytes to the other block, and
  // (n - 8) of its n - 1 peers' bytes through its NIC (its own node's go over NVLink); the
  // uplinks are 3x thinner than the block's NICs: slowdown = 3 x (bytes out) / (B x busiest NIC's).
  std::vector<int32_t> both;
  for (int32_t g = 0; g < 2 * block; ++g) both.push_back(g);
  const std::vector<coll::FlowSpec> flows = all_to_all(both, Bytes{1 << 20});
  const double n = static_cast<double>(both.size());
  const double per_gpu = (n - 8) * (1 << 20);          // to the GPUs of other nodes
  const double out_of_block = block * (n / 2) * (1 << 20);  // every GPU to the other block
  const double expect = 3.0 * out_of_block / (static_cast<double>(block) * per_gpu);
  const TrainingLinks span = links_for_flows(cfg, l, flows);
  EXPECT_NEAR(span.oversubscription, expect, 1e-9);
  EXPECT_NEAR(span.nic_per_gpu.bytes_per_s, l.nic_local_per_gpu.bytes_per_s / expect, 1e-6);
  // A 1:1 tier with the fabric's links at the NICs' rate costs nothing.
  ScenarioConfig flat = cfg;
  flat.network.tor_oversubscription = 1.0;
  EXPECT_DOUBLE_EQ(links_for_flows(flat, training_links(flat, calib::load_hardware_profile("H100-SXM")), flows).oversubscription, 1.0);
}

}  // namespace
}  // namespace clustersim::work
