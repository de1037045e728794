// SPDX-License-Identifier: Apache-2.0
// MaxMinSolver invariants over seeded random link sets and flow sets: feasibility, max-min
// fairness, incremental solves equal fresh ones, determinism.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "sim/network/flow/max_min_solver.h"

namespace clustersim::net {
namespace {

constexpr double kRel = 1e-9;

struct RandomFlow {
  std::vector<LinkIndex> links;
  std::vector<double> shares;
};

struct Case {
  std::vector<double> capacity;
  std::vector<RandomFlow> flows;
};

// 1-30 links of capacity 1-100, 1-60 flows of 1-6 distinct links; a third of the seeds give
// flows random shares in (0, 1] (sprayed flows).
Case random_case(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
  };
  Case c;
  const int links = 1 + static_cast<int>(rng() % 30);
  for (int l = 0; l < links; ++l) c.capacity.push_back(std::round(uniform(1, 100)));
  const int flows = 1 + static_cast<int>(rng() % 60);
  const bool weighted = seed % 3 == 0;
  for (int i = 0; i < flows; ++i) {
    RandomFlow f;
    const int hops = 1 + static_cast<int>(rng() % std::min(6, links));
    while (static_cast<int>(f.links.size()) < hops) {
      const auto l = static_cast<LinkIndex>(rng() % links);
      if (std::find(f.links.begin(), f.links.end(), l) == f.links.end()) f.links.push_back(l);
    }
    if (weighted) {
      for (size_t k = 0; k < f.links.size(); ++k) f.shares.push_back(uniform(0.05, 1.0));
    }
    c.flows.push_back(f);
  }
  return c;
}

// Checks the allocation of `ids` (flows of `c`, by position) is feasible and max-min fair: every
// flow has a saturated link on which no flow is faster (Bertsekas & Gallager, Prop. 6.5.2), so
// none can grow without shrinking one that is no faster.
void expect_max_min_fair(const MaxMinSolver& s, const Case& c, const std::vector<int>& live,
                         const std::vector<FlowIndex>& ids, uint64_t seed) {
  std::vector<double> load(c.capacity.size(), 0.0);
  for (const int i : live) {
    const auto& f = c.flows[i];
    for (size_t k = 0; k < f.links.size(); ++k) {
      load[f.links[k]] += (f.shares.empty() ? 1.0 : f.shares[k]) * s.rate(ids[i]);
    }
  }
  for (size_t l = 0; l < load.size(); ++l) {
    EXPECT_LE(load[l], c.capacity[l] * (1 + kRel)) << "seed " << seed << " link " << l;
    EXPECT_NEAR(s.load(static_cast<LinkIndex>(l)), load[l], c.capacity[l] * kRel) << "seed " << seed;
  }
  for (const int i : live) {
    const double r = s.rate(ids[i]);
    EXPECT_GT(r, 0) << "seed " << seed;
    bool has_bottleneck = false;
    for (const LinkIndex l : c.flows[i].links) {
      if (load[l] < c.capacity[l] * (1 - kRel)) continue;
      bool fastest = true;
      for (const int j : live) {
        const auto& other = c.flows[j].links;
        if (std::find(other.begin(), other.end(), l) != other.end() && s.rate(ids[j]) > r * (1 + kRel)) {
          fastest = false;
        }
      }
      has_bottleneck = has_bottleneck || fastest;
    }
    EXPECT_TRUE(has_bottleneck) << "seed " << seed << ": flow " << i << " at " << r
                                << " could grow without slowing a flow no faster than it";
  }
}

TEST(MaxMinProperty, AllocationIsFeasibleAndMaxMinFair) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const Case c = random_case(seed);
    MaxMinSolver s(c.capacity);
    std::vector<FlowIndex> ids;
    std::vector<int> live;
    for (size_t i = 0; i < c.flows.size(); ++i) {
      ids.push_back(s.add_flow(c.flows[i].links, c.flows[i].shares));
      live.push_back(static_cast<int>(i));
    }
    s.solve();
    expect_max_min_fair(s, c, live, ids, seed);
  }
}

