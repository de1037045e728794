// SPDX-License-Identifier: Apache-2.0
// Rank placement: which GPU holds the rank at (tp, cp, dp, pp) coordinates under an order such as
// Megatron-LM's default tp-cp-dp-pp (TP fastest, so a TP group fills consecutive GPUs of a node).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/config.h"

namespace clustersim::work {

enum class Dim { kTp = 0, kCp = 1, kDp = 2, kPp = 3 };

// GPU = sum over dimensions of coordinate x stride, strides growing in `order` (first fastest).
// With tp first and tp dividing gpus_per_node, each TP group sits in one node and each of its
// ranks keeps the same local index (rail) across the DP and PP neighbours it talks to.
class Placement {
 public:
  // `order`: a valid parallelism.placement string ("tp-cp-dp-pp"); sizes must be >= 1.
  Placement(const std::string& order, int tp, int cp, int dp, int pp);

  int gpu(int tp, int cp, int dp, int pp) const {
    return tp * stride_[0] + cp * stride_[1] + dp * stride_[2] + pp * stride_[3];
  }
  int size(Dim d) const { return size_[static_cast<int>(d)]; }
  // The inverse of gpu(): the coordinate of `gpu` along `d` (straggler hooks map a slow GPU to
  // its rank group with it). Precondition: 0 <= gpu < gpus().
  int coord(int gpu, Dim d) const { return gpu / stride_[static_cast<int>(d)] % size_[static_cast<int>(d)]; }
  int gpus() const { return size_[0] * size_[1] * size_[2] * size_[3]; }
  // Members of a group along `along` per node, nodes of `gpus_per_node` GPUs, as a collective over
  // the slowest group sees them: the count on each node when every such group splits evenly, 1
  // when one splits unevenly (its ring runs member to member, one edge out of each node). Where
  // the group size does not divide the node, groups other than the first can straddle nodes the
  // first does not (dp 6 on 8-GPU nodes: the first inside node 0, the second over nodes 0 and 1).
  int ranks_per_node(Dim along, int gpus_per_node) const;
  // Whether some group along `along` holds GPUs of more than one node (its traffic leaves the node).
  bool spans_nodes(Dim along, int gpus_per_node) const {
    return size(along) > 1 && ranks_per_node(along, gpus_per_node) < size(along);
  }

 private:
  std::array<int, 4> size_{};
  std::array<int, 4> stride_{};
};

// The scenario's placement: parallelism.placement over its tp, cp, data-parallel size (at least
// 1) and pp.
Placement placement_of(const ScenarioConfig& cfg);

// Placement::spans_nodes of the scenario's placement: whether its groups along `d` (its TP or CP
// groups, say) hold GPUs of more than one node.
bool groups_span_nodes(const ScenarioConfig& cfg, Dim d);

// Whether the GPUs of `line` (a group, ring or send pair, as GPU indices) sit on more than one node
// of `gpus_per_node` GPUs: only such lines reach the NICs and the fabric.
bool spans_nodes(const std::vector<int32_t>& line, int gpus_per_node);

}  // namespace clustersim::work
