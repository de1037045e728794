// SPDX-License-Identifier: Apache-2.0
// FluidNetwork timelines worked out by hand: latency then sharing, speed-up when a flow leaves,
// queue pairs, merged completions, edge cases.
#include "sim/network/flow/fluid_network.h"

#include <gtest/gtest.h>

#include <vector>

#include "manual_clock.h"
#include "table_routes.h"

namespace clustersim::net {
namespace {

using testing::ManualClock;
using testing::TableRoutes;

const Time kLatency = Time::us(2);

// GPUs 0, 1 -> 2 share link 0 (1 GB/s, e.g. the receiver's NIC); 0 -> 1 uses link 1 alone.
TableRoutes two_senders() {
  TableRoutes r(3, {gbytes_per_s(1), gbytes_per_s(1)});
  r.set(0, 2, {Path{{0}, {}, kLatency, {}}});
  r.set(1, 2, {Path{{0}, {}, kLatency, {}}});
  r.set(0, 1, {Path{{1}, {}, kLatency, {}}});
  return r;
}

TEST(FluidNetwork, LoneTransferTakesLatencyPlusSerialisation) {
  const TableRoutes routes = two_senders();
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::us(0.1));
  Time done = Time::max();
  net.send(0, 1, Bytes{1'000'000}, [&](Time t) { done = t; });
  clock.run();
  // 2 us + 1 MB / 1 GB/s = 1002 us
  EXPECT_EQ(done, Time::us(1002));
  EXPECT_EQ(net.in_flight(), 0);
  EXPECT_EQ(net.link_usage()[1].bytes, Bytes{1'000'000});
  EXPECT_DOUBLE_EQ(net.link_usage()[1].peak_utilisation, 1.0);
}

// 1 MB and 2 MB share link 0 at 0.5 GB/s each: the first ends at 2 ms (+ latency); the second
// has 1 MB left and then runs alone at 1 GB/s: 3 ms (+ latency).
TEST(FluidNetwork, SharersSpeedUpWhenOneLeaves) {
  const TableRoutes routes = two_senders();
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::us(0.1));
  Time a = Time::max(), b = Time::max();
  net.send(0, 2, Bytes{1'000'000}, [&](Time t) { a = t; });
  net.send(1, 2, Bytes{2'000'000}, [&](Time t) { b = t; });
  clock.run();
  EXPECT_EQ(a, Time::us(2002));
  EXPECT_EQ(b, Time::us(3002));
  EXPECT_EQ(net.link_usage()[0].bytes, Bytes{3'000'000});
  EXPECT_DOUBLE_EQ(net.link_usage()[0].peak_utilisation, 1.0);
}

