// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules: 1F1B warm-up / steady / cool-down order, interleaving over virtual stages,
// every pass exactly once, and the closed-form bubble.
#include "workloads/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "workloads/placement.h"

namespace clustersim::work {
namespace {

std::string render(const std::vector<PipelinePass>& order) {
  std::string s;
  for (const PipelinePass& p : order) {
    s += (p.forward ? "F" : "B") + std::to_string(p.microbatch);
    if (p.chunk > 0) s += "." + std::to_string(p.chunk);
    s += " ";
  }
  return s;
}

TEST(PipelineOrder, OneF1BWarmsUpThenAlternates) {
  // pp 4, 6 micro-batches: rank 0 warms up with 3 forwards (pp - rank - 1), rank 3 none.
  EXPECT_EQ(render(pipeline_order(4, 1, 6, 0)), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
  EXPECT_EQ(render(pipeline_order(4, 1, 6, 3)), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 ");
  EXPECT_EQ(render(pipeline_order(4, 1, 6, 1)), "F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 B4 B5 ");
}

TEST(PipelineOrder, FewerMicroBatchesThanStagesRunsAllForwardsFirst) {
  EXPECT_EQ(render(pipeline_order(4, 1, 2, 0)), "F0 F1 B0 B1 ");
}

TEST(PipelineOrder, InterleavedVisitsChunksInGroupsOfPp) {
  // pp 2, vpp 2, 4 micro-batches on rank 0: warm-up 2 (pp-1) + (vpp-1) pp = 4 forwards:
  // micro-batches 0,1 on chunk 0, then 0,1 on chunk 1; backwards start on the last chunk.
  EXPECT_EQ(render(pipeline_order(2, 2, 4, 0)), "F0 F1 F0.1 F1.1 F2 B0.1 F3 B1.1 F2.1 B0 F3.1 B1 B2.1 B3.1 B2 B3 ");
  // The last rank warms up with (vpp-1) pp = 2 forwards.
  EXPECT_EQ(render(pipeline_order(2, 2, 4, 1)), "F0 F1 F0.1 B0.1 F1.1 B1.1 F2 B0 F3 B1 F2.1 B2.1 F3.1 B3.1 B2 B3 ");
}

TEST(PipelineOrder, EveryPassOnceAndBackwardAfterItsForward) {
  for (const auto& [pp, vpp, mbs] : {std::tuple{4, 1, 8}, std::tuple{4, 3, 8}, std::tuple{8, 6, 16}, std::tuple{3, 2, 3}}) {
    for (int rank = 0; rank < pp; ++rank) {
      const auto order = pipeline_order(pp, vpp, mbs, rank);
      ASSERT_EQ(order.size(), static_cast<size_t>(2 * mbs * vpp));
      std::set<std::tuple<int, int, bool>> seen;
      for (const PipelinePass& p : order) {
        EXPECT_TRUE(seen.insert({p.microbatch, p.chunk, p.forward}).second) << render(order);
        if (!p.forward) {
          EXPECT_TRUE(seen.count({p.microbatch, p.chunk, true})) << "backward before forward: " << render(order);
        }
      }
    }
  }
}

TEST(PipelineOrder, BubbleSlotsFollowTheClosedForm) {
  EXPECT_DOUBLE_EQ(bubble_microbatch_slots(8, 1), 7.0);
  EXPECT_DOUBLE_EQ(bubble_microbatch_slots(8, 6), 7.0 / 6.0);
}

TEST(Placement, MegatronOrderKeepsTpInsideANode) {
  const Placement p("tp-cp-dp-pp", 8, 1, 4, 2);
  EXPECT_EQ(p.gpu(3, 0, 0, 0), 3);
  EXPECT_EQ(p.gpu(3, 0, 1, 0), 11);   // next DP replica: next node, same rail
  EXPECT_EQ(p.gpu(3, 0, 0, 1), 35);   // next stage after all replicas
  const Placement q("tp-pp-dp-cp", 8, 1, 4, 2);
  EXPECT_EQ(q.gpu(3, 0, 0, 1), 11);
  EXPECT_EQ(q.gpus(), 64);
}

TEST(Placement, RejectsOrdersWithoutEveryDimension) {
  EXPECT_THROW(Placement("tp-dp-pp", 1, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(Placement("tp-tp-dp-pp", 1, 1, 1, 1), std::invalid_argument);
}

}  // namespace
}  // namespace clustersim::work
