// SPDX-License-Identifier: Apache-2.0
// Attention cost model (compute term plus score-matrix traffic) and its fit to probe measurements.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/fit/fit_error.h"
#include "calibration/probe_file.h"

namespace clustersim::calib {

// FLOPs of self-attention over [batch, heads, seq, head_dim]. Forward: QK^T and PV, each
// 2 * seq^2 * head_dim per head, so 4 * b * h * s^2 * d (FlashAttention paper, Dao et al. 2022,
// section 3). Backward: a fused kernel recomputes QK^T and runs four more matmuls (dV, dP, dQ, dK),
// 2.5x the forward; the unfused chain keeps P and runs the four, 2x. A causal fused kernel skips the
// masked half; the chain computes it anyway.
double attention_flops(const AttentionPoint& p);

// Elements of the score matrix, b * h * s^2: the unfused chain writes and reads it (S, then P,
// and dP, dS going backward) through HBM, which is what makes it slower than a fused kernel.
double attention_score_elements(const AttentionPoint& p);

// t = launch_s + flops / flops_per_s + score_elements * s_per_score_element, or with
// score_bytes > 0 (the unfused chain as the simulator times it, fit_unfused_chain):
// t = launch_s + max(flops / flops_per_s, score_elements * score_bytes / hbm_bytes_per_s)
//     + score_elements * s_per_score_element.
// One model per (direction, fused, dtype). For a fused kernel s_per_score_element fits to ~0.
struct AttentionModel {
  Direction direction = Direction::kForward;
  bool fused = false;
  DType dtype = DType::kBf16;
  double launch_s = 0;
  double flops_per_s = 0;
  double s_per_score_element = 0;
  double score_bytes = 0;      // the chain GEMMs' HBM bytes per score element (roofline form)
  double hbm_bytes_per_s = 0;  // the rate they move at

  double predict_s(const AttentionPoint& shape) const;
};

struct AttentionFit {
  AttentionModel model;
  std::vector<FitPoint> points;
  FitError error;
};

// Points an attention fit needs (both forms).
inline constexpr size_t kAttentionMinPoints = 3;  // distinct shapes (attention_shapes)

// Distinct (batch, seq_len, heads, head_dim, causal) among `points`.
size_t attention_shapes(const std::vector<AttentionPoint>& points);

// Fits points sharing direction, fused flag and dtype. Needs kAttentionMinPoints; returns an empty
// fit (error.points == 0) otherwise.
AttentionFit fit_attention(const std::vector<AttentionPoint>& points);

// A fused kernel's points (one direction and dtype) as the simulator times them
// (calib::attention_time): one launch of `launch_s` (the GEMM fit's, which the profile's
// kernel_launch takes) plus FLOPs at one rate, the free parameter, fitted by relative least squares
// in closed form: with a_i = F_i / t_i, 1 / rate = sum a_i (1 - launch_s / t_i) / sum a_i^2. Since
// 2026-12-06; before, fit_attention's three terms, whose launch (84 us on FlashAttention-2 forward
// on an H200) and score-element terms the profile dropped: the table read 0.57% while the written
// profile timed the same kernels 13-32% fast. A rate that comes out infinite (kernels shorter than
// a launch) is left for the profile's range check to refuse. Needs kAttentionMinPoints.
AttentionFit fit_fused_attention(const std::vector<AttentionPoint>& points, double launch_s);

// The softmax between the chain's GEMMs reads and writes each 16-bit score element once going
// forward (2 + 2 bytes), twice that backward, as workloads' layer_elementwise_bytes charges it.
inline constexpr double kSoftmaxBytesPerScoreElement = 4.0;

// The unfused chain (points of one direction) as the simulator times it: three launches of
// `launch_s`, the GEMMs at the larger of their FLOPs at `gemm_flops_per_s` and their score-matrix
// traffic, and the softmax's kSoftmaxBytesPerScoreElement (twice backward), both at
// `hbm_bytes_per_s`. Fits the GEMMs' bytes per score element (score_bytes), the one free
// parameter, by relative least squares. Measured chains are bound by that traffic, not their
// FLOPs (an H200, 2026-12-04: head size 64 and 128 take about the same time), so the three-term
// fit_attention finds no FLOP rate there. Needs kAttentionMinPoints.
AttentionFit fit_unfused_chain(const std::vector<AttentionPoint>& points, double launch_s, double gemm_flops_per_s,
                               double hbm_bytes_per_s);

}  // namespace clustersim::calib
