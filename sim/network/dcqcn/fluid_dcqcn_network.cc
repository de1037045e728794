// SPDX-License-Identifier: Apache-2.0
// FluidDcqcnNetwork: hot/cold flows, fluid queue steps with RED and PFC, steady-state fast-forward.
#include "sim/network/dcqcn/fluid_dcqcn_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace clustersim::net {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

Time at_or_after(double seconds, Time floor) {
  return max(floor, Time::ps(static_cast<int64_t>(std::ceil(seconds * 1e12 - 1e-3))));
}

}  // namespace

struct FluidDcqcnNetwork::Flow {
  Flow(const DcqcnParams& p, Time start) : rp(p, start) {}
  TransferId transfer = 0;
  GpuId src = 0;
  GpuId dst = 0;
  std::vector<LinkIndex> links;
  std::vector<double> in;      // bytes/s entering each hop
  std::vector<double> queued;  // bytes of this flow in each hop's queue
  std::vector<double> in_marked;      // of `in`, bytes/s carrying a CE mark
  std::vector<double> queued_marked;  // of `queued`, marked bytes
  double step_marked = 0;             // marked bytes delivered in the current step
  double size = 0, sent = 0, delivered = 0;
  double latency = 0;  // s
  double line = 0;
  DcqcnRate rp;
  double last_cnp = -kInf;
  double mark_acc = 0;
  std::vector<double> cnp_due;  // s, in order
  bool hot = true;
  bool active = true;
  bool listed_hot = false;  // in hot_
  double cold_rate = 0, cold_since = 0;
  size_t cold_slot = 0;
  double window_bytes = 0, prev_mean = -1, mean = 0;
  int32_t trace = -1;
};

// PFC state of an ingress link into a switch (see the class comment).
enum class PfcState : uint8_t { kOn, kXoffSent, kPaused, kXonSent };

struct FluidDcqcnNetwork::Link {
  double capacity = 0;
  EcnThresholds ecn;
  bool marks = false;
  bool host = false;
  int32_t node = 0;
  int8_t order = 0;
  double q = 0;
  double p = 0;
  double arrival = 0;
  double cold_load = 0;
  bool paused = false;   // an XOFF from downstream holds this link
  PfcState pfc = PfcState::kOn;
  double pfc_due = 0;    // s, when the XOFF or XON in flight takes hold upstream
  double pfc_delay = 0;  // s, link delay + one MTU at the link's speed
  double arrived = 0, departed = 0;  // bytes through the queue so far (hot flows)
  std::vector<float> p_history;      // RED probability after each step (ring of kMarkHistory), lazily
  std::vector<double> a_history;     // `arrived` after each step, same ring
  std::vector<std::pair<uint32_t, uint16_t>> hot_hops;
  std::vector<uint32_t> flows;  // active flows crossing the link
  Bytes bytes;
  double peak = 0;
  bool reported = false;
};

FluidDcqcnNetwork::FluidDcqcnNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock,
                                     const DcqcnConfig& config)
    : routes_(routes),
      fabric_(std::move(fabric)),
      clock_(clock),
      config_(config),
      dt_(config.fluid_step.as_s()),
      window_(8 * std::max({config.rate_increase_timer.as_s(), config.cnp_interval.as_s(),
                            config.alpha_update_interval.as_s()})) {
  const auto n = static_cast<size_t>(routes.link_count());
  if (fabric_.links.size() != n) throw std::logic_error("packet fabric and routes disagree on the link count");
  links_.resize(n);
  for (size_t l = 0; l < n; ++l) {
    Link& k = links_[l];
    const Bandwidth cap = routes.capacity(static_cast<LinkIndex>(l));
    k.capacity = cap.bytes_per_s;
    k.ecn = ecn_thresholds(config_, cap);
    const PacketLink& pl = fabric_.links[l];
    k.host = !fabric_.is_switch[static_cast<size_t>(pl.from)];
    k.marks = pl.ecn && !k.host;
    k.node = pl.from;
    k.order = pl.order;
    k.pfc_delay = pl.delay.as_s() + (k.capacity > 0 ? config_.mtu.as_double() / k.capacity : 0.0);
  }
  switch_used_.assign(fabric_.is_switch.size(), 0);
  ingress_share_.assign(n, 0);
  ingress_listed_.assign(n, 0);
  trace_.links.resize(n);
}

