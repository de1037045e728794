// SPDX-License-Identifier: Apache-2.0
// MaxMinSolver on hand-checked cases: sharing, bottlenecks, equal weights, removal, shares.
#include "sim/network/flow/max_min_solver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace clustersim::net {
namespace {

std::vector<LinkIndex> path(std::initializer_list<LinkIndex> links) { return links; }

TEST(MaxMinSolver, LoneFlowGetsItsBottleneck) {
  MaxMinSolver s({10.0, 5.0, 8.0});
  const FlowIndex f = s.add_flow(path({0, 1, 2}));
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(f), 5.0);
  EXPECT_DOUBLE_EQ(s.load(0), 5.0);
}

TEST(MaxMinSolver, FlowsOnOneLinkShareEqually) {
  MaxMinSolver s({12.0});
  std::vector<FlowIndex> f;
  for (int i = 0; i < 3; ++i) f.push_back(s.add_flow(path({0})));
  s.solve();
  for (const FlowIndex x : f) EXPECT_DOUBLE_EQ(s.rate(x), 4.0);
}

// Parking lot: f0 crosses links 0 and 1, f1 only 0, f2 only 1; all get half a link.
TEST(MaxMinSolver, ParkingLot) {
  MaxMinSolver s({10.0, 10.0});
  const FlowIndex f0 = s.add_flow(path({0, 1}));
  const FlowIndex f1 = s.add_flow(path({0}));
  const FlowIndex f2 = s.add_flow(path({1}));
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(f0), 5.0);
  EXPECT_DOUBLE_EQ(s.rate(f1), 5.0);
  EXPECT_DOUBLE_EQ(s.rate(f2), 5.0);
}

// Link 1 (4) holds f1 and f2 at 2 each; f0 then takes what f1 leaves on link 0: 10 - 2 = 8.
TEST(MaxMinSolver, FrozenFlowsLeaveCapacityToOthers) {
  MaxMinSolver s({10.0, 4.0});
  const FlowIndex f0 = s.add_flow(path({0}));
  const FlowIndex f1 = s.add_flow(path({0, 1}));
  const FlowIndex f2 = s.add_flow(path({1}));
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(f1), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(f2), 2.0);
  EXPECT_DOUBLE_EQ(s.rate(f0), 8.0);
}

// SimGrid's CM02 would give the shorter flow more (weight = path latency); we give equal shares.
TEST(MaxMinSolver, PathLengthDoesNotWeighTheShare) {
  MaxMinSolver s({10.0, 100.0, 100.0, 100.0, 100.0});
  const FlowIndex long_flow = s.add_flow(path({1, 2, 0, 3, 4}));
  const FlowIndex short_flow = s.add_flow(path({0}));
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(long_flow), 5.0);
  EXPECT_DOUBLE_EQ(s.rate(short_flow), 5.0);
}

TEST(MaxMinSolver, RemovalGivesCapacityBackAndReportsOnlyChanges) {
  MaxMinSolver s({10.0, 10.0});
  const FlowIndex a = s.add_flow(path({0}));
  const FlowIndex b = s.add_flow(path({0}));
  const FlowIndex other = s.add_flow(path({1}));  // another component
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(a), 5.0);
  s.remove_flow(b);
  const std::vector<FlowIndex> changed = s.solve();
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0], a);
  EXPECT_DOUBLE_EQ(s.previous_rate(a), 5.0);
  EXPECT_DOUBLE_EQ(s.rate(a), 10.0);
  EXPECT_DOUBLE_EQ(s.rate(other), 10.0);
  EXPECT_EQ(s.flow_count(), 2);
}

// A sprayed flow puts half its rate on each of two parallel links (1 and 2); a plain flow shares
// link 1. Both rise together until link 1 fills: 0.5 x + x = 10, x = 20/3 each; link 2 then
// carries 10/3 and the host link (0) 20/3.
TEST(MaxMinSolver, SharesSplitASprayedFlow) {
  MaxMinSolver s({10.0, 10.0, 10.0});
  const std::vector<LinkIndex> links = {0, 1, 2};
  const std::vector<double> shares = {1.0, 0.5, 0.5};
  const FlowIndex sprayed = s.add_flow(links, shares);
  const FlowIndex plain = s.add_flow(path({1}));
  s.solve();
  EXPECT_DOUBLE_EQ(s.rate(sprayed), 20.0 / 3);
  EXPECT_DOUBLE_EQ(s.rate(plain), 20.0 / 3);
  EXPECT_DOUBLE_EQ(s.load(0), 20.0 / 3);
  EXPECT_DOUBLE_EQ(s.load(1), 10.0);
  EXPECT_DOUBLE_EQ(s.load(2), 10.0 / 3);
}

TEST(MaxMinSolver, FailedLinkStallsItsFlows) {
  MaxMinSolver s({0.0, 10.0});
  const FlowIndex f = s.add_flow(path({0, 1}));
  const FlowIndex g = s.add_flow(path({1}));
  s.solve();
  EXPECT_EQ(s.rate(f), 0.0);
  EXPECT_DOUBLE_EQ(s.rate(g), 10.0);
}

TEST(MaxMinSolver, IndicesAreReused) {
  MaxMinSolver s({1.0});
  const FlowIndex a = s.add_flow(path({0}));
  s.remove_flow(a);
  EXPECT_EQ(s.add_flow(path({0})), a);
}

}  // namespace
}  // namespace clustersim::net
