// SPDX-License-Identifier: Apache-2.0
// The M2N fabric factor: one layer's attention <-> expert exchange sent over the analytical and the
// flow level on a hand-run clock, against the closed form at line rate.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sim/engine/inference_sim.h"
#include "sim/network/analytical/analytical_network.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/flow/fluid_network.h"
#include "tests/unit/inference/inference_test_util.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim::engine {
namespace {

using clustersim::testing::serving;

// tiny-serving as attention_ffn: 8 attention GPUs (node 0, 4 replicas of TP 2) and 8 expert GPUs
// (node 1, one expert each, etp 1), max_batch 64 / m 2 = 32 tokens per micro-batch.
ScenarioConfig afd(std::vector<std::string> extra = {}) {
  std::vector<std::string> o{"inference.mode=attention_ffn", "inference.micro_batches=2",
                             "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"};
  o.insert(o.end(), extra.begin(), extra.end());
  return serving(o);
}

M2nProbe probe(const ScenarioConfig& cfg) {
  const ServingSetup setup = make_serving_setup(cfg);
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
  net::testing::ManualClock clock;
  std::unique_ptr<net::Network> network;
  const bool shares = cfg.network.fidelity != Fidelity::kAnalytical;
  if (shares) {
    network = std::make_unique<net::FluidNetwork>(routes, clock, cfg.network.merge_tolerance);
  } else {
    network = std::make_unique<net::AnalyticalNetwork>(routes, clock);
  }
  return probe_m2n_exchange(setup, *network, shares, routes, clock, [&clock] { clock.run(); });
}

TEST(M2nProbe, BoundIsTheClosedFormAtLineRate) {
  const M2nProbe p = probe(afd());
  // 32 tokens x top_k 2 x 1024 x 2 bytes = 131,072 bytes each way (etp 1), 16,384 per GPU; scaled
  // by ceil(8 MiB / 16,384) = 512 to 8,388,608 bytes per GPU through a 400 Gb/s NIC share at line
  // rate (50 GB/s): 167.77216 us, after the shortest path latency (a few microseconds).
  const Time bytes_term = Time::ps(167'772'160);
  EXPECT_GT(p.bound, bytes_term);
  EXPECT_LT(p.bound, bytes_term + Time::us(10));
}

TEST(M2nProbe, FactorAtAnalyticalLevelIsOne) {
  // Band [1, 1.01]: the analytical level prices each of the 64 pairs as if alone (one pair's bytes,
  // 1/8 of a GPU's share), so it cannot see the NIC each GPU shares among its 8 pairs;
  // the factor is the bound's, 1, and a single pair is never slower than that here.
  const M2nProbe p = probe(afd({"network.fidelity=analytical"}));
  EXPECT_LT(p.measured, p.bound) << "the analytical level should not see NIC sharing";
  EXPECT_GE(p.factor, 1.0);
  EXPECT_LE(p.factor, 1.01);
}

TEST(M2nProbe, FlowLevelOnANonBlockingFabricMatchesTheClosedForm) {
  // Rail-optimised, radix 64: every pair crosses one rail switch, nothing but the NICs is shared.
  // Band [0.99, 1.01]: the max-min share of each NIC is its line rate over its 8 flows.
  const M2nProbe p = probe(afd({"network.fidelity=flow"}));
  RecordProperty("factor", std::to_string(p.factor));
  EXPECT_GE(p.factor, 0.99);
  EXPECT_LE(p.factor, 1.01);
}

TEST(M2nProbe, FlowLevelSeesEcmpCollisionsOnSharedUplinks) {
  // One ToR per server (8 NICs down, 8 uplinks), one queue pair per transfer: ECMP hashes the 64
  // flows of each direction onto the 8 uplinks unevenly, so the busiest uplink carries more than
  // one NIC's worth and the exchange takes longer than the closed form (which charges the NICs only).
  const M2nProbe p = probe(afd({"network.fidelity=flow", "network.wiring=tor_per_server", "network.switch_radix=16"}));
  RecordProperty("factor", std::to_string(p.factor));
  EXPECT_GT(p.factor, 1.05) << p.measured.as_s() << " s vs " << p.bound.as_s() << " s";
  // Sending over the analytical network cannot see it (each transfer priced alone)...
  const ScenarioConfig cfg = afd({"network.wiring=tor_per_server", "network.switch_radix=16"});
  EXPECT_DOUBLE_EQ(probe(cfg).factor, 1.0);
  // ...so that level uses the static bound on the same routes: the most loaded uplink against the
  // busiest NIC. Max-min sharing ends the exchange no sooner than that link drains; band: within
  // 10% of the flow level's measurement.
  const ServingSetup setup = make_serving_setup(cfg);
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
  const double fixed = m2n_static_factor(setup, fabric, routes);
  RecordProperty("static_factor", std::to_string(fixed));
  EXPECT_GT(fixed, 1.05);
  EXPECT_NEAR(fixed, p.factor, 0.1 * p.factor);
  // On the non-blocking rail-optimised fabric: 1.
  const ScenarioConfig flat = afd();
  const topo::Fabric flat_fabric = topo::build_fabric(flat.cluster, flat.network, flat.file);
  const net::FabricRoutes flat_routes(flat_fabric, topo::routing_options(flat.network));
  EXPECT_DOUBLE_EQ(m2n_static_factor(make_serving_setup(flat), flat_fabric, flat_routes), 1.0);
}

TEST(M2nProbe, StaticFactorSeesNvlinkAndNicsSharedByFewerGpus) {
  // Where the closed form's NIC share for every byte is wrong, the analytical level's static
  // factor follows the flow level's measurement (band 10%):
  // - both pools on one 8-GPU node: every pair on NVLink, 9x the NIC share here (0.11);
  // - 4 expert GPUs on a node with one NIC: they share it 4 ways, not 8: 0.5.
  const std::vector<std::vector<std::string>> cases = {
      {"cluster.gpus=8", "inference.pools={attention: {gpus: 4, tp: 2}, expert: {gpus: 4}}"},
      {"cluster.gpus=16", "cluster.nics_per_node=1", "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 4}}"}};
  const double want_below[] = {0.2, 0.55};
  for (size_t i = 0; i < cases.size(); ++i) {
    std::vector<std::string> flow = cases[i];
    flow.push_back("network.fidelity=flow");
    const M2nProbe measured = probe(afd(flow));
    const ScenarioConfig cfg = afd(cases[i]);
    const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);
    const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
    const double fixed = m2n_static_factor(make_serving_setup(cfg), fabric, routes);
    EXPECT_LT(fixed, want_below[i]) << i;
    EXPECT_NEAR(fixed, measured.factor, 0.1 * measured.factor) << i;
  }
}

