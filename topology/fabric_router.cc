// SPDX-License-Identifier: Apache-2.0
// Clos routing by index arithmetic: uplink choice per tier, fault-aware usable sets, spraying.
#include "topology/fabric_router.h"

#include <algorithm>
#include <cassert>
#include <string>
#include <utility>
#include <vector>

namespace clustersim::topo {
namespace {

constexpr Direction kUp = Direction::kUp;
constexpr Direction kDown = Direction::kDown;

// The `index`-th value v in [0, n) with usable(v), and how many there are; -1 when none.
template <typename Usable>
int pick_usable(int n, uint64_t key, Usable usable, int* count_out = nullptr) {
  int count = 0;
  for (int v = 0; v < n; ++v) count += usable(v) ? 1 : 0;
  if (count_out) *count_out = count;
  if (count == 0) return -1;
  int target = static_cast<int>(key % static_cast<uint64_t>(count));
  for (int v = 0; v < n; ++v) {
    if (usable(v) && target-- == 0) return v;
  }
  assert(false && "unreachable");
  return -1;
}

}  // namespace

RoutingOptions routing_options(const NetworkConfig& network) {
  return RoutingOptions{network.routing, network.ecmp_seed, network.qps_per_connection};
}

FabricRouter::FabricRouter(const Fabric& fabric, RoutingOptions options)
    : fabric_(&fabric), options_(options) {
  assert(options_.qps_per_connection >= 1 && "qps_per_connection must be >= 1");
}

uint64_t FabricRouter::choice_key(int tier, NicId src, NicId dst, uint32_t port) const {
  if (options_.mode == Routing::kDmodK) {
    const Fabric& f = *fabric_;
    // Tier 0: the destination's port on its ToR; rail-optimised, plus its NIC's rail, so that a
    // node pair's rails climb to different aggregation planes (on the port alone, the same on
    // every rail's ToR, they all met on one plane, and where its aggregation switches have fewer
    // uplinks than the node has rails they collided: a shift at radix 16, 3:1, took 2x spray's
    // time before 2026-12-04). A server's own ToR already gives its NICs distinct ports. Still a
    // function of the destination alone, and within a ToR still one port per destination.
    return static_cast<uint64_t>(tier == 0 ? f.tor_port_of_nic(dst) + f.rail_of_nic(dst) : f.tor_in_pod(f.tor_of_nic(dst)));
  }
  return ecmp_hash(options_.seed, src, dst, port, tier);
}

Time FabricRouter::path_latency(const Path& p, int switches) const {
  Time t = static_cast<int64_t>(switches) * fabric_->switch_latency();
  for (LinkId l : p.links()) t += fabric_->latency(l);
  return t;
}

Path FabricRouter::route_nics(NicId src, NicId dst, uint32_t port) const {
  const Fabric& f = *fabric_;
  const ClosShape& s = f.shape();
  Path path;
  if (src == dst) return path;
  const LinkId first = f.host_link(src, kUp);
  const LinkId last = f.host_link(dst, kDown);
  auto cut = [&](const std::string& why) {
    return NoRoute("no route from nic:" + std::to_string(src) + " to nic:" + std::to_string(dst) +
                   ": " + why);
  };
  if (f.is_failed(first)) throw cut(f.link_name(first) + " is failed" + f.failed_by({first}));
  if (f.is_failed(last)) throw cut(f.link_name(last) + " is failed" + f.failed_by({last}));
  const int ts = f.tor_of_nic(src);
  const int td = f.tor_of_nic(dst);
  const int ps = f.pod_of_tor(ts);
  const int pd = f.pod_of_tor(td);
  path.push(first);
  int switches = 1;
  const bool faults = f.has_failures();
  auto between = [&] {
    return "tor:" + std::to_string(ts) + " (pod " + std::to_string(ps) +
           ") and tor:" + std::to_string(td) + " (pod " + std::to_string(pd) + ")";
  };
  // Why no path leaves ts or enters td: a ToR whose every link to the tier above is failed is named
  // as such (with the faults that did it) rather than every path through it (QA 2026-12-07).
  // Else every path between them is cut, by the faults on the two ToRs' links and (across pods)
  // their aggregation switches' core links.
  auto cut_at_tor = [&](const std::string& paths) -> NoRoute {
    std::vector<LinkId> on_paths;
    for (const auto& [tor, d] : {std::pair{ts, kUp}, std::pair{td, kDown}}) {
      std::vector<LinkId> links;
      for (int v = 0; v < s.tor_up; ++v) links.push_back(f.tor_agg_link(tor, v, d));
      if (std::all_of(links.begin(), links.end(), [&](LinkId l) { return f.is_failed(l); })) {
        return cut(std::string(d == kUp ? "every uplink of tor:" : "every downlink into tor:") + std::to_string(tor) +
                   " is failed" + f.failed_by(links));
      }
      on_paths.insert(on_paths.end(), links.begin(), links.end());
    }
    for (int v = 0; ps != pd && v < s.tor_up; ++v) {
      for (int w = 0; w < s.agg_up; ++w) {
        on_paths.push_back(f.agg_core_link(f.agg_of(ps, v), w, kUp));
        on_paths.push_back(f.agg_core_link(f.agg_of(pd, v), w, kDown));
      }
    }
    return cut("every " + paths + " path between " + between() + " is failed" + f.failed_by(on_paths));
  };
  if (ts != td && ps == pd) {
    const uint64_t key = choice_key(0, src, dst, port);
    int j = static_cast<int>(key % static_cast<uint64_t>(s.tor_up));
    if (faults) {
      j = pick_usable(s.tor_up, key, [&](int v) {
        return !f.is_failed(f.tor_agg_link(ts, v, kUp)) &&
               !f.is_failed(f.tor_agg_link(td, v, kDown));
      });
      if (j < 0) throw cut_at_tor(s.tiers == 2 ? "spine" : "aggregation");
    }
    path.push(f.tor_agg_link(ts, j, kUp));
    path.push(f.tor_agg_link(td, j, kDown));
    switches = 3;
  } else if (ps != pd) {
    const uint64_t key_j = choice_key(0, src, dst, port);
    const uint64_t key_m = choice_key(1, src, dst, port);
    int j = static_cast<int>(key_j % static_cast<uint64_t>(s.tor_up));
    int m = static_cast<int>(key_m % static_cast<uint64_t>(s.agg_up));
    if (faults) {
      auto core_ok = [&](int plane, int v) {
        return !f.is_failed(f.agg_core_link(f.agg_of(ps, plane), v, kUp)) &&
               !f.is_failed(f.agg_core_link(f.agg_of(pd, plane), v, kDown));
      };
      j = pick_usable(s.tor_up, key_j, [&](int v) {
        if (f.is_failed(f.tor_agg_link(ts, v, kUp)) || f.is_failed(f.tor_agg_link(td, v, kDown))) {
          return false;
        }
        for (int w = 0; w < s.agg_up; ++w) {
          if (core_ok(v, w)) return true;
        }
        return false;
      });
      if (j < 0) throw cut_at_tor("core");
      m = pick_usable(s.agg_up, key_m, [&](int v) { return core_ok(j, v); });
    }
    const int agg_s = f.agg_of(ps, j);
    const int agg_d = f.agg_of(pd, j);
    path.push(f.tor_agg_link(ts, j, kUp));
    path.push(f.agg_core_link(agg_s, m, kUp));
    path.push(f.agg_core_link(agg_d, m, kDown));
    path.push(f.tor_agg_link(td, j, kDown));
    switches = 5;
  }
  path.push(last);
  path.latency = path_latency(path, switches);
  return path;
}

Path FabricRouter::route(GpuId src, GpuId dst, uint32_t port) const {
  const Fabric& f = *fabric_;
  assert(src >= 0 && src < f.gpus() && dst >= 0 && dst < f.gpus() && "GPU id out of range");
  Path path;
  if (src == dst) return path;
  if (f.server_of_gpu(src) == f.server_of_gpu(dst)) {
    path.push(f.nvlink(src, kUp));
    path.push(f.nvlink(dst, kDown));
    for (LinkId l : path.links()) {
      if (f.is_failed(l)) {
        throw NoRoute("no route from gpu:" + std::to_string(src) +
                      " to gpu:" + std::to_string(dst) + ": " + f.link_name(l) + " is failed" + f.failed_by({l}));
      }
    }
    path.latency = path_latency(path, 0);
    return path;
  }
  try {
    return route_nics(f.nic_of_gpu(src), f.nic_of_gpu(dst), port);
  } catch (const NoRoute& e) {
    throw NoRoute("gpu:" + std::to_string(src) + " -> gpu:" + std::to_string(dst) + ": " +
                  e.what());
  }
}

bool FabricRouter::has_route(GpuId src, GpuId dst) const {
  try {
    route(src, dst, 0);
    return true;
  } catch (const NoRoute&) {
    return false;
  }
}

void FabricRouter::connection_paths(GpuId src, GpuId dst, uint32_t base_port,
                                    std::vector<Path>& out) const {
  out.clear();
  for (int q = 0; q < options_.qps_per_connection; ++q) {
    out.push_back(route(src, dst, base_port + static_cast<uint32_t>(q)));
  }
}

SprayRoute FabricRouter::spray(GpuId src, GpuId dst) const {
  const Fabric& f = *fabric_;
  const ClosShape& s = f.shape();
  SprayRoute out;
  const Path representative = route(src, dst, 0);  // throws NoRoute when cut off
  out.latency = representative.latency;
  const bool intra = f.server_of_gpu(src) == f.server_of_gpu(dst);
  if (representative.size <= 2 || intra) {
    for (LinkId l : representative.links()) out.hops.push_back(LinkRange{l, 1, 2, 1.0});
    return out;
  }
  const NicId ns = f.nic_of_gpu(src);
  const NicId nd = f.nic_of_gpu(dst);
  const int ts = f.tor_of_nic(ns);
  const int td = f.tor_of_nic(nd);
  const int ps = f.pod_of_tor(ts);
  const int pd = f.pod_of_tor(td);
  const bool cross = ps != pd;
  out.hops.push_back(LinkRange{f.host_link(ns, kUp), 1, 2, 1.0});

  if (!f.has_failures()) {
    const double tor_share = 1.0 / s.tor_up;
    out.hops.push_back(LinkRange{f.tor_agg_link(ts, 0, kUp), s.tor_up, 2, tor_share});
    if (cross) {
      // The u_t * u_a agg->core cables of one pod are contiguous (cable = agg * u_a + m).
      const int paths = s.tor_up * s.agg_up;
      const double core_share = 1.0 / paths;
      out.hops.push_back(LinkRange{f.agg_core_link(f.agg_of(ps, 0), 0, kUp), paths, 2, core_share});
      out.hops.push_back(
          LinkRange{f.agg_core_link(f.agg_of(pd, 0), 0, kDown), paths, 2, core_share});
    }
    out.hops.push_back(LinkRange{f.tor_agg_link(td, 0, kDown), s.tor_up, 2, tor_share});
  } else {
    // Every switch splits evenly over the next hops that still reach the destination.
    auto core_ok = [&](int plane, int m) {
      return !f.is_failed(f.agg_core_link(f.agg_of(ps, plane), m, kUp)) &&
             !f.is_failed(f.agg_core_link(f.agg_of(pd, plane), m, kDown));
    };
    std::vector<int> planes;
    std::vector<std::vector<int>> cores(static_cast<size_t>(s.tor_up));
    for (int j = 0; j < s.tor_up; ++j) {
      if (f.is_failed(f.tor_agg_link(ts, j, kUp)) || f.is_failed(f.tor_agg_link(td, j, kDown))) {
        continue;
      }
      if (cross) {
        for (int m = 0; m < s.agg_up; ++m) {
          if (core_ok(j, m)) cores[j].push_back(m);
        }
        if (cores[j].empty()) continue;
      }
      planes.push_back(j);
    }
    assert(!planes.empty() && "route() found a path");
    const double tor_share = 1.0 / static_cast<double>(planes.size());
    for (int j : planes) out.hops.push_back(LinkRange{f.tor_agg_link(ts, j, kUp), 1, 2, tor_share});
    if (cross) {
      for (int j : planes) {
        const double share = tor_share / static_cast<double>(cores[j].size());
        for (int m : cores[j]) {
          out.hops.push_back(LinkRange{f.agg_core_link(f.agg_of(ps, j), m, kUp), 1, 2, share});
          out.hops.push_back(LinkRange{f.agg_core_link(f.agg_of(pd, j), m, kDown), 1, 2, share});
        }
      }
    }
    for (int j : planes) {
      out.hops.push_back(LinkRange{f.tor_agg_link(td, j, kDown), 1, 2, tor_share});
    }
  }
  out.hops.push_back(LinkRange{f.host_link(nd, kDown), 1, 2, 1.0});
  return out;
}

uint32_t PortCounter::take(GpuId src, GpuId dst, int count) {
  assert(count >= 1 && "a connection takes at least one port");
  const uint64_t key =
      (static_cast<uint64_t>(static_cast<uint32_t>(src)) << 32) | static_cast<uint32_t>(dst);
  uint32_t& next = next_[key];
  const uint32_t base = next;
  next += static_cast<uint32_t>(count);
  return base;
}

}  // namespace clustersim::topo
