// SPDX-License-Identifier: Apache-2.0
// Synthetic probe data: measurements generated from known cost models plus seeded noise.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/fit/attention_fit.h"
#include "calibration/fit/collective_fit.h"
#include "calibration/fit/gemm_fit.h"
#include "calibration/fit/memory_fit.h"
#include "calibration/probe_file.h"

namespace clustersim::calib {

// The models behind a synthetic probe file, and how noisy its "measurements" are.
struct SyntheticTruth {
  ProbeHeader header;                       // header.synthetic is true
  std::vector<GemmModel> gemm;              // one per dtype
  std::vector<AttentionModel> attention;    // one per (direction, fused)
  std::vector<MemoryModel> memory;          // one per op
  std::vector<CollectiveModel> collectives; // one per (op, ranks)
  // Per point, the true time is scaled by exp(N(0, model_noise)) (what the model cannot explain),
  // then `repetitions` samples each scaled by exp(N(0, jitter)) give median and spread.
  double model_noise = 0.02;
  double jitter = 0.01;
  int repetitions = 20;
};

// Plausible H100 SXM numbers (datasheet-like peaks derated to achievable rates, NVLink 4 busbw of
// ~370 GB/s) on `gpu_count` GPUs. Made up for tests and demos, not measured.
SyntheticTruth synthetic_h100_truth(int gpu_count = 8);

// Generates a probe file from `truth`: the transformer GEMM shapes (QKV, attention output, MLP
// up/down, LM head for forward, data-gradient and weight-gradient passes over hidden sizes, TP
// degrees and token counts), attention over sequence lengths, heads and head sizes, memory kernels
// from 4 KiB to 1 GiB and collectives from 1 KiB to 1 GiB. The same seed gives the same bytes.
ProbeData make_synthetic_probe(const SyntheticTruth& truth, uint64_t seed);

}  // namespace clustersim::calib
