// SPDX-License-Identifier: Apache-2.0
// DcqcnConfig resolved for one link or NIC speed: RED marking thresholds and reaction-point steps.
#pragma once

#include "sim/core/dcqcn_config.h"
#include "sim/core/units.h"

namespace clustersim::net {

// RED/ECN marking of one egress queue, in bytes.
struct EcnThresholds {
  double kmin = 0;
  double kmax = 0;
  double pmax = 0;
};

// Marking probability for a queue of `queue` bytes (RED as DCQCN uses it, Zhu et al. 2015, Fig. 5):
//   0 below kmin, pmax * (queue - kmin) / (kmax - kmin) between, 1 above kmax.
inline double red_probability(const EcnThresholds& t, double queue) {
  if (queue <= t.kmin) return 0.0;
  if (queue > t.kmax) return 1.0;
  if (t.kmax <= t.kmin) return t.pmax;
  return t.pmax * (queue - t.kmin) / (t.kmax - t.kmin);
}

// Thresholds for a link of `link` speed: the configured ones, scaled by link / reference_bandwidth
// when scale_with_link_speed is on.
EcnThresholds ecn_thresholds(const DcqcnConfig& config, Bandwidth link);

// Reaction-point parameters for a NIC of `line_rate`; rates in bytes/s.
struct DcqcnParams {
  double line_rate = 0;
  double min_rate = 0;
  double g = 1.0 / 256;
  double initial_alpha = 1.0;
  bool clamp_target = true;  // DcqcnConfig::clamp_target_rate
  Time alpha_interval = Time::us(55);
  Time decrease_interval = Time::zero();  // 0: cut on every CNP
  Time increase_timer = Time::us(55);
  double byte_counter = 0;                // bytes; 0 = off
  int fast_recovery_steps = 5;
  double rate_ai = 0;
  double rate_hai = 0;
};

DcqcnParams dcqcn_params(const DcqcnConfig& config, Bandwidth line_rate);

}  // namespace clustersim::net
