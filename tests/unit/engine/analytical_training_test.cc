// SPDX-License-Identifier: Apache-2.0
// The analytical training level: the breakdown adds up, the pipeline terms follow the 1F1B
// formulas, overlap and scale-out never hurt where they cannot, memory fit, determinism.
#include "sim/engine/analytical_training.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "calibration/compute_cost.h"
#include "sim/collectives/collective_cost.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"
#include "tests/unit/core/unit_printers.h"
#include "tests/unit/engine/gpt_plan.h"
#include "workloads/placement.h"
#include "workloads/training_costs.h"
#include "workloads/transformer.h"

namespace clustersim::engine {
namespace {

using engine_test::a100;

ScenarioConfig plan(int gpus, int tp, int pp, int global_batch, int vpp = 1) {
  return engine_test::validated(engine_test::gpt_1p3b(gpus, tp, pp, global_batch, vpp));
}

// The A100 with twice its bf16 and fp16 FLOP rates: a faster GPU, all else equal.
calib::HardwareProfile a100_at_twice_the_flop_rate() {
  calib::HardwareProfile fast = a100();
  fast.bf16 = FlopRate{2.0 * fast.bf16.per_s};
  fast.fp16 = FlopRate{2.0 * fast.fp16.per_s};
  return fast;
}

Time parts_sum(const TrainingBreakdown& b) {
  return b.compute + b.tp_exposed + b.pp_exposed + b.bubble + b.dp_exposed + b.optimizer;
}

TEST(AnalyticalTraining, IterationIsTheSumOfTheBreakdown) {
  for (const ScenarioConfig& cfg : {plan(64, 2, 4, 128), plan(8, 1, 1, 8), plan(64, 8, 2, 64, 3)}) {
    const TrainingEstimate est = estimate_training(cfg, a100());
    EXPECT_EQ(est.iteration, parts_sum(est.breakdown));
    EXPECT_GT(est.breakdown.compute, Time::zero());
  }
}

TEST(AnalyticalTraining, PlanFactsAndHeadlineNumbers) {
  // 64 GPUs / (tp 2 x pp 4) = dp 8; 128 sequences / (1 x 8) = 16 micro-batches per pipeline.
  const ScenarioConfig cfg = plan(64, 2, 4, 128);
  const TrainingEstimate est = estimate_training(cfg, a100());
  EXPECT_EQ(est.dp, 8);
  EXPECT_EQ(est.micro_batches, 16);
  // tokens/s = B s / iteration; MFU = model FLOPs / (iteration x GPUs x peak).
  const double seconds = est.iteration.as_s();
  EXPECT_DOUBLE_EQ(est.tokens_per_s, 128.0 * 2048 / seconds);
  EXPECT_DOUBLE_EQ(est.mfu, est.flops.model.n / (seconds * 64 * a100().bf16.per_s));
  EXPECT_GT(est.mfu, 0.0);
  EXPECT_LT(est.mfu, 1.0);
  // No recomputation: hardware FLOPs = model FLOPs.
  EXPECT_DOUBLE_EQ(est.hfu, est.mfu);
  // Usable memory = HBM minus the profile's reserve.
  EXPECT_EQ(est.memory_capacity, a100().hbm_capacity - a100().memory_reserved);
}

TEST(AnalyticalTraining, FullRecomputeRaisesHfuAboveMfu) {
  ScenarioConfig cfg = plan(64, 2, 4, 128);
  cfg.training.recompute = Recompute::kFull;
  const TrainingEstimate est = estimate_training(cfg, a100());
  EXPECT_GT(est.hfu, est.mfu);
  // Hardware / model FLOPs = (96 ... (1 + s/6h + V/16lh)) / (72 ... (1 + s/6h + V/12lh)) > 1, and
  // the same ratio holds for HFU / MFU since both divide by the same time.
  EXPECT_NEAR(est.hfu / est.mfu, est.flops.hardware.n / est.flops.model.n, 1e-12);
}

TEST(AnalyticalTraining, NoPipelineNoBubbleNoP2p) {
  const TrainingEstimate est = estimate_training(plan(64, 8, 1, 64), a100());
  EXPECT_EQ(est.breakdown.bubble, Time::zero());
  EXPECT_EQ(est.breakdown.pp_exposed, Time::zero());
}

TEST(AnalyticalTraining, BubbleIsPpMinusOneOverVppSlotsOfTheOtherStages) {
  // 1F1B: (pp - 1) = 3 slots of the stages that fill and drain, which lack the last stage's LM
  // head: m x slowest slot + the other stages' slots.
  const ScenarioConfig cfg = plan(64, 2, 4, 128);
  const TrainingEstimate plain = estimate_training(cfg, a100());
  const Time head = work::head_time(cfg, a100());
  EXPECT_GT(head, Time::zero());
  EXPECT_EQ(plain.breakdown.bubble, int64_t{3} * (plain.microbatch_stage_time - head));
  // Interleaved, vpp 2 (24 layers = 4 x 2 x 3; 16 micro-batches % 4 = 0): (4 - 1) / 2 = 1.5 slots.
  const ScenarioConfig cfg2 = plan(64, 2, 4, 128, 2);
  const TrainingEstimate interleaved = estimate_training(cfg2, a100());
  EXPECT_EQ(interleaved.breakdown.bubble, 1.5 * (interleaved.microbatch_stage_time - head));
  // Interleaving does not change a micro-batch's compute, only how much of it idles.
  EXPECT_EQ(interleaved.breakdown.compute, plain.breakdown.compute);
}

TEST(AnalyticalTraining, OverlapsNeverMakeItSlower) {
  // Every plan below has at least pp micro-batches per pipeline (see the BUG test below).
  struct Plan {
    int gpus, tp, pp, vpp, global_batch, zero;
  };
  const std::vector<Plan> plans = {
      {64, 2, 4, 1, 128, 1}, {64, 2, 4, 2, 128, 2}, {64, 8, 1, 1, 64, 0}, {64, 1, 2, 1, 64, 3},
      {256, 8, 4, 3, 1024, 1}, {8, 1, 1, 1, 8, 1}, {32, 4, 8, 1, 32, 1},
  };
  using Flag = bool OverlapConfig::*;
  const Flag flags[] = {&OverlapConfig::dp_grad_reduce, &OverlapConfig::dp_param_gather, &OverlapConfig::tp_comm,
                        &OverlapConfig::pp_p2p};
  for (const Plan& p : plans) {
    ScenarioConfig base = plan(p.gpus, p.tp, p.pp, p.global_batch, p.vpp);
    base.parallelism.zero_stage = p.zero;
    base.training.overlap = OverlapConfig{false, false, false, false};
    const Time all_off = estimate_training(base, a100()).iteration;
    for (const Flag f : flags) {
      ScenarioConfig on = base;
      on.training.overlap.*f = true;
      EXPECT_LE(estimate_training(on, a100()).iteration, all_off)
          << "gpus " << p.gpus << " tp " << p.tp << " pp " << p.pp << " vpp " << p.vpp << " zero " << p.zero;
    }
    ScenarioConfig all_on = base;
    all_on.training.overlap = OverlapConfig{true, true, true, true};
    EXPECT_LE(estimate_training(all_on, a100()).iteration, all_off);
  }
}

TEST(AnalyticalTraining, TpOverlapHidesNoMoreThanTheComputeBesideIt) {
  // Fast NVLink: the hidden (1 - 1/tp) share fits under the GEMMs and 1/tp stays exposed.
  // NVLink 50x slower: the TP traffic outlasts the compute, so overlap can save at most the
  // compute (before 2026-11-22 it still hid (1 - 1/tp) of it: MegaScale 175B on 256 GPUs with
  // 8 GB/s NVLink came out 34% fast against the flow level).
  for (const double nvlink_gbps : {2400.0, 48.0}) {
    ScenarioConfig off = plan(64, 8, 2, 64);
    off.network.nvlink_bandwidth = gbps(nvlink_gbps);
    off.training.overlap.tp_comm = false;
    ScenarioConfig on = off;
    on.training.overlap.tp_comm = true;
    const TrainingBreakdown b_off = estimate_training(off, a100()).breakdown;
    const TrainingBreakdown b_on = estimate_training(on, a100()).breakdown;
    EXPECT_LE(b_on.tp_exposed, b_off.tp_exposed) << nvlink_gbps;
    EXPECT_GE(b_on.tp_exposed, b_off.tp_exposed - b_on.compute) << nvlink_gbps;
    EXPECT_GE(b_on.tp_exposed, (1.0 / 8) * b_off.tp_exposed) << nvlink_gbps;
    if (nvlink_gbps > 1000) {
      EXPECT_NEAR(b_on.tp_exposed.as_s(), b_off.tp_exposed.as_s() / 8, 1e-9);
    } else {
      EXPECT_GT(b_on.tp_exposed.as_s(), b_off.tp_exposed.as_s() / 8 * 1.5);
    }
  }
}

TEST(AnalyticalTraining, StagesOnOneNodeSendOverNvlink) {
  // tp 1, pp 4 placed tp-pp-cp-dp: every replica's four stages share a node, so the pipeline
  // sends and the tied-embedding all-reduce (first and last stage) never touch a NIC; fewer
  // NICs change nothing. Placed tp-cp-dp-pp the stages sit on other nodes and the NICs count.
  for (const char* order : {"tp-pp-cp-dp", "tp-cp-dp-pp"}) {
    ScenarioConfig eight = plan(64, 1, 4, 64);
    eight.parallelism.placement = order;
    eight.training.overlap.pp_p2p = false;
    eight.cluster.nics_per_node = 8;
    ScenarioConfig one = eight;
    one.cluster.nics_per_node = 1;
    const TrainingBreakdown b8 = estimate_training(eight, a100()).breakdown;
    const TrainingBreakdown b1 = estimate_training(one, a100()).breakdown;
    if (std::string(order) == "tp-pp-cp-dp") {
      EXPECT_EQ(b1.pp_exposed, b8.pp_exposed);
      EXPECT_EQ(b1.optimizer, b8.optimizer);
    } else {
      EXPECT_GT(b1.pp_exposed, b8.pp_exposed);
      EXPECT_GT(b1.optimizer, b8.optimizer);
    }
  }
}

// Selective recomputation re-runs the attention core: its matmuls and, unfused, the softmax and
// dropout over the score matrix, memory-bound (until 2026-12-06 the matmuls alone: 8 layers of
// h 4096, s 4096 on 8 A100s, +0.26 ms a layer where about 0.64 ms is due). With flash attention
// the matmuls' kernel alone.
TEST(AnalyticalTraining, SelectiveRecomputationRerunsTheSoftmaxAndDropout) {
  for (const bool flash : {false, true}) {
    SCOPED_TRACE(flash ? "flash" : "unfused");
    ScenarioConfig cfg = plan(64, 8, 1, 64);
    cfg.training.flash_attention = flash;
    const work::LayerTimes none = work::layer_times(cfg, a100());
    cfg.training.recompute = Recompute::kSelective;
    const work::LayerTimes selective = work::layer_times(cfg, a100());
    const Bytes scores = work::attention_score_elementwise_bytes(cfg);
    EXPECT_EQ(scores.n > 0, !flash);
    const Time again = none.attention_fwd + (flash ? Time::zero() : calib::memory_time(scores, a100()));
    EXPECT_NEAR(selective.backward.as_s() - none.backward.as_s(), again.as_s(), 1e-12);
    EXPECT_EQ(selective.forward, none.forward);
  }
}

TEST(AnalyticalTraining, StagesBehindOneNicShareItOnlyWhileSeveralSend) {
  // tp 4, pp 4 placed pp-tp-cp-dp: a node holds two TP ranks of each of the four stages, so TP
  // groups span two nodes, and with 2 NICs each carries four stages' traffic. The stages run
  // different micro-batches: their TP traffic takes longer than with the NIC to themselves, and
  // less than the closed form, which has all four send at once.
  ScenarioConfig cfg = plan(64, 4, 4, 256);
  cfg.parallelism.placement = "pp-tp-cp-dp";
  cfg.cluster.nics_per_node = 2;
  const TrainingEstimate e = estimate_training(cfg, a100());
  const work::TrainingLinks at_once = work::links_at_contention(work::training_links(cfg, a100()), e.contention.tp);
  work::TrainingLinks alone = at_once;
  alone.nic_per_gpu = Bandwidth{4 * at_once.nic_per_gpu.bytes_per_s};
  const work::LayerTimes lt = work::layer_times(cfg, a100());
  const double layers = static_cast<double>(e.micro_batches) * cfg.model.layers / cfg.parallelism.pp;
  const Time tp_alone = layers * work::layer_tp_time(cfg, alone, alone, lt);
  const Time tp_at_once = layers * work::layer_tp_time(cfg, at_once, at_once, lt);
  EXPECT_GT(e.breakdown.tp_exposed, 1.05 * tp_alone);
  EXPECT_LT(e.breakdown.tp_exposed, 0.95 * tp_at_once);
  // A NIC per GPU: no NIC carries two stages, and nothing changes from the closed form.
  cfg.cluster.nics_per_node = 8;
  const TrainingEstimate own = estimate_training(cfg, a100());
  const work::TrainingLinks own_links = work::links_at_contention(work::training_links(cfg, a100()), own.contention.tp);
  EXPECT_EQ(own.breakdown.tp_exposed, layers * work::layer_tp_time(cfg, own_links, own_links, lt));
}

TEST(AnalyticalTraining, PpOverlapWithFewMicroBatchesIsNotSlower) {
  ScenarioConfig off = plan(64, 1, 8, 8);  // dp 8, 8 sequences: 1 micro-batch per pipeline
  off.training.overlap.pp_p2p = false;
  ScenarioConfig on = off;
  on.training.overlap.pp_p2p = true;
  EXPECT_LE(estimate_training(on, a100()).breakdown.pp_exposed, estimate_training(off, a100()).breakdown.pp_exposed);
}

TEST(AnalyticalTraining, MoreGpusAtFixedBatchNeverAddCompute) {
  // Fixed global batch 256, tp 2 x pp 4: dp 4 -> 32 splits the same work over more replicas,
  // 64 -> 8 micro-batches per pipeline.
  Time previous = Time::max();
  for (int gpus : {32, 64, 128, 256}) {
    const TrainingEstimate est = estimate_training(plan(gpus, 2, 4, 256), a100());
    EXPECT_LE(est.breakdown.compute, previous) << gpus;
    previous = est.breakdown.compute;
  }
}

TEST(AnalyticalTraining, Deterministic) {
  const ScenarioConfig cfg = plan(256, 8, 4, 1024, 3);
  const TrainingEstimate a = estimate_training(cfg, a100());
  const TrainingEstimate b = estimate_training(cfg, a100());
  EXPECT_EQ(a.iteration, b.iteration);
  EXPECT_EQ(a.microbatch_stage_time, b.microbatch_stage_time);
  EXPECT_EQ(parts_sum(a.breakdown), parts_sum(b.breakdown));
  EXPECT_EQ(a.breakdown.dp_exposed, b.breakdown.dp_exposed);
  EXPECT_EQ(a.breakdown.tp_exposed, b.breakdown.tp_exposed);
  EXPECT_EQ(a.mfu, b.mfu);  // bit-identical, not merely close
  EXPECT_EQ(a.tokens_per_s, b.tokens_per_s);
  EXPECT_EQ(a.memory.total(), b.memory.total());
}

TEST(AnalyticalTraining, UnsupportedPrecisionIsBadInput) {
  ScenarioConfig cfg = plan(8, 1, 1, 8);
  cfg.training.precision = Precision::kFp8;  // A100 has no FP8
  EXPECT_THROW(estimate_training(cfg, a100()), BadInput);
}

TEST(AnalyticalTraining, Fp8SpeedsTheGemmsNotTheAttentionCore) {
  // FP8 training casts the linear layers' GEMM inputs; attention's core stays BF16 (it ran at the
  // FP8 peak, twice as fast, until 2026-12-05).
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  ScenarioConfig cfg = plan(8, 8, 1, 8);
  cfg.cluster.gpu = "H100-SXM";
  cfg.model.seq_len = 32768;
  const work::LayerTimes bf16 = work::layer_times(cfg, h100);
  cfg.training.precision = Precision::kFp8;
  const work::LayerTimes fp8 = work::layer_times(cfg, h100);
  EXPECT_EQ(fp8.attention_fwd, bf16.attention_fwd);
  EXPECT_LT(fp8.forward, bf16.forward);
  EXPECT_GT(fp8.forward - fp8.attention_fwd, Time::zero());
  EXPECT_EQ(work::attention_precision(Precision::kFp8), Precision::kBf16);
  EXPECT_EQ(work::attention_precision(Precision::kFp16), Precision::kFp16);
}

TEST(CheckMemoryFit, Gpt175bDoesNotFitOnEightGpus) {
  // 175B parameters / tp 8 = 21.8B per GPU; with 16 bytes/parameter of weights, FP32 gradients
  // and ZeRO-1 over dp 1 Adam state that is already ~350 GB, far beyond 80 GB.
  ScenarioConfig cfg;
  cfg.file = "gpt3.yaml";
  cfg.lines["parallelism"] = 12;
  cfg.cluster.gpus = 8;
  cfg.model.layers = 96;
  cfg.model.hidden = 12288;
  cfg.model.heads = 96;
  cfg.model.seq_len = 2048;
  cfg.model.vocab = 51200;
  cfg.parallelism.tp = 8;
  cfg.training.global_batch = 8;
  ASSERT_TRUE(validate_scenario(cfg).empty());
  const std::vector<InputError> errors = check_memory_fit(cfg, a100());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].key_path, "parallelism");
  EXPECT_EQ(errors[0].file, "gpt3.yaml");
  EXPECT_EQ(errors[0].line, 12);
  EXPECT_NE(errors[0].message.find("GiB"), std::string::npos);
  EXPECT_NE(errors[0].message.find("A100-SXM4-80GB"), std::string::npos);
}

