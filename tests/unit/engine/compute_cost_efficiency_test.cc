// SPDX-License-Identifier: Apache-2.0
// The kernel cost models the analytical level is built on (calibration/compute_cost.h): GEMM
// wave and tile quantisation, launch overheads, attention and memory-bound kernels. Kept with the
// engine tests because the engine is their consumer; the calibration folder tests the fits.
#include "calibration/compute_cost.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/core/error.h"
#include "tests/unit/core/unit_printers.h"

namespace clustersim::calib {
namespace {

// A made-up GPU with round numbers (so the arithmetic below is easy to follow): 1000 TFLOP/s
// BF16, 2000 GB/s HBM, 132 SMs, 128 x 256 output tiles, k_half 64, 4 us launches.
HardwareProfile round_gpu() {
  HardwareProfile hw;
  hw.name = "round";
  hw.bf16 = tflops(1000);
  hw.fp16 = tflops(1000);
  hw.fp32 = tflops(50);
  hw.hbm_capacity = Bytes::gib(80);
  hw.hbm_bandwidth = gbytes_per_s(2000);
  hw.nvlink_bandwidth = gbytes_per_s(450);
  hw.sm_count = 132;
  hw.eff.gemm_max = 0.8;
  hw.eff.gemm_tile_m = 128;
  hw.eff.gemm_tile_n = 256;
  hw.eff.gemm_k_half = 64;
  hw.eff.kernel_launch = Time::us(4);
  hw.eff.attention_fused = 0.5;
  hw.eff.attention_unfused = 0.4;
  hw.eff.hbm = 0.8;
  return hw;
}

// 12 x 11 = 132 output tiles of 128 x 256: exactly one full wave on 132 SMs.
constexpr int64_t kM = 12 * 128;  // 1536
constexpr int64_t kN = 11 * 256;  // 2816

TEST(GemmShapeEfficiency, WholeWavesOfWholeTilesLeaveOnlyTheInnerTerm) {
  const HardwareProfile hw = round_gpu();
  // wave = 132 / (1 x 132) = 1, tile = 1, inner = k / (k + 64): 4032 / 4096 = 0.984375.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(kM, kN, 4032, hw), 4032.0 / 4096.0);
  // Two full waves (264 tiles) are just as good.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(2 * kM, kN, 4032, hw), 4032.0 / 4096.0);
  // inner grows with k: 64 -> 1/2, 192 -> 3/4.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(kM, kN, 64, hw), 0.5);
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(kM, kN, 192, hw), 0.75);
}

TEST(GemmShapeEfficiency, TailWaveCostsAWholeWave) {
  const HardwareProfile hw = round_gpu();
  // 13 x 11 = 143 tiles: two waves, the second with 11 of 132 SMs busy:
  // wave = 143 / (2 x 132) = 0.5417.
  const double inner = 4032.0 / 4096.0;
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(kM + 128, kN, 4032, hw), 143.0 / 264.0 * inner);
  EXPECT_LT(gemm_shape_efficiency(kM + 128, kN, 4032, hw), gemm_shape_efficiency(kM, kN, 4032, hw));
  // A single tile uses 1 of 132 SMs.
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(128, 256, 4032, hw), 1.0 / 132.0 * inner);
}

TEST(GemmShapeEfficiency, PartialTilesAreWasted) {
  const HardwareProfile hw = round_gpu();
  // m = 1472 still needs 12 row tiles (11.5 rounded up): tile = 1472 / 1536; waves unchanged.
  const double inner = 4032.0 / 4096.0;
  EXPECT_DOUBLE_EQ(gemm_shape_efficiency(kM - 64, kN, 4032, hw), (1472.0 / 1536.0) * inner);
}

