// SPDX-License-Identifier: Apache-2.0
// Progressive-filling max-min solver over the components touched by a change.
#include "sim/network/flow/max_min_solver.h"

#include <algorithm>
#include <cassert>

namespace clustersim::net {

namespace {

// Min-heap order on (share, link): equal shares fill in link order, so results are deterministic.
bool later(const auto& a, const auto& b) {
  return a.share > b.share || (a.share == b.share && a.link > b.link);
}

}  // namespace

MaxMinSolver::MaxMinSolver(std::vector<double> capacity)
    : capacity_(std::move(capacity)),
      link_flows_(capacity_.size()),
      load_(capacity_.size(), 0.0),
      link_mark_(capacity_.size(), 0),
      residual_(capacity_.size(), 0.0),
      unfrozen_(capacity_.size(), 0),
      unfrozen_share_(capacity_.size(), 0.0),
      version_(capacity_.size(), 0) {}

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
  flow_links_[f].clear();
  slot_[f].clear();
  flow_shares_[f].clear();
  rate_[f] = 0.0;
  free_flows_.push_back(f);
  --live_flows_;
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
  for (const LinkIndex seed : dirty_links_) {
    if (link_mark_[seed] == epoch_) continue;
    collect_component(seed);
    fill_component();
    solved_flows_.insert(solved_flows_.end(), component_flows_.begin(), component_flows_.end());
    solved_links_.insert(solved_links_.end(), component_links_.begin(), component_links_.end());
  }
  dirty_links_.clear();
  return solved_flows_;
}

void MaxMinSolver::collect_component(LinkIndex seed) {
  component_links_.clear();
  component_flows_.clear();
  link_mark_[seed] = epoch_;
  component_links_.push_back(seed);
  // component_links_ doubles as the BFS queue.
  for (size_t next = 0; next < component_links_.size(); ++next) {
    for (const FlowIndex f : link_flows_[component_links_[next]]) {
      if (flow_mark_[f] == epoch_) continue;
      flow_mark_[f] = epoch_;
      component_flows_.push_back(f);
      for (const LinkIndex l : flow_links_[f]) {
        if (link_mark_[l] == epoch_) continue;
        link_mark_[l] = epoch_;
        component_links_.push_back(l);
      }
    }
  }
}

void MaxMinSolver::fill_component() {
  heap_.clear();
  for (const LinkIndex l : component_links_) {
    residual_[l] = capacity_[l];
    unfrozen_[l] = static_cast<int32_t>(link_flows_[l].size());
    unfrozen_share_[l] = 0.0;
    version_[l] = 0;
  }
  for (const FlowIndex f : component_flows_) {
    const auto& links = flow_links_[f];
    for (size_t i = 0; i < links.size(); ++i) unfrozen_share_[links[i]] += share(f, i);
  }
  for (const LinkIndex l : component_links_) {
    if (unfrozen_[l] > 0) heap_.push_back({residual_[l] / unfrozen_share_[l], l, 0});
  }
  std::make_heap(heap_.begin(), heap_.end(), later<Candidate, Candidate>);
  for (const FlowIndex f : component_flows_) {
    previous_rate_[f] = rate_[f];
    frozen_[f] = 0;
  }

  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end(), later<Candidate, Candidate>);
    const Candidate c = heap_.back();
    heap_.pop_back();
    // Shares only rise as flows freeze, so an entry older than the link's version is stale.
    if (c.version != version_[c.link] || unfrozen_[c.link] == 0) continue;
    const double level = std::max(0.0, c.share);
    for (const FlowIndex f : link_flows_[c.link]) {
      if (frozen_[f]) continue;
      frozen_[f] = 1;
      rate_[f] = level;
      const auto& links = flow_links_[f];
      for (size_t i = 0; i < links.size(); ++i) {
        const LinkIndex l = links[i];
        if (l == c.link) continue;
        const double a = share(f, i);
        residual_[l] -= a * level;
        unfrozen_share_[l] -= a;
        if (--unfrozen_[l] > 0) {
          heap_.push_back({residual_[l] / std::max(unfrozen_share_[l], 1e-300), l, ++version_[l]});
          std::push_heap(heap_.begin(), heap_.end(), later<Candidate, Candidate>);
        }
      }
    }
    unfrozen_[c.link] = 0;
  }

  for (const LinkIndex l : component_links_) load_[l] = 0.0;
  for (const FlowIndex f : component_flows_) {
    const auto& links = flow_links_[f];
    for (size_t i = 0; i < links.size(); ++i) load_[links[i]] += share(f, i) * rate_[f];
  }
}

}  // namespace clustersim::net
