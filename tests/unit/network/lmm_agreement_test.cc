// SPDX-License-Identifier: Apache-2.0
// Our fluid solver against SimGrid's LMM (the reference) on the same transfers and routes: every
// transfer's completion time within 1%, same bytes per link, peak loads close (a peak that lasts
// less than the merge tolerance, while merged completions wait, can differ).
#include <gtest/gtest.h>
#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/engine/network_bench.h"
#include "sim/engine/simgrid_clock.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/flow/fluid_network.h"
#include "sim/network/flow/lmm_network.h"
#include "topology/fabric.h"

namespace clustersim {
namespace {

struct Run {
  std::vector<double> finish_s;  // per transfer, from its own start
  std::vector<net::LinkUsage> usage;
};

struct Timed {
  engine::TrafficTransfer transfer;
  Time start;
};

// Runs `sends` on `network`, each at its start offset from now; the engine runs to completion.
Run run(net::Network& network, engine::SimGridClock& clock, const std::vector<Timed>& sends) {
  Run r;
  r.finish_s.assign(sends.size(), -1.0);
  const Time base = clock.now();
  for (size_t i = 0; i < sends.size(); ++i) {
    clock.at(base + sends[i].start, [&, i] {
      const Time started = clock.now();
      network.send(sends[i].transfer.src, sends[i].transfer.dst, sends[i].transfer.bytes,
                   [&r, i, started](Time t) { r.finish_s[i] = (t - started).as_s(); });
    });
  }
  engine::ensure_simgrid_platform();
  simgrid::s4u::Engine::get_instance()->run();
  r.usage = network.link_usage();
  return r;
}

// 3-tier Clos, radix 8, 2 GPUs and 2 rails per node: 16 GPUs per pod, 64 GPUs in 4 pods.
struct SmallClos {
  ClusterConfig cluster;
  NetworkConfig network;
  SmallClos(Routing routing, int qps, Wiring wiring = Wiring::kRailOptimized) {
    cluster.gpus = 64;
    cluster.gpus_per_node = 2;
    cluster.nics_per_node = 2;
    network.tiers = 3;
    network.switch_radix = 8;
    network.wiring = wiring;
    network.routing = routing;
    network.qps_per_connection = qps;
    network.ecmp_seed = 7;
  }
};

void expect_agreement(const SmallClos& setup, const std::vector<Timed>& sends) {
  const topo::Fabric fabric = topo::build_fabric(setup.cluster, setup.network);
  const net::FabricRoutes routes(fabric, topo::routing_options(setup.network));
  simgrid::s4u::Engine::get_instance();
  engine::SimGridClock clock;
  Run lmm, fluid;
  {
    net::LmmNetwork network(routes, clock);
    lmm = run(network, clock, sends);
  }
  {
    net::FluidNetwork network(routes, clock, setup.network.merge_tolerance);
    fluid = run(network, clock, sends);
  }
  double worst = 0;
  for (size_t i = 0; i < sends.size(); ++i) {
    ASSERT_GT(lmm.finish_s[i], 0) << "transfer " << i << " did not complete under LMM";
    ASSERT_GT(fluid.finish_s[i], 0) << "transfer " << i << " did not complete under fluid";
    const double error = std::abs(fluid.finish_s[i] - lmm.finish_s[i]) / lmm.finish_s[i];
    worst = std::max(worst, error);
    EXPECT_LT(error, 0.01) << "transfer " << i << ": fluid " << fluid.finish_s[i] << " s, LMM "
                           << lmm.finish_s[i] << " s";
  }
  for (size_t l = 0; l < lmm.usage.size(); ++l) {
    EXPECT_EQ(fluid.usage[l].bytes, lmm.usage[l].bytes) << fabric.link_name(static_cast<topo::LinkId>(l));
    EXPECT_NEAR(fluid.usage[l].peak_utilisation, lmm.usage[l].peak_utilisation, 0.2)
        << fabric.link_name(static_cast<topo::LinkId>(l));
    EXPECT_LE(lmm.usage[l].peak_utilisation, 1 + 1e-6);
    EXPECT_LE(fluid.usage[l].peak_utilisation, 1 + 1e-9);
  }
  std::printf("  %zu transfers, worst completion-time difference fluid vs LMM: %.4f%%\n", sends.size(),
              100 * worst);
}

std::vector<Timed> at_zero(const std::vector<engine::TrafficTransfer>& transfers) {
  std::vector<Timed> out;
  for (const auto& t : transfers) out.push_back({t, Time::zero()});
  return out;
}

std::vector<Timed> pattern(const SmallClos& s, TrafficPattern p, Bytes bytes, int shift = 0) {
  TrafficConfig traffic;
  traffic.pattern = p;
  traffic.bytes_per_pair = bytes;
  traffic.shift = shift;
  traffic.seed = 3;
  traffic.incast_senders = 12;
  return at_zero(engine::make_traffic(s.cluster, traffic));
}

TEST(FluidVsLmm, ShiftWithEcmpCollisions) {
  const SmallClos s(Routing::kEcmp, 1);
  expect_agreement(s, pattern(s, TrafficPattern::kShift, Bytes::mib(16), 32));
}

TEST(FluidVsLmm, ShiftWithQueuePairs) {
  const SmallClos s(Routing::kEcmp, 4);
  expect_agreement(s, pattern(s, TrafficPattern::kShift, Bytes::mib(16), 20));
}

TEST(FluidVsLmm, RandomPermutation) {
  const SmallClos s(Routing::kEcmp, 2, Wiring::kTorPerServer);
  expect_agreement(s, pattern(s, TrafficPattern::kRandomPermutation, Bytes::mib(8)));
}

TEST(FluidVsLmm, Incast) {
  const SmallClos s(Routing::kDmodK, 1);
  expect_agreement(s, pattern(s, TrafficPattern::kIncast, Bytes::mib(4)));
}

TEST(FluidVsLmm, AllToAll) {
  const SmallClos s(Routing::kEcmp, 1);
  expect_agreement(s, pattern(s, TrafficPattern::kAllToAll, Bytes::kib(256)));
}

// Transfers of random sizes starting at random times, so flows join and leave mid-way.
TEST(FluidVsLmm, StaggeredRandomTransfers) {
  const SmallClos s(Routing::kEcmp, 2);
  std::mt19937_64 rng(11);
  std::vector<Timed> sends;
  for (int i = 0; i < 300; ++i) {
    const auto src = static_cast<net::GpuId>(rng() % 64);
    auto dst = static_cast<net::GpuId>(rng() % 63);
    if (dst >= src) ++dst;
    sends.push_back({{src, dst, Bytes{static_cast<int64_t>(1 + rng() % 4'000'000)}},
                     Time::us(static_cast<double>(rng() % 400))});
  }
  expect_agreement(s, sends);
}

}  // namespace
}  // namespace clustersim