TEST(GemmShapeEfficiency, StaysInZeroOne) {
  const HardwareProfile hw = round_gpu();
  for (int64_t m : {1, 7, 128, 1000, 4096, 100000}) {
    for (int64_t n : {1, 255, 256, 3000, 50000}) {
      for (int64_t k : {1, 64, 4096}) {
        const double e = gemm_shape_efficiency(m, n, k, hw);
        EXPECT_GT(e, 0.0) << m << " " << n << " " << k;
        EXPECT_LE(e, 1.0) << m << " " << n << " " << k;
      }
    }
  }
}

TEST(GemmTime, LaunchPlusFlopsOverEffectiveRate) {
  const HardwareProfile hw = round_gpu();
  // 2 m n k = 2 x 1536 x 2816 x 4032 = 34,879,832,064 FLOP at 1000e12 x 0.8 x 0.984375
  // = 7.875e14 FLOP/s -> 44.29185024 us; plus the 4 us launch = 48,291,850 ps (rounded).
  EXPECT_EQ(gemm_time(kM, kN, 4032, Precision::kBf16, hw).as_ps(), 48'291'850);
  // A batch of 3 shares one launch: 4 us + 3 x 44.29185024 us.
  EXPECT_EQ(gemm_time(kM, kN, 4032, Precision::kBf16, hw, 3).as_ps(), 4'000'000 + 132'875'551);
}

// FP8 runs at its own peak times gemm_max_fp8 where the profile gives it (a fitted profile does),
// else gemm_max: twice BF16's rate on a datasheet of twice the peak (until 2026-12-07, always).
TEST(GemmTime, Fp8TakesItsOwnEfficiency) {
  HardwareProfile hw = round_gpu();
  hw.fp8 = tflops(2000);
  const auto flop_time = [&](Precision p) { return (gemm_time(kM, kN, 4032, p, hw) - hw.eff.kernel_launch).as_s(); };
  EXPECT_NEAR(flop_time(Precision::kBf16) / flop_time(Precision::kFp8), 2.0, 1e-6);
  hw.eff.gemm_max_fp8 = 0.6;  // 2000 x 0.6 = 1.5x BF16's 1000 x 0.8
  EXPECT_NEAR(flop_time(Precision::kBf16) / flop_time(Precision::kFp8), 1.5, 1e-6);
  EXPECT_EQ(gemm_efficiency(Precision::kBf16, hw), 0.8);
  const HardwareProfile back = parse_hardware_profile(format_hardware_profile(hw), "fp8.yaml");
  EXPECT_EQ(back.eff.gemm_max_fp8, 0.6);
}

TEST(GemmTime, UnsupportedPrecisionIsBadInput) {
  const HardwareProfile hw = round_gpu();  // fp8 left at zero
  EXPECT_THROW(gemm_time(kM, kN, 4032, Precision::kFp8, hw), BadInput);
  try {
    (void)hw.peak(Precision::kFp8);
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors().at(0).key_path, "training.precision");
    EXPECT_NE(e.errors().at(0).message.find("no peak.fp8 rate"), std::string::npos) << e.what();
  }
}

// A grouped GEMM: one problem is gemm_time; several share one launch and their waves. 12
// problems of 128 x 256 x 4032 (one tile each) fill one wave of 132 SMs together with 120 more
// tiles of others, where each alone uses 1 of 132 SMs.
TEST(GroupedGemmTime, OneProblemIsAGemmAndManyShareTheirWaves) {
  const HardwareProfile hw = round_gpu();
  EXPECT_EQ(grouped_gemm_time({{kM + 128, kN, 4032}}, Precision::kBf16, hw), gemm_time(kM + 128, kN, 4032, Precision::kBf16, hw));
  EXPECT_EQ(grouped_gemm_time({}, Precision::kBf16, hw), Time::zero());
  EXPECT_EQ(grouped_gemm_time({{0, kN, 4032}}, Precision::kBf16, hw), Time::zero());
  // 132 one-tile problems: one full wave, 132 x 2 x 128 x 256 x 4032 FLOPs at 0.8 x 1000 TFLOP/s x
  // inner 4032 / 4096, one launch.
  const std::vector<GemmProblem> many(132, GemmProblem{128, 256, 4032});
  const double flops = 132.0 * 2 * 128 * 256 * 4032;
  const Time expected = Time::us(4) + Time::s(flops / (1000e12 * 0.8 * 4032.0 / 4096.0));
  EXPECT_NEAR(grouped_gemm_time(many, Precision::kBf16, hw).as_s(), expected.as_s(), 1e-12);
  // One at a time, each its own launch and a wave of 1 of 132 SMs: 132 x (4 us + 132 x its work).
  Time apart;
  for (const GemmProblem& g : many) apart += gemm_time(g.m, g.n, g.k, Precision::kBf16, hw);
  EXPECT_GT(apart, 100 * grouped_gemm_time(many, Precision::kBf16, hw));
  // Rows that do not fill a tile still waste its rest: 132 problems of 64 rows take as long as 128.
  const std::vector<GemmProblem> half(132, GemmProblem{64, 256, 4032});
  EXPECT_EQ(grouped_gemm_time(half, Precision::kBf16, hw), grouped_gemm_time(many, Precision::kBf16, hw));
}

