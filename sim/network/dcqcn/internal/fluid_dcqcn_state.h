// SPDX-License-Identifier: Apache-2.0
// FluidDcqcnNetwork's private state (flows, hops, links) and helpers, shared by its three source
// files: fluid_dcqcn_network.cc (events, fast-forward, sampling), fluid_dcqcn_hot_cold.cc (which
// flows are stepped) and fluid_dcqcn_step.cc (one fluid step: queues, RED/ECN, CNPs, PFC).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "sim/core/units.h"
#include "sim/network/dcqcn/dcqcn_params.h"
#include "sim/network/dcqcn/dcqcn_rate.h"
#include "sim/network/dcqcn/fluid_dcqcn_network.h"

namespace clustersim::net {

namespace internal {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A unit-mean exponential variate for draw `n` of flow number `flow`: splitmix64 (Steele et al.
// 2014) over the three numbers, so runs repeat exactly for a seed whatever the order of events.
inline double exponential_draw(uint64_t seed, uint64_t flow, uint32_t n) {
  uint64_t x = seed * 0x9E3779B97F4A7C15ull ^ (flow << 24 ^ n);
  for (int i = 0; i < 3; ++i) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
  }
  const double u = (static_cast<double>(x >> 11) + 0.5) * 0x1.0p-53;  // in (0, 1)
  return -std::log(u);
}

// The limit of simulated time in seconds (Time::max(), about 106 days).
inline constexpr double kTimeLimit = Time::max().as_s();

// The clock time (whole picoseconds) for `seconds`, not before `floor`: timers never go back.
// Times at or past the limit of simulated time (a flow at 1e-12 of a NIC's rate) are the limit.
inline Time at_or_after(double seconds, Time floor) {
  const double ps = std::ceil(seconds * 1e12 - 1e-3);
  if (!(ps < 9.2e18)) return Time::max();
  return max(floor, Time::ps(static_cast<int64_t>(ps)));
}

// One clock step past `seconds`: a picosecond (FluidDcqcnNetwork::kClockResolution), or past
// about 1,000 s, where a picosecond is below a double's resolution in seconds, a few units in the
// last place (else a timer set for an event could fire a hair before it, and an event meant to
// move time on would not: both repeat at one instant for ever, as a NIC at 1e-10 of its rate did
// before 2026-12-05).
inline double one_tick_after(double seconds) {
  return seconds + std::max(FluidDcqcnNetwork::kClockResolution,
                            4 * std::numeric_limits<double>::epsilon() * std::abs(seconds));
}

// PFC state of an ingress link into a switch (see the class comment).
enum class PfcState : uint8_t { kOn, kXoffSent, kPaused, kXonSent };

}  // namespace internal

// One hop of a flow: what enters the link and what of the flow waits in its queue.
struct FluidDcqcnNetwork::Hop {
  double in = 0;             // bytes/s entering the link
  double queued = 0;         // bytes in the link's queue
  double in_marked = 0;      // of `in`, bytes/s carrying a CE mark
  double queued_marked = 0;  // of `queued`, marked bytes
};

struct FluidDcqcnNetwork::Flow {
  Flow(const DcqcnParams& p, Time start) : rp(p, start) {}
  TransferId transfer = 0;
  GpuId src = 0;
  GpuId dst = 0;
  std::vector<LinkIndex> links;
  std::vector<Hop> hops;    // by position along the path
  double step_marked = 0;  // marked bytes delivered in the current step
  double size = 0, sent = 0, delivered = 0;
  double latency = 0;  // s: from entering the fluid (its path's last link) to the receiver
  // s: how long after its bytes' entry the flow joined the fluid (the next step start, when it
  // entered inside a step); a flow that meets no congestion in its first step takes it back.
  double head_start = 0;
  double feedback = 0;  // s: a CNP's delay, mark to the sender's cut reaching the queues (RTT)
  double line = 0;
  DcqcnRate rp;
  int64_t cuts_counted = 0;  // rp's cuts already in the counters (FluidDcqcnNetwork::count_cuts)
  double last_cnp = -internal::kInf;
  double hazard = 0;         // since the CNP interval last passed: sum over packets of -ln(1 - p_mark)
  double packet_credit = 0;  // packets delivered toward the next whole one, which the hazard counts
  double cnp_threshold = 0;  // Exp(1) draw: the first marked packet arrives when hazard reaches it
  uint32_t draws = 0;
  double step_out = 0;       // bytes delivered in the current step
  double prev_out = 0;       // bytes delivered in the step before (the rate a last step ends at)
  // Bytes/s the sender could have sent at this step where its last bytes were spread over the
  // whole step (fewer than a step's worth at its rate left); 0 otherwise.
  double tail_rate = 0;
  std::vector<double> cnp_due;  // s, in order
  bool hot = true;
  bool active = true;
  bool listed_hot = false;  // in hot_, its hops in the links' hot_hops
  std::vector<uint32_t> hop_slot;  // while listed: index of each hop in its link's hot_hops
  // Cold: constant rate since cold_since (delivered counts up to then), until the next event:
  // completion, or a DCQCN increase (timer or byte counter) while the rate is recovering.
  double cold_rate = 0, cold_since = 0;
  uint64_t stamp = 0;  // of the flow's live entry in cold_events_
  // Delivered in the current fast-forward window (counted from window_from when the flow turned
  // hot inside it); the previous full window's mean rate, -1 when there is none to compare.
  double window_bytes = 0, window_from = 0, prev_mean = -1, mean = 0;
  // Marked packets delivered since the settled run began (settle_start): the flow's CNP rate over
  // a fast-forward (FluidDcqcnNetwork::settled_cnp_rate).
  double settled_marks = 0;
  uint64_t serial = 0;  // creation order: the draws' stream (and the trace index of kFirstStarted)
  int32_t trace = -1;
};

struct alignas(64) FluidDcqcnNetwork::Link {
  // Read or written by every step of a hot link (kept together: two cache lines).
  double capacity = 0;
  double cold_load = 0;
  double q = 0;
  double p = 0;
  double arrival = 0;
  double arrived = 0, departed = 0;  // bytes through the queue so far (hot flows)
  bool marks = false;
  bool host = false;
  bool paused = false;   // an XOFF from downstream holds this link
  internal::PfcState pfc = internal::PfcState::kOn;
  int32_t node = 0;
  std::vector<HotHop> hot_hops;  // the listed hot flows' hops on this link
  std::vector<float> p_history;      // RED probability after each step (a ring of at least kMarkHistory steps, record_mark_history), lazily
  std::vector<double> a_history;     // `arrived` after each step, same ring
  int64_t mark_cursor = 0;           // step found by the last enqueue_probability
  EcnThresholds ecn;
  double peak = 0;
  // Rarely touched.
  int8_t order = 0;
  bool reported = false;
  int32_t hot_pos = -1;  // index in hot_levels_[order] while hot_hops is not empty
  double pfc_due = 0;    // s, when the XOFF or XON in flight takes hold upstream
  double pfc_delay = 0;  // s, link delay + one MTU at the link's speed
  double freed_at = 0;   // s, when a flow last left this link (its last byte through): head_start's bound
  std::vector<uint32_t> flows;  // active flows crossing the link
  Bytes bytes;
};

}  // namespace clustersim::net
