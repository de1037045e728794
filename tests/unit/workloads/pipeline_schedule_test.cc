// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules: 1F1B warm-up / steady / cool-down order, interleaving over virtual stages,
// every pass exactly once, and the closed-form bubble.
#include "workloads/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <random>
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

// Overlapped sends in plain 1F1B: the sends hold neither device but delay the input they carry,
// and not only in the fill and drain. Two stages, forward 1 ms, backward 2 ms, sends 0.5 ms: stage
// 0's backward waits for its gradient every other micro-batch (its slots alternate 3 and 4 ms), so
// the step is (m + 1) x 3 ms + m x 0.5 ms: 31 ms for 8 micro-batches, where the fill and drain
// alone (2 sends) would give 28 ms (hand-checked pass by pass). Interleaved, the same sends cost less per micro-batch: each
// device has other chunks' passes to run while one waits.
TEST(PipelineMakespan, OverlappedSendsPaceThePlainSteadyState) {
  const std::vector<ChunkTime> two(2, ChunkTime{Time::ms(1), Time::ms(2)});
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8), Time::ms(27));
  const std::vector<Time> half(2, Time::us(500));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8, half, half), Time::ms(31));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 16, half, half), Time::ms(17 * 3 + 8));
  // Sends one way only: every other slot waits for one, (m + 1) x 3 ms + m x 0.25 ms.
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8, half, {}), Time::ms(29));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8, {}, half), Time::ms(29));
  // Four stages: more than the fill and drain's 2 (pp - 1) sends, less than a send each way
  // for every micro-batch (14 ms over 16); interleaved (vpp 2) less (7 ms).
  const std::vector<ChunkTime> four(4, ChunkTime{Time::ms(1), Time::ms(2)});
  const std::vector<Time> sends(4, Time::us(500));
  const Time plain = pipeline_makespan(four, 4, 1, 16, sends, sends) - pipeline_makespan(four, 4, 1, 16);
  EXPECT_GT(plain, Time::ms(3));
  EXPECT_LT(plain, Time::ms(16));
  const std::vector<ChunkTime> eight(8, ChunkTime{Time::us(500), Time::ms(1)});
  const std::vector<Time> sends8(8, Time::us(500));
  const Time interleaved = pipeline_makespan(eight, 4, 2, 16, sends8, sends8) - pipeline_makespan(eight, 4, 2, 16);
  EXPECT_LT(interleaved, plain);
}

// The short replay plus the steady state's growth (the largest cycle mean) against the full
// replay: 2 to 16 stages of uneven slots (0.5x to 1.5x, the last with a head), sends of 1% to
// 300% of a slot, 256 micro-batches.
TEST(PipelineMakespan, PlainSendDelayFollowsTheFullReplay) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (const int pp : {2, 3, 4, 8, 16}) {
    for (int draw = 0; draw < 3; ++draw) {
      for (const double c : {0.01, 0.05, 0.3, 1.0, 3.0}) {
        std::vector<ChunkTime> stages(static_cast<size_t>(pp));
        for (ChunkTime& t : stages) {
          const double slot = draw == 0 ? 1.0 : u(rng);
          t.forward = Time::ms(slot / 3);
          t.backward = Time::ms(2 * slot / 3);
        }
        stages.back().forward += Time::us(100);
        std::vector<Time> fwd(stages.size()), bwd(stages.size());
        for (Time& t : fwd) t = Time::ms(draw == 0 ? c : c * u(rng));
        for (Time& t : bwd) t = Time::ms(draw == 0 ? c : c * u(rng));
        const int m = 256;
        const Time plain = pipeline_makespan(stages, pp, 1, m);
        const Time full = pipeline_makespan(stages, pp, 1, m, fwd, bwd) - plain;
        const Time fast = plain_pipeline_send_delay(stages, m, fwd, bwd);
        EXPECT_NEAR(fast.as_s(), full.as_s(), 0.003 * (plain + full).as_s()) << pp << " stages, sends " << c;
        // At most 4 pp micro-batches the replay is the answer.
        EXPECT_EQ(plain_pipeline_send_delay(stages, 4 * pp, fwd, bwd),
                  pipeline_makespan(stages, pp, 1, 4 * pp, fwd, bwd) - pipeline_makespan(stages, pp, 1, 4 * pp));
      }
    }
  }
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
