// SPDX-License-Identifier: Apache-2.0
// ECMP collisions under a shift permutation on a full-bisection Clos (DESIGN.md section 5):
// random per-flow ECMP with one QP is several times the ideal, D-mod-k and spraying about 1x,
// and more queue pairs narrow the gap.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "sim/engine/network_bench.h"

namespace clustersim {
namespace {

// 1,024 GPUs, 8 per node on 8 rails, radix-64 full-bisection 3-tier Clos (one pod of 128 nodes),
// 64 MiB per pair, shift by half the GPUs: every flow crosses the aggregation tier.
ScenarioConfig shift_scenario(Routing routing, int qps, uint64_t seed) {
  ScenarioConfig cfg;
  cfg.name = "collision";
  cfg.cluster.gpus = 1024;
  cfg.network.fidelity = Fidelity::kFlow;
  cfg.network.switch_radix = 64;
  cfg.network.routing = routing;
  cfg.network.qps_per_connection = qps;
  cfg.network.ecmp_seed = seed;
  TrafficConfig traffic;
  traffic.shift = 512;
  traffic.bytes_per_pair = Bytes::mib(64);
  cfg.traffic = traffic;
  return cfg;
}

double slowdown(Routing routing, int qps, uint64_t seed = 1) {
  const engine::TrafficResult r = engine::run_traffic(shift_scenario(routing, qps, seed));
  EXPECT_EQ(r.incomplete_transfers, 0);
  return r.slowdown;
}

TEST(EcmpCollisions, SingleQpEcmpIsSeveralTimesIdealOverSeeds) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const double s = slowdown(Routing::kEcmp, 1, seed);
    std::printf("  ecmp, 1 QP, seed %llu: %.2fx ideal\n", static_cast<unsigned long long>(seed), s);
    EXPECT_GE(s, 3.0) << "seed " << seed;
  }
}

TEST(EcmpCollisions, DmodkAndSprayAreAboutIdeal) {
  const double dmodk = slowdown(Routing::kDmodK, 1);
  const double spray = slowdown(Routing::kSpray, 1);
  std::printf("  dmodk %.3fx, spray %.3fx ideal\n", dmodk, spray);
  EXPECT_LT(dmodk, 1.02);
  EXPECT_LT(spray, 1.02);
  EXPECT_GE(dmodk, 1.0 - 1e-9);
  EXPECT_GE(spray, 1.0 - 1e-9);
}

TEST(EcmpCollisions, MoreQueuePairsNarrowTheGap) {
  std::vector<double> s;
  for (const int qps : {1, 2, 4, 8}) {
    s.push_back(slowdown(Routing::kEcmp, qps));
    std::printf("  ecmp, %d QP: %.2fx ideal\n", qps, s.back());
  }
  for (size_t i = 1; i < s.size(); ++i) EXPECT_LT(s[i], s[i - 1]);
  EXPECT_GT(s.back(), 1.0);
}

}  // namespace
}  // namespace clustersim
