// SPDX-License-Identifier: Apache-2.0
// Progressive-filling max-min solver over the regions touched by a change.
#include "sim/network/flow/max_min_solver.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace clustersim::net {

namespace {

// Flows within this relative distance of the removal threshold are recomputed too: levels that
// are equal in exact arithmetic may differ in the last bits after separate solves.
constexpr double kThresholdSlack = 1e-9;
// Rate changes below this relative size are rounding noise, not reported as changes.
constexpr double kRateNoise = 1e-12;

// Min-heap order on (share, link): equal shares fill in link order, so results are deterministic.
struct Later {
  template <typename C>
  bool operator()(const C& a, const C& b) const {
    return a.share > b.share || (a.share == b.share && a.link > b.link);
  }
};

}  // namespace

MaxMinSolver::MaxMinSolver(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      link_flows_(capacity_.size()),
      load_(capacity_.size(), 0.0),
      link_mark_(capacity_.size(), 0),
      residual_(capacity_.size(), 0.0),
      unfrozen_(capacity_.size(), 0),
      unfrozen_share_(capacity_.size(), 0.0) {}

LinkIndex MaxMinSolver::add_link(double capacity) {
  capacity_.push_back(capacity);
  link_flows_.emplace_back();
  load_.push_back(0.0);
  link_mark_.push_back(0);
  residual_.push_back(0.0);
  unfrozen_.push_back(0);
  unfrozen_share_.push_back(0.0);
  return static_cast<LinkIndex>(capacity_.size() - 1);
}

FlowIndex MaxMinSolver::add_flow(std::span<const LinkIndex> links,
                                 std::span<const double> shares) {
  assert((shares.empty() || shares.size() == links.size()) && "one share per link");
  FlowIndex f;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<FlowIndex>(flow_links_.size());
    flow_links_.emplace_back();
    slot_.emplace_back();
    flow_shares_.emplace_back();
    weight_.push_back(1.0);
    rate_.push_back(0.0);
    previous_rate_.push_back(0.0);
    flow_mark_.push_back(0);
    frozen_.push_back(0);
  }
  flow_links_[f].assign(links.begin(), links.end());
  flow_shares_[f].assign(shares.begin(), shares.end());
  if (std::all_of(shares.begin(), shares.end(), [](double a) { return a == 1.0; })) {
    flow_shares_[f].clear();
  }
  weight_[f] = 1.0;
  slot_[f].resize(links.size());
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkIndex l = links[i];
    assert(l >= 0 && l < link_count() && "link index out of range");
    slot_[f][i] = static_cast<uint32_t>(link_flows_[l].size());
    link_flows_[l].push_back(f);
    dirty_links_.push_back(l);
  }
  rate_[f] = 0.0;
  previous_rate_[f] = 0.0;
  ++live_flows_;
  added_since_solve_ = true;
  return f;
}

void MaxMinSolver::remove_flow(FlowIndex f) {
  const auto& links = flow_links_[f];
  for (size_t i = 0; i < links.size(); ++i) {
    const LinkIndex l = links[i];
    auto& on_link = link_flows_[l];
    const uint32_t pos = slot_[f][i];
    assert(on_link[pos] == f && "slot bookkeeping broken");
    const FlowIndex moved = on_link.back();
    on_link[pos] = moved;
    on_link.pop_back();
    if (moved != f) {
      // Tell the moved flow where it now sits on this link (paths are short: a linear search).
      auto& moved_links = flow_links_[moved];
      for (size_t j = 0; j < moved_links.size(); ++j) {
        if (moved_links[j] == l) {
          slot_[moved][j] = pos;
          break;
        }
      }
    }
    dirty_links_.push_back(l);
  }
  min_removed_rate_ = std::min(min_removed_rate_, rate_[f]);
  flow_links_[f].clear();
  slot_[f].clear();
  flow_shares_[f].clear();
  rate_[f] = 0.0;
  free_flows_.push_back(f);
  --live_flows_;
}

void MaxMinSolver::set_weight(FlowIndex f, double weight) {
  assert(weight > 0 && "a flow stands for at least some flow");
  if (weight == weight_[f]) return;
  if (weight < weight_[f]) {
    // Below f's rate r its links were not full (they fill at levels >= r), and with less on
    // them they are not now: as a removal, filling below r runs as before.
    min_removed_rate_ = std::min(min_removed_rate_, rate_[f]);
  } else {
    added_since_solve_ = true;
  }
  weight_[f] = weight;
  dirty_links_.insert(dirty_links_.end(), flow_links_[f].begin(), flow_links_[f].end());
}

