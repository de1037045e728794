// SPDX-License-Identifier: Apache-2.0
// PacketNetwork: event loop, NIC scheduling, switch queues with RED/ECN and PFC, DCQCN feedback.
#include "sim/network/packet/packet_network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/network/internal/slots.h"

namespace clustersim::net {

namespace {

constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

int64_t ceil_ps(double seconds) { return static_cast<int64_t>(std::ceil(seconds * 1e12)); }

}  // namespace

struct PacketNetwork::Flow {
  Flow(const DcqcnParams& p, Time start) : rp(p, start) {}
  TransferId transfer = 0;
  GpuId src = 0;
  GpuId dst = 0;
  std::vector<LinkIndex> path;
  int64_t size = 0;
  uint32_t packets = 0;
  uint32_t snd_nxt = 0;    // next packet to send
  uint32_t max_sent = 0;   // first packet never sent
  uint32_t rcv_next = 0;   // next packet the receiver accepts
  int64_t last_cnp = std::numeric_limits<int64_t>::min() / 2;
  int64_t last_send = -1;  // ps; -1 before the first packet
  uint32_t last_bytes = 0;
  int64_t back_latency = 0;  // ps, receiver to sender
  int64_t nack_for = -1;
  uint32_t rto_mark = 0;
  uint32_t rto_epoch = 0;
  int32_t trace = -1;
  bool scheduled = false;  // in its NIC port's ready heap
  bool done = false;
  DcqcnRate rp;
};

struct PacketNetwork::Port {
  double ps_per_byte = 0;
  EcnThresholds ecn;
  bool marks = false;
  bool host = false;
  bool busy = false;
  bool paused = false;
  std::deque<uint32_t> queue;
  int64_t queued = 0;
  std::vector<std::pair<int64_t, uint32_t>> ready;  // host ports: min-heap of (eligible ps, flow)
  int64_t wake_at = kNever;
};

PacketNetwork::PacketNetwork(const RouteSource& routes, PacketFabric fabric, Clock& clock,
                             const DcqcnConfig& config, uint64_t seed)
    : routes_(routes),
      fabric_(std::move(fabric)),
      clock_(clock),
      config_(config),
      rng_(seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull),
      sample_interval_(config.sample_interval) {
  const auto links = static_cast<size_t>(routes.link_count());
  if (fabric_.links.size() != links) throw std::logic_error("packet fabric and routes disagree on the link count");
  ports_.resize(links);
  headroom_.resize(links);
  for (size_t l = 0; l < links; ++l) {
    Port& p = ports_[l];
    const Bandwidth cap = routes.capacity(static_cast<LinkIndex>(l));
    p.ps_per_byte = cap.bytes_per_s > 0 ? 1e12 / cap.bytes_per_s : 0;
    p.ecn = ecn_thresholds(config_, cap);
    const PacketLink& pl = fabric_.links[l];
    p.host = !fabric_.is_switch[static_cast<size_t>(pl.from)];
    p.marks = pl.ecn && !p.host;
    const double bdp = cap.bytes_per_s * pl.delay.as_s();
    headroom_[l] = config_.headroom ? config_.headroom->as_double()
                                    : 2.0 * bdp + 2.0 * config_.mtu.as_double();
  }
  shared_used_.assign(fabric_.is_switch.size(), 0);
  ingress_bytes_.assign(links, 0);
  headroom_used_.assign(links, 0);
  xoff_sent_.assign(links, 0);
  link_bytes_.resize(links);
  sampled_bytes_.assign(links, 0);
  peak_utilisation_.assign(links, 0);
  queue_reported_.assign(links, 0);
  sample_listed_.assign(links, 0);
  trace_.links.resize(links);
}

PacketNetwork::~PacketNetwork() {
  if (armed_) clock_.cancel(timer_);
}

double PacketNetwork::uniform() {
  // xorshift64* (Vigna 2016): fast, deterministic across platforms.
  rng_ ^= rng_ >> 12;
  rng_ ^= rng_ << 25;
  rng_ ^= rng_ >> 27;
  return static_cast<double>((rng_ * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
}

void PacketNetwork::push(int64_t t, Kind kind, uint32_t a, uint32_t b) {
  heap_.push_back({t, (seq_++ << 4) | kind, a, b});
  std::push_heap(heap_.begin(), heap_.end(), std::greater<>{});
}

void PacketNetwork::arm() {
  if (heap_.empty()) {
    if (armed_) clock_.cancel(timer_);
    armed_ = false;
    return;
  }
  const int64_t when = std::max(heap_.front().t, clock_.now().as_ps());
  if (armed_ && armed_at_ <= when) return;
  if (armed_) clock_.cancel(timer_);
  timer_ = clock_.at(Time::ps(when), [this] { run_batch(); });
  armed_ = true;
  armed_at_ = when;
}

void PacketNetwork::run_batch() {
  armed_ = false;
  const int64_t horizon = clock_.now().as_ps() + kLookahead.as_ps();
  while (!heap_.empty() && heap_.front().t <= horizon) {
    std::pop_heap(heap_.begin(), heap_.end(), std::greater<>{});
    const Event e = heap_.back();
    heap_.pop_back();
    now_ = std::max(now_, e.t);
    ++trace_.counters.events;
    dispatch(e);
    if (!finished_.empty()) break;
  }
  for (std::function<void(Time)>& done : finished_) {
    const int64_t t = now_;
    clock_.at(Time::ps(t), [d = std::move(done), t] { d(Time::ps(t)); });
  }
  finished_.clear();
  arm();
}

void PacketNetwork::dispatch(const Event& e) {
  switch (static_cast<Kind>(e.key & 15)) {
    case kTxDone:
      ports_[e.a].busy = false;
      try_send(e.a);
      break;
    case kArrive:
      arrive(e.a);
      break;
    case kPfc:
      on_pfc(e.a, e.b != 0);
      break;
    case kPortWake:
      if (ports_[e.a].wake_at == e.t) ports_[e.a].wake_at = kNever;
      try_send(e.a);
      break;
    case kCnp: {
      Flow& f = *flows_[e.a];
      if (f.done) break;
      f.rp.advance(Time::ps(now_));
      f.rp.on_cnp(Time::ps(now_));
      break;
    }
    case kNack:
      on_nack(e.a, e.b);
      break;
    case kRto:
      if (flows_[e.a]->rto_epoch == e.b) on_rto(e.a);
      break;
    case kSample:
      sample();
      if (active_flows_ > 0) {
        push(now_ + sample_interval_.as_ps(), kSample, 0);
      } else {
        sampling_ = false;
      }
      break;
  }
}

TransferId PacketNetwork::send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) {
  const Time now = clock_.now();
  if (src == dst) {
    const TransferId id = transfers_.open(std::move(done), 0);
    transfers_.complete_at(clock_, id, now);
    return id;
  }
  routes_.paths(src, dst, connection, scratch_paths_);
  if (scratch_paths_.empty()) throw std::logic_error("route source gave no path between two GPUs");
  const int parts = static_cast<int>(scratch_paths_.size());
  const int64_t start = std::max(now.as_ps(), now_);
  const TransferId id = transfers_.open(std::move(done), 0);
  int pending = 0;
  Time latency = Time::zero();
  for (int k = 0; k < parts; ++k) {
    const Path& path = scratch_paths_[k];
    latency = max(latency, path.latency);
    const Bytes share = share_of(size, parts, k);
    if (share.n == 0 || path.links.empty()) continue;
    if (!path.shares.empty()) throw std::logic_error("the packet level routes each packet on one path (no spraying)");
    const Bandwidth line = routes_.capacity(path.links.front());
    const DcqcnParams* params = nullptr;
    for (const auto& p : params_) {
      if (p->line_rate == line.bytes_per_s) params = p.get();
    }
    if (!params) {
      params_.push_back(std::make_unique<DcqcnParams>(dcqcn_params(config_, line)));
      params = params_.back().get();
    }
    const auto f = static_cast<uint32_t>(flows_.size());
    flows_.push_back(std::make_unique<Flow>(*params, Time::ps(start)));
    Flow& flow = *flows_.back();
    flow.transfer = id;
    flow.src = src;
    flow.dst = dst;
    flow.path = path.links;
    flow.size = share.n;
    flow.packets = static_cast<uint32_t>((share.n + config_.mtu.n - 1) / config_.mtu.n);
    for (const LinkIndex l : flow.path) flow.back_latency += fabric_.links[l].delay.as_ps();
    if (static_cast<int>(flows_.size()) <= config_.traced_flows) flow.trace = static_cast<int32_t>(f);
    ++pending;
    transfers_.add_part(id);
    ++active_flows_;
    schedule_flow(static_cast<uint32_t>(flow.path.front()), f);
    push(start, kPortWake, static_cast<uint32_t>(flow.path.front()));
  }
  if (pending == 0) {
    transfers_.complete_at(clock_, id, now + latency);
    return id;
  }
  if (!sampling_) {
    sampling_ = true;
    push(start + sample_interval_.as_ps(), kSample, 0);
  }
  arm();
  return id;
}

void PacketNetwork::schedule_flow(uint32_t port, uint32_t flow) {
  Flow& f = *flows_[flow];
  if (f.scheduled || f.done) return;
  f.scheduled = true;
  int64_t eligible = now_;
  if (f.last_send >= 0) eligible = std::max(eligible, f.last_send + ceil_ps(f.last_bytes / f.rp.rate()));
  // Wake at the next DCQCN timer too, so that a rate increase shortens a long pacing gap.
  eligible = std::min(eligible, std::max(now_, f.rp.next_event().as_ps()));
  auto& ready = ports_[port].ready;
  ready.emplace_back(eligible, flow);
  std::push_heap(ready.begin(), ready.end(), std::greater<>{});
}

void PacketNetwork::try_send(uint32_t port) {
  Port& p = ports_[port];
  if (p.busy || p.paused) return;
  if (p.host) {
    send_from_host(port);
    return;
  }
  if (p.queue.empty()) return;
  const uint32_t id = p.queue.front();
  p.queue.pop_front();
  Packet& pkt = packets_[id];
  p.queued -= pkt.bytes;
  if (p.marks && config_.mark_on == EcnMarkPoint::kDequeue && !pkt.ecn &&
      uniform() < red_probability(p.ecn, static_cast<double>(p.queued))) {
    pkt.ecn = 1;
    ++trace_.counters.ecn_marks;
    ++trace_.links[port].marks;
  }
  release_buffer(pkt);
  start_tx(port, id);
}

bool PacketNetwork::send_from_host(uint32_t port) {
  Port& p = ports_[port];
  auto& ready = p.ready;
  const Time now = Time::ps(now_);
  while (!ready.empty() && ready.front().first <= now_) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>{});
    const uint32_t fi = ready.back().second;
    ready.pop_back();
    Flow& f = *flows_[fi];
    f.scheduled = false;
    if (f.done || f.snd_nxt >= f.packets) continue;
    f.rp.advance(now);
    if (f.last_send >= 0 && f.last_send + ceil_ps(f.last_bytes / f.rp.rate()) > now_) {
      schedule_flow(port, fi);  // paced: not yet
      continue;
    }
    const uint32_t id = internal::take_slot(packets_, free_packets_);
    Packet& pkt = packets_[id];
    const uint32_t seq = f.snd_nxt++;
    const int64_t offset = int64_t{seq} * config_.mtu.n;
    pkt = {fi, seq, static_cast<uint32_t>(std::min<int64_t>(config_.mtu.n, f.size - offset)), 0, 0};
    if (seq < f.max_sent) {
      ++trace_.counters.retransmits;
    } else {
      f.max_sent = seq + 1;
    }
    f.rp.on_bytes(pkt.bytes);
    f.last_send = now_;
    f.last_bytes = pkt.bytes;
    if (f.snd_nxt < f.packets) {
      schedule_flow(port, fi);
    } else {
      f.rto_mark = f.rcv_next;
      push(now_ + kRetransmitTimeout.as_ps(), kRto, fi, ++f.rto_epoch);
    }
    start_tx(port, id);
    return true;
  }
  if (!ready.empty() && ready.front().first < p.wake_at) {
    p.wake_at = ready.front().first;
    push(p.wake_at, kPortWake, port);
  }
  return false;
}

