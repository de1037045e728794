// SPDX-License-Identifier: Apache-2.0
// DcqcnRate against the DCQCN rules worked by hand, and the closed-form recovery time against
// the state machine.
#include "sim/network/dcqcn/dcqcn_rate.h"

#include <gtest/gtest.h>

#include <limits>

#include "sim/core/dcqcn_config.h"

namespace clustersim::net {
namespace {

DcqcnParams paper_at_400g() { return dcqcn_params(dcqcn_preset(DcqcnPreset::kDcqcnPaper), gbps(400)); }

TEST(DcqcnParams, PaperValuesScaleFrom40GTo400G) {
  const DcqcnParams p = paper_at_400g();
  EXPECT_DOUBLE_EQ(p.line_rate, 50e9);
  EXPECT_DOUBLE_EQ(p.rate_ai, 400e6 / 8);   // 40 Mbps x 10
  EXPECT_DOUBLE_EQ(p.rate_hai, 2e9 / 8);    // 200 Mbps x 10
  const EcnThresholds e = ecn_thresholds(dcqcn_preset(DcqcnPreset::kDcqcnPaper), gbps(400));
  EXPECT_DOUBLE_EQ(e.kmin, 50'000);         // 5 KB x 10
  EXPECT_DOUBLE_EQ(e.kmax, 2'000'000);      // 200 KB x 10
  EXPECT_DOUBLE_EQ(red_probability(e, 1'025'000), 0.005);  // half way: pmax / 2
  EXPECT_EQ(red_probability(e, 40'000), 0.0);
  EXPECT_EQ(red_probability(e, 3'000'000), 1.0);
}

TEST(DcqcnRate, BytesToTheNextCountAfterACut) {
  const DcqcnParams p = paper_at_400g();  // byte counter 10 MB
  DcqcnRate r(p, Time::zero());
  EXPECT_EQ(r.bytes_to_next_count(), std::numeric_limits<double>::infinity());  // settled: no counting
  r.on_cnp(Time::us(10));
  EXPECT_DOUBLE_EQ(r.bytes_to_next_count(), 10e6);
  r.on_bytes(4e6);
  EXPECT_DOUBLE_EQ(r.bytes_to_next_count(), 6e6);
  const double before = r.rate();
  r.on_bytes(6e6);  // the count: fast recovery halves the gap to Rt, and counting starts over
  EXPECT_DOUBLE_EQ(r.rate(), (before + r.target()) / 2);
  EXPECT_DOUBLE_EQ(r.bytes_to_next_count(), 10e6);
}

TEST(DcqcnRate, FirstCutHalvesTheRateWithAlphaOne) {
  const DcqcnParams p = paper_at_400g();
  DcqcnRate r(p, Time::zero());
  EXPECT_TRUE(r.settled());
  r.on_cnp(Time::us(10));
  // Rt = Rc = 50 GB/s; Rc = 50 (1 - 1/2) = 25 GB/s; alpha = (1-g) 1 + g = 1.
  EXPECT_DOUBLE_EQ(r.rate(), 25e9);
  EXPECT_DOUBLE_EQ(r.target(), 50e9);
  EXPECT_DOUBLE_EQ(r.alpha(Time::us(10)), 1.0);
  EXPECT_EQ(r.next_event(), Time::us(65));  // increase timer 55 us after the cut
  // Alpha decays by (1 - g) per 55 us without a cut.
  EXPECT_DOUBLE_EQ(r.alpha(Time::us(10 + 55 * 2)), (1 - 1.0 / 256) * (1 - 1.0 / 256));
  // Fast recovery: the first timer event halves the gap to Rt.
  r.advance(Time::us(65));
  EXPECT_DOUBLE_EQ(r.rate(), 37.5e9);
}

TEST(DcqcnRate, HpccStyleCutsAtMostOncePerDecreaseInterval) {
  const DcqcnConfig c = dcqcn_preset(DcqcnPreset::kHpccSimai);
  const DcqcnParams p = dcqcn_params(c, gbps(400));
  DcqcnRate r(p, Time::zero());
  r.on_cnp(Time::us(1));
  const double after_first = r.rate();
  r.on_cnp(Time::us(2));  // within 4 us of the cut: waits
  EXPECT_DOUBLE_EQ(r.rate(), after_first);
  EXPECT_EQ(r.next_event(), Time::us(5));
  r.advance(Time::us(5));
  EXPECT_LT(r.rate(), after_first);
  EXPECT_EQ(r.cuts(), 2);
}

// Two CNPs before any timer increase: the paper's rule pulls the target down with the rate
// (Rt = Rc at each cut), the HPCC rule (clamp_target_rate false, hpcc-simai's) keeps it, and
// clamps again once a timer increase came. Until 2026-12-07 every preset clamped.
TEST(DcqcnRate, TheTargetIsClampedOnlyAfterATimerIncreaseWithoutTheClamp) {
  DcqcnConfig c = dcqcn_preset(DcqcnPreset::kDcqcnPaper);
  EXPECT_TRUE(c.clamp_target_rate);
  EXPECT_FALSE(dcqcn_preset(DcqcnPreset::kHpccSimai).clamp_target_rate);
  const auto two_cuts = [](const DcqcnParams& p) {
    DcqcnRate r(p, Time::zero());
    r.on_cnp(Time::us(10));  // 50 -> 25 GB/s, Rt 50
    r.on_cnp(Time::us(60));  // before the first increase at 65 us
    return r;
  };
  const DcqcnRate clamped = two_cuts(dcqcn_params(c, gbps(400)));
  EXPECT_DOUBLE_EQ(clamped.target(), 25e9);
  c.clamp_target_rate = false;
  const DcqcnParams p = dcqcn_params(c, gbps(400));
  DcqcnRate kept = two_cuts(p);
  EXPECT_DOUBLE_EQ(kept.target(), 50e9);
  EXPECT_DOUBLE_EQ(kept.rate(), clamped.rate());  // the rate cuts alike
  kept.advance(Time::us(115));                     // one timer increase (fast recovery)...
  const double rate = kept.rate();
  kept.on_cnp(Time::us(120));                      // ...then a cut clamps the target to the rate
  EXPECT_DOUBLE_EQ(kept.target(), rate);
}

TEST(DcqcnRate, MinimumRateIsAFloor) {
  DcqcnParams p = paper_at_400g();
  p.min_rate = 20e9;
  DcqcnRate r(p, Time::zero());
  r.on_cnp(Time::us(1));
  r.on_cnp(Time::us(2));
  EXPECT_DOUBLE_EQ(r.rate(), 20e9);
}

// Without a byte counter the timer alone steps the stages, as HPCC's ns-3 RdmaHw does: with
// F = 1, one event of fast recovery, one additive (R_AI), then hyper increase (R_HAI). Until
// 2026-12-06 every event past F was additive, and hpcc-simai never used R_HAI.
TEST(DcqcnRate, TimerAloneReachesHyperIncrease) {
  DcqcnConfig c = dcqcn_preset(DcqcnPreset::kHpccSimai);
  c.clamp_target_rate = true;  // so that the second cut puts Rt below the line rate
  const DcqcnParams p = dcqcn_params(c, gbps(400));
  ASSERT_EQ(p.byte_counter, 0);
  ASSERT_EQ(p.fast_recovery_steps, 1);
  DcqcnRate r(p, Time::zero());
  r.on_cnp(Time::us(1));
  r.on_cnp(Time::us(10));  // past the 4 us decrease interval: a second cut, Rt below the line rate
  const double rt = r.target();
  ASSERT_LT(rt + p.rate_ai + p.rate_hai, p.line_rate);
  r.advance(Time::us(10 + 900));  // fast recovery: Rt unchanged
  EXPECT_DOUBLE_EQ(r.target(), rt);
  r.advance(Time::us(10 + 2 * 900));  // additive
  EXPECT_DOUBLE_EQ(r.target(), rt + p.rate_ai);
  r.advance(Time::us(10 + 3 * 900));  // hyper
  EXPECT_DOUBLE_EQ(r.target(), rt + p.rate_ai + p.rate_hai);
}

// Iterates the state machine with timer events only until Rc >= target.
int64_t iterate(const DcqcnParams& p, int cnps, double target) {
  DcqcnRate r(p, Time::zero());
  for (int i = 0; i < cnps; ++i) r.on_cnp(Time::us(1 + i));
  int64_t steps = 0;
  Time t = Time::us(cnps);
  while (r.rate() < target && steps < 1'000'000) {
    t = r.next_event();
    r.advance(t);
    ++steps;
  }
  return steps;
}

TEST(DcqcnRecovery, ClosedFormMatchesTheStateMachine) {
  DcqcnParams p = paper_at_400g();
  p.byte_counter = 0;
  for (const int cnps : {1, 2, 3}) {
    for (const double frac : {0.6, 0.9, 0.99, 0.999}) {
      DcqcnRate r(p, Time::zero());
      for (int i = 0; i < cnps; ++i) r.on_cnp(Time::us(1 + i));
      const double target = frac * p.line_rate;
      EXPECT_EQ(dcqcn_recovery_steps(p, r.rate(), r.target(), target), iterate(p, cnps, target))
          << cnps << " cuts, target " << frac;
    }
  }
  p.rate_ai = 5e9;  // large steps: Rt reaches the line rate during the additive phase
  for (const double frac : {0.6, 0.95, 0.999}) {
    DcqcnRate r(p, Time::zero());
    for (int i = 0; i < 3; ++i) r.on_cnp(Time::us(1 + i));
    EXPECT_EQ(dcqcn_recovery_steps(p, r.rate(), r.target(), frac * p.line_rate), iterate(p, 3, frac * p.line_rate));
  }
}

TEST(DcqcnRecovery, FromOneCutAtLineRate) {
  // Rc0 = L/2, Rt0 = L: the gap halves every 55 us; 99% needs 2^k >= 50, k = 6: 330 us.
  DcqcnParams p = paper_at_400g();
  p.byte_counter = 0;
  EXPECT_EQ(dcqcn_recovery_steps(p, 25e9, 50e9, 0.99 * 50e9), 6);
}

}  // namespace
}  // namespace clustersim::net
