// SPDX-License-Identifier: Apache-2.0
// Fabric indices, names and faults, and build_fabric (validation + construction).
#include "topology/fabric.h"

#include <algorithm>
#include <cassert>
#include <charconv>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "topology/internal/text.h"

namespace clustersim::topo {
namespace {

// "1 pod", "8 pods".
std::string counted(int64_t n, const char* noun, const char* plural = nullptr) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural ? std::string(plural) : std::string(noun) + "s");
}

constexpr std::array<const char*, kNodeKindCount> kNodeKindNames = {"gpu", "nvswitch", "nic",
                                                                    "tor", "agg",      "core"};
constexpr std::array<const char*, kLinkTierCount> kLinkTierNames = {"nvlink", "host", "tor_agg",
                                                                    "agg_core"};

// Parses a whole non-negative decimal; nullopt on anything else.
std::optional<int64_t> parse_index(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

}  // namespace

const char* to_string(NodeKind k) { return kNodeKindNames[static_cast<int>(k)]; }
const char* to_string(LinkTier t) { return kLinkTierNames[static_cast<int>(t)]; }

Fabric::Fabric(const ClosShape& shape, const std::array<LinkSpec, kLinkTierCount>& tiers,
               Time switch_latency)
    : shape_(shape), tiers_(tiers), switch_latency_(switch_latency) {
  const std::array<int, kNodeKindCount> nodes = {shape.gpus, shape.servers, shape.nics,
                                                 shape.tors, shape.aggs,    shape.cores};
  for (int k = 0; k < kNodeKindCount; ++k) node_offset_[k + 1] = node_offset_[k] + nodes[k];
  const std::array<int64_t, kLinkTierCount> cables = {shape.gpus, shape.nics,
                                                      int64_t{shape.tors} * shape.tor_up,
                                                      int64_t{shape.aggs} * shape.agg_up};
  for (int t = 0; t < kLinkTierCount; ++t) cable_offset_[t + 1] = cable_offset_[t] + cables[t];
  capacity_.resize(static_cast<size_t>(link_count()));
  for (int t = 0; t < kLinkTierCount; ++t) {
    std::fill(capacity_.begin() + 2 * cable_offset_[t],
              capacity_.begin() + 2 * cable_offset_[t + 1], tiers_[t].bandwidth);
  }
}

NicId Fabric::nic_of_gpu(GpuId g) const {
  return static_cast<NicId>(topo::nic_of_gpu(g, shape_.gpus_per_node, shape_.nics_per_node));
}

int Fabric::rail_of_nic(NicId n) const {
  return shape_.wiring == Wiring::kRailOptimized ? n % shape_.nics_per_node : 0;
}

int Fabric::tor_of_nic(NicId n) const {
  const int group = server_of_nic(n) / shape_.servers_per_group;
  return group * shape_.tors_per_group + rail_of_nic(n);
}

int Fabric::tor_port_of_nic(NicId n) const {
  const int slot = server_of_nic(n) % shape_.servers_per_group;
  if (shape_.wiring == Wiring::kRailOptimized) return slot;
  return slot * shape_.nics_per_node + n % shape_.nics_per_node;
}

NodeKind Fabric::node_kind(NodeId n) const {
  assert(n >= 0 && n < node_count() && "node id out of range");
  int k = 0;
  while (n >= node_offset_[k + 1]) ++k;
  return static_cast<NodeKind>(k);
}

int Fabric::node_count(NodeKind kind) const {
  const int k = static_cast<int>(kind);
  return node_offset_[k + 1] - node_offset_[k];
}

std::string Fabric::node_name(NodeId n) const {
  const NodeKind kind = node_kind(n);
  const int index = node_index(n);
  std::string out = std::string(to_string(kind)) + ":";
  if (kind == NodeKind::kAgg) {
    return out + std::to_string(index / shape_.aggs_per_pod) + "." +
           std::to_string(index % shape_.aggs_per_pod);
  }
  return out + std::to_string(index);
}

int64_t Fabric::cable_count(LinkTier t) const {
  const int i = static_cast<int>(t);
  return cable_offset_[i + 1] - cable_offset_[i];
}

