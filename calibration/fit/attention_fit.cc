// SPDX-License-Identifier: Apache-2.0
// Fits the attention model: a non-negative linear fit over (1, FLOPs, score elements), or for the
// unfused chain the simulator's roofline form (one free parameter).
#include "calibration/fit/attention_fit.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

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
  const double elements = attention_score_elements(shape);
  double work = attention_flops(shape) / flops_per_s;
  if (score_bytes > 0) work = std::max(work, elements * score_bytes / hbm_bytes_per_s);
  return launch_s + work + elements * s_per_score_element;
}

namespace {

std::string point_label(const AttentionPoint& p) {
  char label[128];
  std::snprintf(label, sizeof label, "b=%lld s=%lld h=%lld d=%lld%s", static_cast<long long>(p.batch),
                static_cast<long long>(p.seq_len), static_cast<long long>(p.heads),
                static_cast<long long>(p.head_dim), p.causal ? " causal" : "");
  return label;
}

AttentionFit finish(const std::vector<AttentionPoint>& points, const AttentionModel& model) {
  AttentionFit fit;
  fit.model = model;
  for (const AttentionPoint& p : points) fit.points.push_back({point_label(p), p.timing.median_s, model.predict_s(p)});
  fit.error = fit_error(fit.points);
  return fit;
}

}  // namespace

size_t attention_shapes(const std::vector<AttentionPoint>& points) {
  return distinct_shapes(points, [](const AttentionPoint& p) {
    return std::tuple(p.batch, p.seq_len, p.heads, p.head_dim, p.causal);
  });
}

AttentionFit fit_unfused_chain(const std::vector<AttentionPoint>& points, double launch_s, double gemm_flops_per_s,
                               double hbm_bytes_per_s) {
  if (attention_shapes(points) < kAttentionMinPoints || !(gemm_flops_per_s > 0) || !(hbm_bytes_per_s > 0)) return {};
  AttentionModel m;
  m.direction = points.front().direction;
  m.fused = false;
  m.dtype = points.front().dtype;
  m.launch_s = (m.direction == Direction::kBackward ? 5.0 : 3.0) * launch_s;  // the chain's kernels (compute_cost.cc)
  m.flops_per_s = gemm_flops_per_s;
  m.hbm_bytes_per_s = hbm_bytes_per_s;
  const double softmax = kSoftmaxBytesPerScoreElement * (m.direction == Direction::kBackward ? 2.0 : 1.0);
  m.s_per_score_element = softmax / hbm_bytes_per_s;
  // Sum of squared relative errors at `bytes`: a log grid (10% steps over 0.01 to 1000 bytes)
  // finds the best neighbourhood, golden-section steps refine it.
  const auto cost = [&](double bytes) {
    m.score_bytes = bytes;
    double sum = 0;
    for (const AttentionPoint& p : points) {
      const double e = (m.predict_s(p) - p.timing.median_s) / p.timing.median_s;
      sum += e * e;
    }
    return sum;
  };
  double best = 0.01, best_cost = cost(best);
  for (double b = 0.011; b <= 1000.0; b *= 1.1) {
    if (const double c = cost(b); c < best_cost) {
      best = b;
      best_cost = c;
    }
  }
  double lo = best / 1.1, hi = best * 1.1;
  for (int i = 0; i < 60; ++i) {
    const double a = lo + (hi - lo) * 0.382, c = lo + (hi - lo) * 0.618;
    if (cost(a) < cost(c)) {
      hi = c;
    } else {
      lo = a;
    }
  }
  m.score_bytes = 0.5 * (lo + hi);
  return finish(points, m);
}

AttentionFit fit_fused_attention(const std::vector<AttentionPoint>& points, double launch_s) {
  if (attention_shapes(points) < kAttentionMinPoints) return {};
  AttentionModel m;
  m.direction = points.front().direction;
  m.fused = true;
  m.dtype = points.front().dtype;
  m.launch_s = launch_s;
  double num = 0, den = 0;
  for (const AttentionPoint& p : points) {
    const double t = p.timing.median_s;
    const double a = attention_flops(p) / t;
    num += a * (1.0 - launch_s / t);
    den += a * a;
  }
  const double inv_rate = den > 0 ? num / den : 0;
  m.flops_per_s = inv_rate > 0 ? 1.0 / inv_rate : std::numeric_limits<double>::infinity();
  return finish(points, m);
}

AttentionFit fit_attention(const std::vector<AttentionPoint>& points) {
  if (attention_shapes(points) < kAttentionMinPoints) return {};
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const AttentionPoint& p : points) {
    rows.push_back({1.0, attention_flops(p), attention_score_elements(p)});
    y.push_back(p.timing.median_s);
  }
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  AttentionModel m;
  m.direction = points.front().direction;
  m.fused = points.front().fused;
  m.dtype = points.front().dtype;
  m.launch_s = theta[0];
  m.flops_per_s = theta[1] > 0 ? 1.0 / theta[1] : std::numeric_limits<double>::infinity();
  m.s_per_score_element = theta[2];
  return finish(points, m);
}

}  // namespace clustersim::calib
