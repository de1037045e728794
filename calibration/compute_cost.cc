// SPDX-License-Identifier: Apache-2.0
#include "calibration/compute_cost.h"

#include <algorithm>
#include <cassert>

namespace clustersim::calib {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// One problem's output tiles, the share of them its m x n fills (tile padding) and its inner loop's
// efficiency k / (k + gemm_k_half): gemm_shape_efficiency's factors but the waves, which a grouped
// GEMM counts over all its problems' tiles together.
struct TileFactors {
  int64_t tiles;
  double tile;
  double inner;
};
TileFactors tile_factors(int64_t m, int64_t n, int64_t k, const Efficiencies& e) {
  const int64_t tm = ceil_div(m, e.gemm_tile_m);
  const int64_t tn = ceil_div(n, e.gemm_tile_n);
  return {tm * tn,
          (static_cast<double>(m) * static_cast<double>(n)) /
              (static_cast<double>(tm * e.gemm_tile_m) * static_cast<double>(tn * e.gemm_tile_n)),
          static_cast<double>(k) / static_cast<double>(k + e.gemm_k_half)};
}

// The share of the SMs' slots `tiles` fill over the waves they take (the last wave's idle SMs).
double wave_factor(int64_t tiles, int sm_count) {
  const int64_t sms = std::max(1, sm_count);
  return static_cast<double>(tiles) / static_cast<double>(ceil_div(tiles, sms) * sms);
}

}  // namespace

double gemm_shape_efficiency(int64_t m, int64_t n, int64_t k, const HardwareProfile& hw) {
  assert(m > 0 && n > 0 && k > 0 && "GEMM dimensions must be positive");
  const TileFactors f = tile_factors(m, n, k, hw.eff);
  return wave_factor(f.tiles, hw.sm_count) * f.tile * f.inner;
}

Time gemm_time(int64_t m, int64_t n, int64_t k, Precision precision, const HardwareProfile& hw,
               int64_t count) {
  const double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) *
                       static_cast<double>(count);
  const double rate = hw.peak(precision).per_s * gemm_efficiency(precision, hw) * gemm_shape_efficiency(m, n, k, hw);
  return hw.eff.kernel_launch + Time::s(flops / rate);
}

Time grouped_gemm_time(const std::vector<GemmProblem>& problems, Precision precision, const HardwareProfile& hw) {
  int64_t tiles = 0;
  double padded = 0;  // the problems' work at their own tile and inner-loop efficiency
  for (const GemmProblem& g : problems) {
    if (g.m <= 0 || g.n <= 0 || g.k <= 0) continue;
    const TileFactors f = tile_factors(g.m, g.n, g.k, hw.eff);
    tiles += f.tiles;
    padded += 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) / (f.tile * f.inner);
  }
  if (tiles == 0) return Time::zero();
  const double wave = wave_factor(tiles, hw.sm_count);
  return hw.eff.kernel_launch + Time::s(padded / (hw.peak(precision).per_s * gemm_efficiency(precision, hw) * wave));
}

double gemm_efficiency(Precision precision, const HardwareProfile& hw) {
  if (precision != Precision::kFp8) return hw.eff.gemm_max;
  return hw.eff.gemm_max_fp8 > 0 ? hw.eff.gemm_max_fp8 : hw.eff.gemm_max;
}

Time attention_time(Flops executed, AttentionKernel kernel, Precision precision, const HardwareProfile& hw,
                    double score_elements, bool backward) {
  // FlashAttention-2 over FlashAttention: "around 2x speedup" (Dao 2023, abstract).
  constexpr double kFlash2OverFlash1 = 2.0;
  const double eff = kernel == AttentionKernel::kFlash2   ? hw.eff.attention_fused
                     : kernel == AttentionKernel::kFlash1 ? hw.eff.attention_fused / kFlash2OverFlash1
                                                          : hw.eff.attention_unfused;
  // The unfused chain is two batched GEMMs plus a softmax kernel forward (three launches) and
  // four GEMMs plus the softmax's backward kernel backward (five; as the probe runs it). Until
  // 2026-12-05 the backward chain was charged three.
  const int64_t launches = kernel == AttentionKernel::kUnfused ? (backward ? 5 : 3) : 1;
  Time work = Time::s(executed.n / (hw.peak(precision).per_s * eff));
  const double score_bytes = backward ? hw.eff.attention_score_bytes_backward : hw.eff.attention_score_bytes;
  if (kernel == AttentionKernel::kUnfused && score_bytes > 0) {
    work = max(work, Time::s(score_elements * score_bytes / (hw.hbm_bandwidth.bytes_per_s * hw.eff.hbm)));
  }
  return launches * hw.eff.kernel_launch + work;
}

Time memory_time(Bytes bytes, const HardwareProfile& hw) {
  return hw.eff.kernel_launch + Time::s(bytes.as_double() / (hw.hbm_bandwidth.bytes_per_s * hw.eff.hbm));
}

}  // namespace clustersim::calib
