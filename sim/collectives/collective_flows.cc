// SPDX-License-Identifier: Apache-2.0
#include "sim/collectives/collective_flows.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>

#include "topology/clos_shape.h"

namespace clustersim::coll {
namespace {

double ring_factor(CollectiveOp op, int n) {
  const double r = static_cast<double>(n - 1) / n;
  return op == CollectiveOp::kAllReduce ? 2.0 * r : r;
}

int log2_ceil(int n) {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

void add(std::vector<FlowSpec>& out, int32_t src, int32_t dst, double bytes, int gpus_per_node) {
  if (src == dst || bytes <= 0) return;
  out.push_back({src, dst, bytes_of(bytes), src / gpus_per_node != dst / gpus_per_node});
}

void ring(CollectiveOp op, Bytes size, std::span<const int32_t> gpus, int gpus_per_node, std::vector<FlowSpec>& out) {
  const int n = static_cast<int>(gpus.size());
  const double total = ring_factor(op, n) * size.as_double();
  const auto nodes = members_by_node(gpus, gpus_per_node);
  const int count = static_cast<int>(nodes.size());
  if (count == 1 || !splits_evenly(nodes)) {
    for (int i = 0; i < n; ++i) add(out, gpus[i], gpus[(i + 1) % n], total, gpus_per_node);
    return;
  }
  const int k = static_cast<int>(nodes.front().size());
  for (int j = 0; j < count; ++j) {
    const auto& here = nodes[j];
    const auto& next = nodes[(j + 1) % count];
    if (k > 1) {
      for (int i = 0; i < k; ++i) add(out, here[i], here[(i + 1) % k], total, gpus_per_node);
    }
    for (int c = 0; c < k; ++c) add(out, here[c], next[c], total / k, gpus_per_node);
  }
}

void tree(Bytes size, std::span<const int32_t> gpus, int gpus_per_node, std::vector<FlowSpec>& out) {
  const auto nodes = members_by_node(gpus, gpus_per_node);
  const int count = static_cast<int>(nodes.size());
  if (count == 1 || !splits_evenly(nodes)) {
    ring(CollectiveOp::kAllReduce, size, gpus, gpus_per_node, out);
    return;
  }
  const int k = static_cast<int>(nodes.front().size());
  const double share = size.as_double() / (2.0 * k);
  for (int c = 0; c < k; ++c) {
    for (int t = 0; t < 2; ++t) {
      // Heap-numbered binary tree over node positions; the second tree mirrors the order.
      auto node_at = [&](int pos) { return t == 0 ? pos : count - 1 - pos; };
      for (int pos = 1; pos < count; ++pos) {
        const int32_t child = nodes[node_at(pos)][c];
        const int32_t parent = nodes[node_at((pos - 1) / 2)][c];
        add(out, child, parent, share, gpus_per_node);   // reduce
        add(out, parent, child, share, gpus_per_node);   // broadcast
      }
    }
    for (const auto& node : nodes) {
      for (int i = 0; i < k; ++i) {
        if (i == c) continue;
        add(out, node[i], node[c], size.as_double() / k, gpus_per_node);
        add(out, node[c], node[i], size.as_double() / k, gpus_per_node);
      }
    }
  }
}

}  // namespace

std::vector<std::vector<int32_t>> members_by_node(std::span<const int32_t> gpus, int gpus_per_node) {
  std::vector<std::vector<int32_t>> nodes;
  std::unordered_map<int32_t, size_t> index;  // node -> its place in `nodes` (a linear search was O(n^2))
  for (const int32_t g : gpus) {
    const auto [it, added] = index.try_emplace(g / gpus_per_node, nodes.size());
    if (added) nodes.emplace_back();
    nodes[it->second].push_back(g);
  }
  return nodes;
}

bool splits_evenly(const std::vector<std::vector<int32_t>>& nodes) {
  for (const auto& n : nodes) {
    if (n.size() != nodes.front().size()) return false;
  }
  return true;
}

int fewest_members_per_node(std::span<const int32_t> gpus, int gpus_per_node) {
  int fewest = static_cast<int>(gpus.size());
  for (const std::vector<int32_t>& node : members_by_node(gpus, gpus_per_node)) {
    fewest = std::min(fewest, static_cast<int>(node.size()));
  }
  return std::max(1, fewest);
}

int ring_members_per_node(std::span<const int32_t> gpus, int gpus_per_node) {
  // GPUs in order (every caller's rings): each node's members are one run, so the counts are
  // the run lengths, compared without building the per-node lists.
  if (std::is_sorted(gpus.begin(), gpus.end())) {
    if (gpus.empty()) return 1;
    size_t at = 0;
    int size = -1;
    while (at < gpus.size()) {
      const int32_t node = gpus[at] / gpus_per_node;
      size_t end = at + 1;
      while (end < gpus.size() && gpus[end] / gpus_per_node == node) ++end;
      const int run = static_cast<int>(end - at);
      if (size < 0) size = run;
      if (run != size) return 1;
      at = end;
    }
    return size;
  }
  const std::vector<std::vector<int32_t>> nodes = members_by_node(gpus, gpus_per_node);
  return !nodes.empty() && splits_evenly(nodes) ? static_cast<int>(nodes.front().size()) : 1;
}

void collective_flows(CollectiveOp op, Algorithm algorithm, Bytes size, std::span<const int32_t> gpus,
                      int gpus_per_node, std::vector<FlowSpec>& out) {
  const int n = static_cast<int>(gpus.size());
  if (n <= 1 || size.n <= 0) return;
  switch (op) {
    case CollectiveOp::kSendRecv:
      for (int i = 1; i < n; ++i) add(out, gpus[0], gpus[i], size.as_double(), gpus_per_node);
      return;
    case CollectiveOp::kAllToAll:
      for (int i = 0; i < n; ++i) {
        for (int j = 0; j < n; ++j) add(out, gpus[i], gpus[j], size.as_double() / n, gpus_per_node);
      }
      return;
    case CollectiveOp::kAllReduce:
      if (algorithm == Algorithm::kTree) {
        tree(size, gpus, gpus_per_node, out);
        return;
      }
      [[fallthrough]];
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllGather:
      ring(op, size, gpus, gpus_per_node, out);
      return;
  }
}

int tree_send_shares(int nodes) {
  // Per node position: its sends in the heap-numbered tree (one to its parent unless the root, one
  // to each child) plus those in the mirrored tree, where position p is node nodes - 1 - p.
  const auto sends = [nodes](int pos) {
    const int children = std::max(0, std::min(2, nodes - (2 * pos + 1)));
    return (pos > 0 ? 1 : 0) + children;
  };
  int most = 0;
  for (int n = 0; n < nodes; ++n) most = std::max(most, sends(n) + sends(nodes - 1 - n));
  return most;
}

Time tree_allreduce_time(Bytes size, const GroupLinks& g) {
  if (g.ranks <= 1 || size.n <= 0) return Time::zero();
  if (g.nodes() <= 1) return collective_time(CollectiveOp::kAllReduce, size, g);
  const int k = std::min(g.ranks, g.ranks_per_node);
  const double inter = tree_send_shares(g.nodes()) * size.as_double() / (2.0 * k * g.nic_per_gpu.bytes_per_s);
  const double intra = k > 1 ? 2.0 * (k - 1) / k * size.as_double() / g.intra_busbw.bytes_per_s : 0.0;
  return collective_latency(CollectiveOp::kAllReduce, Algorithm::kTree, g) + Time::s(std::max(inter, intra));
}

Time alltoallv_time(std::span<const FlowSpec> transfers, const GroupLinks& g, int gpus_per_nic,
                    std::span<const FlowSpec> nic_traffic) {
  if (transfers.empty()) return Time::zero();
  const int share = std::max(1, gpus_per_nic);
  // The NICs carry what every group sending at once puts on them (a NIC whose GPUs belong to two
  // expert domains carries both: counted from one domain, a hot GPU got the whole NIC, 2.2x fast).
  const std::span<const FlowSpec> on_nics = nic_traffic.empty() ? transfers : nic_traffic;
  // Per GPU: bytes sent and received inside the node; per NIC: across it. GPUs that share a NIC
  // share its rate, whichever of them sends: a hot GPU under skewed routing has the whole NIC
  // while its neighbours send little (before 2026-12-05 each GPU had a fixed 1/share of it, and
  // a plan with one 200 Gbps NIC per 8 GPUs came out 53% slower than the flow level).
  std::map<int32_t, std::array<double, 2>> intra_load;
  for (const FlowSpec& f : transfers) {
    if (f.inter_node) continue;
    intra_load[f.src][0] += f.bytes.as_double();
    intra_load[f.dst][1] += f.bytes.as_double();
  }
  double worst = 0;
  for (const auto& [gpu, v] : intra_load) worst = std::max(worst, std::max(v[0], v[1]) / g.intra_busbw.bytes_per_s);
  const double nic_rate = share * g.nic_per_gpu.bytes_per_s;
  worst = std::max(worst, busiest_nic_bytes(on_nics, share) / nic_rate);
  return collective_latency(CollectiveOp::kAllToAll, Algorithm::kRing, g) + Time::s(worst);
}

double busiest_nic_bytes(std::span<const FlowSpec> flows, int gpus_per_nic) {
  const int share = std::max(1, gpus_per_nic);
  std::map<int32_t, std::array<double, 2>> load;  // NIC -> bytes sent, received
  for (const FlowSpec& f : flows) {
    if (!f.inter_node) continue;
    load[f.src / share][0] += f.bytes.as_double();
    load[f.dst / share][1] += f.bytes.as_double();
  }
  double most = 0;
  for (const auto& [nic, v] : load) most = std::max({most, v[0], v[1]});
  return most;
}

void route_through_pxn(std::vector<FlowSpec>& flows, int gpus_per_node, int nics_per_node,
                       const std::function<bool(int32_t, int32_t)>& same_group) {
  const int per_node = std::max(1, gpus_per_node);
  const int nics = std::max(1, nics_per_node);
  const auto rail = [per_node, nics](int32_t gpu) { return topo::nic_of_gpu(gpu % per_node, per_node, nics); };
  const auto member = [&same_group](int32_t src, int32_t gpu) { return !same_group || same_group(src, gpu); };
  // The relay: a GPU of the sender's group on its node behind the destination's NIC, the
  // destination's local rank first (-1: none, and the flow goes as it is).
  const auto relay = [&](int32_t src, int32_t dst) {
    const int32_t base = src / per_node * per_node;
    if (member(src, base + dst % per_node)) return base + dst % per_node;
    for (int l = 0; l < per_node; ++l) {
      if (base + l != src && rail(base + l) == rail(dst) && member(src, base + l)) return base + l;
    }
    return -1;
  };
  const auto key = [](int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); };
  std::vector<FlowSpec> out;
  out.reserve(flows.size());
  std::unordered_map<uint64_t, size_t> inside;  // (src, dst) inside a node -> its flow in `out`
  const auto add_inside = [&](int32_t src, int32_t dst, Bytes bytes) {
    const auto [it, fresh] = inside.try_emplace(key(src, dst), out.size());
    if (fresh) {
      out.push_back({src, dst, bytes, false});
    } else {
      out[it->second].bytes += bytes;
    }
  };
  for (const FlowSpec& f : flows) {
    if (!f.inter_node) {
      add_inside(f.src, f.dst, f.bytes);
      continue;
    }
    const int32_t proxy = rail(f.src) == rail(f.dst) ? -1 : relay(f.src, f.dst);
    if (proxy < 0) {
      out.push_back(f);
      continue;
    }
    add_inside(f.src, proxy, f.bytes);
    out.push_back({proxy, f.dst, f.bytes, true, static_cast<uint32_t>(f.src % per_node) + 1});
  }
  flows.swap(out);
}

Time collective_latency(CollectiveOp op, Algorithm algorithm, const GroupLinks& g) {
  if (g.ranks <= 1) return Time::zero();
  if (g.nodes() <= 1) return g.intra_alpha;
  if (op == CollectiveOp::kAllReduce && algorithm == Algorithm::kTree) {
    return g.intra_alpha + static_cast<int64_t>(2 * log2_ceil(g.nodes())) * g.inter_alpha;
  }
  return ring_latency(op, g);
}

}  // namespace clustersim::coll
