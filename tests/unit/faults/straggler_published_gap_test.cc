// SPDX-License-Identifier: Apache-2.0
// Issue 9's straggler headline, kept as a known gap: MegaScale (arXiv:2402.15627v1, section 6.3)
// found hosts taking "approximately 10% more time to execute the same forward computations" and,
// once they were removed, "an approximate 0.7% improvement in MFU"; 0.5% of the hosts is the share
// in ../shared/reference/reliability.yaml (megascale_fault_tolerance) and the issue, the NSDI '24
// text of the section names none. Budget here: the mean over
// placements within 0.3 MFU points of 0.7. Run it with
//   ctest --test-dir build -L known_gap -R StragglerPublishedGap --output-on-failure
//
// Why it fails, printed below: the simulated cost has two modes. The last of the 8 stages also runs
// the LM head (about 3.5% more work), so it paces the pipeline; a host 10% slower in forward is
// 3.4% slower per micro-batch, which costs about 1.4-1.5 points when it holds the last stage and stays
// inside the head's slack elsewhere (0.3-0.6 points: fill, drain and waits between chunks). With 8
// slow hosts of 1,536, 1 - (7/8)^8 = 66% of placements put one on the last stage. The paper names
// neither the job, the placement, nor whether 0.7% is points or relative, so nothing is fitted to it.
// The scenario's GPUs are identical; with GPU-to-GPU speed variation (stragglers.variation, printed
// below for Sinha et al.'s average spread, 0.08) the job already waits for its slowest GPUs and the
// slow hosts cost less than 0.7: the published figure lies between the two.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/faults_report.h"
#include "sim/report/whatif_report.h"

namespace clustersim {
namespace {

constexpr double kPublishedPoints = 0.7;  // MegaScale section 6.3
constexpr double kBudgetPoints = 0.3;
constexpr int kDraws = 100;

TEST(StragglerPublishedGap, MegaScaleHalfPercentOfHostsWithinBudget) {
  const ScenarioConfig cfg = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/stragglers-175b-12288.yaml");
  const calib::HardwareProfile hw = report::training_profile(cfg);
  const report::WhatIf w = report::run_whatif(cfg, hw, engine::analytical_level(), kDraws);
  const double mean = 100 * w.draws.mfu_lost_mean;
  std::printf("\n8 of 1,536 hosts 10%% slower in forward, %d placements (analytical level)\n", w.draws.count);
  std::printf("  MFU lost      %.2f +- %.2f points (95%% CI), %.2f to %.2f\n", mean, 100 * w.draws.mfu_lost_ci95,
              100 * w.draws.mfu_lost_min, 100 * w.draws.mfu_lost_max);
  std::printf("  placements with a slow host on the last stage: %d of %d (1 - (7/8)^8 = %.0f%% expected)\n",
              w.draws.last_stage, w.draws.count, 100 * (1 - std::pow(7.0 / 8, 8)));
  ScenarioConfig varied = cfg;
  varied.stragglers.variation = SpeedVariation{0.08, StragglerPhase::kAll};
  const report::WhatIfDraws v = report::placement_draws(varied, hw, engine::analytical_level(), kDraws);
  if (v.beyond_variation) {
    std::printf("  with GPU speed variation (spread 0.08, Sinha et al. SC'22), what repairing the hosts regains: "
                "%.2f +- %.2f points\n", 100 * v.beyond_variation->mean, 100 * v.beyond_variation->ci95);
  }
  std::printf("  published     %.1f points (budget +- %.1f)\n", kPublishedPoints, kBudgetPoints);
  EXPECT_NEAR(mean, kPublishedPoints, kBudgetPoints);
}

}  // namespace
}  // namespace clustersim
