// SPDX-License-Identifier: Apache-2.0
// MegaScale Table 3 at the flow level: adding the techniques one by one on 175B / 256 GPUs never
// lowers throughput, and the table (simulated MFU and gain against the paper's) is printed.
// Reference: Jiang et al., arXiv:2402.15627v1 Table 3 (values in scenarios/megascale-ablation/).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"

namespace clustersim {
namespace {

struct Step {
  const char* file;
  double paper_mfu;
};

TEST(MegaScaleAblation, TechniquesAddUpInTheirOrder) {
  const std::vector<Step> steps = {{"0-baseline", 0.477},  {"1-ptb", 0.523},          {"2-swa", 0.533},
                                   {"3-tp-overlap", 0.555}, {"4-pp-overlap", 0.580},   {"5-dp-overlap", 0.595},
                                   {"6-efficient-operators", 0.612}, {"7-misc", 0.623}, {"8-larger-batch", 0.653}};
  engine::FlowTrainingOptions options;
  options.use_simgrid = false;  // nine runs in one process
  options.keep_spans = false;
  double previous_tokens = 0, previous_mfu = 0;
  std::printf("%-24s %8s %8s %10s %10s %12s\n", "step", "MFU", "paper", "gain", "paper gain", "tokens/s");
  for (const Step& s : steps) {
    const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-ablation/" + s.file + ".yaml";
    const ScenarioConfig cfg = load_scenario(path);
    const calib::HardwareProfile hw = calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
    const engine::FlowTrainingResult r = engine::simulate_training(cfg, hw, options);
    const double paper_gain = &s == &steps.front() ? 0.0 : s.paper_mfu - (&s - 1)->paper_mfu;
    std::printf("%-24s %7.1f%% %7.1f%% %+9.1f%% %+9.1f%% %12.0f\n", s.file, 100 * r.estimate.mfu, 100 * s.paper_mfu,
                previous_mfu > 0 ? 100 * (r.estimate.mfu - previous_mfu) : 0.0, 100 * paper_gain, r.estimate.tokens_per_s);
    // Throughput never drops (sliding windows lower the FLOPs MFU counts, so MFU may).
    EXPECT_GE(r.estimate.tokens_per_s, previous_tokens * (1 - 1e-9)) << s.file;
    previous_tokens = r.estimate.tokens_per_s;
    previous_mfu = r.estimate.mfu;
  }
}

}  // namespace
}  // namespace clustersim
