// SPDX-License-Identifier: Apache-2.0
// What the congestion-controlled levels record: counters, per-port queue length and per-flow
// rate over time, per-link marks and pauses. Reports read it; models only append.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/core/units.h"
#include "sim/network/network.h"

namespace clustersim::net {

struct CongestionCounters {
  int64_t packets = 0;      // data packets delivered (packet level)
  int64_t ecn_marks = 0;    // packets (or fluid packet equivalents) marked CE
  int64_t cnps = 0;         // CNPs sent by receivers
  int64_t cuts = 0;         // DCQCN rate cuts at senders
  int64_t pauses = 0;       // PFC XOFF frames
  int64_t resumes = 0;      // PFC XON frames
  int64_t drops = 0;        // packets dropped (buffer full, PFC off or headroom overrun)
  int64_t retransmits = 0;  // packets sent again after go-back-N
  int64_t events = 0;       // events processed (packet level) or flow-steps (flow+dcqcn)
  int64_t steps = 0;        // fluid integration steps (flow+dcqcn)
  // flow+dcqcn: simulated time jumped over once every hot flow's rate had settled, the counters
  // above carried on at the settled rates (no queue or rate samples inside the jumps); 0 elsewhere.
  Time fast_forwarded;
};

// Queue of one egress port at one instant. Ports are sampled every sample_interval while
// non-empty, plus one zero sample when they empty.
struct QueueSample {
  Time t;
  LinkIndex link = 0;
  int64_t bytes = 0;
};

// Sending rate of a traced sub-flow every sample_interval: the first `traced_flows` started, or
// at flow+dcqcn optionally the first ones cut (FluidDcqcnNetwork::trace_flows).
struct RateSample {
  Time t;
  int32_t flow = 0;  // trace index: 0 = first sub-flow started (or cut)
  GpuId src = 0;
  GpuId dst = 0;
  double rate = 0;    // DCQCN current rate Rc, bytes/s
  double target = 0;  // DCQCN target rate Rt, bytes/s
};

struct LinkCongestion {
  int64_t max_queue_bytes = 0;
  int64_t marks = 0;
  int64_t pauses = 0;  // XOFF received by this link's egress port
  int64_t drops = 0;
};

struct CongestionTrace {
  CongestionCounters counters;
  std::vector<QueueSample> queues;
  std::vector<RateSample> rates;
  std::vector<LinkCongestion> links;  // by LinkIndex
};

// Rows a congestion series keeps in memory before it is thinned: 4 million queue rows are 96 MB.
// A run of simulated minutes at the 10 us interval records far more (a NIC at 1e-6 of its rate:
// std::bad_alloc at 1.6 GB at the packet level before 2026-12-04). Past it, both levels keep every
// other sampling instant and sample half as often from then on (thin_series).
inline constexpr size_t kMaxSeriesRows = 4'000'000;

// Keeps every other sampling instant of a series (rows in time order, one instant's rows together).
template <class Row>
void drop_every_other_instant(std::vector<Row>& rows) {
  size_t out = 0;
  int64_t instant = -1;
  Time previous;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i == 0 || rows[i].t != previous) ++instant;
    previous = rows[i].t;
    if (instant % 2 == 0) rows[out++] = rows[i];
  }
  rows.resize(out);
}

// Once either series of `trace` holds more than kMaxSeriesRows rows: both drop every other
// instant, and true is returned (the caller doubles its sampling interval). Bounded memory, the
// whole run still covered at a coarser interval.
inline bool thin_series(CongestionTrace& trace) {
  if (trace.queues.size() <= kMaxSeriesRows && trace.rates.size() <= kMaxSeriesRows) return false;
  drop_every_other_instant(trace.queues);
  drop_every_other_instant(trace.rates);
  return true;
}

// Implemented by the backends that simulate congestion control (packet, flow+dcqcn).
class CongestionObservable {
 public:
  virtual ~CongestionObservable() = default;
  virtual const CongestionTrace& congestion() const = 0;
};

}  // namespace clustersim::net
