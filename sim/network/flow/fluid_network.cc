// SPDX-License-Identifier: Apache-2.0
// FluidNetwork: sub-flow lifecycle (latency, sharing, merged completions) around MaxMinSolver.
#include "sim/network/flow/fluid_network.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <stdexcept>

#include "sim/network/internal/slots.h"

namespace clustersim::net {

namespace {

std::vector<double> capacities(const RouteSource& routes) {
  std::vector<double> c(static_cast<size_t>(routes.link_count()));
  for (LinkIndex l = 0; l < routes.link_count(); ++l) c[l] = routes.capacity(l).bytes_per_s;
  return c;
}

// Seconds to the next picosecond at or after them, so an event never fires before its time;
// within rounding noise of a whole picosecond counts as on it.
Time ceil_ps(double seconds) {
  const double ps = std::ceil(seconds * 1e12 - std::max(1e-3, std::abs(seconds * 1e12) * 1e-15));
  // Past the clock's range a transfer ends at its limit (the cast overflowed before 2026-12-05:
  // a flow at 1e-11 of an NVLink's rate ended in the past, at once).
  if (!(ps < static_cast<double>(Time::max().as_ps()))) return Time::max();
  return Time::ps(static_cast<int64_t>(ps));
}

}  // namespace

FluidNetwork::FluidNetwork(const RouteSource& routes, Clock& clock, Time merge_tolerance, double rate_tolerance)
    : routes_(routes),
      clock_(clock),
      tolerance_s_(std::max(0.0, merge_tolerance.as_s())),
      rate_tolerance_(std::max(0.0, rate_tolerance)),
      solver_(capacities(routes)),
      link_bytes_(static_cast<size_t>(routes.link_count())),
      peak_utilisation_(static_cast<size_t>(routes.link_count()), 0.0),
      held_load_(static_cast<size_t>(routes.link_count()), 0.0),
      load_since_(static_cast<size_t>(routes.link_count()), 0.0) {}

TransferId FluidNetwork::send(GpuId src, GpuId dst, Bytes size, std::function<void(Time)> done, uint32_t connection) {
  const Time now = clock_.now();
  if (src == dst) {
    const TransferId id = transfers_.open(std::move(done), 0);
    transfers_.complete_at(clock_, id, now);
    return id;
  }
  routes_.paths(src, dst, connection, scratch_paths_);
  if (scratch_paths_.empty()) throw std::logic_error("route source gave no path between two GPUs");
  const int parts = static_cast<int>(scratch_paths_.size());
  const TransferId id = transfers_.open(std::move(done), parts);
  for (int k = 0; k < parts; ++k) {
    const uint32_t f = internal::take_slot(flows_, free_flows_);
    SubFlow& s = flows_[f];
    s.transfer = id;
    s.size = share_of(size, parts, k);
    // Copies, not moves: the path's buffers are refilled by the next send, and the sub-flow's
    // are kept for the next sub-flow in its slot.
    const Path& p = scratch_paths_[k];
    if (p.groups.empty()) {
      s.links.assign(p.links.begin(), p.links.end());
      s.shares.assign(p.shares.begin(), p.shares.end());
    } else {
      group_links(s, p);
    }
    clock_.at(now + scratch_paths_[k].latency, [this, f] { activate(f); });
  }
  flows_created_ += parts;
  return id;
}

LinkIndex FluidNetwork::group_link(LinkIndex first, int32_t count, LinkIndex stride) {
  const auto [it, added] = group_of_.try_emplace({first, count}, kNoGroup);
  if (!added) return it->second;
  double sum = 0;
  for (int32_t i = 0; i < count; ++i) {
    const double c = solver_.capacity(first + i * stride);
    if (c != solver_.capacity(first)) return kNoGroup;  // degraded members: keep them apart
    sum += c;
  }
  const LinkIndex l = solver_.add_link(sum);
  assert(l == routes_.link_count() + static_cast<LinkIndex>(groups_.size()) && "group links follow the fabric's");
  link_bytes_.emplace_back();
  peak_utilisation_.push_back(0.0);
  held_load_.push_back(0.0);
  load_since_.push_back(0.0);
  groups_.push_back({first, count, stride, l});
  it->second = l;
  return l;
}

void FluidNetwork::group_links(SubFlow& s, const Path& p) {
  s.links.clear();
  s.shares.clear();
  size_t at = 0;
  for (const int32_t n : p.groups) {
    const LinkIndex g = n >= 2 ? group_link(p.links[at], n, p.links[at + 1] - p.links[at]) : kNoGroup;
    if (g != kNoGroup) {
      s.links.push_back(g);
      s.shares.push_back(p.share(at) * n);
    } else {
      for (int32_t i = 0; i < n; ++i) {
        s.links.push_back(p.links[at + i]);
        s.shares.push_back(p.share(at + i));
      }
    }
    at += static_cast<size_t>(n);
  }
  if (std::all_of(s.shares.begin(), s.shares.end(), [](double a) { return a == 1.0; })) s.shares.clear();
}

void FluidNetwork::activate(uint32_t f) {
  SubFlow& s = flows_[f];
  if (s.size.n == 0 || s.links.empty()) {
    std::vector<std::function<void(Time)>> done;
    finish_sub_flow(f, done);
    for (auto& d : done) d(clock_.now());
    return;
  }
  s.started = clock_.now().as_s();
  join_bundle(f);
  request_settle();
}

void FluidNetwork::join_bundle(uint32_t f) {
  SubFlow& s = flows_[f];
  const double now = s.started;
  if (std::all_of(s.shares.begin(), s.shares.end(), [](double a) { return a == 1.0; })) s.shares.clear();
  const auto last = static_cast<size_t>(s.links.back());
  if (bundles_ending_on_.size() <= last) bundles_ending_on_.resize(last + 1);
  const auto same_path = [&](const Bundle& b) {
    const auto links = solver_.links(b.solver_index);
    if (!std::equal(links.begin(), links.end(), s.links.begin(), s.links.end())) return false;
    for (size_t i = 0; i < links.size(); ++i) {
      if (solver_.share(b.solver_index, i) != (s.shares.empty() ? 1.0 : s.shares[i])) return false;
    }
    return true;
  };
  uint32_t id = kNoBundle;
  for (const uint32_t b : bundles_ending_on_[last]) {
    if (same_path(bundles_[b])) {
      id = b;
      break;
    }
  }
  if (id == kNoBundle) {
    id = internal::take_slot(bundles_, free_bundles_);
    Bundle& b = bundles_[id];
    b.solver_index = solver_.add_flow(s.links, s.shares);
    b.count = 0;
    b.progress = 0;
    b.since = now;
    b.members.clear();
    bundles_ending_on_[last].push_back(id);
    if (owner_.size() <= b.solver_index) owner_.resize(b.solver_index + 1);
    owner_[b.solver_index] = id;
  } else {
    Bundle& b = bundles_[id];
    advance(b, now, solver_.rate(b.solver_index));
    solver_.set_weight(b.solver_index, b.count + 1);
  }
  Bundle& b = bundles_[id];
  ++b.count;
  s.bundle = id;
  s.threshold = b.progress + s.size.as_double();
  s.links.clear();
  s.shares.clear();
  b.members.push_back({s.threshold, f});
  std::push_heap(b.members.begin(), b.members.end(), Member::later);
  // The bundle keeps its rate until the next solve; a member that is now due first sets its time.
  if (b.members.front().flow == f) schedule(id);
}

void FluidNetwork::advance(Bundle& b, double now, double rate) {
  b.progress += rate * (now - b.since);
  b.since = now;
}

void FluidNetwork::schedule(uint32_t id) {
  const Bundle& b = bundles_[id];
  const double rate = solver_.rate(b.solver_index);
  if (rate > 0 && !b.members.empty()) {
    completions_.set(id, due(b, b.members.front().threshold));
  } else {
    completions_.erase(id);
  }
}

double FluidNetwork::due(const Bundle& b, double threshold) const {
  return b.since + std::max(0.0, threshold - b.progress) / solver_.rate(b.solver_index);
}

double FluidNetwork::latest_member_due(const Bundle& b, double limit) {
  // The members due by the limit form a subtree at the heap's root (children of i: 2i+1, 2i+2),
  // the root (the bundle's entry, due by the limit) among them.
  double latest = 0;
  member_stack_.assign(1, 0);
  while (!member_stack_.empty()) {
    const size_t i = member_stack_.back();
    member_stack_.pop_back();
    latest = std::max(latest, due(b, b.members[i].threshold));
    for (size_t c = 2 * i + 1; c < std::min(b.members.size(), 2 * i + 3); ++c) {
      if (due(b, b.members[c].threshold) <= limit) member_stack_.push_back(c);
    }
  }
  return latest;
}

void FluidNetwork::request_settle() {
  if (settle_requested_) return;
  settle_requested_ = true;
  clock_.at(clock_.now(), [this] { settle(); });
}

void FluidNetwork::defer_settle(double at) {
  if (deferred_armed_) {
    if (deferred_at_ <= at) return;
    clock_.cancel(deferred_timer_);
  }
  deferred_armed_ = true;
  deferred_at_ = at;
  deferred_timer_ = clock_.at(ceil_ps(at), [this] {
    deferred_armed_ = false;
    settle();
  });
}

void FluidNetwork::settle() {
  settle_requested_ = false;
  if (deferred_armed_) {
    clock_.cancel(deferred_timer_);
    deferred_armed_ = false;
  }
  const double now = clock_.now().as_s();
  ++solves_;
  for (const FlowIndex i : solver_.solve()) {
    advance(bundles_[owner_[i]], now, solver_.previous_rate(i));
    schedule(owner_[i]);
  }
  // A load counts as a peak once it has been held for kMinPeakHold (LmmNetwork uses the same rule).
  for (const LinkIndex l : solver_.solved_links()) {
    const double capacity = solver_.capacity(l);
    if (capacity <= 0) continue;
    if (now - load_since_[l] >= kMinPeakHold) {
      peak_utilisation_[l] = std::max(peak_utilisation_[l], held_load_[l] / capacity);
    }
    held_load_[l] = solver_.load(l);
    load_since_[l] = now;
  }
  arm_completion();
}

void FluidNetwork::arm_completion() {
  if (completion_armed_) {
    clock_.cancel(completion_timer_);
    completion_armed_ = false;
  }
  if (completions_.empty()) return;
  // One event for every completion within the tolerance of the first, at the latest of them
  // (a bundle's members after its next one's included).
  batch_limit_ = completions_.top().time + tolerance_s_;
  double last = completions_.top().time;
  completions_.for_each_due(batch_limit_, [&](const internal::CompletionQueue::Entry& e) {
    last = std::max(last, latest_member_due(bundles_[e.flow], batch_limit_));
  });
  completion_timer_ = clock_.at(ceil_ps(last), [this] { complete_batch(); });
  completion_armed_ = true;
}

void FluidNetwork::complete_batch() {
  completion_armed_ = false;
  // The completions the event was set for, popped in (time, bundle) order: those due by the
  // limit, and by now (a bundle's next member comes due when the one before it is popped; it
  // completes in this batch only if not early).
  const Time now = clock_.now();
  batch_.clear();
  while (!completions_.empty() && completions_.top().time <= batch_limit_ && ceil_ps(completions_.top().time) <= now) {
    const uint32_t id = completions_.top().flow;
    Bundle& b = bundles_[id];
    std::pop_heap(b.members.begin(), b.members.end(), Member::later);
    batch_.push_back(b.members.back().flow);
    b.members.pop_back();
    schedule(id);  // moves the bundle's entry to its next member, or drops it
  }
  std::vector<std::function<void(Time)>> done;
  done.swap(done_);
  // The earliest the freed bandwidth must be handed out (rate_tolerance x the finished flows'
  // lifetimes from now); the others keep their rates, and their completion times, until then.
  double resolve_by = HUGE_VAL;
  for (const uint32_t f : batch_) {
    resolve_by = std::min(resolve_by, now.as_s() + rate_tolerance_ * (now.as_s() - flows_[f].started));
    finish_sub_flow(f, done);
  }
  if (rate_tolerance_ > 0 && std::isfinite(resolve_by) && resolve_by > now.as_s() && ceil_ps(resolve_by) > now) {
    defer_settle(resolve_by);
    arm_completion();
  } else {
    settle();
  }
  for (auto& d : done) d(now);
  done.clear();
  done_.swap(done);  // keep the buffer for the next batch
}

void FluidNetwork::finish_sub_flow(uint32_t f, std::vector<std::function<void(Time)>>& done) {
  SubFlow& s = flows_[f];
  if (s.bundle != kNoBundle) {
    const uint32_t id = s.bundle;
    Bundle& b = bundles_[id];
    const auto links = solver_.links(b.solver_index);
    const LinkIndex real = routes_.link_count();
    for (size_t i = 0; i < links.size(); ++i) {
      double a = solver_.share(b.solver_index, i);
      // A group counts what each of its links carried (they carry the same).
      if (links[i] >= real) a /= groups_[links[i] - real].count;
      link_bytes_[links[i]] += a == 1.0 ? s.size : bytes_of(a * s.size.as_double());
    }
    if (--b.count > 0) {
      solver_.set_weight(b.solver_index, b.count);
    } else {
      auto& ending = bundles_ending_on_[static_cast<size_t>(links.back())];
      solver_.remove_flow(b.solver_index);
      completions_.erase(id);
      *std::find(ending.begin(), ending.end(), id) = ending.back();
      ending.pop_back();
      free_bundles_.push_back(id);
    }
    s.bundle = kNoBundle;
  }
  s.links.clear();
  s.shares.clear();
  if (auto finished = transfers_.finish_part(s.transfer)) done.push_back(std::move(finished));
  free_flows_.push_back(f);
}

std::vector<LinkUsage> FluidNetwork::link_usage() const {
  const double now = clock_.now().as_s();
  auto of = [&](size_t l) -> LinkUsage {
    double peak = peak_utilisation_[l];
    const double capacity = solver_.capacity(static_cast<LinkIndex>(l));
    if (capacity > 0 && now - load_since_[l] >= kMinPeakHold) peak = std::max(peak, held_load_[l] / capacity);
    return {link_bytes_[l], peak};
  };
  std::vector<LinkUsage> usage(static_cast<size_t>(routes_.link_count()));
  for (size_t l = 0; l < usage.size(); ++l) usage[l] = of(l);
  // A group's links carry equal loads: each the bytes counted per link, all the group's peak.
  for (const LinkGroup& g : groups_) {
    const LinkUsage u = of(g.solver_link);
    for (int32_t i = 0; i < g.count; ++i) {
      LinkUsage& m = usage[g.first + i * g.stride];
      m.bytes += u.bytes;
      m.peak_utilisation = std::max(m.peak_utilisation, u.peak_utilisation);
    }
  }
  return usage;
}

}  // namespace clustersim::net
