// SPDX-License-Identifier: Apache-2.0
// Max-min fair rates of flows over capacitated links (progressive filling, equal weights),
// recomputed only on the connected components that changed.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/network/network.h"

namespace clustersim::net {

using FlowIndex = uint32_t;

// Progressive filling (Bertsekas & Gallager, Data Networks, 2nd ed., section 6.5.2): raise every
// flow's rate together; when a link fills, its flows freeze at the link's fair share
//   share(l) = (capacity(l) - rate of frozen flows on l) / (unfrozen flows on l)
// and the others keep rising. The result is the unique max-min fair allocation: no flow can grow
// without shrinking one whose rate is equal or smaller. Every flow has weight 1 whatever its path
// (DCQCN converges to equal shares; SimGrid's CM02 would weight by path latency).
//
// With per-link shares a (a sprayed flow puts a fraction of its rate on each parallel link) the
// same filling gives weighted-consumption max-min: share(l) = residual(l) / sum of a over the
// unfrozen flows on l, and a frozen flow takes a * rate from each of its links.
//
// A flow of weight w stands for w flows on the same links (FluidNetwork's bundles): each of them
// gets rate(f), and the flow takes w x a x rate(f) from each link. Flows on the same links always
// get equal rates, so this is exact, and a solve handles one flow where there were w.
//
// Two flows interact only through shared links, so after a change only the connected components
// (flows linked by links) that contain a changed link are recomputed. When flows only left, less:
// filling below the smallest removed rate r runs exactly as before, so flows slower than r keep
// their rates and stay as fixed loads, and only the faster flows connected to the removed ones
// are refilled. Flows usually finish fastest-first, so a completion touches few flows. Cost per
// solve: O(h f log(h f)) for the f flows of h hops refilled.
class MaxMinSolver {
 public:
  // Capacities in bytes/s, one per link; 0 is allowed (a failed link: its flows get rate 0).
  explicit MaxMinSolver(std::vector<double> capacity);

  // Appends a link of `capacity` bytes/s (a flow backend's stand-in for a group of parallel
  // links) and returns its index.
  LinkIndex add_link(double capacity);

  // Adds a flow over `links` (distinct indices). Its rate is 0 until the next solve(). `shares`
  // (empty = all 1) is the fraction of the flow's rate each link carries, for sprayed flows that
  // split over parallel paths: link l then sees shares[i] * rate.
  FlowIndex add_flow(std::span<const LinkIndex> links, std::span<const double> shares = {});
  // Removes a flow; its index may be reused by a later add_flow.
  void remove_flow(FlowIndex f);
  // Sets how many flows `f` stands for (> 0; 1 when added). A lower weight is solved as a
  // removal (only the flows as fast as f or faster are refilled), a higher one as an addition.
  void set_weight(FlowIndex f, double weight);
  double weight(FlowIndex f) const { return weight_[f]; }

  // Recomputes the rates of the flows a change since the last call may have moved, and returns
  // those whose rate did change; previous_rate() gives each one's rate before this call.
  const std::vector<FlowIndex>& solve();
  // Links whose load the last solve() recomputed.
  const std::vector<LinkIndex>& solved_links() const { return solved_links_; }

  double rate(FlowIndex f) const { return rate_[f]; }
  double previous_rate(FlowIndex f) const { return previous_rate_[f]; }
  std::span<const LinkIndex> links(FlowIndex f) const { return flow_links_[f]; }
  // Fraction of the flow's rate on its i-th link (per flow it stands for: the weight aside).
  double share(FlowIndex f, size_t i) const {
    return flow_shares_[f].empty() ? 1.0 : flow_shares_[f][i];
  }
  double capacity(LinkIndex l) const { return capacity_[l]; }
  // Sum of the rates of the flows on `l`, as of the last solve().
  double load(LinkIndex l) const { return load_[l]; }
  int64_t flow_count() const { return live_flows_; }
  LinkIndex link_count() const { return static_cast<LinkIndex>(capacity_.size()); }

 private:
  void collect_region(LinkIndex seed);
  void fill_region();
  double share_on(FlowIndex f, LinkIndex l) const;
  // What f takes from its i-th link per unit of rate: weight x share.
  double consumption(FlowIndex f, size_t i) const { return weight_[f] * share(f, i); }

  // Links.
  std::vector<double> capacity_;
  std::vector<std::vector<FlowIndex>> link_flows_;
  std::vector<double> load_;
  // Flows; slot_[f][i] is the position of f in link_flows_[flow_links_[f][i]].
  std::vector<std::vector<LinkIndex>> flow_links_;
  std::vector<std::vector<uint32_t>> slot_;
  std::vector<std::vector<double>> flow_shares_;  // empty: 1 on every link
  std::vector<double> weight_;
  std::vector<double> rate_;
  std::vector<double> previous_rate_;
  std::vector<FlowIndex> free_flows_;
  int64_t live_flows_ = 0;

  std::vector<LinkIndex> dirty_links_;
  bool added_since_solve_ = false;
  double min_removed_rate_ = HUGE_VAL;
  double threshold_ = 0;  // flows slower than this keep their rate in the current solve
  // Scratch for solve(): visit marks by epoch, the current component, the filling state.
  uint32_t epoch_ = 0;
  std::vector<uint32_t> link_mark_;
  std::vector<uint32_t> flow_mark_;
  std::vector<uint8_t> frozen_;
  std::vector<LinkIndex> region_links_;
  std::vector<FlowIndex> region_flows_;
  std::vector<double> residual_;
  std::vector<int32_t> unfrozen_;       // unfrozen flows on the link
  std::vector<double> unfrozen_share_;  // sum of their shares
  struct Candidate {
    double share;  // the link's share when pushed: at most its share now
    LinkIndex link;
  };
  std::vector<Candidate> heap_;
  std::vector<FlowIndex> solved_flows_;
  std::vector<LinkIndex> solved_links_;
};

}  // namespace clustersim::net
