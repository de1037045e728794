// SPDX-License-Identifier: Apache-2.0
// Training at the congestion-controlled levels: the flow level's operation graph with the
// flow+dcqcn and packet networks underneath agrees with the flow level where nothing congests,
// stays deterministic, folds, and the packet level refuses fabrics beyond its limit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "calibration/hardware_profile.h"
#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"

namespace clustersim::engine {
namespace {

const calib::HardwareProfile& a100() {
  static const calib::HardwareProfile hw = calib::load_hardware_profile("A100-SXM4-80GB");
  return hw;
}

// 16 GPUs on 4-GPU nodes (4 x 200G NICs each), tp 2 x pp 2 x dp 4: TP on NVLink, PP and DP over
// the 2-tier Clos, small enough for the packet level to move every packet in about a second.
ScenarioConfig small_plan(Fidelity fidelity) {
  ScenarioConfig cfg;
  cfg.file = "small.yaml";
  cfg.cluster.gpu = "A100-SXM4-80GB";
  cfg.cluster.gpus = 16;
  cfg.cluster.gpus_per_node = 4;
  cfg.cluster.nics_per_node = 4;
  cfg.cluster.nic_bandwidth = gbps(200);
  cfg.network.fidelity = fidelity;
  cfg.network.tiers = 2;
  cfg.network.switch_radix = 16;
  cfg.model.layers = 4;
  cfg.model.hidden = 1024;
  cfg.model.heads = 16;
  cfg.model.seq_len = 1024;
  cfg.model.vocab = 32000;
  cfg.parallelism.tp = 2;
  cfg.parallelism.pp = 2;
  cfg.training.global_batch = 16;
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test plan is invalid: " << e.to_string();
  return cfg;
}

FlowTrainingResult run(const ScenarioConfig& cfg) {
  FlowTrainingOptions o;
  o.use_simgrid = false;  // our own event queue: several runs in one process
  o.keep_spans = false;
  return simulate_training(cfg, a100(), o);
}

TEST(TrainingLevels, CongestionLevelsAgreeWithFlowWithoutCongestion) {
  const double flow = run(small_plan(Fidelity::kFlow)).estimate.iteration.as_us() / 1e3;
  const double fluid = run(small_plan(Fidelity::kFlowDcqcn)).estimate.iteration.as_us() / 1e3;
  const double packet = run(small_plan(Fidelity::kPacket)).estimate.iteration.as_us() / 1e3;
  std::printf("iteration: flow %.4f ms, flow+dcqcn %.4f ms (%+.2f%%), packet %.4f ms (%+.2f%%)\n", flow, fluid,
              100 * (fluid - flow) / flow, packet, 100 * (packet - flow) / flow);
  // DCQCN starts every queue pair at line rate, so without a shared bottleneck the levels differ
  // only by packetisation and the fluid step (well under 1% of an iteration).
  EXPECT_NEAR(fluid, flow, 0.01 * flow);
  EXPECT_NEAR(packet, flow, 0.01 * flow);
}

TEST(TrainingLevels, FlowDcqcnIsDeterministicAndFolds) {
  const ScenarioConfig folded = small_plan(Fidelity::kFlowDcqcn);
  const FlowTrainingResult a = run(folded);
  const FlowTrainingResult b = run(folded);
  EXPECT_EQ(a.estimate.iteration, b.estimate.iteration);
  EXPECT_EQ(a.flows, b.flows);
  ScenarioConfig unfolded = folded;
  unfolded.training.fold_ranks = FoldRanks::kUnfold;
  const FlowTrainingResult u = run(unfolded);
  EXPECT_TRUE(a.folded);
  EXPECT_FALSE(u.folded);
  EXPECT_GT(u.rank_groups, a.rank_groups);
  EXPECT_NEAR(u.estimate.iteration.as_us() / 1e3, a.estimate.iteration.as_us() / 1e3, 0.01 * a.estimate.iteration.as_us() / 1e3);
}

TEST(TrainingLevels, PacketLevelRefusesLargeFabrics) {
  // The limit is checked with the scenario (validate_scenario): key path, limit, way out.
  ScenarioConfig cfg = small_plan(Fidelity::kFlow);
  cfg.network.fidelity = Fidelity::kPacket;
  cfg.cluster.gpus = 1024;
  cfg.training.global_batch = 1024;
  bool found = false;
  for (const InputError& e : validate_scenario(cfg)) {
    if (e.key_path != "cluster.gpus") continue;
    found = true;
    EXPECT_NE(e.message.find("512"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("flow+dcqcn"), std::string::npos) << e.message;
  }
  EXPECT_TRUE(found);
  cfg.network.fidelity = Fidelity::kFlowDcqcn;
  for (const InputError& e : validate_scenario(cfg)) EXPECT_NE(e.key_path, "cluster.gpus") << e.message;
}

}  // namespace
}  // namespace clustersim::engine