TEST(AnalyticalTraining, EveryDpBucketPaysTheRingLatency) {
  // ZeRO-1 without overlap, 2 chunks: one reduce-scatter and one all-gather per bucket of each
  // chunk, as the flow level runs them. Buckets of a quarter of a chunk instead of a whole chunk
  // add 2 x (4 - 1) collectives of each kind, each the ring's latency; the bytes are the same.
  ScenarioConfig cfg = plan(256, 8, 2, 256, 2);
  cfg.parallelism.zero_stage = 1;
  cfg.training.overlap.dp_grad_reduce = false;
  cfg.training.overlap.dp_param_gather = false;
  const TrainingEstimate one = estimate_training(cfg, a100());
  const double chunk = one.memory.params_on_gpu / 2;
  cfg.training.dp_bucket_size = static_cast<int64_t>(std::ceil(chunk));
  const Time whole = estimate_training(cfg, a100()).breakdown.dp_exposed;
  cfg.training.dp_bucket_size = static_cast<int64_t>(std::ceil(chunk / 4));
  const Time quarter = estimate_training(cfg, a100()).breakdown.dp_exposed;
  coll::GroupLinks g;
  g.ranks = one.dp;  // 16 replicas, one per server
  g.ranks_per_node = 1;
  g.intra_alpha = a100().eff.nvlink_collective_latency;
  g.inter_alpha = a100().eff.network_collective_latency;
  const Time per_pair = coll::collective_latency(coll::CollectiveOp::kReduceScatter, coll::Algorithm::kRing, g) +
                        coll::collective_latency(coll::CollectiveOp::kAllGather, coll::Algorithm::kRing, g);
  EXPECT_EQ(quarter - whole, static_cast<int64_t>(2 * 3) * per_pair);
}

