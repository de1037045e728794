// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/reliability_sim.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <random>
#include <set>
#include <unordered_map>
#include <utility>

namespace clustersim::engine {
namespace {

constexpr double kSecondsPerDay = 86400.0;
// Arrivals further away than this are "never" (the window is at most 90 days), inside the range
// of simulated time (106 days).
constexpr double kNeverSeconds = 9e6;

// Uniform in [0, 1) from the top 53 bits: the same on every platform (std::uniform_real_distribution
// is not specified bit for bit).
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// Inverse-CDF exponential draw, in seconds.
double exponential_s(std::mt19937_64& rng, double rate_per_s) {
  if (rate_per_s <= 0) return kNeverSeconds * 2;
  return -std::log1p(-uniform01(rng)) / rate_per_s;
}

// A slow host, from its arrival until it is swapped out. Found by the job's step timers, so
// `detect_at` is in running time (Simulation::running_time_): recovery.straggler_detection of
// running after it arrives (since 2026-12-06; before, of wall time, and a host that slowed
// while the job was down for hours was found at the restart without a step run).
struct Degradation {
  double speed = 1.0;
  Time detect_at;
  int component = 0;
};

// One window of one seed. Time advances from event to event; between events the job is either
// running (training, or stalled in a blocking checkpoint) or down in one recovery phase.
class Simulation {
 public:
  Simulation(const ReliabilityInputs& in, uint64_t seed) : in_(in), rng_(seed) {
    for (const JobComponent& c : in_.components) total_rate_ += c.rate_per_s;
    run_.interruptions_by_component.assign(in_.components.size(), 0);
    run_.lost_by_component.assign(in_.components.size(), Time::zero());
    if (in_.spare_hosts) available_ = *in_.spare_hosts;
    schedule_failure();
  }

  ReliabilityRun run() {
    for (;;) {
      // Candidate events in a fixed order: ties resolve the same way on every run.
      Time when = in_.duration;
      int what = kEnd;
      auto consider = [&](Time t, int kind) {
        if (t < when) {
          when = t;
          what = kind;
        }
      };
      if (!repairs_.empty()) consider(repairs_.front(), kRepair);
      if (running_) {
        if (blocking_) {
          consider(blocking_end_, kBlockingEnd);
        } else if (async_end_) {
          consider(*async_end_, kAsyncEnd);
        } else {
          // Due after the interval's training, and then taken at the end of the iteration under
          // way (since 2026-12-05: before, at once, saving a part of an iteration).
          consider(train_since_ckpt_ < in_.checkpoint_interval ? t_ + (in_.checkpoint_interval - train_since_ckpt_)
                                                              : t_ + wall_to_iteration_end(),
                   kCheckpointDue);
        }
        if (!unfound_.empty()) {
          consider(t_ + max(Time::zero(), unfound_.begin()->first - running_time_), kStragglerFound);
        }
      } else {
        consider(phase_end_, kPhaseEnd);
      }
      consider(next_failure_, kFailure);
      advance(when);
      switch (what) {
        case kEnd: return finish();
        case kRepair:
          repairs_.pop_front();
          ++available_;
          if (running_) swap_straggler(true);
          break;
        case kBlockingEnd: snapshot(); break;
        case kAsyncEnd: commit(); break;
        case kCheckpointDue:
          if (train_since_ckpt_ >= in_.checkpoint_interval && wall_to_iteration_end() == Time::zero()) {
            blocking_ = true;
            blocking_end_ = t_ + in_.checkpoint_blocking;
          }
          break;
        case kStragglerFound: swap_straggler(false); break;
        case kPhaseEnd: end_phase(); break;
        case kFailure: failure(); break;
      }
    }
  }

 private:
  enum { kEnd, kRepair, kBlockingEnd, kAsyncEnd, kCheckpointDue, kStragglerFound, kPhaseEnd, kFailure };

  void schedule_failure() {
    const double s = exponential_s(rng_, total_rate_);
    next_failure_ = s > kNeverSeconds ? Time::max() : t_ + Time::s(s);
  }