FluidDcqcnNetwork::~FluidDcqcnNetwork() {
  if (armed_) clock_.cancel(timer_);
}

TransferId FluidDcqcnNetwork::send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done) {
  const Time now = clock_.now();
  if (src == dst) {
    const TransferId id = transfers_.open(std::move(done), 0);
    transfers_.complete_at(clock_, id, now);
    return id;
  }
  if (ff_) materialize(std::max(now_, now.as_s()));
  if (hot_.empty() && !hot_dirty_) now_ = std::max(now_, now.as_s());
  routes_.paths(src, dst, scratch_paths_);
  if (scratch_paths_.empty()) throw std::logic_error("route source gave no path between two GPUs");
  const int parts = static_cast<int>(scratch_paths_.size());
  int pending = 0;
  Time latency = Time::zero();
  const double start = std::max(now_, now.as_s());
  const TransferId id = transfers_.open(std::move(done), 0);
  for (int k = 0; k < parts; ++k) {
    const Path& path = scratch_paths_[k];
    latency = max(latency, path.latency);
    const Bytes share = share_of(size, parts, k);
    if (share.n == 0 || path.links.empty()) continue;
    if (!path.shares.empty()) throw std::logic_error("flow+dcqcn keeps each sub-flow on one path (no spraying)");
    const double line = routes_.capacity(path.links.front()).bytes_per_s;
    const DcqcnParams* params = nullptr;
    for (const auto& p : params_) {
      if (p->line_rate == line) params = p.get();
    }
    if (!params) {
      params_.push_back(std::make_unique<DcqcnParams>(dcqcn_params(config_, {line})));
      params = params_.back().get();
    }
    const auto f = static_cast<uint32_t>(flows_.size());
    flows_.push_back(std::make_unique<Flow>(*params, Time::s(start)));
    Flow& fl = *flows_.back();
    fl.transfer = id;
    fl.src = src;
    fl.dst = dst;
    fl.links = path.links;
    fl.in.assign(fl.links.size(), 0.0);
    fl.queued.assign(fl.links.size(), 0.0);
    fl.in_marked.assign(fl.links.size(), 0.0);
    fl.queued_marked.assign(fl.links.size(), 0.0);
    fl.size = share.as_double();
    fl.latency = path.latency.as_s();
    fl.line = line;
    if (static_cast<int>(f) < config_.traced_flows) fl.trace = static_cast<int32_t>(f);
    for (const LinkIndex l : fl.links) links_[l].flows.push_back(f);
    hot_.push_back(f);
    fl.listed_hot = true;
    hot_dirty_ = true;
    ++pending;
    transfers_.add_part(id);
  }
  flows_created_ += pending;
  if (pending == 0) {
    transfers_.complete_at(clock_, id, now + latency);
    return id;
  }
  have_previous_window_ = false;
  window_start_ = now_;
  for (const uint32_t f : hot_) flows_[f]->window_bytes = 0;
  if (next_sample_ < now_) next_sample_ = now_;
  arm(now_);
  return id;
}

void FluidDcqcnNetwork::arm(double t) {
  const Time when = at_or_after(t, clock_.now());
  if (armed_) clock_.cancel(timer_);
  timer_ = clock_.at(when, [this] { run(); });
  armed_ = true;
}

void FluidDcqcnNetwork::rebuild_hot() {
  hot_dirty_ = false;
  for (const LinkIndex l : hot_links_) links_[l].hot_hops.clear();
  hot_links_.clear();
  std::erase_if(hot_, [this](uint32_t f) {
    Flow& fl = *flows_[f];
    const bool keep = fl.active && fl.hot;
    fl.listed_hot = keep;
    return !keep;
  });
  for (const uint32_t f : hot_) {
    const Flow& fl = *flows_[f];
    for (size_t h = 0; h < fl.links.size(); ++h) {
      Link& k = links_[fl.links[h]];
      if (k.hot_hops.empty()) hot_links_.push_back(fl.links[h]);
      k.hot_hops.emplace_back(f, static_cast<uint16_t>(h));
    }
  }
  // Links with a queue but no hot flow left keep draining nothing: their queue is empty by
  // construction (a queue only holds hot flows' bytes).
  std::sort(hot_links_.begin(), hot_links_.end(), [this](LinkIndex a, LinkIndex b) {
    return links_[a].order != links_[b].order ? links_[a].order < links_[b].order : a < b;
  });
}