void PacketNetwork::start_tx(uint32_t port, uint32_t packet) {
  Port& p = ports_[port];
  const Packet& pkt = packets_[packet];
  p.busy = true;
  link_bytes_[port].n += pkt.bytes;
  if (!sample_listed_[port]) {
    sample_listed_[port] = 1;
    sample_ports_.push_back(port);
  }
  const int64_t tx = static_cast<int64_t>(std::ceil(pkt.bytes * p.ps_per_byte));
  push(now_ + tx, kTxDone, port);
  push(now_ + tx + fabric_.links[port].delay.as_ps(), kArrive, packet);
}

void PacketNetwork::arrive(uint32_t packet) {
  Packet& pkt = packets_[packet];
  const Flow& f = *flows_[pkt.flow];
  if (pkt.hop + 1u == f.path.size()) {
    deliver(packet);
    return;
  }
  ++pkt.hop;
  enqueue(static_cast<uint32_t>(f.path[pkt.hop]), packet);
}

void PacketNetwork::enqueue(uint32_t port, uint32_t packet) {
  Packet& pkt = packets_[packet];
  const Flow& f = *flows_[pkt.flow];
  Port& p = ports_[port];
  const auto node = static_cast<size_t>(fabric_.links[port].from);
  const auto in = static_cast<size_t>(f.path[pkt.hop - 1]);
  const int64_t size = pkt.bytes;
  bool admitted = true;
  if (fabric_.is_switch[node]) {
    const int64_t buffer = config_.buffer.n;
    if (config_.pfc) {
      if (!xoff_sent_[in] && shared_used_[node] + size <= buffer) {
        shared_used_[node] += size;
        ingress_bytes_[in] += size;
        if (ingress_bytes_[in] > config_.dynamic_threshold * (buffer - shared_used_[node])) {
          xoff_sent_[in] = 1;
          ++trace_.counters.pauses;
          push(now_ + fabric_.links[in].delay.as_ps(), kPfc, static_cast<uint32_t>(in), 1);
        }
      } else if (headroom_used_[in] + size <= headroom_[in]) {
        headroom_used_[in] += size;
      } else {
        admitted = false;
      }
    } else if (shared_used_[node] + size > buffer ||
               p.queued + size > config_.dynamic_threshold * (buffer - shared_used_[node])) {
      admitted = false;
    } else {
      shared_used_[node] += size;
      ingress_bytes_[in] += size;
    }
  }
  if (!admitted) {
    ++trace_.counters.drops;
    ++trace_.links[port].drops;
    free_packets_.push_back(packet);
    return;
  }
  if (p.marks && config_.mark_on == EcnMarkPoint::kEnqueue &&
      uniform() < red_probability(p.ecn, static_cast<double>(p.queued))) {
    pkt.ecn = 1;
    ++trace_.counters.ecn_marks;
    ++trace_.links[port].marks;
  }
  p.queue.push_back(packet);
  p.queued += size;
  trace_.links[port].max_queue_bytes = std::max(trace_.links[port].max_queue_bytes, p.queued);
  try_send(port);
}

