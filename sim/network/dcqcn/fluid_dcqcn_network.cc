// SPDX-License-Identifier: Apache-2.0
// FluidDcqcnNetwork: sub-flows in, timers on the clock, steady-state fast-forward, sampling.
#include "sim/network/dcqcn/fluid_dcqcn_network.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/network/dcqcn/internal/fluid_dcqcn_state.h"
#include "topology/fabric_router.h"

namespace clustersim::net {

using internal::at_or_after;
using internal::exponential_draw;
using internal::kInf;
using internal::kTimeLimit;
using internal::one_tick_after;


FluidDcqcnNetwork::FluidDcqcnNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock,
                                     const DcqcnConfig& config, uint64_t seed)
    : routes_(routes),
      fabric_(std::move(fabric)),
      clock_(clock),
      config_(config),
      seed_(seed),
      dt_(config.fluid_step.as_s()),
      window_(8 * std::max({config.rate_increase_timer.as_s(), config.cnp_interval.as_s(),
                            config.alpha_update_interval.as_s()})),
      sample_interval_(config.sample_interval.as_s()) {
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

TransferId FluidDcqcnNetwork::send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) {
  const Time now = clock_.now();
  ++sent_;
  const TransferId id = transfers_.open(std::move(done), 0);
  if (src == dst) {
    transfers_.complete_at(clock_, id, now);
    return id;
  }
  routes_.paths(src, dst, connection, scratch_paths_);
  if (scratch_paths_.empty()) throw std::logic_error("route source gave no path between two GPUs");
  // The fluid has no propagation between hops: its bytes enter every link of the path at once.
  // They enter when the first of them reaches the path's last link, so a far or late sender's
  // bytes meet the others' in the queues when they would (until 2026-12-06 at the send: a sender
  // behind 2 ms of extra latency queued against the others from the start, and they were cut to
  // the minimum rate for 2 ms where the packet level leaves them at line rate).
  Time upstream = Time::max();
  for (const Path& path : scratch_paths_) {
    if (!path.links.empty()) upstream = min(upstream, path.latency - fabric_.links[path.links.back()].delay);
  }
  if (upstream == Time::max() || upstream <= Time::zero()) {
    start_parts(id, src, dst, connection, size, Time::zero());
  } else {
    clock_.at(now + upstream, [this, id, src, dst, connection, size, upstream] {
      start_parts(id, src, dst, connection, size, upstream);
    });
  }
  return id;
}

void FluidDcqcnNetwork::start_parts(TransferId id, GpuId src, GpuId dst, uint32_t connection, Bytes size, Time upstream) {
  const Time now = clock_.now();
  if (ff_) materialize(std::max(now_, now.as_s()));
  if (hot_.empty() && !hot_dirty_) now_ = std::max(now_, now.as_s());
  // A CNP goes back from the receiver and the sender's cut reaches the queues after its bytes'
  // way there: the round trip, forward and reverse path latencies. (Until 2026-12-06 the forward
  // latency alone, half the loop's delay on a symmetric fabric.)
  // Where faults leave no way back (a failed link on the reverse route only), the forward
  // latency stands in: the run sends nothing that way, and must not be refused for it.
  Time back = Time::zero();
  bool routed_back = false;
  try {
    routes_.paths(dst, src, connection, reverse_paths_);
    routed_back = !reverse_paths_.empty();
    if (routed_back) back = reverse_paths_.front().latency;
  } catch (const topo::NoRoute&) {
  }
  routes_.paths(src, dst, connection, scratch_paths_);
  const int parts = static_cast<int>(scratch_paths_.size());
  int pending = 0;
  Time latency = Time::zero();
  const double start = std::max(now_, now.as_s());
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
    fl.latency = (path.latency - upstream).as_s();
    fl.head_start = std::max(0.0, start - now.as_s());
    fl.feedback = (path.latency + (routed_back ? back : path.latency)).as_s();
    fl.line = line;
    if (traced_selection_ == TracedFlows::kFirstStarted && fl.serial < static_cast<uint64_t>(config_.traced_flows)) {
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
    transfers_.complete_at(clock_, id, now + latency - upstream);
    return;
  }
  if (next_sample_ < now_) next_sample_ = now_;
  arm(now_);
}

void FluidDcqcnNetwork::arm(double t) {
  const Time when = at_or_after(t, clock_.now());
  if (armed_) clock_.cancel(timer_);
  timer_ = clock_.at(when, [this] { run(); });
  armed_ = true;
}

