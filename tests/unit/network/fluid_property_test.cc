// SPDX-License-Identifier: Apache-2.0
// FluidNetwork invariants over seeded random transfers on random link sets and small Clos
// fabrics: capacity never exceeded, bytes conserved, never faster than the bandwidth bound,
// everything completes, same seed same result.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <vector>

#include "manual_clock.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/flow/fluid_network.h"
#include "table_routes.h"
#include "topology/fabric.h"

namespace clustersim::net {
namespace {

using testing::ManualClock;
using testing::TableRoutes;

struct Outcome {
  std::vector<Time> finish;
  std::vector<LinkUsage> usage;
};

struct Send {
  GpuId src, dst;
  Bytes bytes;
  Time start;
};

std::vector<Send> random_sends(uint64_t seed, int gpus, int count) {
  std::mt19937_64 rng(seed);
  std::vector<Send> sends;
  for (int i = 0; i < count; ++i) {
    const auto src = static_cast<GpuId>(rng() % gpus);
    auto dst = static_cast<GpuId>(rng() % (gpus - 1));
    if (dst >= src) ++dst;
    // 0 - 8 MB, starts spread over the first 200 us, a few at the same instant.
    sends.push_back({src, dst, Bytes{static_cast<int64_t>(rng() % 8'000'001)},
                     Time::us(static_cast<double>(rng() % 5 * 50))});
  }
  return sends;
}

Outcome run(const RouteSource& routes, const std::vector<Send>& sends, Time tolerance, double rate_tolerance = 0.0) {
  ManualClock clock;
  FluidNetwork net(routes, clock, tolerance, rate_tolerance);
  Outcome out;
  out.finish.assign(sends.size(), Time::max());
  for (size_t i = 0; i < sends.size(); ++i) {
    clock.at(sends[i].start, [&, i] {
      net.send(sends[i].src, sends[i].dst, sends[i].bytes, [&out, i](Time t) { out.finish[i] = t; });
    });
  }
  clock.run();
  EXPECT_EQ(net.in_flight(), 0);
  out.usage = net.link_usage();
  return out;
}

void check_invariants(const RouteSource& routes, const std::vector<Send>& sends, const Outcome& out,
                      uint64_t seed) {
  std::vector<Path> paths;
  int64_t expected_bytes = 0;
  for (size_t i = 0; i < sends.size(); ++i) {
    const Send& s = sends[i];
    ASSERT_NE(out.finish[i], Time::max()) << "seed " << seed << " transfer " << i << " never completed";
    routes.paths(s.src, s.dst, paths);
    const int parts = static_cast<int>(paths.size());
    // Bound: every sub-flow needs its latency plus its bytes at its path's bottleneck.
    double bound_s = 0;
    for (int k = 0; k < parts; ++k) {
      const Bytes share = share_of(s.bytes, parts, k);
      double bottleneck = std::numeric_limits<double>::infinity();
      for (size_t h = 0; h < paths[k].links.size(); ++h) {
        bottleneck = std::min(bottleneck, routes.capacity(paths[k].links[h]).bytes_per_s / paths[k].share(h));
        expected_bytes += paths[k].share(h) == 1.0 ? share.n : bytes_of(paths[k].share(h) * share.as_double()).n;
      }
      bound_s = std::max(bound_s, paths[k].latency.as_s() + (share.n > 0 ? share.as_double() / bottleneck : 0.0));
    }
    EXPECT_GE(out.finish[i].as_ps(), (s.start + Time::s(bound_s)).as_ps() - 1)
        << "seed " << seed << " transfer " << i << " beat the bandwidth bound";
  }
  int64_t carried = 0;
  for (const LinkUsage& u : out.usage) {
    carried += u.bytes.n;
    EXPECT_LE(u.peak_utilisation, 1.0 + 1e-9) << "seed " << seed << ": a link carried more than its capacity";
  }
  EXPECT_EQ(carried, expected_bytes) << "seed " << seed << ": bytes not conserved";
}

TEST(FluidProperty, RandomLinkSets) {
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const TableRoutes routes = TableRoutes::random(seed, 6, 12);
    const auto sends = random_sends(seed, 6, 40);
    const Outcome a = run(routes, sends, Time::us(0.1));
    check_invariants(routes, sends, a, seed);
    const Outcome b = run(routes, sends, Time::us(0.1));
    EXPECT_EQ(a.finish, b.finish) << "seed " << seed << ": same input, different result";
  }
}

// 64 GPUs, 2 GPUs and 2 rails per node; a Clos of radix 8 (3 tiers: 16 GPUs per pod).
ClusterConfig small_cluster() {
  ClusterConfig cluster;
  cluster.gpus = 64;
  cluster.gpus_per_node = 2;
  cluster.nics_per_node = 2;
  return cluster;
}
NetworkConfig radix8(int tiers, Routing routing) {
  NetworkConfig network;
  network.tiers = tiers;
  network.switch_radix = 8;
  network.routing = routing;
  return network;
}

// Small 3-tier Clos: radix 8, 2 GPUs and 2 rails per node (16 GPUs per pod), 64 GPUs, 2 QPs.
TEST(FluidProperty, SmallClosFabrics) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    ClusterConfig cluster = small_cluster();
    NetworkConfig network = radix8(seed % 4 == 0 ? 2 : 3, seed % 3 == 0   ? Routing::kEcmp
                                                          : seed % 3 == 1 ? Routing::kDmodK
                                                                          : Routing::kSpray);
    network.wiring = seed % 2 == 0 ? Wiring::kRailOptimized : Wiring::kTorPerServer;
    network.qps_per_connection = 1 + static_cast<int>(seed % 3);
    network.ecmp_seed = seed;
    if (network.tiers == 2) cluster.gpus = 32;
    const topo::Fabric fabric = topo::build_fabric(cluster, network);
    const FabricRoutes routes(fabric, topo::routing_options(network));
    const auto sends = random_sends(seed, cluster.gpus, 150);
    const Outcome a = run(routes, sends, Time::us(0.1));
    check_invariants(routes, sends, a, seed);
    const Outcome b = run(routes, sends, Time::us(0.1));
    EXPECT_EQ(a.finish, b.finish) << "seed " << seed;
  }
}

