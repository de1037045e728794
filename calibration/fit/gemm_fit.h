// SPDX-License-Identifier: Apache-2.0
// GEMM cost model with tile and wave quantisation, and its fit to probe measurements.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/fit/fit_error.h"
#include "calibration/probe_file.h"

namespace clustersim::calib {

// Output tile computed by one thread block (CTA), in rows of C by columns of C.
struct GemmTile {
  int m = 128;
  int n = 128;
};

// Time of C[m x n] = A[m x k] B[k x n] on one GPU:
//
//   tiles  = ceil(m / tile.m) * ceil(n / tile.n)
//   waves  = ceil(tiles / sm_count)                        (one tile per SM at a time)
//   padded = 2 * waves * sm_count * tile.m * tile.n * k     (FLOPs as if every slot of every wave
//                                                            held a full tile)
//   t      = launch_s + padded / peak_flops_per_s + waves * wave_overhead_s
//
// so efficiency(shape) = 2mnk / (peak * (t - launch)) is the product of tile-padding efficiency,
// wave-quantisation efficiency (the last wave leaves SMs idle) and the per-wave prologue and
// epilogue cost. This is the wave-quantisation argument of NVIDIA's "Matrix Multiplication
// Background User's Guide" (Deep Learning Performance docs), with one fixed tile per data type
// where cuBLAS picks per shape; the fit chooses the tile that explains the data best.
struct GemmModel {
  DType dtype = DType::kBf16;
  int sm_count = 0;
  GemmTile tile;
  double launch_s = 0;            // fixed cost per GEMM launch
  double peak_flops_per_s = 0;    // rate on full tiles in full waves (achievable peak)
  double wave_overhead_s = 0;     // fixed cost per wave

  double predict_s(int64_t m, int64_t n, int64_t k) const;
  // Useful FLOPs over peak FLOPs for the kernel part of the time (launch excluded), in (0, 1].
  double efficiency(int64_t m, int64_t n, int64_t k) const;
  // The same per-wave cost written as an inner-loop length: per wave, time is proportional to
  // k + k_half, so efficiency carries the factor k / (k + k_half), with
  // k_half = wave_overhead_s * peak / (2 * tile.m * tile.n * sm_count). This is the form
  // calibration/compute_cost.h uses (Efficiencies::gemm_k_half).
  double k_half() const;
};

struct GemmFitOptions {
  // Tiles tried; the one with the lowest mean relative error wins. Tiles of equal area that divide
  // the measured shapes alike (128x256 and 256x128 on multiples of 256) predict nearly the same
  // times, so the winner among them says little about cuBLAS's real choice.
  std::vector<GemmTile> candidate_tiles = {{64, 64},   {64, 128},  {128, 64}, {128, 128},
                                           {128, 256}, {256, 128}, {256, 256}};
};

struct GemmFit {
  GemmModel model;
  std::vector<FitPoint> points;  // in the order of the input
  FitError error;
};

// Points a GEMM fit needs.
inline constexpr size_t kGemmMinPoints = 3;  // distinct shapes (gemm_shapes)

// Distinct (m, n, k) among `points`.
size_t gemm_shapes(const std::vector<GemmPoint>& points);

// Fits one data type's points (all of `points` must share `dtype`). `sm_count` comes from the
// probe header. Needs kGemmMinPoints; returns an empty fit (error.points == 0) otherwise.
GemmFit fit_gemm(const std::vector<GemmPoint>& points, int sm_count,
                 const GemmFitOptions& options = {});

}  // namespace clustersim::calib