const std::vector<FlowIndex>& MaxMinSolver::solve() {
  solved_flows_.clear();
  solved_links_.clear();
  ++epoch_;
  if (epoch_ == 0) {  // wrapped: clear the marks once every 2^32 solves
    std::fill(link_mark_.begin(), link_mark_.end(), 0);
    std::fill(flow_mark_.begin(), flow_mark_.end(), 0);
    epoch_ = 1;
  }
  // Removals only: below the smallest removed rate r, progressive filling runs exactly as before
  // (every link of a removed flow filled at level >= r), so flows slower than r keep their rates
  // and act as fixed loads. Any addition can move any rate: recompute whole components.
  threshold_ = added_since_solve_ ? 0.0 : min_removed_rate_ * (1.0 - kThresholdSlack);
  for (const LinkIndex seed : dirty_links_) {
    if (link_mark_[seed] == epoch_) continue;
    collect_region(seed);
    fill_region();
  }
  dirty_links_.clear();
  added_since_solve_ = false;
  min_removed_rate_ = HUGE_VAL;
  return solved_flows_;
}

void MaxMinSolver::collect_region(LinkIndex seed) {
  region_links_.clear();
  region_flows_.clear();
  link_mark_[seed] = epoch_;
  region_links_.push_back(seed);
  // region_links_ doubles as the BFS queue.
  for (size_t next = 0; next < region_links_.size(); ++next) {
    const LinkIndex l = region_links_[next];
    for (const FlowIndex f : link_flows_[l]) {
      if (rate_[f] < threshold_) continue;  // fixed: fill_region subtracts its load
      if (flow_mark_[f] == epoch_) continue;
      flow_mark_[f] = epoch_;
      region_flows_.push_back(f);
      for (const LinkIndex next_link : flow_links_[f]) {
        if (link_mark_[next_link] == epoch_) continue;
        link_mark_[next_link] = epoch_;
        region_links_.push_back(next_link);
      }
    }
  }
}

void MaxMinSolver::fill_region() {
  // Link state: capacity left after the fixed flows, and the region flows still rising.
  for (const LinkIndex l : region_links_) {
    double fixed = 0;
    int32_t rising = 0;
    double rising_share = 0;
    const auto& on_link = link_flows_[l];
    for (const FlowIndex f : on_link) {
      const double a = weight_[f] * share_on(f, l);
      if (flow_mark_[f] == epoch_) {
        ++rising;
        rising_share += a;
      } else {
        fixed += a * rate_[f];
      }
    }
    residual_[l] = capacity_[l] - fixed;
    unfrozen_[l] = rising;
    unfrozen_share_[l] = rising_share;
    load_[l] = fixed;
  }
  heap_.clear();
  for (const LinkIndex l : region_links_) {
    if (unfrozen_[l] > 0) heap_.push_back({residual_[l] / unfrozen_share_[l], l});
  }
  std::make_heap(heap_.begin(), heap_.end(), Later{});
  for (const FlowIndex f : region_flows_) {
    previous_rate_[f] = rate_[f];
    frozen_[f] = 0;
  }

  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Candidate c = heap_.back();
    heap_.pop_back();
    if (unfrozen_[c.link] == 0) continue;
    // Keys are refreshed when popped, not each time a flow on the link freezes: a link's share
    // only rises as its flows freeze below it, so a stored key is at most the link's share (up to
    // rounding), and the entry popped with an up-to-date key is the minimum. One that rose goes
    // back; one that rounding put an ulp lower freezes at its current share.
    const double current = residual_[c.link] / std::max(unfrozen_share_[c.link], 1e-300);
    if (current > c.share) {
      heap_.push_back({current, c.link});
      std::push_heap(heap_.begin(), heap_.end(), Later{});
      continue;
    }
    const double level = std::max(0.0, current);
    for (const FlowIndex f : link_flows_[c.link]) {
      if (flow_mark_[f] != epoch_ || frozen_[f]) continue;
      frozen_[f] = 1;
      // Keep the old value when the change is rounding noise: callers then keep their schedule.
      if (std::abs(level - rate_[f]) > kRateNoise * std::max(level, rate_[f])) {
        rate_[f] = level;
        solved_flows_.push_back(f);
      }
      const auto& links = flow_links_[f];
      for (size_t i = 0; i < links.size(); ++i) {
        const LinkIndex l = links[i];
        if (l == c.link) continue;
        const double a = consumption(f, i);
        residual_[l] -= a * level;
        unfrozen_share_[l] -= a;
        --unfrozen_[l];
      }
    }
    unfrozen_[c.link] = 0;
  }

  for (const FlowIndex f : region_flows_) {
    const auto& links = flow_links_[f];
    for (size_t i = 0; i < links.size(); ++i) load_[links[i]] += consumption(f, i) * rate_[f];
  }
  solved_links_.insert(solved_links_.end(), region_links_.begin(), region_links_.end());
}

double MaxMinSolver::share_on(FlowIndex f, LinkIndex l) const {
  if (flow_shares_[f].empty()) return 1.0;
  const auto& links = flow_links_[f];
  for (size_t i = 0; i < links.size(); ++i) {
    if (links[i] == l) return flow_shares_[f][i];
  }
  return 0.0;
}

}  // namespace clustersim::net
