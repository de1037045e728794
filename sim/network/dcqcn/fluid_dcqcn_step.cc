// SPDX-License-Identifier: Apache-2.0
// FluidDcqcnNetwork: one fluid step (queues in path order, RED/ECN marks, CNPs) and PFC.
#include "sim/network/dcqcn/fluid_dcqcn_network.h"

#include <algorithm>
#include <cmath>

#include "sim/network/dcqcn/internal/fluid_dcqcn_state.h"

namespace clustersim::net {

using internal::PfcState;
using internal::exponential_draw;
using internal::kInf;

void FluidDcqcnNetwork::count_cuts(Flow& fl) {
  trace_.counters.cuts += fl.rp.cuts() - fl.cuts_counted;
  fl.cuts_counted = fl.rp.cuts();
}

void FluidDcqcnNetwork::step(double t, double dt) {
  const double mtu = config_.mtu.as_double();
  trace_.counters.steps += 1;
  trace_.counters.events += static_cast<int64_t>(hot_.size());
  // Senders: CNPs due, timers, the rate offered to the first link.
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    size_t used = 0;
    while (used < fl.cnp_due.size() && fl.cnp_due[used] <= t) {
      fl.rp.advance(Time::s(fl.cnp_due[used]));
      fl.rp.on_cnp(Time::s(fl.cnp_due[used]));
      ++used;
    }
    if (used > 0) fl.cnp_due.erase(fl.cnp_due.begin(), fl.cnp_due.begin() + static_cast<std::ptrdiff_t>(used));
    fl.rp.advance(Time::s(t));
    count_cuts(fl);
    if (cut_traces_left_ > 0 && fl.trace < 0 && fl.rp.cuts() > 0) start_trace(f, t);
    const double left = fl.size - fl.sent;
    fl.hops[0].in = fl.sent < fl.size ? std::min(fl.rp.rate(), left / dt) : 0.0;
    fl.tail_rate = fl.sent < fl.size && left / dt < fl.rp.rate() ? fl.rp.rate() : 0.0;
  }
  // Links in path order: queues, service, marking.
  const bool fuse_ingress = config_.pfc;
  for (const LinkIndex l : hot_links_) {
    Link& k = links_[l];
    double arrival = 0;
    double backlog = 0;
    for (const HotHop& e : k.hot_hops) {
      arrival += e.hop->in;
      backlog += e.hop->queued;
    }
    k.arrival = arrival + k.cold_load;
    const double avail = k.paused ? 0.0 : std::max(0.0, k.capacity - k.cold_load);
    // RED probability for the bytes leaving now: as the queue was when they joined (enqueue
    // marking) or as it is (dequeue marking).
    double p_out = 0;
    if (k.marks && !k.host) {
      const bool at_enqueue = config_.mark_on == EcnMarkPoint::kEnqueue;
      p_out = at_enqueue ? enqueue_probability(k) : k.p;
    }
    double ratio;
    if (k.host) {
      ratio = arrival > 0 ? std::min(1.0, avail / arrival) : 0.0;
      backlog = 0;
    } else {
      const double total = backlog + arrival * dt;
      ratio = total > 0 ? std::min(1.0, avail * dt / total) : 0.0;
    }
    double q = 0;
    double out_total = 0;
    for (const HotHop& e : k.hot_hops) {
      Hop& hop = *e.hop;
      double out;
      double out_marked;
      if (k.host) {
        out = hop.in * ratio * dt;
        out_marked = hop.in_marked * ratio * dt;
        Flow& fl = *flows_[e.flow];
        fl.sent += out;
        fl.rp.on_bytes(out);  // DCQCN's byte counter: an increase event per byte_counter bytes sent
      } else {
        const double content = hop.queued + hop.in * dt;
        const double content_marked = hop.queued_marked + hop.in_marked * dt;
        out = content * ratio;
        out_marked = content_marked * ratio;
        hop.queued = content - out;
        hop.queued_marked = content_marked - out_marked;
        q += hop.queued;
        // With PFC nothing changes a queue between here and pfc_counters: the ingress's share
        // is counted now (links, then hops, in turn, as a separate pass over them would).
        if (fuse_ingress && !k.host && e.h != 0 && hop.queued > 0) {
          const LinkIndex in = e.ingress;
          if (!ingress_listed_[in]) {
            ingress_listed_[in] = 1;
            ingress_touched_.push_back(in);
          }
          ingress_share_[in] += hop.queued;
        }
        out_marked += (out - out_marked) * p_out;
      }
      out_total += out;
      if (!e.last) {
        Hop& next = *(e.hop + 1);
        next.in = out / dt;
        next.in_marked = out_marked / dt;
      } else {
        Flow& fl = *flows_[e.flow];
        fl.delivered += out;
        fl.window_bytes += out;
        fl.step_marked = out_marked;
        fl.step_out = out;
      }
    }
    k.q = q;
    k.p = k.marks ? red_probability(k.ecn, q) : 0.0;
    congested_[static_cast<size_t>(l)] = q > 1.0 || k.paused || k.arrival > k.capacity * (1 + 1e-9);
    // Departures follow from the queue, so that bytes leaving it otherwise (a flow turning cold
    // or hot, drops) cannot leave the two counters out of step.
    k.arrived += arrival * dt;
    k.departed = k.arrived - q;
    if (k.marks && (k.p > 0 || !k.p_history.empty())) record_mark_history(k, dt);
    if (k.capacity > 0) k.peak = std::max(k.peak, (out_total / dt + k.cold_load) / k.capacity);
    LinkCongestion& lc = trace_.links[l];
    lc.max_queue_bytes = std::max(lc.max_queue_bytes, static_cast<int64_t>(q));
    if (!k.host) switch_used_[static_cast<size_t>(k.node)] += static_cast<int64_t>(q);
  }
  // Without PFC: drops at the marking (Ethernet) links and the ingress shares of the lossless
  // NVLink ones. With it the shares were counted in the loop above.
  if (!fuse_ingress) {
    const double buffer = config_.buffer.as_double();
    const double alpha = config_.dynamic_threshold;
    for (const LinkIndex l : hot_links_) {
      Link& k = links_[l];
      if (k.host) continue;
      const double free = std::max(0.0, buffer - static_cast<double>(switch_used_[static_cast<size_t>(k.node)]));
      if (k.marks && k.q > alpha * free) {
        const double keep = alpha * free / k.q;
        for (const HotHop& e : k.hot_hops) {
          const double removed = e.hop->queued * (1 - keep);
          e.hop->queued -= removed;
          e.hop->queued_marked *= keep;
          flows_[e.flow]->sent -= removed;
        }
        drops_ += k.q * (1 - keep) / mtu;
        trace_.links[l].drops += static_cast<int64_t>(std::ceil(k.q * (1 - keep) / mtu));
        k.q *= keep;
        continue;
      }
      if (k.marks) continue;
      for (const HotHop& e : k.hot_hops) {
        if (e.h == 0 || e.hop->queued <= 0) continue;
        const LinkIndex in = e.ingress;
        if (!ingress_listed_[in]) {
          ingress_listed_[in] = 1;
          ingress_touched_.push_back(in);
        }
        ingress_share_[in] += e.hop->queued;
      }
    }
  }
  pfc_counters(t, dt);
  for (const LinkIndex l : hot_links_) {
    if (!links_[l].host) switch_used_[static_cast<size_t>(links_[l].node)] = 0;
  }
  // Receivers: marks, CNPs, completions; senders' byte counters; cold and hot transitions.
  const double end = t + dt;
  const double interval = config_.cnp_interval.as_s();
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    if (!fl.active) continue;
    bool congested = false;
    for (size_t h = 0; h < fl.links.size() && !congested; ++h) {
      congested = congested_[static_cast<size_t>(fl.links[h])] || fl.hops[h].queued > 1e-6 ||
                  std::abs(fl.hops[h].in - fl.hops[0].in) > 1e-6 * fl.line;
    }
    // What the last hop delivered this step, and the step before.
    const double last_out = fl.step_out;
    const double prev_out = fl.prev_out;
    fl.prev_out = last_out;
    const double marked = fl.step_marked / mtu;
    const double packets = fl.step_out / mtu;
    const double fraction = fl.step_out > 0 ? std::min(1.0, fl.step_marked / fl.step_out) : 0.0;
    fl.step_marked = 0;
    fl.step_out = 0;
    marks_ += marked;
    fl.settled_marks += marked;
    if (end - fl.last_cnp >= interval && packets > 0 && fraction > 0) {
      // Each packet arrives marked with probability `fraction`, independently; the CNP goes out
      // with the first marked one, so its time is where the hazard reaches an Exp(1) draw. Only
      // whole packets count: until 2026-12-07 a step's fraction of a packet, all marked, sent a
      // CNP at once, and a flow through a link at 0.3% of its rate, a packet every few steps,
      // answered 7,168 marks with 22,043 CNPs (the packet level 6,244; at 1e-6, 20 million).
      // The credit counts the packets after the interval passed (counting those inside it too,
      // so that a whole packet is due as soon as it passes, moved 32 x 1 MiB with 4 queue pairs
      // a sender from 1.00x, the packet level's, to 1.54x: kept as measured, review 2026-12-07).
      fl.packet_credit += packets;
      const double whole = std::floor(fl.packet_credit);
      fl.packet_credit -= whole;
      if (whole > 0) fl.hazard += fraction >= 1.0 ? kInf : -whole * std::log1p(-fraction);
      if (fl.hazard >= fl.cnp_threshold) {
        fl.hazard = 0;
        fl.cnp_threshold = exponential_draw(seed_, fl.serial, ++fl.draws);
        fl.last_cnp = end;
        fl.cnp_due.push_back(end + fl.feedback);
        ++trace_.counters.cnps;
      }
    }
    // Bytes are whole: a shortfall under half a byte is rounding in the fluid sums.
    if (fl.delivered >= fl.size - kByteRounding) {
      // The last byte crossed during this step: at the bytes it still needed over the rate the
      // hop delivered at, this step's or, where the step ended short of a full one (a queue
      // draining its last bytes), the step before's. Before 2026-12-04 it used the last hop's
      // inflow, 0 where a queue drains with nothing arriving: the finish snapped to the step's
      // start, and an incast ended up to a step under its bound (26.5 us against 27.1 at 1 us
      // steps, 502.5 against 518.6 at 20 us).
      const double needed = fl.size - (fl.delivered - last_out);
      const double rate_bytes = std::max({last_out, prev_out, 1e-30});
      double crossing = end - dt + dt * std::clamp(needed / rate_bytes, 0.0, 1.0);
      // Fewer bytes than a step's worth were left, spread over the step: on a path that took
      // them without a queue they go out at the sender's rate and arrive that much sooner (until
      // 2026-12-05 at the step's end: a 1-byte transfer alone on the fabric took a whole step,
      // 3.5 us against the flow level's 2.5 us at 1 us steps, a 60 KB one 22.5 us at 20 us steps).
      // On each link the tails share evenly what the cold flows and the other hot flows leave
      // (all the tails would go at once), so flows that share a link still end no sooner than it
      // can carry them.
      if (fl.tail_rate > 0 && !congested) {
        double rate = fl.tail_rate;
        for (const LinkIndex l : fl.links) {
          const Link& k = links_[static_cast<size_t>(l)];
          double others = 0;
          size_t tails = 0;
          for (const HotHop& e : k.hot_hops) {
            if (flows_[e.flow]->tail_rate > 0) {
              ++tails;
            } else {
              others += e.hop->in;
            }
          }
          const double avail = k.paused ? 0.0 : std::max(0.0, k.capacity - k.cold_load - others);
          rate = std::min(rate, avail / static_cast<double>(std::max<size_t>(1, tails)));
        }
        if (rate > 0) crossing = std::min(crossing, end - dt + needed / rate);
      }
      // Uncongested in its first step, the flow would have run as it did from its entry on.
      if (!congested) crossing -= head_start_credit(fl, end - dt);
      fl.delivered = fl.size;
      finish(f, crossing + fl.latency);
      continue;
    }
    // A flow that entered inside a step joined at its end: uncongested through its first step,
    // it turns cold as if it had run from its entry (until 2026-12-07 it kept the wait, up to a
    // step: an uncongested 16-GPU all-to-all of 4 KiB a pair read 3.655 us at 1 us steps against
    // the flow level's 3.155; 256 KiB a pair 44.94 against 44.44).
    if (!congested && fl.cnp_due.empty() && fl.sent < fl.size) {
      make_cold(f, end - head_start_credit(fl, end - dt));
    }
    fl.head_start = 0;
  }
  // A congested link makes every flow crossing it hot.
  for (const LinkIndex l : hot_links_) {
    const Link& k = links_[l];
    if (k.cold_load > 0 && (k.q > 1.0 || k.paused || k.arrival > k.capacity * (1 + 1e-9))) {
      // make_hot never edits a link's flow list: no copy needed.
      for (const uint32_t f : k.flows) make_hot(f, end);
    }
  }
  ++step_index_;
}

