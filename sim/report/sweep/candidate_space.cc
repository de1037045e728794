// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/candidate_space.h"

#include <algorithm>
#include <cassert>
#include <utility>

namespace clustersim::sweep {

CandidateSpace::CandidateSpace(const SweepSpec& spec) : spec_(spec), size_(spec.candidate_count()) {}

std::vector<int> CandidateSpace::choice(int64_t index) const {
  assert(index >= 0 && index < size_ && "candidate index out of range");
  std::vector<int> c(spec_.axes.size());
  for (size_t i = spec_.axes.size(); i-- > 0;) {
    const auto n = static_cast<int64_t>(spec_.axes[i].values.size());
    c[i] = static_cast<int>(index % n);
    index /= n;
  }
  return c;
}

std::string CandidateSpace::id(int64_t index) const {
  const std::vector<int> c = choice(index);
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0; i < c.size(); ++i) pairs.emplace_back(spec_.axes[i].key, spec_.axes[i].values[c[i]].label);
  std::sort(pairs.begin(), pairs.end());
  std::string text;
  for (const auto& [k, v] : pairs) text += k + "=" + v + "\n";
  return hash_hex(text);
}

YamlNode CandidateSpace::tree(int64_t index) const {
  YamlNode t = spec_.base;
  const std::vector<int> c = choice(index);
  for (size_t i = 0; i < c.size(); ++i) {
    for (const auto& [path, value] : spec_.axes[i].values[c[i]].sets) set_path(t, path, value);
  }
  return t;
}

std::string CandidateSpace::label(int64_t index) const {
  const std::vector<int> c = choice(index);
  std::string s;
  for (size_t i = 0; i < c.size(); ++i) {
    s += (i ? " " : "") + spec_.axes[i].key + "=" + spec_.axes[i].values[c[i]].label;
  }
  return s;
}

}  // namespace clustersim::sweep
