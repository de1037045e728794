// SPDX-License-Identifier: Apache-2.0
// Relative-error statistics of fitted models.
#include "calibration/fit/fit_error.h"

#include <algorithm>
#include <cmath>

namespace clustersim::calib {

double FitPoint::relative_error() const {
  return std::abs(predicted_s - measured_s) / measured_s;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

std::vector<bool> plausible_rates(const std::vector<double>& rates) {
  constexpr size_t kMinPoints = 10;
  std::vector<bool> kept(rates.size(), true);
  if (rates.size() < kMinPoints) return kept;
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  const double p90 = sorted[static_cast<size_t>(0.9 * static_cast<double>(sorted.size() - 1))];
  size_t left_out = 0;
  for (size_t i = 0; i < rates.size(); ++i) {
    kept[i] = rates[i] <= 2 * p90;
    left_out += kept[i] ? 0 : 1;
  }
  if (left_out * 10 > rates.size()) kept.assign(rates.size(), true);
  return kept;
}

FitError fit_error(const std::vector<FitPoint>& points) {
  FitError out;
  out.points = static_cast<int>(points.size());
  if (points.empty()) return out;
  std::vector<double> errors;
  errors.reserve(points.size());
  double signed_sum = 0;
  for (const FitPoint& p : points) {
    errors.push_back(p.relative_error());
    signed_sum += (p.predicted_s - p.measured_s) / p.measured_s;
  }
  out.mean_signed_rel = signed_sum / static_cast<double>(points.size());
  const auto worst = std::max_element(errors.begin(), errors.end());
  out.worst_rel = *worst;
  out.worst = points[static_cast<size_t>(worst - errors.begin())];
  out.median_rel = median(std::move(errors));
  return out;
}

}  // namespace clustersim::calib