double FluidDcqcnNetwork::head_start_credit(const Flow& fl, double step_start) const {
  // What the flow waited for the step, less any of it when a link of its path still carried a
  // flow that left before the step (the wait may then have been its share of the link). Flows
  // that leave inside the step shared it with this one there, as the step counts them.
  double credit = fl.head_start;
  for (const LinkIndex l : fl.links) {
    const double freed = links_[l].freed_at;
    if (freed <= step_start) credit = std::min(credit, step_start - freed);
  }
  return std::max(0.0, credit);
}

void FluidDcqcnNetwork::record_mark_history(Link& k, double dt) {
  // The ring holds at least the steps a byte joining now waits in the queue (twice its drain time
  // at the link's rate, for pauses and cold load), so a departing byte finds the step it joined
  // in. Until 2026-12-07 it held 1,024 steps whatever the step: 10 us at 10 ns steps, under the
  // queueing delay of a congested port, and the incast below read 2.24 ms at 10 ns and 20 ns
  // steps against 3.45 ms at 50 ns to 1 us and 3.44-3.53 at the packet level (4 senders x 16 MiB).
  const double serving = std::max(k.capacity - k.cold_load, 0.25 * k.capacity);  // cold load leaves less
  const double drain = serving > 0 ? 2.0 * k.q / serving / dt : 0.0;
  const auto need = static_cast<size_t>(std::min(drain, static_cast<double>(kMaxMarkHistory))) + 2;
  const size_t size = k.p_history.size();
  if (size < need) {
    // Grow, keeping each kept step at its new slot; older steps read as joined before any byte
    // still queued (arrivals 0), as a fresh ring's do.
    const size_t grown = std::max({need, std::min<size_t>(2 * size, kMaxMarkHistory), static_cast<size_t>(kMarkHistory)});
    // Steps older than the kept ones read the oldest kept probability, as a lookup past the old
    // ring's span did (not 0: review).
    const int64_t oldest = std::max<int64_t>(0, step_index_ - static_cast<int64_t>(size));
    std::vector<float> p(grown, size > 0 ? k.p_history[static_cast<size_t>(oldest) % size] : 0.0f);
    std::vector<double> a(grown, 0.0);
    for (int64_t st = oldest; size > 0 && st < step_index_; ++st) {
      p[static_cast<size_t>(st) % grown] = k.p_history[static_cast<size_t>(st) % size];
      a[static_cast<size_t>(st) % grown] = k.a_history[static_cast<size_t>(st) % size];
    }
    k.p_history = std::move(p);
    k.a_history = std::move(a);
  }
  const auto slot = static_cast<size_t>(step_index_) % k.p_history.size();
  k.p_history[slot] = static_cast<float>(k.p);
  k.a_history[slot] = k.arrived;
}

