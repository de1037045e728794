// SPDX-License-Identifier: Apache-2.0
// The built fabric: nodes, directional links with capacity and latency, faults; all by index.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sim/core/config.h"
#include "sim/core/units.h"
#include "topology/clos_shape.h"

namespace clustersim::topo {

using GpuId = int32_t;   // 0 .. gpus-1; server = gpu / gpus_per_node
using NicId = int32_t;   // 0 .. nics-1; NIC i of server s = s * nics_per_node + i
using NodeId = int32_t;  // every node of every kind, dense (layout below)
using LinkId = int32_t;  // one direction of one cable, dense: 2 * cable + direction

enum class NodeKind : uint8_t { kGpu, kNvSwitch, kNic, kTor, kAgg, kCore };
enum class LinkTier : uint8_t { kNvlink, kHost, kTorAgg, kAggCore };
inline constexpr int kLinkTierCount = 4;
inline constexpr int kNodeKindCount = 6;
// kUp runs away from the GPUs (GPU->NVSwitch, NIC->ToR, ToR->agg, agg->core); kDown back.
enum class Direction : uint8_t { kUp = 0, kDown = 1 };

// "gpu", "nvswitch", "nic", "tor", "agg", "core"; "nvlink", "host", "tor_agg", "agg_core".
const char* to_string(NodeKind k);
const char* to_string(LinkTier t);

// Speed and one-way latency of every link of one tier, as built (faults change single links).
struct LinkSpec {
  Bandwidth bandwidth;  // per direction
  Time latency;
};

struct LinkEnds {
  NodeId from = 0;
  NodeId to = 0;
};

// A fault as applied: which element, how many link directions it touched.
struct AppliedFault {
  std::string element;
  double bandwidth_factor = 0;
  Time extra_latency;
  int link_directions = 0;
};

// A Clos fabric (shape in clos_shape.h) with every link as two directed capacity resources.
// Nothing is stored per node or per route: ids are arithmetic on the shape, so 100,000+ GPUs
// take a few MB (one Bandwidth per link direction) and build in milliseconds.
//
//   NodeId layout:  [gpus][nvswitches = servers][nics][tors][aggs][cores]
//   cable layout:   [nvlink: one per GPU][host: one per NIC][tor_agg: tor * u_t + j]
//                   [agg_core: agg * u_a + m]           (agg = pod * u_t + j; core = j * u_a + m)
//   LinkId = 2 * cable + direction       names: "host:97" (cable), "host:97/up" (direction)
//
//   GPU --nvlink-- NVSwitch        NIC --host-- ToR --tor_agg-- agg --agg_core-- core
//   (intra-node)                   (inter-node: NIC of GPU l = l * nics_per_node / gpus_per_node)
class Fabric {
 public:
  // `tiers` indexed by LinkTier. Use build_fabric() to get a validated one from a scenario.
  Fabric(const ClosShape& shape, const std::array<LinkSpec, kLinkTierCount>& tiers,
         Time switch_latency);

  const ClosShape& shape() const { return shape_; }
  int gpus() const { return shape_.gpus; }
  int servers() const { return shape_.servers; }
  int nics() const { return shape_.nics; }

  // Host and switch placement (all O(1)).
  int server_of_gpu(GpuId g) const { return g / shape_.gpus_per_node; }
  NicId nic_of_gpu(GpuId g) const;
  int server_of_nic(NicId n) const { return n / shape_.nics_per_node; }
  int tor_of_nic(NicId n) const;
  int rail_of_nic(NicId n) const;      // its NIC index in its server, rail-optimised; else 0 (one ToR per server)
  int tor_port_of_nic(NicId n) const;  // down port 0 .. tor_down-1 on its ToR
  int pod_of_tor(int tor) const { return tor / shape_.tors_per_pod; }
  int tor_in_pod(int tor) const { return tor % shape_.tors_per_pod; }
  int agg_of(int pod, int j) const { return pod * shape_.aggs_per_pod + j; }

  // Nodes.
  NodeId node_count() const { return node_offset_[kNodeKindCount]; }
  NodeKind node_kind(NodeId n) const;
  int node_index(NodeId n) const { return n - node_offset_[static_cast<int>(node_kind(n))]; }
  NodeId node(NodeKind kind, int index) const {
    return node_offset_[static_cast<int>(kind)] + index;
  }
  int node_count(NodeKind kind) const;
  // "gpu:12", "nvswitch:1", "nic:97", "tor:3", "agg:2.1" (pod 2, agg 1), "core:7".
  std::string node_name(NodeId n) const;

  // Links. cable_count and the tier id helpers take indices within the tier.
  LinkId link_count() const { return static_cast<LinkId>(2 * cable_offset_[kLinkTierCount]); }
  int64_t cable_count(LinkTier t) const;
  LinkId nvlink(GpuId g, Direction d) const { return id(LinkTier::kNvlink, g, d); }
  LinkId host_link(NicId n, Direction d) const { return id(LinkTier::kHost, n, d); }
  LinkId tor_agg_link(int tor, int j, Direction d) const {
    return id(LinkTier::kTorAgg, int64_t{tor} * shape_.tor_up + j, d);
  }
  LinkId agg_core_link(int agg, int m, Direction d) const {
    return id(LinkTier::kAggCore, int64_t{agg} * shape_.agg_up + m, d);
  }
  LinkTier link_tier(LinkId l) const;
  static Direction link_direction(LinkId l) { return static_cast<Direction>(l & 1); }
  static LinkId reverse(LinkId l) { return l ^ 1; }
  int64_t cable_index(LinkId l) const;  // within its tier
  LinkEnds link_ends(LinkId l) const;
  std::string link_name(LinkId l) const;   // "tor_agg:45/up"
  std::string cable_name(LinkId l) const;  // "tor_agg:45"

