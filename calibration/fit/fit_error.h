// SPDX-License-Identifier: Apache-2.0
// How well a fitted cost model reproduces the points it was fitted on: relative errors per point.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace clustersim::calib {

// One measured point next to the model's prediction for it.
struct FitPoint {
  std::string label;     // the shape or size, e.g. "m=4096 n=8192 k=8192"
  double measured_s = 0;
  double predicted_s = 0;
  int64_t bytes = 0;     // memory and collective points: the size (0 for the others)
  int64_t m = 0, n = 0, k = 0;  // GEMM points: the shape (0 for the others)
  // |predicted - measured| / measured.
  double relative_error() const;
};

// Median and worst relative error over the points of one model; zeros when there are no points.
struct FitError {
  int points = 0;
  double median_rel = 0;
  double worst_rel = 0;
  // Mean of (predicted - measured) / measured: below 0 the model times the points fast on average.
  double mean_signed_rel = 0;
  FitPoint worst;  // the point missed by worst_rel (its label, measured and predicted times)
};

FitError fit_error(const std::vector<FitPoint>& points);

// How many different shapes `points` holds, by `shape(point)`: repeated measurements of one shape
// (two probe runs fitted together, or one point copied) count once. The fitters' minimum point
// counts are of shapes: five copies of one GEMM fitted a launch cost and a K dependence of 0.
template <class Point, class Shape>
size_t distinct_shapes(const std::vector<Point>& points, Shape shape) {
  std::set<decltype(shape(points.front()))> seen;
  for (const Point& p : points) seen.insert(shape(p));
  return seen.size();
}

// Median of `values` (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

// Which points of one series a fit follows, by each point's useful rate (FLOP/s of a GEMM, bytes/s
// of a collective): a point over twice the series' 90th-percentile rate cannot be that work on this
// GPU (the largest shapes and sizes run at its plateau), it was timed wrong (a clock glitch, a
// mislabelled shape). Such points stay in the error table and the wild-point note. The relative
// fits weigh a point by 1 / its time, so one timed far too fast pulls the whole fit to it (a GEMM
// 300x fast chose a wrong tile; an all-reduce 3x fast at 32 MiB fitted a segment of 18x NVLink's
// line rate and the note blamed a good point). Only in a series of 10 points or more, and at most a
// tenth of them: where more stand out, the series is in doubt, not the points, and all are kept.
std::vector<bool> plausible_rates(const std::vector<double>& rates);

}  // namespace clustersim::calib
