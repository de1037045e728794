// SPDX-License-Identifier: Apache-2.0
// The flow level with our own max-min solver, event-driven on a Clock (SimGrid timers in runs).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/core/clock.h"
#include "sim/network/flow/internal/completion_queue.h"
#include "sim/network/flow/max_min_solver.h"
#include "sim/network/internal/transfer_book.h"
#include "sim/network/network.h"
#include "sim/network/route_source.h"

namespace clustersim::net {

// Each sub-flow waits its path latency, then shares bandwidth max-min fairly with every other
// active sub-flow (MaxMinSolver); a transfer completes when its last sub-flow does:
//   completion = start + latency + time to drain the bytes at the (changing) max-min rate.
// This is SimGrid's CM02 timeline (latency first, then sharing) with equal weights.
//
// Rates are recomputed once per simulated instant at which flows start or finish, and only in
// the connected components those flows touch. Completions that fall within `merge_tolerance` of
// the earliest pending one are merged into one event at the latest of their times: no flow ever
// completes early, and none completes more than merge_tolerance late (SimGrid merges the same
// way with surf/precision).
//
// With `rate_tolerance` r > 0 the rates are recomputed after a completion only once that
// completion is r x its flow's lifetime old (or sooner, when a flow starts): flows complete on
// time, but the bandwidth a finished flow frees stays idle that long, and a flow that outlives
// several others can lose that much at each of their ends (an 8-to-1 incast at r = 0.01: 1.1%
// late). An all-to-all's thousands of flows of different sizes then cost a few hundred solves
// instead of one each (each solve refills the whole exchange, since its flows share every NIC).
//
// A path's groups of parallel links (Path::groups: a sprayed hop over a healthy Clos) become one
// solver link each, of their summed capacity, shared by every path that crosses the group: a flow
// crossing two pods sprays over thousands of agg->core cables, and listing each made every solve
// touch them all (12,288 GPUs: 281 s; grouped, seconds). link_usage() gives each member its
// share of the group's bytes and the group's peak utilisation (the members' loads are equal).
//
// Active sub-flows on the same links (and shares) form a bundle: one solver flow of weight k for
// its k members, which max-min gives equal rates. Members join and leave at their own times;
// each is done when the bundle's progress (bytes each member has moved since the bundle formed)
// reaches its threshold, the progress at its start plus its size. An all-to-all relayed through
// PXN sends up to a node's GPUs' flows to one GPU on one path: a solve then handles one flow where
// there were eight.
class FluidNetwork final : public Network {
 public:
  // `routes` and `clock` must outlive the network.
  FluidNetwork(const RouteSource& routes, Clock& clock, Time merge_tolerance, double rate_tolerance = 0.0);

  using Network::send;
  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) override;
  int64_t in_flight() const override { return transfers_.in_flight(); }
  int64_t flow_count() const override { return flows_created_; }
  std::vector<LinkUsage> link_usage() const override;

  // Link loads held for less than this are not counted as peaks (instants between merged
  // completions and the like).
  static constexpr double kMinPeakHold = 1e-7;  // s

  // Rate recomputations so far (one per instant with changes), for benchmarks.
  int64_t solves() const { return solves_; }

 private:
  static constexpr uint32_t kNoBundle = ~uint32_t{0};
  struct SubFlow {
    TransferId transfer = 0;
    Bytes size;
    double started = 0;              // s; activation time
    uint32_t bundle = kNoBundle;     // while active (latency paid, bytes left)
    double threshold = 0;            // bytes; its bundle's progress when it is done
    std::vector<LinkIndex> links;    // kept until activation
    std::vector<double> shares;
  };
  struct Member {
    double threshold;
    uint32_t flow;
    // Heap order: the one due first (lowest flow among equals) on top.
    static bool later(const Member& a, const Member& b) {
      return a.threshold > b.threshold || (a.threshold == b.threshold && a.flow > b.flow);
    }
  };
  struct Bundle {
    FlowIndex solver_index = 0;
    int32_t count = 0;      // members not yet finished
    double progress = 0;    // bytes each member has moved since the bundle formed, as of `since`
    double since = 0;       // s
    std::vector<Member> members;  // min-heap on (threshold, flow): those not yet due
  };
  // The active bundle on `s`'s path, or a new one; `s` joins it.
  void join_bundle(uint32_t flow);
  // The bundle's progress brought up to `now` at the rate it had.
  void advance(Bundle& b, double now, double rate);
  // Sets the completion of `b`'s next member due (none when it has no rate).
  void schedule(uint32_t bundle);
  // When `b`'s member of the given threshold is due, at its present rate (> 0).
  double due(const Bundle& b, double threshold) const;
  // The latest time by `limit` at which one of `b`'s members is due (at least its next one's).
  double latest_member_due(const Bundle& b, double limit);
  void activate(uint32_t flow);
  void request_settle();
  void defer_settle(double at);
  void settle();
  void arm_completion();
  void complete_batch();
  void finish_sub_flow(uint32_t flow, std::vector<std::function<void(Time)>>& done);
  // Sets `s`'s links to `p`'s with each of its groups replaced by the group's solver link
  // (shares summed).
  void group_links(SubFlow& s, const Path& p);
  LinkIndex group_link(LinkIndex first, int32_t count, LinkIndex stride);

  const RouteSource& routes_;
  Clock& clock_;
  double tolerance_s_;
  double rate_tolerance_;
  MaxMinSolver solver_;

  internal::TransferBook transfers_;
  std::vector<SubFlow> flows_;
  std::vector<uint32_t> free_flows_;
  std::vector<Bundle> bundles_;
  std::vector<uint32_t> free_bundles_;
  // The active bundles by the last link of their path (a destination's NIC link: a few each).
  std::vector<std::vector<uint32_t>> bundles_ending_on_;
  std::vector<uint32_t> owner_;  // solver index -> bundle
  int64_t flows_created_ = 0;

  // Pending completions, one per bundle with a rate (its next member due), by (time, bundle).
  // The armed event completes every one due by batch_limit_ (s) and by its own time.
  internal::CompletionQueue completions_;
  double batch_limit_ = 0;
  std::vector<uint32_t> batch_;                  // scratch for complete_batch()
  std::vector<size_t> member_stack_;             // scratch for latest_member_due()
  std::vector<std::function<void(Time)>> done_;  // scratch for complete_batch()
  TimerId completion_timer_ = 0;
  bool completion_armed_ = false;
  bool settle_requested_ = false;
  TimerId deferred_timer_ = 0;
  bool deferred_armed_ = false;
  double deferred_at_ = 0;  // s
  int64_t solves_ = 0;

  std::vector<Bytes> link_bytes_;
  std::vector<double> peak_utilisation_;
  std::vector<double> held_load_;   // bytes/s since load_since_
  std::vector<double> load_since_;  // s
  std::vector<Path> scratch_paths_;

  // Groups of parallel links, by (first link, count); kNoGroup when their capacities differ (the
  // group's links then stay apart, for every path alike). A group's solver link is
  // routes_.link_count() + its index in groups_; its link_bytes_ count what each member carried.
  static constexpr LinkIndex kNoGroup = static_cast<LinkIndex>(-1);
  struct LinkGroup {
    LinkIndex first;
    int32_t count;
    LinkIndex stride;
    LinkIndex solver_link;
  };
  std::map<std::pair<LinkIndex, int32_t>, LinkIndex> group_of_;
  std::vector<LinkGroup> groups_;
};

}  // namespace clustersim::net
