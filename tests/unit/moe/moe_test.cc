// SPDX-License-Identifier: Apache-2.0
// MoE arithmetic and routing, all-to-all bytes against the routing matrix, and the properties the
// analytical level must keep: skew slows, chunked overlap never slows, lower precision helps.
#include "workloads/moe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include <map>
#include <string>
#include <utility>

#include "calibration/compute_cost.h"
#include "calibration/hardware_profile.h"
#include "sim/core/scenario.h"
#include "sim/engine/analytical_training.h"
#include "sim/engine/flow_training.h"
#include "sim/report/trace_writer.h"
#include "sim/report/training_report.h"
#include "tests/unit/moe/moe_test_util.h"

namespace clustersim::work {
namespace {

using moe_test::h800;
using moe_test::load;
using moe_test::small_yaml;

ModelConfig internal_352b() {
  ModelConfig m;
  m.layers = 60;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 8;  // MegaScale-MoE Table 1: m = query heads / KV heads = 4
  m.ffn_hidden = 14336;
  m.seq_len = 8192;
  m.vocab = 65536;
  m.activation = Activation::kSwiglu;
  m.tied_embeddings = false;
  m.learned_positions = false;
  m.moe.emplace();
  m.moe->experts = 32;
  m.moe->top_k = 3;
  m.moe->shared_experts = 1;  // derived in scenarios/megascale-moe-352b-1440.yaml (352B, MFU)
  return m;
}

TEST(MoeParams, Internal352bTotalAndActive) {
  // Per layer: attention 4096 x (4096 + 2 x 8 x 128) + 4096^2 = 41,943,040; 32 routed and one
  // shared expert of 3 x 4096 x 14336 = 176,160,768; router 4096 x 32; two RMSNorms 8,192 ->
  // 5,855,387,648. 60 layers + embedding and head 2 x 65536 x 4096 + final norm 4096: the
  // paper's "352B".
  EXPECT_DOUBLE_EQ(count_params(internal_352b()).total, 351860133888.0);
  // Active GEMM parameters per layer: 41,943,040 + (3 + 1) x 176,160,768 + 131,072 = 746,717,184;
  // model FLOPs per token 3 x (60 x (2 x 746,717,184 + 4 x 8192 x 4096) + 2 x 4096 x 65536).
  EXPECT_DOUBLE_EQ(model_flops_per_token(internal_352b()), 294587990016.0);
  // Parameters a token activates: all but the 29 routed experts it skips in each of 60 layers,
  // 351,860,133,888 - 60 x 29 x 176,160,768 (until 2026-12-05 results.json's
  // moe.active_parameters_per_token was model FLOPs per token / 6, which adds the attention
  // scores: 49.1e9 here).
  EXPECT_DOUBLE_EQ(moe_active_params(internal_352b()), 351860133888.0 - 60.0 * 29.0 * 176160768.0);
}

TEST(MoeParams, LayerPattern) {
  ModelConfig m = internal_352b();
  m.moe->first_dense_layers = 1;
  m.moe->moe_layer_frequency = 2;
  EXPECT_FALSE(is_moe_layer(m, 0));
  EXPECT_TRUE(is_moe_layer(m, 1));
  EXPECT_FALSE(is_moe_layer(m, 2));
  EXPECT_TRUE(is_moe_layer(m, 3));
  EXPECT_EQ(moe_layer_count(m), 30);
}

TEST(Routing, ConservesPairsAndIsDeterministic) {
  MoeConfig moe;
  moe.experts = 16;
  moe.top_k = 2;
  moe.seed = 3;
  const RoutingMatrix a = route_tokens(moe, 4, 2, 500, 11);
  const RoutingMatrix b = route_tokens(moe, 4, 2, 500, 11);
  EXPECT_EQ(a.pairs, b.pairs);
  double total = 0;
  for (const double v : a.pairs) total += v;
  EXPECT_DOUBLE_EQ(total, 8 * 500 * 2.0);
  const RoutingMatrix c = route_tokens(moe, 4, 2, 500, 12);
  EXPECT_NE(a.pairs, c.pairs);
  EXPECT_LT(a.imbalance(), 1.15);  // uniform: sampling noise only
}

// The draws themselves, pinned for each weight kind (the figures of the code before 2026-12-07's
// faster counting, which must not move them: every routed MoE result follows from them).
TEST(Routing, DrawsArePinnedForEveryWeightKind) {
  const auto sums = [](const RoutingMatrix& r) {
    std::vector<double> s;
    for (const double e : r.expert_pairs) s.push_back(e);
    s.push_back(r.dropped);
    return s;
  };
  MoeConfig moe;
  moe.experts = 8;
  moe.top_k = 2;
  moe.seed = 5;
  EXPECT_EQ(sums(route_tokens(moe, 4, 1, 200, 9)), (std::vector<double>{177, 197, 208, 203, 189, 211, 228, 187, 0}));
  moe.routing = MoeRouting::kZipf;
  moe.zipf_s = 1.2;
  EXPECT_EQ(sums(route_tokens(moe, 4, 1, 200, 9)), (std::vector<double>{302, 154, 118, 227, 82, 75, 74, 568, 0}));
  moe.routing = MoeRouting::kLoads;
  moe.loads = {4, 0, 1, 1, 2, 0.5, 3, 1};
  moe.capacity_factor = 1.25;
  EXPECT_EQ(sums(route_tokens(moe, 4, 1, 200, 9)), (std::vector<double>{250, 0, 158, 139, 250, 84, 250, 139, 330}));
}

// The draws kept for later are the draws: the same matrix from RoutingDraws as from route_tokens,
// and a draw of other inputs (another seed, other loads) is its own.
TEST(Routing, KeptDrawsAreTheDraws) {
  MoeConfig moe;
  moe.experts = 16;
  moe.top_k = 4;
  moe.seed = 2;
  RoutingDraws draws;
  const RoutingMatrix a = draws.draw(moe, 4, 2, 300, 7);
  EXPECT_EQ(draws.draw(moe, 4, 2, 300, 7).pairs, a.pairs);
  EXPECT_EQ(draws.size(), 1u);
  EXPECT_EQ(a.pairs, route_tokens(moe, 4, 2, 300, 7).pairs);
  moe.seed = 3;
  EXPECT_EQ(draws.draw(moe, 4, 2, 300, 7).pairs, route_tokens(moe, 4, 2, 300, 7).pairs);
  moe.routing = MoeRouting::kLoads;
  moe.loads.assign(16, 1.0);
  moe.loads[0] = 5;
  EXPECT_EQ(draws.draw(moe, 4, 2, 300, 7).expert_pairs, route_tokens(moe, 4, 2, 300, 7).expert_pairs);
  moe.loads[1] = 5;
  EXPECT_EQ(draws.draw(moe, 4, 2, 300, 7).expert_pairs, route_tokens(moe, 4, 2, 300, 7).expert_pairs);
  EXPECT_EQ(draws.size(), 4u);
}

// With top_k = experts every token visits every expert whatever the weights: the counts the draws
// gave (skewed routing drew them at great cost until 2026-12-06; now nothing is drawn).
TEST(Routing, EveryExpertPickedWhenTopKIsAll) {
  MoeConfig moe;
  moe.experts = 16;
  moe.top_k = 16;
  const RoutingMatrix uniform = route_tokens(moe, 4, 1, 100, 0);
  moe.routing = MoeRouting::kZipf;
  moe.zipf_s = 10;
  const RoutingMatrix skewed = route_tokens(moe, 4, 1, 100, 0);
  EXPECT_EQ(uniform.pairs, skewed.pairs);
  for (const double e : skewed.expert_pairs) EXPECT_DOUBLE_EQ(e, 4 * 100.0);
  EXPECT_DOUBLE_EQ(skewed.imbalance(), 1.0);
}

// Each layer (stream) draws its own routing: the busiest owner moves from layer to layer. Until
// 2026-12-06 stream L's draws were stream 0's shifted by L, so every layer routed alike: the same
// owner busiest in all 8 and the imbalances equal to 4 digits (Mixtral, seed 0: 1.0396, 1.0393, ...).
TEST(Routing, StreamsDrawIndependently) {
  MoeConfig moe;
  moe.experts = 8;
  moe.top_k = 2;
  std::set<int> busiest;
  std::set<long> imbalance;
  for (uint64_t layer = 0; layer < 8; ++layer) {
    const RoutingMatrix r = route_tokens(moe, 8, 1, 2048, layer);
    int top = 0;
    for (int o = 1; o < r.owners; ++o) top = r.owner_pairs(o) > r.owner_pairs(top) ? o : top;
    busiest.insert(top);
    imbalance.insert(std::lround(r.imbalance() * 1e4));
  }
  EXPECT_GE(busiest.size(), 3u);
  EXPECT_GE(imbalance.size(), 6u);
}

TEST(Routing, HotExpertFromLoadsAndCapacity) {
  MoeConfig moe;
  moe.experts = 8;
  moe.top_k = 1;
  moe.routing = MoeRouting::kLoads;
  moe.loads = {7, 1, 1, 1, 1, 1, 1, 1};  // expert 0 takes 7/14 of the tokens
  const RoutingMatrix r = route_tokens(moe, 8, 1, 2000, 0);
  EXPECT_NEAR(r.imbalance(), 4.0, 0.3);  // 0.5 of the pairs / (1/8)
  moe.capacity_factor = 1.25;
  const RoutingMatrix capped = route_tokens(moe, 8, 1, 2000, 0);
  EXPECT_LE(capped.expert_pairs[0], std::ceil(1.25 * 2000.0));
  EXPECT_GT(capped.dropped, 0.0);
  EXPECT_LT(capped.imbalance(), r.imbalance());
  // Only the ratios route: weights near the largest double give the same draw (their sum
  // overflowed to infinity and the draw crashed before 2026-12-04).
  moe.capacity_factor = 0;
  moe.loads = {7e307, 1e307, 1e307, 1e307, 1e307, 1e307, 1e307, 1e307};
  const RoutingMatrix huge = route_tokens(moe, 8, 1, 2000, 0);
  EXPECT_EQ(huge.pairs, r.pairs);
}

TEST(AllToAll, TransfersCarryTheRoutingMatrix) {
  // Experts across two nodes (ep 4, expert_tp 2 on 8-GPU nodes, 16 GPUs per stage: edp 2).
  const ScenarioConfig cfg = load(small_yaml(), {"model.moe.routing=zipf", "parallelism.ep=4", "parallelism.expert_tp=2"});
  const ExpertLayout lay = expert_layout(cfg, 0);
  ASSERT_EQ(lay.edp, 2);
  const RoutingMatrix r = route_tokens(*cfg.model.moe, lay.ep, lay.etp, 256, 5);
  const double bpp = 1024 * 2.0;
  for (int edp = 0; edp < lay.edp; ++edp) {
    std::map<std::pair<int32_t, int32_t>, double> bytes;
    for (const coll::FlowSpec& f : dispatch_transfers(r, lay, edp, bpp, 8)) bytes[std::make_pair(f.src, f.dst)] += f.bytes.as_double();
    for (int s = 0; s < r.sources; ++s) {
      for (int d = 0; d < r.owners; ++d) {
        const int32_t src = lay.gpu(s % lay.etp, s / lay.etp, edp);
        const int32_t dst = lay.gpu(s % lay.etp, d, edp);
        const double want = src == dst ? 0.0 : r.pairs[static_cast<size_t>(s) * r.owners + d] * bpp;
        const double got = bytes[std::make_pair(src, dst)];
        EXPECT_NEAR(got, want, 0.5) << "src " << src << " dst " << dst;
      }
    }
  }
}

TEST(AllToAll, ClosedFormIsTheBusiestDirection) {
  coll::GroupLinks g;
  g.ranks = 4;
  g.ranks_per_node = 2;
  g.intra_busbw = gbytes_per_s(100);
  g.nic_per_gpu = gbytes_per_s(10);
  g.intra_alpha = Time::zero();
  g.inter_alpha = Time::zero();
  // GPU 0 receives 2 GB across nodes (1 from each remote GPU): 0.2 s on its NIC, and 1 us for
  // each of its 3 peers (the network's latency is zero here).
  const Time peers = 3 * Time::us(1);
  const std::vector<coll::FlowSpec> x = {{2, 0, Bytes{1'000'000'000}, true},
                                         {3, 0, Bytes{1'000'000'000}, true},
                                         {1, 0, Bytes{1'000'000'000}, false}};
  EXPECT_EQ(coll::alltoallv_time(x, g), Time::s(0.2) + peers);
  // One NIC per node (2 GPUs each): GPU 0 has the whole NIC, 20 GB/s, while GPU 1 receives
  // nothing across: 0.1 s (before 2026-12-05 a fixed half of it, 0.2 s).
  EXPECT_EQ(coll::alltoallv_time(x, g, 2), Time::s(0.1) + peers);
  // Both GPUs behind it receiving 2 GB each: 4 GB through the shared NIC, 0.2 s.
  std::vector<coll::FlowSpec> both = x;
  both.push_back({2, 1, Bytes{1'000'000'000}, true});
  both.push_back({3, 1, Bytes{1'000'000'000}, true});
  EXPECT_EQ(coll::alltoallv_time(both, g, 2), Time::s(0.2) + peers);
}


engine::TrainingEstimate run(const std::vector<std::string>& overrides) {
  return engine::estimate_training(load(small_yaml(), overrides), h800());
}

// H800: bf16 peak 989.4 TFLOP/s, HBM 3.35 TB/s x 0.88, so the roofline ridge is about
// 989.4 x 0.78 / (3.35 x 0.88) = 262 FLOP/B of tensor-core work at gemm_max.
TEST(MoeGemmTime, LongInnerDimensionsAreComputeBound) {
  // Expert of 8192 tokens, h 4096 -> 2f 28672: every pass is far right of the ridge.
  const GemmPassTimes t = moe_gemm_time(8192, 28672, 4096, Precision::kBf16, 2.0, 4.0, h800());
  EXPECT_EQ(t.fwd, calib::gemm_time(8192, 28672, 4096, Precision::kBf16, h800()));
  EXPECT_EQ(t.bwd, calib::gemm_time(8192, 4096, 28672, Precision::kBf16, h800()) +
                       calib::gemm_time(4096, 28672, 8192, Precision::kBf16, h800()));
}

TEST(MoeGemmTime, FewTokensWeightGradientIsBoundByTheFp32MainGrad) {
  // 512 tokens per expert (the 352B plan has 768: 8 x 1024 tokens x top-3 / 32 experts, near the
  // ridge at the fitted Hopper GEMM rate): the weight gradient does 2 x 4096 x 28672 x 512 =
  // 120 GFLOP but reads and writes a 4096 x 28672 FP32 main grad (940 MB) plus its 16-bit
  // operands: about 124 FLOP/B, left of the ridge (584 TFLOP/s / 2.95 TB/s = 198 FLOP/B).
  const int64_t m = 512, n = 28672, k = 4096;
  const GemmPassTimes t = moe_gemm_time(m, n, k, Precision::kBf16, 2.0, 4.0, h800());
  const double wgrad_bytes = 2.0 * (k * m + m * n) + 2.0 * 4.0 * k * n;
  const Time dgrad = calib::gemm_time(m, k, n, Precision::kBf16, h800());
  EXPECT_EQ(t.bwd, dgrad + calib::memory_time(bytes_of(wgrad_bytes), h800()));
  EXPECT_GT(t.bwd, dgrad + calib::gemm_time(k, n, m, Precision::kBf16, h800()));
  // A 16-bit main grad moves half the bytes: never slower.
  EXPECT_LE(moe_gemm_time(m, n, k, Precision::kBf16, 2.0, 2.0, h800()).bwd, t.bwd);
}

// training.moe_grouped_gemm: a GPU's experts as one grouped GEMM per projection. Never slower
// than one GEMM per expert, the same with one expert a GPU, and much faster for many small experts
// (QA, 2026-12-07: 128 experts of 768 paid 42% more expert time than 16 of 6,144 per expert GEMM).
TEST(MoeGroupedGemm, GroupsAGpusExpertsAndNeverSlowsThem) {
  const auto expert_time = [](const std::vector<std::string>& o) {
    Time t;
    for (const engine::MoeLayerReport& l : run(o).moe_layers) t += l.expert_compute;
    return t;
  };
  const std::vector<std::string> one = {"parallelism.ep=8", "model.moe.experts=8"};
  std::vector<std::string> grouped_one = one;
  grouped_one.push_back("training.moe_grouped_gemm=true");
  EXPECT_EQ(expert_time(grouped_one), expert_time(one));
  const std::vector<std::string> fine = {"parallelism.ep=8", "model.moe.experts=128", "model.moe.top_k=8",
                                         "model.moe.expert_ffn_hidden=512"};
  std::vector<std::string> grouped_fine = fine;
  grouped_fine.push_back("training.moe_grouped_gemm=true");
  EXPECT_LT(expert_time(grouped_fine).as_s(), 0.9 * expert_time(fine).as_s());
}

TEST(MoeAnalytical, BreakdownAddsUpAndReportsLayers) {
  const engine::TrainingEstimate e = run({});
  const engine::TrainingBreakdown& b = e.breakdown;
  EXPECT_EQ(e.iteration, b.compute + b.tp_exposed + b.pp_exposed + b.bubble + b.dp_exposed + b.optimizer + b.ep_exposed);
  EXPECT_EQ(e.moe_layers.size(), 4u);
  EXPECT_GT(b.ep_exposed, Time::zero());
}

// Where the slowest stage is dense (two wide dense layers before narrow experts), the MoE report
// shows the stage with MoE layers, as the flow level does (until 2026-12-07 it was empty).
TEST(MoeAnalytical, TheMoeReportTakesAStageWithMoeLayers) {
  const engine::TrainingEstimate e = run({"parallelism.pp=2", "model.moe.first_dense_layers=2",
                                          "model.ffn_hidden=16384", "model.moe.expert_ffn_hidden=256"});
  EXPECT_EQ(e.critical_stage, 1);
  ASSERT_EQ(e.moe_layers.size(), 2u);
  EXPECT_EQ(e.moe_layers[0].layer, 2);
}

// Ulysses (attention_parallel sp) over tp 8 with fewer KV heads than ranks: each rank still gets
// the KV head of its query heads, so the exchange moves as much as with 8 KV heads; until
// 2026-12-06 MQA (1 head) moved an eighth of the K/V, and its attention communication read less.
TEST(MoeAnalytical, FewerKvHeadsThanUlyssesRanksAreReplicated) {
  const Time two = run({"model.kv_heads=2"}).breakdown.tp_exposed;
  EXPECT_EQ(run({"model.kv_heads=1"}).breakdown.tp_exposed, two);
  EXPECT_EQ(run({"model.kv_heads=8"}).breakdown.tp_exposed, two);
  EXPECT_GT(run({"model.kv_heads=8", "model.heads=16"}).breakdown.tp_exposed, Time::zero());
}

TEST(MoeAnalytical, SkewedRoutingIsSlowerThanUniform) {
  const Time uniform = run({}).iteration;
  for (const char* s : {"0.8", "1.2", "2"}) {
    const engine::TrainingEstimate skew = run({"model.moe.routing=zipf", std::string("model.moe.zipf_s=") + s});
    EXPECT_GT(skew.iteration, uniform) << "zipf_s " << s;
    EXPECT_GT(skew.moe_layers.front().imbalance, 1.2) << "zipf_s " << s;
  }
  const Time hot = run({"model.moe.routing=loads", "model.moe.loads=[5, 1, 1, 1, 1, 1, 1, 1]"}).iteration;
  EXPECT_GT(hot, uniform);
}

TEST(MoeAnalytical, ZeroThreeGathersWeightsPerPass) {
  // ZeRO-3 gathers each chunk's weights before every forward and backward pass: more DP time
  // than ZeRO-2 (which gathers once), at most every per-pass gather exposed, and without the
  // gather overlap all of them. On 25 Gbps NICs, where the gathers outlast the compute that hides
  // them (at 400 Gbps they mostly hide: since 2026-12-05, when ring latency counts the network's
  // only for the steps between nodes, the 16-rank dense group pays 2 network steps, not 30).
  const char* slow = "cluster.nic_bandwidth=25Gbps";
  const engine::TrainingEstimate z2 = run({"parallelism.zero_stage=2", slow});
  const engine::TrainingEstimate z3 = run({"parallelism.zero_stage=3", slow});
  const engine::TrainingEstimate z3_serial =
      run({"parallelism.zero_stage=3", "training.overlap.dp_param_gather=false", slow});
  EXPECT_GT(z3.breakdown.dp_exposed, z2.breakdown.dp_exposed);
  EXPECT_GT(z3.iteration, z2.iteration);
  EXPECT_GE(z3_serial.breakdown.dp_exposed, z3.breakdown.dp_exposed);
  EXPECT_EQ(z3.breakdown.compute, z2.breakdown.compute);
  // At 400 Gbps the gathers mostly hide: ZeRO-3 costs more than ZeRO-2, never less, and less than
  // on 25 Gbps NICs (its small per-pass collectives' latencies keep it 31% above ZeRO-2 here, the
  // flow level 21%, since 2026-12-05, when both stages reduce every micro-batch's gradients).
  const Time fast3 = run({"parallelism.zero_stage=3"}).iteration, fast2 = run({"parallelism.zero_stage=2"}).iteration;
  EXPECT_GE(fast3, fast2);
  EXPECT_LT(fast3, z3.iteration);
}

// ZeRO-3 whose gathers pace the step: the expert all-to-alls share the NICs with the gathers,
// hidden behind expert compute or not, so a faster GPU (less compute to hide them) never makes
// the step slower. Before 2026-12-05 only their exposed part came on top of the gathers' stream:
// Mixtral 8x7B on 256 H100s at 100 Gbps, a2a_chunks 4: 7.56 s, and 7.92 s at twice the FLOP
// rate (the flow level 8.31 and 8.24 s).
TEST(MoeAnalytical, AGatherPacedStepIsNeverSlowerOnAFasterGpu) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100-256.yaml";
  const ScenarioConfig cfg =
      load_scenario(scenario, {"parallelism.expert_tp=2", "parallelism.zero_stage=3", "cluster.nic_bandwidth=100Gbps",
                               "training.overlap.a2a_chunks=4", "cluster.gpu=H100-SXM"});
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  Time before = engine::estimate_training(cfg, h100).iteration;
  for (const double times : {2.0, 3.0}) {
    calib::HardwareProfile fast = h100;
    fast.bf16 = FlopRate{times * h100.bf16.per_s};
    fast.fp16 = FlopRate{times * h100.fp16.per_s};
    const engine::TrainingEstimate est = engine::estimate_training(cfg, fast);
    EXPECT_LE(est.iteration, before) << times << "x the FLOP rate";
    before = est.iteration;
  }
}

// Expert domains of 6 GPUs on nodes of 4 share NICs across domains: a NIC carries both domains'
// traffic, so one 400 Gbps NIC per node is about as fast as four of 100 (the flow level: 137 and
// 139 ms on such a plan; a shared NIC evens out its GPUs' loads, so somewhat faster here, 0.81x).
// Counted from one domain the hot GPU had the whole NIC: 0.47x.
TEST(MoeAnalytical, ANicSharedByTwoDomainsCarriesBoth) {
  const std::vector<std::string> plan = {"cluster.gpus=48",          "cluster.gpus_per_node=4", "parallelism.tp=1",
                                         "parallelism.ep=6",         "model.moe.experts=12",    "training.global_batch=48",
                                         "training.memory_check=false", "cluster.nics_per_node=1",
                                         "cluster.nic_bandwidth=400Gbps"};
  std::vector<std::string> split = plan;
  split[split.size() - 2] = "cluster.nics_per_node=4";
  split.back() = "cluster.nic_bandwidth=100Gbps";
  const Time one = run(plan).breakdown.ep_exposed;
  const Time four = run(split).breakdown.ep_exposed;
  EXPECT_GT(one.as_s(), 0.7 * four.as_s()) << one.as_s() << " s against " << four.as_s() << " s";
}

// The memory check sees the busiest expert owner: under zipf routing the same owner is hot in
// every layer and holds that many times the mean pairs' activations (before 2026-12-05 the mean:
// the 352B plan under zipf showed 53.9 GiB where its hot GPU needs about 71; 68.5 since its logits
// are split over the tp group under sp, also 2026-12-05).
TEST(MoeMemory, TheBusiestOwnerHoldsItsPairsActivations) {
  const engine::TrainingEstimate uniform = run({"training.memory_check=false"});
  const engine::TrainingEstimate skew = run({"training.memory_check=false", "model.moe.routing=zipf"});
  ASSERT_GT(skew.moe_layers.front().imbalance, 1.2);
  EXPECT_GT(skew.memory.activations, uniform.memory.activations);
  EXPECT_EQ(skew.memory.weights, uniform.memory.weights);
}

// The first stage's activations count its own MoE layers: 4 layers, pp 2, vpp 2, one layer per
// chunk puts layers 0 and 2 on stage 0, MoE layers whether every layer or every other one is MoE,
// so the same activations (until 2026-12-06 the model's share of MoE layers: 20% less with every
// other one).
TEST(MoeMemory, TheFirstStageCountsItsOwnMoeLayers) {
  const std::vector<std::string> plan = {"training.memory_check=false", "parallelism.tp=1", "parallelism.pp=2",
                                         "parallelism.vpp=2", "parallelism.ep=8", "training.global_batch=16",
                                         "training.attention_parallel=tp", "model.vocab=128"};
  std::vector<std::string> every = plan, other = plan;
  every.push_back("model.moe.moe_layer_frequency=1");
  other.push_back("model.moe.moe_layer_frequency=2");
  const MemoryEstimate all = moe_memory_per_gpu(load(small_yaml(), every));
  const MemoryEstimate half = moe_memory_per_gpu(load(small_yaml(), other));
  // Equal but for the last stage's logits (a small vocabulary: 2,048 tokens x 128 x 6 bytes), which
  // sit beside stage 1's layers when those are MoE too and it holds as much as stage 0.
  EXPECT_GE(all.activations.as_double(), half.activations.as_double());
  EXPECT_LE(all.activations.as_double() - half.activations.as_double(), 2048.0 * 128 * 6);
  // Plain 1F1B, 8 layers on 2 stages, the first 4 dense and narrow: stage 1 holds one micro-batch
  // of 4 MoE layers (skewed routing), stage 0 two of 4 dense ones, and stage 1 holds more, so the
  // dense layers' width does not move the figure (it set it, the first stage's alone, until
  // 2026-12-06).
  const auto dense_first = [](int ffn) {
    return moe_memory_per_gpu(load(small_yaml(), {"training.memory_check=false", "parallelism.tp=1", "parallelism.pp=2",
                                                  "parallelism.ep=8", "training.global_batch=16", "model.layers=8",
                                                  "model.moe.first_dense_layers=4", "model.moe.expert_ffn_hidden=2048",
                                                  "model.moe.routing=zipf", "model.ffn_hidden=" + std::to_string(ffn),
                                                  "training.attention_parallel=tp"}));
  };
  EXPECT_EQ(dense_first(256).activations, dense_first(512).activations);
  // Interleaved (vpp 2), 8 layers, the first 2 dense: chunk 0 of stage 0 is dense, the other three
  // chunks MoE. With 4 micro-batches stage 0 holds at most 3 of its dense chunk and 2 of its MoE
  // one, or 4 and 1, stage 1 three MoE chunks (tests/unit/workloads/pipeline_schedule_test.cc,
  // PeakHeldFollowsTheScheduleOrder): stage 1 holds more, and the dense layers' width does not
  // move the figure (until 2026-12-06 stage 0's 10 layers at its half share of MoE layers set it).
  const auto interleaved = [](int ffn) {
    return moe_memory_per_gpu(load(small_yaml(), {"training.memory_check=false", "parallelism.tp=1", "parallelism.pp=2",
                                                  "parallelism.vpp=2", "parallelism.ep=8", "training.global_batch=32",
                                                  "model.layers=8", "model.moe.first_dense_layers=2",
                                                  "model.moe.expert_ffn_hidden=2048", "model.moe.routing=zipf",
                                                  "model.ffn_hidden=" + std::to_string(ffn), "training.attention_parallel=tp"}));
  };
  EXPECT_EQ(interleaved(256).activations, interleaved(512).activations);
}

// Skewed routing with a shared NIC: the hot GPU uses the NIC its neighbours leave idle, as the
// flow level finds (one 200 Gbps NIC per 8 H100s, 512 GPUs, zipf routing: 20.67 s analytical
// against the flow level's 13.52 s before 2026-12-05; now 13.27 s). Against 8 NICs of 25 Gbps,
// the same aggregate, the single NIC is then faster, as at the flow level (22.54 s).
TEST(MoeAnalytical, HotGpuUsesTheSharedNic) {
  const std::vector<std::string> plan = {"cluster.gpus=64",          "parallelism.tp=1",
                                         "parallelism.ep=16",        "model.moe.experts=16",
                                         "model.moe.routing=zipf",   "training.global_batch=64",
                                         "training.memory_check=false", "cluster.nic_bandwidth=200Gbps",
                                         "cluster.nics_per_node=1"};
  std::vector<std::string> split = plan;
  split.back() = "cluster.nics_per_node=8";
  split.push_back("cluster.nic_bandwidth=25Gbps");
  const engine::TrainingEstimate one = run(plan);
  const engine::TrainingEstimate eight = run(split);
  EXPECT_LT(one.breakdown.ep_exposed, eight.breakdown.ep_exposed);
}

TEST(MoeAnalytical, ChunkedOverlapNeverSlower) {
  for (const char* routing : {"uniform", "zipf"}) {
    for (int seed = 0; seed < 3; ++seed) {
      for (const char* ep : {"8", "2"}) {
        const std::vector<std::string> base = {std::string("model.moe.routing=") + routing,
                                               "model.moe.seed=" + std::to_string(seed), std::string("parallelism.ep=") + ep};
        const Time none = run(base).iteration;
        for (int chunks = 2; chunks <= 8; ++chunks) {
          std::vector<std::string> o = base;
          o.push_back("training.overlap.a2a_chunks=" + std::to_string(chunks));
          EXPECT_LE(run(o).iteration, none) << routing << " seed " << seed << " ep " << ep << " chunks " << chunks;
        }
      }
    }
  }
}

TEST(MoeAnalytical, DispatchAndCombineShareTheNetworkWhenChunked) {
  // One chunk's dispatch d = 1, experts e = 1, combine k = 1 (ms): the network carries d + k per
  // chunk, so 4 chunks take 3 + 3 x max(1 + 1, 1) = 9, not 3 + 3 x 1; with one chunk, d + e + k.
  EXPECT_EQ(chunk_pipeline_time(Time::ms(1), Time::ms(1), Time::ms(1), 4), Time::ms(9));
  EXPECT_EQ(chunk_pipeline_time(Time::ms(1), Time::ms(1), Time::ms(1), 1), Time::ms(3));
  // Expert-bound: the experts pace it, 1 + 4 + 1 + 3 x 4 = 18.
  EXPECT_EQ(chunk_pipeline_time(Time::ms(1), Time::ms(4), Time::ms(1), 4), Time::ms(18));
  // Never slower than one chunk for the same work split c ways.
  for (int c = 1; c <= 8; ++c) {
    EXPECT_LE(chunk_pipeline_time((1.0 / c) * Time::ms(5), (1.0 / c) * Time::ms(2), (1.0 / c) * Time::ms(5), c),
              Time::ms(12) + Time::ps(c));
  }
}

TEST(MoeAnalytical, ChunksPriceTheCombineAtItsOwnBandwidth) {
  // One hot expert on each of 2 nodes, ep 16: the dispatch to it arrives through its one NIC, the
  // combine leaves over every rail (PXN). Chunked 4 ways, each direction at its own rate, as the
  // flow level runs it: 2.166 s at both levels (the analytical level priced the combine at the
  // dispatch's rate until 2026-12-06: 2.201 s, 5.77 ms exposed per layer where 3.58 ms is right).
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100-256.yaml";
  ScenarioConfig cfg = load_scenario(
      scenario, {"cluster.gpus=16", "parallelism.pp=1", "parallelism.tp=1", "model.layers=4", "training.global_batch=64",
                 "model.moe.experts=16", "parallelism.ep=16", "model.moe.routing=loads",
                 "model.moe.loads=[1,0,0,0,0,0,0,0,1,0,0,0,0,0,0,0]", "training.overlap.a2a_chunks=4"});
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  const Time analytical = engine::estimate_training(cfg, h100).iteration;
  cfg.network.fidelity = Fidelity::kFlow;
  engine::FlowTrainingOptions quick;
  quick.use_simgrid = false;
  const Time flow = engine::simulate_training(cfg, h100, quick).estimate.iteration;
  EXPECT_NEAR(analytical / flow, 1.0, 0.003) << analytical.as_s() << " s against " << flow.as_s() << " s";
}

TEST(MoeAnalytical, AHotReceiversNicIsNotAlsoSlowedByTheUniformLinkContention) {
  // ep 16 over the two nodes behind 10 Gbps switch links, sprayed: a uniform all-to-all's routed
  // figure is about 8.75 (fabric_contention's test). With one expert of 16 weighted 40, its
  // owner's NIC carries several times the mean; sprayed, the links carry about what they carry at
  // uniform routing, so the all-to-all ends when the slower of the two does. Charging the hot
  // NIC's time the uniform links' 8.75x as well (before 2026-11-22) gave 3.76 ms against 1.31 ms
  // uniform (2.9x); the flow level agrees with routing the layer's own flows (Mixtral 32 experts,
  // zipf, 100 Gbps links: 6.024 s analytical, 6.028 s flow, 6.774 s with the product).
  const std::vector<std::string> ep16{"model.moe.experts=16", "parallelism.ep=16", "network.fabric_bandwidth=10Gbps",
                                      "network.routing=spray"};
  std::vector<std::string> hot = ep16;
  hot.push_back("model.moe.routing=loads");
  hot.push_back("model.moe.loads=[40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]");
  const Time uniform_a2a = run(ep16).moe_layers.front().a2a;
  const engine::TrainingEstimate skew = run(hot);
  EXPECT_GT(skew.moe_layers.front().imbalance, 5.0);
  const Time hot_a2a = skew.moe_layers.front().a2a;
  EXPECT_GT(hot_a2a, uniform_a2a);
  // 3.15x (1.66 against 0.53 ms); the two charged together would be about 5.7x. (1.87x before
  // 2026-12-06, when each of the four all-to-alls also paid 15 network latencies, 0.2 ms, not one.)
  EXPECT_LT(hot_a2a, 4.0 * uniform_a2a);
}

// Through PXN the combine relays on the experts' side: a hot expert's outputs leave its node over
// every rail, where the dispatch to it arrives through its own NIC, so with ep 16 over two nodes
// and one expert of 16 weighted 40 the combine is the faster; without PXN they are the same
// all-to-all reversed. The NICs carry the same bytes between nodes either way, the hot expert's
// outputs spread over every rail with PXN: its busiest NIC carries less of the combine.
TEST(MoeAnalytical, ThroughPxnTheCombineOfAHotExpertLeavesOverEveryRail) {
  std::vector<std::string> hot{"model.moe.experts=16", "parallelism.ep=16", "model.moe.routing=loads",
                               "model.moe.loads=[40, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"};
  const calib::HardwareProfile& hw = h800();
  const auto layer = [&](const std::vector<std::string>& o) {
    const ScenarioConfig cfg = load(small_yaml(), o);
    return moe_layer_cost(cfg, hw, MoeLinks(training_links(cfg, hw)), 0);
  };
  const MoeLayerCost pxn = layer(hot);
  hot.push_back("network.pxn=false");
  const MoeLayerCost direct = layer(hot);
  EXPECT_LT(pxn.combine, 0.8 * pxn.dispatch);
  EXPECT_EQ(direct.combine, direct.dispatch);
  EXPECT_FALSE(pxn.combine_flows.empty());
  EXPECT_TRUE(direct.combine_flows.empty());
  EXPECT_GT(pxn.dispatch_nic, Time::zero());
  EXPECT_EQ(direct.combine_nic, direct.dispatch_nic);
  EXPECT_LT(pxn.combine_nic, direct.combine_nic);
}

// Selective recomputation re-runs an MoE layer's attention core as a dense layer's: its matmuls
// and, unfused, its softmax and dropout over the score matrix (the matmuls alone until
// 2026-12-06, where dense layers re-ran all of it: Mixtral unfused, 4.141 s with or without it).
TEST(MoeAnalytical, SelectiveRecomputationRerunsTheSoftmaxAndDropout) {
  const calib::HardwareProfile& hw = h800();
  const auto attention_bwd = [&](const char* recompute, const char* flash) {
    const ScenarioConfig cfg =
        load(small_yaml(), {std::string("training.recompute=") + recompute, std::string("training.flash_attention=") + flash});
    return moe_layer_cost(cfg, hw, MoeLinks(training_links(cfg, hw)), 0).attention_bwd;
  };
  const Time unfused = attention_bwd("selective", "false") - attention_bwd("none", "false");
  const Time fused = attention_bwd("selective", "true") - attention_bwd("none", "true");
  const ScenarioConfig unfused_cfg = load(small_yaml(), {"training.flash_attention=false"});
  ASSERT_GT(work::attention_score_elementwise_bytes(unfused_cfg).n, 0);
  EXPECT_GT(unfused.as_s(), fused.as_s());
  // Beyond the matmuls: at least the score kernels' bytes at the HBM rate.
  EXPECT_GT(unfused.as_s(), calib::memory_time(work::attention_score_elementwise_bytes(unfused_cfg), hw).as_s());
}

TEST(MoeAnalytical, DataParallelRingsTakeTheirRanksPerNodeFromThePlacement) {
  // small_yaml: 16 GPUs on 2 nodes, tp 8, ep 8, pp 1, attention tp: the dense replicas (dp 2) sit
  // 8 apart, one per node. With tp 1 (dp 16): 8 per node. With pp 2 (dp 8) placed tp-cp-dp-pp,
  // stage 0 is the first node: 8; placed tp-cp-pp-dp, stage 0's GPUs alternate with stage 1's:
  // 4 per node (gpus_per_node / (tp cp) said 8 for all three).
  const calib::HardwareProfile& hw = h800();
  const auto per_node = [&](const std::vector<std::string>& o) {
    const ScenarioConfig cfg = load(small_yaml(), o);
    const TrainingLinks l = training_links(cfg, hw);
    return moe_dp_times(cfg, l, l).dense_group.ranks_per_node;
  };
  EXPECT_EQ(per_node({"training.attention_parallel=tp"}), 1);
  const std::vector<std::string> tp1{"training.attention_parallel=tp", "parallelism.tp=1", "parallelism.ep=2",
                                     "training.global_batch=16"};
  EXPECT_EQ(per_node(tp1), 8);
  std::vector<std::string> pp2 = tp1;
  pp2.push_back("parallelism.pp=2");
  pp2.push_back("parallelism.placement=tp-cp-pp-dp");
  EXPECT_EQ(per_node(pp2), 4);
  pp2.back() = "parallelism.placement=tp-cp-dp-pp";
  EXPECT_EQ(per_node(pp2), 8);
  // 24 GPUs over pp 4: 6 per stage, so stage 0 sits inside node 0 while stage 1 straddles nodes
  // 0 and 1 (2 + 4 GPUs): its ring runs member to member, one NIC share. Every stage counts
  // (stage 0 alone said 6, NVLink only: 10x fast against the flow level on such plans).
  std::vector<std::string> pp4 = tp1;
  pp4.insert(pp4.end(), {"cluster.gpus=24", "parallelism.pp=4", "training.global_batch=24"});
  EXPECT_EQ(per_node(pp4), 1);
}

TEST(MoeAnalytical, LowerPrecisionCommunicationHelps) {
  const engine::TrainingEstimate def = run({"training.fp32_grad_reduce=true"});
  const engine::TrainingEstimate bf16 = run({"training.comm_precision=bf16"});
  const engine::TrainingEstimate fp8 = run({"training.comm_precision=fp8"});
  EXPECT_EQ(fp8.moe_layers.front().a2a_bytes_max_gpu.n * 2, def.moe_layers.front().a2a_bytes_max_gpu.n);
  EXPECT_LE(bf16.iteration, def.iteration);
  EXPECT_LT(fp8.iteration, bf16.iteration);
}

TEST(MoeReport, ResultsNameActiveFlopsAndLayers) {
  const ScenarioConfig cfg = load(small_yaml());
  const engine::TrainingEstimate e = engine::estimate_training(cfg, h800());
  const std::string json = report::training_results(cfg, h800(), e).dump();
  EXPECT_NE(json.find("\"ep_exposed_s\""), std::string::npos);
  EXPECT_NE(json.find("\"a2a_exposed_s\""), std::string::npos);
  EXPECT_NE(json.find("active parameters"), std::string::npos);
  const std::string text = report::training_summary(cfg, h800(), e);
  EXPECT_NE(text.find("imbalance"), std::string::npos);
  EXPECT_NE(text.find("active parameters only"), std::string::npos);
  // ep 16 across the two nodes behind 10 Gbps switch links: the all-to-all's routed slowdown
  // (about 8.75, fabric_contention's test) is reported.
  const ScenarioConfig across =
      load(small_yaml(), {"model.moe.experts=16", "parallelism.ep=16", "network.fabric_bandwidth=10Gbps"});
  const engine::TrainingEstimate a = engine::estimate_training(across, h800());
  const std::string across_json = report::training_results(across, h800(), a).dump();
  EXPECT_NE(across_json.find("\"expert_all_to_all_slowdown_max\":"), std::string::npos) << across_json;
  EXPECT_NE(report::training_summary(across, h800(), a).find("expert all-to-alls up to"), std::string::npos);
  EXPECT_EQ(json.find("expert_all_to_all_slowdown_max"), std::string::npos);  // ep 8 inside each node
}

TEST(MoeReport, FlowRankGroupsBreakdownsAddUpToTheIteration) {
  // Each reported rank group's breakdown is its whole timeline; with MoE it has the all-to-all's
  // ep_exposed_s too (before 2026-12-04 it was left out, so the parts fell short by it).
  const ScenarioConfig cfg = load(small_yaml(), {"network.fidelity=flow", "parallelism.pp=2", "cluster.gpus=32"});
  engine::FlowTrainingOptions o;
  o.use_simgrid = false;
  const engine::FlowTrainingResult f = engine::simulate_training(cfg, h800(), o);
  ASSERT_GT(f.estimate.breakdown.ep_exposed, Time::zero());
  std::map<std::string, double> sums;
  double iteration = 0;
  report::flow_training_results(cfg, h800(), f).for_each_number([&](const std::string& path, double v) {
    const size_t cut = path.find("].breakdown.");
    if (path.rfind("rank_groups[", 0) == 0 && cut != std::string::npos) sums[path.substr(0, cut)] += v;
    if (path == "iteration_time_s") iteration = v;
  });
  ASSERT_EQ(sums.size(), 2u);
  for (const auto& [group, sum] : sums) EXPECT_NEAR(sum, iteration, 1e-9 * iteration) << group;
}

TEST(MoeReport, FlowResultsHaveNoNegativeTimes) {
  // One layer, 8 experts, the all-to-all in 4 chunks: the chunks' compute pieces sum on the clock
  // a picosecond off the expert compute, and a2a_exposed_s came out -1e-12 (before 2026-12-05,
  // 10 of 60 random MoE flow runs).
  const ScenarioConfig cfg = load(
      "cluster: {gpu: H800-SXM, gpus: 8, nics_per_node: 2}\n"
      "network: {fidelity: flow}\n"
      "model: {layers: 1, hidden: 4096, heads: 32, seq_len: 2048, vocab: 65536, moe: {experts: 8, top_k: 2}}\n"
      "training: {global_batch: 8, overlap: {a2a_chunks: 4}}\n");
  engine::FlowTrainingOptions o;
  o.use_simgrid = false;
  const engine::FlowTrainingResult f = engine::simulate_training(cfg, h800(), o);
  report::flow_training_results(cfg, h800(), f).for_each_number([&](const std::string& path, double v) {
    if (path.size() > 2 && path.compare(path.size() - 2, 2, "_s") == 0) {
      EXPECT_GE(v, 0.0) << path;
    }
  });
}

TEST(MoeReport, DroppedPairsAreReportedAndTheMfuSaysItCountsThem) {
  // Dropless: nothing dropped, nothing said. Capacity factor 1 with skewed routing drops the hot
  // experts' excess: the layers report the share, and the summary says MFU still counts it (the
  // nominal model FLOPs; 25% MFU against 10.5% dropless on a 64-GPU plan before 2026-12-04, unsaid).
  const engine::TrainingEstimate dropless = run({"model.moe.routing=zipf", "model.moe.zipf_s=2"});
  EXPECT_EQ(dropless.moe_layers.front().dropped_fraction, 0.0);
  const ScenarioConfig capped = load(small_yaml(), {"model.moe.routing=zipf", "model.moe.zipf_s=2", "model.moe.capacity_factor=1"});
  const engine::TrainingEstimate e = engine::estimate_training(capped, h800());
  EXPECT_GT(e.moe_layers.front().dropped_fraction, 0.1);
  EXPECT_LT(e.moe_layers.front().dropped_fraction, 1.0);
  EXPECT_NE(report::training_results(capped, h800(), e).dump().find("\"dropped_pairs_fraction\""), std::string::npos);
  EXPECT_NE(report::training_summary(capped, h800(), e).find("count every token's expert FLOPs, dropped or not"),
            std::string::npos);
  const ScenarioConfig uncapped = load(small_yaml(), {"model.moe.routing=zipf", "model.moe.zipf_s=2"});
  EXPECT_EQ(report::training_summary(uncapped, h800(), dropless).find("dropped or not"), std::string::npos);
}

TEST(MoeReport, DenseResultsHaveNoMoeKeys) {
  const ScenarioConfig cfg = load(small_yaml(), {"model.moe=null", "parallelism.ep=1", "training.attention_parallel=tp"});
  const std::string json = report::training_results(cfg, h800(), engine::estimate_training(cfg, h800())).dump();
  EXPECT_EQ(json.find("ep_exposed"), std::string::npos);
  EXPECT_EQ(json.find("\"moe\": {"), std::string::npos);  // ("scenario": "moe", the file's name, stays)
}

// An MoE run's all-to-alls (category "ep") run on the TP stream: its trace lane is named
// "tp, ep" (it read "tp" until 2026-12-06).
TEST(MoeFlow, TheTraceNamesTheLaneTheAllToAllsRunOn) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100-256.yaml";
  ScenarioConfig cfg = load_scenario(scenario, {"cluster.gpus=16", "parallelism.pp=1", "parallelism.tp=1", "model.layers=2",
                                                "training.global_batch=16", "parallelism.ep=8"});
  cfg.network.fidelity = Fidelity::kFlow;
  engine::FlowTrainingOptions quick;
  quick.use_simgrid = false;
  const std::string trace = report::write_trace_json(engine::simulate_training(cfg, calib::load_hardware_profile("H100-SXM"), quick));
  EXPECT_NE(trace.find("\"name\":\"tp, ep\""), std::string::npos);
  EXPECT_NE(trace.find("\"cat\":\"ep\""), std::string::npos);
}

// A plan that does not fit because a hot expert's tokens land on one GPU says so, and names
// the knob that caps them (until 2026-12-06 only the plan's: tp/pp, ZeRO, recomputation).
TEST(MoeMemory, AMisfitUnderSkewedRoutingNamesTheCapacityFactor) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100-256.yaml";
  const ScenarioConfig cfg =
      load_scenario(scenario, {"model.moe.experts=32", "parallelism.ep=32", "model.moe.routing=zipf"});
  const std::vector<InputError> errors = engine::memory_misfit(cfg, calib::load_hardware_profile("H100-SXM"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("model.moe.capacity_factor"), std::string::npos) << errors[0].message;
}

// Experts across nodes on 2 NICs a node: the all-to-alls hold the NIC the gradient reductions
// overlap on, so more experts a token cost more time (2026-12-06 QA: the step read 1.1449 s at
// top_k 1, 2 and 4, the reductions' exposure falling by exactly what the all-to-alls added, where
// the flow level grows 1.23 -> 1.51 s; now 1.206 -> 1.389 s).
TEST(MoeAnalytical, AllToAllsAcrossNodesShareTheNicWithTheReductions) {
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/mixtral-8x7b-h100-256.yaml";
  std::vector<double> steps;
  for (const char* k : {"1", "2", "4"}) {
    const ScenarioConfig cfg = load_scenario(
        scenario, {"cluster.gpus=64", "parallelism.tp=1", "parallelism.pp=1", "model.layers=16", "model.moe.experts=16",
                   "parallelism.ep=16", "cluster.nics_per_node=2", "training.global_batch=64",
                   "training.overlap.a2a_chunks=4", std::string("model.moe.top_k=") + k});
    steps.push_back(engine::estimate_training(cfg, calib::load_hardware_profile(cfg.cluster.gpu)).iteration.as_s());
  }
  EXPECT_GT(steps[1], steps[0] * 1.03);
  EXPECT_GT(steps[2], steps[1] * 1.05);
}

}  // namespace
}  // namespace clustersim::work
