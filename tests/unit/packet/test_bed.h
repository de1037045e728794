// SPDX-License-Identifier: Apache-2.0
// A Clos fabric, its routes, a hand-run clock and a congestion-controlled backend, for tests.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/config.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/make_network.h"
#include "sim/network/dcqcn/congestion_trace.h"
#include "topology/fabric.h"

namespace clustersim::net::testing {

// Actions in (time, scheduling) order, run by hand.
class QueueClock final : public Clock {
 public:
  Time now() const override { return now_; }
  TimerId at(Time when, std::function<void()> action) override {
    const TimerId id = next_++;
    queue_.emplace(std::pair{max(when, now_).as_ps(), id}, std::move(action));
    return id;
  }
  void cancel(TimerId id) override {
    for (auto it = queue_.begin(); it != queue_.end(); ++it) {
      if (it->first.second == id) {
        queue_.erase(it);
        return;
      }
    }
  }
  Time next_due() const override { return queue_.empty() ? Time::max() : Time::ps(queue_.begin()->first.first); }
  void run() {
    while (!queue_.empty()) {
      auto node = queue_.extract(queue_.begin());
      now_ = Time::ps(node.key().first);
      node.mapped()();
    }
  }
  // At most `actions` actions; whether none is left (a model that re-arms for ever fails the
  // test instead of hanging it).
  bool run_at_most(int64_t actions) {
    for (; actions > 0 && !queue_.empty(); --actions) {
      auto node = queue_.extract(queue_.begin());
      now_ = Time::ps(node.key().first);
      node.mapped()();
    }
    return queue_.empty();
  }

 private:
  Time now_ = Time::zero();
  TimerId next_ = 1;
  std::map<std::pair<int64_t, TimerId>, std::function<void()>> queue_;
};

// `nodes` servers of 8 GPUs and 8 NICs at 400 Gbps on a 2-tier Clos of radix-16 switches.
inline std::pair<ClusterConfig, NetworkConfig> small_clos(int nodes, Fidelity fidelity) {
  ClusterConfig c;
  c.gpus = nodes * 8;
  NetworkConfig n;
  n.tiers = 2;
  n.switch_radix = 16;
  n.fidelity = fidelity;
  n.qps_per_connection = 1;
  n.ecmp_seed = 1;
  return {c, n};
}

struct Bed {
  Bed(const ClusterConfig& cluster, const NetworkConfig& network)
      : fabric(topo::build_fabric(cluster, network)),
        routes(fabric, topo::routing_options(network)),
        net(make_network(network, routes, clock)) {}

  const CongestionTrace& trace() const { return dynamic_cast<const CongestionObservable&>(*net).congestion(); }

  topo::Fabric fabric;
  FabricRoutes routes;
  QueueClock clock;
  std::unique_ptr<Network> net;
};

}  // namespace clustersim::net::testing
