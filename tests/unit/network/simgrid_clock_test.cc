// SPDX-License-Identifier: Apache-2.0
// SimGridClock: exact times, same-time order, cancel, actions scheduling actions.
#include "sim/engine/simgrid_clock.h"

#include <gtest/gtest.h>
#include <simgrid/s4u/Engine.hpp>

#include <string>
#include <vector>

namespace clustersim::engine {
namespace {

TEST(SimGridClock, RunsActionsAtTheirTimeInOrder) {
  auto* engine = simgrid::s4u::Engine::get_instance();
  SimGridClock clock;
  std::vector<std::string> log;
  clock.at(Time::us(5), [&] { log.push_back("b@" + std::to_string(clock.now().as_ps())); });
  clock.at(Time::us(1), [&] {
    log.push_back("a@" + std::to_string(clock.now().as_ps()));
    clock.at(clock.now(), [&] { log.push_back("a2@" + std::to_string(clock.now().as_ps())); });
  });
  clock.at(Time::us(5), [&] { log.push_back("c@" + std::to_string(clock.now().as_ps())); });
  const TimerId cancelled = clock.at(Time::us(3), [&] { log.push_back("never"); });
  clock.cancel(cancelled);
  clock.cancel(cancelled);  // twice: nothing
  // Picosecond precision survives SimGrid's double clock.
  clock.at(Time::ps(1'234'567'890'123), [&] { log.push_back("p@" + std::to_string(clock.now().as_ps())); });
  ensure_simgrid_platform();
  engine->run();
  EXPECT_EQ(log, (std::vector<std::string>{"a@1000000", "a2@1000000", "b@5000000", "c@5000000",
                                           "p@1234567890123"}));
  EXPECT_EQ(clock.pending(), 0u);
  EXPECT_NEAR(simgrid::s4u::Engine::get_clock(), 1.234567890123, 1e-12);
}

TEST(SimGridClock, PastTimesRunNow) {
  auto* engine = simgrid::s4u::Engine::get_instance();
  SimGridClock clock;
  Time seen = Time::max();
  clock.at(Time::us(10), [&] { clock.at(Time::us(1), [&] { seen = clock.now(); }); });
  ensure_simgrid_platform();
  engine->run();
  EXPECT_EQ(seen, Time::us(10));
}

}  // namespace
}  // namespace clustersim::engine
