// SPDX-License-Identifier: Apache-2.0
// The 352B MoE on 1,440 H800s (MegaScale-MoE, arXiv:2505.11432; ../shared/reference/moe.yaml):
// the Megatron-LM plan over the MegaScale-MoE plan must come out within 15% of the published
// 1.88x, and each optimisation turned on alone over the Megatron-LM plan is printed as a table:
//   ctest --test-dir build -R MoeValidation -V
// StrongScalingAgainstTable3 runs both plans at the paper's five cluster sizes (Table 3) and holds
// the speed-up at each within 15%. CostBreakdown prints where one iteration of each plan goes
// (compute by part, all-to-all, bubble, DP) and checks that the parts add up. The absolute
// throughput against 1.41M tokens/s: scenarios/validation/moe.yaml (flow level, +11.9% against a
// 10% budget) and moe_published_gap_test.cc (analytical level, +12.0%); both label known_gap.
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

constexpr double kPublishedSpeedup = 1.88;     // MegaScale-MoE abstract
constexpr double kPublishedTokensPerS = 1.41e6;  // MegaScale-MoE abstract

std::string scenario(const std::string& name) { return std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + name; }

engine::TrainingEstimate estimate(const std::string& file, const std::vector<std::string>& overrides = {}) {
  const ScenarioConfig cfg = load_scenario(scenario(file), overrides);
  return engine::estimate_training(cfg, calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir));
}

TEST(MoeValidation, MegatronOverMegaScaleRatioWithin15Percent) {
  const engine::TrainingEstimate megascale = estimate("megascale-moe-352b-1440.yaml");
  const engine::TrainingEstimate megatron = estimate("megatron-moe-352b-1440.yaml");
  const double ratio = megascale.tokens_per_s / megatron.tokens_per_s;
  std::printf("MegaScale-MoE plan  %.3f M tokens/s (published %.2f M, error %+.1f%%)\n", megascale.tokens_per_s / 1e6,
              kPublishedTokensPerS / 1e6, 100.0 * (megascale.tokens_per_s / kPublishedTokensPerS - 1.0));
  std::printf("Megatron-LM plan    %.3f M tokens/s\n", megatron.tokens_per_s / 1e6);
  std::printf("speed-up            %.3fx (published %.2fx, error %+.1f%%)\n", ratio, kPublishedSpeedup,
              100.0 * (ratio / kPublishedSpeedup - 1.0));
  EXPECT_NEAR(ratio / kPublishedSpeedup, 1.0, 0.15);
}

// MegaScale-MoE Table 3 (strong scaling, global batch 720, PP 15): iteration time in seconds and
// throughput in tokens/s. The speed-up is the throughput ratio, as the table quotes it (at 240 GPUs
// Megatron-LM's 39.94 s and 151.1k tokens/s disagree: 720 x 8192 / 39.94 s = 147.7k).
struct Table3Row {
  int gpus;
  double megatron_s, megascale_s, megatron_tps, megascale_tps;
};
constexpr Table3Row kTable3[] = {{240, 39.94, 21.61, 151.1e3, 272.9e3},
                                 {480, 19.56, 11.83, 301.1e3, 498.6e3},
                                 {720, 13.70, 7.97, 430.5e3, 740.1e3},
                                 {960, 10.82, 6.12, 550.2e3, 963.8e3},
                                 {1440, 7.90, 4.19, 746.6e3, 1407.7e3}};

TEST(MoeValidation, StrongScalingAgainstTable3) {
  std::printf("\n%6s %26s %26s %22s\n", "GPUs", "MegaScale-MoE s (pub/sim)", "Megatron-LM s (pub/sim)",
              "speed-up (pub/sim)");
  for (const Table3Row& row : kTable3) {
    const int dp = row.gpus / 120;  // pp 15 x 8 GPUs per stage replica
    // Megatron-LM's EP is carved out of the data-parallel ranks, one per node: the largest of 4,
    // 2 that divides dp (720 GPUs: dp 6, ep 2).
    const int ep = dp % 4 == 0 ? 4 : (dp % 2 == 0 ? 2 : 1);
    const std::string gpus = "cluster.gpus=" + std::to_string(row.gpus);
    const engine::TrainingEstimate ms = estimate("megascale-moe-352b-1440.yaml", {gpus});
    const engine::TrainingEstimate mt =
        estimate("megatron-moe-352b-1440.yaml", {gpus, "parallelism.ep=" + std::to_string(ep)});
    const double published = row.megascale_tps / row.megatron_tps;
    const double simulated = mt.iteration.as_s() / ms.iteration.as_s();
    std::printf("%6d %12.2f / %-11.2f %12.2f / %-11.2f %10.2fx / %.2fx\n", row.gpus, row.megascale_s,
                ms.iteration.as_s(), row.megatron_s, mt.iteration.as_s(), published, simulated);
    EXPECT_NEAR(simulated / published, 1.0, 0.15) << row.gpus << " GPUs";
  }
}