void FluidDcqcnNetwork::make_cold(uint32_t f, double t) {
  Flow& fl = *flows_[f];
  fl.hot = false;
  fl.cold_rate = fl.in[0];
  fl.cold_since = t;
  for (const LinkIndex l : fl.links) {
    links_[l].cold_load += fl.cold_rate;
    links_[l].peak = std::max(links_[l].peak, links_[l].cold_load / std::max(1.0, links_[l].capacity));
  }
  fl.cold_slot = cold_.size();
  cold_.push_back(f);
  hot_dirty_ = true;
}

void FluidDcqcnNetwork::make_hot(uint32_t f, double t) {
  Flow& fl = *flows_[f];
  if (fl.hot || !fl.active) return;
  fl.delivered = std::min(fl.size, fl.delivered + fl.cold_rate * (t - fl.cold_since));
  fl.sent = fl.delivered;
  std::fill(fl.in.begin(), fl.in.end(), fl.cold_rate);
  std::fill(fl.queued.begin(), fl.queued.end(), 0.0);
  std::fill(fl.in_marked.begin(), fl.in_marked.end(), 0.0);
  std::fill(fl.queued_marked.begin(), fl.queued_marked.end(), 0.0);
  for (const LinkIndex l : fl.links) links_[l].cold_load = std::max(0.0, links_[l].cold_load - fl.cold_rate);
  const uint32_t last = cold_.back();
  cold_[fl.cold_slot] = last;
  flows_[last]->cold_slot = fl.cold_slot;
  cold_.pop_back();
  fl.hot = true;
  fl.window_bytes = 0;
  if (!fl.listed_hot) {
    hot_.push_back(f);
    fl.listed_hot = true;
  }
  hot_dirty_ = true;
  have_previous_window_ = false;
}

void FluidDcqcnNetwork::finish(uint32_t f, double when) {
  Flow& fl = *flows_[f];
  if (!fl.active) return;
  if (!fl.hot) {
    for (const LinkIndex l : fl.links) links_[l].cold_load = std::max(0.0, links_[l].cold_load - fl.cold_rate);
    const uint32_t last = cold_.back();
    cold_[fl.cold_slot] = last;
    flows_[last]->cold_slot = fl.cold_slot;
    cold_.pop_back();
  }
  fl.active = false;
  hot_dirty_ = true;
  trace_.counters.cuts += fl.rp.cuts();
  const Bytes size = bytes_of(fl.size);
  for (const LinkIndex l : fl.links) {
    Link& k = links_[l];
    k.bytes += size;
    const auto it = std::find(k.flows.begin(), k.flows.end(), f);
    if (it != k.flows.end()) {
      *it = k.flows.back();
      k.flows.pop_back();
    }
  }
  if (auto done = transfers_.finish_part(fl.transfer)) {
    const Time t = at_or_after(when, clock_.now());
    clock_.at(t, [d = std::move(done), t] { d(t); });
  }
}

double FluidDcqcnNetwork::next_cold_completion() {
  double best = kInf;
  for (const uint32_t f : cold_) {
    const Flow& fl = *flows_[f];
    if (fl.cold_rate > 0) best = std::min(best, fl.cold_since + (fl.size - fl.delivered) / fl.cold_rate);
  }
  return best;
}

