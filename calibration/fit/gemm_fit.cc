// SPDX-License-Identifier: Apache-2.0
// Fits the tile/wave-quantised GEMM model: a linear fit per candidate tile, best tile wins.
#include "calibration/fit/gemm_fit.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <tuple>
#include <utility>

#include "calibration/fit/least_squares.h"

namespace clustersim::calib {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct Quantised {
  double waves = 0;
  double padded_flops = 0;
};

Quantised quantise(int64_t m, int64_t n, int64_t k, GemmTile tile, int sm_count) {
  const int64_t tiles = ceil_div(m, tile.m) * ceil_div(n, tile.n);
  const int64_t waves = ceil_div(tiles, sm_count);
  return {static_cast<double>(waves),
          2.0 * static_cast<double>(waves) * sm_count * tile.m * tile.n * static_cast<double>(k)};
}

std::string shape_label(const GemmPoint& p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "m=%lld n=%lld k=%lld", static_cast<long long>(p.m),
                static_cast<long long>(p.n), static_cast<long long>(p.k));
  return buf;
}

double useful_rate(const GemmPoint& p) {
  return 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k) / p.timing.median_s;
}

// Which points a fit follows (plausible_rates): a GEMM over twice the 90th percentile of the
// points' useful FLOP rates was timed wrong; the fit's own trimming handles points up to about
// 100x off (QA 2026-12-07: one timed 300x too fast chose 128x64 for 128x256, the launch cost 0).
std::vector<bool> plausible_points(const std::vector<GemmPoint>& points) {
  std::vector<double> rates;
  for (const GemmPoint& p : points) rates.push_back(useful_rate(p));
  return plausible_rates(rates);
}

// The model fitted on the points `fitted` marks (plausible_points), its points all of them.
GemmFit fit_with_tile(const std::vector<GemmPoint>& points, const std::vector<bool>& fitted, int sm_count,
                      GemmTile tile) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!fitted[i]) continue;
    const GemmPoint& p = points[i];
    const Quantised q = quantise(p.m, p.n, p.k, tile, sm_count);
    rows.push_back({1.0, q.padded_flops, q.waves});
    y.push_back(p.timing.median_s);
  }
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  GemmFit fit;
  fit.model.dtype = points.front().dtype;
  fit.model.sm_count = sm_count;
  fit.model.tile = tile;
  fit.model.launch_s = theta[0];
  fit.model.peak_flops_per_s = theta[1] > 0 ? 1.0 / theta[1] : std::numeric_limits<double>::infinity();
  fit.model.wave_overhead_s = theta[2];
  for (const GemmPoint& p : points) {
    fit.points.push_back({shape_label(p), p.timing.median_s, fit.model.predict_s(p.m, p.n, p.k), 0, p.m, p.n, p.k});
  }
  fit.error = fit_error(fit.points);
  return fit;
}

}  // namespace

double GemmModel::predict_s(int64_t m, int64_t n, int64_t k) const {
  assert(sm_count > 0 && "model not fitted");
  const Quantised q = quantise(m, n, k, tile, sm_count);
  return launch_s + q.padded_flops / peak_flops_per_s + q.waves * wave_overhead_s;
}

double GemmModel::efficiency(int64_t m, int64_t n, int64_t k) const {
  const double useful = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return useful / (peak_flops_per_s * (predict_s(m, n, k) - launch_s));
}

double GemmModel::k_half() const {
  return wave_overhead_s * peak_flops_per_s / (2.0 * tile.m * tile.n * sm_count);
}

size_t gemm_shapes(const std::vector<GemmPoint>& points) {
  return distinct_shapes(points, [](const GemmPoint& p) { return std::tuple(p.m, p.n, p.k); });
}

GemmFit fit_gemm(const std::vector<GemmPoint>& points, int sm_count, const GemmFitOptions& options) {
  if (gemm_shapes(points) < kGemmMinPoints || sm_count <= 0) return {};
  const std::vector<bool> fitted = plausible_points(points);
  std::vector<GemmPoint> kept;
  for (size_t i = 0; i < points.size(); ++i) {
    if (fitted[i]) kept.push_back(points[i]);
  }
  if (gemm_shapes(kept) < kGemmMinPoints) return {};
  // Tiles are compared on the mean relative error over the points fitted: it uses every one, where
  // the median would let noise decide between tiles that quantise most shapes alike.
  GemmFit best;
  double best_mean = std::numeric_limits<double>::infinity();
  for (GemmTile tile : options.candidate_tiles) {
    GemmFit fit = fit_with_tile(points, fitted, sm_count, tile);
    if (!std::isfinite(fit.model.peak_flops_per_s)) continue;
    double mean = 0;
    for (size_t i = 0; i < fit.points.size(); ++i) mean += fitted[i] ? fit.points[i].relative_error() : 0.0;
    mean /= static_cast<double>(kept.size());
    if (mean < best_mean) {
      best_mean = mean;
      best = std::move(fit);
    }
  }
  return best;
}

}  // namespace clustersim::calib
