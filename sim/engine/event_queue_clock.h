// SPDX-License-Identifier: Apache-2.0
// A Clock without SimGrid: an ordered action queue run to completion. For the flow level's fluid
// solver, which needs only timers, in tests that run several simulations in one process.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>

#include "sim/core/action_queue.h"
#include "sim/core/clock.h"

namespace clustersim::engine {

// Actions run in (time, scheduling order); same-time actions keep the order they were scheduled.
class EventQueueClock final : public Clock {
 public:
  Time now() const override { return now_; }
  TimerId at(Time when, std::function<void()> action) override {
    return queue_.push(std::max(when.as_ps(), now_.as_ps()), std::move(action));
  }
  void cancel(TimerId id) override { queue_.cancel(id); }
  Time next_due() const override { return queue_.next_due(); }
  // Runs every action until none is left.
  void run() {
    while (!queue_.empty()) {
      auto [t, action] = queue_.pop();
      now_ = Time::ps(t);
      action();
    }
  }

 private:
  Time now_ = Time::zero();
  ActionQueue queue_;
};

}  // namespace clustersim::engine
