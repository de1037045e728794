// SPDX-License-Identifier: Apache-2.0
// Issue 7's headline at the analytical level, a known gap: the MegaScale-MoE plan of the 352B MoE
// on 1,440 H800s within 10% of the published 1.41M tokens/s (MegaScale-MoE, arXiv:2505.11432,
// abstract and Table 3). The flow level misses it too, +12.1% (scenarios/validation/moe.yaml,
// CTest validation_moe_suite, also known_gap). The analytical level came out 13.7% high while it saw no contention on
// the fabric; since it routes the dense and expert gradient rings (2026-11-21: ECMP collisions
// of 2x on both) it was +8.4%, and since each stage's rings are priced at their own collisions
// (four of fifteen stages are slowed, their reductions staggered, 2026-12-05) +12.3%, with the
// slot per micro-batch still 1.24x short of Table 3's and the time outside the slots (DP,
// optimizer, sends) 0.26 s against Table 3's intercept of about zero. So the test also holds the
// slot to 10%, which it misses:
// label known_gap (left out of the default run); it prints where the rest sits:
//   ctest --test-dir build -L known_gap -R MoePublishedGap --output-on-failure
//
// What Table 3 pins down. Iteration time is (micro-batches + pp - 1) x slot + the rest (DP, optimizer),
// with 720 / dp micro-batches of one sequence; the five cluster sizes give the slot (one micro-batch,
// forward + backward, on the slowest stage) as the slope, independent of bubble and DP:
//   MegaScale-MoE (21.61 - 4.19) s / (360 - 60) = 58.1 ms, intercept 4.19 - 74 x 58.1 ms = -0.11 s
//   Megatron-LM   (39.94 - 7.90) s / (360 - 60) = 106.8 ms, intercept 0.00 s
// (Megatron-LM's 240-GPU row quotes 151.1k tokens/s, which is 39.03 s: 103.8 ms, same conclusion)
// so both systems spend nearly all their time in micro-batch slots, and the slot is where the
// model is fast. With the Hopper GEMM efficiency fitted to Llama 3 (0.595) the simulated slots are
// still shorter by nearly the same factor for both plans (1.24x, 1.28x; 1.49x and 1.45x with the
// former 0.78) although the plans' exposed communication differs by 35x (about 1 ms against 36 ms
// per slot): what is missing scales with the whole slot, compute and communication alike.
// MegaScale-MoE section 7 names what the roofline here does not see: "the combined runtime of
// attention and GroupedGEMM accounts for only about one-third of a layer's execution time"
// (Mixtral-8x7B, Figure 13a); routing, local scatter and gather are memory-bound and "remain
// time-consuming"; GroupedGEMM's cuFuncSetAttribute resource control adds synchronisation delays;
// dynamically shaped expert tensors fragment memory; gating's many small kernels are host-launch
// bound ("launch latency exceeds their actual execution time"). The printout gives the time per
// MoE layer such effects would have to take to close the gap, and the share of the layer that the
// modelled GEMMs and attention would then hold (to compare with Figure 13a's one third).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/analytical_training.h"
#include "workloads/moe.h"
#include "workloads/training_costs.h"