void FluidDcqcnNetwork::run() {
  armed_ = false;
  const double clock_now = clock_.now().as_s();
  if (ff_) {
    if (clock_now + 1e-12 < ff_to_) {
      arm(ff_to_);
      return;
    }
    materialize(ff_to_);
  }
  now_ = std::max(now_, clock_now);
  auto finish_cold = [this](double upto) {
    bool any = true;
    while (any) {
      any = false;
      for (size_t i = 0; i < cold_.size(); ++i) {
        const uint32_t f = cold_[i];
        const Flow& fl = *flows_[f];
        const double tc = fl.cold_rate > 0 ? fl.cold_since + (fl.size - fl.delivered) / fl.cold_rate : kInf;
        if (tc <= upto + 1e-15) {
          finish(f, tc + fl.latency);
          any = true;
          break;
        }
      }
    }
  };
  // Within a picosecond: the clock keeps whole picoseconds, so a timer set for a completion can
  // fire a hair before it in seconds.
  double cold_next = next_cold_completion();
  if (cold_next <= now_ + kClockResolution) {
    finish_cold(now_ + kClockResolution);
    cold_next = next_cold_completion();
  }
  for (int i = 0; i < kStepsPerTimer; ++i) {
    if (!pfc_links_.empty()) pfc_events(now_);
    if (hot_dirty_) rebuild_hot();
    if (hot_.empty()) break;
    const size_t cold_before = cold_.size();
    step(now_, dt_);
    now_ += dt_;
    if (cold_.size() != cold_before) cold_next = next_cold_completion();
    if (cold_next <= now_) {
      finish_cold(now_);
      cold_next = next_cold_completion();
    }
    if (now_ >= next_sample_) sample(now_);
    fast_forward_check(now_);
    if (ff_) break;
  }
  if (hot_dirty_) rebuild_hot();
  if (ff_) {
    arm(ff_to_);
  } else if (!hot_.empty()) {
    arm(now_);
  } else if (cold_next < kInf) {
    if (next_sample_ <= cold_next) sample(now_);
    arm(cold_next);
  }
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
    fl.in[0] = fl.sent < fl.size ? std::min(fl.rp.rate(), (fl.size - fl.sent) / dt) : 0.0;
  }
  // Links in path order: queues, service, marking.
  for (const LinkIndex l : hot_links_) {
    Link& k = links_[l];
    double arrival = 0;
    double backlog = 0;
    for (const auto& [f, h] : k.hot_hops) {
      arrival += flows_[f]->in[h];
      backlog += flows_[f]->queued[h];
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
    for (const auto& [f, h] : k.hot_hops) {
      Flow& fl = *flows_[f];
      double out;
      double out_marked;
      if (k.host) {
        out = fl.in[h] * ratio * dt;
        out_marked = fl.in_marked[h] * ratio * dt;
        fl.sent += out;
      } else {
        const double content = fl.queued[h] + fl.in[h] * dt;
        const double content_marked = fl.queued_marked[h] + fl.in_marked[h] * dt;
        out = content * ratio;
        out_marked = content_marked * ratio;
        fl.queued[h] = content - out;
        fl.queued_marked[h] = content_marked - out_marked;
        q += fl.queued[h];
        out_marked += (out - out_marked) * p_out;
      }
      out_total += out;
      if (h + 1u < fl.links.size()) {
        fl.in[h + 1] = out / dt;
        fl.in_marked[h + 1] = out_marked / dt;
      } else {
        fl.delivered += out;
        fl.window_bytes += out;
        fl.step_marked = out_marked;
      }
    }
    k.q = q;
    k.p = k.marks ? red_probability(k.ecn, q) : 0.0;
    // Departures follow from the queue, so that bytes leaving it otherwise (a flow turning cold
    // or hot, drops) cannot leave the two counters out of step.
    k.arrived += arrival * dt;
    k.departed = k.arrived - q;
    if (k.marks && (k.p > 0 || !k.p_history.empty())) {
      if (k.p_history.empty()) {
        k.p_history.assign(kMarkHistory, 0.0f);
        k.a_history.assign(kMarkHistory, 0.0);
      }
      const auto slot = static_cast<size_t>(step_index_ % kMarkHistory);
      k.p_history[slot] = static_cast<float>(k.p);
      k.a_history[slot] = k.arrived;
    }
    if (k.capacity > 0) k.peak = std::max(k.peak, (out_total / dt + k.cold_load) / k.capacity);
    LinkCongestion& lc = trace_.links[l];
    lc.max_queue_bytes = std::max(lc.max_queue_bytes, static_cast<int64_t>(q));
    if (!k.host) switch_used_[static_cast<size_t>(k.node)] += static_cast<int64_t>(q);
  }
  // PFC (or, without it, drops) from each ingress link's share of its switch's queues.
  const double buffer = config_.buffer.as_double();
  const double alpha = config_.dynamic_threshold;
  for (const LinkIndex l : hot_links_) {
    Link& k = links_[l];
    if (k.host) continue;
    const double free = std::max(0.0, buffer - static_cast<double>(switch_used_[static_cast<size_t>(k.node)]));
    if (!config_.pfc && k.marks && k.q > alpha * free) {
      const double keep = alpha * free / k.q;
      for (const auto& [f, h] : k.hot_hops) {
        Flow& fl = *flows_[f];
        const double removed = fl.queued[h] * (1 - keep);
        fl.queued[h] -= removed;
        fl.queued_marked[h] *= keep;
        fl.sent -= removed;
      }
      drops_ += k.q * (1 - keep) / mtu;
      trace_.links[l].drops += static_cast<int64_t>(std::ceil(k.q * (1 - keep) / mtu));
      k.q *= keep;
      continue;
    }
    if (!config_.pfc && k.marks) continue;
    for (const auto& [f, h] : k.hot_hops) {
      if (h == 0) continue;
      const LinkIndex in = flows_[f]->links[h - 1];
      if (!ingress_listed_[in]) {
        ingress_listed_[in] = 1;
        ingress_touched_.push_back(in);
      }
      ingress_share_[in] += flows_[f]->queued[h];
    }
  }
  pfc_counters(t, dt);
  for (const LinkIndex l : hot_links_) {
    if (!links_[l].host) switch_used_[static_cast<size_t>(links_[l].node)] = 0;
  }
  // Receivers: marks, CNPs, completions; senders' byte counters; cold and hot transitions.
  const double end = t + dt;
  const double interval = config_.cnp_interval.as_s();
  bool changed = false;
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    if (!fl.active) continue;
    bool congested = false;
    for (size_t h = 0; h < fl.links.size(); ++h) {
      const Link& k = links_[fl.links[h]];
      congested = congested || k.q > 1.0 || k.paused || k.arrival > k.capacity * (1 + 1e-9) ||
                  fl.queued[h] > 1e-6 || std::abs(fl.in[h] - fl.in[0]) > 1e-6 * fl.line;
    }
    const double last_out = fl.links.size() == 1 ? fl.in[0] * dt : fl.in.back() * dt;
    const double marked = fl.step_marked / mtu;
    fl.step_marked = 0;
    marks_ += marked;
    if (end - fl.last_cnp >= interval) {
      fl.mark_acc += marked;
      if (fl.mark_acc >= 1.0) {
        fl.mark_acc = 0;
        fl.last_cnp = end;
        fl.cnp_due.push_back(end + fl.latency);
        ++trace_.counters.cnps;
      }
    }
    if (fl.delivered >= fl.size - 1e-6) {
      // The last byte crossed during this step; interpolate where.
      const double step_bytes = std::max(last_out, 1e-30);
      const double over = std::max(0.0, fl.delivered - fl.size);
      const double crossing = end - dt * std::min(1.0, over / step_bytes);
      fl.delivered = fl.size;
      finish(f, crossing + fl.latency);
      changed = true;
      continue;
    }
    if (!congested && fl.cnp_due.empty() && fl.rp.settled() && fl.sent < fl.size) {
      make_cold(f, end);
      changed = true;
    }
  }
  // A congested link makes every flow crossing it hot.
  for (const LinkIndex l : hot_links_) {
    const Link& k = links_[l];
    if (k.cold_load > 0 && (k.q > 1.0 || k.paused || k.arrival > k.capacity * (1 + 1e-9))) {
      const std::vector<uint32_t> flows = k.flows;
      for (const uint32_t f : flows) make_hot(f, end);
    }
  }
  if (changed) have_previous_window_ = false;
  ++step_index_;
}

