// SPDX-License-Identifier: Apache-2.0
// AnalyticalNetwork: closed-form transfer times, offered load per link.
#include "sim/network/analytical/analytical_network.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <utility>

namespace clustersim::net {

AnalyticalNetwork::AnalyticalNetwork(const RouteSource& routes, Clock& clock)
    : routes_(routes),
      clock_(clock),
      link_bytes_(static_cast<size_t>(routes.link_count())),
      occupancy_(static_cast<size_t>(routes.link_count())),
      scratch_load_(static_cast<size_t>(routes.link_count()), 0.0) {}

TransferId AnalyticalNetwork::send(GpuId src, GpuId dst, Bytes size,
                                   std::function<void(Time)> done, uint32_t connection) {
  const TransferId id = next_transfer_++;
  const Time now = clock_.now();
  Time end = now;
  if (src != dst) {
    routes_.paths(src, dst, connection, scratch_paths_);
    if (scratch_paths_.empty()) throw std::logic_error("route source gave no path between two GPUs");
    const int parts = static_cast<int>(scratch_paths_.size());
    // How many of this transfer's sub-flows each link carries (weighted by their shares of it).
    for (const Path& path : scratch_paths_) {
      for (size_t i = 0; i < path.links.size(); ++i) {
        const LinkIndex l = path.links[i];
        if (scratch_load_[l] == 0.0) scratch_touched_.push_back(l);
        scratch_load_[l] += path.share(i);
      }
    }
    for (int k = 0; k < parts; ++k) {
      const Path& path = scratch_paths_[k];
      const Bytes bytes = share_of(size, parts, k);
      // Each sub-flow gets its links' capacity shared by the sub-flows on them: 1/n of the NIC
      // they all leave, a whole fabric link it takes alone.
      double rate = std::numeric_limits<double>::infinity();
      for (size_t i = 0; i < path.links.size(); ++i) {
        rate = std::min(rate, routes_.capacity(path.links[i]).bytes_per_s / scratch_load_[path.links[i]]);
      }
      const Time start = now + path.latency;
      const Time finish = (bytes.n == 0 || path.links.empty()) ? start
                          : rate > 0 ? start + Time::s(bytes.as_double() / rate)
                                     : Time::max();
      for (size_t i = 0; i < path.links.size(); ++i) {
        const LinkIndex l = path.links[i];
        const double a = path.share(i);
        link_bytes_[l] += a == 1.0 ? bytes : bytes_of(a * bytes.as_double());
        if (finish > start) occupancy_[l].push_back({start, finish, a * rate});
      }
      end = max(end, finish);
    }
    flows_created_ += parts;
    for (const LinkIndex l : scratch_touched_) scratch_load_[l] = 0.0;
    scratch_touched_.clear();
  }
  ++in_flight_;
  if (end == Time::max()) return id;  // a failed link on the path: never completes
  clock_.at(end, [this, end, done = std::move(done)] {
    --in_flight_;
    done(end);
  });
  return id;
}

std::vector<LinkUsage> AnalyticalNetwork::link_usage() const {
  std::vector<LinkUsage> usage(link_bytes_.size());
  std::vector<std::pair<Time, double>> events;
  for (size_t l = 0; l < usage.size(); ++l) {
    usage[l].bytes = link_bytes_[l];
    const double capacity = routes_.capacity(static_cast<LinkIndex>(l)).bytes_per_s;
    if (occupancy_[l].empty() || capacity <= 0) continue;
    // Sweep: ends sort before starts at the same time, so back-to-back flows do not add up.
    events.clear();
    for (const Occupancy& o : occupancy_[l]) {
      events.emplace_back(o.start, o.rate);
      events.emplace_back(o.end, -o.rate);
    }
    std::sort(events.begin(), events.end());
    double load = 0;
    double peak = 0;
    for (const auto& [t, delta] : events) {
      load += delta;
      peak = std::max(peak, load);
    }
    usage[l].peak_utilisation = peak / capacity;
  }
  return usage;
}

}  // namespace clustersim::net
