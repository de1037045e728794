// SPDX-License-Identifier: Apache-2.0
// AnalyticalNetwork: latency + bytes / bottleneck, no contention, offered load per link.
#include "sim/network/analytical/analytical_network.h"

#include <gtest/gtest.h>

#include <utility>

#include "manual_clock.h"
#include "sim/core/error.h"
#include "sim/network/make_network.h"
#include "table_routes.h"

namespace clustersim::net {
namespace {

using testing::ManualClock;
using testing::TableRoutes;

TEST(AnalyticalNetwork, LatencyPlusBytesOverBottleneck) {
  TableRoutes routes(2, {gbytes_per_s(2), gbytes_per_s(1)});
  routes.set(0, 1, {Path{{0, 1}, {}, Time::us(3), {}}});
  ManualClock clock;
  AnalyticalNetwork net(routes, clock);
  Time done = Time::max();
  net.send(0, 1, Bytes{1'000'000}, [&](Time t) { done = t; });
  clock.run();
  EXPECT_EQ(done, Time::us(1003));  // 3 us + 1 MB / 1 GB/s
}

// Two transfers over one link do not slow each other; the link reports offered load 2.
TEST(AnalyticalNetwork, NoContentionButOfferedLoad) {
  TableRoutes routes(3, {gbytes_per_s(1)});
  routes.set(0, 2, {Path{{0}, {}, Time::zero(), {}}});
  routes.set(1, 2, {Path{{0}, {}, Time::zero(), {}}});
  ManualClock clock;
  AnalyticalNetwork net(routes, clock);
  Time a = Time::max(), b = Time::max();
  net.send(0, 2, Bytes{1'000'000}, [&](Time t) { a = t; });
  net.send(1, 2, Bytes{1'000'000}, [&](Time t) { b = t; });
  clock.run();
  EXPECT_EQ(a, Time::ms(1));
  EXPECT_EQ(b, Time::ms(1));
  EXPECT_DOUBLE_EQ(net.link_usage()[0].peak_utilisation, 2.0);
  EXPECT_EQ(net.link_usage()[0].bytes, Bytes{2'000'000});
}

// 1 MB over two queue pairs, a NIC link of `nic` then one switch link of 1 GB/s each: the time,
// and the NIC link's peak utilisation.
std::pair<Time, double> two_queue_pairs(Bandwidth nic) {
  TableRoutes routes(2, {nic, gbytes_per_s(1), gbytes_per_s(1)});
  routes.set(0, 1, {Path{{0, 1}, {}, Time::zero(), {}}, Path{{0, 2}, {}, Time::zero(), {}}});
  ManualClock clock;
  AnalyticalNetwork net(routes, clock);
  Time done = Time::max();
  net.send(0, 1, Bytes{1'000'000}, [&](Time t) { done = t; });
  clock.run();
  return {done, net.link_usage()[0].peak_utilisation};
}

// Where the NIC binds, queue pairs leave an idle-fabric transfer time unchanged.
TEST(AnalyticalNetwork, QueuePairsDoNotChangeTheTime) {
  const auto [done, nic_peak] = two_queue_pairs(gbytes_per_s(1));
  EXPECT_EQ(done, Time::ms(1));
  EXPECT_DOUBLE_EQ(nic_peak, 1.0);
}

// Queue pairs over switch links slower than the NIC use them side by side: two paths of 1 GB/s
// behind a 4 GB/s NIC carry 1 MB in 0.5 ms, as the flow level shares them (before 2026-11-22 each
// sub-flow got half its path's 1 GB/s bottleneck: 1 ms).
TEST(AnalyticalNetwork, QueuePairsUseSlowerFabricLinksSideBySide) {
  EXPECT_EQ(two_queue_pairs(gbytes_per_s(4)).first, Time::us(500));
}

TEST(MakeNetwork, CongestionLevelsNeedAClosFabric) {
  TableRoutes routes(2, {gbytes_per_s(1)});
  ManualClock clock;
  for (const Fidelity f : {Fidelity::kFlowDcqcn, Fidelity::kPacket}) {
    NetworkConfig cfg;
    cfg.fidelity = f;
    try {
      make_network(cfg, routes, clock);
      FAIL() << "expected BadInput for " << to_string(f);
    } catch (const BadInput& e) {
      ASSERT_EQ(e.errors().size(), 1u);
      EXPECT_EQ(e.errors()[0].key_path, "network.fidelity");
      EXPECT_NE(e.errors()[0].message.find("needs a Clos fabric"), std::string::npos);
    }
  }
  NetworkConfig analytical;
  EXPECT_NE(dynamic_cast<AnalyticalNetwork*>(make_network(analytical, routes, clock).get()), nullptr);
}

}  // namespace
}  // namespace clustersim::net