// Both pools on one 8-GPU node, every M2N pair on NVLink: the factor follows the NVLink speed,
// which run_serving takes from each pool's GPU profile (before 2026-12-05 the fabric ran every
// NVLink at H100's 450 GB/s: H800-SXM pools, 200 GB/s, came out 2.25x too fast).
TEST(M2nProbe, RunServingRunsEachPoolsNvlinkAtItsProfile) {
  const std::vector<std::string> one_node = {"cluster.gpus=8", "network.fidelity=analytical",
                                             "inference.requests=20"};
  auto factor = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), one_node.begin(), one_node.end());
    return run_serving(afd(extra)).m2n_probe.factor;
  };
  const std::string same = "inference.pools={attention: {gpus: 4, tp: 2}, expert: {gpus: 4}}";
  const double h800 = factor({"cluster.gpu=H800-SXM", same});
  EXPECT_DOUBLE_EQ(h800, factor({"cluster.gpu=H800-SXM", same, "network.nvlink_bandwidth=200GBps"}));
  const double at_450 = factor({"cluster.gpu=H800-SXM", same, "network.nvlink_bandwidth=450GBps"});
  EXPECT_NEAR(h800 / at_450, 450.0 / 200, 1e-6);  // every link NVLink: bytes / capacity
  // Pools of two GPU kinds on one node (H200 attention and H800 experts, the slower links setting
  // the time) were priced until 2026-12-06; a node holds one kind, and such pools are refused
  // (InferenceConfig.PoolsOfTwoGpuKindsDoNotShareANode).
}

TEST(SetPoolNvlink, EachPoolsGpusAtItsProfile) {
  const ScenarioConfig cfg = afd({"cluster.gpus=16", "inference.pools={attention: {gpu: H200-SXM, gpus: 8, tp: 2}, "
                                                     "expert: {gpu: H800-SXM, gpus: 8}}"});
  const ServingSetup setup = make_serving_setup(cfg);
  // Built at 100 GB/s, which neither profile has: every GPU's rate below is set_pool_nvlink's.
  topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file, gbytes_per_s(100));
  set_pool_nvlink(cfg.network, setup.pools, fabric);
  for (int g = 0; g < 16; ++g) {
    SCOPED_TRACE(g);
    const Bandwidth want = gbytes_per_s(g < 8 ? 450 : 200);
    EXPECT_EQ(fabric.capacity(fabric.nvlink(g, topo::Direction::kUp)), want);
    EXPECT_EQ(fabric.capacity(fabric.nvlink(g, topo::Direction::kDown)), want);
  }
}

}  // namespace
}  // namespace clustersim::engine
