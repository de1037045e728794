// SPDX-License-Identifier: Apache-2.0
// The one interface higher layers use to move bytes between GPUs, whatever the fidelity behind it.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "sim/core/units.h"

namespace clustersim::net {

using GpuId = int32_t;      // same numbering as topo::GpuId
using LinkIndex = int32_t;  // same numbering as topo::LinkId (one direction of one cable)
using TransferId = uint64_t;

// What one link direction carried during a run.
struct LinkUsage {
  Bytes bytes;                    // payload of the completed sub-flows that crossed the link
  double peak_utilisation = 0.0;  // max over time of (sum of flow rates) / capacity
};

// A backend moves bytes over the fabric in simulated time. Time comes from the Clock the backend
// was built with; the caller runs that clock (SimGrid engine) to completion.
class Network {
 public:
  virtual ~Network() = default;

  // Starts moving `size` bytes from GPU `src` to GPU `dst` at the clock's current time. `done` is
  // called exactly once, from a clock action (never from inside send), with the simulated time at
  // which the last byte arrived. src == dst or size 0 complete after the path latency (0 for
  // src == dst). `connection` picks which of the pair's connections carries it: 0 the pair's own,
  // others with other source ports, so other ECMP hashes (coll::FlowSpec::connection: NCCL's PXN
  // relays each sending GPU's data on that GPU's own queue pairs).
  virtual TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) = 0;
  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done) {
    return send(src, dst, size, std::move(done), 0);
  }

  // Transfers started and not yet completed.
  virtual int64_t in_flight() const = 0;

  // Sub-flows created so far: a transfer is split into qps_per_connection sub-flows (more when
  // spraying), each with its own path.
  virtual int64_t flow_count() const = 0;

  // Per link direction (index = LinkIndex), what the completed sub-flows carried and the peak
  // utilisation seen so far. The flow backends count loads held for at least 0.1 us; the
  // analytical backend reports offered load, which may exceed 1.
  virtual std::vector<LinkUsage> link_usage() const = 0;

  // Whether concurrent transfers share the links they cross (the flow, DCQCN and packet levels);
  // false for the closed form, which prices each transfer on an idle fabric.
  virtual bool shares_bandwidth() const { return true; }
};

}  // namespace clustersim::net
