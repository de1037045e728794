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

// A unit-mean exponential variate for draw `n` of flow number `flow`: splitmix64 (Steele et al.
// 2014) over the three numbers, so runs repeat exactly for a seed whatever the order of events.
double exponential_draw(uint64_t seed, uint64_t flow, uint32_t n) {
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

Time at_or_after(double seconds, Time floor) {
  return max(floor, Time::ps(static_cast<int64_t>(std::ceil(seconds * 1e12 - 1e-3))));
}

}  // namespace

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
  double latency = 0;  // s
  double line = 0;
  DcqcnRate rp;
  double last_cnp = -kInf;
  double hazard = 0;         // since the CNP interval last passed: sum over packets of -ln(1 - p_mark)
  double cnp_threshold = 0;  // Exp(1) draw: the first marked packet arrives when hazard reaches it
  uint32_t draws = 0;
  double step_out = 0;       // bytes delivered in the current step
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
  uint64_t serial = 0;  // creation order: the draws' stream and the trace index
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
  int64_t mark_cursor = 0;           // step found by the last enqueue_probability
  std::vector<HotHop> hot_hops;  // the listed hot flows' hops on this link
  int32_t hot_pos = -1;  // index in hot_levels_[order] while hot_hops is not empty
  std::vector<uint32_t> flows;  // active flows crossing the link
  Bytes bytes;
  double peak = 0;
  bool reported = false;
};

FluidDcqcnNetwork::FluidDcqcnNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock,
                                     const DcqcnConfig& config, uint64_t seed)
    : routes_(routes),
      fabric_(std::move(fabric)),
      clock_(clock),
      config_(config),
      seed_(seed),
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
  int8_t top = 0;
  for (const PacketLink& pl : fabric_.links) top = std::max(top, pl.order);
  hot_levels_.resize(static_cast<size_t>(top) + 1);
  switch_used_.assign(fabric_.is_switch.size(), 0);
  congested_.assign(n, 0);
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
    uint32_t f;
    if (free_slots_.empty()) {
      f = static_cast<uint32_t>(flows_.size());
      flows_.emplace_back();
    } else {
      f = free_slots_.back();
      free_slots_.pop_back();
    }
    flows_[f] = std::make_unique<Flow>(*params, Time::s(start));
    Flow& fl = *flows_[f];
    fl.serial = static_cast<uint64_t>(flows_created_ + pending);
    fl.transfer = id;
    fl.src = src;
    fl.dst = dst;
    fl.links = path.links;
    fl.hops.assign(fl.links.size(), Hop{});
    fl.size = share.as_double();
    fl.latency = path.latency.as_s();
    fl.line = line;
    if (fl.serial < static_cast<uint64_t>(config_.traced_flows)) {
      fl.trace = static_cast<int32_t>(fl.serial);
      traced_.push_back(f);
    }
    fl.cnp_threshold = exponential_draw(seed_, fl.serial, 0);
    for (const LinkIndex l : fl.links) links_[l].flows.push_back(f);
    entering_.push_back(f);
    hot_dirty_ = true;
    ++pending;
    transfers_.add_part(id);
  }
  flows_created_ += pending;
  if (pending == 0) {
    transfers_.complete_at(clock_, id, now + latency);
    return id;
  }
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
  // Leavers (cold or finished since the last rebuild) give up their hops, entrants take theirs;
  // a link without hot hops leaves the stepped set.
  std::erase_if(hot_, [this](uint32_t f) {
    Flow& fl = *flows_[f];
    if (fl.active && fl.hot) return false;
    fl.listed_hot = false;  // first: remove_hops may make the flow hot again (an overloaded link)
    remove_hops(f);
    return true;
  });
  while (!entering_.empty()) {
    std::vector<uint32_t> batch;
    batch.swap(entering_);
    for (const uint32_t f : batch) {
      Flow& fl = *flows_[f];
      if (!fl.active || !fl.hot || fl.listed_hot) continue;
      add_hops(f);
      hot_.push_back(f);
      fl.listed_hot = true;
    }
  }
  // Finished flows are in no list now (cold_events_ entries go stale by their stamp).
  for (const uint32_t f : finished_slots_) flows_[f].reset();
  free_slots_.insert(free_slots_.end(), finished_slots_.begin(), finished_slots_.end());
  finished_slots_.clear();
  if (levels_changed_) {
    levels_changed_ = false;
    hot_links_.clear();
    for (const std::vector<LinkIndex>& level : hot_levels_) hot_links_.insert(hot_links_.end(), level.begin(), level.end());
  }
}