LinkTier Fabric::link_tier(LinkId l) const {
  assert(l >= 0 && l < link_count() && "link id out of range");
  const int64_t cable = l / 2;
  int t = 0;
  while (cable >= cable_offset_[t + 1]) ++t;
  return static_cast<LinkTier>(t);
}

int64_t Fabric::cable_index(LinkId l) const {
  return l / 2 - cable_offset_[static_cast<int>(link_tier(l))];
}

LinkEnds Fabric::link_ends(LinkId l) const {
  const int64_t c = cable_index(l);
  NodeId lower = 0;
  NodeId upper = 0;
  switch (link_tier(l)) {
    case LinkTier::kNvlink:
      lower = node(NodeKind::kGpu, static_cast<int>(c));
      upper = node(NodeKind::kNvSwitch, static_cast<int>(c / shape_.gpus_per_node));
      break;
    case LinkTier::kHost:
      lower = node(NodeKind::kNic, static_cast<int>(c));
      upper = node(NodeKind::kTor, tor_of_nic(static_cast<NicId>(c)));
      break;
    case LinkTier::kTorAgg: {
      const int tor = static_cast<int>(c / shape_.tor_up);
      lower = node(NodeKind::kTor, tor);
      upper = node(NodeKind::kAgg, agg_of(pod_of_tor(tor), static_cast<int>(c % shape_.tor_up)));
      break;
    }
    case LinkTier::kAggCore: {
      const int agg = static_cast<int>(c / shape_.agg_up);
      const int plane = agg % shape_.aggs_per_pod;
      lower = node(NodeKind::kAgg, agg);
      upper = node(NodeKind::kCore, plane * shape_.agg_up + static_cast<int>(c % shape_.agg_up));
      break;
    }
  }
  if (link_direction(l) == Direction::kUp) return {lower, upper};
  return {upper, lower};
}

std::string Fabric::cable_name(LinkId l) const {
  return std::string(to_string(link_tier(l))) + ":" + std::to_string(cable_index(l));
}

std::string Fabric::link_name(LinkId l) const {
  return cable_name(l) + (link_direction(l) == Direction::kUp ? "/up" : "/down");
}

Time Fabric::latency(LinkId l) const {
  Time t = tier_spec(link_tier(l)).latency;
  if (!extra_latency_.empty()) {
    if (auto it = extra_latency_.find(l); it != extra_latency_.end()) t += it->second;
  }
  return t;
}

Bandwidth Fabric::built_capacity(LinkId l) const {
  const LinkTier t = link_tier(l);
  if (t == LinkTier::kNvlink) return nvlink_bandwidth(static_cast<GpuId>(cable_index(l)));
  return tier_spec(t).bandwidth;
}

Bandwidth Fabric::nvlink_bandwidth(GpuId g) const {
  return nvlink_rate_.empty() ? tier_spec(LinkTier::kNvlink).bandwidth : nvlink_rate_[static_cast<size_t>(g)];
}

void Fabric::set_nvlink_bandwidth(GpuId g, Bandwidth bw) {
  assert(g >= 0 && g < gpus() && "no such GPU");
  assert(bw.bytes_per_s > 0 && "an NVLink speed must be positive");
  const Bandwidth was = nvlink_bandwidth(g);
  if (bw == was) return;
  if (nvlink_rate_.empty()) nvlink_rate_.assign(static_cast<size_t>(gpus()), tier_spec(LinkTier::kNvlink).bandwidth);
  nvlink_rate_[static_cast<size_t>(g)] = bw;
  for (const Direction d : {Direction::kUp, Direction::kDown}) {
    Bandwidth& c = capacity_[nvlink(g, d)];
    // capacity = built x the faults' factors, so scaling by bw / was keeps the factors.
    c = c == was ? bw : Bandwidth{c.bytes_per_s * (bw.bytes_per_s / was.bytes_per_s)};
  }
}

