// SPDX-License-Identifier: Apache-2.0
// How well a fitted cost model reproduces the points it was fitted on: relative errors per point.
#pragma once

#include <string>
#include <vector>

namespace clustersim::calib {

// One measured point next to the model's prediction for it.
struct FitPoint {
  std::string label;     // the shape or size, e.g. "m=4096 n=8192 k=8192"
  double measured_s = 0;
  double predicted_s = 0;
  // |predicted - measured| / measured.
  double relative_error() const;
};

// Median and worst relative error over the points of one model; zeros when there are no points.
struct FitError {
  int points = 0;
  double median_rel = 0;
  double worst_rel = 0;
};

FitError fit_error(const std::vector<FitPoint>& points);

// Median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

}  // namespace clustersim::calib
