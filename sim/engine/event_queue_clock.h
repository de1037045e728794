// SPDX-License-Identifier: Apache-2.0
// A Clock without SimGrid: an ordered action queue run to completion. For the flow level's fluid
// solver, which needs only timers, in tests that run several simulations in one process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "sim/core/clock.h"

namespace clustersim::engine {

// Actions run in (time, scheduling order); same-time actions keep the order they were scheduled.
class EventQueueClock final : public Clock {
 public:
  Time now() const override { return now_; }
  TimerId at(Time when, std::function<void()> action) override {
    const TimerId id = next_id_++;
    const int64_t t = std::max(when.as_ps(), now_.as_ps());
    queue_.emplace(std::pair{t, id}, std::move(action));
    time_of_.emplace(id, t);
    return id;
  }
  void cancel(TimerId id) override {
    const auto it = time_of_.find(id);
    if (it == time_of_.end()) return;
    queue_.erase(std::pair{it->second, id});
    time_of_.erase(it);
  }
  // Runs every action until none is left.
  void run() {
    while (!queue_.empty()) {
      auto node = queue_.extract(queue_.begin());
      time_of_.erase(node.key().second);
      now_ = Time::ps(node.key().first);
      node.mapped()();
    }
  }

 private:
  Time now_ = Time::zero();
  TimerId next_id_ = 1;
  std::map<std::pair<int64_t, TimerId>, std::function<void()>> queue_;
  std::unordered_map<TimerId, int64_t> time_of_;
};

}  // namespace clustersim::engine