// The same routes with Path::groups dropped: every sprayed link stays its own solver link.
class Ungrouped final : public RouteSource {
 public:
  explicit Ungrouped(const RouteSource& r) : r_(r) {}
  int gpu_count() const override { return r_.gpu_count(); }
  LinkIndex link_count() const override { return r_.link_count(); }
  Bandwidth capacity(LinkIndex l) const override { return r_.capacity(l); }
  using RouteSource::paths;
  void paths(GpuId src, GpuId dst, uint32_t connection, std::vector<Path>& out) const override {
    r_.paths(src, dst, connection, out);
    for (Path& p : out) p.groups.clear();
  }

 private:
  const RouteSource& r_;
};

// The same routes with a link of its own, never full, added to every sub-flow's path: no two
// sub-flows then share their links, and none is bundled with another. (Each call gives new own
// links, where RouteSource promises the same paths for the same arguments: FluidNetwork asks once
// per transfer, so only the bundling sees the difference.)
class Unbundled final : public RouteSource {
 public:
  explicit Unbundled(const RouteSource& r) : r_(r) {}
  int gpu_count() const override { return r_.gpu_count(); }
  LinkIndex link_count() const override { return r_.link_count() + kOwnLinks; }
  Bandwidth capacity(LinkIndex l) const override {
    return l < r_.link_count() ? r_.capacity(l) : Bandwidth{1e30};
  }
  using RouteSource::paths;
  void paths(GpuId src, GpuId dst, uint32_t connection, std::vector<Path>& out) const override {
    r_.paths(src, dst, connection, out);
    for (Path& p : out) {
      if (!p.groups.empty()) p.groups.push_back(1);
      p.links.push_back(r_.link_count() + next_++ % kOwnLinks);
      if (!p.shares.empty()) p.shares.push_back(1.0);
    }
  }

 private:
  static constexpr LinkIndex kOwnLinks = 4096;
  const RouteSource& r_;
  mutable LinkIndex next_ = 0;
};

