// SPDX-License-Identifier: Apache-2.0
// What models may ask of the simulation clock. sim/engine implements it over SimGrid; tests use a
// fake. Models take a Clock& and never include SimGrid.
#pragma once

#include <cstdint>
#include <functional>

#include "sim/core/units.h"

namespace clustersim {

using TimerId = uint64_t;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Time now() const = 0;
  // Runs `action` at simulated time `when` (>= now()). Actions due at the same time run in the
  // order they were scheduled.
  virtual TimerId at(Time when, std::function<void()> action) = 0;
  // Cancels a pending action; cancelling one that already ran or was cancelled does nothing.
  virtual void cancel(TimerId id) = 0;
  // The earliest pending action's time, Time::max() when none is pending. A model that steps
  // time on its own (the flow+dcqcn fluid) stops there, so that what the action sends joins it
  // at its time.
  virtual Time next_due() const = 0;
};

}  // namespace clustersim
