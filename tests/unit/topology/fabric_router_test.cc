// SPDX-License-Identifier: Apache-2.0
// Routes: validity, ECMP determinism and seeds, QPs, D-mod-k vs ECMP collisions, faults, spray.
#include "topology/fabric_router.h"

#include <gtest/gtest.h>

#include <map>

#include "tests/unit/topology/topology_test_configs.h"

namespace clustersim::topo {
namespace {

using testing::cluster;
using testing::max_load;
using testing::network;
using testing::shift_loads;

// 3 tiers, k = 8, full bisection, 4 GPUs / 4 NICs per server, 8 pods of 4 rail ToRs, 128 GPUs.
Fabric small_fabric(std::vector<FabricFault> faults = {}) {
  NetworkConfig n = network(3, 8);
  n.faults = std::move(faults);
  return build_fabric(cluster(128, 4, 4), n);
}

// 3 tiers, k = 16, full bisection, 8 rails: 1 group of 8 servers per pod, 16 pods, 1,024 GPUs.
Fabric medium_fabric() { return build_fabric(cluster(1024), network(3, 16)); }

RoutingOptions ecmp(uint64_t seed, int qps = 1) { return {Routing::kEcmp, seed, qps}; }
RoutingOptions dmodk() { return {Routing::kDmodK, 0, 1}; }

// Checks that `p` is a connected walk from src's NIC (or GPU) to dst's, of the right length and
// latency for where the two GPUs sit.
void expect_valid(const Fabric& f, GpuId src, GpuId dst, const Path& p) {
  SCOPED_TRACE("gpu " + std::to_string(src) + " -> " + std::to_string(dst));
  if (src == dst) {
    EXPECT_EQ(p.size, 0);
    return;
  }
  for (int i = 0; i + 1 < p.size; ++i) {
    EXPECT_EQ(f.link_ends(p.link_ids[i]).to, f.link_ends(p.link_ids[i + 1]).from);
  }
  if (f.server_of_gpu(src) == f.server_of_gpu(dst)) {
    ASSERT_EQ(p.size, 2);
    EXPECT_EQ(p.link_ids[0], f.nvlink(src, Direction::kUp));
    EXPECT_EQ(p.link_ids[1], f.nvlink(dst, Direction::kDown));
    EXPECT_EQ(p.latency, Time::us(2));  // nvlink_latency, half per link
    return;
  }
  const NicId ns = f.nic_of_gpu(src);
  const NicId nd = f.nic_of_gpu(dst);
  EXPECT_EQ(p.link_ids[0], f.host_link(ns, Direction::kUp));
  EXPECT_EQ(p.link_ids[p.size - 1], f.host_link(nd, Direction::kDown));
  const int ts = f.tor_of_nic(ns);
  const int td = f.tor_of_nic(nd);
  const int expected = ts == td ? 2 : f.pod_of_tor(ts) == f.pod_of_tor(td) ? 4 : 6;
  EXPECT_EQ(p.size, expected);
  // 2 host links + (size - 2) fabric links at 1 us, 500 ns per switch (size - 1 switches).
  EXPECT_EQ(p.latency, Time::us(p.size) + static_cast<int64_t>(p.size - 1) * Time::ns(500));
}

TEST(FabricRouter, EveryPathIsValid) {
  const Fabric f = small_fabric();
  for (const RoutingOptions& opt : {ecmp(7), dmodk()}) {
    const FabricRouter router(f, opt);
    for (GpuId s = 0; s < f.gpus(); ++s) {
      for (GpuId d = 0; d < f.gpus(); ++d) expect_valid(f, s, d, router.route(s, d, 3));
    }
  }
}

TEST(FabricRouter, EcmpIsDeterministicForASeed) {
  const Fabric f = medium_fabric();
  const FabricRouter a(f, ecmp(42));
  const FabricRouter b(f, ecmp(42));
  for (GpuId s = 0; s < f.gpus(); s += 7) {
    const GpuId d = (s * 31 + 500) % f.gpus();
    const Path pa = a.route(s, d, 5);
    const Path pb = b.route(s, d, 5);
    EXPECT_TRUE(
        std::equal(pa.links().begin(), pa.links().end(), pb.links().begin(), pb.links().end()));
  }
}

TEST(FabricRouter, DifferentSeedsAndPortsGiveDifferentPaths) {
  const Fabric f = medium_fabric();
  const FabricRouter a(f, ecmp(1));
  const FabricRouter b(f, ecmp(2));
  int pairs = 0;
  int seed_differs = 0;
  int port_differs = 0;
  for (GpuId s = 0; s < f.gpus(); s += 8) {
    const GpuId d = (s + 512) % f.gpus();  // another pod: 8 x 8 = 64 equal-cost paths
    const Path p1 = a.route(s, d, 0);
    const Path p2 = b.route(s, d, 0);
    const Path p3 = a.route(s, d, 1);
    ++pairs;
    seed_differs += std::equal(p1.links().begin(), p1.links().end(), p2.links().begin()) ? 0 : 1;
    port_differs += std::equal(p1.links().begin(), p1.links().end(), p3.links().begin()) ? 0 : 1;
  }
  // Two independent hashes agree on a path with probability 1/64; expect about 98% to differ.
  EXPECT_GT(seed_differs, pairs * 9 / 10);
  EXPECT_GT(port_differs, pairs * 9 / 10);
}

TEST(FabricRouter, ConnectionPathsUseConsecutivePorts) {
  const Fabric f = medium_fabric();
  const FabricRouter router(f, ecmp(3, 4));
  std::vector<Path> paths;
  router.connection_paths(0, 600, 10, paths);
  ASSERT_EQ(paths.size(), 4u);
  for (int q = 0; q < 4; ++q) {
    const Path expected = router.route(0, 600, 10 + q);
    EXPECT_TRUE(std::equal(paths[q].links().begin(), paths[q].links().end(),
                           expected.links().begin(), expected.links().end()));
  }
}

TEST(FabricRouter, DmodKHasNoCollisionsUnderShift) {
  // Full-bisection Clos: D-mod-k puts at most one flow of a server-shift permutation on any link.
  for (const Fabric& f : {small_fabric(), medium_fabric()}) {
    const FabricRouter router(f, dmodk());
    const int gpn = f.shape().gpus_per_node;
    for (int servers : {1, 2, 5, 13}) {
      EXPECT_EQ(max_load(shift_loads(router, servers * gpn)), 1) << "shift " << servers;
    }
  }
}

TEST(FabricRouter, DmodKHasNoCollisionsOnLeafSpineOrTorPerServer) {
  const Fabric leaf_spine = build_fabric(cluster(2048), network(2, 64));
  const Fabric per_server =
      build_fabric(cluster(1024, 4, 4), network(3, 16, Wiring::kTorPerServer));
  for (const Fabric* f : {&leaf_spine, &per_server}) {
    const FabricRouter router(*f, dmodk());
    EXPECT_EQ(max_load(shift_loads(router, f->shape().gpus_per_node)), 1);
  }
}

TEST(FabricRouter, EcmpWithOneQpCollidesUnderShift) {
  const Fabric f = medium_fabric();
  for (uint64_t seed : {0u, 1u, 2u}) {
    const FabricRouter router(f, ecmp(seed));
    // Shift by one pod (64 GPUs): each ToR sends 8 flows up over its 8 uplinks. They collide
    // unless the hash happens to be a permutation (8!/8^8 = 0.24% per ToR, 128 ToRs); a given
    // uplink carries 2 or more with probability 1 - (7/8)^8 - (7/8)^7 = 26%, so about 270 of
    // the 1,024 ToR uplinks.
    const auto load = shift_loads(router, 64);
    EXPECT_GE(max_load(load), 2) << "seed " << seed;
    int shared_uplinks = 0;
    for (int tor = 0; tor < f.shape().tors; ++tor) {
      for (int j = 0; j < f.shape().tor_up; ++j) {
        shared_uplinks += load[f.tor_agg_link(tor, j, Direction::kUp)] >= 2 ? 1 : 0;
      }
    }
    EXPECT_GT(shared_uplinks, 150) << "seed " << seed;
    EXPECT_LT(shared_uplinks, 400) << "seed " << seed;
  }
}

TEST(FabricRouter, FailedLinksAreAvoided) {
  // tor_agg:1 = ToR 0 uplink 1; agg_core:514 = agg 64 (pod 8, plane 0), core port 2.
  const Fabric healthy = medium_fabric();
  const Fabric f = build_fabric(cluster(1024), [] {
    NetworkConfig n = network(3, 16);
    n.faults = {{"tor_agg:1", 0.0, {}}, {"agg_core:514", 0.0, {}}};
    return n;
  }());
  const FabricRouter router(f, ecmp(9));
  const FabricRouter healthy_router(healthy, ecmp(9));
  int unchanged = 0;
  int pairs = 0;
  for (GpuId s = 0; s < f.gpus(); ++s) {
    for (GpuId d : {(s + 8) % 1024, (s + 64) % 1024, (s + 520) % 1024}) {
      const Path p = router.route(s, d, 0);
      expect_valid(f, s, d, p);
      for (LinkId l : p.links()) EXPECT_FALSE(f.is_failed(l)) << f.link_name(l);
      const NicId ns = f.nic_of_gpu(s);
      const NicId nd = f.nic_of_gpu(d);
      if (f.tor_of_nic(ns) != 0 && f.tor_of_nic(nd) != 0 && f.pod_of_tor(f.tor_of_nic(ns)) != 8 &&
          f.pod_of_tor(f.tor_of_nic(nd)) != 8) {
        // Faults elsewhere do not move this flow.
        const Path h = healthy_router.route(s, d, 0);
        ++pairs;
        unchanged += std::equal(p.links().begin(), p.links().end(), h.links().begin()) ? 1 : 0;
      }
    }
  }
  EXPECT_EQ(unchanged, pairs);
}

TEST(FabricRouter, NoRouteSaysWhy) {
  NetworkConfig n = network(3, 8);
  n.faults = {{"host:5", 0.0, {}},
              {"agg:1.0", 0.0, {}},
              {"agg:1.1", 0.0, {}},
              {"agg:1.2", 0.0, {}},
              {"agg:1.3", 0.0, {}}};
  const Fabric f = build_fabric(cluster(128, 4, 4), n);
  const FabricRouter router(f, ecmp(0));
  // GPU 5 uses NIC 5, whose host link is down.
  try {
    router.route(5, 100, 0);
    FAIL() << "expected NoRoute";
  } catch (const NoRoute& e) {
    EXPECT_NE(std::string(e.what()).find("host:5/up is failed (failed by host:5)"), std::string::npos) << e.what();
  }
  // Pod 1 (GPUs 16..31) lost all its aggs: cut off from every other pod and ToR. The message names
  // the ToR left without uplinks and the faults that did it (until 2026-12-07 "every core path
  // between tor:4 (pod 1) and ...", which blamed the healthy core).
  try {
    router.route(16, 100, 0);
    FAIL() << "expected NoRoute";
  } catch (const NoRoute& e) {
    EXPECT_NE(std::string(e.what()).find("every uplink of tor:4 is failed (failed by agg:1.0, agg:1.1, agg:1.2 and "
                                         "1 more)"),
              std::string::npos)
        << e.what();
  }
  try {
    router.route(100, 16, 0);
    FAIL() << "expected NoRoute";
  } catch (const NoRoute& e) {
    EXPECT_NE(std::string(e.what()).find("every downlink into tor:4 is failed"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(router.has_route(16, 17 + 4));  // same pod, other rail ToR: needs an agg
  EXPECT_TRUE(router.has_route(16, 20));       // same rail ToR: no agg needed
  EXPECT_TRUE(router.has_route(16, 17));       // same server: NVLink
}

// Paths cut where no ToR lost all its links name the tier the paths cross: in 2 tiers the
// spines, not an aggregation tier (QA 2026-12-07).
TEST(FabricRouter, NoRouteNamesTheTierItsPathsCross) {
  // Radix 8: 4 uplinks per leaf. Leaf 0 loses its uplinks to spines 0 and 1, leaf 1 its downlinks
  // from spines 2 and 3: no spine joins them, though each leaf keeps two links.
  NetworkConfig n = network(2, 8);
  n.faults = {{"tor_agg:0/up", 0.0, {}}, {"tor_agg:1/up", 0.0, {}}, {"tor_agg:6/down", 0.0, {}},
              {"tor_agg:7/down", 0.0, {}}};
  const Fabric f = build_fabric(cluster(32, 4, 4), n);
  ASSERT_EQ(f.shape().tor_up, 4);
  const FabricRouter router(f, ecmp(0));
  int to = -1;  // a GPU under leaf 1 on another server
  for (int gpu = 0; gpu < f.gpus() && to < 0; ++gpu) {
    if (f.tor_of_nic(f.nic_of_gpu(gpu)) == 1 && f.server_of_gpu(gpu) != f.server_of_gpu(0)) to = gpu;
  }
  ASSERT_GE(to, 0);
  try {
    router.route(0, to, 0);
    FAIL() << "expected NoRoute";
  } catch (const NoRoute& e) {
    EXPECT_NE(std::string(e.what()).find("every spine path between tor:0 (pod 0) and tor:1 (pod 0) is failed (failed by "
                                         "tor_agg:0/up, tor_agg:1/up, tor_agg:6/down and 1 more)"),
              std::string::npos)
        << e.what();
  }
}

// Total share per (tier, direction) of a sprayed route; each should be 1.
std::map<std::pair<LinkTier, Direction>, double> spray_totals(const Fabric& f,
                                                              const SprayRoute& r) {
  std::map<std::pair<LinkTier, Direction>, double> totals;
  for (const LinkRange& h : r.hops) {
    for (int i = 0; i < h.count; ++i) {
      const LinkId l = h.first + i * h.stride;
      EXPECT_FALSE(f.is_failed(l)) << f.link_name(l);
      totals[{f.link_tier(l), Fabric::link_direction(l)}] += h.share;
    }
  }
  return totals;
}

TEST(FabricRouter, SprayCoversEveryEqualCostLinkOnce) {
  const Fabric f = medium_fabric();
  const FabricRouter router(f, {Routing::kSpray, 0, 1});
  const SprayRoute r = router.spray(0, 600);  // pod 0 -> pod 9
  ASSERT_EQ(r.hops.size(), 6u);
  EXPECT_EQ(r.hops[1].count, 8);   // ToR uplinks
  EXPECT_EQ(r.hops[2].count, 64);  // 8 aggs x 8 core ports
  for (int j = 0; j < 8; ++j) {
    EXPECT_EQ(r.hops[1].first + 2 * j, f.tor_agg_link(0, j, Direction::kUp));
  }
  for (const auto& [key, total] : spray_totals(f, r)) EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_EQ(spray_totals(f, r).size(), 6u);
}

TEST(FabricRouter, SprayWithFaultsSkipsFailedLinks) {
  NetworkConfig n = network(3, 16);
  n.faults = {{"tor_agg:1", 0.0, {}}, {"agg_core:3", 0.0, {}}};  // ToR 0 uplink 1; agg 0.0 port 3
  const Fabric f = build_fabric(cluster(1024), n);
  const FabricRouter router(f, {Routing::kSpray, 0, 1});
  const auto totals = spray_totals(f, router.spray(0, 600));
  EXPECT_EQ(totals.size(), 6u);
  for (const auto& [key, total] : totals) EXPECT_NEAR(total, 1.0, 1e-12);
}

TEST(PortCounter, CountsUpPerPair) {
  PortCounter ports;
  EXPECT_EQ(ports.take(1, 2, 4), 0u);
  EXPECT_EQ(ports.take(1, 2, 4), 4u);
  EXPECT_EQ(ports.take(2, 1), 0u);
  EXPECT_EQ(ports.take(1, 2), 8u);
}

TEST(EcmpHash, EveryFieldMatters) {
  const uint64_t h = ecmp_hash(1, 2, 3, 4, 0);
  EXPECT_NE(h, ecmp_hash(2, 2, 3, 4, 0));
  EXPECT_NE(h, ecmp_hash(1, 3, 3, 4, 0));
  EXPECT_NE(h, ecmp_hash(1, 2, 4, 4, 0));
  EXPECT_NE(h, ecmp_hash(1, 2, 3, 5, 0));
  EXPECT_NE(h, ecmp_hash(1, 2, 3, 4, 1));
  EXPECT_NE(ecmp_hash(0, 2, 3, 4, 0), ecmp_hash(0, 3, 2, 4, 0));  // direction matters
}

}  // namespace
}  // namespace clustersim::topo
