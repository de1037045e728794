// SPDX-License-Identifier: Apache-2.0
// The packet level's checks: fairness on one bottleneck, incast held near the marking band
// without loss under PFC, drops without PFC, DCQCN recovery timing, PFC victim slowdown.
#include "sim/network/packet/packet_network.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "sim/network/dcqcn/dcqcn_rate.h"
#include "test_bed.h"

namespace clustersim::net {
namespace {

using testing::Bed;
using testing::small_clos;

constexpr double kLine = 50e9;  // 400 Gbps in bytes/s

// Mean of a traced flow's Rc over [from, to].
double mean_rate(const CongestionTrace& t, int flow, Time from, Time to) {
  double sum = 0;
  int n = 0;
  for (const RateSample& s : t.rates) {
    if (s.flow == flow && s.t >= from && s.t <= to) {
      sum += s.rate;
      ++n;
    }
  }
  return n > 0 ? sum / n : 0.0;
}

TEST(PacketNetwork, LoneFlowRunsAtLineRate) {
  auto [cluster, network] = small_clos(2, Fidelity::kPacket);
  Bed bed(cluster, network);
  Time done = Time::max();
  bed.net->send(0, 8, Bytes::mib(4), [&](Time t) { done = t; });
  bed.clock.run();
  // 4 MiB / 50 GB/s = 83.9 us, plus the path latency (2 host links x 1 us + the ToR's 0.5 us) and
  // one 4 KB packet's store-and-forward at the ToR (0.08 us).
  const double expected_us = Bytes::mib(4).as_double() / kLine * 1e6 + 2.5 + 4096 / kLine * 1e6;
  EXPECT_NEAR(done.as_us(), expected_us, 0.01);
  EXPECT_EQ(bed.trace().counters.drops, 0);
  EXPECT_EQ(bed.trace().counters.ecn_marks, 0);
  EXPECT_EQ(bed.net->in_flight(), 0);
}

// Two flows into one receiver NIC (the bottleneck), the second starting 200 us later: DCQCN
// brings them to equal shares on average. Tolerance: the mean rates over the overlap, from 2 ms
// after B starts to the first completion (about 31 ms), differ by less than 10% of their mean.
// Why so long a window: with the paper's g = 1/256 and 55 us alpha updates, alpha relaxes from
// its initial 1 over 1/g x 55 us = 14 ms, and the cuts stay 30-40% deep until then; after that
// the two rates wander +-10% around the fair share on a ~10 ms scale (CNPs are rare: one per
// flow every ~0.5 ms at this load), the slow AIMD convergence that Zhu et al. (CoNEXT 2016,
// "ECN or Delay") analyse. Measured: 198.0 vs 197.7 Gbps; windows of 5 ms range 170-230 Gbps.
// Two equal flows, B 200 us after A, over four seeds (RED's draws): past the first cuts and
// recoveries (5 ms) each keeps at least 30% of the bottleneck and together they keep it busy;
// over the seeds neither the first nor the later flow is favoured (mean share within 10% of
// half). DCQCN does not equalise two flows within tens of milliseconds: one seed's window can
// read 236 against 159 Gbps (until 2026-12-06 this test held one seed's rates within 10%, which
// held for that seed's draws alone).
TEST(PacketChecks, TwoFlowsOnOneBottleneckShareItWithoutBias) {
  double share_sum = 0;
  for (const uint64_t seed : {1, 2, 3, 4}) {
    auto [cluster, network] = small_clos(3, Fidelity::kPacket);
    network.dcqcn.sample_interval = Time::us(5);
    network.ecmp_seed = seed;
    Bed bed(cluster, network);
    Time a_done = Time::max(), b_done = Time::max();
    bed.net->send(8, 0, Bytes{1'000'000'000}, [&](Time t) { a_done = t; });
    bed.clock.at(Time::us(200), [&] { bed.net->send(16, 0, Bytes{1'000'000'000}, [&](Time t) { b_done = t; }); });
    bed.clock.run();
    const Time from = Time::ms(5);
    const Time to = min(a_done, b_done);
    const double a = mean_rate(bed.trace(), 0, from, to);
    const double b = mean_rate(bed.trace(), 1, from, to);
    std::printf("seed %llu: A %.1f Gbps, B %.1f Gbps over [%.0f, %.0f] us; A done %.0f us, B done %.0f us, CNPs %lld\n",
                static_cast<unsigned long long>(seed), a * 8e-9, b * 8e-9, from.as_us(), to.as_us(), a_done.as_us(),
                b_done.as_us(), static_cast<long long>(bed.trace().counters.cnps));
    EXPECT_GT(a, 0.3 * kLine);
    EXPECT_GT(b, 0.3 * kLine);
    EXPECT_GT(a + b, 0.9 * kLine);
    // The bottleneck stays busy: 2 GB at 50 GB/s = 40 ms.
    EXPECT_LT(max(a_done, b_done).as_us(), 2e9 / kLine * 1e6 * 1.15);
    EXPECT_EQ(bed.trace().counters.drops, 0);
    share_sum += a / (a + b);
  }
  EXPECT_NEAR(share_sum / 4, 0.5, 0.05);
}

// PFC resumes a paused port resume_offset below XOFF, so its output never drains empty while
// the senders wait for the XON: a 7-to-1 incast inside one node (NVLink, no ECN, PFC pauses
// alone) runs at the line rate, as max-min's flow level gives it, at both congestion levels.
// (Until 2026-12-06 both resumed only once the ingress counter was empty: 3.5% slower at
// flow+dcqcn, 6.7% at the packet level, whatever resume_offset said.)
TEST(PacketChecks, PfcResumesBeforeTheQueueEmpties) {
  const auto finish = [](Fidelity fidelity) {
    auto [cluster, network] = small_clos(1, fidelity);
    Bed bed(cluster, network);
    Time last = Time::zero();
    for (GpuId g = 1; g < 8; ++g) bed.net->send(g, 0, Bytes::mib(64), [&](Time t) { last = max(last, t); });
    bed.clock.run();
    return last.as_us();
  };
  const double flow = finish(Fidelity::kFlow);
  const double fluid = finish(Fidelity::kFlowDcqcn);
  const double packet = finish(Fidelity::kPacket);
  std::printf("7-to-1 on NVLink: flow %.1f us, flow+dcqcn %.1f us, packet %.1f us\n", flow, fluid, packet);
  EXPECT_NEAR(fluid / flow, 1.0, 0.005);
  EXPECT_NEAR(packet / flow, 1.0, 0.005);
}

class IncastCheck : public ::testing::TestWithParam<int> {};

// N-to-1 incast with PFC on, 512 MB in all: no packet lost, and the bottleneck queue held in the
// marking band once DCQCN has reacted: its time-mean (empty periods counted as 0) over the second
// half of the time to the first completion is between Kmin and Kmax at 400 Gbps (50 KB .. 2 MB).
// The first half holds the initial line-rate burst, which PFC absorbs, and the recovery from it:
// with alpha = 1 the first CNPs halve the rates every 50 us while the queue (marked on enqueue)
// drains, and the flows climb back by N x R_AI (400 Mbps) per 55 us timer, ~4 ms for N = 4..16.
// Measured (us to first completion, KB): N=2 8269/63, 4 11187/114, 8 10793/355, 16 9230/848,
// 32 9952/504, 64 10033/457.
TEST_P(IncastCheck, QueueNearMarkingBandAndNoLossWithPfc) {
  const int n = GetParam();
  auto [cluster, network] = small_clos(n + 1, Fidelity::kPacket);
  network.switch_radix = 64;
  network.dcqcn.sample_interval = Time::us(2);
  Bed bed(cluster, network);
  int completed = 0;
  Time first = Time::max(), last = Time::zero();
  const Bytes each{512'000'000 / n};
  for (int k = 1; k <= n; ++k) {
    bed.net->send(k * 8, 0, each, [&](Time t) {
      ++completed;
      first = min(first, t);
      last = max(last, t);
    });
  }
  bed.clock.run();
  const CongestionTrace& t = bed.trace();
  const LinkIndex bottleneck = bed.fabric.host_link(0, topo::Direction::kDown);
  const Time from = Time::s(first.as_s() / 2);
  double sum = 0;
  for (const QueueSample& q : t.queues) {
    if (q.link == bottleneck && q.t >= from && q.t < first) sum += static_cast<double>(q.bytes);
  }
  const double mean_queue = sum / ((first - from) / network.dcqcn.sample_interval);
  const double ideal_us = n * each.as_double() / kLine * 1e6;
  std::printf("incast %2d: first done %.0f us, last %.0f us (ideal %.0f), mean queue %.0f KB, max %.0f KB, marks %lld, "
              "CNPs %lld, pauses %lld, drops %lld\n",
              n, first.as_us(), last.as_us(), ideal_us, mean_queue / 1e3, t.links[bottleneck].max_queue_bytes / 1e3,
              static_cast<long long>(t.counters.ecn_marks), static_cast<long long>(t.counters.cnps),
              static_cast<long long>(t.counters.pauses), static_cast<long long>(t.counters.drops));
  EXPECT_EQ(completed, n);
  EXPECT_EQ(t.counters.drops, 0);
  EXPECT_EQ(t.counters.resumes, t.counters.pauses);  // every XOFF was followed by an XON
  const EcnThresholds band = ecn_thresholds(network.dcqcn, gbps(400));
  EXPECT_GT(mean_queue, band.kmin);
  EXPECT_LT(mean_queue, band.kmax);
  EXPECT_GT(last.as_us(), ideal_us);  // DCQCN's slow recovery after the first cuts costs more
}

INSTANTIATE_TEST_SUITE_P(N, IncastCheck, ::testing::Values(2, 4, 8, 16, 32, 64));

// Without PFC and with a 256 KB switch buffer, a 16-to-1 incast overflows: drops are counted,
// go-back-N resends them and every transfer still completes.
TEST(PacketChecks, DropsWithoutPfcAndASmallBuffer) {
  auto [cluster, network] = small_clos(17, Fidelity::kPacket);
  network.switch_radix = 64;
  network.dcqcn.pfc = false;
  network.dcqcn.buffer = Bytes{256'000};
  Bed bed(cluster, network);
  int completed = 0;
  for (int k = 1; k <= 16; ++k) bed.net->send(k * 8, 0, Bytes{2'000'000}, [&](Time) { ++completed; });
  bed.clock.run();
  const CongestionCounters& c = bed.trace().counters;
  std::printf("no PFC: drops %lld, retransmits %lld, pauses %lld\n", static_cast<long long>(c.drops),
              static_cast<long long>(c.retransmits), static_cast<long long>(c.pauses));
  EXPECT_EQ(completed, 16);
  EXPECT_GT(c.drops, 0);
  EXPECT_GE(c.retransmits, c.drops);
  EXPECT_EQ(c.pauses, 0);
  const LinkIndex bottleneck = bed.fabric.host_link(0, topo::Direction::kDown);
  EXPECT_EQ(bed.trace().links[bottleneck].drops, c.drops);
}

// A long flow A is cut by the congestion a short burst B causes; once B is gone, A climbs back
// on the increase timer alone (byte counter off). The time from A's last cut to 95% of the line
// rate must match dcqcn_recovery_steps x rate_increase_timer from the post-cut (Rc, Rt).
TEST(PacketChecks, RecoveryAfterACutFollowsTheDcqcnTimers) {
  auto [cluster, network] = small_clos(3, Fidelity::kPacket);
  network.dcqcn.byte_counter = Bytes{0};
  // 4 Gbps at 40 Gbps -> 40 Gbps steps at 400 Gbps, additive and hyper alike (the timer alone
  // steps one additive increase, then hyper ones): a short test.
  network.dcqcn.rate_ai = {4e9 / 8};
  network.dcqcn.rate_hai = {4e9 / 8};
  network.dcqcn.sample_interval = Time::us(1);
  Bed bed(cluster, network);
  bed.net->send(8, 0, Bytes{100'000'000}, [](Time) {});
  bed.clock.at(Time::us(100), [&] { bed.net->send(16, 0, Bytes{2'000'000}, [](Time) {}); });
  bed.clock.run();
  const CongestionTrace& t = bed.trace();
  // A's samples; the last cut is the last sample whose rate is below the one before.
  std::vector<RateSample> a;
  for (const RateSample& s : t.rates) {
    if (s.flow == 0) a.push_back(s);
  }
  size_t cut = 0;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i].rate < a[i - 1].rate * (1 - 1e-9)) cut = i;
  }
  ASSERT_GT(cut, 0u);
  const double target = 0.95 * kLine;
  size_t back = cut;
  while (back < a.size() && a[back].rate < target) ++back;
  ASSERT_LT(back, a.size());
  const DcqcnParams p = dcqcn_params(network.dcqcn, gbps(400));
  const int64_t steps = dcqcn_recovery_steps(p, a[cut].rate, a[cut].target, target);
  const double expected_us = steps * network.dcqcn.rate_increase_timer.as_us();
  const double measured_us = (a[back].t - a[cut].t).as_us();
  std::printf("recovery: cut to %.1f Gbps (target %.1f) at %.0f us, 95%% after %.1f us; closed form %lld steps = %.1f us\n",
              a[cut].rate * 8e-9, a[cut].target * 8e-9, a[cut].t.as_us(), measured_us,
              static_cast<long long>(steps), expected_us);
  EXPECT_GE(steps, 2);
  EXPECT_NEAR(measured_us, expected_us, 2.0);            // sampling every 1 us, cut inside a sample
}

// PFC victim: GPU 8 (node 1, same ToR as the receiver GPU 0) sends to GPU 0 along with 15 remote
// senders, and also to GPU 16 (uncongested). Marking is disabled so that only PFC reacts: the
// receiver's ToR pauses its ingress ports, node 1's NIC link among them, which stalls the victim
// flow to GPU 16 too. Max-min would give the victim 400 Gbps - 400/16 Gbps; it gets much less.
TEST(PacketChecks, PfcPauseSlowsAVictimOnTheSameUpstreamLink) {
  auto run = [](bool pfc) {
    auto [cluster, network] = small_clos(33, Fidelity::kPacket);
    network.switch_radix = 64;
    network.dcqcn.kmin = Bytes{1'000'000'000};
    network.dcqcn.kmax = Bytes{1'000'000'000};
    network.dcqcn.pfc = pfc;
    network.dcqcn.buffer = Bytes{4'000'000};
    Bed bed(cluster, network);
    Time victim = Time::max();
    for (int k = 1; k <= 16; ++k) bed.net->send(k * 8, 0, Bytes{4'000'000}, [](Time) {});
    bed.net->send(8, 16, Bytes{8'000'000}, [&](Time t) { victim = t; });
    bed.clock.run();
    std::printf("victim (pfc %d): %.0f us, pauses %lld, drops %lld\n", pfc, victim.as_us(),
                static_cast<long long>(bed.trace().counters.pauses), static_cast<long long>(bed.trace().counters.drops));
    return victim;
  };
  const Time with_pfc = run(true);
  // Max-min: the victim shares node 1's NIC with its incast flow, which gets 1/16 of GPU 0's
  // link: 8 MB at (50 - 50/16) GB/s = 171 us.
  const double max_min_us = 8e6 / (kLine - kLine / 16) * 1e6;
  EXPECT_GT(with_pfc.as_us(), 1.5 * max_min_us);
}

}  // namespace
}  // namespace clustersim::net

