// SPDX-License-Identifier: Apache-2.0
// The fitters recover known parameters from synthetic measurements with noise.
#include <gtest/gtest.h>

#include <cmath>

#include "calibration/fit/attention_fit.h"
#include "calibration/fit/collective_fit.h"
#include "calibration/fit/fit_error.h"
#include "calibration/fit/gemm_fit.h"
#include "calibration/fit/least_squares.h"
#include "calibration/fit/memory_fit.h"
#include "calibration/synthetic_probe.h"

namespace clustersim::calib {
namespace {

constexpr uint64_t kSeed = 42;

// The synthetic H100 data set; model noise 2% per point and 1% jitter per sample (see
// SyntheticTruth). Tolerances below are several times the parameter spread this noise gives.
const SyntheticTruth& truth() {
  static const SyntheticTruth t = synthetic_h100_truth(8);
  return t;
}
const ProbeData& data() {
  static const ProbeData d = make_synthetic_probe(truth(), kSeed);
  return d;
}

double rel(double got, double want) { return std::abs(got - want) / want; }

TEST(FitError, MedianAndWorst) {
  const std::vector<FitPoint> pts = {{"a", 1.0, 1.1}, {"b", 2.0, 2.0}, {"c", 4.0, 3.0}};
  const FitError e = fit_error(pts);
  EXPECT_EQ(e.points, 3);
  EXPECT_NEAR(e.median_rel, 0.1, 1e-12);
  EXPECT_NEAR(e.worst_rel, 0.25, 1e-12);
  EXPECT_NEAR(e.mean_signed_rel, (0.1 + 0.0 - 0.25) / 3, 1e-12);  // which way the misses lean
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
}

TEST(LeastSquares, RecoversAnExactLineOverManyDecades) {
  // t = 5 us + bytes / 2e12, bytes from 1 KiB to 1 GiB: the constant dominates at one end, the
  // slope at the other; relative weighting must get both.
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (double b = 1024; b <= 1 << 30; b *= 4) {
    rows.push_back({1.0, b});
    y.push_back(5e-6 + b / 2e12);
  }
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  EXPECT_NEAR(theta[0], 5e-6, 1e-12);
  EXPECT_NEAR(1.0 / theta[1], 2e12, 1e3);
}

TEST(LeastSquares, KeepsParametersNonNegative) {
  // Data generated with a negative intercept: the constrained fit drops it to 0.
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
  for (double x = 1; x <= 10; x += 1) {
    rows.push_back({1.0, x});
    y.push_back(2.0 * x - 0.5);
  }
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  EXPECT_EQ(theta[0], 0.0);
  EXPECT_GT(theta[1], 1.5);
}

// Rows {1, x} for x = 1 .. n and their targets a + b x: a line to fit.
struct Line {
  std::vector<std::vector<double>> rows;
  std::vector<double> y;
};
Line line(int n, double a, double b) {
  Line l;
  for (int x = 1; x <= n; ++x) {
    l.rows.push_back({1.0, static_cast<double>(x)});
    l.y.push_back(a + b * x);
  }
  return l;
}

TEST(LeastSquares, RobustFitIgnoresAnOutlier) {
  auto [rows, y] = line(20, 1.0, 3.0);
  y[7] *= 3;  // one sample hit by, say, a clock dip
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  EXPECT_NEAR(theta[0], 1.0, 0.05);
  EXPECT_NEAR(theta[1], 3.0, 0.01);
}

// A point timed far too fast weighs as much as its error in relative terms, and IRLS does not
// tame it: it is left out of the fit (2026-12-06 review: one GEMM timed 100x too fast moved the
// fitted launch cost from 3.94 us to 0).
TEST(LeastSquares, LeavesOutAPointFarTooFast) {
  auto [rows, y] = line(200, 4.0, 3.0);
  y[2] /= 100;
  const std::vector<double> theta = fit_nonneg_relative(rows, y);
  EXPECT_NEAR(theta[0], 4.0, 0.05);
  EXPECT_NEAR(theta[1], 3.0, 0.01);
  // More wild rows than trim_max_share: the model, not the points, is in doubt; all stay in.
  for (size_t i = 10; i < 40; ++i) y[i] /= 100;
  const std::vector<double> kept = fit_nonneg_relative(rows, y);
  EXPECT_GT(std::abs(kept[0] - 4.0), 0.5);
}

TEST(GemmFit, RecoversPeakTileLaunchAndWaveCost) {
  for (const GemmModel& want : truth().gemm) {
    std::vector<GemmPoint> points;
    for (const GemmPoint& p : data().gemm) {
      if (p.dtype == want.dtype) points.push_back(p);
    }
    const GemmFit fit = fit_gemm(points, want.sm_count);
    SCOPED_TRACE(std::string(to_string(want.dtype)));
    // 128x256 and 256x128 quantise most transformer shapes alike (see GemmFitOptions); over 40
    // seeds the fit found the true area every time and the true orientation 80% of the time.
    EXPECT_EQ(fit.model.tile.m * fit.model.tile.n, want.tile.m * want.tile.n);
    EXPECT_LT(rel(fit.model.peak_flops_per_s, want.peak_flops_per_s), 0.02);
    EXPECT_LT(rel(fit.model.launch_s, want.launch_s), 0.05);
    EXPECT_LT(rel(fit.model.wave_overhead_s, want.wave_overhead_s), 0.05);
    EXPECT_LT(fit.error.median_rel, 0.05);
    EXPECT_EQ(fit.error.points, static_cast<int>(points.size()));
    // Against the noise-free truth the fitted model is far closer than the 2% noise.
    std::vector<FitPoint> vs_truth;
    for (const GemmPoint& p : points) {
      vs_truth.push_back({p.label, want.predict_s(p.m, p.n, p.k), fit.model.predict_s(p.m, p.n, p.k)});
    }
    EXPECT_LT(fit_error(vs_truth).median_rel, 0.005);
    EXPECT_LT(fit_error(vs_truth).worst_rel, 0.03);
  }
}

// A GEMM timed hundreds of times too fast runs at a rate no shape reaches on the GPU: the fit
// leaves it out and still finds the truth, and names it as its worst point. Until 2026-12-07 one
// of 720 points at 300x pulled every tile's fit to it (tile 128x64, launch cost 0; QA).
TEST(GemmFit, APointFasterThanAnyShapeRunsIsLeftOut) {
  const GemmModel& want = truth().gemm.front();
  for (const double factor : {300.0, 1e4}) {
    std::vector<GemmPoint> points;
    for (const GemmPoint& p : data().gemm) {
      if (p.dtype == want.dtype) points.push_back(p);
    }
    GemmPoint& wild = points[points.size() / 7];
    wild.timing.median_s /= factor;
    const std::string label = "m=" + std::to_string(wild.m) + " n=" + std::to_string(wild.n) + " k=" + std::to_string(wild.k);
    const GemmFit fit = fit_gemm(points, want.sm_count);
    SCOPED_TRACE(factor);
    EXPECT_EQ(fit.model.tile.m * fit.model.tile.n, want.tile.m * want.tile.n);
    EXPECT_LT(rel(fit.model.peak_flops_per_s, want.peak_flops_per_s), 0.02);
    EXPECT_LT(rel(fit.model.launch_s, want.launch_s), 0.05);
    EXPECT_EQ(fit.error.points, static_cast<int>(points.size()));
    EXPECT_EQ(fit.error.worst.label, label);
    EXPECT_GT(fit.error.worst_rel, factor / 2);
  }
}

TEST(GemmModel, EfficiencyFallsOnTheTailWave) {
  const GemmModel& m = truth().gemm.front();  // tile 128x256 over 132 SMs
  // 132 tiles fill one wave exactly; 133 need a second wave that is almost empty.
  const double full = m.efficiency(128 * 12, 256 * 11, 8192);
  const double tail = m.efficiency(128 * 12 + 1, 256 * 11, 8192);
  EXPECT_GT(full, 0.95);
  EXPECT_LT(tail, 0.55);
  EXPECT_NEAR(m.k_half(), m.wave_overhead_s * m.peak_flops_per_s / (2.0 * 128 * 256 * 132), 1e-9);
}

TEST(AttentionFit, RecoversRateAndScoreCost) {
  for (const AttentionModel& want : truth().attention) {
    std::vector<AttentionPoint> points;
    for (const AttentionPoint& p : data().attention) {
      if (p.direction == want.direction) points.push_back(p);
    }
    const AttentionFit fit = fit_attention(points);
    SCOPED_TRACE(std::string(to_string(want.direction)));
    // FLOPs and score elements differ only by the head size (64 or 128 here), so the two rates
    // trade against each other: over 40 seeds the rate came within 18%, the score cost within 6%.
    // Predictions are what matter and come much closer.
    EXPECT_LT(rel(fit.model.flops_per_s, want.flops_per_s), 0.2);
    EXPECT_LT(rel(fit.model.s_per_score_element, want.s_per_score_element), 0.1);
    EXPECT_LT(fit.error.median_rel, 0.05);
    std::vector<FitPoint> vs_truth;
    for (const AttentionPoint& p : points) {
      vs_truth.push_back({"", want.predict_s(p), fit.model.predict_s(p)});
    }
    EXPECT_LT(fit_error(vs_truth).median_rel, 0.02);
  }
}

TEST(AttentionFit, UnfusedChainRecoversTheGemmsScoreTraffic) {
  // Chains timed exactly as the simulator times them, with 8.4 B (forward) and 8.8 B (backward)
  // per score element for the GEMMs (about what an H200 gave, 2026-12-04): the fit gets the bytes
  // back, and at small shapes, where the FLOPs bind, the bytes do not matter.
  for (const auto& [direction, bytes] : {std::pair{Direction::kForward, 8.4}, std::pair{Direction::kBackward, 8.8}}) {
    AttentionModel want;
    want.direction = direction;
    // Three kernels forward, five backward (as the probe runs them and the simulator charges).
    const double launches = direction == Direction::kBackward ? 5 : 3;
    want.launch_s = launches * 3e-6;
    want.flops_per_s = 750e12;
    want.hbm_bytes_per_s = 4e12;
    want.s_per_score_element = kSoftmaxBytesPerScoreElement * (direction == Direction::kBackward ? 2 : 1) / 4e12;
    want.score_bytes = bytes;
    std::vector<AttentionPoint> points;
    for (AttentionPoint p : data().attention) {
      if (p.direction != direction || p.fused) continue;
      p.timing.median_s = want.predict_s(p);
      points.push_back(p);
    }
    ASSERT_GE(points.size(), 3u);
    const AttentionFit fit = fit_unfused_chain(points, 3e-6, 750e12, 4e12);
    SCOPED_TRACE(std::string(to_string(direction)));
    EXPECT_LT(rel(fit.model.score_bytes, bytes), 1e-3);
    EXPECT_LT(fit.error.worst_rel, 1e-3);
    EXPECT_DOUBLE_EQ(fit.model.flops_per_s, 750e12);
    EXPECT_DOUBLE_EQ(fit.model.launch_s, launches * 3e-6);
  }
  // Too few points, or no rates to fit against: no fit.
  EXPECT_EQ(fit_unfused_chain({}, 3e-6, 750e12, 4e12).error.points, 0);
  EXPECT_EQ(fit_unfused_chain(data().attention, 3e-6, 0, 4e12).error.points, 0);
}

// A fused kernel is fitted as the simulator times it: one launch (the GEMM fit's) plus its FLOPs
// at one rate. Timed so, the rate comes back; timed with costs that form lacks (an 84 us fixed
// cost, as FlashAttention-2 through PyTorch on an H200 fitted in the three-term form), the table
// shows the error the profile will have instead of hiding it (2026-12-06 QA: 0.57% in the table,
// 13-32% too fast as written).
TEST(AttentionFit, FusedKernelIsFittedAsTheSimulatorTimesIt) {
  std::vector<AttentionPoint> exact, extra;
  for (int64_t b : {1, 4, 8}) {
    for (int64_t s : {1024, 2048, 4096}) {
      AttentionPoint p;
      p.batch = b;
      p.seq_len = s;
      p.heads = 16;
      p.head_dim = 128;
      p.fused = true;
      p.timing.median_s = 3e-6 + attention_flops(p) / 400e12;
      exact.push_back(p);
      p.timing.median_s = 84e-6 + attention_flops(p) / 400e12;
      extra.push_back(p);
    }
  }
  const AttentionFit fit = fit_fused_attention(exact, 3e-6);
  EXPECT_LT(rel(fit.model.flops_per_s, 400e12), 1e-9);
  EXPECT_DOUBLE_EQ(fit.model.launch_s, 3e-6);
  EXPECT_EQ(fit.model.s_per_score_element, 0);
  EXPECT_LT(fit.error.worst_rel, 1e-9);
  const AttentionFit off = fit_fused_attention(extra, 3e-6);
  for (size_t i = 0; i < extra.size(); ++i) {
    EXPECT_DOUBLE_EQ(off.points[i].predicted_s, 3e-6 + attention_flops(extra[i]) / off.model.flops_per_s);
  }
  EXPECT_GT(off.error.worst_rel, 0.3);  // the smallest kernel: 84 us of a fixed cost the form lacks
  // Kernels shorter than the launch: an infinite rate, for the profile's range check to refuse.
  EXPECT_TRUE(std::isinf(fit_fused_attention(exact, 1.0).model.flops_per_s));
  EXPECT_EQ(fit_fused_attention({}, 3e-6).error.points, 0);
}

TEST(MemoryFit, RecoversBandwidthAndLaunch) {
  for (const MemoryModel& want : truth().memory) {
    std::vector<MemoryPoint> points;
    for (const MemoryPoint& p : data().memory) {
      if (p.op == want.op) points.push_back(p);
    }
    const MemoryFit fit = fit_memory(points);
    SCOPED_TRACE(std::string(to_string(want.op)));
    EXPECT_LT(rel(fit.model.bw_bytes_per_s, want.bw_bytes_per_s), 0.03);
    EXPECT_LT(rel(fit.model.launch_s, want.launch_s), 0.05);
    EXPECT_LT(fit.error.median_rel, 0.05);
  }
}

TEST(CollectiveFit, FindsTheProtocolSwitchAndRecoversEachSegment) {
  int checked = 0;
  for (const CollectiveModel& want : truth().collectives) {
    std::vector<CollectivePoint> points;
    for (const CollectivePoint& p : data().collectives) {
      if (p.op == want.op && p.ranks == want.ranks) points.push_back(p);
    }
    const CollectiveFit fit = fit_collective(points);
    SCOPED_TRACE(std::string(to_string(want.op)) + " x" + std::to_string(want.ranks));
    // Over 40 seeds, 1.6% of the fits picked a different segment count; this seed picks right.
    ASSERT_EQ(fit.model.segments.size(), want.segments.size());
    for (size_t i = 0; i < want.segments.size(); ++i) {
      const AlphaBetaSegment& got = fit.model.segments[i];
      const AlphaBetaSegment& ref = want.segments[i];
      EXPECT_EQ(got.min_bytes, ref.min_bytes);
      EXPECT_EQ(got.max_bytes, ref.max_bytes);
      EXPECT_LT(rel(got.alpha_s, ref.alpha_s), 0.1);
    }
    // Bandwidth is identifiable where transfer time dominates: the large-size segment. Below
    // 256 KiB the latency dominates and beta is poorly determined (and matters little).
    EXPECT_LT(rel(fit.model.segments.back().bandwidth_bytes_per_s(),
                  want.segments.back().bandwidth_bytes_per_s()), 0.05);
    EXPECT_LT(fit.error.median_rel, 0.05);
    std::vector<FitPoint> vs_truth;
    for (const CollectivePoint& p : points) {
      vs_truth.push_back({"", want.predict_s(p.bytes), fit.model.predict_s(p.bytes)});
    }
    EXPECT_LT(fit_error(vs_truth).median_rel, 0.02);
    ++checked;
  }
  EXPECT_EQ(checked, 19);  // 5 ops x 2, 4, 8 ranks + 4 ops on 1 rank
}

TEST(CollectiveModel, BusBandwidthOfAllReduce) {
  CollectiveModel m;
  m.op = CollectiveKind::kAllReduce;
  m.ranks = 8;
  m.segments.push_back({1024, 1 << 30, 20e-6, 1.0 / 200e9});
  EXPECT_NEAR(m.large_message_busbw_bytes_per_s(), 200e9 * 2 * 7 / 8, 1);
  EXPECT_NEAR(m.predict_s(1 << 20), 20e-6 + (1 << 20) / 200e9, 1e-15);
}

// A collective on `ranks` GPUs timed exactly on the line alpha + bytes / bandwidth, at every
// power of two from 1 KiB to 1 GiB.
std::vector<CollectivePoint> line_points(int ranks, double alpha_s, double bytes_per_s) {
  std::vector<CollectivePoint> points;
  for (int64_t b = 1024; b <= (int64_t{1} << 30); b *= 2) {
    CollectivePoint p;
    p.ranks = ranks;
    p.bytes = b;
    p.timing.median_s = alpha_s + static_cast<double>(b) / bytes_per_s;
    points.push_back(p);
  }
  return points;
}

TEST(CollectiveFit, OneSegmentForAStraightLine) {
  const std::vector<CollectivePoint> points = line_points(4, 10e-6, 100e9);
  const CollectiveFit fit = fit_collective(points);
  ASSERT_EQ(fit.model.segments.size(), 1u);
  EXPECT_NEAR(fit.model.segments[0].alpha_s, 10e-6, 1e-9);
  EXPECT_LT(fit.error.worst_rel, 1e-6);
}

// Repeated measurements of one size (probe files fitted together) stay in one segment: segments
// start and end between sizes (since 2026-12-06, when the split search went over the distinct
// sizes, not every point).
TEST(CollectiveFit, RepeatedSizesStayInOneSegment) {
  std::vector<CollectivePoint> points;
  for (int copy = 0; copy < 3; ++copy) {
    for (int64_t b = 1024; b <= (int64_t{1} << 30); b *= 2) {
      CollectivePoint p;
      p.ranks = 8;
      p.bytes = b;
      const double alpha = b < (int64_t{1} << 18) ? 8e-6 : 30e-6;  // a protocol switch at 256 KiB
      p.timing.median_s = (alpha + static_cast<double>(b) / 150e9) * (1.0 + 0.003 * (copy - 1));
      points.push_back(p);
    }
  }
  const CollectiveFit fit = fit_collective(points);
  ASSERT_GE(fit.model.segments.size(), 2u);
  for (size_t i = 1; i < fit.model.segments.size(); ++i) {
    EXPECT_LT(fit.model.segments[i - 1].max_bytes, fit.model.segments[i].min_bytes);
  }
  EXPECT_LT(fit.error.median_rel, 0.01);
}

// Two sizes fit a line exactly (0.00%) and say nothing of the model: five are needed. A wild
// point does not split off a segment whose time does not grow with the size ("inf GB/s").
TEST(CollectiveFit, NeedsFiveSizesAndNoFlatSegments) {
  std::vector<CollectivePoint> points = line_points(8, 12e-6, 200e9);
  const std::vector<CollectivePoint> two(points.end() - 2, points.end());
  EXPECT_EQ(fit_collective(two).error.points, 0);
  EXPECT_EQ(fit_collective(std::vector<CollectivePoint>(points.end() - 4, points.end())).error.points, 0);
  EXPECT_EQ(fit_collective(std::vector<CollectivePoint>(points.end() - 5, points.end())).error.points, 5);
  // Two runs of 21 sizes whose two largest follow another line (a protocol switch): 4 points of 2
  // sizes would fit it exactly, but a segment needs 3 sizes (until 2026-12-06, 3 points).
  std::vector<CollectivePoint> twice;
  for (int copy = 0; copy < 2; ++copy) {
    for (CollectivePoint p : points) {
      if (p.bytes >= (int64_t{1} << 29)) p.timing.median_s = 400e-6 + static_cast<double>(p.bytes) / 100e9;
      p.timing.median_s *= 1.0 + 0.002 * copy;
      twice.push_back(p);
    }
  }
  for (const AlphaBetaSegment& s : fit_collective(twice).model.segments) EXPECT_GE(s.max_bytes, 4 * s.min_bytes);
  points.back().timing.median_s *= 0.2;  // the 1 GiB point 5x too fast
  const CollectiveFit fit = fit_collective(points);
  for (const AlphaBetaSegment& s : fit.model.segments) EXPECT_GT(s.beta_s_per_byte, 0) << s.min_bytes;
}

// A size timed far too fast is left out of the segments and named as the worst point (QA
// 2026-12-07: an 8-GPU all-reduce's 32 MiB point at 0.3x fitted a segment of 8,261 GB/s busbw,
// 18x NVLink's line rate, the fit's median improved and the wild-point note blamed 16 MiB; the
// 1 GiB point at 0.3x gave a 1.2 ms latency). A point timed slow was already handled.
TEST(CollectiveFit, ASizeTimedFarTooFastIsLeftOut) {
  const std::vector<CollectivePoint> clean = line_points(8, 12e-6, 200e9);
  for (const int64_t wild : {int64_t{1} << 25, int64_t{1} << 30}) {
    std::vector<CollectivePoint> points = clean;
    for (CollectivePoint& p : points) {
      if (p.bytes == wild) p.timing.median_s *= 0.3;
    }
    const CollectiveFit fit = fit_collective(points);
    SCOPED_TRACE(wild);
    ASSERT_EQ(fit.model.segments.size(), 1u);
    EXPECT_NEAR(fit.model.segments[0].alpha_s, 12e-6, 1e-9);
    EXPECT_NEAR(fit.model.segments[0].bandwidth_bytes_per_s(), 200e9, 1e-3 * 200e9);
    EXPECT_EQ(fit.points.size(), points.size());  // still reported
    EXPECT_EQ(fit.error.worst.bytes, wild);
  }
}

TEST(Fitters, NeedEnoughPoints) {
  EXPECT_EQ(fit_gemm({}, 132).error.points, 0);
  EXPECT_EQ(fit_memory({}).error.points, 0);
  EXPECT_EQ(fit_attention({}).error.points, 0);
  EXPECT_EQ(fit_collective({}).error.points, 0);
  // Points of one size say nothing about launch cost against bandwidth, whatever else differs
  // (a layernorm's row length, a collective's node count): one size is one point.
  MemoryPoint m;
  m.op = MemoryOpKind::kLayerNorm;
  m.bytes = 1 << 20;
  m.timing.median_s = 1e-5;
  MemoryPoint m2 = m;
  m2.row_elements = 4096;
  EXPECT_EQ(memory_shapes({m, m2}), 1u);
  EXPECT_EQ(fit_memory({m, m2}).error.points, 0);
  CollectivePoint c;
  c.bytes = 1 << 20;
  c.ranks = 8;
  c.timing.median_s = 1e-4;
  CollectivePoint c2 = c;
  c2.nodes = 2;
  EXPECT_EQ(collective_sizes({c, c2}), 1u);
  EXPECT_EQ(fit_collective({c, c2}).error.points, 0);
}

}  // namespace
}  // namespace clustersim::calib