  // Progress per wall second while training, and the component to blame for the rest: the
  // slowest host's (of equally slow ones, the earliest to arrive).
  std::pair<double, int> speed() const {
    if (by_speed_.empty() || by_speed_.begin()->first >= 1.0) return {1.0, -1};
    const auto& [s, id] = *by_speed_.begin();
    return {s, degradations_.at(id).component};
  }

  void advance(Time to) {
    const Time dt = to - t_;
    if (running_) {
      if (blocking_) {
        run_.lost[static_cast<int>(LossCause::kCheckpoint)] += dt;
      } else {
        const auto [s, who] = speed();
        const Time progress = s < 1.0 ? s * dt : dt;
        pending_ += progress;
        if (who >= 0) {
          run_.lost[static_cast<int>(LossCause::kDegraded)] += dt - progress;
          run_.lost_by_component[who] += dt - progress;
        }
        train_since_ckpt_ += dt;
      }
      running_time_ += dt;
    } else {
      run_.lost[static_cast<int>(phase_cause_)] += dt;
      run_.lost_by_component[cause_component_] += dt;
      run_.downtime += dt;
    }
    t_ = to;
  }

  // The part of `progress` made of whole iterations (all of it without an iteration time).
  Time whole_iterations(Time progress) const {
    if (in_.iteration <= Time::zero()) return progress;
    return Time::ps(progress.as_ps() / in_.iteration.as_ps() * in_.iteration.as_ps());
  }

  // Wall time until the iteration under way ends, at the current speed (0 at an iteration's end
  // or without an iteration time). Rounded up, so that the progress made reaches the end: at a
  // degraded speed s that progress, rounded to the picosecond, is the iteration's rest plus at
  // most 1 ps (s ceil(left / s) < left + s) and the rounding below, which counts as the end at
  // any later speed (since 2026-12-06: before, such an overshoot put a due checkpoint off by a
  // whole iteration, and how often depended on how many unrelated events re-rounded the
  // progress). Saturates at Time::max() (before, a wait past 106 days wrapped around to a
  // negative time and the simulation never ended).
  Time wall_to_iteration_end() const {
    if (in_.iteration <= Time::zero()) return Time::zero();
    const int64_t into = pending_.as_ps() % in_.iteration.as_ps();
    // The overshoot is 1 ps plus the double product's rounding, which grows with the rest of the
    // iteration (about rest x 2^-53): past 2^51 ps (38 min) iterations, a few ps more.
    if (into <= 1 + (in_.iteration.as_ps() >> 51)) return Time::zero();
    const double s = speed().first;
    const int64_t left = in_.iteration.as_ps() - into;
    if (s >= 1.0) return Time::ps(left);
    const double wall = std::ceil(static_cast<double>(left) / s);
    return wall >= static_cast<double>(Time::max().as_ps()) ? Time::max() : Time::ps(static_cast<int64_t>(wall));
  }

  // A checkpoint saves the iterations done: it is taken at an iteration's end, and what is not a
  // whole iteration stays at risk (before 2026-12-05 a checkpoint saved progress to the second:
  // a job of 100-hour iterations and a 3-hour MTBF kept 9.7% of the window).
  void save_whole_iterations() {
    const Time whole = whole_iterations(pending_);
    in_flight_ += whole;
    pending_ -= whole;
  }

  void snapshot() {
    blocking_ = false;
    save_whole_iterations();
    train_since_ckpt_ = Time::zero();
    if (in_.checkpoint_async > Time::zero()) {
      async_end_ = t_ + in_.checkpoint_async;
    } else {
      commit();
    }
  }

  void commit() {
    has_checkpoint_ = true;
    run_.useful += in_flight_;
    in_flight_ = Time::zero();
    async_end_.reset();
    ++run_.checkpoints;
  }

  void lose_work(int who) {
    const Time lost = pending_ + in_flight_;
    run_.lost[static_cast<int>(LossCause::kLostWork)] += lost;
    run_.lost_by_component[who] += lost;
    run_.max_lost_work = max(run_.max_lost_work, lost);
    pending_ = in_flight_ = Time::zero();
  }

  void stop(int who) {
    ++run_.interruptions;
    ++run_.interruptions_by_component[who];
    running_ = false;
    blocking_ = false;
    async_end_.reset();
    cause_component_ = who;
  }