void FluidDcqcnNetwork::add_hops(uint32_t f) {
  Flow& fl = *flows_[f];
  unsettle_neighbours(fl);
  fl.window_bytes = 0;
  fl.window_from = now_;
  fl.prev_mean = -1;
  fl.hop_slot.resize(fl.links.size());
  for (size_t h = 0; h < fl.links.size(); ++h) {
    const LinkIndex l = fl.links[h];
    Link& k = links_[l];
    if (k.hot_hops.empty()) {
      std::vector<LinkIndex>& level = hot_levels_[static_cast<size_t>(k.order)];
      k.hot_pos = static_cast<int32_t>(level.size());
      level.push_back(l);
      levels_changed_ = true;
    }
    fl.hop_slot[h] = static_cast<uint32_t>(k.hot_hops.size());
    k.hot_hops.push_back({&fl.hops[h], f, static_cast<uint16_t>(h), h + 1 == fl.links.size()});
  }
}

void FluidDcqcnNetwork::remove_hops(uint32_t f) {
  Flow& fl = *flows_[f];
  unsettle_neighbours(fl);
  for (size_t h = 0; h < fl.links.size(); ++h) {
    const LinkIndex l = fl.links[h];
    Link& k = links_[l];
    const uint32_t slot = fl.hop_slot[h];
    const HotHop moved = k.hot_hops.back();
    k.hot_hops[slot] = moved;
    flows_[moved.flow]->hop_slot[moved.h] = slot;
    k.hot_hops.pop_back();
    if (!k.hot_hops.empty()) continue;
    // A queue only holds hot flows' bytes, so a link left without hot flows has none.
    std::vector<LinkIndex>& level = hot_levels_[static_cast<size_t>(k.order)];
    const LinkIndex last = level.back();
    level[static_cast<size_t>(k.hot_pos)] = last;
    links_[last].hot_pos = k.hot_pos;
    level.pop_back();
    k.hot_pos = -1;
    levels_changed_ = true;
    if (k.reported) trace_.queues.push_back({Time::s(now_), l, 0});
    k.reported = false;
    k.q = 0;
    k.p = 0;
    k.departed = k.arrived;
    k.arrival = k.cold_load;
    congested_[static_cast<size_t>(l)] = 0;
    if (k.cold_load > k.capacity * (1 + 1e-9)) {
      // Cold flows alone over capacity (one's rate rose meanwhile): step them.
      const std::vector<uint32_t> flows = k.flows;
      for (const uint32_t g : flows) make_hot(g, now_);
    }
  }
}
void FluidDcqcnNetwork::make_cold(uint32_t f, double t) {
  Flow& fl = *flows_[f];
  fl.hot = false;
  fl.cold_rate = fl.hops[0].in;
  fl.cold_since = t;
  for (const LinkIndex l : fl.links) {
    links_[l].cold_load += fl.cold_rate;
    links_[l].peak = std::max(links_[l].peak, links_[l].cold_load / std::max(1.0, links_[l].capacity));
  }
  schedule_cold(f);
  hot_dirty_ = true;
}

void FluidDcqcnNetwork::schedule_cold(uint32_t f) {
  Flow& fl = *flows_[f];
  double at = fl.cold_rate > 0 ? fl.cold_since + (fl.size - fl.delivered) / fl.cold_rate : kInf;
  if (!fl.rp.settled()) {
    const Time timer = fl.rp.next_event();
    if (timer != Time::max()) at = std::min(at, timer.as_s());
    // At least a byte on: rounding must not leave the count a hair short at the same instant.
    if (fl.cold_rate > 0) at = std::min(at, fl.cold_since + std::max(1.0, fl.rp.bytes_to_next_count()) / fl.cold_rate);
  }
  at = std::max(at, fl.cold_since + kClockResolution);  // every event moves time on
  fl.stamp = ++stamps_;
  if (at < kInf) {
    cold_events_.push_back({at, f, fl.stamp});
    std::push_heap(cold_events_.begin(), cold_events_.end(), std::greater<>{});
  }
}

double FluidDcqcnNetwork::next_cold_event() {
  while (!cold_events_.empty()) {
    const ColdEvent& e = cold_events_.front();
    const Flow* fl = flows_[e.flow].get();
    if (fl != nullptr && fl->active && !fl->hot && fl->stamp == e.stamp) return e.t;
    std::pop_heap(cold_events_.begin(), cold_events_.end(), std::greater<>{});
    cold_events_.pop_back();
  }
  return kInf;
}

