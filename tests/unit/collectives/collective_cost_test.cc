// SPDX-License-Identifier: Apache-2.0
// NCCL-style alpha-beta collective costs (sim/collectives/collective_cost.h), by hand.
#include "sim/collectives/collective_cost.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/unit/core/unit_printers.h"

namespace clustersim::coll {
namespace {

// One 8-GPU node: 100 GB/s NVLink bus bandwidth, 10 us per collective.
GroupLinks one_node(int ranks = 8) {
  GroupLinks g;
  g.ranks = ranks;
  g.ranks_per_node = ranks;
  g.intra_busbw = gbytes_per_s(100);
  g.nic_per_gpu = gbytes_per_s(25);
  g.intra_alpha = Time::us(10);
  g.inter_alpha = Time::us(5);
  return g;
}

// `nodes` nodes of `per_node` ranks; NICs give 25 GB/s per GPU, 5 us per ring step.
GroupLinks across(int nodes, int per_node) {
  GroupLinks g = one_node();
  g.ranks = nodes * per_node;
  g.ranks_per_node = per_node;
  return g;
}

TEST(CollectiveTime, RingAllReduceInsideANode) {
  // 8 ranks, 1 GB: 2 (n-1)/n x S / busbw = 2 x 7/8 x 1e9 B / 100e9 B/s = 17.5 ms, plus 10 us.
  EXPECT_EQ(collective_time(CollectiveOp::kAllReduce, Bytes{1'000'000'000}, one_node()),
            Time::ms(17.5) + Time::us(10));
  EXPECT_EQ(collective_bandwidth_bound(CollectiveOp::kAllReduce, Bytes{1'000'000'000}, one_node()), Time::ms(17.5));
}

TEST(CollectiveTime, RingAllReduceAcrossNodes) {
  // 2 nodes x 8 ranks: busbw = min(intra 100, 8 rails x 25 = 200) = 100 GB/s.
  // 2 x 15/16 x 1e9 / 100e9 = 18.75 ms; latency (NCCL's tuning model): the 2 (2 - 1) = 2 steps
  // between nodes x 5 us, and the 28 inside nodes, 2 x the 14 of a one-node all-reduce, as 2 x
  // its 10 us alpha: 30 us (before 2026-12-05 all 30 steps at 5 us, 150 us).
  EXPECT_EQ(collective_time(CollectiveOp::kAllReduce, Bytes{1'000'000'000}, across(2, 8)),
            Time::ms(18.75) + Time::us(30));
  // One rank per node: every step is between nodes, 2 (16 - 1) x 5 us.
  EXPECT_EQ(ring_latency(CollectiveOp::kAllReduce, across(16, 1)), Time::us(150));
  // 128 nodes x 8: 254 network steps, not 2,046, and 128 nodes' NVLink steps.
  EXPECT_EQ(ring_latency(CollectiveOp::kAllReduce, across(128, 8)), 254 * Time::us(5) + 128 * Time::us(10));
  EXPECT_EQ(ring_latency(CollectiveOp::kAllGather, across(128, 8)), 127 * Time::us(5) + 128 * Time::us(10));
  // All-to-all: its 15 peers progress together, one network latency and 1 us per peer (15 x 5 us,
  // one peer after another, until 2026-12-06); past 128 peers in flight a second wave.
  EXPECT_EQ(ring_latency(CollectiveOp::kAllToAll, across(2, 8)), Time::us(5) + 15 * Time::us(1));
  EXPECT_EQ(ring_latency(CollectiveOp::kAllToAll, across(16, 8)), Time::us(5) + 127 * Time::us(1));
  EXPECT_EQ(ring_latency(CollectiveOp::kAllToAll, across(129, 1)), Time::us(5) + 128 * Time::us(1));  // 128 peers: one wave
  EXPECT_EQ(ring_latency(CollectiveOp::kAllToAll, across(130, 1)), 2 * Time::us(5) + 129 * Time::us(1));
  EXPECT_EQ(ring_latency(CollectiveOp::kAllToAll, across(32, 8)), 2 * Time::us(5) + 255 * Time::us(1));
}

TEST(CollectiveTime, OtherOpsUseTheirBusFactors) {
  const Bytes size{1'000'000'000};
  // Reduce-scatter and all-gather: (n-1)/n x S / busbw = 7/8 x 10 ms = 8.75 ms, + 10 us.
  EXPECT_EQ(collective_time(CollectiveOp::kReduceScatter, size, one_node()), Time::ms(8.75) + Time::us(10));
  EXPECT_EQ(collective_time(CollectiveOp::kAllGather, size, one_node()), Time::ms(8.75) + Time::us(10));
  // All-to-all inside a node: the same factor.
  EXPECT_EQ(collective_time(CollectiveOp::kAllToAll, size, one_node()), Time::ms(8.75) + Time::us(10));
  // Send/recv: the whole message over one link: 1e9 / 100e9 = 10 ms inside a node.
  EXPECT_EQ(collective_time(CollectiveOp::kSendRecv, size, one_node()), Time::ms(10) + Time::us(10));
  // Across nodes: over the NIC share, 1e9 / 25e9 = 40 ms, one step of 5 us.
  EXPECT_EQ(collective_time(CollectiveOp::kSendRecv, size, across(2, 1)), Time::ms(40) + Time::us(5));
  // Across 2 nodes x 8: reduce-scatter has nodes - 1 = 1 step between nodes, 5 us, and 2 nodes'
  // NVLink steps at the intra-node alpha, 20 us: 15/16 x 10 ms + 25 us.
  EXPECT_EQ(collective_time(CollectiveOp::kReduceScatter, size, across(2, 8)), Time::ms(9.375) + Time::us(25));
}

TEST(CollectiveTime, AllToAllAcrossNodesLeavesThroughItsOwnNic) {
  // 2 nodes x 8 ranks, 1.6 GB per rank: 8/16 of it goes to the other node over 25 GB/s (32 ms),
  // 7/16 stays inside over 100 GB/s (7 ms); the slower one bounds: 32 ms, plus 5 us + 15 x 1 us.
  EXPECT_EQ(collective_time(CollectiveOp::kAllToAll, Bytes{1'600'000'000}, across(2, 8)),
            Time::ms(32) + Time::us(20));
}

TEST(CollectiveNicTime, TheBytesThatLeaveTheNodeOverItsMembersShares) {
  const Bytes size{1'000'000'000};
  // Inside a node no NIC is used.
  EXPECT_EQ(collective_nic_time(CollectiveOp::kAllReduce, size, one_node()), Time::zero());
  // 2 nodes x 8: 2 x 15/16 x 1e9 B over 8 shares of 25 GB/s = 9.375 ms, under the 18.75 ms the
  // NVLink side takes (collective_bandwidth_bound): NVLink is the slower side here.
  EXPECT_EQ(collective_nic_time(CollectiveOp::kAllReduce, size, across(2, 8)), Time::ms(9.375));
  EXPECT_GT(collective_bandwidth_bound(CollectiveOp::kAllReduce, size, across(2, 8)),
            collective_nic_time(CollectiveOp::kAllReduce, size, across(2, 8)));
  // One rank per node: every byte of the ring crosses, 15/16 x 1e9 / 25e9 = 37.5 ms.
  EXPECT_EQ(collective_nic_time(CollectiveOp::kAllGather, size, across(16, 1)), Time::ms(37.5));
  // All-to-all: the remote half of 1.6 GB over the rank's own share, 32 ms; send/recv the message.
  EXPECT_EQ(collective_nic_time(CollectiveOp::kAllToAll, Bytes{1'600'000'000}, across(2, 8)), Time::ms(32));
  EXPECT_EQ(collective_nic_time(CollectiveOp::kSendRecv, size, across(2, 1)), Time::ms(40));
}

TEST(CollectiveTime, OneRankOrNothingCostsNothing) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
                          CollectiveOp::kAllToAll, CollectiveOp::kSendRecv}) {
    EXPECT_EQ(collective_time(op, Bytes::gib(1), one_node(1)), Time::zero()) << to_string(op);
    EXPECT_EQ(collective_time(op, Bytes{0}, one_node()), Time::zero()) << to_string(op);
    EXPECT_EQ(collective_bandwidth_bound(op, Bytes::gib(1), one_node(1)), Time::zero()) << to_string(op);
  }
}

TEST(RingBusbw, InsideANodeIsNvlink) {
  EXPECT_DOUBLE_EQ(ring_busbw(one_node()).bytes_per_s, 100e9);
  // A group smaller than a node stays inside it.
  GroupLinks g = one_node(4);
  g.ranks_per_node = 8;
  EXPECT_EQ(g.nodes(), 1);
  EXPECT_DOUBLE_EQ(ring_busbw(g).bytes_per_s, 100e9);
}

TEST(RingBusbw, AcrossNodesIsMinOfNvlinkAndRails) {
  // min(intra, k x nic): k = 8 -> min(100, 200) = 100; k = 2 -> min(100, 50) = 50;
  // k = 4 -> min(100, 100) = 100.
  EXPECT_DOUBLE_EQ(ring_busbw(across(4, 8)).bytes_per_s, 100e9);
  EXPECT_DOUBLE_EQ(ring_busbw(across(4, 2)).bytes_per_s, 50e9);
  EXPECT_DOUBLE_EQ(ring_busbw(across(4, 4)).bytes_per_s, 100e9);
  // One rank per node: the NIC alone.
  EXPECT_DOUBLE_EQ(ring_busbw(across(16, 1)).bytes_per_s, 25e9);
  // Slow NICs: 8 x 10 GB/s = 80 GB/s < 100.
  GroupLinks slow = across(2, 8);
  slow.nic_per_gpu = gbytes_per_s(10);
  EXPECT_DOUBLE_EQ(ring_busbw(slow).bytes_per_s, 80e9);
}

TEST(GroupLinks, NodesRoundUp) {
  GroupLinks g;
  g.ranks = 20;
  g.ranks_per_node = 8;
  EXPECT_EQ(g.nodes(), 3);
}

TEST(CollectiveOpNames, AsInReports) {
  EXPECT_EQ(std::string(to_string(CollectiveOp::kAllReduce)), "all_reduce");
  EXPECT_EQ(std::string(to_string(CollectiveOp::kReduceScatter)), "reduce_scatter");
  EXPECT_EQ(std::string(to_string(CollectiveOp::kAllGather)), "all_gather");
  EXPECT_EQ(std::string(to_string(CollectiveOp::kAllToAll)), "all_to_all");
  EXPECT_EQ(std::string(to_string(CollectiveOp::kSendRecv)), "send_recv");
}

}  // namespace
}  // namespace clustersim::coll
