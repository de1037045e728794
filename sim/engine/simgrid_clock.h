// SPDX-License-Identifier: Apache-2.0
// core's Clock over SimGrid's simulated time: models schedule actions, the s4u::Engine runs them.
#pragma once

#include <cstdint>
#include <functional>

#include "sim/core/action_queue.h"
#include "sim/core/clock.h"

namespace simgrid::kernel::timer {
class Timer;
}
namespace simgrid::s4u {
class Engine;
}

namespace clustersim::engine {

// The process's s4u::Engine, created on first use with SimGrid's log at warnings only. SimGrid
// catches Ctrl-C to print its actors' status and exit(1) from the handler, which ran the
// process's destructors under a running simulation (a segmentation fault on a serving run, and
// exit 1 without a word on a flow run; until 2026-12-07): SIGINT gets back what it had before
// (the default, so the process stops as any other does, the shell's 130; or ignored under nohup).
simgrid::s4u::Engine* simgrid_engine();

// Actions are kept in our own queue ordered by (time, scheduling order) and one SimGrid kernel
// timer is armed at the earliest of them, so same-time actions run in the order they were
// scheduled (SimGrid's timer heap does not promise that) and times stay exact picoseconds.
//
// Needs an s4u::Engine to exist (one per process); run it with Engine::run(). While an action
// runs, now() is that action's time exactly; otherwise it is SimGrid's clock rounded to 1 ps.
class SimGridClock final : public Clock {
 public:
  SimGridClock();
  ~SimGridClock() override;
  SimGridClock(const SimGridClock&) = delete;
  SimGridClock& operator=(const SimGridClock&) = delete;

  Time now() const override;
  // `when` earlier than now() runs at now().
  TimerId at(Time when, std::function<void()> action) override;
  void cancel(TimerId id) override;
  Time next_due() const override { return queue_.next_due(); }

  // Actions scheduled and not yet run or cancelled.
  size_t pending() const { return queue_.size(); }

 private:
  void arm();
  void fire();

  ActionQueue queue_;
  simgrid::kernel::timer::Timer* timer_ = nullptr;
  int64_t armed_ps_ = 0;
  int64_t current_ps_ = 0;  // time of the action running (or last run)
  bool dispatching_ = false;
};

// SimGrid's Engine::run() needs a platform. Models that use only timers (the fluid and
// analytical networks) build none, so this creates an empty root zone when there is none yet.
void ensure_simgrid_platform();

}  // namespace clustersim::engine
