// SPDX-License-Identifier: Apache-2.0
// Pipeline schedules: 1F1B warm-up / steady / cool-down order, interleaving over virtual stages,
// every pass exactly once, and the closed-form bubble.
#include "workloads/pipeline_schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
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
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8, {.forward = half, .backward = half}), Time::ms(31));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 16, {.forward = half, .backward = half}), Time::ms(17 * 3 + 8));
  // Sends one way only: every other slot waits for one, (m + 1) x 3 ms + m x 0.25 ms.
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8, {.forward = half}), Time::ms(29));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 8, {.backward = half}), Time::ms(29));
  // Four stages: more than the fill and drain's 2 (pp - 1) sends, less than a send each way
  // for every micro-batch (14 ms over 16); interleaved (vpp 2) less (7 ms).
  const std::vector<ChunkTime> four(4, ChunkTime{Time::ms(1), Time::ms(2)});
  const std::vector<Time> sends(4, Time::us(500));
  const Time plain = pipeline_makespan(four, 4, 1, 16, {.forward = sends, .backward = sends}) - pipeline_makespan(four, 4, 1, 16);
  EXPECT_GT(plain, Time::ms(3));
  EXPECT_LT(plain, Time::ms(16));
  const std::vector<ChunkTime> eight(8, ChunkTime{Time::us(500), Time::ms(1)});
  const std::vector<Time> sends8(8, Time::us(500));
  const Time interleaved = pipeline_makespan(eight, 4, 2, 16, {.forward = sends8, .backward = sends8}) - pipeline_makespan(eight, 4, 2, 16);
  EXPECT_LT(interleaved, plain);
}

// Blocking sends (no overlap) hold their device until delivered. Two stages, forward 1 ms,
// backward 2 ms, sends 0.5 ms, 2 micro-batches: stage 0 runs F0 0-1 (held to 1.5), F1 1.5-2.5
// (held to 3); stage 1 F0 1.5-2.5, B0 2.5-4.5 (held to 5), F1 5-6, B1 6-8 (held to 8.5); stage 0
// B0 5-7, B1 8.5-10.5. Overlapped, the same sends give 10 ms (stage 1 runs F1 at 4.5). With the
// sends on NICs (their whole time) nothing shares one: the same.
TEST(PipelineMakespan, BlockingSendsHoldTheirDevice) {
  const std::vector<ChunkTime> two(2, ChunkTime{Time::ms(1), Time::ms(2)});
  const std::vector<Time> half(2, Time::us(500));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 2, {.forward = half, .backward = half}), Time::ms(10));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 2, {.forward = half, .backward = half, .blocking = true}), Time::us(10500));
  EXPECT_EQ(pipeline_makespan(two, 2, 1, 2,
                              {.forward = half, .backward = half, .forward_nic = half, .backward_nic = half, .blocking = true}),
            Time::us(10500));
}

// Sends that hold their device's NIC: the flow level's pattern (forward sends in order, backward
// sends in order, the two sharing the NIC). Sharing only ever delays a send, so the replay never
// ends before the one with side-by-side sends of the same times; with NIC times next to nothing it
// is that replay (the sends' latency alone).
TEST(PipelineMakespan, SendsSharingANicTakeAtLeastTheirOwnTime) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (const auto& [pp, vpp] : {std::pair{2, 1}, {4, 1}, {2, 2}, {4, 2}, {8, 3}}) {
    const size_t n = static_cast<size_t>(pp * vpp);
    std::vector<ChunkTime> chunks(n);
    for (ChunkTime& c : chunks) c = {Time::ms(u(rng) / 3), Time::ms(2 * u(rng) / 3)};
    PipelineSends side_by_side, shared, tiny;
    for (size_t v = 0; v < n; ++v) {
      const Time fwd = Time::ms(0.4 * u(rng)), bwd = Time::ms(0.4 * u(rng));
      side_by_side.forward.push_back(fwd);
      side_by_side.backward.push_back(bwd);
      shared.forward_nic.push_back(fwd - Time::us(5));
      shared.backward_nic.push_back(bwd - Time::us(5));
      tiny.forward_nic.push_back(Time::ps(1));
      tiny.backward_nic.push_back(Time::ps(1));
    }
    shared.forward = tiny.forward = side_by_side.forward;
    shared.backward = tiny.backward = side_by_side.backward;
    const int m = 4 * pp;
    const Time apart = pipeline_makespan(chunks, pp, vpp, m, side_by_side);
    EXPECT_GE(pipeline_makespan(chunks, pp, vpp, m, shared), apart) << pp << " x " << vpp;
    EXPECT_NEAR(pipeline_makespan(chunks, pp, vpp, m, tiny).as_s(), apart.as_s(), 1e-9) << pp << " x " << vpp;
  }
}

