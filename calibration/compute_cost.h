// SPDX-License-Identifier: Apache-2.0
// Time of one GPU kernel from its shape and the hardware profile: GEMMs, attention, and
// memory-bound kernels. Pure functions; the parameters come from a (fitted) HardwareProfile.
#pragma once

#include <cstdint>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/units.h"

namespace clustersim::calib {

// Efficiency of an (m x k) * (k x n) GEMM relative to the profile's gemm_max:
//   waves   = ceil(tiles / sm_count), tiles = ceil(m / tile_m) * ceil(n / tile_n)
//   wave    = tiles / (waves * sm_count)              (tail-wave quantisation, NVIDIA
//             "Matrix Multiplication Background" user guide, section "Wave quantization")
//   tile    = (m * n) / (ceil(m/tile_m)*tile_m * ceil(n/tile_n)*tile_n)   (tile quantisation, ibid.)
//   inner   = k / (k + k_half)                        (short inner loops amortise prologue/epilogue)
// and returns wave * tile * inner, in (0, 1].
double gemm_shape_efficiency(int64_t m, int64_t n, int64_t k, const HardwareProfile& hw);

// The fraction of the precision's peak a large, well-shaped GEMM reaches: gemm_max, and for FP8
// gemm_max_fp8 where the profile gives one (a fitted profile does: the H200 probe measured 0.729
// of the FP8 peak against 0.777 of BF16's, FP8 at 1.88x BF16's rate), else gemm_max (FP8 at the
// datasheets' 2x; the built-in profiles, whose serving suite reads 6.74% so and 8.23% at 1.88x).
double gemm_efficiency(Precision precision, const HardwareProfile& hw);

// t = launch + 2mnk / (peak(precision) * gemm_efficiency(precision) * gemm_shape_efficiency), per GEMM; `count`
// identical GEMMs (a batch) share one launch.
Time gemm_time(int64_t m, int64_t n, int64_t k, Precision precision, const HardwareProfile& hw,
               int64_t count = 1);

// A grouped GEMM (CUTLASS grouped, Transformer Engine's GroupedLinear: one kernel over several
// problems of one shape but their rows, as Megatron-LM's --moe-grouped-gemm runs an MoE layer's
// experts): one launch, and the problems' tiles share the waves, so the tail-wave quantisation is
// over their tiles together while tile quantisation and the inner loop stay each problem's own:
//   t = launch + sum_i 2 m_i n_i k_i / (peak x gemm_efficiency x tile_i x inner_i) / wave_all,
//   wave_all = sum_i tiles_i / (ceil(sum_i tiles_i / sm_count) x sm_count)
// One problem gives gemm_time. Problems with a zero dimension are skipped; none gives zero.
struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
};
Time grouped_gemm_time(const std::vector<GemmProblem>& problems, Precision precision, const HardwareProfile& hw);

// Which attention kernel runs: the matmul-softmax-matmul chain, FlashAttention (Dao et al. 2022)
// or FlashAttention-2 (Dao 2023).
enum class AttentionKernel { kUnfused, kFlash1, kFlash2 };

// Scaled-dot-product attention over `flops` of QK^T and AV work (counted as executed: causal
// masking halves it for fused kernels; see workloads/transformer.h). FlashAttention-2 runs at
// attention_fused x peak, FlashAttention(-1) at half that (Dao 2023, abstract: FlashAttention-2 is
// about 2x faster, 50-73% of peak on A100 against 25-40%); the unfused chain runs its GEMMs at
// attention_unfused x peak, or, with the profile's attention_score_bytes (_backward when
// `backward`), at the larger of that and their score-matrix traffic (a roofline):
//   t = 3 launches (5 backward) + max(flops / (peak x attention_unfused), score_elements x bytes / (HBM x hbm))
// `score_elements` = batch x heads x query rows x key columns on the GPU (b (a/t) (s/c) s). The
// softmax between the GEMMs is a memory-bound kernel of its own (workloads' elementwise bytes).
Time attention_time(Flops executed, AttentionKernel kernel, Precision precision, const HardwareProfile& hw,
                    double score_elements = 0, bool backward = false);

// A streaming, memory-bound kernel moving `bytes` (reads + writes): launch + bytes / (hbm x eff).
Time memory_time(Bytes bytes, const HardwareProfile& hw);

}  // namespace clustersim::calib