  void need_host() {
    if (!in_.spare_hosts) return;
    ++need_hosts_;
    ++run_.hosts_repaired;
    const Time back = t_ + in_.repair_time;
    repairs_.insert(std::upper_bound(repairs_.begin(), repairs_.end(), back), back);
  }

  // Crash or hang: work since the last durable checkpoint is gone; detect, diagnose, restart,
  // and load that checkpoint, where there is one: before the first, the job starts afresh (until
  // 2026-12-06 every restart loaded one: with a 15.8 h load and no checkpoint ever written the
  // load took 95.6% of the window).
  void stop_crash(int who, bool hang) {
    lose_work(who);
    stop(who);
    committing_ = false;
    phases_ = {{LossCause::kDetection, hang ? in_.hang_detection : in_.detection},
               {LossCause::kDiagnosis, in_.diagnosis},
               {LossCause::kReschedule, in_.reschedule},
               {LossCause::kCommInit, in_.comm_init}};
    if (has_checkpoint_) phases_.push_back({LossCause::kCheckpointLoad, in_.checkpoint_load});
    next_phase();
  }

  // Planned stop or straggler swap: checkpoint (stall and write), then restart; nothing lost.
  void stop_planned(int who, bool needs_host) {
    stop(who);
    if (needs_host) need_host();
    committing_ = true;
    phases_ = {{LossCause::kCheckpoint, in_.checkpoint_blocking + in_.checkpoint_async},
               {LossCause::kReschedule, in_.reschedule},
               {LossCause::kCommInit, in_.comm_init},
               {LossCause::kCheckpointLoad, in_.checkpoint_load}};
    next_phase();
  }

  // A straggler found (or, `waiting`, one found earlier that runs on): swapped out in a planned
  // restart when a spare is free (or spares are not counted), else as run_on decides. Before
  // 2026-12-04 it always stopped and waited for the repair: a 10%-slow host with no spare took
  // ETTR from 0.97, never detected, to 0.68.
  // The one found first (of those found at once, the earliest to arrive).
  void swap_straggler(bool waiting) {
    std::set<std::pair<Time, uint64_t>>& from = waiting ? awaiting_ : unfound_;
    if (from.empty() || from.begin()->first > running_time_) return;
    const uint64_t id = from.begin()->second;
    const Degradation& found = degradations_.at(id);
    if (in_.spare_hosts && available_ <= need_hosts_ && run_on(found)) {
      if (!waiting) await_spare(id);
      return;
    }
    from.erase(from.begin());
    swapping_.push_back(id);
    stop_planned(found.component, /*needs_host=*/true);
  }

  // Found with no spare free: runs on, slow, until one is.
  void await_spare(uint64_t id) {
    const Degradation& d = degradations_.at(id);
    unfound_.erase({d.detect_at, id});
    awaiting_.insert({d.detect_at, id});
  }

  void remove_degradation(uint64_t id) {
    const auto it = degradations_.find(id);
    by_speed_.erase({it->second.speed, id});
    degradations_.erase(it);
  }

  // With no spare free: whether to run on with straggler `d` rather than stop and wait for its own
  // repair. A repair under way frees a spare sooner than that (and running on loses only a share
  // of the wait): run on until it ends. With none, nothing frees a spare and the straggler stays
  // for the rest of the window: stop when the share of it the slow host loses, (1 - speed) x the
  // time left, exceeds the repair and the restart (a 4x-slow host stops; a 10%-slow one with days
  // left and a 3-day repair runs on).
  bool run_on(const Degradation& d) const {
    if (!repairs_.empty()) return true;
    const Time restart =
        in_.checkpoint_blocking + in_.checkpoint_async + in_.reschedule + in_.comm_init + in_.checkpoint_load;
    return (1.0 - d.speed) * (in_.duration - t_) <= in_.repair_time + restart;
  }

