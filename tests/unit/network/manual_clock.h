// SPDX-License-Identifier: Apache-2.0
// A Clock for tests: an ordered action queue run by hand, no SimGrid.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

#include "sim/core/clock.h"

namespace clustersim::net::testing {

class ManualClock final : public Clock {
 public:
  Time now() const override { return now_; }
  TimerId at(Time when, std::function<void()> action) override {
    const TimerId id = next_id_++;
    const Time t = max(when, now_);
    queue_.emplace(std::pair{t.as_ps(), id}, std::move(action));
    time_of_.emplace(id, t.as_ps());
    return id;
  }
  void cancel(TimerId id) override {
    const auto it = time_of_.find(id);
    if (it == time_of_.end()) return;
    queue_.erase(std::pair{it->second, id});
    time_of_.erase(it);
  }
  // Runs every action in (time, scheduling) order until none is left.
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

}  // namespace clustersim::net::testing
