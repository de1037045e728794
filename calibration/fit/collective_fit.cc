// SPDX-License-Identifier: Apache-2.0
// Fits piecewise alpha-beta models: dynamic programming over split points, BIC picks the count.
#include "calibration/fit/collective_fit.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

#include "calibration/fit/least_squares.h"

namespace clustersim::calib {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

AlphaBetaSegment fit_segment(const std::vector<CollectivePoint>& sorted, size_t begin, size_t end,
                             bool robust) {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (size_t i = begin; i < end; ++i) {
    rows.push_back({1.0, static_cast<double>(sorted[i].bytes)});
    y.push_back(sorted[i].timing.median_s);
  }
  RelativeFitOptions options;
  options.robust = robust;
  const std::vector<double> theta = fit_nonneg_relative(rows, y, options);
  return {sorted[begin].bytes, sorted[end - 1].bytes, theta[0], theta[1]};
}

double segment_sse(const std::vector<CollectivePoint>& sorted, size_t begin, size_t end,
                   const AlphaBetaSegment& s) {
  double sse = 0;
  for (size_t i = begin; i < end; ++i) {
    const double t = sorted[i].timing.median_s;
    const double r = (s.alpha_s + static_cast<double>(sorted[i].bytes) * s.beta_s_per_byte - t) / t;
    sse += r * r;
  }
  return sse;
}

}  // namespace

double AlphaBetaSegment::bandwidth_bytes_per_s() const {
  return beta_s_per_byte > 0 ? 1.0 / beta_s_per_byte : kInf;
}

double bus_bandwidth_factor(CollectiveKind op, int ranks) {
  if (ranks <= 1) return 1.0;
  const double n = ranks;
  switch (op) {
    case CollectiveKind::kAllReduce: return 2.0 * (n - 1) / n;
    case CollectiveKind::kAllGather:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllToAll: return (n - 1) / n;
    case CollectiveKind::kSendRecv: return 1.0;
  }
  return 1.0;
}

double CollectiveModel::large_message_busbw_bytes_per_s() const {
  assert(!segments.empty() && "model not fitted");
  return segments.back().bandwidth_bytes_per_s() * bus_bandwidth_factor(op, ranks);
}

double CollectiveModel::predict_s(int64_t bytes) const {
  assert(!segments.empty() && "model not fitted");
  size_t i = 0;
  while (i + 1 < segments.size()) {
    const double split = std::sqrt(static_cast<double>(segments[i].max_bytes) *
                                   static_cast<double>(segments[i + 1].min_bytes));
    if (static_cast<double>(bytes) < split) break;
    ++i;
  }
  const AlphaBetaSegment& s = segments[i];
  return s.alpha_s + static_cast<double>(bytes) * s.beta_s_per_byte;
}

size_t collective_sizes(const std::vector<CollectivePoint>& points) {
  // The segments regress on bytes alone: only distinct sizes separate alpha from beta.
  return distinct_shapes(points, [](const CollectivePoint& p) { return p.bytes; });
}

