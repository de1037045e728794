// SPDX-License-Identifier: Apache-2.0
#include "sim/report/internal/trace_lanes.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace clustersim::report::internal {

std::vector<int> pack_lanes(const std::vector<LaneSpan>& spans) {
  std::vector<size_t> order(spans.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto key = [&spans](size_t i) {
    const LaneSpan& s = spans[i];
    return std::make_tuple(s.process, s.track, s.start, s.end, i);
  };
  std::sort(order.begin(), order.end(), [&key](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<int> lane(spans.size(), 0);
  std::vector<Time> ends;  // per lane of the current (process, track): its last span's end
  for (size_t k = 0; k < order.size(); ++k) {
    const LaneSpan& s = spans[order[k]];
    if (k == 0 || s.process != spans[order[k - 1]].process || s.track != spans[order[k - 1]].track) ends.clear();
    size_t l = 0;
    while (l < ends.size() && ends[l] > s.start) ++l;
    if (l == ends.size()) ends.push_back(s.end);
    ends[l] = s.end;
    lane[order[k]] = static_cast<int>(l);
  }
  return lane;
}

}  // namespace clustersim::report::internal