void FluidDcqcnNetwork::cold_events(double upto) {
  while (next_cold_event() <= upto) {
    std::pop_heap(cold_events_.begin(), cold_events_.end(), std::greater<>{});
    const ColdEvent e = cold_events_.back();
    cold_events_.pop_back();
    Flow& fl = *flows_[e.flow];
    const double t = std::max(e.t, fl.cold_since);
    const double sent = fl.cold_rate * (t - fl.cold_since);
    if (fl.delivered + sent >= fl.size - kByteRounding) {
      // Completion. A fast-forward goes on unless the flow shared a link with a hot one.
      if (ff_ && touches_hot(fl)) materialize(t);
      fl.delivered = fl.size;
      finish(e.flow, t + fl.latency);
      continue;
    }
    // A DCQCN increase while recovering: the new rate from the event on.
    if (ff_ && touches_hot(fl)) materialize(t);
    unsettle_neighbours(fl);
    fl.delivered += sent;
    fl.cold_since = t;
    fl.rp.on_bytes(sent);
    fl.rp.advance(Time::s(t));
    const double rate = fl.rp.rate();
    const double step = rate - fl.cold_rate;
    fl.cold_rate = rate;
    bool overloaded = false;
    for (const LinkIndex l : fl.links) {
      Link& k = links_[l];
      k.cold_load = std::max(0.0, k.cold_load + step);
      k.peak = std::max(k.peak, k.cold_load / std::max(1.0, k.capacity));
      // A link with hot flows checks itself every step; one with only cold flows is checked here.
      overloaded = overloaded || (k.hot_hops.empty() && k.cold_load > k.capacity * (1 + 1e-9));
    }
    if (!overloaded) {
      schedule_cold(e.flow);
      continue;
    }
    const double when = std::max(now_, t);
    for (const LinkIndex l : std::vector<LinkIndex>(fl.links)) {
      if (links_[l].cold_load <= links_[l].capacity * (1 + 1e-9)) continue;
      const std::vector<uint32_t> flows = links_[l].flows;
      for (const uint32_t g : flows) make_hot(g, when);
    }
  }
}

void FluidDcqcnNetwork::unsettle_neighbours(const Flow& fl) {
  // The hot flows sharing a link with `fl` see their capacity change: their windows no longer
  // compare with the ones before (fast_forward_check).
  for (const LinkIndex l : fl.links) {
    for (const HotHop& e : links_[l].hot_hops) flows_[e.flow]->prev_mean = -1;
  }
}