CollectiveFit fit_collective(const std::vector<CollectivePoint>& points,
                             const CollectiveFitOptions& options) {
  if (collective_sizes(points) < kCollectiveMinPoints) return {};
  std::vector<CollectivePoint> all = points;
  std::stable_sort(all.begin(), all.end(),
                   [](const CollectivePoint& a, const CollectivePoint& b) { return a.bytes < b.bytes; });
  // The segments follow the plausible points (a size timed over twice the series' 90th-percentile
  // rate is left out, and still reported: plausible_rates); the error table has them all.
  std::vector<double> rates;
  for (const CollectivePoint& p : all) rates.push_back(static_cast<double>(p.bytes) / p.timing.median_s);
  const std::vector<bool> plausible = plausible_rates(rates);
  std::vector<CollectivePoint> sorted;
  for (size_t i = 0; i < all.size(); ++i) {
    if (plausible[i]) sorted.push_back(all[i]);
  }
  if (collective_sizes(sorted) < kCollectiveMinPoints) sorted = all;
  const size_t n = sorted.size();
  const size_t min_pts = static_cast<size_t>(std::max(2, options.min_points_per_segment));

  // Segments start and end only between sizes: repeated measurements of one size (probe files
  // fitted together) stay in one segment, and the search is over the distinct sizes (over every
  // point until 2026-12-06: cubic in the points, 54 s for a file of 57,050 repeated records).
  std::vector<bool> edge(n + 1, false);
  edge[0] = edge[n] = true;
  for (size_t i = 1; i < n; ++i) edge[i] = sorted[i].bytes != sorted[i - 1].bytes;
  // sizes_before[i]: distinct sizes among sorted[0, i). A segment needs min_pts distinct sizes,
  // not points: two runs fitted together hold every size twice, and a 4-point segment of 2 sizes
  // fitted them exactly (until 2026-12-06).
  std::vector<size_t> sizes_before(n + 1, 0);
  for (size_t i = 0; i < n; ++i) sizes_before[i + 1] = sizes_before[i] + (edge[i] ? 1 : 0);
  // sse[b][e]: squared relative residuals of one segment over sorted[b, e) (plain least squares,
  // which is what the information criterion assumes).
  std::vector<std::vector<double>> sse(n + 1, std::vector<double>(n + 1, kInf));
  for (size_t b = 0; b < n; ++b) {
    if (!edge[b]) continue;
    for (size_t e = b + min_pts; e <= n; ++e) {
      if (!edge[e] || sizes_before[e] - sizes_before[b] < min_pts) continue;
      const AlphaBetaSegment s = fit_segment(sorted, b, e, /*robust=*/false);
      // A piece whose time does not grow with size has no bandwidth: a split that makes one is
      // fitting a wild point (the 1 GiB all-reduce timed 5x too fast split off a segment of
      // "inf GB/s", 2026-12-06 review), not a protocol switch.
      if (s.beta_s_per_byte <= 0 && !(b == 0 && e == n)) continue;
      sse[b][e] = segment_sse(sorted, b, e, s);
    }
  }
  if (sizes_before[n] < min_pts) sse[0][n] = segment_sse(sorted, 0, n, fit_segment(sorted, 0, n, false));

  // best[k][e]: lowest total SSE covering sorted[0, e) with k segments; cut[k][e] its last start.
  const size_t max_k = static_cast<size_t>(std::max(1, options.max_segments));
  std::vector<std::vector<double>> best(max_k + 1, std::vector<double>(n + 1, kInf));
  std::vector<std::vector<size_t>> cut(max_k + 1, std::vector<size_t>(n + 1, 0));
  best[0][0] = 0;
  for (size_t k = 1; k <= max_k; ++k) {
    for (size_t e = 1; e <= n; ++e) {
      for (size_t b = 0; b < e; ++b) {
        if (best[k - 1][b] == kInf || sse[b][e] == kInf) continue;
        const double total = best[k - 1][b] + sse[b][e];
        if (total < best[k][e]) {
          best[k][e] = total;
          cut[k][e] = b;
        }
      }
    }
  }
  size_t chosen = 1;
  double chosen_bic = kInf;
  const double dn = static_cast<double>(n);
  for (size_t k = 1; k <= max_k; ++k) {
    if (best[k][n] == kInf) continue;
    const double params = 3.0 * static_cast<double>(k) - 1.0;  // alpha, beta per segment + splits
    const double bic = dn * std::log(std::max(best[k][n] / dn, 1e-14)) +
                       options.split_penalty * params * std::log(dn);
    if (bic < chosen_bic) {
      chosen_bic = bic;
      chosen = k;
    }
  }

  CollectiveFit fit;
  fit.model.op = sorted.front().op;
  fit.model.ranks = sorted.front().ranks;
  fit.model.algorithm = sorted.front().algorithm;
  fit.model.protocol = sorted.front().protocol;
  fit.model.nodes = sorted.front().nodes;
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t k = chosen, e = n; k > 0; --k) {
    const size_t b = cut[k][e];
    ranges.emplace_back(b, e);
    e = b;
  }
  std::reverse(ranges.begin(), ranges.end());
  for (const auto& [b, e] : ranges) {
    // The robust refit may leave out points; where that leaves a flat piece (no bandwidth), the
    // plain fit the search chose stands.
    AlphaBetaSegment s = fit_segment(sorted, b, e, true);
    if (s.beta_s_per_byte <= 0) s = fit_segment(sorted, b, e, false);
    fit.model.segments.push_back(s);
  }
  for (const CollectivePoint& p : all) {
    fit.points.push_back({"bytes=" + std::to_string(p.bytes), p.timing.median_s, fit.model.predict_s(p.bytes), p.bytes});
  }
  fit.error = fit_error(fit.points);
  return fit;
}

}  // namespace clustersim::calib
