// SPDX-License-Identifier: Apache-2.0
// The DCQCN reaction point of one queue pair: rate cut on CNPs, fast recovery, additive and
// hyper increase on a timer and a byte counter. Shared by the packet and flow+dcqcn levels.
#pragma once

#include <cstdint>

#include "sim/core/units.h"
#include "sim/network/dcqcn/dcqcn_params.h"

namespace clustersim::net {

// DCQCN reaction point (Zhu et al., SIGCOMM 2015, section 3.1; QCN's rate increase):
//   cut (on a CNP):   Rt = Rc;  Rc = max(min_rate, Rc (1 - alpha/2));  alpha = (1-g) alpha + g;
//                     timer and byte counters T = BC = 0. Without clamp_target, Rt = Rc only
//                     where T > 0 (a timer increase since the last cut; HPCC's ns-3 RdmaHw)
//   alpha decay:      alpha = (1-g) alpha every alpha_interval without a cut
//   increase event:   every increase_timer (T += 1) and every byte_counter bytes sent (BC += 1)
//     fast recovery   max(T, BC) <= F:                Rc = (Rt + Rc) / 2
//     hyper increase  min(T, BC) > F (byte counter on): Rt += R_HAI; Rc = (Rt + Rc) / 2
//     additive        otherwise:                      Rt += R_AI;  Rc = (Rt + Rc) / 2
//   Without a byte counter (byte_counter 0) the timer alone: T <= F fast recovery, T = F + 1
//   additive, T > F + 1 hyper (HPCC's ns-3 RdmaHw, RateIncEventMlx).
//   Rt and Rc never exceed the line rate. With decrease_interval > 0 (HPCC-lineage), CNPs are
//   gathered and cut at most once per interval, the cut waiting for the interval's end.
// Timers are evaluated lazily: the owner calls advance(now) at or before next_event(), and the
// alpha decay is computed in closed form. A flow back at line rate needs no timer (settled()).
class DcqcnRate {
 public:
  DcqcnRate(const DcqcnParams& params, Time start);

  double rate() const { return rc_; }    // bytes/s
  double target() const { return rt_; }  // bytes/s
  double alpha(Time now) const;
  int64_t cuts() const { return cuts_; }

  // A CNP reaches the sender at `now` (after advance(now)).
  void on_cnp(Time now);
  // `bytes` were sent at `now` (byte counter).
  void on_bytes(double bytes);
  // Runs the timer events due at or before `now`, in order.
  void advance(Time now);
  // Time of the next timer event; Time::max() when none is pending.
  Time next_event() const;
  // Bytes still to send before the byte counter's next increase event; infinity when the byte
  // counter is off or the rate is settled.
  double bytes_to_next_count() const;
  // Moves every timer phase `by` later, as if the time skipped had not passed (fast-forward of a
  // periodic steady state).
  void shift(Time by);
  // At line rate with nothing pending: the rate cannot change until the next CNP.
  bool settled() const;

 private:
  void cut(Time now);
  void increase();

  const DcqcnParams* params_;
  double rc_;
  double rt_;
  double alpha_;
  Time alpha_since_;
  int timer_count_ = 0;
  int byte_count_ = 0;
  double bytes_acc_ = 0;
  Time next_increase_ = Time::max();
  Time last_cut_;
  bool cut_pending_ = false;
  int64_t cuts_ = 0;
};

// Increase-timer periods after a cut until Rc first reaches `target` (< line rate), with the byte
// counter off and no further CNP, in closed form:
//   fast recovery (k <= F):  Rc_k = Rt0 - (Rt0 - Rc0) / 2^k
//   then one additive step and hyper steps (j after F), with B = Rt0 + R_AI - R_HAI:
//                            Rt_j = B + j R_HAI,  Rc_j = Rt_j - R_HAI + (Rc_F - B + R_HAI) / 2^j
//   once Rt hits the line rate L at step j*:  Rc = L - (L - Rc_j*) / 2^m
// Returns -1 when the target is never reached.
int64_t dcqcn_recovery_steps(const DcqcnParams& params, double rc0, double rt0, double target);

}  // namespace clustersim::net