  void next_phase() {
    if (phases_.empty()) return resume();
    auto [cause, length] = phases_.front();
    phases_.pop_front();
    if (cause == LossCause::kReschedule && in_.spare_hosts && need_hosts_ > 0) {
      if (available_ >= need_hosts_) {
        available_ -= need_hosts_;
        need_hosts_ = 0;
      } else {
        // Wait for enough repaired hosts; repairs are events, so the wait ends exactly then.
        const size_t k = static_cast<size_t>(need_hosts_ - available_);
        assert(repairs_.size() >= k && "every host awaited is in repair");
        phases_.push_front({cause, length});
        cause = LossCause::kRepairWait;
        length = repairs_[k - 1] - t_;
      }
    }
    phase_cause_ = cause;
    phase_end_ = t_ + length;
  }

  void end_phase() {
    if (phase_cause_ == LossCause::kCheckpoint && committing_) {
      // The stop's checkpoint saves the whole iterations; the restart loses the one under way.
      save_whole_iterations();
      commit();
      lose_work(cause_component_);
      committing_ = false;
    }
    next_phase();
  }

  void resume() {
    running_ = true;
    train_since_ckpt_ = Time::zero();
    // Stragglers found by now were swapped out during this restart: the one it was for, and the
    // others, in the order they arrived, each for a free spare where spares are counted; those
    // left wait as run_on decides.
    for (const uint64_t id : swapping_) remove_degradation(id);
    swapping_.clear();
    while (!unfound_.empty() && unfound_.begin()->first <= running_time_) await_spare(unfound_.begin()->second);
    while (!awaiting_.empty() && (!in_.spare_hosts || available_ > 0)) {
      const uint64_t id = awaiting_.begin()->second;
      if (in_.spare_hosts) {
        --available_;
        ++run_.hosts_repaired;
        const Time back = t_ + in_.repair_time;
        repairs_.insert(std::upper_bound(repairs_.begin(), repairs_.end(), back), back);
      }
      awaiting_.erase(awaiting_.begin());
      remove_degradation(id);
    }
    if (!awaiting_.empty()) swap_straggler(true);
  }

  void failure() {
    const double pick = uniform01(rng_) * total_rate_;
    int k = 0;
    double acc = in_.components[0].rate_per_s;
    while (acc <= pick && k + 1 < static_cast<int>(in_.components.size())) acc += in_.components[++k].rate_per_s;
    const JobComponent& c = in_.components[k];
    double degraded_speed = 1.0;
    if (c.spec.kind == FailureKind::kDegrade && !c.degraded_speed.empty()) {
      degraded_speed = c.degraded_speed[static_cast<size_t>(uniform01(rng_) * c.degraded_speed.size())];
    }
    schedule_failure();
    if (c.spec.only_while_running && !running_) return;
    // While the pool is short of the hosts the job lacks, it waits holding need_hosts_ fewer: a
    // host failure strikes one it holds, at (held / job hosts) of the rate (until 2026-12-07 at
    // the full rate, so a dry pool sent more hosts to repair than existed: 16 hosts and 4 spares
    // failing 0.5 a day each, a 3-day repair, 240 in 30 days where at most 220 can go; QA).
    // With spares at hand the lack lasts a recovery and is a host in thousands: not drawn, so
    // such runs keep their random streams.
    if (c.spec.replace_host && in_.spare_hosts && in_.job_hosts > 0 && need_hosts_ > available_ &&
        uniform01(rng_) * in_.job_hosts < need_hosts_) {
      return;
    }
    switch (c.spec.kind) {
      case FailureKind::kDegrade:
        ++run_.failures;
        // Below the detection threshold the slow host is never found: it stays for the window.
        add_degradation({degraded_speed,
                         c.spec.slowdown >= in_.straggler_threshold ? running_time_ + in_.straggler_detection
                                                                    : Time::max(),
                         k});
        return;
      case FailureKind::kPlanned:
        if (!running_) return;
        ++run_.failures;
        return stop_planned(k, /*needs_host=*/false);
      case FailureKind::kCrash:
      case FailureKind::kHang:
        ++run_.failures;
        if (c.spec.replace_host) need_host();
        if (running_) return stop_crash(k, c.spec.kind == FailureKind::kHang);
        // Down already: a failure while detecting or diagnosing joins that diagnosis; one
        // during the restart (or the checkpoint before a planned stop) starts the recovery over.
        // A crash during a hang's watchdog wait is seen by the heartbeat within `detection`
        // (until 2026-12-07 the hang's full timeout ran on: QA, 2 h watchdogs beside hourly
        // crashes overstated each hang's detection by about an hour).
        if (phase_cause_ == LossCause::kDetection && c.spec.kind == FailureKind::kCrash) {
          phase_end_ = min(phase_end_, t_ + in_.detection);
        }
        if (phase_cause_ == LossCause::kDetection || phase_cause_ == LossCause::kDiagnosis) return;
        return stop_crash(k, c.spec.kind == FailureKind::kHang);
    }
  }

