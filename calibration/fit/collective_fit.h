// SPDX-License-Identifier: Apache-2.0
// Piecewise alpha-beta cost model of one collective (op, rank count, algorithm) and its fit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "calibration/fit/fit_error.h"
#include "calibration/probe_file.h"

namespace clustersim::calib {

// t = alpha_s + bytes * beta_s_per_byte over one size range (Hockney's alpha-beta model).
// NCCL switches protocol (LL, LL128, Simple) and channel count with the size, so one line rarely
// fits 1 KiB to 1 GiB; the fit splits the range where that lowers the error.
struct AlphaBetaSegment {
  int64_t min_bytes = 0;           // smallest measured size the segment was fitted on
  int64_t max_bytes = 0;           // largest
  double alpha_s = 0;
  double beta_s_per_byte = 0;

  // 1 / beta: the "algorithm bandwidth" nccl-tests would report at large sizes, bytes/s.
  double bandwidth_bytes_per_s() const;
};

// Bus bandwidth over algorithm bandwidth (nccl-tests, doc/PERFORMANCE.md): 2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for send/recv, 1 for n = 1.
double bus_bandwidth_factor(CollectiveKind op, int ranks);

struct CollectiveModel {
  CollectiveKind op = CollectiveKind::kAllReduce;
  int ranks = 0;
  std::string algorithm = "auto";
  std::string protocol = "auto";
  int nodes = 1;                           // hosts the ranks span: 1 is NVLink, more the network
  std::vector<AlphaBetaSegment> segments;  // ascending sizes, at least one when fitted

  // Uses the segment whose range holds `bytes`; between two segments the switch is at the
  // geometric mean of the neighbouring measured sizes; outside the measured range, the first or
  // last segment extrapolates.
  double predict_s(int64_t bytes) const;
  // Bus bandwidth of the largest-size segment, bytes/s: what nccl-tests reports as busbw for big
  // messages, comparable to a link's line rate.
  double large_message_busbw_bytes_per_s() const;
};

struct CollectiveFitOptions {
  int max_segments = 3;
  int min_points_per_segment = 3;  // distinct sizes
  // Multiplies the information criterion's parameter penalty. Above 1 because the split points
  // are searched for, which buys more freedom than BIC's count of parameters assumes; 2 keeps
  // percent-level noise from splitting a straight line.
  double split_penalty = 2.0;
};

struct CollectiveFit {
  CollectiveModel model;
  std::vector<FitPoint> points;  // sorted by size
  FitError error;
};

// Points a collective fit needs.
// Distinct sizes (collective_sizes): five, so that a line through them misses at least three and
// the median error means something (two sizes fitted exactly, 0.00%, and gave a 222 us latency for
// 12 us; three passed the median gate at 0.00% with a worst of 53%; 2026-12-06 reviews). The
// probe measures 21 (11 with --quick). A segment needs min_points_per_segment distinct sizes.
inline constexpr size_t kCollectiveMinPoints = 5;

// Distinct sizes (bytes) among `points`: what the segments regress on.
size_t collective_sizes(const std::vector<CollectivePoint>& points);

// Fits points sharing op, ranks, algorithm, protocol and node count. The number of segments (1 to
// max_segments) and their boundaries minimise the Bayesian information criterion of the relative
// residuals, n ln(SSE / n) + split_penalty * (3 * segments - 1) * ln(n), so a split must pay for
// its extra parameters. Needs kCollectiveMinPoints; returns an
// empty fit (error.points == 0) otherwise.
CollectiveFit fit_collective(const std::vector<CollectivePoint>& points,
                             const CollectiveFitOptions& options = {});

}  // namespace clustersim::calib