// Two stages, vpp 2: each device sends activations and gradients to the other alike, and where a
// forward and a backward send are in flight at once each moves at half the NIC's rate. With sends
// of 2 ms against chunks of 1 + 2 ms, a device's NIC has 6 ms of sends per micro-batch (two
// chunks' forward and backward less the loop's end) beside its 6 ms of passes, and sharing it
// costs 14 ms more than the same sends side by side over 16 micro-batches (the flow level agrees
// on such plans: tests/unit/engine/flow_training_test.cc).
TEST(PipelineMakespan, ForwardAndBackwardSendsShareTheNic) {
  const std::vector<ChunkTime> chunks(4, ChunkTime{Time::ms(1), Time::ms(2)});
  const std::vector<Time> send(4, Time::ms(2));
  EXPECT_EQ(pipeline_makespan(chunks, 2, 2, 16), Time::ms(99));
  EXPECT_EQ(pipeline_makespan(chunks, 2, 2, 16, {.forward = send, .backward = send}), Time::ms(129));
  EXPECT_EQ(pipeline_makespan(chunks, 2, 2, 16, {.forward = send, .backward = send, .forward_nic = send, .backward_nic = send}),
            Time::ms(143));
}

// Devices behind one NIC share it: stages 1 and 2 on one node (their send to each other on
// NVLink, free), the node's forward sends from stage 2 and backward sends from stage 1 leave by
// the same NIC. Per micro-batch that NIC carries 2 sends of 2 ms against 0.3 ms of passes, so
// the steady state runs at 4 ms a micro-batch; with a NIC each (before 2026-12-06) at about 2.3.
TEST(PipelineMakespan, DevicesBehindOneNicShareIt) {
  const std::vector<ChunkTime> chunks(4, ChunkTime{Time::us(100), Time::us(200)});
  const Time h = Time::ms(2);
  PipelineSends sends{.forward = {h, Time::zero(), h, h}, .backward = {h, h, Time::zero(), h},
                      .forward_nic = {h, Time::zero(), h, h}, .backward_nic = {h, h, Time::zero(), h}};
  const int m = 64;
  const Time own = pipeline_makespan(chunks, 4, 1, m, sends);
  sends.nic = {0, 1, 1, 2};
  const Time shared = pipeline_makespan(chunks, 4, 1, m, sends);
  EXPECT_GE(shared, m * (2 * h));
  EXPECT_LT(shared, 1.05 * ((m + 4) * (2 * h)));  // 274 ms against 256
  EXPECT_LT(own, 0.6 * shared);                    // 154 ms
  // The short replay and its extrapolation see the shared NIC too.
  EXPECT_NEAR(pipeline_send_delay(chunks, 4, 1, m, sends).as_s(), (shared - pipeline_makespan(chunks, 4, 1, m)).as_s(),
              0.02 * shared.as_s());
}

