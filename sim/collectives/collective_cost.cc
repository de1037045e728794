// SPDX-License-Identifier: Apache-2.0
#include "sim/collectives/collective_cost.h"

#include <algorithm>
#include <cassert>

namespace clustersim::coll {
namespace {

double bus_factor(CollectiveOp op, int n) {
  const double r = static_cast<double>(n - 1) / n;
  switch (op) {
    case CollectiveOp::kAllReduce: return 2.0 * r;
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
    case CollectiveOp::kAllToAll: return r;
    case CollectiveOp::kSendRecv: return 1.0;
  }
  return 1.0;
}

// NCCL's all-to-all is one kernel of grouped sends and receives whose peers progress together:
// up to 8 per p2p channel (NVIDIA/nccl#665: "at most 8 peers at once" per channel;
// enqueue.cc's maxConcurrent = p2p channels / channels per peer x 8: 32 / 2 x 8 = 128), so the
// network's latency is paid once per wave of that many peers, and each peer adds only the proxy's
// posting of its requests and its warp's work (charged for every peer, those inside the node too). Per peer, measured: 1.4 us (2 nodes of 8
// A100, 8 x HDR200 IB, NCCL 2.17.1: 1 KB all-to-all 29.84 us with 1 remote peer, 49.75 us with 15;
// microsoft/mscclpp docs/performance-ndmv4.md), 0.2 us (H100 over IB, 16 to 128 ranks: 110 to
// 132 us; perplexityai/pplx-kernels README), 0.65 us (GB200 NVLink, 8 to 64 ranks; NVIDIA/nccl
// contrib/custom_algos/alltoall). 16 ranks on 2 nodes take about 30 us (H100, DeepEP#3; RTX
// 6000D over Spectrum-X, NCCL 2.30), one network latency and not fifteen.
constexpr int kAllToAllPeersInFlight = 128;
constexpr Time kAllToAllPerPeer = Time::ps(1000000);  // 1 us

int ring_steps(CollectiveOp op, int n) {
  switch (op) {
    case CollectiveOp::kAllReduce: return 2 * (n - 1);
    case CollectiveOp::kSendRecv: return 1;
    default: return n - 1;
  }
}

}  // namespace

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "all_reduce";
    case CollectiveOp::kReduceScatter: return "reduce_scatter";
    case CollectiveOp::kAllGather: return "all_gather";
    case CollectiveOp::kAllToAll: return "all_to_all";
    case CollectiveOp::kSendRecv: return "send_recv";
  }
  return "?";
}

Bandwidth ring_busbw(const GroupLinks& g) {
  assert(g.ranks >= 1 && g.ranks_per_node >= 1 && "a group needs ranks");
  if (g.nodes() <= 1) return g.intra_busbw;
  const Bandwidth across{g.nic_per_gpu.bytes_per_s * std::min(g.ranks, g.ranks_per_node)};
  if (g.ranks_per_node == 1) return across;
  return std::min(g.intra_busbw, across);
}

Time ring_latency(CollectiveOp op, const GroupLinks& g) {
  if (g.ranks <= 1) return Time::zero();
  if (g.nodes() <= 1) return g.intra_alpha;
  // All-to-all: the network's latency once per wave of peers in flight, and a small cost per
  // peer (above). Until 2026-12-06 the peers paid it one after another, (n - 1) x inter_alpha:
  // 465 us for 32 ranks at 15 us, where NCCL takes tens of microseconds, and serving at ep 32
  // spent 53 ms of each decode step in all-to-all latency.
  if (op == CollectiveOp::kAllToAll) {
    const int peers = g.ranks - 1;
    const int waves = (peers + kAllToAllPeersInFlight - 1) / kAllToAllPeersInFlight;
    return static_cast<int64_t>(waves) * g.inter_alpha + static_cast<int64_t>(peers) * kAllToAllPerPeer;
  }
  // NCCL's tuning model (src/graph/tuning.cc): of a ring's steps only those between nodes pay
  // the network's latency, 2(nodes - 1) for all-reduce and nodes - 1 for all-gather and
  // reduce-scatter, and the rest NVLink's. The profile has NVLink's as one intra-node
  // collective's alpha, over that collective's ring_steps(op, k) steps for k ranks a node; the
  // ring's other steps are nodes x that many (2 nodes (k - 1) for all-reduce, nodes (k - 1)
  // otherwise), so they cost nodes x intra_alpha. Before 2026-12-05 every step paid inter_alpha:
  // a 1,024-rank ring on 128 nodes was charged 2,046 network latencies (41 ms at 20 us) where
  // NCCL counts 254 and 1,792 NVLink steps.
  if (op == CollectiveOp::kSendRecv) return g.inter_alpha;
  const int nodes = g.nodes();
  const Time intra = g.ranks_per_node > 1 ? static_cast<int64_t>(nodes) * g.intra_alpha : Time::zero();
  return static_cast<int64_t>(ring_steps(op, nodes)) * g.inter_alpha + intra;
}

Time collective_time(CollectiveOp op, Bytes size, const GroupLinks& g) {
  if (g.ranks <= 1 || size.n <= 0) return Time::zero();
  return ring_latency(op, g) + collective_bandwidth_bound(op, size, g);
}

Time collective_bandwidth_bound(CollectiveOp op, Bytes size, const GroupLinks& g) {
  if (g.ranks <= 1 || size.n <= 0) return Time::zero();
  const Bandwidth bw = ring_busbw(g);
  // All-to-all across nodes: a rank's (n-1)/n x size leaves through its own NIC share only
  // (NCCL cannot aggregate NICs for all-to-all; nccl-tests#267).
  if (op == CollectiveOp::kAllToAll && g.nodes() > 1) {
    const double remote = static_cast<double>(g.ranks - g.ranks_per_node) / g.ranks;
    const double local = static_cast<double>(g.ranks_per_node - 1) / g.ranks;
    return max(Time::s(remote * size.as_double() / g.nic_per_gpu.bytes_per_s),
               Time::s(local * size.as_double() / g.intra_busbw.bytes_per_s));
  }
  if (op == CollectiveOp::kSendRecv) {
    const Bandwidth link = g.nodes() > 1 ? g.nic_per_gpu : g.intra_busbw;
    return Time::s(size.as_double() / link.bytes_per_s);
  }
  return Time::s(bus_factor(op, g.ranks) * size.as_double() / bw.bytes_per_s);
}

Time collective_nic_time(CollectiveOp op, Bytes size, const GroupLinks& g) {
  if (g.ranks <= 1 || size.n <= 0 || g.nodes() <= 1) return Time::zero();
  if (op == CollectiveOp::kAllToAll) {
    const double remote = static_cast<double>(g.ranks - g.ranks_per_node) / g.ranks;
    return Time::s(remote * size.as_double() / g.nic_per_gpu.bytes_per_s);
  }
  if (op == CollectiveOp::kSendRecv) return Time::s(size.as_double() / g.nic_per_gpu.bytes_per_s);
  const double across = g.nic_per_gpu.bytes_per_s * std::min(g.ranks, g.ranks_per_node);
  return Time::s(bus_factor(op, g.ranks) * size.as_double() / across);
}

}  // namespace clustersim::coll
