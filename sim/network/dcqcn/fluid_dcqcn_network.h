// SPDX-License-Identifier: Apache-2.0
// The flow+dcqcn level: flows with per-flow DCQCN rate state over fluid FIFO queues that mark
// with RED on congested ports, optional PFC; stepped only while congested, fast-forwarded once
// the rates settle.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "sim/core/clock.h"
#include "sim/core/dcqcn_config.h"
#include "sim/network/dcqcn/congestion_trace.h"
#include "sim/network/dcqcn/dcqcn_params.h"
#include "sim/network/dcqcn/dcqcn_rate.h"
#include "sim/network/internal/transfer_book.h"
#include "sim/network/network.h"
#include "sim/network/packet/packet_fabric.h"
#include "sim/network/route_source.h"

namespace clustersim::net {

// A flow sends at its DCQCN rate Rc (a DcqcnRate, as at the packet level). Each step of
// fluid_step (dt), links are served in path order (PacketLink::order):
//   A_l = sum of the rates entering l;  out_l = min(C_l, A_l + q_l / dt)  (0 while PFC-paused)
//   q_l += (A_l - out_l) dt;  each flow leaves with out_l x (its bytes in q_l + its arrivals)
//                             / (q_l + A_l dt)      (FIFO as processor sharing of the backlog)
// A NIC (host) link never queues: flows beyond its capacity are slowed at the source. RED on the
// queue gives p_l; a flow's packets arrive marked with p = 1 - prod(1 - p_l) at rate
// delivered / mtu, and the receiver sends a CNP once marks worth one packet have arrived since
// cnp_interval passed (the expectation of the packet level's rule); the CNP reaches the sender
// after the path latency. Marks travel with the bytes: with mark_on = enqueue, a byte leaving a
// queue carries the RED probability the queue had when it joined (found from the link's
// cumulative arrivals and departures, FIFO), so feedback lags by the queueing delay as at the packet level; with dequeue, the
// current one. Marks from earlier hops mix through later queues with the flow's bytes.
//
// PFC, per ingress link into a switch, with the packet level's states and hysteresis:
//   on --(counter > dynamic_threshold x free buffer: XOFF sent)--> xoff in flight
//   --(d later: the upstream egress stops)--> paused --(the bytes that arrived before the stop,
//   the headroom bytes last, have left and counter + resume_offset <= threshold: XON sent)-->
//   xon in flight --(d later: the upstream serves again)--> on
// with d = link delay + one MTU at the link's speed (the PAUSE frame's propagation plus the frame
// in transmission upstream; IEEE 802.1Qbb headroom accounting). The counter is the ingress's
// bytes in the switch's queues. A link's pause state changes only on those events, at the step
// nearest them. NVLink queues are always lossless this way. Without PFC, bytes above the egress
// threshold are dropped and sent again.
//
// Only "hot" flows are stepped: those with an unsettled DCQCN state, bytes queued, or a path
// through a congested link (queue or overload). The others run at a constant rate with an
// exact completion time, like the flow level. While hot flows exist, every `window` the mean
// delivered rate of each is compared with the previous window; when none moved by more than
// 2% of its own rate, the state is a periodic steady state and time jumps to shortly before
// the next completion at the window's mean rates (timer phases and queues carried over).
// A transfer completes at the last byte's delivery plus its path latency.
class FluidDcqcnNetwork final : public Network, public CongestionObservable {
 public:
  // `routes` and `clock` must outlive the network; `fabric` describes the same links.
  FluidDcqcnNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock, const DcqcnConfig& config);
  ~FluidDcqcnNetwork() override;

  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done) override;
  int64_t in_flight() const override { return transfers_.in_flight(); }
  int64_t flow_count() const override { return flows_created_; }
  std::vector<LinkUsage> link_usage() const override;
  const CongestionTrace& congestion() const override;

  static constexpr int kStepsPerTimer = 16;  // steps per Clock timer firing
  static constexpr double kSettleTolerance = 0.02;  // of the flow's window mean, between windows
  static constexpr int kMarkHistory = 1024;     // steps of RED probability kept per marking link
  static constexpr double kDrainedBytes = 1.0;
  static constexpr double kClockResolution = 1e-12;  // s, one picosecond  // an ingress counter at or below this is empty

 private:
  struct Flow;
  struct Link;

  void run();
  void step(double t, double dt);
  void arm(double t);
  void rebuild_hot();
  void make_cold(uint32_t f, double t);
  void make_hot(uint32_t f, double t);
  void finish(uint32_t f, double when);
  double next_cold_completion();
  void fast_forward_check(double t);
  void materialize(double t);
  void sample(double t);
  void pfc_events(double t);
  void pfc_counters(double t, double dt);
  double enqueue_probability(const Link& k) const;

  const RouteSource& routes_;
  PacketFabric fabric_;
  Clock& clock_;
  DcqcnConfig config_;
  double dt_;
  double window_;  // s
  std::vector<std::unique_ptr<DcqcnParams>> params_;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<Link> links_;
  std::vector<uint32_t> hot_;        // hot flows
  std::vector<LinkIndex> hot_links_;  // their links, in path order
  std::vector<uint32_t> cold_;       // cold active flows (unordered)
  bool hot_dirty_ = false;
  internal::TransferBook transfers_;
  int64_t flows_created_ = 0;

  double now_ = 0;  // s, time stepped so far
  TimerId timer_ = 0;
  bool armed_ = false;
  double window_start_ = 0;
  bool have_previous_window_ = false;
  // Fast-forward in progress: state is at ff_from_; flows move at their window means until ff_to_.
  bool ff_ = false;
  double ff_from_ = 0;
  double ff_to_ = 0;
  double next_sample_ = 0;
  double marks_ = 0;
  double drops_ = 0;
  std::vector<int64_t> switch_used_;
  std::vector<double> ingress_share_;
  std::vector<LinkIndex> ingress_touched_;
  std::vector<uint8_t> ingress_listed_;
  std::vector<LinkIndex> pfc_links_;  // ingress links not in the `on` state
  int64_t step_index_ = 0;            // steps taken, indexes the marking history
  mutable CongestionTrace trace_;
  std::vector<Path> scratch_paths_;
};

}  // namespace clustersim::net