// The short replay plus the steady state's growth against the full replay with the same sends
// (sharing NICs where they hold them): 2 to 16 stages (2 to 8 interleaved, 2 or 3 chunks each) of
// uneven slots (0.5x to 1.5x, the last with a head), sends of 1% to 300% of a slot side by side
// or sharing their NICs, overlapped or blocking, 256 micro-batches. Where the NICs are lightly
// busy the sends are replayed side by side, and blended into the sharing replay across 15% to
// 35% busy, so this also bounds what that costs. Mean |error| within 0.5% of the makespan each
// way (0.06% and 0.22% measured overlapped, 0.02% and 0.17% blocking), none beyond 8% (7%
// measured: overlapped sends as long as a slot sharing the NICs of 3 plain stages, whose steady
// state wanders).
TEST(PipelineMakespan, SendDelayFollowsTheFullReplay) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  double sum[2] = {0, 0};
  int cases[2] = {0, 0};
  for (const auto& [pp, vpp] : {std::pair{2, 1}, {3, 1}, {4, 1}, {8, 1}, {16, 1}, {2, 2}, {4, 3}, {8, 2}}) {
    for (int draw = 0; draw < 3; ++draw) {
      for (const double c : {0.01, 0.03, 0.05, 0.1, 0.3, 1.0, 3.0}) {
        for (const bool nic : {false, true}) {
          for (const bool blocking : {false, true}) {
            std::vector<ChunkTime> chunks(static_cast<size_t>(pp * vpp));
            for (ChunkTime& t : chunks) {
              const double slot = (draw == 0 ? 1.0 : u(rng)) / vpp;
              t.forward = Time::ms(slot / 3);
              t.backward = Time::ms(2 * slot / 3);
            }
            chunks.back().forward += Time::us(100);
            PipelineSends sends{.blocking = blocking};
            for (size_t v = 0; v < chunks.size(); ++v) {
              sends.forward.push_back(Time::ms(draw == 0 ? c : c * u(rng)));
              sends.backward.push_back(Time::ms(draw == 0 ? c : c * u(rng)));
              if (nic) sends.forward_nic.push_back(0.9 * sends.forward.back());
              if (nic) sends.backward_nic.push_back(0.9 * sends.backward.back());
            }
            const int m = 256;
            const Time plain = pipeline_makespan(chunks, pp, vpp, m);
            const Time full = pipeline_makespan(chunks, pp, vpp, m, sends) - plain;
            const double error = std::abs((pipeline_send_delay(chunks, pp, vpp, m, sends) - full) / (plain + full));
            sum[nic] += error;
            ++cases[nic];
            EXPECT_LT(error, 0.08) << pp << " x " << vpp << ", sends " << c << (nic ? " sharing NICs" : "")
                                   << (blocking ? ", blocking" : "");
            // Side by side, at most 8 pp micro-batches: the replay is the answer.
            if (!nic) {
              EXPECT_EQ(pipeline_send_delay(chunks, pp, vpp, 8 * pp, sends),
                        pipeline_makespan(chunks, pp, vpp, 8 * pp, sends) - pipeline_makespan(chunks, pp, vpp, 8 * pp));
            }
          }
        }
      }
    }
  }
  EXPECT_LT(sum[0] / cases[0], 0.005) << "sends side by side";
  EXPECT_LT(sum[1] / cases[1], 0.005) << "sends sharing NICs";
}

// Across the band from 15% to 35% busy (the busiest NIC's sends per micro-batch over the
// slowest device's passes) the delay blends the replay with sends side by side into the one
// sharing NICs, linearly, so that a little more compute or a little less NIC never jumps the step
// from one to the other (a single threshold made a GPU 2% faster come out 1.3% slower). 2 stages,
// vpp 2, chunks of f + 2f, sends of 0.5 ms holding the NIC 0.4 ms, 3 of them on the busiest NIC
// per micro-batch against 6f of passes: f = 0.8 ms is 25% busy, halfway. At most 8 pp
// micro-batches each replay is exact.
TEST(PipelineMakespan, SendDelayBlendsAcrossTheSharingBand) {
  const std::vector<Time> send(4, Time::us(500)), nic(4, Time::us(400));
  const PipelineSends sharing{.forward = send, .backward = send, .forward_nic = nic, .backward_nic = nic};
  const PipelineSends apart{.forward = send, .backward = send};
  for (const auto& [f, w] : {std::pair{2.0, 0.0}, {1.0 / 0.15 * 0.2, 0.0}, {0.8, 0.5}, {1.2 / 6 / 0.3, 0.75}, {0.5, 1.0}}) {
    const std::vector<ChunkTime> chunks(4, ChunkTime{Time::ms(f), Time::ms(2 * f)});
    const Time plain = pipeline_makespan(chunks, 2, 2, 16);
    const Time side = pipeline_makespan(chunks, 2, 2, 16, apart) - plain;
    const Time shared = pipeline_makespan(chunks, 2, 2, 16, sharing) - plain;
    EXPECT_NEAR(pipeline_send_delay(chunks, 2, 2, 16, sharing).as_s(), ((1 - w) * side + w * shared).as_s(), 1e-11)
        << "f " << f << " ms";
  }
}

