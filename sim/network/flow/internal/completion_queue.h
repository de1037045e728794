// SPDX-License-Identifier: Apache-2.0
// Indexed min-heap of sub-flow completion times: one entry per sub-flow, moved in place.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <vector>

namespace clustersim::net::internal {

// Completion times keyed by sub-flow, popped in (time, flow) order: equal times pop lowest flow
// first, so same-time completions fire in a fixed order. set() moves a flow's entry up or down
// (decrease/increase key) instead of leaving a stale copy behind, so the heap never holds more
// entries than flows with a pending completion. A 4-ary heap: half the depth of a binary one,
// and a node's children share a cache line.
class CompletionQueue {
 public:
  struct Entry {
    double time;  // s
    uint32_t flow;
  };

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  bool contains(uint32_t flow) const { return flow < pos_.size() && pos_[flow] != kAbsent; }
  // The earliest entry; the queue must not be empty.
  const Entry& top() const { return heap_.front(); }

  // Sets `flow`'s completion to `time`, adding the flow if it has none.
  void set(uint32_t flow, double time) {
    if (flow >= pos_.size()) pos_.resize(flow + 1, kAbsent);
    uint32_t i = pos_[flow];
    if (i == kAbsent) {
      i = static_cast<uint32_t>(heap_.size());
      heap_.push_back({time, flow});
      sift_up(i, {time, flow});
      return;
    }
    const Entry e{time, flow};
    if (before(e, heap_[i])) {
      sift_up(i, e);
    } else {
      sift_down(i, e);
    }
  }

  // Drops `flow`'s completion, if it has one.
  void erase(uint32_t flow) {
    if (!contains(flow)) return;
    const uint32_t i = pos_[flow];
    pos_[flow] = kAbsent;
    const Entry last = heap_.back();
    heap_.pop_back();
    if (i == heap_.size()) return;
    if (before(last, heap_[i])) {
      sift_up(i, last);
    } else {
      sift_down(i, last);
    }
  }

  // Removes and returns the earliest entry; the queue must not be empty.
  Entry pop() {
    assert(!heap_.empty() && "pop from an empty completion queue");
    const Entry first = heap_.front();
    erase(first.flow);
    return first;
  }

  // Calls visit(entry) for every entry due by `limit` (those form a subtree at the root, so the
  // walk visits only them and their children); `limit` must be at least top().time.
  template <typename Visit>
  void for_each_due(double limit, Visit&& visit) {
    assert(!heap_.empty() && heap_.front().time <= limit && "nothing due by the limit");
    stack_.clear();
    stack_.push_back(0);
    while (!stack_.empty()) {
      const size_t i = stack_.back();
      stack_.pop_back();
      visit(heap_[i]);
      const size_t end = std::min(heap_.size(), kArity * i + kArity + 1);
      for (size_t c = kArity * i + 1; c < end; ++c) {
        if (heap_[c].time <= limit) stack_.push_back(c);
      }
    }
  }

  // The latest time among the entries due by `limit`.
  double latest_due(double limit) {
    double latest = heap_.front().time;
    for_each_due(limit, [&latest](const Entry& e) { latest = std::max(latest, e.time); });
    return latest;
  }

 private:
  static constexpr uint32_t kAbsent = ~uint32_t{0};
  static constexpr size_t kArity = 4;

  // The order FluidNetwork has always used: by time, then by flow.
  static bool before(const Entry& a, const Entry& b) {
    return a.time < b.time || (a.time == b.time && a.flow < b.flow);
  }

  void place(size_t i, const Entry& e) {
    heap_[i] = e;
    pos_[e.flow] = static_cast<uint32_t>(i);
  }

  // Puts `e` at hole `i` or above.
  void sift_up(size_t i, const Entry& e) {
    while (i > 0) {
      const size_t parent = (i - 1) / kArity;
      if (!before(e, heap_[parent])) break;
      place(i, heap_[parent]);
      i = parent;
    }
    place(i, e);
  }

  // Puts `e` at hole `i` or below.
  void sift_down(size_t i, const Entry& e) {
    const size_t n = heap_.size();
    for (;;) {
      const size_t first_child = kArity * i + 1;
      if (first_child >= n) break;
      const size_t end = std::min(n, first_child + kArity);
      size_t best = first_child;
      for (size_t c = first_child + 1; c < end; ++c) {
        if (before(heap_[c], heap_[best])) best = c;
      }
      if (!before(heap_[best], e)) break;
      place(i, heap_[best]);
      i = best;
    }
    place(i, e);
  }

  std::vector<Entry> heap_;
  std::vector<uint32_t> pos_;  // flow -> its index in heap_, kAbsent if it has no entry
  std::vector<size_t> stack_;  // scratch for latest_due()
};

}  // namespace clustersim::net::internal