// Removing flows a few at a time (the common case: completions) uses the threshold shortcut;
// adding and removing together refills whole components. Both must match a fresh solve.
TEST(MaxMinProperty, IncrementalSolvesEqualFreshSolves) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Case c = random_case(seed);
    std::mt19937_64 rng(seed * 7919);
    MaxMinSolver s(c.capacity);
    std::vector<FlowIndex> ids(c.flows.size());
    std::vector<int> live, absent;
    for (size_t i = 0; i < c.flows.size(); ++i) {
      if (rng() % 4 == 0) {
        absent.push_back(static_cast<int>(i));
        continue;
      }
      ids[i] = s.add_flow(c.flows[i].links, c.flows[i].shares);
      live.push_back(static_cast<int>(i));
    }
    s.solve();
    for (int step = 0; step < 20 && !live.empty(); ++step) {
      // Remove the fastest flows (as completions do), sometimes a random one, sometimes add.
      std::sort(live.begin(), live.end(), [&](int a, int b) { return s.rate(ids[a]) > s.rate(ids[b]); });
      const size_t removals = 1 + rng() % std::min<size_t>(3, live.size());
      for (size_t k = 0; k < removals && !live.empty(); ++k) {
        const size_t pos = rng() % 3 == 0 ? rng() % live.size() : 0;
        s.remove_flow(ids[live[pos]]);
        absent.push_back(live[pos]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(pos));
      }
      if (rng() % 3 == 0 && !absent.empty()) {
        const size_t pos = rng() % absent.size();
        const int i = absent[pos];
        ids[i] = s.add_flow(c.flows[i].links, c.flows[i].shares);
        live.push_back(i);
        absent.erase(absent.begin() + static_cast<std::ptrdiff_t>(pos));
      }
      s.solve();

      MaxMinSolver fresh(c.capacity);
      std::vector<FlowIndex> fresh_ids(c.flows.size());
      for (const int i : live) fresh_ids[i] = fresh.add_flow(c.flows[i].links, c.flows[i].shares);
      fresh.solve();
      for (const int i : live) {
        EXPECT_NEAR(s.rate(ids[i]), fresh.rate(fresh_ids[i]), 1e-9 * fresh.rate(fresh_ids[i]) + 1e-12)
            << "seed " << seed << " step " << step << " flow " << i;
      }
      expect_max_min_fair(s, c, live, ids, seed);
    }
  }
}

// A flow of weight w gets the rate of each of w flows on its links (FluidNetwork's bundles), and
// lowering or raising the weight between solves matches a fresh solve of that many copies.
TEST(MaxMinProperty, WeightedFlowEqualsItsCopies) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    const Case c = random_case(seed);
    std::mt19937_64 rng(seed * 104729);
    std::vector<int> weight(c.flows.size());
    for (int& w : weight) w = 1 + static_cast<int>(rng() % 4);
    MaxMinSolver s(c.capacity);
    std::vector<FlowIndex> ids;
    for (size_t i = 0; i < c.flows.size(); ++i) {
      ids.push_back(s.add_flow(c.flows[i].links, c.flows[i].shares));
      s.set_weight(ids.back(), weight[i]);
    }
    s.solve();
    for (int step = 0; step < 8; ++step) {
      MaxMinSolver copies(c.capacity);
      std::vector<FlowIndex> first;  // each flow's first copy
      for (size_t i = 0; i < c.flows.size(); ++i) {
        first.push_back(copies.add_flow(c.flows[i].links, c.flows[i].shares));
        for (int k = 1; k < weight[i]; ++k) copies.add_flow(c.flows[i].links, c.flows[i].shares);
      }
      copies.solve();
      for (size_t i = 0; i < c.flows.size(); ++i) {
        EXPECT_NEAR(s.rate(ids[i]), copies.rate(first[i]), 1e-9 * copies.rate(first[i]) + 1e-12)
            << "seed " << seed << " step " << step << " flow " << i << " weight " << weight[i];
      }
      for (LinkIndex l = 0; l < s.link_count(); ++l) {
        EXPECT_NEAR(s.load(l), copies.load(l), 1e-9 * c.capacity[static_cast<size_t>(l)]) << "seed " << seed;
      }
      // The fastest flows lose a member (as bundles do at completions), sometimes one gains.
      std::vector<size_t> order(c.flows.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return s.rate(ids[a]) > s.rate(ids[b]); });
      for (size_t k = 0; k < std::min<size_t>(2, order.size()); ++k) {
        const size_t i = order[k];
        if (weight[i] > 1) s.set_weight(ids[i], --weight[i]);
      }
      if (rng() % 3 == 0) {
        const size_t i = rng() % c.flows.size();
        s.set_weight(ids[i], ++weight[i]);
      }
      s.solve();
    }
  }
}

TEST(MaxMinProperty, SameInputSameRates) {
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    const Case c = random_case(seed);
    MaxMinSolver a(c.capacity), b(c.capacity);
    std::vector<FlowIndex> ia, ib;
    for (const auto& f : c.flows) {
      ia.push_back(a.add_flow(f.links, f.shares));
      ib.push_back(b.add_flow(f.links, f.shares));
    }
    a.solve();
    b.solve();
    for (size_t i = 0; i < ia.size(); ++i) EXPECT_EQ(a.rate(ia[i]), b.rate(ib[i])) << "seed " << seed;
  }
}

}  // namespace
}  // namespace clustersim::net
