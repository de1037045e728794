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

LaneCounts::LaneCounts(const std::vector<LaneSpan>& spans, const std::vector<int>& lanes) {
  for (size_t i = 0; i < spans.size(); ++i) {
    int& n = count_[{spans[i].process, spans[i].track}];
    n = std::max(n, lanes[i] + 1);
  }
}

int LaneCounts::of(int64_t process, int track) const {
  const auto it = count_.find({process, track});
  return it == count_.end() ? 1 : it->second;
}

std::vector<std::string> lane_metadata(int64_t pid, int track, int lanes, int tracks, const std::string& name) {
  std::vector<std::string> out;
  const std::string p = std::to_string(pid);
  for (int lane = 0; lane < lanes; ++lane) {
    const std::string tid = std::to_string(lane_tid(track, lane, tracks));
    out.push_back("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + p + ",\"tid\":" + tid + ",\"args\":{\"name\":\"" +
                  name + (lane > 0 ? " " + std::to_string(lane + 1) : std::string()) + "\"}}");
    out.push_back("{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"pid\":" + p + ",\"tid\":" + tid +
                  ",\"args\":{\"sort_index\":" + std::to_string(track * 1000 + lane) + "}}");
  }
  return out;
}

}  // namespace clustersim::report::internal
