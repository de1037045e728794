// SPDX-License-Identifier: Apache-2.0
// Routes through a Fabric, computed on the fly: per-flow ECMP, D-mod-k, or per-packet spraying.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "sim/core/config.h"
#include "topology/fabric.h"

namespace clustersim::topo {

// One route: the link directions a flow crosses, source side first, and its one-way latency.
// Inter-node: host up, [tor_agg up, [agg_core up, agg_core down,] tor_agg down,] host down
// (2, 4 or 6 links). Intra-node: nvlink up, nvlink down. Same GPU: empty.
struct Path {
  static constexpr int kMaxLinks = 6;
  std::array<LinkId, kMaxLinks> link_ids{};
  int size = 0;
  Time latency;  // sum of link latencies + switch_latency per switch traversed (none on NVLink)

  std::span<const LinkId> links() const { return {link_ids.data(), static_cast<size_t>(size)}; }
  void push(LinkId l) { link_ids[size++] = l; }
};

// Link directions first, first + stride, ... (count of them), each carrying `share` of the flow.
struct LinkRange {
  LinkId first = 0;
  int32_t count = 1;
  int32_t stride = 2;
  double share = 1.0;
};

// A sprayed route: the flow divides over all equal-cost paths, every switch splitting its packets
// evenly over its usable next hops. Healthy fabric: one range per hop (at most 6, O(1) to build);
// with faults on the way, the ranges list each usable link. `latency`: one representative path.
struct SprayRoute {
  std::vector<LinkRange> hops;
  Time latency;
};

// How to pick among equal-cost paths.
//   kEcmp:  per flow, uplink = usable[hash(seed, src NIC, dst NIC, port, tier) % usable count]
//   kDmodK: uplink from the destination alone: ToR tier: dst's ToR port % u_t; agg tier: dst's
//           ToR index within its pod % u_a. On a fully populated full-bisection Clos with one NIC
//           per GPU, a shift by whole servers puts at most one flow on every link (a contiguous
//           block of destination servers has distinct (ToR port, ToR-in-pod) pairs per rail).
//   kSpray: route() behaves as kEcmp; spray() gives the even split the flow solver should use.
struct RoutingOptions {
  Routing mode = Routing::kEcmp;
  uint64_t seed = 0;
  int qps_per_connection = 1;
};
RoutingOptions routing_options(const NetworkConfig& network);

// splitmix64's output function (Steele, Lea, Flood, OOPSLA 2014; constants from Vigna's
// reference code): a bijective 64-bit mixer that passes BigCrush.
constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The ECMP hash of a flow at one tier (0 = ToR picking an agg, 1 = agg picking a core): chained
// splitmix64 over (seed, src, dst, port, tier), so every field changes every output bit.
constexpr uint64_t ecmp_hash(uint64_t seed, NicId src, NicId dst, uint32_t port, int tier) {
  uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ static_cast<uint32_t>(src));
  h = splitmix64(h ^ static_cast<uint32_t>(dst));
  h = splitmix64(h ^ port);
  return splitmix64(h ^ static_cast<uint64_t>(tier));
}

// No usable path remains between two endpoints (failed links or switches); what() names them and
// the element that cut them off.
class NoRoute : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Routes flows through one fabric with one policy. Cheap to copy; keeps a reference to `fabric`,
// which must outlive it. All methods are const and thread-safe; nothing is cached.
class FabricRouter {
 public:
  FabricRouter(const Fabric& fabric, RoutingOptions options);

  const Fabric& fabric() const { return *fabric_; }
  const RoutingOptions& options() const { return options_; }

  // The path of the flow with source port `port` from GPU `src` to GPU `dst`. O(1) on a healthy
  // path; O(u_t * u_a) when faults lie on the way. Failed links are never chosen; throws NoRoute
  // when none is left.
  Path route(GpuId src, GpuId dst, uint32_t port) const;
  // The same between two NICs (inter-node part only).
  Path route_nics(NicId src, NicId dst, uint32_t port) const;
  bool has_route(GpuId src, GpuId dst) const;

  // The qps_per_connection sub-flow paths of one transfer: ports base_port, base_port + 1, ...
  // (as NCCL's queue pairs of one connection). Each sub-flow carries 1/qps of the bytes.
  void connection_paths(GpuId src, GpuId dst, uint32_t base_port, std::vector<Path>& out) const;

  // Per-packet spraying (ideal load balance) from `src` to `dst`; throws NoRoute as route().
  SprayRoute spray(GpuId src, GpuId dst) const;

 private:
  uint64_t choice_key(int tier, NicId src, NicId dst, uint32_t port) const;
  Time path_latency(const Path& p, int switches) const;

  const Fabric* fabric_;
  RoutingOptions options_;
};

// Source ports per (source, destination) pair, counting up from 0 as NCCL's queue pairs do: each
// new connection takes the next `count` ports. Memory: one entry per pair that has sent.
class PortCounter {
 public:
  uint32_t take(GpuId src, GpuId dst, int count = 1);

 private:
  std::unordered_map<uint64_t, uint32_t> next_;
};

}  // namespace clustersim::topo
