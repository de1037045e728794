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

// t = launch_s + flops / flops_per_s + score_elements * s_per_score_element.
// One model per (direction, fused, dtype). For a fused kernel s_per_score_element fits to ~0.
struct AttentionModel {
  Direction direction = Direction::kForward;
  bool fused = false;
  DType dtype = DType::kBf16;
  double launch_s = 0;
  double flops_per_s = 0;
  double s_per_score_element = 0;

  double predict_s(const AttentionPoint& shape) const;
};

struct AttentionFit {
  AttentionModel model;
  std::vector<FitPoint> points;
  FitError error;
};

// Fits points sharing direction, fused flag and dtype. Needs at least 3 points; returns an empty
// fit (error.points == 0) otherwise.
AttentionFit fit_attention(const std::vector<AttentionPoint>& points);

}  // namespace clustersim::calib
