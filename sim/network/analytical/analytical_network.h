// SPDX-License-Identifier: Apache-2.0
// The analytical level: every transfer as if alone on the fabric (no contention), closed form.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/core/clock.h"
#include "sim/network/network.h"
#include "sim/network/route_source.h"

namespace clustersim::net {

// Alpha-beta with a topology-aware bottleneck (Hockney, Parallel Computing 20(3), 1994):
//   time(sub-flow) = latency(path) + bytes / min over its links of capacity / n(link)
// with n(link) the transfer's sub-flows on that link (weighted by their shares of it), and a
// transfer completes with its slowest sub-flow. The sub-flows of one transfer leave the same NIC
// (each gets 1/n of it, so where the NIC binds the time does not depend on qps_per_connection,
// as on an idle fabric) but may take different switch-to-switch links, each whole: slower fabric
// links than the NIC are then used side by side, as the flow level uses them. Other transfers
// are not seen.
//
// Link usage reports offered load: each sub-flow occupies its links at its rate from activation
// to completion, and the peak of their sum over capacity may exceed 1 (where the flow level would
// have shared).
class AnalyticalNetwork final : public Network {
 public:
  AnalyticalNetwork(const RouteSource& routes, Clock& clock);

  using Network::send;
  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) override;
  int64_t in_flight() const override { return in_flight_; }
  int64_t flow_count() const override { return flows_created_; }
  std::vector<LinkUsage> link_usage() const override;
  bool shares_bandwidth() const override { return false; }

 private:
  struct Occupancy {  // one sub-flow on one link
    Time start;
    Time end;
    double rate;  // bytes/s
  };
  const RouteSource& routes_;
  Clock& clock_;
  TransferId next_transfer_ = 1;
  int64_t in_flight_ = 0;
  int64_t flows_created_ = 0;
  std::vector<Bytes> link_bytes_;
  std::vector<std::vector<Occupancy>> occupancy_;
  std::vector<Path> scratch_paths_;
  std::vector<double> scratch_load_;  // per link, this transfer's sub-flows on it (zero between transfers)
  std::vector<LinkIndex> scratch_touched_;
};

}  // namespace clustersim::net
