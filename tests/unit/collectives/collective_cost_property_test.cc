// SPDX-License-Identifier: Apache-2.0
// Invariants of the closed-form collective costs over a seeded sweep of group shapes and sizes:
// never below the bandwidth bound, monotonic in size, all-reduce = reduce-scatter + all-gather
// in bandwidth terms, inter-node bus bandwidth = min(intra, k x nic).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <vector>

#include "sim/collectives/collective_cost.h"
#include "tests/unit/core/unit_printers.h"

namespace clustersim::coll {
namespace {

constexpr uint32_t kSeed = 42;
constexpr int kCases = 2000;

struct Case {
  GroupLinks g;
  Bytes size;
};

// Ranks 1..4096, 1..8 ranks per node, NVLink 50..500 GB/s, NIC share 5..100 GB/s, alphas
// 0..50 us, sizes 1 B .. 16 GiB (log-uniform).
std::vector<Case> sweep() {
  std::mt19937_64 rng(kSeed);
  std::uniform_int_distribution<int> ranks(1, 4096), per_node(1, 8);
  std::uniform_real_distribution<double> nvlink(50, 500), nic(5, 100), alpha_us(0, 50), log2_size(0, 34);
  std::vector<Case> cases;
  for (int i = 0; i < kCases; ++i) {
    Case c;
    c.g.ranks = ranks(rng);
    c.g.ranks_per_node = per_node(rng);
    c.g.intra_busbw = gbytes_per_s(nvlink(rng));
    c.g.nic_per_gpu = gbytes_per_s(nic(rng));
    c.g.intra_alpha = Time::us(alpha_us(rng));
    c.g.inter_alpha = Time::us(alpha_us(rng));
    c.size = Bytes{static_cast<int64_t>(std::exp2(log2_size(rng)))};
    cases.push_back(c);
  }
  return cases;
}

constexpr CollectiveOp kOps[] = {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
                                 CollectiveOp::kAllToAll, CollectiveOp::kSendRecv};

TEST(CollectiveCostProperty, NeverBelowTheBandwidthBound) {
  for (const Case& c : sweep()) {
    for (CollectiveOp op : kOps) {
      const Time t = collective_time(op, c.size, c.g);
      EXPECT_GE(t, collective_bandwidth_bound(op, c.size, c.g))
          << to_string(op) << " ranks " << c.g.ranks << " per node " << c.g.ranks_per_node << " size " << c.size.n;
      EXPECT_GE(t, Time::zero());
    }
  }
}

TEST(CollectiveCostProperty, MonotonicInSize) {
  for (const Case& c : sweep()) {
    for (CollectiveOp op : kOps) {
      EXPECT_LE(collective_time(op, c.size, c.g), collective_time(op, Bytes{2 * c.size.n + 1}, c.g))
          << to_string(op) << " ranks " << c.g.ranks << " size " << c.size.n;
    }
  }
}

TEST(CollectiveCostProperty, AllReduceBoundIsReduceScatterPlusAllGather) {
  // A ring all-reduce is a reduce-scatter followed by an all-gather over the same ring:
  // 2 (n-1)/n = (n-1)/n + (n-1)/n (each side rounded to the picosecond separately: <= 1 ps apart).
  for (const Case& c : sweep()) {
    const Time ar = collective_bandwidth_bound(CollectiveOp::kAllReduce, c.size, c.g);
    const Time rs_ag = collective_bandwidth_bound(CollectiveOp::kReduceScatter, c.size, c.g) +
                       collective_bandwidth_bound(CollectiveOp::kAllGather, c.size, c.g);
    EXPECT_LE(std::abs(ar.as_ps() - rs_ag.as_ps()), 1) << "ranks " << c.g.ranks << " size " << c.size.n;
  }
}

TEST(CollectiveCostProperty, BusBandwidthIsMinOfIntraAndRails) {
  for (const Case& c : sweep()) {
    const double busbw = ring_busbw(c.g).bytes_per_s;
    const int k = std::min(c.g.ranks, c.g.ranks_per_node);
    if (c.g.nodes() <= 1) {
      EXPECT_DOUBLE_EQ(busbw, c.g.intra_busbw.bytes_per_s);
    } else if (c.g.ranks_per_node == 1) {
      EXPECT_DOUBLE_EQ(busbw, c.g.nic_per_gpu.bytes_per_s);
    } else {
      EXPECT_DOUBLE_EQ(busbw, std::min(c.g.intra_busbw.bytes_per_s, k * c.g.nic_per_gpu.bytes_per_s));
    }
    // Never faster than NVLink, never slower than one NIC share when crossing nodes.
    EXPECT_LE(busbw, std::max(c.g.intra_busbw.bytes_per_s, c.g.nic_per_gpu.bytes_per_s));
  }
}

TEST(CollectiveCostProperty, SameInputSameAnswer) {
  const std::vector<Case> a = sweep(), b = sweep();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(collective_time(CollectiveOp::kAllReduce, a[i].size, a[i].g),
              collective_time(CollectiveOp::kAllReduce, b[i].size, b[i].g));
  }
}

}  // namespace
}  // namespace clustersim::coll
