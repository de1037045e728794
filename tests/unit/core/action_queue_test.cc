// SPDX-License-Identifier: Apache-2.0
// ActionQueue: (time, scheduling) order, cancellation and id reuse, against an ordered map on
// random pushes, cancels and pops.
#include "sim/core/action_queue.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace clustersim {
namespace {

TEST(ActionQueue, SameTimeActionsLeaveInPushOrder) {
  ActionQueue q;
  std::string order;
  q.push(5, [&] { order += "c"; });
  q.push(1, [&] { order += "a"; });
  q.push(5, [&] { order += "d"; });
  q.push(1, [&] { order += "b"; });
  while (!q.empty()) q.pop().second();
  EXPECT_EQ(order, "abcd");
}

TEST(ActionQueue, CancelRemovesOnlyThePendingActionItNames) {
  ActionQueue q;
  std::string order;
  const TimerId a = q.push(1, [&] { order += "a"; });
  EXPECT_NE(a, 0u);
  q.cancel(a);
  EXPECT_TRUE(q.empty());
  // The slot is reused: the old id must not cancel the new action.
  const TimerId b = q.push(2, [&] { order += "b"; });
  EXPECT_NE(a, b);
  q.cancel(a);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.next_time(), 2);
  q.pop().second();
  q.cancel(b);  // already left: nothing
  EXPECT_EQ(order, "b");
  EXPECT_TRUE(q.empty());
}

// Random pushes, cancels and pops against std::map keyed (time, push number): the same actions
// leave in the same order, through many cancelled entries (the heap rebuilds past 64).
TEST(ActionQueue, MatchesAnOrderedMapUnderRandomOperations) {
  for (const unsigned seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    ActionQueue q;
    std::map<std::pair<int64_t, int>, int> reference;  // (time, push number) -> label
    std::vector<std::pair<TimerId, std::pair<int64_t, int>>> ids;
    std::vector<int> from_queue, from_map;
    int pushed = 0;
    for (int step = 0; step < 20'000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (op < 5) {
        const int64_t t = static_cast<int64_t>(rng() % 500);
        const int label = pushed++;
        ids.push_back({q.push(t, [&from_queue, label] { from_queue.push_back(label); }), {t, label}});
        reference[{t, label}] = label;
      } else if (op < 8 && !ids.empty()) {
        const size_t i = rng() % ids.size();
        q.cancel(ids[i].first);
        reference.erase(ids[i].second);
        ids[i] = ids.back();
        ids.pop_back();
      } else if (!reference.empty()) {
        ASSERT_FALSE(q.empty());
        EXPECT_EQ(q.next_time(), reference.begin()->first.first);
        q.pop().second();
        from_map.push_back(reference.begin()->second);
        reference.erase(reference.begin());
      }
      ASSERT_EQ(q.size(), reference.size());
    }
    while (!reference.empty()) {
      q.pop().second();
      from_map.push_back(reference.begin()->second);
      reference.erase(reference.begin());
    }
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(from_queue, from_map) << "seed " << seed;
  }
}

}  // namespace
}  // namespace clustersim