std::vector<LinkId> Fabric::links_of(NodeId n) const {
  std::vector<LinkId> out;
  auto both = [&out](LinkId up) {
    out.push_back(up);
    out.push_back(reverse(up));
  };
  const int i = node_index(n);
  const ClosShape& s = shape_;
  switch (node_kind(n)) {
    case NodeKind::kGpu: both(nvlink(i, Direction::kUp)); break;
    case NodeKind::kNvSwitch:
      for (int g = i * s.gpus_per_node; g < (i + 1) * s.gpus_per_node; ++g) {
        both(nvlink(g, Direction::kUp));
      }
      break;
    case NodeKind::kNic: both(host_link(i, Direction::kUp)); break;
    case NodeKind::kTor: {
      const int group = i / s.tors_per_group;
      const int first = group * s.servers_per_group;
      const int last = std::min(first + s.servers_per_group, s.servers);
      for (int server = first; server < last; ++server) {
        if (s.wiring == Wiring::kRailOptimized) {
          both(host_link(server * s.nics_per_node + i % s.tors_per_group, Direction::kUp));
        } else {
          for (int k = 0; k < s.nics_per_node; ++k) {
            both(host_link(server * s.nics_per_node + k, Direction::kUp));
          }
        }
      }
      for (int j = 0; j < s.tor_up; ++j) both(tor_agg_link(i, j, Direction::kUp));
      break;
    }
    case NodeKind::kAgg: {
      const int pod = i / s.aggs_per_pod;
      const int j = i % s.aggs_per_pod;
      const int last = std::min((pod + 1) * s.tors_per_pod, s.tors);
      for (int tor = pod * s.tors_per_pod; tor < last; ++tor) {
        both(tor_agg_link(tor, j, Direction::kUp));
      }
      for (int m = 0; m < s.agg_up; ++m) both(agg_core_link(i, m, Direction::kUp));
      break;
    }
    case NodeKind::kCore: {
      const int plane = i / s.agg_up;
      const int m = i % s.agg_up;
      for (int pod = 0; pod < s.pods; ++pod)
        both(agg_core_link(agg_of(pod, plane), m, Direction::kUp));
      break;
    }
  }
  return out;
}

std::optional<NodeId> Fabric::parse_node(std::string_view name) const {
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view kind = name.substr(0, colon);
  const std::string_view rest = name.substr(colon + 1);
  for (int k = 0; k < kNodeKindCount; ++k) {
    if (kind != kNodeKindNames[k]) continue;
    std::optional<int64_t> index;
    if (static_cast<NodeKind>(k) == NodeKind::kAgg) {
      const size_t dot = rest.find('.');
      if (dot == std::string_view::npos) return std::nullopt;
      const auto pod = parse_index(rest.substr(0, dot));
      const auto j = parse_index(rest.substr(dot + 1));
      if (!pod || !j || *pod >= shape_.pods || *j >= shape_.aggs_per_pod) return std::nullopt;
      index = *pod * shape_.aggs_per_pod + *j;
    } else {
      index = parse_index(rest);
    }
    if (!index || *index >= node_count(static_cast<NodeKind>(k))) return std::nullopt;
    return node(static_cast<NodeKind>(k), static_cast<int>(*index));
  }
  return std::nullopt;
}

std::optional<std::vector<LinkId>> Fabric::parse_links(std::string_view name) const {
  const size_t colon = name.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view tier = name.substr(0, colon);
  std::string_view rest = name.substr(colon + 1);
  std::optional<Direction> only;
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view dir = rest.substr(slash + 1);
    if (dir == "up") {
      only = Direction::kUp;
    } else if (dir == "down") {
      only = Direction::kDown;
    } else {
      return std::nullopt;
    }
    rest = rest.substr(0, slash);
  }
  for (int t = 0; t < kLinkTierCount; ++t) {
    if (tier != kLinkTierNames[t]) continue;
    const auto index = parse_index(rest);
    if (!index || *index >= cable_count(static_cast<LinkTier>(t))) return std::nullopt;
    const LinkId up = id(static_cast<LinkTier>(t), *index, Direction::kUp);
    if (only == Direction::kUp) return std::vector<LinkId>{up};
    if (only == Direction::kDown) return std::vector<LinkId>{reverse(up)};
    return std::vector<LinkId>{up, reverse(up)};
  }
  return std::nullopt;
}