  void add_degradation(const Degradation& d) {
    const uint64_t id = next_degradation_++;
    degradations_.emplace(id, d);
    by_speed_.insert({d.speed, id});
    unfound_.insert({d.detect_at, id});
  }

  ReliabilityRun finish() {
    // Progress not yet checkpointed at the window's end is not lost: the job goes on.
    run_.useful += pending_ + in_flight_;
    return run_;
  }

  const ReliabilityInputs& in_;
  std::mt19937_64 rng_;
  ReliabilityRun run_;
  double total_rate_ = 0;
  Time t_;
  Time next_failure_;
  // Running.
  bool running_ = true;
  bool blocking_ = false;
  Time blocking_end_;
  std::optional<Time> async_end_;
  Time train_since_ckpt_;
  Time running_time_;  // wall time spent running (training or in a checkpoint's stall) so far
  Time pending_;    // progress since the latest snapshot
  Time in_flight_;  // progress in a snapshot still being written
  // Slow hosts by arrival number, and indexes over them, each ordered by a time or speed and then
  // the arrival (so every event costs O(log n) in the slow hosts present: before 2026-12-05 it
  // looked at each of them, and 10 a day per host waiting on 8 spares took 80 s).
  std::unordered_map<uint64_t, Degradation> degradations_;
  uint64_t next_degradation_ = 0;
  std::set<std::pair<double, uint64_t>> by_speed_;  // all of them
  std::set<std::pair<Time, uint64_t>> unfound_;     // not yet found (by detect_at)
  // Found with no spare free, by detect_at: every slow host is found straggler_detection of
  // running after it arrives, so that is the order they arrived in too.
  std::set<std::pair<Time, uint64_t>> awaiting_;
  std::vector<uint64_t> swapping_;                  // found and being swapped out in this restart
  // Down.
  std::deque<std::pair<LossCause, Time>> phases_;
  LossCause phase_cause_ = LossCause::kDetection;
  Time phase_end_;
  int cause_component_ = 0;
  bool committing_ = false;
  bool has_checkpoint_ = false;  // a checkpoint has been written (committed) in the window
  // Spare pool (only when spare_hosts is set).
  int available_ = 0;
  int need_hosts_ = 0;
  std::deque<Time> repairs_;  // sorted completion times
};

double t_quantile_975(int df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df <= 30) return kTable[df - 1];
  // Beyond the table, the Cornish-Fisher expansion in 1/df about the normal quantile
  // (Abramowitz & Stegun 26.7.5; within 1e-5 of the exact value from df 30 on: 2.0395 at 31,
  // 2.0003 at 60, 1.9799 at 120). Before 2026-12-04 steps of 2.000, 1.980 and 1.960 made the
  // intervals up to 2% too narrow.
  const double z = 1.959963984540054;
  const double z2 = z * z;
  const double g1 = z * (z2 + 1) / 4;
  const double g2 = z * ((5 * z2 + 16) * z2 + 3) / 96;
  const double g3 = z * (((3 * z2 + 19) * z2 + 17) * z2 - 15) / 384;
  const double g4 = z * ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) / 92160;
  const double n = df;
  return z + g1 / n + g2 / (n * n) + g3 / (n * n * n) + g4 / (n * n * n * n);
}

}  // namespace

const char* to_string(LossCause c) {
  switch (c) {
    case LossCause::kCheckpoint: return "checkpoint";
    case LossCause::kLostWork: return "lost_work";
    case LossCause::kDetection: return "detection";
    case LossCause::kDiagnosis: return "diagnosis";
    case LossCause::kReschedule: return "reschedule";
    case LossCause::kRepairWait: return "repair_wait";
    case LossCause::kCommInit: return "comm_init";
    case LossCause::kCheckpointLoad: return "checkpoint_load";
    case LossCause::kDegraded: return "degraded";
  }
  return "?";
}

