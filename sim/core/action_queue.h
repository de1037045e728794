// SPDX-License-Identifier: Apache-2.0
// Timed actions in (time, scheduling order), with cancellation: the queue behind every Clock.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sim/core/clock.h"

namespace clustersim {

// A binary min-heap of (time, sequence) entries; the actions live in slots reused through a free
// list. A cancelled action's entry stays in the heap until it reaches the top, where its slot's
// generation no longer matches it; the heap is rebuilt without such entries once they outnumber
// the live ones four to one. The top entry is always live, so the earliest time is a lookup.
// Same-time actions leave in the order they were pushed. (Until 2026-12-06 the clocks kept an
// ordered map and a hash map of ids: an unfolded 12,288-GPU flow run spent about 8% there.)
class ActionQueue {
 public:
  // Ids are never 0, and an id is never reused while its action is pending.
  TimerId push(int64_t t_ps, std::function<void()> action) {
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    Slot& s = slots_[slot];
    s.action = std::move(action);
    s.live = true;
    ++live_;
    heap_.push_back({t_ps, next_seq_++, slot, s.generation});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    return (static_cast<TimerId>(s.generation) << 32) | slot;
  }

  // Cancelling an action that already left or was cancelled does nothing.
  void cancel(TimerId id) {
    const auto slot = static_cast<uint32_t>(id & 0xffffffffu);
    const auto generation = static_cast<uint32_t>(id >> 32);
    if (slot >= slots_.size() || slots_[slot].generation != generation || !slots_[slot].live) return;
    release(slot);
    if (heap_.size() > kRebuildFloor && heap_.size() > 4 * live_) {
      std::erase_if(heap_, [this](const Entry& e) { return stale(e); });
      std::make_heap(heap_.begin(), heap_.end(), Later{});
    }
    drop_stale();
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return live_; }  // actions pending
  // The earliest pending action's time, Time::max() when none is pending (Clock::next_due).
  Time next_due() const { return heap_.empty() ? Time::max() : Time::ps(heap_.front().t_ps); }
  // The earliest pending action's time; the queue must not be empty.
  int64_t next_time() const {
    assert(!heap_.empty());
    return heap_.front().t_ps;
  }

  // Removes the earliest pending action and returns its time and the action.
  std::pair<int64_t, std::function<void()>> pop() {
    assert(!heap_.empty());
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Entry e = heap_.back();
    heap_.pop_back();
    std::function<void()> action = std::move(slots_[e.slot].action);
    release(e.slot);
    drop_stale();
    return {e.t_ps, std::move(action)};
  }

 private:
  static constexpr size_t kRebuildFloor = 64;
  struct Entry {
    int64_t t_ps;
    uint64_t seq;
    uint32_t slot;
    uint32_t generation;
  };
  struct Later {  // the heap's order: the earliest (time, sequence) on top
    bool operator()(const Entry& a, const Entry& b) const {
      return a.t_ps != b.t_ps ? a.t_ps > b.t_ps : a.seq > b.seq;
    }
  };
  struct Slot {
    std::function<void()> action;
    uint32_t generation = 1;
    bool live = false;
  };

  bool stale(const Entry& e) const { return slots_[e.slot].generation != e.generation; }
  void release(uint32_t slot) {
    Slot& s = slots_[slot];
    s.action = nullptr;
    s.live = false;
    if (++s.generation == 0) s.generation = 1;  // ids stay nonzero
    --live_;
    free_.push_back(slot);
  }
  void drop_stale() {
    while (!heap_.empty() && stale(heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      heap_.pop_back();
    }
  }

  std::vector<Entry> heap_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
  uint64_t next_seq_ = 0;
};

}  // namespace clustersim
