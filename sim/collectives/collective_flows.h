// SPDX-License-Identifier: Apache-2.0
// NCCL-style collectives as a few long flows on the fabric: ring (rail-aligned, hierarchical when
// the group spans nodes), double binary tree all-reduce, all-to-all and send/recv. Each ring edge
// is one flow carrying every step's bytes (NCCL pipelines the steps over a channel), so a
// collective costs O(ranks) flows however many steps it has.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "sim/collectives/collective_cost.h"
#include "sim/core/units.h"

namespace clustersim::coll {

enum class Algorithm { kRing, kTree };

// One flow of a collective: `bytes` of payload from GPU `src` to GPU `dst`.
struct FlowSpec {
  int32_t src = 0;
  int32_t dst = 0;
  Bytes bytes;
  bool inter_node = false;
  // Which of the (src, dst) pair's connections carries it (net::Network::send): 0 its own; a PXN
  // relay carries local rank r's data on connection r + 1 (route_through_pxn).
  uint32_t connection = 0;
};

// Appends the flows of one collective over `gpus` (the group in rank order; `size` as in
// collective_time) to `out`. Nodes are gpu / gpus_per_node; ranks on the same node are taken in
// rank order.
//
//   ring, one node:            rank i -> rank i+1 (mod n), factor x size each
//   ring, N nodes x k ranks:   k channels, channel c enters and leaves every node on local rank
//                              c (same rail across nodes). Inside a node a channel visits the k
//                              local ranks in a cycle (the last hop brings the data to the rail's
//                              GPU, as NCCL's PXN does), so every intra-node edge i -> i+1 carries
//                              factor x size over the k channels, and every rail edge between
//                              consecutive nodes factor x size / k:
//
//        node 0               node 1
//     [0 -> 1 -> .. k-1 -> 0]   [0 -> 1 ..]      rail c: node j local c -> node j+1 local c
//          |__________________________^
//
//   bus factor: all-reduce 2(n-1)/n, reduce-scatter and all-gather (n-1)/n (nccl-tests
//   PERFORMANCE.md); so a GPU's NIC carries factor x size / k and its NVLink factor x size, which
//   is collective_time's min(intra, k x nic) bus bandwidth.
//   tree (all-reduce across nodes; other ops use the ring): per rail c two binary trees over the
//     nodes (the second mirrored, NCCL's double binary tree), each carrying size / 2k up (reduce)
//     and down (broadcast) every tree edge between the rail-c GPUs; inside a node each other GPU
//     exchanges size / k with the rail-c GPU both ways.
//   all-to-all: size / n from every rank to every other rank.
//   send/recv: gpus = {src, dst}, one flow of size.
// Ranks that fall on uneven node counts use one ring in rank order.
void collective_flows(CollectiveOp op, Algorithm algorithm, Bytes size, std::span<const int32_t> gpus,
                      int gpus_per_node, std::vector<FlowSpec>& out);

// `gpus` grouped by node (gpu / gpus_per_node), nodes in order of first appearance: the split
// collective_flows builds its rings on.
std::vector<std::vector<int32_t>> members_by_node(std::span<const int32_t> gpus, int gpus_per_node);
// Whether every node of `nodes` (members_by_node) holds as many members: else collective_flows
// runs one ring in rank order.
bool splits_evenly(const std::vector<std::vector<int32_t>>& nodes);
// The fewest of `gpus` on any node they touch (at least 1): the members whose NIC share paces an
// exchange between all of them (all-to-all).
int fewest_members_per_node(std::span<const int32_t> gpus, int gpus_per_node);
// The members per node a ring over `gpus` runs with, as collective_flows builds it: the count on
// each node when every node holds as many (k channels, member c of one node to member c of the
// next, k NIC shares), 1 when they differ (one ring in rank order, one edge out of each node: one
// GPU's NIC share).
int ring_members_per_node(std::span<const int32_t> gpus, int gpus_per_node);

// Closed-form time of the double binary tree all-reduce (no contention):
//   t = intra_alpha + 2 ceil(log2 nodes) x inter_alpha + max(s size / (2 k nic), 2 (k-1)/k size / intra)
// with k = ranks_per_node and s = tree_send_shares(nodes): the bandwidth term is the largest
// per-GPU send volume of the flows above, s shares of size / 2k, over its link. One node: the
// ring's collective_time. (Not used by the models: every all-reduce runs as a ring.)
Time tree_allreduce_time(Bytes size, const GroupLinks& g);
// The most shares of size / 2k any node sends (and receives) in the double binary tree of
// collective_flows over `nodes` nodes: its sends in the heap-numbered tree (to its parent and its
// children) plus the mirrored one's. 2 nodes: 2 (each the root of one tree and the leaf of the
// other); 3 and 4: 3; 5 and more: 4 (interior with two children in one tree and a leaf, or
// interior in both, in the other). Until 2026-12-07 the closed form took 4 for every count, 2x the
// flows' volume on 2 nodes.
int tree_send_shares(int nodes);

// Closed-form time of an uneven all-to-all given as its transfers (src, dst, bytes; MoE dispatch
// and combine): every GPU sends and receives its own bytes at once, so the slowest direction of
// the busiest GPU or NIC decides,
//   t = latency + max(max over GPUs of max(send_intra, recv_intra) / intra_busbw,
//                     max over NICs of max(send_inter, recv_inter) / (gpus_per_nic x nic_per_gpu))
// with latency = collective_latency(kAllToAll, ring, g); GPU i uses NIC i / gpus_per_nic (the
// consecutive GPUs of a node share one, as topo::nic_of_gpu numbers them). The NICs' loads come
// from `nic_traffic` when given (every group that sends at once, `transfers` among them), else
// from `transfers`. No transfers: zero.
Time alltoallv_time(std::span<const FlowSpec> transfers, const GroupLinks& g, int gpus_per_nic = 1,
                    std::span<const FlowSpec> nic_traffic = {});

// The busiest NIC's bytes between nodes among `flows`, sent or received (the larger direction),
// with GPU i on NIC i / gpus_per_nic as alltoallv_time counts them.
double busiest_nic_bytes(std::span<const FlowSpec> flows, int gpus_per_nic);

// NCCL's PXN (NCCL_P2P_PXN_LEVEL 2, its default since NCCL 2.12) for point-to-point traffic
// (all-to-all, MoE dispatch and combine): a send to a GPU of another node whose NIC is on a
// different rail (another local NIC index, topo::nic_of_gpu) first crosses NVLink to the sending
// node's GPU with the destination's local rank, whose NIC sends it on, so the bytes between nodes
// stay on the destination's rail. Each such flow becomes those two legs in place, both running at
// once (NCCL pipelines them through the intermediate GPU's buffer); an NVLink leg joins a flow of
// the list with the same ends inside the node, if there is one. Flows already on one rail, and
// flows inside a node, are kept as they are, in their order. The relay is a GPU of the sender's
// communicator (`same_group(src, gpu)`; none given: every GPU): the destination's local rank,
// else another behind the destination's NIC, else none and the flow goes as it is (NCCL relays
// only through its communicator's ranks). A relayed leg between nodes keeps its sender's
// connection (FlowSpec::connection = the sender's local rank + 1): NCCL posts it on the sending
// rank's own queue pairs, so relays of different senders to one GPU hash apart under ECMP.
void route_through_pxn(std::vector<FlowSpec>& flows, int gpus_per_node, int nics_per_node,
                       const std::function<bool(int32_t src, int32_t gpu)>& same_group = nullptr);

// The latency (alpha) part of collective_time for `algorithm`: what a flow-level collective waits
// besides its flows.
Time collective_latency(CollectiveOp op, Algorithm algorithm, const GroupLinks& g);

}  // namespace clustersim::coll