ReliabilityRun simulate_reliability(const ReliabilityInputs& in, uint64_t seed) {
  assert(in.checkpoint_interval > Time::zero() && "checkpoint interval must be positive");
  if (in.components.empty()) {
    ReliabilityInputs none = in;
    none.components.push_back(JobComponent{});
    return simulate_reliability(none, seed);
  }
  return Simulation(in, seed).run();
}

namespace {

// The job's rate of crashes and hangs (the failures that stop it), per second.
double stopping_rate_per_s(const ReliabilityInputs& in) {
  double rate = 0;
  for (const JobComponent& c : in.components) {
    if (c.spec.kind == FailureKind::kCrash || c.spec.kind == FailureKind::kHang) rate += c.rate_per_s;
  }
  return rate;
}

}  // namespace

double mean_time_between_failures_s(const ReliabilityInputs& in) {
  const double rate = stopping_rate_per_s(in);
  return rate > 0 ? 1.0 / rate : std::numeric_limits<double>::infinity();
}

bool has_failures(const ReliabilityInputs& in) { return stopping_rate_per_s(in) > 0; }

double hosts_to_repair_per_s(const ReliabilityInputs& in) {
  double rate = 0;
  for (const JobComponent& c : in.components) {
    const bool crash = c.spec.kind == FailureKind::kCrash || c.spec.kind == FailureKind::kHang;
    const bool found = c.spec.kind == FailureKind::kDegrade && c.spec.slowdown >= in.straggler_threshold;
    if ((crash && c.spec.replace_host) || found) rate += c.rate_per_s;
  }
  return rate;
}

double young_interval_s(Time cost, double mtbf_s) { return std::sqrt(2.0 * cost.as_s() * mtbf_s); }

double daly_interval_s(Time cost, double mtbf_s) {
  const double d = cost.as_s();
  const double m = mtbf_s;
  if (d >= 2 * m) return m;
  const double x = d / (2 * m);
  return std::sqrt(2 * d * m) * (1 + std::sqrt(x) / 3 + x / 9) - d;
}

MeanCi mean_ci(const std::vector<double>& v) {
  MeanCi out;
  if (v.empty()) return out;
  for (double x : v) out.mean += x;
  out.mean /= static_cast<double>(v.size());
  if (v.size() < 2) return out;
  double ss = 0;
  for (double x : v) ss += (x - out.mean) * (x - out.mean);
  const double sd = std::sqrt(ss / static_cast<double>(v.size() - 1));
  out.half_width = t_quantile_975(static_cast<int>(v.size()) - 1) * sd / std::sqrt(static_cast<double>(v.size()));
  return out;
}

const char* to_string(SweepEdge e) {
  switch (e) {
    case SweepEdge::kInterior: return "interior";
    case SweepEdge::kFloor: return "floor";
    case SweepEdge::kWindow: return "window";
    case SweepEdge::kSweepEnd: return "sweep_end";
  }
  return "?";
}

Time checkpoint_interval_floor(Time iteration) { return max(iteration, Time::s(1)); }

Time checkpoint_interval_taken(Time interval, Time iteration) {
  if (iteration <= Time::zero() || interval <= Time::zero()) return interval;
  // Whole iterations, rounded up, without forming interval + iteration (which passed int64's
  // picoseconds, about 106 days, for an iteration over 53 days in a 90-day window: a negative
  // interval, until 2026-12-06); past int64 the result saturates.
  const int64_t it = iteration.as_ps();
  const int64_t whole = interval.as_ps() / it + (interval.as_ps() % it != 0 ? 1 : 0);
  return whole * iteration;  // saturates (units.h)
}

