// SPDX-License-Identifier: Apache-2.0
// Lanes for a Chrome/Perfetto trace's complete ("X") events. Spans on one thread must be disjoint
// or nest: a viewer drops or misplaces one that starts inside another and ends after it. Tracks
// whose spans overlap that way (pipeline sends and receives in flight together, concurrent KV
// transfers) get a lane per span that fits: the trace writers (trace_writer.cc,
// inference_report.cc) put lane k > 0 of a track on a thread of its own.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/units.h"

namespace clustersim::report::internal {

struct LaneSpan {
  int64_t process = 0;  // the trace's pid
  int track = 0;        // the track (thread) it belongs to
  Time start, end;
};

// For each span, its lane on its (process, track): the lowest whose spans so far, taken in order
// of start, all ended by its start. Deterministic; 0 for every span of a track without overlaps.
std::vector<int> pack_lanes(const std::vector<LaneSpan>& spans);

// The lanes each (process, track) of `spans` needs, given their `lanes` (pack_lanes'): 1 for a
// track without spans or overlaps.
class LaneCounts {
 public:
  LaneCounts(const std::vector<LaneSpan>& spans, const std::vector<int>& lanes);
  int of(int64_t process, int track) const;

 private:
  std::map<std::pair<int64_t, int>, int> count_;
};

// The thread id of `track`'s lane `lane`, with `tracks` tracks per process: the track itself for
// lane 0, so traces without overlaps keep their ids.
inline int lane_tid(int track, int lane, int tracks) { return track + lane * tracks; }

// The metadata events naming `track`'s `lanes` lanes of process `pid` ("pp", "pp 2", ...) and
// keeping them together in the viewer's order (thread_name and thread_sort_index, per lane).
std::vector<std::string> lane_metadata(int64_t pid, int track, int lanes, int tracks, const std::string& name);

}  // namespace clustersim::report::internal