TEST(AttentionTime, FusedAndUnfused) {
  const HardwareProfile hw = round_gpu();
  // 1e12 FLOP: fused at 0.5 x 1000 TFLOP/s = 2 ms + 1 launch; unfused at 0.4 = 2.5 ms + 3 launches.
  EXPECT_EQ(attention_time(Flops{1e12}, AttentionKernel::kFlash2, Precision::kBf16, hw), Time::ms(2) + Time::us(4));
  EXPECT_EQ(attention_time(Flops{1e12}, AttentionKernel::kUnfused, Precision::kBf16, hw), Time::ms(2.5) + Time::us(12));
  // FlashAttention(-1): half FlashAttention-2's rate (Dao 2023), one launch.
  EXPECT_EQ(attention_time(Flops{1e12}, AttentionKernel::kFlash1, Precision::kBf16, hw), Time::ms(4) + Time::us(4));
}

TEST(AttentionTime, UnfusedChainIsBoundByItsScoreTrafficWhereTheProfileGivesIt) {
  HardwareProfile hw = round_gpu();
  // 1e12 FLOP at 0.4 x 1000 TFLOP/s = 2.5 ms; 1e9 score elements x 8 B at 2000 GB/s x 0.8 = 5 ms.
  const Flops flops{1e12};
  EXPECT_EQ(attention_time(flops, AttentionKernel::kUnfused, Precision::kBf16, hw, 1e9), Time::ms(2.5) + Time::us(12));
  hw.eff.attention_score_bytes = 8;
  hw.eff.attention_score_bytes_backward = 2;
  EXPECT_EQ(attention_time(flops, AttentionKernel::kUnfused, Precision::kBf16, hw, 1e9), Time::ms(5) + Time::us(12));
  // Backward: its own bytes (2 B: 1.25 ms, under the FLOPs' 2.5 ms), and five launches (four
  // GEMMs and the softmax's backward kernel; three until 2026-12-05).
  EXPECT_EQ(attention_time(flops, AttentionKernel::kUnfused, Precision::kBf16, hw, 1e9, true), Time::ms(2.5) + Time::us(20));
  // Fused kernels keep the score matrix on chip: no traffic term.
  EXPECT_EQ(attention_time(Flops{1e12}, AttentionKernel::kFlash2, Precision::kBf16, hw, 1e9), Time::ms(2) + Time::us(4));
}

TEST(MemoryTime, LaunchPlusBytesOverAchievedBandwidth) {
  const HardwareProfile hw = round_gpu();
  // 1.6 GB at 2000 GB/s x 0.8 = 1600 GB/s -> 1 ms, plus 4 us.
  EXPECT_EQ(memory_time(Bytes{1'600'000'000}, hw), Time::ms(1) + Time::us(4));
  EXPECT_EQ(memory_time(Bytes{0}, hw), Time::us(4));
}

}  // namespace
}  // namespace clustersim::calib
