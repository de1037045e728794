// SPDX-License-Identifier: Apache-2.0
#include "workloads/placement.h"

#include <algorithm>
#include <stdexcept>

#include "sim/collectives/collective_flows.h"

namespace clustersim::work {

Placement::Placement(const std::string& order, int tp, int cp, int dp, int pp) : size_{tp, cp, dp, pp} {
  int stride = 1;
  size_t start = 0;
  int seen = 0;
  while (start < order.size()) {
    size_t dash = order.find('-', start);
    if (dash == std::string::npos) dash = order.size();
    const std::string name = order.substr(start, dash - start);
    int d = -1;
    if (name == "tp") d = 0;
    if (name == "cp") d = 1;
    if (name == "dp") d = 2;
    if (name == "pp") d = 3;
    if (d < 0 || (seen & (1 << d))) throw std::invalid_argument("bad placement order '" + order + "'");
    seen |= 1 << d;
    stride_[d] = stride;
    stride *= size_[d];
    start = dash + 1;
  }
  if (seen != 0xF) throw std::invalid_argument("placement order '" + order + "' misses a dimension");
}

int Placement::ranks_per_node(Dim along, int gpus_per_node) const {
  const int d = static_cast<int>(along);
  // Groups along `d` start at every GPU whose coordinate along d is 0; a group starting at b lies
  // over nodes as the one starting at b mod gpus_per_node does, so it suffices to walk those
  // offsets, built dimension by dimension (at most gpus_per_node of them).
  std::vector<char> offset(static_cast<size_t>(gpus_per_node), 0), next;
  offset[0] = 1;
  for (int k = 0; k < 4; ++k) {
    if (k == d || size_[k] == 1) continue;
    next.assign(offset.size(), 0);
    for (int r = 0; r < gpus_per_node; ++r) {
      if (!offset[r]) continue;
      for (int c = 0; c < size_[k]; ++c) next[(r + static_cast<int64_t>(c) * stride_[k]) % gpus_per_node] = 1;
    }
    offset.swap(next);
  }
  // Member i sits at b + i x stride. A group's collectives cross nodes at the pace of the node
  // holding the fewest of its members (a ring through it shares that node's fewer NICs), and the
  // step waits for the slowest group: the smallest count over every node any group touches.
  // A group split unevenly (3 + 3 + 2) runs its ring member to member (coll::collective_flows),
  // one edge out of each node: one GPU's NIC share, as one member per node.
  int fewest = size_[d];
  std::vector<int32_t> members(static_cast<size_t>(size_[d]));
  for (int b = 0; b < gpus_per_node; ++b) {
    if (!offset[b]) continue;
    for (int i = 0; i < size_[d]; ++i) members[static_cast<size_t>(i)] = b + i * stride_[d];
    fewest = std::min(fewest, coll::ring_members_per_node(members, gpus_per_node));
  }
  return std::max(1, fewest);
}

Placement placement_of(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  return Placement(p.placement, p.tp, p.cp, std::max(1, data_parallel_size(cfg)), p.pp);
}

bool groups_span_nodes(const ScenarioConfig& cfg, Dim d) {
  return placement_of(cfg).spans_nodes(d, cfg.cluster.gpus_per_node);
}

bool spans_nodes(const std::vector<int32_t>& line, int gpus_per_node) {
  return std::any_of(line.begin(), line.end(),
                     [&](int32_t g) { return g / gpus_per_node != line.front() / gpus_per_node; });
}

}  // namespace clustersim::work
