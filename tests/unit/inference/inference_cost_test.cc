// SPDX-License-Identifier: Apache-2.0
// Serving step costs: the roofline per GEMM, the KV arithmetic, the colocated step and the
// ping-pong pipeline of attention/FFN disaggregation.
#include "sim/engine/inference_cost.h"

#include <gtest/gtest.h>

#include <utility>

#include <set>
#include <vector>

#include "calibration/compute_cost.h"
#include "sim/engine/inference_sim.h"
#include "sim/engine/inference_sweep.h"
#include "sim/network/fabric_routes.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"
#include "tests/unit/inference/inference_test_util.h"

namespace clustersim::engine {
namespace {

TEST(ServingModel, KvBytesPerToken) {
  const ServingModel m = serving_model(testing::serving());
  // 4 layers x 2 (K, V) x 4 KV heads x 64 dims x 2 bytes = 4096.
  EXPECT_EQ(kv_bytes_per_token(m).n, 4096);
  // TP 2: 2 heads each; TP 8 > 4 KV heads: one (replicated) head each.
  EXPECT_EQ(kv_bytes_per_token(m, 2).n, 2048);
  EXPECT_EQ(kv_bytes_per_token(m, 8).n, 1024);
}

// model.head_dim: Qwen3-style heads wider than hidden / heads. 16 heads of 128 on hidden 1,024:
// Q and O are 1,024 x 2,048 each, K and V 1,024 x 512; the KV cache holds 128 per head.
TEST(ServingModel, HeadDimWiderThanHiddenOverHeads) {
  const ServingModel m = serving_model(testing::serving({"model.head_dim=128"}));
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_DOUBLE_EQ(attention_params_per_layer(m), 1024.0 * 2048 * 2 + 2.0 * 1024 * 512 + 2 * 1024);
  EXPECT_EQ(kv_bytes_per_token(m).n, 2 * 4096);  // twice the 64-wide heads' (KvBytesPerToken)
  // Without it, hidden must divide into the heads; with it, it need not.
  EXPECT_NO_THROW(testing::serving({"model.hidden=1000", "model.head_dim=64"}));
}

TEST(ServingModel, ParameterCount) {
  const ServingModel m = serving_model(testing::serving());
  // attention: 1024*1024 + 2*1024*256 + 1024*1024 + 2*1024 = 2,623,488 per layer
  EXPECT_DOUBLE_EQ(attention_params_per_layer(m), 2'623'488.0);
  // one SwiGLU expert of width 1024: 3 x 1024 x 1024
  EXPECT_DOUBLE_EQ(mlp_params(m, 1024), 3.0 * 1024 * 1024);
}

TEST(GemmRoofline, DecodeGemmIsMemoryBound) {
  const calib::HardwareProfile hw = calib::load_hardware_profile("H100-SXM");
  // 8 tokens x (8192 x 8192) weights: 134 MB of weights dominate; time = launch + bytes / (HBM x eff).
  const Time t = gemm_roofline(8, 8192, 8192, 2.0, Precision::kBf16, hw);
  const double bytes = 2.0 * (8192.0 * 8192 + 8.0 * 8192 * 2);
  EXPECT_EQ(t, calib::memory_time(bytes_of(bytes), hw));
  // A large prefill GEMM is compute-bound: at least the FLOPs at the profile's best efficiency.
  const Time big = gemm_roofline(8192, 8192, 8192, 2.0, Precision::kBf16, hw);
  EXPECT_GE(big.as_s(), 2.0 * 8192.0 * 8192 * 8192 / (hw.bf16.per_s * hw.eff.gemm_max));
  EXPECT_GT(big, calib::memory_time(bytes_of(2.0 * 3 * 8192.0 * 8192), hw));
}

// A decode step's skinny GEMM reads its weights in about the time they take to stream: more TP,
// fewer weights per GPU, never slower. Before 2026-12-04 the large GEMM's 128-row tile and 512-deep
// K slices held one row of a TP-8 output projection (1 x 6,144 x 768) at 16 us against 7 us of
// weight reads, slower than TP 4's (1 x 6,144 x 1,536).
TEST(GemmRoofline, SkinnyGemmsAreMemoryBoundAndShrinkWithTp) {
  const calib::HardwareProfile hw = calib::load_hardware_profile("H800-SXM");
  for (int64_t rows : {1, 8, 32}) {
    Time previous = Time::max();
    for (int64_t tp : {1, 2, 4, 8}) {
      const int64_t k = 6144 / tp;
      const Time t = gemm_roofline(rows, 6144, k, 2.0, Precision::kBf16, hw);
      const Time reads = calib::memory_time(bytes_of(2.0 * (6144.0 * k + rows * k + rows * 6144.0)), hw);
      EXPECT_EQ(t, reads) << rows << " rows, tp " << tp;
      EXPECT_LT(t, previous) << rows << " rows, tp " << tp;
      previous = t;
    }
  }
}

TEST(GemmRoofline, SplitKNeverSlowerThanOneSlice) {
  const calib::HardwareProfile hw = calib::load_hardware_profile("H100-SXM");
  for (int64_t m : {64, 512, 4096}) {
    EXPECT_LE(gemm_roofline(m, 1024, 6144, 2.0, Precision::kBf16, hw),
              max(calib::gemm_time(m, 1024, 6144, Precision::kBf16, hw),
                  calib::memory_time(bytes_of(2.0 * (1024.0 * 6144 + m * 6144.0 + m * 1024.0)), hw)));
  }
}

// No rows, no time (a division by zero until 2026-12-06).
TEST(GemmRoofline, NoRowsNoTime) {
  const calib::HardwareProfile hw = calib::load_hardware_profile("H800-SXM");
  EXPECT_EQ(split_k_gemm_time(0, 16384, 6144, Precision::kBf16, hw), Time::zero());
  EXPECT_EQ(gemm_roofline(0, 16384, 6144, 2.0, Precision::kBf16, hw), Time::zero());
}

// The colocated pool of tiny-serving (2 instances of ep 8, tp 2 attention replicas) at GPU 0.
PoolPlan tiny_pool(const ScenarioConfig& cfg) {
  PoolPlan p;
  p.hw = calib::load_hardware_profile("H100-SXM");
  p.gpus = 16;
  p.tp = cfg.inference->colocated->tp;
  p.ep = cfg.inference->colocated->ep;
  return p;
}

// PXN relays an instance's sends only through its own GPUs: a pool of one ep-16 instance starting
// in the middle of a node (GPUs 4 to 19) never sends through GPUs 0 to 3 or 20 on, other pools'.
TEST(ServingLinks, AnExpertAllToAllRelaysOnlyThroughItsOwnInstance) {
  const ScenarioConfig cfg = testing::serving();
  PoolPlan p = tiny_pool(cfg);
  p.first_gpu = 4;
  p.ep = 16;
  ServingLinks l;
  l.gpus_per_node = 8;
  l.nics_per_node = 8;
  const std::vector<coll::FlowSpec> flows = pool_ep_flows(p, Bytes{1 << 20}, l);
  ASSERT_FALSE(flows.empty());
  double total = 0;
  for (const coll::FlowSpec& f : flows) {
    EXPECT_TRUE(f.src >= 4 && f.src < 20 && f.dst >= 4 && f.dst < 20) << f.src << " -> " << f.dst;
    total += f.bytes.as_double();
  }
  l.pxn = false;
  double direct = 0;
  for (const coll::FlowSpec& f : pool_ep_flows(p, Bytes{1 << 20}, l)) direct += f.bytes.as_double();
  EXPECT_GT(total, direct);  // some sends do go through a relay of the instance
}

TEST(ServingLinks, OnlyTrafficThatLeavesANodeMeetsTheFabric) {
  // Instances of 8 GPUs on 8-GPU nodes: neither a 3:1 ToR nor 10 Gbps switch links slow them.
  for (const char* o : {"network.tor_oversubscription=3", "network.fabric_bandwidth=10Gbps"}) {
    const ScenarioConfig cfg = testing::serving({o, "network.switch_radix=16"});
    const ServingLinks l = serving_links(cfg, tiny_pool(cfg));
    EXPECT_DOUBLE_EQ(l.tp_slowdown, 1.0) << o;
    EXPECT_DOUBLE_EQ(l.ep_slowdown, 1.0) << o;
  }
}

TEST(ServingLinks, ExpertAllToAllAcrossNodesOnAHandComputedCase) {
  // One instance of ep 16 over 2 nodes of 8 GPUs, rail-optimised radix-16 ToRs (8 down, 8 up; both
  // servers under each rail's ToR), 400 Gbps NICs, 10 Gbps switch-to-switch links (1/40 NIC).
  // Each GPU sends s/16 to each of 15 others: 8 to the other node (s/2 through its NIC), 7 of
  // them on other rails, so they leave the rail's ToR. Per ToR: 2 GPUs x 7 x s/16 = 7s/8 up
  // through 8 links of 1/40 NIC = 0.2 NIC:
  //   block bound  7/8 / (0.2 x 1/2) = 8.75
  //   per-flow cap (ECMP, 1 QP): largest leaving flow s/16 over the busiest NIC's s/2, x 40 = 5
  // Without PXN: with it (NCCL's default) those flows cross NVLink to the destination's rail first
  // and the bytes between the nodes stay under each rail's ToR, not slowed at all.
  const ScenarioConfig rails = testing::serving(
      {"network.switch_radix=16", "network.fabric_bandwidth=10Gbps", "inference.pools.colocated.ep=16"});
  EXPECT_DOUBLE_EQ(serving_links(rails, tiny_pool(rails)).ep_slowdown, 1.0);
  const ScenarioConfig cfg = testing::serving({"network.switch_radix=16", "network.fabric_bandwidth=10Gbps",
                                               "inference.pools.colocated.ep=16", "network.pxn=false"});
  const ServingLinks l = serving_links(cfg, tiny_pool(cfg));
  EXPECT_NEAR(l.ep_slowdown, 8.75, 1e-9);
  EXPECT_DOUBLE_EQ(l.tp_slowdown, 1.0);  // tp 2 inside a node
  EXPECT_NEAR(group_links_ep(16, l).nic_per_gpu.bytes_per_s, l.nic_per_gpu.bytes_per_s / 8.75, 1e-3);
  EXPECT_DOUBLE_EQ(group_links(2, l).nic_per_gpu.bytes_per_s, l.nic_per_gpu.bytes_per_s);
  // Sprayed on the routes: the same 8.75 (every uplink carries 7s/64); ECMP hashing of the 14
  // flows per ToR over 8 uplinks collides, so the routed figure is at least the block bound.
  for (const char* routing : {"spray", "ecmp"}) {
    const ScenarioConfig r = testing::serving({"network.switch_radix=16", "network.fabric_bandwidth=10Gbps",
                                               "inference.pools.colocated.ep=16", "network.pxn=false",
                                               std::string("network.routing=") + routing});
    ServingSetup setup = make_serving_setup(r);
    const topo::Fabric fabric = topo::build_fabric(r.cluster, r.network, r.file);
    const net::FabricRoutes routes(fabric, topo::routing_options(r.network));
    route_pool_links(setup, fabric, routes);
    if (std::string(routing) == "spray") {
      EXPECT_NEAR(setup.links[0].ep_slowdown, 8.75, 1e-9);
    } else {
      EXPECT_GE(setup.links[0].ep_slowdown, 8.75 - 1e-9);
    }
  }
}

TEST(ServingLinks, AGroupStraddlingTwoNodesUsesTheirNics) {
  // A pool placed from GPU 12: its TP-8 groups (and instances of 8) straddle two nodes 4 + 4, so
  // their collectives cross the NICs and the fabric; placed from GPU 0 they stay on NVLink.
  const ScenarioConfig cfg = testing::serving({"inference.pools.colocated.tp=8", "network.fabric_bandwidth=10Gbps",
                                               "network.switch_radix=16", "cluster.gpus=32"});
  PoolPlan p = tiny_pool(cfg);
  const ServingLinks aligned = serving_links(cfg, p);
  EXPECT_EQ(group_links(8, aligned).nodes(), 1);
  p.first_gpu = 12;
  const ServingLinks straddling = serving_links(cfg, p);
  EXPECT_EQ(straddling.tp_ranks_per_node, 4);
  EXPECT_EQ(group_links(8, straddling).nodes(), 2);
  EXPECT_GT(straddling.tp_slowdown, 1.0);
  EXPECT_GT(coll::collective_time(coll::CollectiveOp::kAllReduce, Bytes{1 << 24}, group_links(8, straddling)),
            coll::collective_time(coll::CollectiveOp::kAllReduce, Bytes{1 << 24}, group_links(8, aligned)));
}

TEST(DecodeSweep, PointsArePricedOnTheRoutesLikeARun) {
  // tiny-serving's model as attention/FFN, 8 + 8 GPUs behind ToR-per-server radix-16 switches
  // with one queue pair: ECMP hashes the 64 M2N flows of each direction onto 8 uplinks unevenly
  // (the M2N probe test's case). On the routes the point pays that collision, as run_serving's
  // analytical level does; the block model of the same flows (no routes) cannot see it.
  const ScenarioConfig cfg = testing::serving({"network.wiring=tor_per_server", "network.switch_radix=16",
                                               "inference.mode=attention_ffn", "inference.micro_batches=2",
                                               "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"});
  topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
  const SweepFabric on{&fabric, &routes, cfg.cluster.gpus};
  const DecodePoint routed = afd_decode_point(cfg, 2, 8, 8, 64, 2, on);
  const DecodePoint block = afd_decode_point(cfg, 2, 8, 8, 64, 2);
  ASSERT_TRUE(routed.fits);
  EXPECT_GT(routed.tpot, block.tpot);
  // The factor is run_serving's: the same pools' static bound on the same routes.
  ServingSetup setup = make_serving_setup(cfg);
  EXPECT_GT(m2n_static_factor(setup, fabric, routes), 1.05);
  // A point larger than the fabric falls back to the block model.
  const SweepFabric small{&fabric, &routes, 8};
  EXPECT_EQ(afd_decode_point(cfg, 2, 8, 8, 64, 2, small).tpot, block.tpot);
}

// A point's pools sharing a node exchange over NVLink at their own profile's speed (H800-SXM: 200
// GB/s), as run_serving prices them; before 2026-12-05 the sweep's fabric ran H100's 450 GB/s.
TEST(DecodeSweep, PointsRunNvlinkAtTheirPoolsProfiles) {
  const std::vector<std::string> o = {"cluster.gpu=H800-SXM", "cluster.gpus=8", "inference.mode=attention_ffn",
                                      "inference.micro_batches=2",
                                      "inference.pools={attention: {gpus: 4, tp: 2}, expert: {gpus: 4}}"};
  auto tpot = [](const ScenarioConfig& cfg) {
    topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);  // NVLink 450 GB/s as built
    const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
    const DecodePoint d = afd_decode_point(cfg, 2, 4, 4, 64, 2, SweepFabric{&fabric, &routes, cfg.cluster.gpus});
    EXPECT_TRUE(d.fits);
    return d.tpot;
  };
  std::vector<std::string> pinned = o, fast = o;
  pinned.push_back("network.nvlink_bandwidth=200GBps");
  fast.push_back("network.nvlink_bandwidth=450GBps");
  const Time h800 = tpot(testing::serving(o));
  EXPECT_EQ(h800, tpot(testing::serving(pinned)));
  EXPECT_GT(h800, tpot(testing::serving(fast)));
}

TEST(ServingLinks, AFabricThePlannerCannotBuildKeepsEveryTiersRatio) {
  // Radix 6 cannot split 8 NICs per server: 3:1 x (400 / 100 Gbps).
  const ScenarioConfig cfg = testing::serving({"network.switch_radix=6", "network.tor_oversubscription=3",
                                               "network.fabric_bandwidth=100Gbps"});
  const std::vector<coll::FlowSpec> across{{0, 8, Bytes{1 << 20}, true}};
  EXPECT_DOUBLE_EQ(serving_fabric_slowdown(cfg, across), 12.0);
  // Traffic that never leaves a node meets none of it.
  EXPECT_DOUBLE_EQ(serving_fabric_slowdown(cfg, {}), 1.0);
  const std::vector<coll::FlowSpec> inside{{0, 1, Bytes{1 << 20}, false}};
  EXPECT_DOUBLE_EQ(serving_fabric_slowdown(cfg, inside), 1.0);
}

// A colocated H100 pool: tp x ep GPUs per instance, `replicas` data-parallel attention replicas.
PoolPlan h100_pool(int tp, int ep, int replicas) {
  PoolPlan p;
  p.hw = calib::load_hardware_profile("H100-SXM");
  p.tp = tp;
  p.ep = ep;
  p.attention_replicas = replicas;
  return p;
}

TEST(StepCost, ColocatedPartsAddUpAndGrowWithBatch) {
  const ScenarioConfig cfg = testing::serving();
  const ServingModel m = serving_model(cfg);
  const PoolPlan p = h100_pool(2, 8, 4);
  const ServingLinks l = serving_links(cfg, p);
  Time last = Time::zero();
  for (int batch : {1, 16, 256, 4096}) {
    StepLoad load;
    for (int i = 0; i < batch; ++i) load.add_decode(1000);
    const StepTiming s = colocated_step(m, p, l, load);
    EXPECT_EQ(s.attention + s.ffn + s.communication + s.idle, s.total);
    EXPECT_EQ(s.idle, Time::zero());
    EXPECT_GE(s.total, last) << batch;
    last = s.total;
  }
  EXPECT_EQ(colocated_step(m, p, l, StepLoad{}).total, Time::zero());
}

// inference.weight_precision: fp8 (ModelOpt's W8A8 as TensorRT-LLM serves it) stores the linear
// layers at 1 byte a parameter and runs their GEMMs at the fp8 peak; embeddings, LM head and
// routers stay bf16, as do the hidden states on the wire.
TEST(ServingModel, Fp8WeightsHalveTheLinearLayersOnly) {
  const ScenarioConfig bf16 = testing::serving({"inference.moe=null", "inference.pools.colocated.ep=null"});
  const ScenarioConfig fp8 = testing::serving(
      {"inference.moe=null", "inference.pools.colocated.ep=null", "inference.weight_precision=fp8"});
  const ServingSetup a = make_serving_setup(bf16);
  const ServingSetup b = make_serving_setup(fp8);
  EXPECT_EQ(b.model.weight_bytes, 1.0);
  EXPECT_EQ(b.model.precision, Precision::kFp8);
  const ServingModel& m = a.model;
  const int tp = a.pools[0].tp;
  const double linear = m.layers * (attention_params_per_layer(m) + mlp_params(m, m.ffn_hidden)) / tp;
  const double embed = 2.0 * m.vocab * m.hidden / tp;  // embeddings and LM head, untied
  EXPECT_NEAR(static_cast<double>(a.pools[0].weights_per_gpu.n), 2.0 * (linear + embed), 1.0);
  EXPECT_NEAR(static_cast<double>(b.pools[0].weights_per_gpu.n), 1.0 * linear + 2.0 * embed, 1.0);
  // A decode step streams the weights: fp8 is faster, but by less than 2x (LM head, KV reads,
  // launches and the all-reduces stay).
  StepLoad load;
  for (int i = 0; i < 32; ++i) load.add_decode(1000);
  const Time t16 = colocated_step(a.model, a.pools[0], a.links[0], load).total;
  const Time t8 = colocated_step(b.model, b.pools[0], b.links[0], load).total;
  EXPECT_LT(t8, t16);
  EXPECT_GT(2 * t8, t16);
  // The all-reduces carry bf16 hidden states either way.
  EXPECT_EQ(colocated_step(a.model, a.pools[0], a.links[0], load).communication,
            colocated_step(b.model, b.pools[0], b.links[0], load).communication);
}

// Under fp8 weights an MoE layer's dispatch carries fp8 hidden states (quantised before they are
// sent) and its combine bf16 outputs; the TP all-reduces stay bf16.
TEST(ServingModel, Fp8WeightsDispatchFp8AndCombineBf16) {
  const ServingSetup a = make_serving_setup(testing::serving());
  const ServingSetup b = make_serving_setup(testing::serving({"inference.weight_precision=fp8"}));
  const ServingModel& m = a.model;
  const PoolPlan& p = a.pools[0];  // tp 2, ep 8: 4 attention replicas
  StepLoad load;
  for (int i = 0; i < 64; ++i) load.add_decode(1000);
  // The instance's 64 tokens, 8 a GPU, each to top_k = 2 experts of h = 1,024 values.
  const double values = 8.0 * 2 * 1024;
  const coll::GroupLinks ep = group_links_ep(p.ep, a.links[0]);
  const auto a2a = [&](double bytes) { return coll::collective_time(coll::CollectiveOp::kAllToAll, bytes_of(bytes), ep); };
  const Time saved = m.moe_layers() * (a2a(2.0 * values) - a2a(1.0 * values));
  EXPECT_GT(saved, Time::zero());
  EXPECT_EQ(colocated_step(m, p, a.links[0], load).communication - saved,
            colocated_step(b.model, b.pools[0], b.links[0], load).communication);
  // attention_ffn likewise: the M2N carries fp8, the N2M bf16 (fp8 too until 2026-12-05).
  EXPECT_EQ(2 * m2n_bytes(b.model, 64, 8, 2).n, m2n_bytes(m, 64, 8, 2).n);
  EXPECT_EQ(n2m_bytes(b.model, 64, 8).n, n2m_bytes(m, 64, 8).n);
}

// moe.dispatch: all_gather sends every token of the instance to each of its ep GPUs (dispatch
// precision) and returns the outputs by a reduce-scatter (bf16), whatever top_k; the expert and
// attention compute are the same as all_to_all's.
TEST(ServingModel, AllGatherDispatchOnAHandComputedCase) {
  const ServingSetup a = make_serving_setup(testing::serving());
  const ServingSetup g = make_serving_setup(testing::serving({"inference.moe.dispatch=all_gather"}));
  const PoolPlan& p = a.pools[0];  // tp 2, ep 8
  StepLoad load;
  for (int i = 0; i < 64; ++i) load.add_decode(1000);
  const coll::GroupLinks ep = group_links_ep(p.ep, a.links[0]);
  const auto t = [&](coll::CollectiveOp op, double bytes) { return coll::collective_time(op, bytes_of(bytes), ep); };
  // All-to-all: 8 tokens a GPU x top_k 2 x 1,024 values x 2 bytes, there and back. All-gather:
  // the 64 tokens x 1,024 values x 2 bytes gathered, and the same reduce-scattered.
  const Time a2a = 2 * t(coll::CollectiveOp::kAllToAll, 8.0 * 2 * 1024 * 2);
  const Time agrs = t(coll::CollectiveOp::kAllGather, 64.0 * 1024 * 2) + t(coll::CollectiveOp::kReduceScatter, 64.0 * 1024 * 2);
  const StepTiming sa = colocated_step(a.model, p, a.links[0], load);
  const StepTiming sg = colocated_step(g.model, g.pools[0], g.links[0], load);
  EXPECT_EQ(sg.communication - sa.communication, a.model.moe_layers() * (agrs - a2a));
  EXPECT_GT(agrs, a2a);  // top_k 2 of 8 GPUs: the gather moves 4x the bytes
  EXPECT_EQ(sg.attention, sa.attention);
  EXPECT_EQ(sg.ffn, sa.ffn);
}

// pools.<role>.expert_tp: ep 8 GPUs as one group holding a slice of every expert (MoE tensor
// parallelism) costs each GPU every expert's narrower GEMMs instead of its own experts' whole
// ones; under all_gather the exchange is the same. Left out, the default (1 here) is unchanged.
TEST(ServingModel, ExpertTensorParallelismSlicesEveryExpert) {
  const ServingSetup ep = make_serving_setup(testing::serving({"inference.moe.dispatch=all_gather"}));
  const ServingSetup one = make_serving_setup(
      testing::serving({"inference.moe.dispatch=all_gather", "inference.pools.colocated.expert_tp=1"}));
  const ServingSetup tp = make_serving_setup(
      testing::serving({"inference.moe.dispatch=all_gather", "inference.pools.colocated.expert_tp=8"}));
  EXPECT_EQ(ep.pools[0].expert_tp, 1);
  EXPECT_EQ(tp.pools[0].expert_tp, 8);
  EXPECT_EQ(tp.pools[0].weights_per_gpu, ep.pools[0].weights_per_gpu);
  StepLoad load;
  for (int i = 0; i < 64; ++i) load.add_decode(1000);
  const ServingModel& m = ep.model;
  const StepTiming a = colocated_step(m, ep.pools[0], ep.links[0], load);
  const StepTiming b = colocated_step(m, tp.pools[0], tp.links[0], load);
  EXPECT_EQ(colocated_step(m, one.pools[0], one.links[0], load).total, a.total);
  EXPECT_EQ(b.communication, a.communication);
  EXPECT_EQ(b.attention, a.attention);
  const calib::HardwareProfile& hw = ep.pools[0].hw;
  // Every GPU also sorts all 64 tokens' pairs for its slices, where one of 8 groups sorts 8.
  EXPECT_EQ(b.ffn - a.ffn, m.moe_layers() * (expert_layer_time(m, hw, 64, 1, 8) - expert_layer_time(m, hw, 64, 8, 1) +
                                              permute_time(m, hw, 64) - permute_time(m, hw, 8)));
  // A decode sweep point whose instance the pool's expert_tp cannot split is not offered.
  const ScenarioConfig cfg = testing::serving({"inference.pools.colocated.expert_tp=8"});
  EXPECT_FALSE(colocated_decode_point(cfg, 2, 4, 64).fits);
  EXPECT_EQ(colocated_decode_point(cfg, 2, 4, 64).tpot, Time::zero());
  EXPECT_TRUE(colocated_decode_point(cfg, 2, 8, 64).fits);
  // A prefill/decode scenario's colocated points decode: they lay the experts out as its decode
  // pool does (its expert_tp was ignored until 2026-12-05).
  const std::vector<std::string> pd = {"inference.mode=prefill_decode",
                                       "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"};
  std::vector<std::string> sliced = pd;
  sliced.push_back("inference.pools.decode.expert_tp=8");
  EXPECT_NE(colocated_decode_point(testing::serving(sliced), 2, 8, 64).tpot,
            colocated_decode_point(testing::serving(pd), 2, 8, 64).tpot);
}

// inference.kv_cache_fraction: the KV cache takes that share of the memory left after the weights
// and the workspace, and the replica holds that many fewer tokens.
TEST(ServingModel, KvCacheFractionScalesTheCache) {
  const ServingSetup all = make_serving_setup(testing::serving());
  const ServingSetup most = make_serving_setup(testing::serving({"inference.kv_cache_fraction=0.9"}));
  EXPECT_NEAR(most.pools[0].kv_budget_per_gpu.as_double(), 0.9 * all.pools[0].kv_budget_per_gpu.as_double(), 1.0);
  EXPECT_EQ(most.pools[0].weights_per_gpu, all.pools[0].weights_per_gpu);
  const int64_t per_token = kv_bytes_per_token(most.model, most.pools[0].tp).n;
  EXPECT_EQ(most.pools[0].kv_tokens_per_replica, most.pools[0].kv_budget_per_gpu.n / per_token);
  EXPECT_LT(most.pools[0].kv_tokens_per_replica, all.pools[0].kv_tokens_per_replica);
}

// moe.load_imbalance is the busiest expert's load over the mean: the busiest group holds it beside
// its other experts at the mean. One expert a group pays it whole; a group of every expert (MoE
// tensor parallelism) a share of it (each expert was charged it until 2026-12-05).
TEST(ExpertCost, TheHotExpertLoadsItsGroupBesideAverageOnes) {
  ServingModel m = serving_model(testing::serving());  // 8 experts, top_k 2
  m.moe.load_imbalance = 4.0;
  const calib::HardwareProfile hw = calib::load_hardware_profile("H100-SXM");
  const int64_t f = m.expert_ffn();
  const auto priced = [&](int64_t t_e, int64_t count, int etp) {
    const int64_t fs = f / etp;
    return gemm_roofline(t_e, 2 * fs, m.hidden, m.weight_bytes, m.precision, hw, count) +
           calib::memory_time(Bytes{t_e * count * 3 * fs * 2}, hw) +
           gemm_roofline(t_e, m.hidden, fs, m.weight_bytes, m.precision, hw, count);
  };
  // 1,024 tokens, 256 pairs an expert on the mean. One expert a GPU (8 groups): the hot one's
  // 4 x 256 = 1,024. Every expert on one group sliced 8 ways: (7 + 4) x 256 / 8 = 352 each.
  EXPECT_EQ(expert_layer_time(m, hw, 1024, 8, 1), priced(1024, 1, 1));
  EXPECT_EQ(expert_layer_time(m, hw, 1024, 1, 8), priced(352, 8, 8));
  // Two experts a group: (1 + 4) x 256 / 2 = 640 each.
  EXPECT_EQ(expert_layer_time(m, hw, 1024, 4, 1), priced(640, 2, 1));
}

// The group holding the hot expert receives the dispatch (and sends the combine) as many times the
// mean group's as its experts' load says, and at most every token once: 8 experts, top_k 2, one a
// group (hit = 2 of 8 groups a token): load 4 gives 4x, load 8 would give 8x but a group receives
// a token once, so 8 / 2 = 4x. Until 2026-12-06 the
// exchange ran at the mean whatever the load.
TEST(ExpertCost, TheHotGroupPacesTheExchange) {
  ServingModel m = serving_model(testing::serving());  // 8 experts, top_k 2
  EXPECT_DOUBLE_EQ(busiest_group_skew(m, 8), 1.0);
  m.moe.load_imbalance = 4.0;
  EXPECT_DOUBLE_EQ(busiest_group_skew(m, 8), 4.0);
  // Two experts a group: (1 + 4) / 2 = 2.5x the pairs, but every token already visits the hot
  // expert, so the group receives each token once: 4 groups / hit 4 (1 - C(6,2)/C(8,2)) = 2.15x.
  EXPECT_NEAR(busiest_group_skew(m, 4), 4.0 / (4.0 * (1.0 - 15.0 / 28.0)), 1e-12);
  EXPECT_DOUBLE_EQ(busiest_group_skew(m, 1), 1.0);
  // What that group's expert-TP ranks reduce-scatter: 1,024 tokens, 2 groups of 8 hit a token,
  // 256 tokens the mean group, 4x on the hot one.
  EXPECT_NEAR(busiest_group_tokens(m, 1024, 8), 1024.0, 1e-9);
  m.moe.load_imbalance = 8.0;
  EXPECT_NEAR(busiest_group_skew(m, 8), 4.0, 1e-12);
  ServingLinks l;
  l.nic_per_gpu = gbytes_per_s(1);
  const Bytes total{8'000'000};
  // 8 senders and 8 receivers: 1 ms each at the mean; the hot receiver takes 4 ms.
  EXPECT_NEAR(exchange_time(total, 8, 8, l, l).as_s(), 1e-3, 1e-9);
  EXPECT_NEAR(exchange_time(total, 8, 8, l, l, 1.0, 1.0, 4.0).as_s(), 4e-3, 1e-9);
  EXPECT_NEAR(exchange_time(total, 8, 8, l, l, 1.0, 4.0, 1.0).as_s(), 4e-3, 1e-9);
}

// An all-to-all to experts sliced over expert_tp GPUs sends each token once to every GPU of its
// experts' groups, and each group reduce-scatters its partial outputs before the combine.
TEST(ServingModel, AllToAllToSlicedExpertsOnAHandComputedCase) {
  const ServingSetup one = make_serving_setup(testing::serving());
  const ServingSetup two = make_serving_setup(testing::serving({"inference.pools.colocated.expert_tp=2"}));
  const PoolPlan& p = one.pools[0];  // ep 8: 8 groups of one expert, or 4 groups of two sliced 2 ways
  StepLoad load;
  for (int i = 0; i < 64; ++i) load.add_decode(1000);
  const coll::GroupLinks ep = group_links_ep(8, one.links[0]);
  const coll::GroupLinks etp = group_links_ep(2, one.links[0]);
  const auto t = [](coll::CollectiveOp op, double bytes, const coll::GroupLinks& g) {
    return coll::collective_time(op, bytes_of(bytes), g);
  };
  // One expert a group: 8 tokens a GPU x top_k 2 x 1,024 values x 2 bytes. Two a group: a token
  // reaches 4 x (1 - C(6,2) / C(8,2)) = 13/7 groups, each of 2 GPUs; the group's 64 x 13/7 / 4
  // tokens reduce-scattered.
  const double v = 8.0 * 2 * 1024 * 2;
  const double hit = 13.0 / 7.0;
  const Time a2a1 = 2 * t(coll::CollectiveOp::kAllToAll, v, ep);
  const Time a2a2 = t(coll::CollectiveOp::kAllToAll, 8.0 * hit * 2 * 1024 * 2, ep) +
                    t(coll::CollectiveOp::kAllToAll, 8.0 * hit * 1024 * 2, ep) +
                    t(coll::CollectiveOp::kReduceScatter, 64.0 * hit / 4 * 1024 * 2, etp);
  EXPECT_EQ(colocated_step(two.model, two.pools[0], two.links[0], load).communication -
                colocated_step(one.model, p, one.links[0], load).communication,
            one.model.moe_layers() * (a2a2 - a2a1));
}

TEST(ServingModel, Fp8WeightsNeedAGpuWithFp8) {
  const ScenarioConfig cfg = testing::serving({"cluster.gpu=A100-SXM4-80GB", "inference.weight_precision=fp8"});
  try {
    (void)make_serving_setup(cfg);
    FAIL() << "an A100 has no fp8 tensor cores";
  } catch (const BadInput& e) {
    EXPECT_EQ(e.errors()[0].key_path, "inference.weight_precision");
    EXPECT_NE(std::string(e.what()).find("no peak.fp8"), std::string::npos) << e.what();
  }
}

// A request lives on one data-parallel attention replica: its prompt and its KV reads cannot be
// split over the others. One 4,096-token prompt on 8 replicas is 4,096 tokens on the busiest;
// 8 of them are one each; 9 put two on one replica (counts round up).
TEST(StepLoad, TheBusiestReplicaHoldsAtLeastTheLargestRequest) {
  StepLoad one;
  one.add_prefill(4096);
  one.add_decode(3000);
  const StepLoad r = one.share(8);
  EXPECT_EQ(r.prefill_tokens, 4096);
  EXPECT_DOUBLE_EQ(r.prefill_pairs, 0.5 * 4096.0 * 4096.0);
  EXPECT_DOUBLE_EQ(r.decode_context, 3000.0);
  EXPECT_EQ(r.prefill_seqs, 1);
  StepLoad eight;
  for (int i = 0; i < 8; ++i) eight.add_prefill(1000);
  EXPECT_EQ(eight.share(8).prefill_tokens, 1000);
  eight.add_prefill(1000);
  EXPECT_EQ(eight.share(8).prefill_seqs, 2);
  EXPECT_EQ(eight.share(8).prefill_tokens, 2000);  // two whole prompts on the busiest
  StepLoad many;
  for (int i = 0; i < 256; ++i) many.add_decode(1000 + 2 * i);
  EXPECT_DOUBLE_EQ(many.share(4).decode_context, many.decode_context / 4);  // even when it divides
  // The step of one prompt does not shrink with more replicas.
  const ScenarioConfig cfg = testing::serving();
  const ServingModel m = serving_model(cfg);
  const PoolPlan single = h100_pool(1, 1, 1);
  const ServingLinks l = serving_links(cfg, single);
  StepLoad prompt;
  prompt.add_prefill(4096);
  const Time alone = colocated_step(m, single, l, prompt).attention_busy;
  EXPECT_GE(colocated_step(m, h100_pool(1, 8, 8), l, prompt).attention_busy, alone);
}

TEST(StepLoad, TheBusiestReplicaIsTheSlowestAttentionAndPacesTheStep) {
  const ScenarioConfig cfg = testing::serving();
  const ServingModel m = serving_model(cfg);
  const PoolPlan p = h100_pool(2, 8, 4);
  // Replica 0: 16 decodes; replica 1: one 2,048-token prompt; replica 2: 2 decodes; 3: nothing.
  std::vector<StepLoad> per(4);
  for (int i = 0; i < 16; ++i) per[0].add_decode(1000);
  per[1].add_prefill(2048);
  per[2].add_decode(500);
  per[2].add_decode(500);
  const StepLoad b = busiest_replica(m, p, per);
  const Time chosen = attention_layer_time(m, p.hw, b, p.tp);
  for (const StepLoad& r : per) EXPECT_GE(chosen, attention_layer_time(m, p.hw, r, p.tp));
  EXPECT_EQ(b.prefill_tokens, 2048);  // the prompt outweighs 16 decode tokens
  // The step's attention is that replica's, every layer, and its LM head over its sequences.
  StepLoad total;
  for (int i = 0; i < 18; ++i) total.add_decode(i < 16 ? 1000 : 500);
  total.add_prefill(2048);
  const ServingLinks l = serving_links(cfg, p);
  EXPECT_EQ(colocated_step(m, p, l, total, b).attention_busy, m.layers * chosen + lm_head_time(m, p.hw, b.seqs(), p.tp));
  // share() deals counts and sizes separately: its busiest (5 decodes and the prompt) can be
  // heavier than any replica as placed.
  EXPECT_GT(colocated_step(m, p, l, total).attention_busy, colocated_step(m, p, l, total, b).attention_busy);
  EXPECT_EQ(busiest_replica(m, p, std::vector<StepLoad>(3)).tokens(), 0);
}

// With attention data-parallel, a prompt lives on one replica: its GPU sends the prompt's tokens
// to their experts and receives their outputs, and paces both all-to-alls where the others send
// little. One 3,000-token prompt on replica 0 of 8 (tp 1): the exchange is the whole prompt's
// from one GPU, not an eighth of it (until 2026-12-07 every GPU was charged the mean: TTFT of
// such a prompt 21% short, review 2026-12-07).
TEST(ServingModel, ThePromptsReplicaPacesTheExpertAllToAll) {
  const ScenarioConfig cfg = testing::serving({"inference.moe.dispatch=all_to_all"});
  const ServingModel m = serving_model(cfg);
  const PoolPlan p = h100_pool(1, 8, 8);
  const ServingLinks l = serving_links(cfg, p);
  StepLoad prompt;
  prompt.add_prefill(3000);
  const StepTiming alone = colocated_step(m, p, l, prompt, prompt);  // the replica holding it
  // The same tokens as 8 prompts of 375, one a replica: each GPU sends its own.
  StepLoad even, one;
  for (int i = 0; i < 8; ++i) even.add_prefill(375);
  one.add_prefill(375);
  const StepTiming spread = colocated_step(m, p, l, even, one);
  const coll::GroupLinks ep = group_links_ep(8, l);
  const Time tp_ar = coll::collective_time(coll::CollectiveOp::kAllReduce, bytes_of(3000.0 * m.hidden * 2),
                                           group_links(1, l));
  const Time exchange = coll::collective_time(coll::CollectiveOp::kAllToAll, m2n_bytes(m, 3000, 8, 1), ep) +
                        coll::collective_time(coll::CollectiveOp::kAllToAll, n2m_bytes(m, 3000, 8), ep);
  EXPECT_EQ(alone.communication, m.layers * tp_ar + m.moe_layers() * exchange);
  const double hot = busiest_group_skew(m, 8);
  const Time even_exchange =
      coll::collective_time(coll::CollectiveOp::kAllToAll, bytes_of(hot * m2n_bytes(m, 375, 8, 1).as_double()), ep) +
      coll::collective_time(coll::CollectiveOp::kAllToAll, bytes_of(hot * n2m_bytes(m, 375, 8).as_double()), ep);
  const Time even_tp_ar = coll::collective_time(coll::CollectiveOp::kAllReduce, bytes_of(375.0 * m.hidden * 2),
                                                group_links(1, l));
  EXPECT_EQ(spread.communication, m.layers * even_tp_ar + m.moe_layers() * even_exchange);
  EXPECT_GT(exchange, even_exchange);
}

TEST(ExpertCost, FewTokensHitFewExperts) {
  const ServingModel m = serving_model(testing::serving());
  const calib::HardwareProfile hw = calib::load_hardware_profile("H100-SXM");
  // One token visits top_k = 2 of 8 experts: far less weight traffic than 1024 tokens hitting all.
  EXPECT_LT(expert_layer_time(m, hw, 1, 1, 1), expert_layer_time(m, hw, 1024, 1, 1));
  EXPECT_EQ(expert_layer_time(m, hw, 0, 1, 1), Time::zero());
}

// The memory-bound MoE kernels the training model prices (workloads/moe.cc) are priced in serving
// too: the permutation into expert order and back, and the activation between the expert GEMMs.
TEST(ExpertCost, PermutationAndActivationAreHandComputedMemoryTraffic) {
  const ServingModel m = serving_model(testing::serving());  // h = 1024, top_k = 2, 8 experts
  const calib::HardwareProfile hw = calib::load_hardware_profile("H100-SXM");
  // 100 tokens x 2 pairs, read + write 1,024 bf16 values before the dispatch and after the
  // combine: 4 x 200 x 1,024 x 2 = 1,638,400 bytes.
  EXPECT_EQ(permute_time(m, hw, 100), calib::memory_time(Bytes{1'638'400}, hw));
  EXPECT_EQ(permute_time(m, hw, 0), Time::zero());
  // 1,024 tokens on one group of all 8 experts: each hit, 256 tokens each. The activation reads
  // the SwiGLU up projection (2f) and writes f: 2,048 pairs x 3f x 2 bytes on top of the GEMMs.
  const int64_t f = m.expert_ffn();
  const Time gemms = gemm_roofline(256, 2 * f, m.hidden, m.weight_bytes, m.precision, hw, 8) +
                     gemm_roofline(256, m.hidden, f, m.weight_bytes, m.precision, hw, 8);
  EXPECT_EQ(expert_layer_time(m, hw, 1024, 1, 1), gemms + calib::memory_time(Bytes{2048 * 3 * f * 2}, hw));
}

TEST(M2nExchange, BytesAndTimeOnAHandComputedCase) {
  // tiny-serving's model: hidden h = 1024, top_k = 2, bf16 (w = 2 bytes).
  const ServingModel m = serving_model(testing::serving());
  // 64 tokens to 8 experts, one per group, split over etp = 2 GPUs. M2N: every rank of an expert
  // needs the whole hidden state, 64 x 2 x 2 x 1024 x 2 = 524,288 bytes; N2M: each rank returns
  // its 1/etp of the reduce-scattered output, 64 x 2 x 1024 x 2 = 262,144 bytes (no etp factor).
  EXPECT_EQ(m2n_bytes(m, 64, 8, 2).n, 524'288);
  EXPECT_EQ(n2m_bytes(m, 64, 8).n, 262'144);
  // Two experts to a group (4 groups): a token whose two experts share a group is sent there once,
  // hit = 4 x (1 - C(6,2) / C(8,2)) = 4 x 13/28 groups, 64 x 13/7 x 2 x 1024 x 2 = 486,838.857 bytes.
  EXPECT_EQ(m2n_bytes(m, 64, 4, 2).n, 486'839);
  EXPECT_EQ(n2m_bytes(m, 64, 4).n, 243'419);
  // 8 attention GPUs send to 4 expert GPUs, 50 GB/s NIC share each, alpha 10 us.
  //   send side:    524,288 / 8 = 65,536 B per GPU   / 50 GB/s = 1.31072 us
  //   receive side: 524,288 / 4 = 131,072 B per GPU  / 50 GB/s = 2.62144 us  (the busier side)
  //   t = 10 us + 2.62144 us = 12.62144 us
  ServingLinks l;
  l.nic_per_gpu = gbytes_per_s(50);
  l.net_alpha = Time::us(10);
  EXPECT_EQ(exchange_time(m2n_bytes(m, 64, 8, 2), 8, 4, l, l), Time::ps(12'621'440));
  // N2M back, 4 senders: 262,144 / 4 / 50 GB/s = 1.31072 us; 10 us + 1.31072 us.
  EXPECT_EQ(exchange_time(n2m_bytes(m, 64, 8), 4, 8, l, l), Time::ps(11'310'720));
  // A receiver with half the NIC share doubles its side: 10 + 2 x 2.62144 = 15.24288 us.
  ServingLinks slow = l;
  slow.nic_per_gpu = gbytes_per_s(25);
  EXPECT_EQ(exchange_time(m2n_bytes(m, 64, 8, 2), 8, 4, l, slow), Time::ps(15'242'880));
  // Contention scales the bytes term only: 10 + 1.5 x 2.62144 = 13.93216 us.
  EXPECT_EQ(exchange_time(m2n_bytes(m, 64, 8, 2), 8, 4, l, l, 1.5), Time::ps(13'932'160));
  EXPECT_EQ(exchange_time(Bytes{0}, 8, 4, l, l), Time::zero());
}

TEST(M2nExchange, ExpertGroupsHitByAToken) {
  EXPECT_DOUBLE_EQ(expert_groups_hit(8, 8, 2), 2.0);   // one expert a group: top_k
  EXPECT_DOUBLE_EQ(expert_groups_hit(8, 1, 2), 1.0);   // one group holds every expert
  EXPECT_DOUBLE_EQ(expert_groups_hit(8, 4, 2), 4.0 * 13.0 / 28.0);
  EXPECT_DOUBLE_EQ(expert_groups_hit(8, 2, 8), 2.0);   // every expert: every group
  // Qwen3-235B-A22B, 128 experts, top-8, over 8 GPUs: 8 x (1 - prod_{i<8} (112 - i) / (128 - i)).
  double miss = 1.0;
  for (int i = 0; i < 8; ++i) miss *= (112.0 - i) / (128.0 - i);
  EXPECT_DOUBLE_EQ(expert_groups_hit(128, 8, 8), 8.0 * (1.0 - miss));
  EXPECT_NEAR(expert_groups_hit(128, 8, 8), 5.34, 0.01);
  // Never more than the groups or top_k, never fewer than one; more groups, more of them hit.
  for (const int experts : {8, 16, 128}) {
    for (int k = 1; k <= 8; ++k) {
      double last = 0.0;
      for (int groups = 1; groups <= experts; groups *= 2) {
        const double hit = expert_groups_hit(experts, groups, k);
        EXPECT_LE(hit, std::min(groups, k) + 1e-12) << experts << " " << groups << " " << k;
        EXPECT_GE(hit, 1.0 - 1e-12);
        EXPECT_GE(hit, last - 1e-12);
        last = hit;
      }
    }
  }
}

// A colocated instance's all-to-all dispatch sends no more than the all-gather whatever the
// expert TP: a GPU receives a token once (at expert_tp = ep it was sent 64 copies of each token of
// 8 experts, top-2, where the all-gather sends 8).
TEST(ServingModel, AllToAllDispatchNeverSendsMoreThanTheAllGather) {
  const ServingModel m = serving_model(testing::serving());  // 8 experts, top-2
  const int ep = 8;
  for (const int etp : {1, 2, 4, 8}) {
    const double gathered = 64.0 * ep * m.hidden * m.weight_bytes;  // 64 tokens a GPU, to every GPU
    EXPECT_LE(m2n_bytes(m, 64, ep / etp, etp).as_double(), gathered + 1) << "expert_tp " << etp;
  }
  EXPECT_EQ(m2n_bytes(m, 64, 1, ep).as_double(), 64.0 * ep * m.hidden * m.weight_bytes);
}

// Whichever way the tokens come, every GPU of an expert group sorts the group's pairs and runs
// them on its slices: the same expert time for both dispatches at every expert_tp (an all-to-all
// sorted only each GPU's own tokens' pairs until 2026-12-05: at expert_tp 8, 1/8 of them).
TEST(ServingModel, BothDispatchesSortTheGroupsPairs) {
  for (const char* etp : {"1", "2", "8"}) {
    const std::string set = std::string("inference.pools.colocated.expert_tp=") + etp;
    const ServingSetup a = make_serving_setup(testing::serving({set}));
    const ServingSetup g = make_serving_setup(testing::serving({set, "inference.moe.dispatch=all_gather"}));
    StepLoad load;
    for (int i = 0; i < 512; ++i) load.add_decode(1000);
    EXPECT_EQ(colocated_step(a.model, a.pools[0], a.links[0], load).ffn,
              colocated_step(g.model, g.pools[0], g.links[0], load).ffn)
        << "expert_tp " << etp;
  }
}

TEST(M2nExchange, ServingLinksGiveEachGpuItsNicShareAtAchievedEfficiency) {
  // tiny-serving: 400 Gb/s NICs, 8 per node of 8 GPUs, no oversubscription: 50 GB/s x network_busbw.
  const calib::HardwareProfile hw = calib::load_hardware_profile("H100-SXM");
  PoolPlan p;
  p.hw = hw;
  const ServingLinks l = serving_links(testing::serving(), p);
  EXPECT_DOUBLE_EQ(l.nic_per_gpu.bytes_per_s, 50e9 * hw.eff.network_busbw);
  EXPECT_EQ(l.net_alpha, hw.eff.network_collective_latency);
}

PingPongCosts uniform(int m, Time a, Time c, Time f, int layers) {
  PingPongCosts p;
  p.moe_layers = layers;
  p.attention.assign(m, a);
  p.dense.assign(m, a);
  p.m2n.assign(m, c);
  p.ffn.assign(m, f);
  p.n2m.assign(m, c);
  p.head.assign(m, Time::zero());
  return p;
}

TEST(PingPong, OneMicroBatchNoNetworkIsAttentionPlusFfn) {
  PingPongCosts c = uniform(1, Time::us(300), Time::zero(), Time::us(200), 10);
  c.head = {Time::us(50)};
  const StepTiming s = ping_pong_step(c);
  EXPECT_EQ(s.total, 10 * (Time::us(300) + Time::us(200)) + Time::us(50));
  EXPECT_EQ(s.attention, 10 * Time::us(300) + Time::us(50));
  EXPECT_EQ(s.ffn, 10 * Time::us(200));
  EXPECT_EQ(s.communication, Time::zero());
  EXPECT_EQ(s.idle, Time::zero());
}

// An attention pool of 8 H100s at tp 2 (4 replicas) beside an expert pool of 8 at tp 1.
std::pair<PoolPlan, PoolPlan> afd_pools() {
  PoolPlan a, e;
  a.role = PoolRole::kAttention;
  a.hw = e.hw = calib::load_hardware_profile("H100-SXM");
  a.gpus = 8;
  a.tp = 2;
  a.attention_replicas = 4;
  e.role = PoolRole::kExpert;
  e.gpus = 8;
  e.tp = 1;
  return {a, e};
}

// `seqs` sequences decoding at `context` tokens each.
StepLoad decoding(int seqs, int64_t context) {
  StepLoad load;
  for (int i = 0; i < seqs; ++i) load.add_decode(context);
  return load;
}

TEST(PingPong, DisaggregatedStepWithZeroNetworkCostEqualsAttentionPlusFfn) {
  // The whole chain: afd_costs from shapes, with a network that costs nothing.
  const ScenarioConfig cfg = testing::serving();
  const ServingModel m = serving_model(cfg);
  const auto [a, e] = afd_pools();
  ServingLinks free = serving_links(cfg, a);
  free.net_alpha = Time::zero();
  free.nic_per_gpu = Bandwidth{1e30};
  free.nvlink_alpha = Time::zero();
  free.nvlink_busbw = Bandwidth{1e30};
  const StepLoad load = decoding(64, 700);
  const AfdPlan plan{&a, &e, 1, 1.0};
  const PingPongCosts c = afd_costs(m, plan, free, free, {load});
  ASSERT_EQ(c.m2n[0], Time::zero());
  const Time attention = c.moe_layers * c.attention[0] + c.head[0];
  const Time ffn = c.moe_layers * c.ffn[0];
  const StepTiming s = afd_step(m, plan, free, free, {load});
  EXPECT_EQ(s.total, attention + ffn);
  EXPECT_EQ(s.attention_busy, attention);
  EXPECT_EQ(s.ffn_busy, ffn);
}

// The N2M returns a token's output to one rank of its TP-2 attention replica, which all-gathers
// it over NVLink for the next layer: the attention side's MoE layer pays that gather, the tokens'
// hidden states at the NVLink rate (not charged until 2026-12-06).
TEST(PingPong, TpAttentionGathersTheReturnedOutputs) {
  const ScenarioConfig cfg = testing::serving();
  const ServingModel m = serving_model(cfg);
  const auto [a, e] = afd_pools();
  ServingLinks links = serving_links(cfg, a);
  const StepLoad load = decoding(64, 700);
  const AfdPlan plan{&a, &e, 1, 1.0};
  const Time with = afd_costs(m, plan, links, links, {load}).attention[0];
  ServingLinks instant = links;
  instant.nvlink_busbw = Bandwidth{1e30};
  instant.nvlink_alpha = Time::zero();
  const Time without = afd_costs(m, plan, instant, links, {load}).attention[0];
  // 16 tokens a replica x hidden x 2 bytes over the pair: an all-gather and the attention's
  // all-reduce of the same bytes, the all-gather half the all-reduce's bus traffic.
  const double bytes = 16.0 * m.hidden * 2;
  const Time gather = coll::collective_time(coll::CollectiveOp::kAllGather, bytes_of(bytes), group_links(2, links));
  const Time reduce = coll::collective_time(coll::CollectiveOp::kAllReduce, bytes_of(bytes), group_links(2, links));
  EXPECT_GT(gather, Time::zero());
  EXPECT_EQ(with - without, gather + reduce);
}

// As ServingModel.ThePromptsReplicaPacesTheExpertAllToAll, in the attention/FFN split: the prompt's tp-2 replica (of 4) sends the M2N for all its
// tokens over its two NICs and receives their N2M, 4x the mean on each (until 2026-12-07 at the
// mean, 1/8 of the exchange a GPU).
TEST(PingPong, ThePromptsReplicaPacesTheM2nAndN2m) {
  const ScenarioConfig cfg = testing::serving();
  const ServingModel m = serving_model(cfg);
  const auto [a, e] = afd_pools();
  const ServingLinks links = serving_links(cfg, a);
  StepLoad prompt;
  prompt.add_prefill(3000);
  const AfdPlan plan{&a, &e, 1, 1.0};
  const std::vector<StepLoad> busiest{prompt};
  const PingPongCosts c = afd_costs(m, plan, links, links, {prompt}, busiest);
  const double hot = busiest_group_skew(m, 8);
  EXPECT_EQ(c.m2n[0], exchange_time(m2n_bytes(m, 3000, 8, 1), 8, 8, links, links, 1.0, 4.0, hot));
  EXPECT_EQ(c.n2m[0], exchange_time(n2m_bytes(m, 3000, 8), 8, 8, links, links, 1.0, hot, 4.0));
  // Spread evenly, every replica's GPUs send the mean.
  EXPECT_LE(afd_costs(m, plan, links, links, {prompt}, std::vector<StepLoad>{prompt.share(4)}).m2n[0], c.m2n[0]);
  StepLoad quarter;
  quarter.add_prefill(750);
  EXPECT_EQ(afd_costs(m, plan, links, links, {prompt}, std::vector<StepLoad>{quarter}).m2n[0],
            exchange_time(m2n_bytes(m, 3000, 8, 1), 8, 8, links, links, 1.0, 1.0, hot));
  EXPECT_GT(c.m2n[0], exchange_time(m2n_bytes(m, 3000, 8, 1), 8, 8, links, links, 1.0, 1.0, hot));
}

TEST(PingPong, MicroBatchesOverlapAttentionWithExperts) {
  // Same work split in 2: attention of one micro-batch runs while the other is in the experts.
  const int layers = 20;
  const Time one = ping_pong_step(uniform(1, Time::us(200), Time::us(20), Time::us(200), layers)).total;
  const StepTiming two = ping_pong_step(uniform(2, Time::us(100), Time::us(10), Time::us(100), layers));
  EXPECT_LT(two.total, one);
  // Never below the busier pool's work.
  EXPECT_GE(two.total, layers * Time::us(200));
  EXPECT_EQ(two.attention + two.ffn + two.communication + two.idle, two.total);
}

// inference.moe.moe_layer_frequency 2 (Llama 4 Maverick): layers 0, 2, 4 of 6 MoE (after no
// dense prefix), 1, 3, 5 dense; the experts run three layers a micro-batch, the attention pool
// three MoE and three dense ones; the dense layers' MLPs and the experts' counts follow.
TEST(PingPong, InterleavedMoeLayers) {
  PingPongCosts c = uniform(2, Time::us(100), Time::us(10), Time::us(100), 3);
  c.layers = 6;
  c.moe_layer_frequency = 2;
  c.dense.assign(2, Time::us(70));
  std::vector<StepSpan> spans;
  const StepTiming s = ping_pong_step(c, &spans);
  EXPECT_EQ(s.ffn_busy, 3 * 2 * Time::us(100));
  EXPECT_EQ(s.attention_busy, 3 * 2 * Time::us(70) + 3 * 2 * Time::us(100));
  std::set<int> expert_layers;
  for (const StepSpan& sp : spans) {
    if (sp.part == StepPart::kFfn) expert_layers.insert(sp.layer);
  }
  EXPECT_EQ(expert_layers, (std::set<int>{0, 2, 4}));
  const ServingModel m = serving_model(testing::serving({"model.layers=6", "inference.moe.moe_layer_frequency=2"}));
  EXPECT_EQ(m.moe_layers(), 3);
  EXPECT_EQ(m.dense_mlp_layers(), 3);
  EXPECT_TRUE(m.is_moe_layer(4));
  EXPECT_FALSE(m.is_moe_layer(5));
  const ServingModel all = serving_model(testing::serving({"model.layers=6"}));
  EXPECT_DOUBLE_EQ(total_params(all) - total_params(m),
                   3 * (8 * mlp_params(m, 1024) + 1024.0 * 8 - mlp_params(m, m.ffn_hidden)));
}

TEST(PingPong, DenseLayersRunOnTheAttentionPoolOnly) {
  PingPongCosts c = uniform(2, Time::us(100), Time::us(10), Time::us(100), 3);
  c.dense_layers = 2;
  c.dense.assign(2, Time::us(70));
  const StepTiming s = ping_pong_step(c);
  EXPECT_EQ(s.ffn_busy, 3 * 2 * Time::us(100));
  EXPECT_EQ(s.attention_busy, 2 * 2 * Time::us(70) + 3 * 2 * Time::us(100));
}

}  // namespace
}  // namespace clustersim::engine
