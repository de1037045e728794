// SPDX-License-Identifier: Apache-2.0
// A Clock for tests: the engine's ordered action queue, run by hand, no SimGrid.
#pragma once

#include "sim/engine/event_queue_clock.h"

namespace clustersim::net::testing {

using ManualClock = engine::EventQueueClock;

}  // namespace clustersim::net::testing