  // Capacity and latency of one direction, faults included. Failed = capacity 0.
  Bandwidth capacity(LinkId l) const { return capacity_[l]; }
  // Capacity of one direction as built, before faults: the tier's speed, or GPU g's own NVLink speed.
  Bandwidth built_capacity(LinkId l) const;
  bool is_failed(LinkId l) const { return capacity_[l].bytes_per_s <= 0; }
  Time latency(LinkId l) const;
  const LinkSpec& tier_spec(LinkTier t) const { return tiers_[static_cast<int>(t)]; }
  Time switch_latency() const { return switch_latency_; }  // per switch traversed

  // Faults. Elements: a cable ("host:97", both directions), one direction ("host:97/up"), a
  // switch ("tor:3", "agg:2.1", "core:7", "nvswitch:5": all its links) or "nic:97" (its host
  // link). Capacity is multiplied by bandwidth_factor (0 = failed); extra_latency is added to the
  // named directions, or for a switch to the directions that enter it. Returns an error message
  // (nothing applied) when the element does not exist or the values are out of range.
  std::optional<std::string> apply_fault(const FabricFault& fault);
  const std::vector<AppliedFault>& faults() const { return faults_; }
  // The link directions each applied fault changed (sorted), in the order of faults().
  const std::vector<std::vector<LinkId>>& fault_links() const { return fault_links_; }
  bool has_failures() const { return failed_directions_ > 0; }
  // The applied faults that failed any of `links`, for messages: " (failed by nic:0)", " (failed
  // by tor_agg:0, tor_agg:1, tor_agg:2 and 5 more)" (their elements as written, in the order
  // applied); empty when none did.
  std::string failed_by(const std::vector<LinkId>& links) const;
  int failed_directions() const { return failed_directions_; }

  // Every link direction of a switch or host node (both directions of each cable), in cable order.
  std::vector<LinkId> links_of(NodeId n) const;

  // NVLink speed of GPU g per direction, as built: the kNvlink tier's unless set below.
  Bandwidth nvlink_bandwidth(GpuId g) const;
  // Runs both directions of GPU g's NVLink at `bw` (> 0) instead: a fabric holding GPUs of several
  // profiles (serving pools). Faults already applied keep their factor (capacity = bw x factor; a
  // failed direction stays failed). A transfer between two GPUs of a node crosses both GPUs'
  // links, so it runs at the slower GPU's speed. tier_spec(kNvlink) keeps the tier's speed.
  void set_nvlink_bandwidth(GpuId g, Bandwidth bw);

 private:
  LinkId id(LinkTier t, int64_t cable, Direction d) const {
    return static_cast<LinkId>(2 * (cable_offset_[static_cast<int>(t)] + cable) +
                               static_cast<int>(d));
  }
  std::optional<NodeId> parse_node(std::string_view name) const;
  std::optional<std::vector<LinkId>> parse_links(std::string_view name) const;

  ClosShape shape_;
  std::array<LinkSpec, kLinkTierCount> tiers_;
  Time switch_latency_;
  std::array<NodeId, kNodeKindCount + 1> node_offset_{};
  std::array<int64_t, kLinkTierCount + 1> cable_offset_{};
  std::vector<Bandwidth> capacity_;                 // per LinkId
  std::vector<Bandwidth> nvlink_rate_;              // per GpuId once set_nvlink_bandwidth ran; else empty
  std::unordered_map<LinkId, Time> extra_latency_;  // faults only
  std::vector<AppliedFault> faults_;
  std::vector<std::vector<LinkId>> fault_links_;  // per applied fault, sorted
  int failed_directions_ = 0;
};

// Validates the scenario's fabric keys (shape, speeds, latencies, qps_per_connection, faults) and
// builds the fabric. Throws BadInput listing every problem (key paths like
// "network.faults[2].element"). Host links run at cluster.nic_bandwidth, switch links at
// network.fabric_bandwidth (default: the NIC speed), NVLink at network.nvlink_bandwidth or
// `nvlink_fallback` (the GPU profile's figure; default 450 GB/s per direction, H100 SXM NVLink 4).
// NVLink latency is split half on each of the two links between two GPUs of a node.
Fabric build_fabric(const ClusterConfig& cluster, const NetworkConfig& network,
                    const std::string& scenario_file = "",
                    Bandwidth nvlink_fallback = gbytes_per_s(450));
// The same from a loaded scenario (errors name scenario.file).
Fabric build_fabric(const ScenarioConfig& scenario, Bandwidth nvlink_fallback = gbytes_per_s(450));

}  // namespace clustersim::topo