void PacketNetwork::release_buffer(const Packet& pkt) {
  const Flow& f = *flows_[pkt.flow];
  const auto node = static_cast<size_t>(fabric_.links[f.path[pkt.hop]].from);
  if (!fabric_.is_switch[node] || pkt.hop == 0) return;
  const auto in = static_cast<size_t>(f.path[pkt.hop - 1]);
  // Bytes, not packets, are accounted: a departure frees the ingress's headroom first, then its
  // shared-buffer bytes, as switch MMUs (and HPCC's ns-3 SwitchMmu) count them. The headroom
  // holds the newest bytes, so releasing it by packet kept the port paused until its whole
  // backlog had left and the output idled for the XON's trip (a 7-to-1 incast on NVLink took
  // 6.7% longer than the line rate allows, whatever resume_offset said; 2026-12-06).
  const int64_t from_headroom = std::min<int64_t>(headroom_used_[in], pkt.bytes);
  headroom_used_[in] -= from_headroom;
  shared_used_[node] -= pkt.bytes - from_headroom;
  ingress_bytes_[in] -= pkt.bytes - from_headroom;
  if (config_.pfc && xoff_sent_[in] && headroom_used_[in] <= 0) {
    const double threshold = config_.dynamic_threshold * (config_.buffer.n - shared_used_[node]);
    if (ingress_bytes_[in] <= 0 || ingress_bytes_[in] + config_.resume_offset.n <= threshold) {
      xoff_sent_[in] = 0;
      ++trace_.counters.resumes;
      push(now_ + fabric_.links[in].delay.as_ps(), kPfc, static_cast<uint32_t>(in), 0);
    }
  }
}

