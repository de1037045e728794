// SPDX-License-Identifier: Apache-2.0
// Collectives as flows: every GPU sends what the algorithm says (bus factor x size over NVLink,
// factor x size / k over each rail), a collective stays O(ranks) flows, and the tree's volumes.
#include "sim/collectives/collective_flows.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>

namespace clustersim::coll {
namespace {

struct Volumes {
  std::map<int32_t, double> intra;  // bytes each GPU sends inside its node
  std::map<int32_t, double> inter;  // bytes each GPU sends to other nodes
};

Volumes volumes(const std::vector<FlowSpec>& flows) {
  Volumes v;
  for (const FlowSpec& f : flows) (f.inter_node ? v.inter : v.intra)[f.src] += f.bytes.as_double();
  return v;
}

std::vector<int32_t> iota(int n, int first = 0, int stride = 1) {
  std::vector<int32_t> out;
  for (int i = 0; i < n; ++i) out.push_back(first + i * stride);
  return out;
}

TEST(CollectiveFlows, RingInsideOneNodeSendsTheBusFactorPerEdge) {
  std::vector<FlowSpec> flows;
  collective_flows(CollectiveOp::kAllReduce, Algorithm::kRing, Bytes{8000}, iota(8), 8, flows);
  ASSERT_EQ(flows.size(), 8u);
  // 2 (n-1)/n x 8000 = 14000 bytes on every ring edge.
  for (const FlowSpec& f : flows) {
    EXPECT_EQ(f.bytes.n, 14000);
    EXPECT_FALSE(f.inter_node);
    EXPECT_EQ(f.dst, (f.src + 1) % 8);
  }
}

TEST(CollectiveFlows, RailAlignedRingAcrossNodes) {
  // 4 nodes x 2 ranks per node (GPUs 0,1 | 8,9 | 16,17 | 24,25), reduce-scatter of 8 MB:
  // factor (n-1)/n = 7/8; NVLink edges carry 7 MB, each rail edge 3.5 MB (k = 2 channels).
  std::vector<int32_t> gpus;
  for (int node = 0; node < 4; ++node) {
    gpus.push_back(node * 8);
    gpus.push_back(node * 8 + 1);
  }
  std::vector<FlowSpec> flows;
  collective_flows(CollectiveOp::kReduceScatter, Algorithm::kRing, Bytes{8'000'000}, gpus, 8, flows);
  EXPECT_EQ(flows.size(), 16u);  // 2n: k intra + k rail flows per node
  const Volumes v = volumes(flows);
  for (const int32_t g : gpus) {
    EXPECT_DOUBLE_EQ(v.intra.at(g), 7'000'000);
    EXPECT_DOUBLE_EQ(v.inter.at(g), 3'500'000);
  }
  for (const FlowSpec& f : flows) {
    if (f.inter_node) {
      EXPECT_EQ(f.src % 8, f.dst % 8) << "rail edges stay on their rail";
    }
  }
}

TEST(CollectiveFlows, OneRankPerNodeIsOneRingOverTheRails) {
  std::vector<FlowSpec> flows;
  collective_flows(CollectiveOp::kAllGather, Algorithm::kRing, Bytes{1'920'000}, iota(192, 3, 8), 8, flows);
  ASSERT_EQ(flows.size(), 192u);
  for (const FlowSpec& f : flows) EXPECT_EQ(f.bytes.n, 1'910'000);  // 191/192 x size
}

TEST(CollectiveFlows, RingMembersPerNodeFollowTheRingsBuilt) {
  // Three per node: three channels, each leaving through its own GPU's NIC.
  EXPECT_EQ(ring_members_per_node(iota(6, 0, 2), 6), 3);
  // 3 + 3 + 2: one ring in rank order, one edge out of each node, whatever the fewest is.
  const std::vector<int32_t> uneven = iota(8, 0, 2);
  EXPECT_EQ(fewest_members_per_node(uneven, 6), 2);
  EXPECT_EQ(ring_members_per_node(uneven, 6), 1);
  std::vector<FlowSpec> flows;
  collective_flows(CollectiveOp::kAllGather, Algorithm::kRing, Bytes{8000}, uneven, 6, flows);
  std::map<int32_t, int> leaving;  // node -> flows out of it
  for (const FlowSpec& f : flows) leaving[f.src / 6] += f.inter_node ? 1 : 0;
  for (const auto& [node, n] : leaving) EXPECT_EQ(n, 1) << "node " << node;
}

TEST(CollectiveFlows, AllToAllAndSendRecv) {
  std::vector<FlowSpec> flows;
  collective_flows(CollectiveOp::kAllToAll, Algorithm::kRing, Bytes{4000}, iota(4, 0, 8), 8, flows);
  EXPECT_EQ(flows.size(), 12u);
  for (const FlowSpec& f : flows) EXPECT_EQ(f.bytes.n, 1000);
  flows.clear();
  collective_flows(CollectiveOp::kSendRecv, Algorithm::kRing, Bytes{5000}, std::vector<int32_t>{2, 10}, 8, flows);
  ASSERT_EQ(flows.size(), 1u);
  EXPECT_EQ(flows[0].bytes.n, 5000);
  EXPECT_TRUE(flows[0].inter_node);
}

// PXN: a send to another node's rail crosses NVLink to the sender node's GPU of the destination's
// local rank, which sends it on its own rail; sends on one rail and inside a node stay. An
// NVLink leg joins the flow inside the node with the same ends.
TEST(CollectiveFlows, PxnKeepsTheBytesBetweenNodesOnTheDestinationsRail) {
  // 2 nodes of 4 GPUs, 4 NICs: GPU 0 sends to GPU 5 (node 1, local 1), GPU 4 (local 0, its own
  // rail) and GPU 1 (inside its node).
  std::vector<FlowSpec> flows = {{0, 5, Bytes{100}, true}, {0, 4, Bytes{200}, true}, {0, 1, Bytes{300}, false}};
  route_through_pxn(flows, 4, 4);
  ASSERT_EQ(flows.size(), 3u);
  // 0 -> 1 over NVLink (the leg, joined later by the direct 300), 1 -> 5 on rail 1, 0 -> 4 as it was.
  EXPECT_EQ(flows[0].src, 0);
  EXPECT_EQ(flows[0].dst, 1);
  EXPECT_EQ(flows[0].bytes.n, 400);
  EXPECT_FALSE(flows[0].inter_node);
  EXPECT_EQ(flows[1].src, 1);
  EXPECT_EQ(flows[1].dst, 5);
  EXPECT_EQ(flows[1].bytes.n, 100);
  EXPECT_TRUE(flows[1].inter_node);
  EXPECT_EQ(flows[2].src, 0);
  EXPECT_EQ(flows[2].dst, 4);
  // The relayed leg keeps its sender's connection (local rank 0: connection 1), the direct send its
  // own (0), so relays of different senders to one GPU hash apart under ECMP as NCCL's do.
  EXPECT_EQ(flows[1].connection, 1u);
  EXPECT_EQ(flows[2].connection, 0u);
  std::vector<FlowSpec> to_five = {{0, 5, Bytes{100}, true}, {2, 5, Bytes{100}, true}, {3, 5, Bytes{100}, true}};
  route_through_pxn(to_five, 4, 4);
  std::vector<uint32_t> relays;
  for (const FlowSpec& f : to_five) {
    if (f.inter_node) relays.push_back(f.connection);
  }
  EXPECT_EQ(relays, (std::vector<uint32_t>{1, 3, 4}));
  // Every byte between nodes leaves from a GPU of the destination's local rank.
  std::vector<FlowSpec> a2a;
  collective_flows(CollectiveOp::kAllToAll, Algorithm::kRing, Bytes{16'000}, iota(16, 0, 16), 8, a2a);
  const double before = std::accumulate(a2a.begin(), a2a.end(), 0.0,
                                        [](double s, const FlowSpec& f) { return s + (f.inter_node ? f.bytes.as_double() : 0); });
  route_through_pxn(a2a, 8, 8);
  double after = 0;
  for (const FlowSpec& f : a2a) {
    if (!f.inter_node) continue;
    EXPECT_EQ(f.src % 8, f.dst % 8) << f.src << " -> " << f.dst;
    after += f.bytes.as_double();
  }
  EXPECT_DOUBLE_EQ(after, before);
  // Two GPUs per NIC (4 NICs for 8 GPUs): GPUs 0 and 1 share rail 0, so 0 -> 9 stays as it is.
  std::vector<FlowSpec> shared = {{0, 9, Bytes{100}, true}, {0, 10, Bytes{100}, true}};
  route_through_pxn(shared, 8, 4);
  ASSERT_EQ(shared.size(), 3u);
  EXPECT_EQ(shared[0].dst, 9);
  EXPECT_EQ(shared[1].dst, 2);  // 0 -> 2 over NVLink, then 2 -> 10 on rail 1
  EXPECT_EQ(shared[2].src, 2);
  // Only through the sender's communicator: GPU 1 is not in {0, 3, 5}, so 0 -> 5 goes as it is;
  // sharing NIC 1 with GPU 2 (4 NICs for 8 GPUs), GPU 3 relays 0 -> 10.
  const auto in_group = [](int32_t, int32_t gpu) { return gpu == 0 || gpu == 3 || gpu == 5 || gpu == 10; };
  std::vector<FlowSpec> group = {{0, 9, Bytes{100}, true}, {0, 10, Bytes{100}, true}};
  route_through_pxn(group, 8, 4, in_group);
  ASSERT_EQ(group.size(), 3u);
  EXPECT_EQ(group[0].dst, 9);  // rail 0 both: as it was
  EXPECT_EQ(group[1].src, 0);
  EXPECT_EQ(group[1].dst, 3);
  EXPECT_EQ(group[2].src, 3);
  EXPECT_EQ(group[2].dst, 10);
  std::vector<FlowSpec> none = {{0, 13, Bytes{100}, true}};  // rail 2 (GPUs 4, 5): 5 is in the group
  route_through_pxn(none, 8, 4, [](int32_t, int32_t gpu) { return gpu == 0 || gpu == 13; });
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].src, 0);
  EXPECT_EQ(none[0].dst, 13);
}

TEST(CollectiveFlows, DoubleBinaryTreeVolumes) {
  // 8 nodes x 1 rank: each tree carries size/2 up and down every edge; per tree 7 edges.
  std::vector<FlowSpec> flows;
  collective_flows(CollectiveOp::kAllReduce, Algorithm::kTree, Bytes{1'000'000}, iota(8, 0, 8), 8, flows);
  EXPECT_EQ(flows.size(), 2u * 2u * 7u);
  const double total = std::accumulate(flows.begin(), flows.end(), 0.0,
                                       [](double a, const FlowSpec& f) { return a + f.bytes.as_double(); });
  EXPECT_DOUBLE_EQ(total, 2 * 2 * 7 * 500'000.0);
  // No GPU sends more than 2 x size / k (interior in one tree, leaf in the other) here.
  for (const auto& [gpu, bytes] : volumes(flows).inter) EXPECT_LE(bytes, 2'000'000.0) << gpu;
}

// The closed form's bandwidth term is the busiest GPU's send volume between nodes in the flows,
// for every node count (until 2026-12-07 it took 2 size / k throughout: twice the flows' volume on
// 2 nodes, 4/3 on 3 and 4).
TEST(CollectiveFlows, TreeClosedFormSendsWhatTheBusiestGpuOfTheFlowsSends) {
  const double size = 1'000'000;
  for (const int k : {1, 4}) {
    for (int nodes = 2; nodes <= 33; ++nodes) {
      std::vector<int32_t> gpus;
      for (int n = 0; n < nodes; ++n) {
        for (int i = 0; i < k; ++i) gpus.push_back(n * 8 + i);
      }
      std::vector<FlowSpec> flows;
      collective_flows(CollectiveOp::kAllReduce, Algorithm::kTree, Bytes{static_cast<int64_t>(size)}, gpus, 8, flows);
      double busiest = 0;
      for (const auto& [gpu, bytes] : volumes(flows).inter) busiest = std::max(busiest, bytes);
      EXPECT_DOUBLE_EQ(tree_send_shares(nodes) * size / (2.0 * k), busiest) << nodes << " nodes, k " << k;
      GroupLinks g;
      g.ranks = nodes * k;
      g.ranks_per_node = k;
      g.intra_busbw = gbytes_per_s(1e6);  // the NIC term decides
      g.nic_per_gpu = gbytes_per_s(1);
      const Time latency = collective_latency(CollectiveOp::kAllReduce, Algorithm::kTree, g);
      EXPECT_NEAR((tree_allreduce_time(Bytes{static_cast<int64_t>(size)}, g) - latency).as_s(), busiest / 1e9, 1e-9)
          << nodes << " nodes, k " << k;
    }
  }
  EXPECT_EQ(tree_send_shares(2), 2);
  EXPECT_EQ(tree_send_shares(4), 3);
  EXPECT_EQ(tree_send_shares(16), 4);
}

TEST(CollectiveFlows, TreeClosedFormUsesLogSteps) {
  GroupLinks g;
  g.ranks = 16;
  g.ranks_per_node = 1;
  g.intra_busbw = gbytes_per_s(200);
  g.nic_per_gpu = gbytes_per_s(25);
  g.intra_alpha = Time::us(8);
  g.inter_alpha = Time::us(20);
  // 8 us + 2 x log2(16) x 20 us + 2 x 100 MB / 25 GB/s = 168 us + 8 ms.
  EXPECT_EQ(tree_allreduce_time(Bytes{100'000'000}, g), Time::us(8168));
  // Its latency grows with log2(nodes), the ring's with nodes.
  EXPECT_LT(collective_latency(CollectiveOp::kAllReduce, Algorithm::kTree, g),
            collective_latency(CollectiveOp::kAllReduce, Algorithm::kRing, g));
}

}  // namespace
}  // namespace clustersim::coll
