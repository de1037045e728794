// SPDX-License-Identifier: Apache-2.0
#include "workloads/placement.h"

#include <algorithm>
#include <stdexcept>

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

int Placement::first_group_ranks_per_node(Dim along, int gpus_per_node) const {
  const int d = static_cast<int>(along);
  // Member i sits at GPU i x stride. The group's collectives cross nodes at the pace of the node
  // holding the fewest of its members (a ring through it shares that node's fewer NICs): the
  // smallest count over the nodes the group touches.
  int fewest = size_[d];
  int node = -1, count = 0;
  for (int i = 0; i < size_[d]; ++i) {
    const int here = (i * stride_[d]) / gpus_per_node;  // members come in node order
    if (here != node) {
      if (count > 0) fewest = std::min(fewest, count);
      node = here;
      count = 0;
    }
    ++count;
  }
  if (count > 0) fewest = std::min(fewest, count);
  return std::max(1, fewest);
}

Placement placement_of(const ScenarioConfig& cfg) {
  const ParallelismConfig& p = cfg.parallelism;
  return Placement(p.placement, p.tp, p.cp, std::max(1, data_parallel_size(cfg)), p.pp);
}

bool spans_nodes(const std::vector<int32_t>& line, int gpus_per_node) {
  return std::any_of(line.begin(), line.end(),
                     [&](int32_t g) { return g / gpus_per_node != line.front() / gpus_per_node; });
}

}  // namespace clustersim::work
