// SPDX-License-Identifier: Apache-2.0
// A RouteSource for tests: explicit links and paths per GPU pair, or random ones from a seed.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "sim/network/route_source.h"

namespace clustersim::net::testing {

class TableRoutes final : public RouteSource {
 public:
  TableRoutes(int gpus, std::vector<Bandwidth> capacity) : gpus_(gpus), capacity_(std::move(capacity)) {}

  // The sub-flow paths of (src, dst), replacing earlier ones.
  void set(GpuId src, GpuId dst, std::vector<Path> paths) { table_[{src, dst}] = std::move(paths); }

  int gpu_count() const override { return gpus_; }
  LinkIndex link_count() const override { return static_cast<LinkIndex>(capacity_.size()); }
  Bandwidth capacity(LinkIndex l) const override { return capacity_[l]; }
  using RouteSource::paths;
  void paths(GpuId src, GpuId dst, uint32_t, std::vector<Path>& out) const override { out = table_.at({src, dst}); }

  // Random link set and paths: `links` links of 10-100 GB/s, every ordered GPU pair gets 1-3
  // sub-flows of 1-5 distinct links and 1-5 us latency.
  static TableRoutes random(uint64_t seed, int gpus, int links) {
    std::mt19937_64 rng(seed);
    auto uniform = [&rng](double lo, double hi) {
      return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
    };
    std::vector<Bandwidth> capacity;
    for (int l = 0; l < links; ++l) capacity.push_back(gbytes_per_s(uniform(10, 100)));
    TableRoutes routes(gpus, capacity);
    for (GpuId s = 0; s < gpus; ++s) {
      for (GpuId d = 0; d < gpus; ++d) {
        if (s == d) continue;
        std::vector<Path> paths(1 + rng() % 3);
        for (Path& p : paths) {
          const int hops = 1 + static_cast<int>(rng() % std::min(5, links));
          while (static_cast<int>(p.links.size()) < hops) {
            const auto l = static_cast<LinkIndex>(rng() % links);
            bool seen = false;
            for (const LinkIndex x : p.links) seen = seen || x == l;
            if (!seen) p.links.push_back(l);
          }
          p.latency = Time::us(uniform(1, 5));
        }
        routes.set(s, d, std::move(paths));
      }
    }
    return routes;
  }

 private:
  int gpus_;
  std::vector<Bandwidth> capacity_;
  std::map<std::pair<GpuId, GpuId>, std::vector<Path>> table_;
};

}  // namespace clustersim::net::testing