TEST(AnalyticalTraining, StepStallAddsItselfToTheIteration) {
  ScenarioConfig cfg = plan(64, 2, 4, 128);
  const TrainingEstimate base = estimate_training(cfg, a100());
  cfg.training.step_stall = Time::ms(200);
  const TrainingEstimate stalled = estimate_training(cfg, a100());
  EXPECT_EQ(stalled.iteration, base.iteration + Time::ms(200));
  EXPECT_EQ(stalled.breakdown.step_stall, Time::ms(200));
  EXPECT_EQ(stalled.breakdown.compute, base.breakdown.compute);
}

TEST(AnalyticalTraining, FlashAttentionV1IsSlowerThanV2) {
  ScenarioConfig cfg = plan(64, 2, 4, 128);
  const TrainingEstimate v2 = estimate_training(cfg, a100());
  cfg.training.flash_attention_version = 1;
  const TrainingEstimate v1 = estimate_training(cfg, a100());
  EXPECT_GT(v1.breakdown.compute, v2.breakdown.compute);
  EXPECT_EQ(v1.flops.model.n, v2.flops.model.n);  // the same model FLOPs, done more slowly
}

// Where ZeRO-3's per-pass gathers pace the step, the passes' compute and exposed TP/CP time run
// beside them: a faster GPU, or less compute, never makes the step slower. Before 2026-12-04 the
// exposed TP time, which grows as shorter passes hide less of it, was added on top of the
// gathers' bound (GPT-175B with DP placed first: 12.3 s, 14.1 s at twice the FLOP rate), and the
// credit for stages ending their reductions apart grew with the backward pass (full
// recomputation came out 1.3% faster than selective).
// TP groups and CP rings that both leave the node send through the same NICs: the attention time
// that hides the ring does not also hide the TP collectives (before 2026-12-05 it hid both, and
// this plan came out 11.6% slower at twice the FLOP rate: 0.407 -> 0.454 s).
TEST(AnalyticalTraining, TpAndCpAcrossNodesDoNotHideUnderTheSameAttention) {
  const ScenarioConfig cfg = scenario_from_tree(
      parse_yaml_text("cluster: {gpu: A100-SXM4-80GB, gpus: 256, nic_bandwidth: 200Gbps}\n"
                      "model: {layers: 18, hidden: 4096, heads: 32, seq_len: 32768, vocab: 51200}\n"
                      "parallelism: {tp: 8, cp: 4, placement: dp-tp-cp-pp}\n"
                      "training: {global_batch: 8, overlap: {tp_comm: true}}\n",
                      "tpcp.yaml"),
      "tpcp.yaml");
  EXPECT_LE(estimate_training(cfg, a100_at_twice_the_flop_rate()).iteration, estimate_training(cfg, a100()).iteration);
}