double FluidDcqcnNetwork::enqueue_probability(const Link& k) const {
  // FIFO: the byte at the head of the queue is byte number `departed` of the link; it joined in
  // the earliest step s whose cumulative arrivals exceed that, and saw the queue as it was after
  // step s - 1. The entry of step s is at s % kMarkHistory; the last one written is step_index_ - 1.
  if (k.p_history.empty() || step_index_ == 0) return k.p;
  const auto at = [](int64_t step) { return static_cast<size_t>(step % kMarkHistory); };
  int64_t hi = step_index_ - 1;  // arrivals up to hi exceed `departed`, or the byte joins now
  if (k.a_history[at(hi)] <= k.departed) return k.p;
  int64_t lo = std::max<int64_t>(0, step_index_ - kMarkHistory + 1);
  if (k.a_history[at(lo)] > k.departed) return k.p_history[at(lo)];
  while (hi - lo > 1) {  // a_history[lo] <= departed < a_history[hi]
    const int64_t mid = lo + (hi - lo) / 2;
    (k.a_history[at(mid)] > k.departed ? hi : lo) = mid;
  }
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
    // The packet level resumes once the headroom is empty: the headroom bytes are the newest
    // from this ingress (FIFO), and none arrive while the pause holds, so that is the counter
    // back to zero; and the counter resume_offset below the threshold.
    const auto node = static_cast<size_t>(fabric_.links[in].to);
    const double threshold = alpha * std::max(0.0, buffer - static_cast<double>(switch_used_[node]));
    const double share = ingress_listed_[in] ? ingress_share_[in] : 0.0;
    if (share <= kDrainedBytes && share + config_.resume_offset.as_double() <= std::max(threshold, kDrainedBytes)) {
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

void FluidDcqcnNetwork::fast_forward_check(double t) {
  if (t - window_start_ < window_) return;
  const double span = t - window_start_;
  bool steady = have_previous_window_ && !hot_dirty_;
  double horizon = kInf;
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    fl.mean = fl.window_bytes / span;
    // Relative to the flow's own rate: a flow climbing back by R_AI per timer after deep cuts
    // moves little against the line rate but a lot against itself, and is not settled.
    if (std::abs(fl.mean - fl.prev_mean) > kSettleTolerance * std::max(fl.mean, fl.prev_mean) || fl.sent >= fl.size) {
      steady = false;
    }
    if (fl.mean > 0) horizon = std::min(horizon, t + (fl.size - fl.delivered) / fl.mean);
    fl.prev_mean = fl.mean;
    fl.window_bytes = 0;
  }
  window_start_ = t;
  have_previous_window_ = true;
  if (!steady) return;
  const double to = std::min(horizon - 2 * window_, next_cold_completion());
  if (to - t < 2 * window_) return;
  ff_ = true;
  ff_from_ = t;
  ff_to_ = to;
}

void FluidDcqcnNetwork::materialize(double t) {
  if (!ff_) return;
  ff_ = false;
  const double jump = std::max(0.0, t - ff_from_);
  const Time by = Time::s(jump);
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    const double d = std::min(fl.mean * jump, fl.size - fl.delivered);
    fl.delivered += d;
    fl.sent = std::min(fl.size, fl.sent + d);
    fl.rp.shift(by);
    fl.last_cnp += jump;
    for (double& c : fl.cnp_due) c += jump;
  }
  for (const LinkIndex in : pfc_links_) links_[in].pfc_due += jump;
  now_ = std::max(now_, t);
  window_start_ = now_;
  have_previous_window_ = false;
}

