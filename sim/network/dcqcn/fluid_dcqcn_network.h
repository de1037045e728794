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
// queue gives p_l; a flow's packets arrive marked with p = 1 - prod(1 - p_l), delivered / mtu of
// them per step. As at the packet level, the receiver sends a CNP with the first marked packet
// once cnp_interval has passed. Packets are marked independently, so that packet arrives where
// the hazard H = sum over packets of -ln(1 - p) reaches an Exp(1) draw (seeded per flow): the
// CNP times are random as the packet level's are. Using the mean instead (a CNP once one marked
// packet is expected) sends it late while the queue builds and cuts flows of equal paths in
// lock-step, which empties the queue and leaves the link under-used (an ECMP collision of four
// flows: 16% faster than the packet level). The CNP's delay is the round trip, forward and
// reverse path latencies: the fluid has no propagation between hops, so a flow's bytes enter
// every link of its path at once, when they would reach its last link, and a sender's cut
// reaches the queues at once.
// Marks travel with the bytes: with mark_on = enqueue, a byte leaving a queue carries the RED
// probability the queue had when it joined (found from the link's cumulative arrivals and
// departures, FIFO), so feedback lags by the queueing delay as at the packet level; with
// dequeue, the current one. Marks from earlier hops mix through later queues with the flow's
// bytes. The sender's byte counter counts the bytes its NIC sends.
//
// PFC, per ingress link into a switch, with the packet level's states and hysteresis:
//   on --(counter > dynamic_threshold x free buffer: XOFF sent)--> xoff in flight
//   --(d later: the upstream egress stops)--> paused --(counter + resume_offset <= threshold, or
//   the counter empty: XON sent)-->
//   xon in flight --(d later: the upstream serves again)--> on
// with d = link delay + one MTU at the link's speed (the PAUSE frame's propagation plus the frame
// in transmission upstream; IEEE 802.1Qbb headroom accounting). The counter is the ingress's
// bytes in the switch's queues. A link's pause state changes only on those events, at the step
// nearest them. NVLink queues are always lossless this way. Without PFC, bytes above the egress
// threshold are dropped and sent again.
//
// Only "hot" flows are stepped, and only the links they cross: flows with bytes queued, a CNP on
// its way, or a path through a congested link (queue, pause or overload). The others are cold:
// a constant rate between events, handled one by one in time order: completion (exact, as at
// the flow level) and, while DCQCN is still recovering from a cut, each rate increase (timer or
// byte counter), which turns the flows of a link it overloads hot. While hot flows exist, every
// `window` the mean delivered rate of each is compared with its previous window (a flow whose
// link gained or lost a flow starts over); when none moved by more than 2% of its own rate, the
// state is a periodic steady state once that has held for kSettledWindows windows in a row with
// kMinSettledCnps CNPs among them (or none: fewer make their rate too uncertain to carry), and
// time jumps to shortly before the next hot completion at the window's mean rates (timer phases
// and queues carried over; the congestion counters go on at the settled run's rates, and no
// queue or rate samples are taken inside the jump); a cold event on a hot flow's link ends the
// jump there. A CNP's delay is routed back from the receiver; where faults leave no way back the
// forward latency stands in. A transfer completes at the last byte's delivery plus the rest of its path's latency
// (its bytes entered the fluid when they would reach its last link). Where a path's shared queue
// lies before a link of extra latency, the flow reaches it as late as its last link: a
// simplification for uneven paths.
class FluidDcqcnNetwork final : public Network, public CongestionObservable {
 public:
  // `routes` and `clock` must outlive the network; `fabric` describes the same links.
  // `seed` drives the draws that place each CNP (see above).
  FluidDcqcnNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock, const DcqcnConfig& config,
                    uint64_t seed = 1);
  ~FluidDcqcnNetwork() override;

  using Network::send;
  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) override;
  int64_t in_flight() const override { return transfers_.in_flight(); }
  int64_t flow_count() const override { return flows_created_; }
  std::vector<LinkUsage> link_usage() const override;
  const CongestionTrace& congestion() const override;

  // Which sub-flows the rate series (congestion().rates) follows, at most traced_flows of them:
  // the first started (microbenchmarks, where every flow starts at once), or the first that DCQCN
  // cuts, traced from that cut on (training, where flows start all along and few ever congest).
  // Trace index 0 is the first started, or the first cut. Set before the first send.
  enum class TracedFlows { kFirstStarted, kFirstCut };
  void trace_flows(TracedFlows which);

  static constexpr int kStepsPerTimer = 16;  // steps per Clock timer firing, at most (none past another action)
  static constexpr double kSettleTolerance = 0.02;  // of the flow's window mean, between windows
  static constexpr int kSettledWindows = 4;  // settled windows in a row before a fast-forward
  static constexpr double kMinSettledCnps = 100;  // CNPs a settled run holds before it (or none)
  static constexpr int kMarkHistory = 1024;     // steps of RED probability kept per marking link, at least
  static constexpr int kMaxMarkHistory = 1 << 22;  // steps, at most (a queue's drain over 4 million steps)
  static constexpr double kDrainedBytes = 1.0;       // an ingress counter at or below this is empty
  static constexpr double kByteRounding = 0.5;       // a flow this close to its size has arrived
  static constexpr double kClockResolution = 1e-12;  // s, one picosecond

 private:
  struct Hop;
  struct Flow;
  struct Link;
  struct HotHop {  // a listed hot flow's hop on a link
    Hop* hop;      // into the flow's hops, which never reallocate
    uint32_t flow;
    uint16_t h;    // position along the path
    bool last;     // the path's last link
    LinkIndex ingress;  // the path's link before this one (h > 0)
  };

  // send's sub-flows, entering the fluid `upstream` after the send (their bytes' way to the
  // path's last link).
  void start_parts(TransferId id, GpuId src, GpuId dst, uint32_t connection, Bytes size, Time upstream);
  void run();
  void step(double t, double dt);
  void arm(double t);
  void rebuild_hot();
  void make_cold(uint32_t f, double t);
  void make_hot(uint32_t f, double t);
  void finish(uint32_t f, double when);
  void schedule_cold(uint32_t f);
  double next_cold_event();
  void cold_events(double upto);
  bool touches_hot(const Flow& fl) const;
  void unsettle_neighbours(const Flow& fl);
  void add_hops(uint32_t f);
  void remove_hops(uint32_t f);
  void fast_forward_check(double t);
  void materialize(double t);
  // At the limit of simulated time: every flow still in flight ends there.
  void end_at_limit();
  void sample(double t);
  // Adds the flow's rate cuts since it was last called to the counters: a cut held back by
  // rate_decrease_interval fires later, inside DcqcnRate::advance, wherever that runs (until
  // 2026-12-06 only the cuts at a CNP's arrival were counted: an incast with a 200 us interval
  // read 135 cuts where the packet level counts 5,834, and 103 with 1 us samples).
  void count_cuts(Flow& fl);
  void start_trace(uint32_t f, double t);
  void pfc_events(double t);
  void pfc_counters(double t, double dt);
  double enqueue_probability(Link& k) const;
  // After a step: the link's RED probability and arrivals into its history ring, grown to cover
  // the queue's drain time.
  void record_mark_history(Link& k, double dt);
  // The part of a late-joining flow's wait (Flow::head_start) that it takes back where its first
  // step meets no congestion: none of it while a link of its path still carried another flow.
  double head_start_credit(const Flow& fl, double step_start) const;

  const RouteSource& routes_;
  PacketFabric fabric_;
  Clock& clock_;
  DcqcnConfig config_;
  uint64_t seed_;
  double dt_;
  double window_;  // s
  double sample_interval_;  // s: config.sample_interval, doubled each time the series fill up
  std::vector<std::unique_ptr<DcqcnParams>> params_;
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<Link> links_;
  std::vector<uint32_t> hot_;        // hot flows
  std::vector<uint32_t> entering_;   // made hot since the last rebuild_hot
  std::vector<std::vector<LinkIndex>> hot_levels_;  // links with hot hops, by PacketLink::order
  std::vector<LinkIndex> hot_links_;  // the levels in turn: path order
  bool levels_changed_ = false;
  // Cold flows' next events (completion or DCQCN increase), lazily deleted: an entry is live
  // while its stamp is the flow's.
  struct ColdEvent {
    double t;
    uint32_t flow;
    uint64_t stamp;
    bool operator>(const ColdEvent& o) const { return t != o.t ? t > o.t : stamp > o.stamp; }
  };
  std::vector<ColdEvent> cold_events_;
  uint64_t stamps_ = 0;
  std::vector<uint32_t> finished_slots_;  // freed at the next rebuild_hot
  std::vector<uint32_t> free_slots_;      // of flows_, for new flows
  std::vector<uint32_t> traced_;          // active traced flows
  TracedFlows traced_selection_ = TracedFlows::kFirstStarted;
  int32_t cut_traces_left_ = 0;           // kFirstCut: flows still to trace at their first cut
  bool hot_dirty_ = false;
  internal::TransferBook transfers_;
  int64_t flows_created_ = 0;
  int64_t sent_ = 0;  // send calls (their flows enter the fluid later: start_parts)

  double now_ = 0;  // s, time stepped so far
  TimerId timer_ = 0;
  bool armed_ = false;
  double window_start_ = 0;
  // Fast-forward in progress: state is at ff_from_; flows move at their window means until ff_to_.
  bool ff_ = false;
  double ff_from_ = 0;
  double ff_to_ = 0;
  double next_sample_ = 0;
  double marks_ = 0;
  double drops_ = 0;
  // The congestion counters (marks, drops, CNPs, rate cuts, PFC pauses and resumes) when the hot
  // flows' rates last started to settle (settle_start), and their rates over the settled run that
  // started a fast-forward: the jump adds them at those rates (materialize), as the settled
  // oscillation goes on; ff_carry_ holds the fractions of whole counts not yet added.
  struct Tally {
    double marks = 0, drops = 0, cnps = 0, cuts = 0, pauses = 0, resumes = 0;
  };
  Tally ff_carry_;
  Tally tally() const;
  void settle_start(double t);
  // A hot flow's CNPs and rate cuts a second over a fast-forward, from the marked packets a second
  // it received over the settled run.
  struct Rates {
    double cnps = 0, cuts = 0;
  };
  Rates settled_cnp_rate(double marked_per_s) const;
  int settled_windows_ = 0;  // windows in a row whose flows' means held within kSettleTolerance
  double settled_from_ = 0;
  Tally settled_tally_;
  Tally ff_per_s_;
  double fast_forwarded_ = 0;  // s jumped over in all
  std::vector<int64_t> switch_used_;
  std::vector<uint8_t> congested_;  // by link, as of its last step: queue, pause or overload
  std::vector<double> ingress_share_;
  std::vector<LinkIndex> ingress_touched_;
  std::vector<uint8_t> ingress_listed_;
  std::vector<LinkIndex> pfc_links_;  // ingress links not in the `on` state
  int64_t step_index_ = 0;            // steps taken, indexes the marking history
  mutable CongestionTrace trace_;
  std::vector<Path> scratch_paths_;
  std::vector<Path> reverse_paths_;  // start_parts: the way a CNP goes back
};

}  // namespace clustersim::net