// A transfer started later joins the sharing when its latency is paid.
TEST(FluidNetwork, LateStarterSharesFromItsArrival) {
  const TableRoutes routes = two_senders();
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::zero());
  Time a = Time::max(), b = Time::max();
  net.send(0, 2, Bytes{2'000'000}, [&](Time t) { a = t; });
  clock.at(Time::us(1000), [&] { net.send(1, 2, Bytes{500'000}, [&](Time t) { b = t; }); });
  clock.run();
  // a alone from 2 us to 1002 us: 1 MB moved, 1 MB left. Both share 0.5 GB/s from 1002 us: b's
  // 0.5 MB ends at 2002 us; a has 0.5 MB left, alone: 2502 us.
  EXPECT_EQ(b, Time::us(2002));
  EXPECT_EQ(a, Time::us(2502));
}

// Queue pairs: the bytes split over sub-flows; sharing one link they still take size / capacity.
TEST(FluidNetwork, QueuePairsSplitTheBytes) {
  TableRoutes routes(2, {gbytes_per_s(1), gbytes_per_s(1), gbytes_per_s(1)});
  routes.set(0, 1, {Path{{0, 1}, {}, kLatency, {}}, Path{{0, 2}, {}, kLatency, {}}});
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::us(0.1));
  Time done = Time::max();
  net.send(0, 1, Bytes{1'000'001}, [&](Time t) { done = t; });
  clock.run();
  EXPECT_EQ(net.flow_count(), 2);
  EXPECT_EQ(net.link_usage()[1].bytes + net.link_usage()[2].bytes, Bytes{1'000'001});
  EXPECT_NEAR(done.as_us(), 1002.001, 1e-3);
}

// Completions 50 ns apart merge into one event at the later time (tolerance 100 ns): no
// transfer ever completes before its exact time, none more than the tolerance after it.
TEST(FluidNetwork, MergedCompletionsAreNeverEarly) {
  TableRoutes routes(3, {gbytes_per_s(1), gbytes_per_s(1)});
  routes.set(0, 1, {Path{{0}, {}, Time::zero(), {}}});
  routes.set(0, 2, {Path{{1}, {}, Time::zero(), {}}});
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::ns(100));
  Time a = Time::max(), b = Time::max();
  net.send(0, 1, Bytes{1'000'000}, [&](Time t) { a = t; });   // 1 ms
  net.send(0, 2, Bytes{1'000'050}, [&](Time t) { b = t; });   // 1 ms + 50 ns
  clock.run();
  EXPECT_EQ(a, Time::ns(1'000'050));
  EXPECT_EQ(b, Time::ns(1'000'050));
  EXPECT_EQ(net.solves(), 2);  // start, one merged completion
}

TEST(FluidNetwork, ZeroBytesAndSameGpu) {
  const TableRoutes routes = two_senders();
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::us(0.1));
  Time empty = Time::max(), self = Time::max();
  bool inside_send = true;
  net.send(0, 1, Bytes{0}, [&](Time t) { empty = t; EXPECT_FALSE(inside_send); });
  net.send(2, 2, Bytes{1'000}, [&](Time t) { self = t; EXPECT_FALSE(inside_send); });
  inside_send = false;
  clock.run();
  EXPECT_EQ(empty, kLatency);
  EXPECT_EQ(self, Time::zero());
}

// Callbacks may start new transfers (a collective's next step).
TEST(FluidNetwork, CompletionCallbackCanSendAgain) {
  const TableRoutes routes = two_senders();
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::us(0.1));
  Time second = Time::max();
  net.send(0, 1, Bytes{1'000'000}, [&](Time) {
    net.send(0, 1, Bytes{1'000'000}, [&](Time t) { second = t; });
  });
  clock.run();
  EXPECT_EQ(second, Time::us(2004));
}

// Flows on one path share one solver flow (a bundle) whose members come and go: A 3 MB and B 1 MB
// from 0 at 0.5 GB/s each; at 1 ms (A 2.5 MB left, B 0.5 MB) C 1 MB joins and all run at 1/3 GB/s:
// B ends at 2.5 ms; A (2 MB left) and C (0.5 MB) at 0.5 GB/s: C ends at 3.5 ms; A alone, 1.5 MB
// at 1 GB/s: 5 ms. Equal members finish in one event and one solve.
TEST(FluidNetwork, FlowsOnOnePathJoinAndLeaveAtTheirOwnTimes) {
  TableRoutes routes(4, {gbytes_per_s(1)});
  for (GpuId g = 0; g < 3; ++g) routes.set(g, 3, {Path{{0}, {}, Time::zero(), {}}});
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::zero());
  Time a = Time::max(), b = Time::max(), c = Time::max();
  net.send(0, 3, Bytes{3'000'000}, [&](Time t) { a = t; });
  net.send(1, 3, Bytes{1'000'000}, [&](Time t) { b = t; });
  clock.at(Time::ms(1), [&] { net.send(2, 3, Bytes{1'000'000}, [&](Time t) { c = t; }); });
  clock.run();
  EXPECT_EQ(b, Time::us(2500));
  EXPECT_EQ(c, Time::us(3500));
  EXPECT_EQ(a, Time::us(5000));
  EXPECT_EQ(net.solves(), 5);  // start, C's start, three ends

  ManualClock again;
  FluidNetwork equal(routes, again, Time::zero());
  std::vector<Time> done(3, Time::max());
  for (GpuId g = 0; g < 3; ++g) equal.send(g, 3, Bytes{1'000'000}, [&done, g](Time t) { done[g] = t; });
  again.run();
  EXPECT_EQ(done, std::vector<Time>(3, Time::ms(3)));
  EXPECT_EQ(equal.solves(), 2);  // start, one end for all three
}

// rate_tolerance r: the finished flow completes on time; the bandwidth it frees idles for r x its
// lifetime (0.01 x 2000 us = 20 us), in which b moves 10 kB at 0.5 GB/s instead of 20 kB at 1 GB/s:
// b ends 10 us late, at 3012 us, and never early.
TEST(FluidNetwork, RateToleranceLetsFreedBandwidthIdleForAShareOfTheFlowsLife) {
  const TableRoutes routes = two_senders();
  ManualClock clock;
  FluidNetwork net(routes, clock, Time::us(0.1), 0.01);
  Time a = Time::max(), b = Time::max();
  net.send(0, 2, Bytes{1'000'000}, [&](Time t) { a = t; });
  net.send(1, 2, Bytes{2'000'000}, [&](Time t) { b = t; });
  clock.run();
  EXPECT_EQ(a, Time::us(2002));
  EXPECT_EQ(b, Time::us(3012));
}

// Many flows of different sizes on one link finish one by one: each finish is a solve when exact,
// a few when the freed bandwidth may idle 5% of a flow's life; no flow ends early, none more than
// 5% of its life late.
TEST(FluidNetwork, RateToleranceSavesSolvesWithinItsBound) {
  constexpr int kFlows = 200;
  TableRoutes routes(kFlows + 1, {gbytes_per_s(1)});
  for (int g = 0; g < kFlows; ++g) routes.set(g, kFlows, {Path{{0}, {}, Time::zero(), {}}});
  const auto run = [&](double tolerance, std::vector<Time>& done) {
    ManualClock clock;
    FluidNetwork net(routes, clock, Time::zero(), tolerance);
    done.assign(kFlows, Time::max());
    for (int g = 0; g < kFlows; ++g) {
      net.send(g, kFlows, Bytes{100'000 + 1'000LL * g}, [&done, g](Time t) { done[g] = t; });
    }
    clock.run();
    return net.solves();
  };
  std::vector<Time> exact, tolerant;
  const int64_t exact_solves = run(0.0, exact);
  const int64_t tolerant_solves = run(0.05, tolerant);
  EXPECT_GE(exact_solves, kFlows);
  EXPECT_LT(tolerant_solves, exact_solves / 4);
  for (int g = 0; g < kFlows; ++g) {
    EXPECT_GE(tolerant[g], exact[g]) << g;
    EXPECT_LE(tolerant[g].as_s(), 1.05 * exact[g].as_s()) << g;
  }
}

}  // namespace
}  // namespace clustersim::net