TEST(MoeValidation, OptimisationTable) {
  struct Variant {
    const char* name;
    std::vector<std::string> overrides;  // on top of the Megatron-LM plan
  };
  const std::vector<Variant> variants = {
      {"Megatron-LM plan (tp 8, ep 4 across nodes, expert tp 8)", {}},
      {"+ sp attention, ep 8 inside the node", {"training.attention_parallel=sp", "parallelism.ep=8", "parallelism.expert_tp=1"}},
      {"+ chunked all-to-all overlap (up to 4)", {"training.overlap.a2a_chunks=4"}},
      {"+ bf16 gradient sync", {"training.comm_precision=bf16"}},
      {"+ fp8 all-to-all and gradient sync", {"training.comm_precision=fp8"}},
      {"all: MegaScale-MoE plan (sp/ep in node, 4 chunks, bf16)",
       {"training.attention_parallel=sp", "parallelism.ep=8", "parallelism.expert_tp=1", "training.overlap.a2a_chunks=4",
        "training.comm_precision=bf16"}},
  };
  const engine::TrainingEstimate base = estimate("megatron-moe-352b-1440.yaml");
  std::printf("\n%-58s %10s %12s %8s %10s %10s\n", "352B MoE, 1,440 H800 (analytical)", "iter (s)", "tokens/s", "speedup",
              "ep exp (s)", "dp exp (s)");
  for (const Variant& v : variants) {
    const engine::TrainingEstimate e = estimate("megatron-moe-352b-1440.yaml", v.overrides);
    std::printf("%-58s %10.3f %12.4g %7.3fx %10.3f %10.3f\n", v.name, e.iteration.as_s(), e.tokens_per_s,
                e.tokens_per_s / base.tokens_per_s, e.breakdown.ep_exposed.as_s(), e.breakdown.dp_exposed.as_s());
    EXPECT_LE(e.iteration, base.iteration) << v.name << " must not be slower than the baseline";
  }
  const engine::TrainingEstimate megascale = estimate("megascale-moe-352b-1440.yaml");
  std::printf("%-58s %10.3f %12.4g %7.3fx\n", "scenarios/megascale-moe-352b-1440.yaml", megascale.iteration.as_s(),
              megascale.tokens_per_s, megascale.tokens_per_s / base.tokens_per_s);
}

TEST(MoeValidation, CostBreakdown) {
  for (const char* file : {"megascale-moe-352b-1440.yaml", "megatron-moe-352b-1440.yaml"}) {
    const ScenarioConfig cfg = load_scenario(scenario(file));
    const calib::HardwareProfile hw = calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
    const engine::TrainingEstimate e = engine::estimate_training(cfg, hw);
    const std::vector<work::MoeStageCost> stages = work::moe_stage_costs(cfg, hw, work::training_links(cfg, hw));
    const work::MoeStageCost& sc = stages.at(static_cast<size_t>(e.critical_stage));
    // Sum of the critical stage's parts, one micro-batch, forward + backward.
    Time gemm, core, elem, router, shared, experts, a2a, a2a_exposed, tp;
    for (const work::MoeLayerCost& c : sc.costs) {
      ASSERT_TRUE(c.moe);
      gemm += c.part_attention_gemm;
      core += c.part_attention_core;
      elem += c.part_elementwise;
      router += c.part_router_permute;
      shared += c.part_shared;
      experts += c.expert_fwd + c.expert_bwd;
      a2a += 2 * (c.dispatch + c.combine);
      a2a_exposed += c.ep_exposed();
      tp += c.attention_comm;
      if (cfg.training.recompute == Recompute::kNone) {
        EXPECT_EQ(c.part_attention_gemm + c.part_attention_core + c.part_elementwise + c.part_router_permute +
                      c.part_shared,
                  c.attention_fwd + c.attention_bwd);
      }
    }
    const Time head = e.critical_stage == cfg.parallelism.pp - 1 ? work::head_time(cfg, hw) : Time::zero();
    const auto ms = [](Time t) { return t.as_s() * 1e3; };
    std::printf("\n%s: %.3f M tokens/s, MFU %.1f%%, iteration %.3f s; stage %d, %zu layers, %d micro-batches\n", file,
                e.tokens_per_s / 1e6, 100 * e.mfu, e.iteration.as_s(), e.critical_stage, sc.layers.size(),
                e.micro_batches);
    std::printf("  per micro-batch (ms): attention GEMMs %.2f, attention core %.2f, norms/residuals %.2f, "
                "router+permute %.2f, shared %.2f, experts %.2f, LM head %.2f | all-to-all %.2f (exposed %.2f), "
                "TP/SP exposed %.2f\n",
                ms(gemm), ms(core), ms(elem), ms(router), ms(shared), ms(experts), ms(head), ms(a2a), ms(a2a_exposed),
                ms(tp));
    const engine::TrainingBreakdown& b = e.breakdown;
    std::printf("  per iteration (s): compute %.3f, tp %.3f, ep %.3f, pp p2p %.3f, bubble %.3f, dp %.3f, optimizer %.3f\n",
                b.compute.as_s(), b.tp_exposed.as_s(), b.ep_exposed.as_s(), b.pp_exposed.as_s(), b.bubble.as_s(),
                b.dp_exposed.as_s(), b.optimizer.as_s());
    EXPECT_EQ(sc.compute + head, (1.0 / static_cast<double>(e.micro_batches)) * b.compute);
  }
}

}  // namespace
}  // namespace clustersim
