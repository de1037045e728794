// SPDX-License-Identifier: Apache-2.0
// flow+dcqcn against the packet level on incast, an ECMP collision and ring all-reduce: prints
// the three-level table (packet, flow+dcqcn and its error, flow and its error) and holds
// flow+dcqcn within 10% of the packet level's completion time on every case.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "sim/core/scenario.h"
#include "sim/engine/event_queue_clock.h"
#include "sim/engine/network_bench.h"
#include "sim/network/dcqcn/fluid_dcqcn_network.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/make_network.h"
#include "sim/network/packet/packet_network.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim {
namespace {

struct LevelsCase {
  const char* name;
  std::vector<std::string> overrides;  // on scenarios/net-incast-32.yaml
};

// The packet level is the reference (DESIGN.md section 4: each level is checked against the next
// finer one). Budget: 10% on the completion time of the whole pattern (issue #6).
constexpr double kBudget = 0.10;

// Both congestion-controlled levels are random processes: RED marks packets at random (packet)
// and each CNP leaves with the first marked packet, whose arrival the fluid level draws (its
// hazard reaches an exponential draw). Under contention the pattern's completion time, set by
// the unluckiest flow, moves by about +-12% with the seed at the packet level itself, so one run
// cannot be held to 10%: each level runs these seeds on the same routes and the means are compared.
constexpr int kSeeds = 16;

struct Spread {
  double mean_ms = 0, min_ms = 0, max_ms = 0, wall_s = 0;
  int64_t cnps = 0, pauses = 0;  // summed over the seeds
};

// Completion of the whole pattern (last byte of the last transfer), in ms.
double run_once(net::Network& network, engine::EventQueueClock& clock,
                const std::vector<engine::TrafficTransfer>& transfers) {
  Time last = Time::zero();
  int completed = 0;
  for (const engine::TrafficTransfer& t : transfers) {
    network.send(t.src, t.dst, t.bytes, [&](Time when) {
      last = max(last, when);
      ++completed;
    });
  }
  clock.run();
  EXPECT_EQ(completed, static_cast<int>(transfers.size()));
  return last.as_us() / 1e3;
}

// `fidelity` flow+dcqcn or packet over kSeeds marking seeds (one when nothing was marked); flow once.
Spread measure(const ScenarioConfig& cfg, Fidelity fidelity, const std::vector<engine::TrafficTransfer>& transfers) {
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file);
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));
  Spread s;
  s.min_ms = 1e300;
  double sum = 0;
  int done = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int seed = 1; seed <= kSeeds; ++seed) {
    engine::EventQueueClock clock;
    std::unique_ptr<net::Network> network;
    if (fidelity == Fidelity::kPacket) {
      network = std::make_unique<net::PacketNetwork>(routes, net::packet_fabric(fabric), clock, cfg.network.dcqcn, seed);
    } else if (fidelity == Fidelity::kFlowDcqcn) {
      network = std::make_unique<net::FluidDcqcnNetwork>(routes, net::packet_fabric(fabric), clock, cfg.network.dcqcn, seed);
    } else {
      NetworkConfig flow = cfg.network;
      flow.fidelity = Fidelity::kFlow;
      network = net::make_network(flow, routes, clock);
    }
    const double ms = run_once(*network, clock, transfers);
    sum += ms;
    ++done;
    s.min_ms = std::min(s.min_ms, ms);
    s.max_ms = std::max(s.max_ms, ms);
    const auto* cc = dynamic_cast<const net::CongestionObservable*>(network.get());
    if (cc == nullptr) break;
    s.cnps += cc->congestion().counters.cnps;
    s.pauses += cc->congestion().counters.pauses;
    if (cc->congestion().counters.ecn_marks == 0) break;  // nothing was drawn: every seed runs the same
  }
  s.mean_ms = sum / done;
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

TEST(DcqcnLevels, FlowDcqcnWithinTenPercentOfPacket) {
  const std::vector<LevelsCase> cases = {
      // 32 senders (local rank 0 of nodes 1..32) to GPU 0 on a 3-tier Clos: 32 x 64 MiB.
      {"incast-32", {}},
      // GPU i -> GPU i + 9 on 16 servers, 2 tiers of radix-16 switches: every flow leaves its rail
      // ToR, and random ECMP puts up to four on one ToR uplink, some of them through a second
      // congested downlink. DCQCN leaves the colliding flows with unequal rates once the queue
      // drains (no marks, no more convergence), so the slowest one sets the time.
      {"ecmp-collision-2tier",
       {"cluster.gpus=128", "network.tiers=2", "network.switch_radix=16", "traffic.pattern=shift",
        "traffic.shift=9", "traffic.bytes_per_pair=32MiB", "network.ecmp_seed=3"}},
      // NCCL ring all-reduce, one ring per rail, on 2 and 8 servers.
      {"ring-allreduce-16",
       {"cluster.gpus=16", "network.tiers=2", "traffic.pattern=ring_allreduce", "traffic.bytes_per_pair=256MiB"}},
      {"ring-allreduce-64",
       {"cluster.gpus=64", "network.tiers=2", "traffic.pattern=ring_allreduce", "traffic.bytes_per_pair=256MiB"}},
  };
  const std::string path = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/net-incast-32.yaml";
  std::printf("completion of the whole pattern, mean over %d marking seeds (one when nothing is marked) [min - max]\n",
              kSeeds);
  std::printf("%-22s %26s %34s %22s\n", "case", "packet ms", "flow+dcqcn ms (err)", "flow ms (err)");
  for (const LevelsCase& c : cases) {
    const ScenarioConfig cfg = load_scenario(path, c.overrides);
    const std::vector<engine::TrafficTransfer> transfers = engine::make_traffic(cfg.cluster, *cfg.traffic);
    const Spread packet = measure(cfg, Fidelity::kPacket, transfers);
    const Spread fluid = measure(cfg, Fidelity::kFlowDcqcn, transfers);
    const Spread flow = measure(cfg, Fidelity::kFlow, transfers);
    const double fluid_err = (fluid.mean_ms - packet.mean_ms) / packet.mean_ms;
    const double flow_err = (flow.mean_ms - packet.mean_ms) / packet.mean_ms;
    std::printf("%-22s %8.3f [%7.3f - %7.3f] %8.3f [%7.3f - %7.3f] (%+5.1f%%) %13.3f (%+5.1f%%)\n", c.name,
                packet.mean_ms, packet.min_ms, packet.max_ms, fluid.mean_ms, fluid.min_ms, fluid.max_ms,
                100 * fluid_err, flow.mean_ms, 100 * flow_err);
    std::printf("%-22s   packet: %.2f s wall, cnps %lld, pauses %lld; flow+dcqcn: %.2f s wall, cnps %lld, pauses %lld\n",
                "", packet.wall_s, static_cast<long long>(packet.cnps), static_cast<long long>(packet.pauses),
                fluid.wall_s, static_cast<long long>(fluid.cnps), static_cast<long long>(fluid.pauses));
    EXPECT_LT(std::abs(fluid_err), kBudget) << c.name;
  }
}

}  // namespace
}  // namespace clustersim