std::optional<std::string> Fabric::apply_fault(const FabricFault& fault) {
  if (!(fault.bandwidth_factor >= 0.0 && fault.bandwidth_factor <= 1.0)) {
    return "bandwidth_factor must be in [0, 1] (0 = failed); got " +
           internal::short_decimal(fault.bandwidth_factor, 3);
  }
  if (fault.extra_latency < Time::zero()) return "extra_latency must not be negative";
  std::vector<LinkId> links;
  std::optional<NodeId> sw;
  if (auto named = parse_links(fault.element)) {
    links = std::move(*named);
  } else if ((sw = parse_node(fault.element)) && node_kind(*sw) != NodeKind::kGpu) {
    links = links_of(*sw);
  } else {
    // A 2-tier fabric's spines are its one pod's aggs (agg:0.J), and it has no cores.
    if (shape_.tiers == 2) {
      return "no fabric element '" + fault.element +
             "' (links: nvlink:N, host:N, tor_agg:N (leaf to spine), optionally /up or /down; switches: tor:N "
             "(leaves), agg:0.J (spines), nvswitch:SERVER; nic:N; indices as listed by clustersim topo, this "
             "2-tier fabric has " +
             counted(shape_.tors, "leaf", "leaves") + " and " + counted(shape_.aggs_per_pod, "spine") + ")";
    }
    return "no fabric element '" + fault.element +
           "' (links: nvlink:N, host:N, tor_agg:N, agg_core:N, optionally /up or /down; switches: "
           "tor:N, agg:POD.J, core:N, nvswitch:SERVER; nic:N; indices as listed by clustersim "
           "topo, this fabric has " +
           counted(shape_.tors, "ToR") + ", " + counted(shape_.pods, "pod") + " of " + counted(shape_.aggs_per_pod, "agg") +
           ", " + counted(shape_.cores, "core") + ")";
  }
  // One element spelt two ways (host:0 and host:00) would compound its factors unseen.
  std::sort(links.begin(), links.end());
  for (size_t j = 0; j < faults_.size(); ++j) {
    if (fault_links_[j] == links && faults_[j].element != fault.element) {
      return "'" + fault.element + "' names the same link directions as '" + faults_[j].element +
             "', listed before it: the two would compound; give each element one entry";
    }
  }
  const bool is_switch = sw && node_kind(*sw) != NodeKind::kNic;
  for (LinkId l : links) {
    const bool was_failed = is_failed(l);
    capacity_[l] = fault.bandwidth_factor * capacity_[l];
    if (!was_failed && is_failed(l)) ++failed_directions_;
    // A switch's extra delay is paid once per traversal: on the links that enter it.
    if (fault.extra_latency > Time::zero() && (!is_switch || link_ends(l).to == *sw)) {
      extra_latency_[l] += fault.extra_latency;
    }
  }
  faults_.push_back(AppliedFault{fault.element, fault.bandwidth_factor, fault.extra_latency,
                                 static_cast<int>(links.size())});
  fault_links_.push_back(std::move(links));
  return std::nullopt;
}

std::string Fabric::failed_by(const std::vector<LinkId>& links) const {
  std::vector<std::string> names;
  for (size_t j = 0; j < faults_.size(); ++j) {
    if (faults_[j].bandwidth_factor > 0) continue;
    const std::vector<LinkId>& mine = fault_links_[j];  // sorted
    if (std::any_of(links.begin(), links.end(), [&](LinkId l) { return std::binary_search(mine.begin(), mine.end(), l); })) {
      names.push_back(faults_[j].element);
    }
  }
  if (names.empty()) return "";
  constexpr size_t kNamed = 3;
  std::string out = " (failed by ";
  for (size_t i = 0; i < std::min(names.size(), kNamed); ++i) {
    out += (i == 0 ? "" : (i + 1 == names.size() ? " and " : ", ")) + names[i];
  }
  if (names.size() > kNamed) out += " and " + std::to_string(names.size() - kNamed) + " more";
  return out + ")";
}