// Sub-flows on the same links share one solver flow (FluidNetwork's bundles): exact, as each
// on its own would be (completion times, link bytes and peaks), with and without rate_tolerance.
TEST(FluidProperty, BundlesAreExact) {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    ClusterConfig cluster = small_cluster();
    NetworkConfig network = radix8(3, seed % 3 == 0 ? Routing::kEcmp : seed % 3 == 1 ? Routing::kDmodK : Routing::kSpray);
    network.wiring = seed % 2 == 0 ? Wiring::kRailOptimized : Wiring::kTorPerServer;
    const topo::Fabric fabric = topo::build_fabric(cluster, network);
    const FabricRoutes clos(fabric, topo::routing_options(network));
    const TableRoutes table = TableRoutes::random(seed, 6, 12);
    const bool on_clos = seed % 2 == 0;
    const RouteSource& routes = on_clos ? static_cast<const RouteSource&>(clos) : table;
    const auto sends = on_clos ? random_sends(seed, cluster.gpus, 400) : random_sends(seed, 6, 60);
    const double rate_tolerance = seed % 4 == 1 ? 0.01 : 0.0;
    const Outcome bundled = run(routes, sends, Time::us(0.1), rate_tolerance);
    const Outcome apart = run(Unbundled(routes), sends, Time::us(0.1), rate_tolerance);
    for (size_t i = 0; i < sends.size(); ++i) {
      EXPECT_NEAR(bundled.finish[i].as_s(), apart.finish[i].as_s(), 1e-12 + 1e-9 * apart.finish[i].as_s())
          << "seed " << seed << " transfer " << i;
    }
    for (LinkIndex l = 0; l < routes.link_count(); ++l) {
      const auto u = static_cast<size_t>(l);
      EXPECT_EQ(bundled.usage[u].bytes, apart.usage[u].bytes) << "seed " << seed << " link " << l;
      EXPECT_NEAR(bundled.usage[u].peak_utilisation, apart.usage[u].peak_utilisation, 1e-9) << "seed " << seed << " link " << l;
    }
  }
}

// Spraying over a healthy Clos: treating each group of parallel links as one link of their summed
// capacity (FluidNetwork, Path::groups) changes neither a completion time nor a link's bytes or
// peak; it only spares the solver thousands of links per flow at scale.
TEST(FluidProperty, GroupedSprayIsExact) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const ClusterConfig cluster = small_cluster();
    NetworkConfig network = radix8(3, Routing::kSpray);
    network.wiring = seed % 2 == 0 ? Wiring::kRailOptimized : Wiring::kTorPerServer;
    topo::Fabric fabric = topo::build_fabric(cluster, network);
    // Seeds 9 and 10: a degraded (not failed) switch; its groups have unequal links, kept apart.
    if (seed > 8) {
      ASSERT_FALSE(fabric.apply_fault({"agg:0.1", 0.5, Time::zero()}).has_value());
    }
    const FabricRoutes routes(fabric, topo::routing_options(network));
    std::vector<Path> probe;
    routes.paths(0, 63, probe);  // across pods
    ASSERT_FALSE(probe.empty());
    ASSERT_FALSE(probe[0].groups.empty()) << "a healthy sprayed path lists its groups";
    const auto sends = random_sends(seed, cluster.gpus, 150);
    const Outcome grouped = run(routes, sends, Time::us(0.1));
    const Outcome apart = run(Ungrouped(routes), sends, Time::us(0.1));
    for (size_t i = 0; i < sends.size(); ++i) {
      EXPECT_NEAR(grouped.finish[i].as_s(), apart.finish[i].as_s(), 1e-12 + 1e-9 * apart.finish[i].as_s())
          << "seed " << seed << " transfer " << i;
    }
    ASSERT_EQ(grouped.usage.size(), apart.usage.size());
    for (size_t l = 0; l < apart.usage.size(); ++l) {
      EXPECT_EQ(grouped.usage[l].bytes, apart.usage[l].bytes) << "seed " << seed << " link " << l;
      EXPECT_NEAR(grouped.usage[l].peak_utilisation, apart.usage[l].peak_utilisation, 1e-9)
          << "seed " << seed << " link " << l;
    }
  }
  // With a failed link the split depends on both ends: no groups.
  const NetworkConfig network = radix8(3, Routing::kSpray);
  topo::Fabric fabric = topo::build_fabric(small_cluster(), network);
  ASSERT_FALSE(fabric.apply_fault({"core:0", 0.0, Time::zero()}).has_value());
  std::vector<Path> probe;
  const FabricRoutes faulty(fabric, topo::routing_options(network));
  faulty.paths(0, 63, probe);
  EXPECT_TRUE(probe[0].groups.empty());
}

}  // namespace
}  // namespace clustersim::net
