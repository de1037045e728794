// SPDX-License-Identifier: Apache-2.0
// Scaling of the configured DCQCN thresholds and steps to a link's speed.
#include "sim/network/dcqcn/dcqcn_params.h"

#include <algorithm>

namespace clustersim::net {

namespace {

double speed_factor(const DcqcnConfig& c, Bandwidth link) {
  if (!c.scale_with_link_speed || c.reference_bandwidth.bytes_per_s <= 0) return 1.0;
  return link.bytes_per_s / c.reference_bandwidth.bytes_per_s;
}

}  // namespace

EcnThresholds ecn_thresholds(const DcqcnConfig& config, Bandwidth link) {
  const double k = speed_factor(config, link);
  return {k * config.kmin.as_double(), k * config.kmax.as_double(), config.pmax};
}

DcqcnParams dcqcn_params(const DcqcnConfig& config, Bandwidth line_rate) {
  const double k = speed_factor(config, line_rate);
  DcqcnParams p;
  p.line_rate = line_rate.bytes_per_s;
  p.min_rate = std::min(config.min_rate.bytes_per_s, p.line_rate);
  p.g = config.g;
  p.initial_alpha = config.initial_alpha;
  p.clamp_target = config.clamp_target_rate;
  p.alpha_interval = config.alpha_update_interval;
  p.decrease_interval = config.rate_decrease_interval;
  p.increase_timer = config.rate_increase_timer;
  p.byte_counter = config.byte_counter.as_double();
  p.fast_recovery_steps = config.fast_recovery_steps;
  p.rate_ai = k * config.rate_ai.bytes_per_s;
  p.rate_hai = k * config.rate_hai.bytes_per_s;
  return p;
}

}  // namespace clustersim::net
