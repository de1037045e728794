// SPDX-License-Identifier: Apache-2.0
// Lanes for a Chrome/Perfetto trace's complete ("X") events. Spans on one thread must be disjoint
// or nest: a viewer drops or misplaces one that starts inside another and ends after it. Tracks
// whose spans overlap that way (pipeline sends and receives in flight together, concurrent KV
// transfers) get a lane per span that fits: the trace writers (trace_writer.cc,
// inference_report.cc) put lane k > 0 of a track on a thread of its own.
#pragma once

#include <cstdint>
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

// The thread id of `track`'s lane `lane`, with `tracks` tracks per process: the track itself for
// lane 0, so traces without overlaps keep their ids.
inline int lane_tid(int track, int lane, int tracks) { return track + lane * tracks; }

}  // namespace clustersim::report::internal