// With overlap.pp_p2p the steady state's pipeline sends hide under compute only as far as the
// NIC carries them. tp 8 fills a node, so each of the 8 stages is alone on its node's one NIC:
// per micro-batch a middle stage sends 2 vpp activation slices of s h 2 / tp bytes from each of
// 8 GPUs, at least 2 x 3 x 8 MiB at line rate. The step cannot be shorter than m of those (before
// 2026-12-05 it came out at 0.598 s against the 0.773 s the sends take at 100 Gbps; 0.975 s now).
TEST(AnalyticalTraining, OverlappedPipelineSendsAreNoFasterThanTheNic) {
  ScenarioConfig cfg = plan(256, 8, 8, 768, 3);
  cfg.cluster.nics_per_node = 1;
  cfg.cluster.nic_bandwidth = gbps(100);
  cfg.cluster.gpu = "H100-SXM";  // computes a micro-batch faster than its sends leave
  cfg.training.overlap.pp_p2p = true;
  cfg = engine_test::validated(cfg);
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  const TrainingEstimate est = estimate_training(cfg, h100);
  const double slice = 2048.0 * 2048 * 2 / 8;  // bytes per GPU per send
  const double node_bytes_per_step = 2.0 * cfg.parallelism.vpp * est.micro_batches * 8 * slice;
  const Time line_rate = Time::s(node_bytes_per_step / (100e9 / 8));
  EXPECT_GT(est.iteration, line_rate);
  EXPECT_GT(est.pp_send_paced, Time::zero());
  // Never more than without the overlap, and nothing added where the NIC keeps up.
  ScenarioConfig off = cfg;
  off.training.overlap.pp_p2p = false;
  EXPECT_LE(est.breakdown.pp_exposed, estimate_training(off, h100).breakdown.pp_exposed);
  ScenarioConfig eight = cfg;
  eight.cluster.nics_per_node = 8;
  eight.cluster.nic_bandwidth = gbps(400);
  EXPECT_EQ(estimate_training(eight, h100).pp_send_paced, Time::zero());
}

// Without overlap.pp_p2p a stage waits for its own sends, so the stage whose sends leave the node
// paces the pipeline. 8 stages of tp 2 on 16 GPUs: stages 0-3 on one node, 4-7 on the other, and
// stage 3 sends each micro-batch's vpp = 3 forward chunks over its NIC (the LM head made
// negligible, so no stage is slower for it). Before 2026-12-05 every stage paid the mean over the
// 23 boundaries, 5 of which cross the nodes: 2 x 3 x 5/23 of a NIC send per micro-batch, not 3.
TEST(AnalyticalTraining, WithoutOverlapTheStageWhoseSendsLeaveTheNodePaces) {
  ScenarioConfig cfg = engine_test::gpt_1p3b(16, 2, 8, 64, 3);
  cfg.model.vocab = 128;
  cfg.cluster.nic_bandwidth = gbps(100);
  cfg = engine_test::validated(cfg);
  const TrainingEstimate est = estimate_training(cfg, a100());
  const double slice = 2048.0 * 2048 * 2 / 2;  // bytes per GPU per send: s h 2 / tp
  const Time nic_sends = Time::s(est.micro_batches * 3 * slice / (100e9 / 8));
  EXPECT_GT(est.breakdown.pp_exposed, nic_sends);
}