namespace clustersim {
namespace {

constexpr double kPublishedTokensPerS = 1.41e6;  // MegaScale-MoE abstract (Table 3: 1,407.7k)
// Table 3 slopes and intercepts (derivation above), seconds.
constexpr double kMegaScaleSlotS = (21.61 - 4.19) / 300.0;
constexpr double kMegatronSlotS = (39.94 - 7.90) / 300.0;
constexpr double kMegaScaleRestS = 4.19 - 74.0 * kMegaScaleSlotS;

std::string scenario(const std::string& name) { return std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + name; }

struct PlanRun {
  ScenarioConfig cfg;
  calib::HardwareProfile hw;
  engine::TrainingEstimate est;
};
PlanRun run(const std::string& file) {
  PlanRun r{load_scenario(scenario(file)), {}, {}};
  r.hw = calib::load_hardware_profile(r.cfg.cluster.gpu, r.cfg.cluster.source_dir);
  r.est = engine::estimate_training(r.cfg, r.hw);
  return r;
}

// The modelled GEMM and attention-core time of the critical stage's layers, one micro-batch,
// forward + backward (what MegaScale-MoE's Figure 13a calls attention and GroupedGEMM, with the
// shared expert's GEMMs).
Time roofline_part(const PlanRun& r) {
  const std::vector<work::MoeStageCost> stages = work::moe_stage_costs(r.cfg, r.hw, work::training_links(r.cfg, r.hw));
  Time t;
  for (const work::MoeLayerCost& c : stages.at(static_cast<size_t>(r.est.critical_stage)).costs) {
    t += c.part_attention_gemm + c.part_attention_core + c.part_shared + c.expert_fwd + c.expert_bwd;
  }
  return t;
}

TEST(MoePublishedGap, MegaScaleThroughputWithin10Percent) {
  const PlanRun ms = run("megascale-moe-352b-1440.yaml");
  const PlanRun mt = run("megatron-moe-352b-1440.yaml");
  const double layers = static_cast<double>(ms.cfg.model.layers) / ms.cfg.parallelism.pp;
  const double head_s = work::head_time(ms.cfg, ms.hw).as_s();
  std::printf("\n%-34s %14s %14s\n", "", "MegaScale-MoE", "Megatron-LM");
  std::printf("%-34s %11.3f M  %11.3f M\n", "tokens/s simulated", ms.est.tokens_per_s / 1e6, mt.est.tokens_per_s / 1e6);
  std::printf("%-34s %11.3f M  %11.3f M\n", "tokens/s published (Table 3)", 1.4077, 0.7466);
  const double slot_ms[2] = {ms.est.microbatch_stage_time.as_s(), mt.est.microbatch_stage_time.as_s()};
  const double slot_pub[2] = {kMegaScaleSlotS, kMegatronSlotS};
  std::printf("%-34s %11.1f ms %11.1f ms\n", "slot simulated", 1e3 * slot_ms[0], 1e3 * slot_ms[1]);
  std::printf("%-34s %11.1f ms %11.1f ms\n", "slot published (Table 3 slope)", 1e3 * slot_pub[0], 1e3 * slot_pub[1]);
  std::printf("%-34s %13.2fx %13.2fx\n", "published / simulated slot", slot_pub[0] / slot_ms[0], slot_pub[1] / slot_ms[1]);
  std::printf("%-34s %11.2f ms %11.2f ms\n", "missing per layer (fwd + bwd)", 1e3 * (slot_pub[0] - slot_ms[0]) / layers,
              1e3 * (slot_pub[1] - slot_ms[1]) / layers);
  // Compute x k + exposed communication x j = published slot, for both plans (2 x 2 system).
  double comm[2], comp[2];
  for (int i = 0; i < 2; ++i) {
    const engine::TrainingBreakdown& b = (i == 0 ? ms : mt).est.breakdown;
    const double mbs = (i == 0 ? ms : mt).est.micro_batches;
    comm[i] = (b.tp_exposed + b.ep_exposed).as_s() / mbs;
    comp[i] = slot_ms[i] - comm[i];
  }
  const double det = comp[0] * comm[1] - comp[1] * comm[0];
  const double k = (slot_pub[0] * comm[1] - slot_pub[1] * comm[0]) / det;
  const double j = (comp[0] * slot_pub[1] - comp[1] * slot_pub[0]) / det;
  std::printf("%-34s %11.1f ms %11.1f ms\n", "exposed TP/SP + all-to-all per slot", 1e3 * comm[0], 1e3 * comm[1]);
  std::printf("%-34s compute x %.2f, communication x %.2f\n", "both slots fit by", k, j);
  const double roof[2] = {roofline_part(ms).as_s(), roofline_part(mt).as_s()};
  std::printf("%-34s %12.0f%% %12.0f%%\n", "GEMMs + attention in published slot", 100 * roof[0] / (slot_pub[0] - head_s),
              100 * roof[1] / (slot_pub[1] - head_s));
  const double rest = (ms.est.iteration - static_cast<int64_t>(ms.est.micro_batches + ms.cfg.parallelism.pp - 1) *
                                              ms.est.microbatch_stage_time).as_s();
  std::printf("%-34s %11.2f s  (published intercept %.2f s)\n", "MegaScale-MoE DP + optimizer + p2p", rest,
              kMegaScaleRestS);
  // With the published slot and everything else as simulated:
  const double iter = 74.0 * kMegaScaleSlotS + rest;
  std::printf("%-34s %11.3f M tokens/s\n", "with the published slot", 720.0 * 8192.0 / iter / 1e6);
  EXPECT_NEAR(ms.est.tokens_per_s / kPublishedTokensPerS, 1.0, 0.10);
  // The throughput can land inside the budget with a short slot and a long rest; the slot is the
  // model's own claim (Table 3's slope, independent of bubble and DP).
  EXPECT_NEAR(slot_pub[0] / slot_ms[0], 1.0, 0.10) << "MegaScale-MoE slot per micro-batch";
}

}  // namespace
}  // namespace clustersim
