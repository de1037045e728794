// SPDX-License-Identifier: Apache-2.0
// The candidates of a sweep: the cartesian product of its axes in a fixed order (first axis
// slowest), each with a stable id that does not depend on the order of axes or values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/yaml_tree.h"
#include "sim/report/sweep/sweep_spec.h"

namespace clustersim::sweep {

class CandidateSpace {
 public:
  explicit CandidateSpace(const SweepSpec& spec);

  int64_t size() const { return size_; }
  // Index of the chosen value on each axis; `index` in [0, size()).
  std::vector<int> choice(int64_t index) const;
  // 16 hex digits, a hash of "axis=value" pairs sorted by axis key.
  std::string id(int64_t index) const;
  // The base scenario tree with this candidate's values set.
  YamlNode tree(int64_t index) const;
  // "parallelism.tp=8 parallelism.pp=8"
  std::string label(int64_t index) const;
  const SweepSpec& spec() const { return spec_; }

 private:
  const SweepSpec& spec_;
  int64_t size_ = 1;
};

}  // namespace clustersim::sweep