IntervalSweep sweep_checkpoint_interval(const ReliabilityInputs& in, Time center, Time floor, int points, int seeds,
                                        uint64_t seed) {
  assert(floor > Time::zero() && points >= 1 && seeds >= 1 && "bad checkpoint-interval sweep");
  // The floor as runs take it too: an asynchronous write of 28.4 s between 15 s iterations spaces
  // checkpoints 30 s apart (the floor was tried as 28.4 s until 2026-12-06).
  floor = checkpoint_interval_taken(floor, in.iteration);
  IntervalSweep out;
  // A zero checkpoint cost gives a zero Young interval (log 0 = -inf): start from the floor.
  const double c = std::log(max(center, floor).as_s());
  const double lo = c - std::log(4.0);
  const double hi = c + std::log(4.0);
  // Intervals past the window all mean no checkpoint in it (and past about 106 days would not
  // fit simulated time): the sweep stops at the window.
  const Time cap = max(floor, in.duration);
  // ETTR of each seed at `interval` (the same seeds for every interval).
  const auto ettr_by_seed = [&](Time interval) {
    ReliabilityInputs trial = in;
    trial.checkpoint_interval = interval;
    std::vector<double> v;
    v.reserve(static_cast<size_t>(seeds));
    for (int k = 0; k < seeds; ++k) v.push_back(simulate_reliability(trial, seed + static_cast<uint64_t>(k)).ettr(in.duration));
    return v;
  };
  // The grid position of each interval tried (log s of the interval asked for: the steps stay
  // even when whole iterations round them), and each interval's seeds' ETTR.
  std::vector<double> logs;
  std::vector<std::vector<double>> by_seed;
  // The floor and the window themselves at the ends: exp(log(x)) is not always x (30 days came
  // back 1 ns short, so the window was never reached as such; before 2026-12-05). Between them,
  // the interval the run takes for it (whole iterations), never past the window.
  const auto clamp = [&](double log_s) {
    if (log_s >= std::log(cap.as_s())) return cap;
    if (log_s <= std::log(floor.as_s())) return floor;
    return min(cap, checkpoint_interval_taken(max(floor, Time::s(std::exp(log_s))), in.iteration));
  };
  const auto add = [&](size_t at, double log_s, Time interval) {
    logs.insert(logs.begin() + static_cast<std::ptrdiff_t>(at), log_s);
    out.intervals.insert(out.intervals.begin() + static_cast<std::ptrdiff_t>(at), interval);
    by_seed.insert(by_seed.begin() + static_cast<std::ptrdiff_t>(at), ettr_by_seed(interval));
    out.mean_ettr.insert(out.mean_ettr.begin() + static_cast<std::ptrdiff_t>(at), mean_ci(by_seed[at]).mean);
  };
  for (int i = 0; i < points; ++i) {
    const double x = points == 1 ? c : lo + (hi - lo) * i / (points - 1);
    const Time interval = clamp(x);
    if (!out.intervals.empty() && interval == out.intervals.back()) continue;
    add(out.intervals.size(), x, interval);
  }
  const auto best_index = [&] {
    return static_cast<size_t>(std::max_element(out.mean_ettr.begin(), out.mean_ettr.end()) - out.mean_ettr.begin());
  };
  // Whether the grid's first (last) interval is a best one, ties included: with rare failures
  // ETTR steps with the whole number of checkpoints in the window, and two equal intervals at
  // an end are no maximum inside the grid (until 2026-12-05 a tie stopped the search there).
  const auto best_at_front = [&] { return out.mean_ettr.front() >= out.mean_ettr[best_index()]; };
  const auto best_at_back = [&] { return out.mean_ettr.back() >= out.mean_ettr[best_index()]; };
  // A best at the grid's edge is no optimum but where the grid stopped (a centre far from the
  // optimum: a free checkpoint's is the floor, 2026-12-05): go on a grid step at a time, up to
  // points - 1 steps each way (another factor 4^2 = 16), never past the floor or the window.
  // Without crashes or hangs a longer interval is always better: nothing to look for.
  const double step = points == 1 ? std::log(4.0) : (hi - lo) / (points - 1);
  if (has_failures(in)) {
    for (int extra = 0; extra < points - 1 && best_at_front() && out.intervals.front() > floor; ++extra) {
      const double x = logs.front() - step;
      const Time interval = clamp(x);
      if (interval == out.intervals.front()) break;
      add(0, x, interval);
    }
    for (int extra = 0; extra < points - 1 && best_at_back() && out.intervals.back() < cap; ++extra) {
      const double x = logs.back() + step;
      const Time interval = clamp(x);
      if (interval == out.intervals.back()) break;
      add(out.intervals.size(), x, interval);
    }
  }
  // The first best; the last where it ties the first at the longest interval tried.
  size_t b = best_index();
  if (b > 0 && out.intervals.size() > 1 && best_at_back()) b = out.intervals.size() - 1;
  if (b > 0 && b + 1 < out.intervals.size()) {
    // Vertex of the parabola through the best point and its neighbours, in log of the
    // intervals taken (x), which whole iterations can space unevenly:
    //   x* = x1 - ((x1-x0)^2 (y1-y2) - (x1-x2)^2 (y1-y0)) / (2 ((x1-x0)(y1-y2) - (x1-x2)(y1-y0)))
    // The whole-iteration intervals on either side of it are simulated (the grid's own where
    // they are in it), and the best simulated interval is the optimum.
    const double x0 = std::log(out.intervals[b - 1].as_s()), x1 = std::log(out.intervals[b].as_s()),
                 x2 = std::log(out.intervals[b + 1].as_s());
    const double y0 = out.mean_ettr[b - 1], y1 = out.mean_ettr[b], y2 = out.mean_ettr[b + 1];
    const double den = (x1 - x0) * (y1 - y2) - (x1 - x2) * (y1 - y0);
    if (den > 0) {
      const double vertex = x1 - ((x1 - x0) * (x1 - x0) * (y1 - y2) - (x1 - x2) * (x1 - x2) * (y1 - y0)) / (2 * den);
      const Time at = min(out.intervals[b + 1], max(out.intervals[b - 1], Time::s(std::exp(vertex))));
      const Time above = checkpoint_interval_taken(at, in.iteration);
      const Time below = in.iteration > Time::zero() && above - in.iteration >= floor ? above - in.iteration : above;
      for (const Time candidate : {below, above}) {
        if (candidate <= out.intervals[b - 1] || candidate >= out.intervals[b + 1] ||
            std::find(out.intervals.begin(), out.intervals.end(), candidate) != out.intervals.end()) {
          continue;
        }
        const size_t pos = static_cast<size_t>(std::lower_bound(out.intervals.begin(), out.intervals.end(), candidate) -
                                               out.intervals.begin());
        add(pos, std::log(candidate.as_s()), candidate);
      }
      b = best_index();
    }
  }
  // The run's own interval (as the run takes it) is tried too, so the best is never worse than the
  // run: the grid rounds up to whole iterations and the derived interval to the nearest, so it
  // was not always in the grid, and with no spares the best reported 338.7 s, 0.0006 points below
  // the run's own 331.9 s (2026-12-06 review). Where it beats the grid's best, it is the best, at
  // an edge if it lies outside the grid.
  const Time run = min(cap, checkpoint_interval_taken(max(floor, in.checkpoint_interval), in.iteration));
  if (std::find(out.intervals.begin(), out.intervals.end(), run) == out.intervals.end()) {
    const Time grid_best = out.intervals[b];
    const size_t pos = static_cast<size_t>(std::lower_bound(out.intervals.begin(), out.intervals.end(), run) -
                                           out.intervals.begin());
    add(pos, std::log(run.as_s()), run);
    b = static_cast<size_t>(std::find(out.intervals.begin(), out.intervals.end(), grid_best) - out.intervals.begin());
    if (out.mean_ettr[pos] > out.mean_ettr[b]) b = pos;
  }
  if (b == 0 && out.intervals.size() > 1) {
    out.best_at = out.intervals[b] == floor ? SweepEdge::kFloor : SweepEdge::kSweepEnd;
  } else if (b + 1 == out.intervals.size() && out.intervals.size() > 1) {
    out.best_at = out.intervals[b] == cap ? SweepEdge::kWindow : SweepEdge::kSweepEnd;
  }
  out.best = out.intervals[b];
  out.best_ettr = out.mean_ettr[b];
  out.best_ettr_by_seed = by_seed[b];
  return out;
}

}  // namespace clustersim::engine