void PacketNetwork::on_pfc(uint32_t link, bool pause) {
  Port& p = ports_[link];
  p.paused = pause;
  if (pause) {
    ++trace_.links[link].pauses;
  } else {
    try_send(link);
  }
}

void PacketNetwork::deliver(uint32_t packet) {
  const Packet pkt = packets_[packet];
  free_packets_.push_back(packet);
  Flow& f = *flows_[pkt.flow];
  if (f.done) return;
  if (pkt.ecn && now_ - f.last_cnp >= config_.cnp_interval.as_ps()) {
    f.last_cnp = now_;
    ++trace_.counters.cnps;
    push(now_ + f.back_latency, kCnp, pkt.flow);
  }
  if (pkt.seq != f.rcv_next) {
    if (pkt.seq > f.rcv_next && f.nack_for != f.rcv_next) {
      f.nack_for = f.rcv_next;
      push(now_ + f.back_latency, kNack, pkt.flow, f.rcv_next);
    }
    return;
  }
  ++f.rcv_next;
  ++trace_.counters.packets;
  if (f.rcv_next < f.packets) return;
  f.done = true;
  --active_flows_;
  trace_.counters.cuts += f.rp.cuts();
  if (auto done = transfers_.finish_part(f.transfer)) finished_.push_back(std::move(done));
}