double FluidDcqcnNetwork::enqueue_probability(Link& k) const {
  // FIFO: the byte at the head of the queue is byte number `departed` of the link; it joined in
  // the earliest step s whose cumulative arrivals exceed that, and saw the queue as it was after
  // step s - 1. The entry of step s is at s % the ring's size; the last one written is
  // step_index_ - 1.
  if (k.p_history.empty() || step_index_ == 0) return k.p;
  const auto ring = static_cast<int64_t>(k.p_history.size());
  const auto at = [ring](int64_t step) { return static_cast<size_t>(step % ring); };
  const auto joined_after = [&](int64_t step) { return k.a_history[at(step)] > k.departed; };
  int64_t hi = step_index_ - 1;  // arrivals up to hi exceed `departed`, or the byte joins now
  if (!joined_after(hi)) return k.p;
  int64_t lo = std::max<int64_t>(0, step_index_ - ring + 1);
  if (joined_after(lo)) return k.p_history[at(lo)];
  // `departed` only grows, so the answer moves forward: walk on from the last one a few steps
  // (a steady queue moves it by about one per step), else bisect.
  int64_t c = std::clamp(k.mark_cursor, lo + 1, hi);
  if (!joined_after(c - 1)) {
    for (int i = 0; i < 8 && !joined_after(c); ++i) ++c;
    if (joined_after(c)) {
      k.mark_cursor = c;
      return k.p_history[at(c - 1)];
    }
    lo = c;
  } else {
    hi = c - 1;
  }
  while (hi - lo > 1) {  // lo's entry <= departed < hi's entry
    const int64_t mid = lo + (hi - lo) / 2;
    (joined_after(mid) ? hi : lo) = mid;
  }
  k.mark_cursor = hi;
  return k.p_history[at(hi - 1)];
}

