// SPDX-License-Identifier: Apache-2.0
// SimGridClock: an ordered action queue behind a single SimGrid kernel timer.
#include "sim/engine/simgrid_clock.h"

#include <signal.h>

#include <simgrid/kernel/Timer.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

namespace clustersim::engine {

namespace {

int64_t engine_now_ps() { return std::llround(simgrid::s4u::Engine::get_clock() * 1e12); }

}  // namespace

simgrid::s4u::Engine* simgrid_engine() {
  if (simgrid::s4u::Engine::has_instance()) return simgrid::s4u::Engine::get_instance();
  xbt_log_control_set("root.thresh:warning");
  // SIGINT as it was before SimGrid took it (the default, or ignored under nohup).
  struct sigaction before {};
  ::sigaction(SIGINT, nullptr, &before);
  simgrid::s4u::Engine* engine = simgrid::s4u::Engine::get_instance();
  ::sigaction(SIGINT, &before, nullptr);
  return engine;
}

SimGridClock::SimGridClock() {
  if (!simgrid::s4u::Engine::has_instance()) {
    throw std::logic_error("SimGridClock needs an s4u::Engine (create one first)");
  }
  current_ps_ = engine_now_ps();
}

SimGridClock::~SimGridClock() {
  if (timer_ != nullptr) timer_->remove();
}

Time SimGridClock::now() const {
  if (dispatching_) return Time::ps(current_ps_);
  return Time::ps(std::max(current_ps_, engine_now_ps()));
}

TimerId SimGridClock::at(Time when, std::function<void()> action) {
  const TimerId id = queue_.push(std::max(when.as_ps(), now().as_ps()), std::move(action));
  if (!dispatching_) arm();
  return id;
}

void SimGridClock::cancel(TimerId id) {
  queue_.cancel(id);
  // A timer armed for an earlier action just finds nothing to do; leaving it is cheaper than
  // re-arming on every cancel.
}

void SimGridClock::arm() {
  if (queue_.empty()) return;
  const int64_t first = queue_.next_time();
  if (timer_ != nullptr) {
    if (armed_ps_ <= first) return;  // already due no later than the earliest action
    timer_->remove();
  }
  armed_ps_ = first;
  // Rounding to picoseconds may put `first` a hair before SimGrid's double clock, which SimGrid
  // refuses ("in the past already").
  const double date = std::max(static_cast<double>(first) * 1e-12, simgrid::s4u::Engine::get_clock());
  timer_ = simgrid::kernel::timer::Timer::set(date, [this] { fire(); });
}

void SimGridClock::fire() {
  timer_ = nullptr;
  // SimGrid's clock is a double; the armed time is the exact one.
  const int64_t now_ps = std::max(armed_ps_, current_ps_);
  dispatching_ = true;
  while (!queue_.empty() && queue_.next_time() <= now_ps) {
    auto [t, action] = queue_.pop();
    current_ps_ = std::max(current_ps_, t);
    action();
  }
  current_ps_ = now_ps;
  dispatching_ = false;
  arm();
}

void ensure_simgrid_platform() {
  auto* engine = simgrid::s4u::Engine::get_instance();
  if (engine->get_netzone_root() == nullptr) simgrid::s4u::create_empty_zone("clustersim-timers")->seal();
}

}  // namespace clustersim::engine
