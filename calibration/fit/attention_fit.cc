// SPDX-License-Identifier: Apache-2.0
// Fits the attention model: a non-negative linear fit over (1, FLOPs, score elements).
#include "calibration/fit/attention_fit.h"

#include <cstdio>
#include <limits>
#include <string>

#include "calibration/fit/least_squares.h"

namespace clustersim::calib {

double attention_flops(const AttentionPoint& p) {
  const double forward = 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) *
                         static_cast<double>(p.seq_len) * static_cast<double>(p.seq_len) *
                         static_cast<double>(p.head_dim);
  double flops = forward;
  if (p.direction == Direction::kBackward) flops *= p.fused ? 2.5 : 2.0;
  if (p.causal && p.fused) flops *= 0.5;
  return flops;
}

double attention_score_elements(const AttentionPoint& p) {
  return static_cast<double>(p.batch) * static_cast<double>(p.heads) *
         static_cast<double>(p.seq_len) * static_cast<double>(p.seq_len);
}

double AttentionModel::predict_s(const AttentionPoint& shape) const {
  return launch_s + attention_flops(shape) / flops_per_s +
         attention_score_elements(shape) * s_per_score_element;
}

AttentionFit fit_attention(const std::vector<AttentionPoint>& points) {
  if (points.size() < 3) return {};
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const AttentionPoint& p : points) {
    rows.push_back({1.0, attention_flops(p), attention_score_elements(p)});
    y.push_back(p.timing.median_s);
  }
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  AttentionFit fit;
  fit.model.direction = points.front().direction;
  fit.model.fused = points.front().fused;
  fit.model.dtype = points.front().dtype;
  fit.model.launch_s = theta[0];
  fit.model.flops_per_s = theta[1] > 0 ? 1.0 / theta[1] : std::numeric_limits<double>::infinity();
  fit.model.s_per_score_element = theta[2];
  for (const AttentionPoint& p : points) {
    char label[128];
    std::snprintf(label, sizeof label, "b=%lld s=%lld h=%lld d=%lld%s",
                  static_cast<long long>(p.batch), static_cast<long long>(p.seq_len),
                  static_cast<long long>(p.heads), static_cast<long long>(p.head_dim),
                  p.causal ? " causal" : "");
    fit.points.push_back({label, p.timing.median_s, fit.model.predict_s(p)});
  }
  fit.error = fit_error(fit.points);
  return fit;
}

}  // namespace clustersim::calib
