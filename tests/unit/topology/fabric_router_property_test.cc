// SPDX-License-Identifier: Apache-2.0
// Routing invariants over seeded sweeps of shapes, routing modes, seeds and random faults.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "tests/unit/topology/topology_test_configs.h"
#include "topology/fabric_router.h"

namespace clustersim::topo {
namespace {

using testing::cluster;
using testing::max_load;
using testing::network;
using testing::shift_loads;

struct Shape {
  const char* name;
  ClusterConfig cluster;
  NetworkConfig network;
  bool dmodk_collision_free;  // full bisection, fully populated, one NIC per GPU
};

std::vector<Shape> shapes() {
  return {
      {"3-tier rail k8", cluster(128, 4, 4), network(3, 8), true},
      {"3-tier rail k16 partial", cluster(800), network(3, 16), false},
      {"3-tier tor-oversub", cluster(192, 2, 2), network(3, 8, Wiring::kRailOptimized, 3.0), false},
      {"3-tier agg-oversub", cluster(192, 2, 2), network(3, 8, Wiring::kRailOptimized, 1.0, 3.0),
       false},
      {"3-tier per-server", cluster(1024, 4, 4), network(3, 16, Wiring::kTorPerServer), true},
      {"2-tier rail k64", cluster(2048), network(2, 64), true},
      {"2-tier 8 GPUs 4 NICs", cluster(256, 8, 4), network(2, 16), false},
  };
}

// Fails about `fraction` of the switch-to-switch cables, drawn with `rng`.
std::vector<FabricFault> random_faults(const Fabric& healthy, double fraction,
                                       std::mt19937_64& rng) {
  std::vector<FabricFault> faults;
  std::bernoulli_distribution fail(fraction);
  for (LinkTier t : {LinkTier::kTorAgg, LinkTier::kAggCore}) {
    for (int64_t c = 0; c < healthy.cable_count(t); ++c) {
      if (fail(rng))
        faults.push_back({std::string(to_string(t)) + ":" + std::to_string(c), 0.0, {}});
    }
  }
  return faults;
}

void expect_walk(const Fabric& f, GpuId s, GpuId d, const Path& p) {
  ASSERT_GE(p.size, s == d ? 0 : 2);
  for (int i = 0; i + 1 < p.size; ++i) {
    ASSERT_EQ(f.link_ends(p.link_ids[i]).to, f.link_ends(p.link_ids[i + 1]).from);
  }
  for (LinkId l : p.links()) ASSERT_FALSE(f.is_failed(l)) << f.link_name(l);
  if (p.size > 0 && f.server_of_gpu(s) != f.server_of_gpu(d)) {
    EXPECT_EQ(f.link_ends(p.link_ids[0]).from, f.node(NodeKind::kNic, f.nic_of_gpu(s)));
    EXPECT_EQ(f.link_ends(p.link_ids[p.size - 1]).to, f.node(NodeKind::kNic, f.nic_of_gpu(d)));
  }
}

TEST(RoutingProperty, PathsAreValidWalksAvoidingFaults) {
  std::mt19937_64 rng(42);
  for (const Shape& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    const Fabric healthy = build_fabric(shape.cluster, shape.network);
    NetworkConfig n = shape.network;
    n.faults = random_faults(healthy, 0.1, rng);
    const Fabric f = build_fabric(shape.cluster, n);
    std::uniform_int_distribution<GpuId> gpu(0, f.gpus() - 1);
    for (Routing mode : {Routing::kEcmp, Routing::kDmodK}) {
      const FabricRouter router(f, {mode, rng(), 1});
      int routed = 0;
      for (int i = 0; i < 2000; ++i) {
        const GpuId s = gpu(rng);
        const GpuId d = gpu(rng);
        if (!router.has_route(s, d)) continue;
        ++routed;
        expect_walk(f, s, d, router.route(s, d, static_cast<uint32_t>(i)));
      }
      EXPECT_GT(routed, 1000);  // 10% of fabric cables down still leaves most pairs connected
    }
  }
}

TEST(RoutingProperty, SprayDividesEachTierExactlyOnce) {
  std::mt19937_64 rng(7);
  for (const Shape& shape : shapes()) {
    SCOPED_TRACE(shape.name);
    const Fabric healthy = build_fabric(shape.cluster, shape.network);
    for (double fraction : {0.0, 0.1}) {
      NetworkConfig n = shape.network;
      n.faults = random_faults(healthy, fraction, rng);
      const Fabric f = build_fabric(shape.cluster, n);
      const FabricRouter router(f, {Routing::kSpray, 0, 1});
      std::uniform_int_distribution<GpuId> gpu(0, f.gpus() - 1);
      for (int i = 0; i < 300; ++i) {
        const GpuId s = gpu(rng);
        const GpuId d = gpu(rng);
        if (!router.has_route(s, d)) continue;
        std::map<std::pair<LinkTier, Direction>, double> totals;
        for (const LinkRange& h : router.spray(s, d).hops) {
          for (int k = 0; k < h.count; ++k) {
            const LinkId l = h.first + k * h.stride;
            ASSERT_FALSE(f.is_failed(l));
            totals[{f.link_tier(l), Fabric::link_direction(l)}] += h.share;
          }
        }
        for (const auto& [tier, total] : totals) ASSERT_NEAR(total, 1.0, 1e-9);
      }
    }
  }
}

TEST(RoutingProperty, DmodKIsCollisionFreeForEveryServerShift) {
  for (const Shape& shape : shapes()) {
    if (!shape.dmodk_collision_free) continue;
    SCOPED_TRACE(shape.name);
    const Fabric f = build_fabric(shape.cluster, shape.network);
    const FabricRouter router(f, {Routing::kDmodK, 0, 1});
    const int gpn = f.shape().gpus_per_node;
    for (int servers = 1; servers < f.servers(); servers += std::max(1, f.servers() / 17)) {
      ASSERT_EQ(max_load(shift_loads(router, servers * gpn)), 1) << "shift " << servers;
    }
  }
}

// D-mod-k on a rail-optimised fabric whose aggregation switches have fewer uplinks than a node has
// rails (radix 16, 3:1 at aggregation: 4 uplinks, 8 rails): a node pair's rails climb to
// different aggregation planes, so a shift to the next node puts one flow on each link. Before 2026-12-04 every rail took the same plane and two
// flows met on each core uplink (twice spray's time).
TEST(RoutingProperty, DmodKSpreadsANodePairsRailsOverPlanes) {
  const Fabric f = build_fabric(cluster(256), network(3, 16, Wiring::kRailOptimized, 1.0, 3.0));
  const FabricRouter router(f, {Routing::kDmodK, 0, 1});
  EXPECT_EQ(max_load(shift_loads(router, f.shape().gpus_per_node)), 1);
}

TEST(RoutingProperty, EcmpSpreadsPortsEvenlyOverUplinks) {
  // 20,000 ports of one NIC pair across pods: each of the u_t uplinks should get 1/u_t of them,
  // within 5 standard deviations of the binomial count.
  const Fabric f = build_fabric(cluster(1024), network(3, 16));
  for (uint64_t seed : {1u, 2u, 3u}) {
    const FabricRouter router(f, {Routing::kEcmp, seed, 1});
    const int u = f.shape().tor_up;
    std::vector<int> per_uplink(static_cast<size_t>(u), 0);
    const int flows = 20000;
    for (int port = 0; port < flows; ++port) {
      const Path p = router.route(0, 700, static_cast<uint32_t>(port));
      for (int j = 0; j < u; ++j)
        per_uplink[j] += p.link_ids[1] == f.tor_agg_link(0, j, Direction::kUp);
    }
    const double mean = static_cast<double>(flows) / u;
    const double sd = std::sqrt(flows * (1.0 / u) * (1 - 1.0 / u));
    for (int count : per_uplink) EXPECT_NEAR(count, mean, 5 * sd) << "seed " << seed;
  }
}

}  // namespace
}  // namespace clustersim::topo
