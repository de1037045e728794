// SPDX-License-Identifier: Apache-2.0
// Fits launch cost and achieved bandwidth of a memory-bound kernel.
#include "calibration/fit/memory_fit.h"

#include <algorithm>
#include <limits>
#include <string>

#include "calibration/fit/least_squares.h"

namespace clustersim::calib {

double MemoryModel::predict_s(int64_t bytes) const {
  return launch_s + static_cast<double>(bytes) / bw_bytes_per_s;
}

size_t memory_shapes(const std::vector<MemoryPoint>& points) {
  // The fit regresses on bytes alone: only distinct sizes separate launch cost from bandwidth.
  return distinct_shapes(points, [](const MemoryPoint& p) { return p.bytes; });
}

MemoryFit fit_memory(const std::vector<MemoryPoint>& points) {
  if (memory_shapes(points) < kMemoryMinPoints) return {};
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (const MemoryPoint& p : points) {
    rows.push_back({1.0, static_cast<double>(p.bytes)});
    y.push_back(p.timing.median_s);
  }
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  MemoryFit fit;
  fit.model.op = points.front().op;
  fit.model.launch_s = theta[0];
  fit.model.bw_bytes_per_s = theta[1] > 0 ? 1.0 / theta[1] : std::numeric_limits<double>::infinity();
  for (const MemoryPoint& p : points) {
    fit.model.max_bytes = std::max(fit.model.max_bytes, p.bytes);
    fit.points.push_back({"bytes=" + std::to_string(p.bytes), p.timing.median_s, fit.model.predict_s(p.bytes), p.bytes});
  }
  fit.error = fit_error(fit.points);
  return fit;
}

}  // namespace clustersim::calib
