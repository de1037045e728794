// SPDX-License-Identifier: Apache-2.0
// What a network backend needs of the fabric: link capacities and the paths of a transfer's
// sub-flows. Backends see only this, so they work on any link set (tests use random ones).
#pragma once

#include <vector>

#include "sim/core/units.h"
#include "sim/network/network.h"

namespace clustersim::net {

// One sub-flow's route: link directions in order from source to destination, and its one-way
// latency (links plus switches traversed). A sprayed sub-flow spreads over parallel links:
// `shares[i]` is the fraction of its rate on links[i] (empty = the whole rate on every link).
struct Path {
  std::vector<LinkIndex> links;
  std::vector<double> shares;
  Time latency;
  // Empty, or the sizes of consecutive runs of `links` (summing to links.size()) that are whole
  // groups of parallel links: every path through one link of a group crosses all of them, with
  // one share, and a group's links have equal capacities (a healthy Clos sprayed per packet). A
  // backend may then treat a group as one link of their summed capacity: under max-min sharing
  // the members' loads are always equal, so the allocation is the same.
  std::vector<int32_t> groups;

  double share(size_t i) const { return shares.empty() ? 1.0 : shares[i]; }
};

class RouteSource {
 public:
  virtual ~RouteSource() = default;
  virtual int gpu_count() const = 0;
  virtual LinkIndex link_count() const = 0;
  // Capacity of one link direction; 0 = failed.
  virtual Bandwidth capacity(LinkIndex link) const = 0;
  // Replaces `out` with the sub-flow paths of a transfer from `src` to `dst` (src != dst): one
  // per queue pair, or one per sprayed path. The transfer's bytes are split evenly among them.
  // The same arguments always give the same paths. `connection` as in Network::send: 0 the pair's
  // own; another gives other source ports, so other ECMP choices (ignored where routes do not hash).
  virtual void paths(GpuId src, GpuId dst, uint32_t connection, std::vector<Path>& out) const = 0;
  void paths(GpuId src, GpuId dst, std::vector<Path>& out) const { paths(src, dst, 0, out); }
};

// Splits `size` into `parts` near-equal shares (the first size % parts get one byte more).
inline Bytes share_of(Bytes size, int parts, int index) {
  const int64_t base = size.n / parts;
  const int64_t extra = size.n % parts;
  return Bytes{base + (index < extra ? 1 : 0)};
}

}  // namespace clustersim::net