bool FluidDcqcnNetwork::touches_hot(const Flow& fl) const {
  for (const LinkIndex l : fl.links) {
    if (!links_[l].hot_hops.empty()) return true;
  }
  return false;
}
void FluidDcqcnNetwork::make_hot(uint32_t f, double t) {
  Flow& fl = *flows_[f];
  if (fl.hot || !fl.active) return;
  if (ff_) materialize(t);
  const double sent = std::max(0.0, fl.cold_rate * (t - fl.cold_since));
  fl.rp.on_bytes(sent);
  fl.delivered = std::min(fl.size, fl.delivered + sent);
  fl.sent = fl.delivered;
  std::fill(fl.hops.begin(), fl.hops.end(), Hop{fl.cold_rate, 0, 0, 0});
  for (const LinkIndex l : fl.links) links_[l].cold_load = std::max(0.0, links_[l].cold_load - fl.cold_rate);
  fl.hot = true;
  if (!fl.listed_hot) entering_.push_back(f);
  hot_dirty_ = true;
}
void FluidDcqcnNetwork::finish(uint32_t f, double when) {
  Flow& fl = *flows_[f];
  if (!fl.active) return;
  if (!fl.hot) {
    for (const LinkIndex l : fl.links) links_[l].cold_load = std::max(0.0, links_[l].cold_load - fl.cold_rate);
  }
  fl.active = false;
  hot_dirty_ = true;
  finished_slots_.push_back(f);
  if (fl.trace >= 0) std::erase(traced_, f);
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

void FluidDcqcnNetwork::run() {
  armed_ = false;
  const double clock_now = clock_.now().as_s();
  // Within a picosecond: the clock keeps whole picoseconds, so a timer set for an event can fire
  // a hair before it in seconds.
  if (hot_.empty() && !hot_dirty_ && !ff_) now_ = std::max(now_, clock_now);
  cold_events(clock_now + kClockResolution);
  if (ff_) {
    if (clock_now + kClockResolution < ff_to_) {
      arm(std::min(ff_to_, next_cold_event()));
      return;
    }
    materialize(ff_to_);
  }
  now_ = std::max(now_, clock_now);
  for (int i = 0; i < kStepsPerTimer; ++i) {
    if (!pfc_links_.empty()) pfc_events(now_);
    if (hot_dirty_) rebuild_hot();
    if (hot_.empty()) break;
    step(now_, dt_);
    now_ += dt_;
    cold_events(now_);
    if (now_ >= next_sample_) sample(now_);
    fast_forward_check(now_);
    if (ff_) break;
  }
  if (hot_dirty_) rebuild_hot();
  const double cold_next = next_cold_event();
  if (ff_) {
    arm(std::min(ff_to_, cold_next));
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
    fl.hops[0].in = fl.sent < fl.size ? std::min(fl.rp.rate(), (fl.size - fl.sent) / dt) : 0.0;
  }
  // Links in path order: queues, service, marking.
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
    if (!config_.pfc && k.marks) continue;
    for (const HotHop& e : k.hot_hops) {
      if (e.h == 0 || e.hop->queued <= 0) continue;
      const LinkIndex in = flows_[e.flow]->links[e.h - 1];
      if (!ingress_listed_[in]) {
        ingress_listed_[in] = 1;
        ingress_touched_.push_back(in);
      }
      ingress_share_[in] += e.hop->queued;
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
    const double last_out = fl.hops.back().in * dt;
    const double marked = fl.step_marked / mtu;
    const double packets = fl.step_out / mtu;
    const double fraction = fl.step_out > 0 ? std::min(1.0, fl.step_marked / fl.step_out) : 0.0;
    fl.step_marked = 0;
    fl.step_out = 0;
    marks_ += marked;
    if (end - fl.last_cnp >= interval && packets > 0 && fraction > 0) {
      // Each packet arrives marked with probability `fraction`, independently; the CNP goes out
      // with the first marked one, so its time is where the hazard reaches an Exp(1) draw.
      fl.hazard += fraction >= 1.0 ? kInf : -packets * std::log1p(-fraction);
      if (fl.hazard >= fl.cnp_threshold) {
        fl.hazard = 0;
        fl.cnp_threshold = exponential_draw(seed_, fl.serial, ++fl.draws);
        fl.last_cnp = end;
        fl.cnp_due.push_back(end + fl.latency);
        ++trace_.counters.cnps;
      }
    }
    // Bytes are whole: a shortfall under half a byte is rounding in the fluid sums.
    if (fl.delivered >= fl.size - kByteRounding) {
      // The last byte crossed during this step; interpolate where.
      const double step_bytes = std::max(last_out, 1e-30);
      const double over = std::max(0.0, fl.delivered - fl.size);
      const double crossing = end - dt * std::min(1.0, over / step_bytes);
      fl.delivered = fl.size;
      finish(f, crossing + fl.latency);
      continue;
    }
    if (!congested && fl.cnp_due.empty() && fl.sent < fl.size) {
      make_cold(f, end);
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
  ++step_index_;
}

double FluidDcqcnNetwork::enqueue_probability(Link& k) const {
  // FIFO: the byte at the head of the queue is byte number `departed` of the link; it joined in
  // the earliest step s whose cumulative arrivals exceed that, and saw the queue as it was after
  // step s - 1. The entry of step s is at s % kMarkHistory; the last one written is step_index_ - 1.
  if (k.p_history.empty() || step_index_ == 0) return k.p;
  const auto at = [](int64_t step) { return static_cast<size_t>(step % kMarkHistory); };
  const auto joined_after = [&](int64_t step) { return k.a_history[at(step)] > k.departed; };
  int64_t hi = step_index_ - 1;  // arrivals up to hi exceed `departed`, or the byte joins now
  if (!joined_after(hi)) return k.p;
  int64_t lo = std::max<int64_t>(0, step_index_ - kMarkHistory + 1);
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
  bool steady = !hot_dirty_;
  double horizon = kInf;
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    // A flow that turned hot inside this window has no full window yet.
    fl.mean = fl.window_from <= window_start_ ? fl.window_bytes / span : -1;
    // Relative to the flow's own rate: a flow climbing back by R_AI per timer after deep cuts
    // moves little against the line rate but a lot against itself, and is not settled.
    if (fl.mean < 0 || fl.prev_mean < 0 ||
        std::abs(fl.mean - fl.prev_mean) > kSettleTolerance * std::max(fl.mean, fl.prev_mean) || fl.sent >= fl.size) {
      steady = false;
    }
    if (fl.mean > 0) horizon = std::min(horizon, t + (fl.size - fl.delivered) / fl.mean);
    fl.prev_mean = fl.mean;
    fl.window_bytes = 0;
  }
  window_start_ = t;
  if (!steady || hot_.empty()) return;
  // Cold flows keep their own events meanwhile; one on a link of a hot flow ends the jump early.
  const double to = horizon - 2 * window_;
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
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    fl.window_bytes = 0;
    fl.window_from = now_;
    fl.prev_mean = -1;
  }
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
  for (const uint32_t f : traced_) {
    Flow& fl = *flows_[f];
    // A cold flow's DCQCN state moves at its own events (cold_events), not here.
    if (fl.hot) fl.rp.advance(now);
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