void PacketNetwork::on_nack(uint32_t flow, uint32_t seq) {
  Flow& f = *flows_[flow];
  if (f.done || seq >= f.snd_nxt) return;
  f.snd_nxt = seq;
  const auto port = static_cast<uint32_t>(f.path.front());
  schedule_flow(port, flow);
  try_send(port);
}

void PacketNetwork::on_rto(uint32_t flow) {
  Flow& f = *flows_[flow];
  if (f.done || f.snd_nxt < f.packets) return;
  // Progress since, or nothing ever lost (a lossless fabric only delays): wait another timeout.
  if (f.rcv_next != f.rto_mark || trace_.counters.drops == 0) {
    f.rto_mark = f.rcv_next;
    push(now_ + kRetransmitTimeout.as_ps(), kRto, flow, ++f.rto_epoch);
    return;
  }
  on_nack(flow, f.rcv_next);
}

void PacketNetwork::sample() {
  const Time now = Time::ps(now_);
  const double interval_s = sample_interval_.as_s();
  // Only ports that carried something since the last sample (or still hold a queue).
  std::erase_if(sample_ports_, [&](uint32_t l) {
    const Port& p = ports_[l];
    if (p.queued > 0 || queue_reported_[l]) {
      trace_.queues.push_back({now, static_cast<LinkIndex>(l), p.queued});
      queue_reported_[l] = p.queued > 0;
    }
    const int64_t sent = link_bytes_[l].n - sampled_bytes_[l];
    if (sent > 0 && p.ps_per_byte > 0) {
      const double capacity = 1e12 / p.ps_per_byte;
      peak_utilisation_[l] = std::max(peak_utilisation_[l], std::min(1.0, sent / (capacity * interval_s)));
    }
    sampled_bytes_[l] = link_bytes_[l].n;
    const bool keep = sent > 0 || p.queued > 0 || p.busy;
    if (!keep) sample_listed_[l] = 0;
    return !keep;
  });
  for (int i = 0; i < config_.traced_flows && i < static_cast<int>(flows_.size()); ++i) {
    Flow& f = *flows_[i];
    if (f.done) continue;
    f.rp.advance(now);
    trace_.rates.push_back({now, f.trace, f.src, f.dst, f.rp.rate(), f.rp.target()});
  }
  // Series past kMaxSeriesRows drop every other instant and sample half as often from then on:
  // bounded memory and events, the whole run still covered at a coarser interval.
  if (thin_series(trace_)) sample_interval_ = 2 * sample_interval_;
}

std::vector<LinkUsage> PacketNetwork::link_usage() const {
  std::vector<LinkUsage> usage(link_bytes_.size());
  for (size_t l = 0; l < usage.size(); ++l) usage[l] = {link_bytes_[l], peak_utilisation_[l]};
  return usage;
}

}  // namespace clustersim::net