Fabric build_fabric(const ClusterConfig& cluster, const NetworkConfig& network,
                    const std::string& scenario_file, Bandwidth nvlink_fallback) {
  ErrorList errors;
  auto fail = [&](std::string key, std::string message) {
    errors.add(InputError{scenario_file, 0, std::move(key), std::move(message)});
  };
  std::optional<ClosShape> shape;
  try {
    shape = plan_clos(cluster, network, scenario_file);
  } catch (const BadInput& e) {
    for (const InputError& err : e.errors()) errors.add(err);
  }
  const Bandwidth fabric_bw = network.fabric_bandwidth.value_or(cluster.nic_bandwidth);
  const Bandwidth nvlink_bw = network.nvlink_bandwidth.value_or(nvlink_fallback);
  if (!(cluster.nic_bandwidth.bytes_per_s > 0)) fail("cluster.nic_bandwidth", "must be positive");
  if (network.fabric_bandwidth && !(fabric_bw.bytes_per_s > 0)) {
    fail("network.fabric_bandwidth", "must be positive");
  }
  if (network.nvlink_bandwidth && !(nvlink_bw.bytes_per_s > 0)) {
    fail("network.nvlink_bandwidth", "must be positive");
  }
  assert(nvlink_fallback.bytes_per_s > 0 && "the GPU profile's NVLink speed must be positive");
  const std::array<std::pair<const char*, Time>, 4> latencies = {{
      {"network.host_link_latency", network.host_link_latency},
      {"network.fabric_link_latency", network.fabric_link_latency},
      {"network.switch_latency", network.switch_latency},
      {"network.nvlink_latency", network.nvlink_latency},
  }};
  for (const auto& [key, value] : latencies) {
    if (value < Time::zero()) fail(key, "must not be negative; got " + to_string(value));
  }
  if (network.qps_per_connection < 1) {
    fail("network.qps_per_connection",
         "must be at least 1; got " + std::to_string(network.qps_per_connection));
  }
  for (size_t i = 0; i < network.faults.size(); ++i) {
    const FabricFault& f = network.faults[i];
    const std::string key = "network.faults[" + std::to_string(i) + "]";
    if (!(f.bandwidth_factor >= 0.0 && f.bandwidth_factor <= 1.0)) {
      fail(key + ".bandwidth_factor", "must be in [0, 1] (0 = failed, below 1 = degraded); got " +
                                          internal::short_decimal(f.bandwidth_factor, 3));
    }
    if (f.extra_latency < Time::zero()) fail(key + ".extra_latency", "must not be negative");
  }
  errors.throw_if_any();

  const Time nvlink_half = Time::ps(network.nvlink_latency.as_ps() / 2);
  std::array<LinkSpec, kLinkTierCount> tiers;
  tiers[static_cast<int>(LinkTier::kNvlink)] = {nvlink_bw, nvlink_half};
  tiers[static_cast<int>(LinkTier::kHost)] = {cluster.nic_bandwidth, network.host_link_latency};
  tiers[static_cast<int>(LinkTier::kTorAgg)] = {fabric_bw, network.fabric_link_latency};
  tiers[static_cast<int>(LinkTier::kAggCore)] = {fabric_bw, network.fabric_link_latency};
  Fabric fabric(*shape, tiers, network.switch_latency);
  for (size_t i = 0; i < network.faults.size(); ++i) {
    if (auto problem = fabric.apply_fault(network.faults[i])) {
      errors.add(InputError{scenario_file, network.faults[i].line,
                            "network.faults[" + std::to_string(i) + "].element", *problem});
    }
  }
  errors.throw_if_any();
  return fabric;
}

Fabric build_fabric(const ScenarioConfig& scenario, Bandwidth nvlink_fallback) {
  try {
    return build_fabric(scenario.cluster, scenario.network, scenario.file, nvlink_fallback);
  } catch (const BadInput& e) {
    throw in_scenario(scenario, e);  // with the line of each key named
  }
}

}  // namespace clustersim::topo