// ZeRO-1 / 2 with the gather after the update: it starts once the last stage has reduced, every
// stage's at once, so it meets every stage's rings, not the staggered reductions' share of them,
// and overlapping it never comes out slower (before 2026-12-05 each stage's gather followed its
// own reduction at the reduction's slowdown: 2.8% slower with the overlap on this fabric, where
// ECMP puts 3 rings of some stages on one link).
TEST(AnalyticalTraining, OverlappingTheParameterGatherNeverSlowsTheStep) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-table2/megascale-175b-256-b768.yaml";
  const std::vector<std::string> plan_of = {"model.layers=40", "model.hidden=6144", "network.switch_radix=64",
                                            "network.wiring=tor_per_server", "network.tor_oversubscription=48:16",
                                            "parallelism.tp=1", "parallelism.vpp=1", "parallelism.cp=2"};
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  std::vector<std::string> o = plan_of;
  o.push_back("training.overlap.dp_param_gather=false");
  const TrainingEstimate off = estimate_training(load_scenario(scenario, o), h100);
  o.back() = "training.overlap.dp_param_gather=true";
  const TrainingEstimate on = estimate_training(load_scenario(scenario, o), h100);
  EXPECT_LE(on.iteration, off.iteration);
  // The non-overlapped gather waits for the latest reduction, with no room of its own.
  EXPECT_EQ(off.dp_start_pass, Time::zero());
}

// ZeRO-3 without the gather overlap: each pass's gather runs between the stage's passes, and the
// stages behind one NIC gather while the others compute, so a pass's gather takes less than every
// stage's at once (at least the NIC's whole load less the pass's compute, no less than one stage's
// alone). 175B, pp 8, tp 1, 4 NICs for a node's 8 stages: the flow level's forward gathers take
// 0.46 s, between 0.30 s alone and 0.61 s for both stages at once; its step 71.79 s. Before
// 2026-12-05 every pass paid both stages' gathers on top of its compute: 83.56 s (now 75.15 s).
TEST(AnalyticalTraining, UnoverlappedZero3GathersOfStagesSharingANicInterleave) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-table2/megascale-175b-256-b768.yaml";
  std::vector<std::string> o = {"cluster.nics_per_node=4", "parallelism.tp=1", "parallelism.micro_batch=2",
                                "parallelism.placement=tp-pp-cp-dp", "parallelism.zero_stage=3",
                                "training.global_batch=512", "training.memory_check=false",
                                "training.overlap.dp_param_gather=false"};
  const ScenarioConfig cfg = load_scenario(scenario, o);
  const TrainingEstimate e = estimate_training(cfg, a100());
  // Every stage's gather at once, on the links as estimate_training prices them: two stages per NIC.
  const work::TrainingLinks l = work::links_at_contention(work::training_links(cfg, a100()), e.contention.dp);
  const work::Placement pl(cfg.parallelism.placement, 1, 1, static_cast<int>(e.dp), cfg.parallelism.pp);
  const coll::GroupLinks g = work::group_links(static_cast<int>(e.dp), pl.ranks_per_node(work::Dim::kDp, 8), l);
  const double chunk_params = e.memory.params_on_gpu / cfg.parallelism.vpp;
  const Time both = collective_time(coll::CollectiveOp::kAllGather, bytes_of(chunk_params * 2.0), g);
  const int64_t passes = 2 * e.micro_batches * cfg.parallelism.vpp;
  // The gathers alone sum to passes x both / 2 or more; both stages' at once to passes x both
  // (beside them what ZeRO-3's per-micro-batch reductions add, since 2026-12-05).
  const Time gathers = e.breakdown.dp_exposed - e.dp_micro_batch_backlog;
  EXPECT_GT(gathers, 0.5 * passes * both);
  EXPECT_LT(gathers, 0.9 * passes * both);
  // A faster GPU leaves the others less time to gather in, never a slower step.
  EXPECT_LE(estimate_training(cfg, a100_at_twice_the_flop_rate()).iteration, e.iteration);
  // A NIC per GPU: no stages share one, and every pass pays its own gather in full.
  o.front() = "cluster.nics_per_node=8";
  const ScenarioConfig own_cfg = load_scenario(scenario, o);
  const TrainingEstimate own = estimate_training(own_cfg, a100());
  const work::TrainingLinks own_l = work::links_at_contention(work::training_links(own_cfg, a100()), own.contention.dp);
  const Time alone = collective_time(coll::CollectiveOp::kAllGather, bytes_of(chunk_params * 2.0),
                                     work::group_links(static_cast<int>(own.dp), pl.ranks_per_node(work::Dim::kDp, 8), own_l));
  EXPECT_GE(own.breakdown.dp_exposed, passes * alone);
}

// ZeRO-3's overlapped gathers share the NICs with the CP rings: a ring pass that runs beside a
// gather has one flow on its GPU's NIC beside the gather ring's and gets half the NIC share. 256
// H100s, tp 1 pp 8 cp 2, a 400 Gbps NIC for two GPUs, each DP group on two nodes and each CP pair
// on two, no fabric contention: the flow level's forward K/V passes take 5.7 ms beside a gather,
// 2.9 ms without, and its step 0.755 s. Before 2026-12-05 the rings had the NIC to themselves,
// as under ZeRO-1 (0.636 s, tp_exposed 0.130 s against the flow level's 0.305 s; now 0.758 s).
TEST(AnalyticalTraining, CpRingsShareTheNicWithOverlappedZero3Gathers) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-table2/megascale-175b-256-b768.yaml";
  std::vector<std::string> o = {"model.layers=32", "model.hidden=4096", "model.heads=32", "cluster.nics_per_node=4",
                                "cluster.nic_bandwidth=400Gbps", "cluster.gpu=H100-SXM", "network.switch_radix=64",
                                "network.tiers=3", "network.wiring=rail_optimized", "network.tor_oversubscription=32:32",
                                "network.agg_oversubscription=48:16", "parallelism.tp=1", "parallelism.pp=8",
                                "parallelism.vpp=1", "parallelism.cp=2", "parallelism.micro_batch=1",
                                "parallelism.placement=tp-dp-cp-pp", "training.global_batch=256",
                                "training.recompute=full", "training.memory_check=false",
                                "training.overlap.dp_param_gather=true", "parallelism.zero_stage=3"};
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  const TrainingEstimate z3 = estimate_training(load_scenario(scenario, o), h100);
  ASSERT_DOUBLE_EQ(z3.contention.cp, 1.0);
  o.back() = "parallelism.zero_stage=1";  // gathers once per step, not beside every pass
  const TrainingEstimate z1 = estimate_training(load_scenario(scenario, o), h100);
  // Most passes run beside a gather (the stream is over half the step), each ring pass at most
  // twice as long, so the exposed rings grow by well over a quarter.
  EXPECT_GT(z3.breakdown.tp_exposed, 1.25 * z1.breakdown.tp_exposed);
  EXPECT_GT(z3.iteration, z1.iteration);
  // Neither the overlap nor a faster GPU makes the step slower.
  o.back() = "parallelism.zero_stage=3";
  o.push_back("training.overlap.dp_param_gather=false");
  EXPECT_LE(z3.iteration, estimate_training(load_scenario(scenario, o), h100).iteration);
  o.pop_back();
  calib::HardwareProfile fast = h100;
  fast.bf16 = FlopRate{2.0 * fast.bf16.per_s};
  fast.fp16 = FlopRate{2.0 * fast.fp16.per_s};
  EXPECT_LE(estimate_training(load_scenario(scenario, o), fast).iteration, z3.iteration);
}

