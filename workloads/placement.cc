// SPDX-License-Identifier: Apache-2.0
#include "workloads/placement.h"

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
  int n = 0;
  // Member i sits at i x stride; the first is GPU 0, on node 0.
  for (int i = 0; i < size_[d]; ++i) n += (i * stride_[d]) / gpus_per_node == 0 ? 1 : 0;
  return n > 0 ? n : 1;
}

}  // namespace clustersim::work
