// SPDX-License-Identifier: Apache-2.0
// DcqcnRate: the reaction-point state machine, and the closed-form recovery time.
#include "sim/network/dcqcn/dcqcn_rate.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

namespace clustersim::net {

DcqcnRate::DcqcnRate(const DcqcnParams& params, Time start)
    : params_(&params),
      rc_(params.line_rate),
      rt_(params.line_rate),
      alpha_(params.initial_alpha),
      alpha_since_(start),
      last_cut_(Time::zero()) {}

double DcqcnRate::alpha(Time now) const {
  if (now <= alpha_since_) return alpha_;
  const double periods = std::floor((now - alpha_since_) / params_->alpha_interval);
  return alpha_ * std::pow(1.0 - params_->g, periods);
}

void DcqcnRate::on_cnp(Time now) {
  const Time interval = params_->decrease_interval;
  if (interval <= Time::zero() || cuts_ == 0 || now >= last_cut_ + interval) {
    cut(now);
    return;
  }
  cut_pending_ = true;
}

void DcqcnRate::cut(Time now) {
  const double a = alpha(now);
  // Without the clamp the target stays where no timer increase came since the last cut (HPCC's
  // CheckRateDecreaseMlx): CNPs in a row while a queue drains no longer pull it down with Rc
  // (each set Rt = Rc until 2026-12-07, under every preset: 400G NICs into 200G links, one flow
  // a link, read 3.67x the 400G ideal where max-min gives 1.99x; review).
  if (params_->clamp_target || timer_count_ > 0) rt_ = rc_;
  rc_ = std::max(params_->min_rate, rc_ * (1.0 - a / 2.0));
  alpha_ = (1.0 - params_->g) * a + params_->g;
  alpha_since_ = now;
  timer_count_ = 0;
  byte_count_ = 0;
  bytes_acc_ = 0;
  next_increase_ = now + params_->increase_timer;
  last_cut_ = now;
  cut_pending_ = false;
  ++cuts_;
}

void DcqcnRate::increase() {
  const int f = params_->fast_recovery_steps;
  const bool bytes_on = params_->byte_counter > 0;
  // Without a byte counter the timer alone steps the stages, as HPCC's ns-3 RdmaHw
  // (RateIncEventMlx) does: F events of fast recovery, one of additive increase, then hyper
  // increase (until 2026-12-06 additive for ever: hpcc-simai never reached R_HAI).
  const int most = bytes_on ? std::max(timer_count_, byte_count_) : timer_count_;
  const int least = bytes_on ? std::min(timer_count_, byte_count_) : timer_count_ - 1;
  if (most > f) rt_ += least > f ? params_->rate_hai : params_->rate_ai;
  rt_ = std::min(rt_, params_->line_rate);
  rc_ = std::min((rt_ + rc_) / 2.0, params_->line_rate);
  // Within a part per billion of the line rate is the line rate (the halving never gets there).
  if (rc_ >= params_->line_rate * (1 - 1e-9)) rc_ = params_->line_rate;
}

void DcqcnRate::on_bytes(double bytes) {
  if (params_->byte_counter <= 0 || settled()) return;
  bytes_acc_ += bytes;
  while (bytes_acc_ >= params_->byte_counter && !settled()) {
    bytes_acc_ -= params_->byte_counter;
    ++byte_count_;
    increase();
  }
}

void DcqcnRate::advance(Time now) {
  while (true) {
    const Time cut_at = cut_pending_ ? last_cut_ + params_->decrease_interval : Time::max();
    const Time inc_at = settled() ? Time::max() : next_increase_;
    if (std::min(cut_at, inc_at) > now) return;
    if (cut_at <= inc_at) {
      cut(cut_at);
    } else {
      ++timer_count_;
      increase();
      next_increase_ = inc_at + params_->increase_timer;
    }
  }
}

void DcqcnRate::shift(Time by) {
  alpha_since_ += by;
  last_cut_ += by;
  if (next_increase_ != Time::max()) next_increase_ += by;
}

Time DcqcnRate::next_event() const {
  const Time cut_at = cut_pending_ ? last_cut_ + params_->decrease_interval : Time::max();
  return std::min(cut_at, settled() ? Time::max() : next_increase_);
}

double DcqcnRate::bytes_to_next_count() const {
  if (params_->byte_counter <= 0 || settled()) return std::numeric_limits<double>::infinity();
  return std::max(0.0, params_->byte_counter - bytes_acc_);
}

bool DcqcnRate::settled() const {
  return !cut_pending_ && rc_ >= params_->line_rate && rt_ >= params_->line_rate;
}

int64_t dcqcn_recovery_steps(const DcqcnParams& p, double rc0, double rt0, double target) {
  const double line = p.line_rate;
  assert(target < line && "the rate reaches the line rate only in the limit");
  if (rc0 >= target) return 0;
  const int f = p.fast_recovery_steps;
  // Fast recovery: the gap to Rt0 halves per step.
  if (target < rt0) {
    const auto k = static_cast<int64_t>(std::ceil(std::log2((rt0 - rc0) / (rt0 - target)) - 1e-12));
    // With Rt0 at the line rate the additive steps cannot raise Rt: the halving goes on.
    if (k <= f || rt0 >= line) return std::max<int64_t>(k, 1);
  }
  const double rc_f = rt0 - (rt0 - rc0) / std::ldexp(1.0, f);
  // Rt_j = base + j x step after F: one R_AI then R_HAI steps on the timer alone.
  const double a = p.rate_hai;
  const double base = rt0 + p.rate_ai - a;
  if (a <= 0 || p.rate_ai <= 0) return -1;
  const double c = rc_f - base + a;
  auto rc_at = [&](int64_t j) { return base + j * a - a + c / std::ldexp(1.0, static_cast<int>(std::min<int64_t>(j, 1000))); };
  // Increase phase until Rt reaches the line rate at step j_cap (where Rt is clamped).
  const auto j_cap = std::max<int64_t>(1, static_cast<int64_t>(std::ceil((line - base) / a - 1e-12)));
  if (j_cap > 1 && rc_at(j_cap - 1) >= target) {
    // Smallest j with rc_at(j) >= target: near (target - base + a) / a, corrected for the 2^-j term.
    int64_t j = std::max<int64_t>(1, static_cast<int64_t>(std::floor((target - base + a) / a)) - 2);
    while (rc_at(j) < target) ++j;
    while (j > 1 && rc_at(j - 1) >= target) --j;
    return f + j;
  }
  const double rc_cap = (line + rc_at(j_cap - 1)) / 2.0;
  if (rc_cap >= target) return f + j_cap;
  const int64_t jc = j_cap;
  const auto m = static_cast<int64_t>(std::ceil(std::log2((line - rc_cap) / (line - target)) - 1e-12));
  return f + jc + m;
}

}  // namespace clustersim::net
