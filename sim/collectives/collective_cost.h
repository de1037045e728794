// SPDX-License-Identifier: Apache-2.0
// Closed-form times of NCCL-style collectives (alpha-beta), for the analytical level and as the
// no-contention reference for the flow level.
#pragma once

#include <cstdint>

#include "sim/core/units.h"

namespace clustersim::coll {

enum class CollectiveOp : uint8_t { kAllReduce, kReduceScatter, kAllGather, kAllToAll, kSendRecv };

const char* to_string(CollectiveOp op);

// The links a group's collective crosses, already scaled by achieved efficiency.
//
//   node 0            node 1                 ranks_per_node = k GPUs of the group per node
//   [g g .. g] --NICs-- [g g .. g]  ...      each with its own NIC rail (rail-aligned placement)
//
// A ring (or NCCL's k rings, one per rail) crosses each node boundary once per ring step, so the
// bus bandwidth is min(intra, k x nic), where intra is NVLink bus bandwidth and nic the
// bandwidth each GPU's share of the NICs achieves across the fabric.
struct GroupLinks {
  int ranks = 1;
  int ranks_per_node = 1;    // GPUs of the group on one node (the whole group when nodes == 1)
  Bandwidth intra_busbw;     // NVLink bus bandwidth per GPU (NCCL busbw inside a node)
  Bandwidth nic_per_gpu;     // achieved inter-node bandwidth per GPU
  Time intra_alpha;          // per collective inside a node
  Time inter_alpha;          // per ring step across nodes
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

// Bus bandwidth of a ring over the group (see GroupLinks).
Bandwidth ring_busbw(const GroupLinks& g);

// Time of one collective whose per-rank buffer is `size` (nccl-tests "size": the whole vector for
// all-reduce, the gathered output for all-gather / reduce-scatter, the whole send buffer for
// all-to-all; the message for send/recv). Ring algorithm, bus-bandwidth factors as in nccl-tests
// doc/PERFORMANCE.md: all-reduce 2(n-1)/n, reduce-scatter / all-gather / all-to-all (n-1)/n:
//   t = latency + factor x size / busbw
// latency = ring_latency(op, g). One rank costs nothing.
Time collective_time(CollectiveOp op, Bytes size, const GroupLinks& g);

// A ring collective's latency: intra_alpha inside one node; across nodes, inter_alpha for each
// step between nodes (2(nodes-1) for all-reduce, nodes-1 for all-gather and reduce-scatter, 1
// for send/recv, n-1 for all-to-all) plus, when a node holds several ranks, nodes x intra_alpha
// for the steps inside nodes (each node's share of them is one intra-node collective's steps;
// NCCL's tuning model, with NVLink's per-step latency taken from the profile's alpha).
Time ring_latency(CollectiveOp op, const GroupLinks& g);

// Lower bound for any algorithm: every rank must move factor x size over its own links.
Time collective_bandwidth_bound(CollectiveOp op, Bytes size, const GroupLinks& g);

// How long the collective keeps each member's NIC share busy: the bytes that leave its node
// over that share. A ring over nodes sends factor x size per rank, of which one edge in
// ranks_per_node crosses a node, spread over the node's members' shares:
//   factor x size / (ranks_per_node x nic_per_gpu)
// (all-to-all: the remote share of size over the rank's own share). 0 inside one node. Under the
// time of collective_bandwidth_bound when NVLink is the slower side; what collectives sharing
// the NICs add up to.
Time collective_nic_time(CollectiveOp op, Bytes size, const GroupLinks& g);

}  // namespace clustersim::coll
