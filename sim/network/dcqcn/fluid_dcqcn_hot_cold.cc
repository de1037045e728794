// SPDX-License-Identifier: Apache-2.0
// FluidDcqcnNetwork: which flows are stepped (hot) and which move at a constant rate between events (cold).
#include "sim/network/dcqcn/fluid_dcqcn_network.h"

#include <algorithm>
#include <cmath>

#include "sim/network/dcqcn/internal/fluid_dcqcn_state.h"

namespace clustersim::net {

using internal::at_or_after;
using internal::kInf;
using internal::one_tick_after;

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
    k.hot_hops.push_back({&fl.hops[h], f, static_cast<uint16_t>(h), h + 1 == fl.links.size(),
                          h > 0 ? fl.links[h - 1] : LinkIndex{-1}});
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
  at = std::max(at, one_tick_after(fl.cold_since));  // every event moves time on
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
    count_cuts(fl);
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
  const Bytes size = bytes_of(fl.size);
  for (const LinkIndex l : fl.links) {
    Link& k = links_[l];
    k.bytes += size;
    k.freed_at = std::max(k.freed_at, when - fl.latency);
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

}  // namespace clustersim::net