TEST(AnalyticalTraining, AGatherPacedStepIsNeverSlowerWithLessCompute) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml";
  const calib::HardwareProfile fast = a100_at_twice_the_flop_rate();
  const std::vector<std::vector<std::string>> plans = {
      {"parallelism.zero_stage=3", "parallelism.placement=dp-tp-cp-pp"},
      {"cluster.gpus=1024", "parallelism.pp=2", "parallelism.vpp=3", "parallelism.zero_stage=3",
       "parallelism.placement=dp-tp-cp-pp", "cluster.nics_per_node=4", "cluster.nic_bandwidth=100Gbps",
       "network.routing=spray", "training.global_batch=1024"},
      {"cluster.gpus=1024", "parallelism.tp=2", "parallelism.pp=1", "parallelism.vpp=1", "parallelism.cp=2",
       "parallelism.zero_stage=3", "parallelism.placement=tp-dp-cp-pp", "training.global_batch=512",
       "training.recompute=full"}};
  for (const std::vector<std::string>& o : plans) {
    const ScenarioConfig cfg = load_scenario(scenario, o);
    const TrainingEstimate slow = estimate_training(cfg, a100());
    const TrainingEstimate quick = estimate_training(cfg, fast);
    EXPECT_LE(quick.iteration, slow.iteration) << o.back();
    EXPECT_LT(quick.breakdown.compute, slow.breakdown.compute);
  }
  std::vector<std::string> shared = {"cluster.gpus=1024", "parallelism.tp=2", "parallelism.pp=2", "parallelism.vpp=2",
                                     "training.global_batch=1024", "parallelism.zero_stage=3",
                                     "network.tor_oversubscription=3", "parallelism.placement=pp-tp-cp-dp",
                                     "cluster.nics_per_node=2", "cluster.nic_bandwidth=400Gbps",
                                     "network.switch_radix=128", "training.flash_attention=false",
                                     // full attention: the default scenario's window of 1,280 exceeds
                                     // the seq_len of 1,024 compared below
                                     "training.memory_check=false", "model.attention_window=0"};
  const auto with = [&](const std::string& more) {
    std::vector<std::string> o = shared;
    o.push_back(more);
    return estimate_training(load_scenario(scenario, o), a100()).iteration;
  };
  EXPECT_LE(with("training.recompute=selective"), with("training.recompute=full"));
  shared.push_back("training.recompute=selective");
  EXPECT_LE(with("model.seq_len=1024"), with("model.seq_len=2048"));
}

// ZeRO-0/1/2: the DP collectives overlap the time a pass leaves the NIC free of its own TP and CP
// traffic, which a faster GPU never shortens where TP leaves the node (its traffic holds the NIC
// whether hidden under compute or exposed). Before 2026-12-04 the windows were the compute alone,
// and 5 of 120 random plans placing TP across nodes came out up to 3.8% slower at twice the FLOP
// rate (MegaScale's 768-GPU plan placed DP first: +1.2%).
TEST(AnalyticalTraining, AStepWithoutZero3IsNeverSlowerOnAFasterGpu) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml";
  const calib::HardwareProfile fast = a100_at_twice_the_flop_rate();
  const std::vector<std::vector<std::string>> plans = {
      {"cluster.gpus=768", "training.global_batch=768", "parallelism.vpp=6", "parallelism.placement=dp-tp-cp-pp"},
      {"cluster.gpus=512", "parallelism.tp=4", "parallelism.pp=4", "parallelism.vpp=3", "training.global_batch=512",
       "parallelism.placement=cp-dp-tp-pp", "cluster.nics_per_node=2", "cluster.nic_bandwidth=100Gbps",
       "training.recompute=selective", "training.memory_check=false"},
      {"cluster.gpus=512", "parallelism.tp=8", "parallelism.pp=1", "parallelism.vpp=1", "training.global_batch=256",
       "parallelism.placement=cp-dp-tp-pp", "cluster.nic_bandwidth=100Gbps", "training.recompute=full",
       "training.memory_check=false"}};
  for (const std::vector<std::string>& o : plans) {
    for (const char* zero : {"parallelism.zero_stage=0", "parallelism.zero_stage=1", "parallelism.zero_stage=2"}) {
      std::vector<std::string> with_zero = o;
      with_zero.push_back(zero);
      const ScenarioConfig cfg = load_scenario(scenario, with_zero);
      const TrainingEstimate slow = estimate_training(cfg, a100());
      const TrainingEstimate quick = estimate_training(cfg, fast);
      EXPECT_LE(quick.iteration, slow.iteration) << o[0] << " " << o.back() << " " << zero;
      EXPECT_LT(quick.breakdown.compute, slow.breakdown.compute);
    }
  }
}