void FluidDcqcnNetwork::run() {
  armed_ = false;
  if (clock_.now() >= Time::max()) return end_at_limit();
  const double clock_now = clock_.now().as_s();
  // Within a picosecond: the clock keeps whole picoseconds, so a timer set for an event can fire
  // a hair before it in seconds.
  const double reached = one_tick_after(clock_now);
  if (hot_.empty() && !hot_dirty_ && !ff_) now_ = std::max(now_, clock_now);
  cold_events(reached);
  if (ff_) {
    if (reached < ff_to_) {
      arm(std::min(ff_to_, next_cold_event()));
      return;
    }
    materialize(ff_to_);
  }
  now_ = std::max(now_, clock_now);
  for (int i = 0; i < kStepsPerTimer; ++i) {
    // Another action due by this step's start (a computation's end, a transfer's completion) may
    // send: it runs first, so its flows join at the step they start in. Until 2026-12-07 up to
    // kStepsPerTimer steps ran ahead of the clock and a send made meanwhile waited for them: an
    // uncongested all-to-all over 16 GPUs, 256 KiB a pair, read 52.94 us against the flow
    // level's 44.44 us at 1 us steps (44.94 now), an 8-to-1 incast 25.97 us against 23.47 (23.97).
    if (i > 0 && clock_.next_due() <= at_or_after(now_, clock_.now())) break;
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

FluidDcqcnNetwork::Tally FluidDcqcnNetwork::tally() const {
  // Every counter as it stands (rate cuts are counted as the CNPs reach their senders, in step).
  return Tally{marks_,
               drops_,
               static_cast<double>(trace_.counters.cnps),
               static_cast<double>(trace_.counters.cuts),
               static_cast<double>(trace_.counters.pauses),
               static_cast<double>(trace_.counters.resumes)};
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
  if (!steady || hot_.empty()) {
    settle_start(t);
    return;
  }
  // The counters' rates over the whole settled run, not one window: a window holds a cycle or
  // two of each flow's cuts, and one window's rates came out up to 76% off (CNPs of an 8-to-1
  // incast at 100G, against the run without jumps).
  if (++settled_windows_ < kSettledWindows) return;
  // Cold flows keep their own events meanwhile; one on a link of a hot flow ends the jump early.
  // No further than the limit of simulated time, where run() ends what is left (end_at_limit).
  const double to = std::min(horizon - 2 * window_, kTimeLimit);
  if (to - t < 2 * window_) return;
  const Tally now = tally();
  // Enough CNPs in the settled run (or none at all) that it spans many cut cycles of its flows, so
  // their window means stand for the oscillation the jump carries on (a few windows of a 2-to-1
  // incast hold a dozen, and the rates taken from them read 31% off). The CNPs and cuts over the
  // jump come from the marks (settled_cnp_rate), not from this count.
  const double cnps = now.cnps - settled_tally_.cnps;
  if (cnps > 0 && cnps < kMinSettledCnps) return;
  const double settled = t - settled_from_;
  ff_per_s_ = Tally{(now.marks - settled_tally_.marks) / settled,   (now.drops - settled_tally_.drops) / settled,
                    0,                                              0,
                    (now.pauses - settled_tally_.pauses) / settled, (now.resumes - settled_tally_.resumes) / settled};
  for (const uint32_t f : hot_) {
    const Rates r = settled_cnp_rate(flows_[f]->settled_marks / settled);
    ff_per_s_.cnps += r.cnps;
    ff_per_s_.cuts += r.cuts;
  }
  // A resume answers a pause: a window that starts between the two counts one without the other,
  // and extrapolated over a jump that made more resumes than pauses (until 2026-12-06: 82,570
  // resumes of 81,999 pauses).
  ff_per_s_.resumes = std::min(ff_per_s_.resumes, ff_per_s_.pauses);
  ff_ = true;
  ff_from_ = t;
  ff_to_ = to;
}

void FluidDcqcnNetwork::settle_start(double t) {
  settled_windows_ = 0;
  settled_from_ = t;
  settled_tally_ = tally();
  for (const uint32_t f : hot_) flows_[f]->settled_marks = 0;
}

FluidDcqcnNetwork::Rates FluidDcqcnNetwork::settled_cnp_rate(double marked_per_s) const {
  // A receiver sends a CNP with the first marked packet once cnp_interval (tau) has passed since
  // its last one (step()), so with marked packets arriving at lambda a second the CNPs form a
  // renewal process of mean gap tau + 1/lambda (DCQCN's notification point, Zhu et al.,
  // SIGCOMM 2015, section 3.1): rate 1 / (tau + 1/lambda). Counting the settled run's CNPs instead
  // (until 2026-12-07) read 0 where a flow sends a marked packet every few windows (a link at 1e-4
  // of its rate: 5,155 CNPs for 524,288 marks, the packet level 524,286) and, stopping as the
  // count reached kMinSettledCnps, over-read (at 1e-3: 556,196 CNPs for 524,288 marks).
  // Each CNP cuts the sender's rate, at most once per rate_decrease_interval d (DcqcnRate: a CNP
  // inside d holds one cut back to its end). With d <= tau every CNP is at least d after the last
  // cut, so cuts = CNPs. With d > tau a cut at 0 is followed by one at d where a CNP came by then,
  // else at the next CNP, an exponential wait past d (memoryless): cycle d + exp(-lambda (d - tau))
  // / lambda (review 2026-12-07: (1 - exp(-c d)) / d, taking CNPs as Poisson, read 7-17% low).
  if (marked_per_s <= 0) return {};
  const double tau = config_.cnp_interval.as_s();
  const double cnps = 1.0 / (tau + 1.0 / marked_per_s);
  const double d = config_.rate_decrease_interval.as_s();
  if (d <= tau) return {cnps, cnps};
  const double cycle = d + std::exp(-marked_per_s * (d - tau)) / marked_per_s;
  return {cnps, std::min(cnps, 1.0 / cycle)};
}

void FluidDcqcnNetwork::materialize(double t) {
  if (!ff_) return;
  ff_ = false;
  const double jump = std::max(0.0, t - ff_from_);
  const Time by = Time::s(jump);
  // The settled run's marks, drops, CNPs, rate cuts and PFC frames go on through the jump at its
  // rates (until 2026-12-06 none were counted over it: an 8-to-1 incast of 256 MiB each at 40G
  // counted 1,960 marks and 288 CNPs where the packet level counts 55,127 and 8,188). Whole
  // counts carry their fractions to the next jump, so rare events (PFC frames) are not lost.
  const auto whole = [jump](double per_s, double& carry) {
    const double n = per_s * jump + carry;
    const double counted = std::floor(n);
    carry = n - counted;
    return static_cast<int64_t>(counted);
  };
  marks_ += ff_per_s_.marks * jump;
  drops_ += ff_per_s_.drops * jump;
  trace_.counters.cnps += whole(ff_per_s_.cnps, ff_carry_.cnps);
  trace_.counters.cuts += whole(ff_per_s_.cuts, ff_carry_.cuts);
  trace_.counters.pauses += whole(ff_per_s_.pauses, ff_carry_.pauses);
  trace_.counters.resumes += whole(ff_per_s_.resumes, ff_carry_.resumes);
  // The carries round each count on its own: no more cuts than CNPs, resumes than pauses.
  trace_.counters.cuts = std::min(trace_.counters.cuts, trace_.counters.cnps);
  trace_.counters.resumes = std::min(trace_.counters.resumes, trace_.counters.pauses);
  fast_forwarded_ += jump;
  trace_.counters.fast_forwarded = Time::s(fast_forwarded_);
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
  settle_start(now_);
  for (const uint32_t f : hot_) {
    Flow& fl = *flows_[f];
    fl.window_bytes = 0;
    fl.window_from = now_;
    fl.prev_mean = -1;
  }
}

void FluidDcqcnNetwork::end_at_limit() {
  // Flows a tiny fraction of a link's rate cannot finish in simulated time (stepped on at the
  // limit they would never end: before 2026-12-05 a NIC at 1e-12 of its rate grew memory without
  // bound). Each ends there, so its transfer does and the run reports a time at the limit, which
  // run_scenario refuses as an overflow, as the other levels' are.
  ff_ = false;
  for (uint32_t f = 0; f < flows_.size(); ++f) {
    Flow* fl = flows_[f].get();
    if (fl == nullptr || !fl->active) continue;
    fl->delivered = fl->size;
    finish(f, kTimeLimit);
  }
  rebuild_hot();
  now_ = kTimeLimit;
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
    if (fl.hot) {
      fl.rp.advance(now);
      count_cuts(fl);
    }
    trace_.rates.push_back({now, fl.trace, fl.src, fl.dst, fl.hot ? fl.rp.rate() : fl.cold_rate, fl.rp.target()});
  }
  // Series past kMaxSeriesRows are thinned and sampled half as often from then on.
  if (thin_series(trace_)) sample_interval_ *= 2;
  next_sample_ = t + sample_interval_;
}

void FluidDcqcnNetwork::trace_flows(TracedFlows which) {
  if (sent_ > 0) throw std::logic_error("trace_flows after the first send");
  traced_selection_ = which;
  cut_traces_left_ = which == TracedFlows::kFirstCut ? config_.traced_flows : 0;
}

void FluidDcqcnNetwork::start_trace(uint32_t f, double t) {
  Flow& fl = *flows_[f];
  fl.trace = config_.traced_flows - cut_traces_left_--;
  traced_.push_back(f);
  // The rate right after the cut; its target is the rate before it.
  trace_.rates.push_back({Time::s(t), fl.trace, fl.src, fl.dst, fl.rp.rate(), fl.rp.target()});
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
