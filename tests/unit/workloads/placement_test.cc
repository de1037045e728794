// SPDX-License-Identifier: Apache-2.0
// Rank placement: coordinates round-trip, and a group's ranks per node follow the order.
#include "workloads/placement.h"

#include <gtest/gtest.h>

namespace clustersim::work {
namespace {

TEST(Placement, CoordinatesRoundTrip) {
  const Placement pl("tp-cp-pp-dp", 2, 2, 3, 4);
  for (int g = 0; g < pl.gpus(); ++g) {
    EXPECT_EQ(pl.gpu(pl.coord(g, Dim::kTp), pl.coord(g, Dim::kCp), pl.coord(g, Dim::kDp), pl.coord(g, Dim::kPp)), g);
  }
}

TEST(Placement, RanksPerNodeFollowTheOrder) {
  // tp 2, cp 1, dp 8, pp 4 on nodes of 8 GPUs.
  // Megatron's order tp-cp-dp-pp: DP ranks 2 GPUs apart, 4 of them per node.
  EXPECT_EQ(Placement("tp-cp-dp-pp", 2, 1, 8, 4).ranks_per_node(Dim::kDp, 8), 4);
  // pp before dp: DP ranks 8 GPUs apart, one per node.
  EXPECT_EQ(Placement("tp-cp-pp-dp", 2, 1, 8, 4).ranks_per_node(Dim::kDp, 8), 1);
  // dp first: all 8 on the first node; TP then spans nodes, one rank each.
  const Placement dp_first("dp-tp-cp-pp", 2, 1, 8, 4);
  EXPECT_EQ(dp_first.ranks_per_node(Dim::kDp, 8), 8);
  EXPECT_EQ(dp_first.ranks_per_node(Dim::kTp, 8), 1);
  // A group larger than a node fills it; a size-1 dimension counts 1.
  EXPECT_EQ(Placement("tp-cp-dp-pp", 1, 1, 64, 1).ranks_per_node(Dim::kDp, 8), 8);
  EXPECT_EQ(Placement("tp-cp-dp-pp", 8, 1, 4, 1).ranks_per_node(Dim::kCp, 8), 1);
  // An uneven split runs at its thinnest node: cp 3 first, tp 4 at stride 3 = GPUs 0, 3, 6 on
  // node 0 and 9 on node 1 -> 1, not 3.
  EXPECT_EQ(Placement("cp-tp-dp-pp", 4, 3, 8, 1).ranks_per_node(Dim::kTp, 8), 1);
  // tp 6 on nodes of 8: the first group has 6 on node 0, but the second, GPUs 6-11, has 2 on
  // node 0 and 4 on node 1, unevenly: its ring runs member to member, one edge out of each node;
  // the step waits for it -> 1.
  EXPECT_EQ(Placement("tp-cp-dp-pp", 6, 1, 4, 1).ranks_per_node(Dim::kTp, 8), 1);
  // Alone in the cluster, the group of 6 stays on one node.
  EXPECT_EQ(Placement("tp-cp-dp-pp", 6, 1, 1, 1).ranks_per_node(Dim::kTp, 8), 6);
  // dp 6 placed first, pp 4 (24 GPUs): stage 0's ring sits in node 0, stage 1's on GPUs 6-11
  // (2 + 4), stage 2's on 12-17 (4 + 2) -> 1. dp 4 at stride 4 (tp 4 first): 2 + 2 on every
  // pair of nodes -> 2.
  EXPECT_EQ(Placement("dp-tp-cp-pp", 1, 1, 6, 4).ranks_per_node(Dim::kDp, 8), 1);
  EXPECT_EQ(Placement("tp-dp-cp-pp", 4, 1, 4, 2).ranks_per_node(Dim::kDp, 8), 2);
}

}  // namespace
}  // namespace clustersim::work