// ZeRO-2 holds a gradient shard only, so each micro-batch's gradients are reduce-scattered after
// its backward pass; what one micro-batch's passes cannot hide piles up. MegaScale's 175B plan on
// 768 GPUs: dp 12, 64 micro-batches, each reduction of 2.7e9 FP32 gradients far longer than a
// micro-batch's 0.18 s of passes on 200 Gbps NICs (29.43 s against ZeRO-1's 12.05 s; the flow
// level 29.54 and 12.07 s), hidden on 800 Gbps NICs. Before 2026-12-05 ZeRO-2 reduced once per
// step and gave ZeRO-1's time.
TEST(AnalyticalTraining, ZeroTwoReducesEveryMicroBatch) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/megascale-175b-12288.yaml";
  const auto at = [&](int zero, std::vector<std::string> o) {
    o.insert(o.end(), {"cluster.gpus=768", "parallelism.zero_stage=" + std::to_string(zero)});
    return estimate_training(load_scenario(scenario, o), a100());
  };
  const std::vector<std::string> batch = {"training.global_batch=768"};
  const TrainingEstimate z1 = at(1, batch), z2 = at(2, batch);
  ASSERT_EQ(z2.micro_batches, 64);
  EXPECT_EQ(z1.dp_micro_batch_backlog, Time::zero());
  EXPECT_GT(z2.dp_micro_batch_backlog, Time::zero());
  EXPECT_NEAR((z2.iteration - z1.iteration).as_s(), z2.dp_micro_batch_backlog.as_s(), 0.01 * z1.iteration.as_s());
  EXPECT_GT(z2.iteration.as_s(), 2.0 * z1.iteration.as_s());
  EXPECT_EQ(z2.breakdown.compute, z1.breakdown.compute);
  // Not overlapped, every earlier micro-batch's reduction is exposed whole.
  std::vector<std::string> serial = batch;
  serial.push_back("training.overlap.dp_grad_reduce=false");
  const TrainingEstimate z2_serial = at(2, serial);
  EXPECT_GT(z2_serial.dp_micro_batch_backlog, z2.dp_micro_batch_backlog);
  // One micro-batch: ZeRO-1's time.
  const std::vector<std::string> one = {"training.global_batch=12", "parallelism.vpp=1"};
  EXPECT_EQ(at(2, one).iteration, at(1, one).iteration);
  // NICs fast enough to hide each reduction in the steady state: only the interleaved drain,
  // whose backward passes come one after another, issues them faster than the NIC takes them.
  // The flow level: 12.06 s at ZeRO-1, 12.09 s at ZeRO-2 (2026-12-07); analytical 12.05 and 12.08.
  std::vector<std::string> fast = batch;
  fast.push_back("cluster.nic_bandwidth=800Gbps");
  const TrainingEstimate f1 = at(1, fast), f2 = at(2, fast);
  EXPECT_GT(f2.iteration, f1.iteration);
  EXPECT_LT((f2.iteration - f1.iteration).as_s(), 0.005 * f1.iteration.as_s());
}

// The interleaved drain: each stage's last backward passes run one after another and issue
// their chunks' reductions faster than the NIC takes them, while the steady state hides them.
// Llama-3-70B-like on 2,048 GPUs (tp 4, pp 2, vpp 5, ZeRO-2, DP outermost, sprayed), the flow
// level's iterations 2.622, 4.514 and 8.383 s at 2, 4 and 8 micro-batches a pipeline; until
// 2026-12-07 the analytical level read 3.199, 4.946 and 8.441 s (the room of the bound alone, at
// (m - 1) cycles less the drain's missing forwards, and no drain), now 2.649, 4.578 and 8.447 s.
TEST(AnalyticalTraining, ZeroTwoReductionsBackUpInTheInterleavedDrain) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/planning/llama3-70b-4096.yaml";
  const std::vector<std::pair<int, double>> flow = {{512, 2.622}, {1024, 4.514}, {2048, 8.383}};
  for (const auto& [batch, flow_s] : flow) {
    const ScenarioConfig cfg = load_scenario(
        scenario, {"cluster.gpus=2048", "parallelism.tp=4", "parallelism.pp=2", "parallelism.vpp=5",
                   "parallelism.zero_stage=2", "parallelism.placement=tp-cp-pp-dp", "network.routing=spray",
                   "training.memory_check=false", "training.global_batch=" + std::to_string(batch)});
    const TrainingEstimate e = estimate_training(cfg, calib::load_hardware_profile("H100-SXM"));
    EXPECT_NEAR(e.iteration.as_s() / flow_s, 1.0, 0.02) << batch;
  }
}

TEST(CheckMemoryFit, MemoryCheckOffRunsTheOversizedPlan) {
  ScenarioConfig cfg = plan(8, 1, 1, 8);
  cfg.model.layers = 96;
  cfg.model.hidden = 12288;
  cfg.model.heads = 96;
  ASSERT_FALSE(check_memory_fit(cfg, a100()).empty());
  cfg.training.memory_check = false;
  EXPECT_TRUE(check_memory_fit(cfg, a100()).empty());
}

TEST(AnalyticalTraining, SprayedDpRingsMeetOnlyTheOversubscriptionTheirCrossingsAddUpTo) {
  // Spraying splits every ring edge evenly over the uplinks, so only the tiers' ratios show (ECMP
  // adds its collisions: fabric_contention_test). 3-tier Clos, radix 64, a ToR per server. 256
  // GPUs, tp 8: dp 32 over 32 servers, inside one pod, so the aggregation tier's 7:1 must not
  // slow the DP collectives.
  ScenarioConfig cfg = plan(256, 8, 1, 256);
  cfg.network.wiring = Wiring::kTorPerServer;
  cfg.network.routing = Routing::kSpray;
  const TrainingEstimate flat = estimate_training(cfg, a100());
  cfg.network.agg_oversubscription = 7.0;
  EXPECT_EQ(estimate_training(cfg, a100()).breakdown.dp_exposed, flat.breakdown.dp_exposed);
  // ToR 7:1 (7 servers per ToR): each of the 8 DP rings has 7 members on a ToR and leaves it by
  // one edge, 8 flows on 8 uplinks: no slowdown either.
  cfg.network.agg_oversubscription = 1.0;
  cfg.network.tor_oversubscription = 7.0;
  EXPECT_EQ(estimate_training(cfg, a100()).breakdown.dp_exposed, flat.breakdown.dp_exposed);
  // DP outermost behind pp 8 (stride 64 GPUs = 8 servers): every ring edge leaves its ToR, all 56
  // GPUs' flows share 8 uplinks, 7x slower.
  ScenarioConfig outer = plan(512, 8, 8, 64);
  outer.network.wiring = Wiring::kTorPerServer;
  outer.network.routing = Routing::kSpray;
  outer.parallelism.placement = "tp-cp-pp-dp";
  const TrainingEstimate outer_flat = estimate_training(outer, a100());
  outer.network.tor_oversubscription = 7.0;
  EXPECT_GT(estimate_training(outer, a100()).breakdown.dp_exposed, 5 * outer_flat.breakdown.dp_exposed);
  // 5:1 does not split 64 ports into whole numbers: refused as at the flow level (priced unrouted,
  // it could beat a 1:1 fabric whose rings collide).
  outer.network.tor_oversubscription = 5.0;
  try {
    estimate_training(outer, a100());
    ADD_FAILURE() << "a fabric that does not build was priced";
  } catch (const BadInput& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_EQ(e.errors()[0].key_path, "network.tor_oversubscription");
    EXPECT_NE(e.errors()[0].message.find("54:10"), std::string::npos) << e.errors()[0].message;
  }
}

