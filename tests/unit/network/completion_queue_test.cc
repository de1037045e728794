// SPDX-License-Identifier: Apache-2.0
// CompletionQueue: (time, flow) order, moves and removals, checked against an ordered set.
#include "sim/network/flow/internal/completion_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <utility>

namespace clustersim::net::internal {
namespace {

TEST(CompletionQueue, EqualTimesPopLowestFlowFirst) {
  CompletionQueue q;
  q.set(7, 2.0);
  q.set(3, 2.0);
  q.set(5, 1.0);
  q.set(1, 2.0);
  EXPECT_EQ(q.pop().flow, 5u);
  EXPECT_EQ(q.pop().flow, 1u);
  EXPECT_EQ(q.pop().flow, 3u);
  EXPECT_EQ(q.pop().flow, 7u);
  EXPECT_TRUE(q.empty());
}

TEST(CompletionQueue, SetMovesTheOneEntry) {
  CompletionQueue q;
  q.set(0, 1.0);
  q.set(1, 2.0);
  q.set(2, 3.0);
  q.set(0, 4.0);  // later: below the others
  q.set(2, 0.5);  // earlier: to the top
  EXPECT_EQ(q.size(), 3u);
  EXPECT_EQ(q.pop().flow, 2u);
  EXPECT_EQ(q.pop().flow, 1u);
  const CompletionQueue::Entry last = q.pop();
  EXPECT_EQ(last.flow, 0u);
  EXPECT_EQ(last.time, 4.0);
}

TEST(CompletionQueue, EraseLeavesTheRest) {
  CompletionQueue q;
  for (uint32_t f = 0; f < 10; ++f) q.set(f, 10.0 - f);
  q.erase(9);
  q.erase(4);
  q.erase(42);  // never added: no-op
  EXPECT_FALSE(q.contains(4));
  EXPECT_TRUE(q.contains(5));
  EXPECT_EQ(q.size(), 8u);
  EXPECT_EQ(q.pop().flow, 8u);
}

TEST(CompletionQueue, LatestDueIsTheLastTimeWithinTheLimit) {
  CompletionQueue q;
  q.set(0, 1.0);
  q.set(1, 1.5);
  q.set(2, 1.2);
  q.set(3, 3.0);
  EXPECT_EQ(q.latest_due(1.0), 1.0);
  EXPECT_EQ(q.latest_due(1.4), 1.2);
  EXPECT_EQ(q.latest_due(2.0), 1.5);
  EXPECT_EQ(q.latest_due(5.0), 3.0);
}

// Random sets, erases and pops, with many equal times: the queue must pop what an ordered set
// of (time, flow) pops, and latest_due must agree with a scan.
TEST(CompletionQueue, AgreesWithAnOrderedSet) {
  std::mt19937 rng(42);
  CompletionQueue q;
  std::set<std::pair<double, uint32_t>> ref;
  std::map<uint32_t, double> time_of;
  for (int step = 0; step < 200'000; ++step) {
    const uint32_t f = rng() % 500;
    const int op = static_cast<int>(rng() % 10);
    if (op < 6) {
      const double t = static_cast<double>(rng() % 64) * 0.25;  // ties on purpose
      if (auto it = time_of.find(f); it != time_of.end()) ref.erase({it->second, f});
      ref.insert({t, f});
      time_of[f] = t;
      q.set(f, t);
    } else if (op < 8) {
      if (auto it = time_of.find(f); it != time_of.end()) {
        ref.erase({it->second, f});
        time_of.erase(it);
      }
      q.erase(f);
    } else if (!ref.empty()) {
      const auto [t, g] = *ref.begin();
      const double limit = t + static_cast<double>(rng() % 8) * 0.25;
      double latest = t;
      for (const auto& [u, h] : ref) {
        if (u <= limit) latest = std::max(latest, u);
      }
      ASSERT_EQ(q.latest_due(limit), latest);
      const CompletionQueue::Entry e = q.pop();
      ASSERT_EQ(e.flow, g);
      ASSERT_EQ(e.time, t);
      ref.erase(ref.begin());
      time_of.erase(g);
    }
    ASSERT_EQ(q.size(), ref.size());
  }
}

}  // namespace
}  // namespace clustersim::net::internal