// Sends that keep their NICs busy less than a quarter of the time are replayed side by side where
// a replay takes one set of sends (the straggler model's; pipeline_send_delay blends the two).
TEST(PipelineMakespan, LightlyLoadedNicsReplaySendsSideBySide) {
  const std::vector<ChunkTime> chunks(4, ChunkTime{Time::ms(1), Time::ms(2)});
  const std::vector<Time> light(4, Time::us(400)), heavy(4, Time::ms(1));
  // 3 sends a micro-batch on the busiest NIC against 6 ms of passes: 1.2 ms (20%) and 3 ms.
  EXPECT_TRUE(sends_to_replay(chunks, 2, 2, {light, light, light, light}).forward_nic.empty());
  EXPECT_EQ(sends_to_replay(chunks, 2, 2, {heavy, heavy, heavy, heavy}).forward_nic, heavy);
}

// What ranks hold from a forward to its backward: uniform chunks give Megatron-LM's count (pp
// micro-batches of a stage's layers on the first stage, times 1 + (pp - 1) / (pp vpp) when
// interleaved; with no more micro-batches than stages, all of them); uneven chunks the
// schedule's own peak (hand-checked below).
TEST(PipelineOrder, PeakHeldFollowsTheScheduleOrder) {
  for (const auto& [pp, vpp] : {std::pair{1, 1}, {2, 1}, {4, 1}, {8, 1}, {2, 2}, {4, 2}, {8, 3}}) {
    const std::vector<double> one(static_cast<size_t>(pp * vpp), 1.0 / vpp);  // a stage's layers: 1
    const double interleaved = vpp > 1 ? 1.0 + (pp - 1.0) / (pp * vpp) : 1.0;
    EXPECT_DOUBLE_EQ(peak_held(one, pp, vpp, 8 * pp), pp * interleaved) << pp << " x " << vpp;
    EXPECT_DOUBLE_EQ(peak_held(one, pp, vpp, pp), pp) << pp << " x " << vpp;  // every forward first
  }
  EXPECT_DOUBLE_EQ(peak_held(std::vector<double>(4, 1.0), 4, 1, 2), 2.0);
  // pp 2, vpp 2, 4 micro-batches (F1.0: micro-batch 1's forward of chunk 0): rank 0 runs F0.0
  // F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 ..., so it holds at most 4 of its chunk 0 (after
  // F3.0) and 2 of its chunk 1; rank 1 runs F0.0 F1.0 F0.1 B0.1 F1.1 B1.1 F2.0 B0.0 F3.0 ..., 3
  // of its chunk 0 and 1 of its chunk 1.
  EXPECT_DOUBLE_EQ(peak_held({1.0, 0.0, 0.0, 0.0}, 2, 2, 4), 4.0);
  EXPECT_DOUBLE_EQ(peak_held({0.0, 0.0, 1.0, 0.0}, 2, 2, 4), 2.0);
  EXPECT_DOUBLE_EQ(peak_held({0.0, 1.0, 0.0, 0.0}, 2, 2, 4), 3.0);
  EXPECT_DOUBLE_EQ(peak_held({0.0, 0.0, 0.0, 1.0}, 2, 2, 4), 1.0);
  // Rank by rank (the memory check's per-stage totals), chunk 0 worth 1 and chunk 1 worth 10: rank
  // 0 holds 3 + 2 x 10 after F2.0, rank 1 2 + 10 after F0.1 (and F1.1), plus the last rank's extra.
  EXPECT_EQ(peak_held_by_rank({1.0, 1.0, 10.0, 10.0}, 2, 2, 4, 0.5), (std::vector<double>{23.0, 12.5}));
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

// chunks_in_flight is peak_held's count for a rank whose chunks all hold the same, over every
// shape (plain and interleaved, m from 1 to past 4 pp).
TEST(PipelineSchedule, ChunksInFlightIsTheReplaysCount) {
  for (int pp = 1; pp <= 9; ++pp) {
    for (int vpp = 1; vpp <= 4; ++vpp) {
      if (vpp > 1 && pp == 1) continue;
      for (int m = 1; m <= 5 * pp + 3; ++m) {
        if (vpp > 1 && m % pp != 0) continue;
        for (int rank = 0; rank < pp; ++rank) {
          std::vector<double> held(static_cast<size_t>(pp) * vpp, 0.0);
          for (int c = 0; c < vpp; ++c) held[static_cast<size_t>(c * pp + rank)] = 1.0;
          EXPECT_EQ(chunks_in_flight(pp, vpp, m, rank), static_cast<int>(peak_held(held, pp, vpp, m)))
              << "pp " << pp << " vpp " << vpp << " m " << m << " rank " << rank;
        }
      }
    }
  }
}

}  // namespace
}  // namespace clustersim::work
