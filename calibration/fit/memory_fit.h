// SPDX-License-Identifier: Apache-2.0
// Memory-bound kernel cost model (launch plus bytes over achieved bandwidth) and its fit.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/fit/fit_error.h"
#include "calibration/probe_file.h"

namespace clustersim::calib {

// t = launch_s + bytes / bw_bytes_per_s, bytes = read + written (roofline's memory side, Williams
// et al., CACM 2009). One model per kernel kind; bw is the achieved HBM bandwidth.
struct MemoryModel {
  MemoryOpKind op = MemoryOpKind::kCopy;
  double launch_s = 0;
  double bw_bytes_per_s = 0;
  int64_t max_bytes = 0;  // the largest size fitted (read + written)

  double predict_s(int64_t bytes) const;
};

struct MemoryFit {
  MemoryModel model;
  std::vector<FitPoint> points;
  FitError error;
};

// Points a memory fit needs.
inline constexpr size_t kMemoryMinPoints = 2;  // distinct sizes (memory_shapes)

// Distinct sizes (bytes) among `points`: what the fit regresses on.
size_t memory_shapes(const std::vector<MemoryPoint>& points);

// Fits points of one op. Needs kMemoryMinPoints; returns an empty fit (error.points == 0) otherwise.
MemoryFit fit_memory(const std::vector<MemoryPoint>& points);

}  // namespace clustersim::calib