// Slower switch-to-switch links (network.fabric_bandwidth) slow only traffic that crosses them.
// GPT 1.3B on 128 GPUs, tp 8 placed DP first (a TP group is 8 GPUs a node apart, one per node,
// all on one rail), 2-tier rail-optimised Clos of radix 64: every TP group stays under its rail's
// ToR, so a 4x slower fabric changes nothing (before 2026-11-22 the closed form charged it to every
// byte between nodes: 2.7x the iteration; the flow level gives 1.393 s either way, as now here).
TEST(AnalyticalTraining, SlowFabricLinksSlowOnlyTrafficThatCrossesThem) {
  ScenarioConfig cfg = plan(128, 8, 2, 64);
  cfg.network.tiers = 2;
  cfg.network.switch_radix = 64;
  cfg.parallelism.placement = "dp-tp-cp-pp";
  const TrainingEstimate fast = estimate_training(cfg, a100());
  cfg.network.fabric_bandwidth = gbps(50);
  const TrainingEstimate slow = estimate_training(cfg, a100());
  EXPECT_GT(fast.breakdown.tp_exposed, 0.2 * fast.iteration);  // TP between nodes matters here
  EXPECT_EQ(slow.iteration, fast.iteration);
  // 1,024 GPUs, tp 8, dp 128 (the default placement): a rail's ToR has 32 servers, so each DP ring
  // (one GPU per server, 128 servers) leaves its ToR 4 times, and those edges run at the fabric's
  // rate: a 4x slower fabric slows the DP collectives.
  ScenarioConfig wide = plan(1024, 8, 1, 512);
  wide.network.tiers = 2;
  wide.network.switch_radix = 64;
  const TrainingEstimate wide_fast = estimate_training(wide, a100());
  wide.network.fabric_bandwidth = gbps(50);
  EXPECT_GT(estimate_training(wide, a100()).breakdown.dp_exposed, 1.5 * wide_fast.breakdown.dp_exposed);
}

TEST(AnalyticalTraining, ListedStageLayersMayNotDivideEvenly) {
  // 26 layers over pp 4 (7, 6, 6, 7): accepted for a dense model; the pipeline then runs at the
  // heaviest stage's pace, between the even 6.5-layer stage and a 7-layer one.
  ScenarioConfig cfg = plan(64, 2, 4, 128);
  cfg.model.layers = 26;
  EXPECT_FALSE(validate_scenario(cfg).empty());  // 4 does not divide 26
  cfg.stragglers.stage_layers = {7, 6, 6, 7};
  EXPECT_TRUE(validate_scenario(cfg).empty());
}

TEST(ChunkedDpExposed, WithoutInterleavingIsTheLastPassWindow) {
  // vpp 1: what the last micro-batch's backward does not hide, never less than the last bucket.
  const Time total = Time::ms(100), pass = Time::ms(30);
  EXPECT_EQ(chunked_dp_exposed(total, 0.05 * total, pass, 8, 1, 0.0), Time::ms(70));
  EXPECT_EQ(chunked_dp_exposed(Time::ms(20), 0.05 * Time::ms(20), pass, 8, 1, 0.0), 0.05 * Time::ms(20));
}

TEST(ChunkedDpExposed, InterleavingHidesAllButTheLastChunk) {
  // vpp 4 on pp 8: chunks free their gradients 8 passes apart, so a reduction shorter than that
  // per chunk leaves only the last chunk's share beyond its own pass.
  const Time pass = Time::ms(10);
  EXPECT_EQ(chunked_dp_exposed(Time::ms(200), 0.01 * Time::ms(200), pass, 8, 4, 0.0), Time::ms(40));  // 50 - 10
  // Longer than the passes that follow: the stream runs behind, total - (3 x 8 + 1) passes.
  EXPECT_EQ(chunked_dp_exposed(Time::ms(1000), 0.01 * Time::ms(1000), pass, 8, 4, 0.0), Time::ms(750));
  // Never more than vpp 1 would leave with the same per-chunk pass, never below the last bucket.
  for (const int vpp : {1, 2, 4, 8}) {
    for (const int64_t ms : {1, 50, 300, 3000}) {
      const Time total = Time::ms(static_cast<double>(ms));
      const Time t = chunked_dp_exposed(total, 0.02 * total, pass, 8, vpp, 0.0);
      EXPECT_LE(t, chunked_dp_exposed(total, 0.02 * total, static_cast<double>(vpp) * pass, 8, 1, 0.0)) << vpp << " " << ms;
      EXPECT_GE(t, 0.02 * total);
    }
  }
}

// Pieces ready at k/n of the last pass leave max(R/n, R - (n-1)/n P) after it: the part of the
// pass before the first piece is ready hides nothing (QA 2026-12-07: an MoE stage of 2 layers
// issues its experts' reductions layer by layer, and the analytical level credited the whole pass).
TEST(ChunkedDpExposed, ThePassBeforeTheFirstPieceHidesNothing) {
  const Time pass = Time::ms(10), total = Time::ms(30);
  EXPECT_EQ(chunked_dp_exposed(total, 0.5 * total, pass, 1, 1, 0.5), Time::ms(25));  // 30 - 5: not 20
  EXPECT_EQ(chunked_dp_exposed(total, 0.5 * total, pass, 1, 1, 0.0), Time::ms(20));
  // Short against the pass: the last piece alone.
  EXPECT_EQ(chunked_dp_exposed(Time::ms(8), Time::ms(4), pass, 1, 1, 0.5), Time::ms(4));
  // A single piece ready at the pass's end hides nothing.
  EXPECT_EQ(chunked_dp_exposed(total, total, pass, 8, 1, 1.0), total);
}

TEST(CheckMemoryFit, SmallPlanFits) {
  EXPECT_TRUE(check_memory_fit(plan(64, 2, 4, 128), a100()).empty());
}

}  // namespace
}  // namespace clustersim::engine