void FluidDcqcnNetwork::pfc_counters(double t, double dt) {
  // Each ingress's counter: its flows' bytes in the switch's egress queues.
  const double buffer = config_.buffer.as_double();
  const double alpha = config_.dynamic_threshold;
  for (const LinkIndex in : ingress_touched_) {
    Link& k = links_[in];
    const auto node = static_cast<size_t>(fabric_.links[in].to);
    const double threshold = alpha * std::max(0.0, buffer - static_cast<double>(switch_used_[node]));
    if (k.pfc == PfcState::kOn && ingress_share_[in] > threshold) {
      k.pfc = PfcState::kXoffSent;
      k.pfc_due = t + dt + k.pfc_delay;
      ++trace_.counters.pauses;
      pfc_links_.push_back(in);
    }
  }
  for (const LinkIndex in : pfc_links_) {
    Link& k = links_[in];
    if (k.pfc != PfcState::kPaused) continue;
    // XON once the counter is resume_offset below the threshold, or empty. The counter here holds
    // the headroom's bytes too; as at the packet level departures free those first, and the
    // counter falls to threshold - resume_offset only after more than the headroom has left.
    // (Until 2026-12-06 both levels waited for the counter to empty, and the output idled for
    // the XON's trip at every pause.)
    const auto node = static_cast<size_t>(fabric_.links[in].to);
    const double threshold = alpha * std::max(0.0, buffer - static_cast<double>(switch_used_[node]));
    const double share = ingress_listed_[in] ? ingress_share_[in] : 0.0;
    if (share <= kDrainedBytes || share + config_.resume_offset.as_double() <= threshold) {
      k.pfc = PfcState::kXonSent;
      k.pfc_due = t + dt + k.pfc_delay;
      ++trace_.counters.resumes;
    }
  }
  for (const LinkIndex in : ingress_touched_) {
    ingress_share_[in] = 0;
    ingress_listed_[in] = 0;
  }
  ingress_touched_.clear();
}

void FluidDcqcnNetwork::pfc_events(double t) {
  // An event takes hold at the step boundary nearest its time.
  const double by = t + 0.5 * dt_;
  std::erase_if(pfc_links_, [this, t, by](LinkIndex in) {
    Link& k = links_[in];
    if (k.pfc_due > by) return false;
    if (k.pfc == PfcState::kXoffSent) {
      k.pfc = PfcState::kPaused;
      k.paused = true;
      ++trace_.links[in].pauses;
      // The flows through the stopped link change rate: step them.
      const std::vector<uint32_t> flows = k.flows;
      for (const uint32_t f : flows) make_hot(f, t);
    } else if (k.pfc == PfcState::kXonSent) {
      k.pfc = PfcState::kOn;
      k.paused = false;
      return true;
    }
    return false;
  });
}

}  // namespace clustersim::net
