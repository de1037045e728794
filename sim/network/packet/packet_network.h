// SPDX-License-Identifier: Apache-2.0
// The packet level: NICs and switches exchanging packets, with RED/ECN, DCQCN, PFC and a shared
// switch buffer, behind the same Network interface as the other levels.
#pragma once

#include <cstdint>
#include <deque>
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

// Each sub-flow (queue pair) is cut into packets of `mtu` payload bytes (header overhead is not
// modelled, so the levels agree on bytes over capacity). Along its fixed ECMP path a packet:
//   NIC: the egress port serves, among its queue pairs whose DCQCN pacing allows a packet now,
//        the earliest-eligible one (pacing gap = packet / Rc); it never queues beyond that.
//   switch: joins the FIFO egress queue of the next link, RED/ECN-marked on enqueue or dequeue;
//        takes room in the switch's shared buffer, counted against its ingress port. With PFC,
//        an ingress counter above dynamic_threshold x (free shared buffer) sends XOFF upstream
//        (it takes the link's delay to arrive and stops that egress port after its current
//        packet); packets still arriving go to the port's headroom; departures free the
//        headroom's bytes first; XON once the headroom is empty and the counter is
//        resume_offset below the threshold (or zero). Without PFC a packet that
//        does not fit (egress queue above the dynamic threshold or buffer full) is dropped.
//   receiver (notification point): one CNP per flow per cnp_interval when marked packets arrive;
//        CNPs and NACKs travel back in the path's latency, unqueued (they are tiny, high priority).
//        Go-back-N: out-of-order packets are discarded and NACKed; the sender also goes back after
//        a retransmission timeout when everything was sent and nothing arrived since.
// A transfer completes when the last byte of its last sub-flow arrives.
//
// Events run in a heap of our own (integer picoseconds, ties in insertion order, so runs are
// deterministic); one Clock timer at a time drives it, each firing processing the events of the
// next `kLookahead` of simulated time, and stopping at a completion so that `done` runs at its
// time as a Clock action. A send() made while the loop is ahead of the Clock starts at the
// loop's time (at most kLookahead later).
class PacketNetwork final : public Network, public CongestionObservable {
 public:
  // `routes`, `clock` must outlive the network; `fabric` describes the same links as `routes`.
  // `seed` drives RED's random marking.
  PacketNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock, const DcqcnConfig& config,
                uint64_t seed = 1);
  ~PacketNetwork() override;

  using Network::send;
  TransferId send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) override;
  int64_t in_flight() const override { return transfers_.in_flight(); }
  int64_t flow_count() const override { return static_cast<int64_t>(flows_.size()); }
  std::vector<LinkUsage> link_usage() const override;
  const CongestionTrace& congestion() const override { return trace_; }

  static constexpr Time kLookahead = Time::ps(1'000'000);   // 1 us
  static constexpr Time kRetransmitTimeout = Time::ps(1'000'000'000);  // 1 ms

 private:
  struct Packet {
    uint32_t flow;
    uint32_t seq;
    uint32_t bytes;
    uint16_t hop;          // index in the flow's path of the link it is on or queued for
    uint8_t ecn;
  };
  struct Flow;
  struct Port;
  struct Event {
    int64_t t;
    uint64_t key;  // insertion sequence << 4 | kind
    uint32_t a;
    uint32_t b;
    bool operator>(const Event& o) const { return t > o.t || (t == o.t && key > o.key); }
  };
  enum Kind : uint32_t { kTxDone, kArrive, kPfc, kPortWake, kCnp, kNack, kRto, kSample };

  void push(int64_t t, Kind kind, uint32_t a, uint32_t b = 0);
  void arm();
  void run_batch();
  void dispatch(const Event& e);

  void try_send(uint32_t port);
  bool send_from_host(uint32_t port);
  void start_tx(uint32_t port, uint32_t packet);
  void arrive(uint32_t packet);
  void enqueue(uint32_t port, uint32_t packet);
  void release_buffer(const Packet& p);
  void deliver(uint32_t packet);
  void on_pfc(uint32_t link, bool pause);
  void on_nack(uint32_t flow, uint32_t seq);
  void on_rto(uint32_t flow);
  void schedule_flow(uint32_t port, uint32_t flow);
  void sample();
  double uniform();

  const RouteSource& routes_;
  PacketFabric fabric_;
  Clock& clock_;
  DcqcnConfig config_;
  uint64_t rng_;

  std::vector<Port> ports_;              // by LinkIndex
  std::vector<int64_t> shared_used_;     // per node (switches), bytes
  std::vector<int64_t> ingress_bytes_;   // per ingress link, shared-buffer bytes
  std::vector<int64_t> headroom_used_;   // per ingress link
  std::vector<double> headroom_;         // per ingress link
  std::vector<uint8_t> xoff_sent_;       // per ingress link
  std::vector<std::unique_ptr<DcqcnParams>> params_;  // per distinct line rate
  std::vector<std::unique_ptr<Flow>> flows_;
  std::vector<Packet> packets_;
  std::vector<uint32_t> free_packets_;

  internal::TransferBook transfers_;
  std::vector<std::function<void(Time)>> finished_;  // completions of the current batch

  std::vector<Event> heap_;
  uint64_t seq_ = 0;
  int64_t now_ = 0;  // ps
  TimerId timer_ = 0;
  bool armed_ = false;
  int64_t armed_at_ = 0;
  bool sampling_ = false;
  int64_t active_flows_ = 0;

  std::vector<Bytes> link_bytes_;
  std::vector<int64_t> sampled_bytes_;  // link bytes at the previous sample
  std::vector<double> peak_utilisation_;
  std::vector<uint8_t> queue_reported_;
  std::vector<uint32_t> sample_ports_;  // ports active since the last sample
  std::vector<uint8_t> sample_listed_;
  Time sample_interval_;  // config_.sample_interval, doubled each time the series fill up
  CongestionTrace trace_;
  std::vector<Path> scratch_paths_;
};

}  // namespace clustersim::net