void FluidDcqcnNetwork::sample(double t) {
  const Time now = Time::s(t);
  for (const LinkIndex l : hot_links_) {
    Link& k = links_[l];
    if (k.q > 0.5 || k.reported) {
      trace_.queues.push_back({now, l, static_cast<int64_t>(k.q)});
      k.reported = k.q > 0.5;
    }
  }
  for (int i = 0; i < config_.traced_flows && i < static_cast<int>(flows_.size()); ++i) {
    Flow& fl = *flows_[i];
    if (!fl.active) continue;
    fl.rp.advance(now);
    trace_.rates.push_back({now, fl.trace, fl.src, fl.dst, fl.hot ? fl.rp.rate() : fl.cold_rate, fl.rp.target()});
  }
  next_sample_ = t + config_.sample_interval.as_s();
}

const CongestionTrace& FluidDcqcnNetwork::congestion() const {
  trace_.counters.ecn_marks = std::llround(marks_);
  trace_.counters.drops = std::llround(drops_);
  return trace_;
}

std::vector<LinkUsage> FluidDcqcnNetwork::link_usage() const {
  std::vector<LinkUsage> usage(links_.size());
  for (size_t l = 0; l < usage.size(); ++l) usage[l] = {links_[l].bytes, std::min(1.0, links_[l].peak)};
  return usage;
}

}  // namespace clustersim::net
