// SPDX-License-Identifier: Apache-2.0
// Fabric statistics (counts, bisection from the Clos structure) and the `clustersim topo` summary.
#include "topology/fabric_stats.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

#include "topology/internal/text.h"

namespace clustersim::topo {
namespace {

using internal::aggregate_bandwidth;
using internal::faulted_bandwidth;
using internal::short_decimal;
using internal::with_commas;

std::string row(const char* fmt, const std::string& a, const std::string& b, const std::string& c,
                const std::string& d) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, a.c_str(), b.c_str(), c.c_str(), d.c_str());
  std::string line(buf);
  while (line.size() > 1 && line[line.size() - 2] == ' ') line.erase(line.size() - 2, 1);
  return line;
}

// The narrowest cut between the first half of the servers and the last half (the middle server
// of an odd count on neither side), in one direction: from the `sender` half (0 = first, 1 =
// last) to the other, so each cable it crosses counts in the direction that leaves the sender's
// side. Every switch of a ToR group is alike (rails), as is every agg of a pod and every core
// (planes): permuting them maps the fabric and both halves onto themselves, so some narrowest cut
// keeps each such set on one side (the smallest minimum cut is unique, hence unchanged by the
// permutation). Merged, the fabric is a tree
//   core -- pod (its aggs) -- group (its ToRs) -- server (its NICs)
// whose edge capacities, up and down, are the cables they merge, and the cut of a tree is a sum
// over subtrees (each child kept on its parent's side, or its edge cut). Exact on a healthy
// fabric, whatever the pods' and groups' filling (fabric_graph.h's halves_max_flow checks it by
// max-flow). With `faults`, over the capacities the faults leave: every cut of the merged tree is a
// cut of the fabric, so the narrowest bounds that direction's max flow from above (a fault that
// treats like switches unlike can open a narrower cut that splits them). Before 2026-12-05 each
// cable counted at its slower direction in both, so faults on one direction of two cables were
// both subtracted and the figure could fall below the max flow.
struct Halves {
  double half_injection = 0;  // what the first half's servers inject, as built
  double cut = 0;
  std::array<double, kLinkTierCount> by_tier{};  // the cut's capacity per tier
};

// A merged tree edge: the cables' capacities away from the GPUs (up) and back (down).
struct MergedEdge {
  double up = 0;
  double down = 0;
};

Halves narrowest_cut(const Fabric& fabric, bool faults, int sender) {
  const ClosShape& s = fabric.shape();
  const auto add = [&](MergedEdge& e, LinkId up) {
    if (!faults) {
      const double built = fabric.tier_spec(fabric.link_tier(up)).bandwidth.bytes_per_s;
      e.up += built;
      e.down += built;
      return;
    }
    e.up += fabric.capacity(up).bytes_per_s;
    e.down += fabric.capacity(Fabric::reverse(up)).bytes_per_s;
  };
  // Merged edge capacities: each server to its group, group to its pod, pod to the core.
  std::vector<MergedEdge> server_up(static_cast<size_t>(s.servers));
  std::vector<MergedEdge> group_up(static_cast<size_t>(s.groups));
  std::vector<MergedEdge> pod_up(static_cast<size_t>(s.pods));
  Halves out;
  for (NicId n = 0; n < s.nics; ++n) {
    add(server_up[static_cast<size_t>(fabric.server_of_nic(n))], fabric.host_link(n, Direction::kUp));
    if (fabric.server_of_nic(n) < s.servers / 2) {
      out.half_injection += fabric.tier_spec(LinkTier::kHost).bandwidth.bytes_per_s;
    }
  }
  for (int tor = 0; tor < s.tors; ++tor) {
    for (int j = 0; j < s.tor_up; ++j) {
      add(group_up[static_cast<size_t>(tor / s.tors_per_group)], fabric.tor_agg_link(tor, j, Direction::kUp));
    }
  }
  if (s.tiers == 3) {
    for (int agg = 0; agg < s.aggs; ++agg) {
      for (int m = 0; m < s.agg_up; ++m) {
        add(pod_up[static_cast<size_t>(agg / s.aggs_per_pod)], fabric.agg_core_link(agg, m, Direction::kUp));
      }
    }
  }
  // cost[side]: the narrowest cut below a node placed on side 0 (first half) or 1 (last half).
  struct Cost {
    std::array<double, 2> cut{};
    std::array<std::array<double, kLinkTierCount>, 2> by_tier{};
  };
  constexpr double kFixed = std::numeric_limits<double>::infinity();
  const auto add_child = [sender](Cost& parent, const Cost& child, const MergedEdge& edge, LinkTier tier) {
    for (int side = 0; side < 2; ++side) {
      // A child on the other side: the flow crosses its edge upward when the child is on the
      // sender's side, downward when the parent is.
      const double crossing = 1 - side == sender ? edge.up : edge.down;
      const double same = child.cut[side];
      const double cross = child.cut[1 - side] + crossing;
      // Ties keep the child on the parent's side: the cut then falls in the lower tier.
      if (same <= cross * (1 + 1e-12)) {
        parent.cut[side] += same;
        for (int t = 0; t < kLinkTierCount; ++t) parent.by_tier[side][t] += child.by_tier[side][t];
      } else {
        parent.cut[side] += cross;
        for (int t = 0; t < kLinkTierCount; ++t) parent.by_tier[side][t] += child.by_tier[1 - side][t];
        parent.by_tier[side][static_cast<int>(tier)] += crossing;
      }
    }
  };
  const int half = s.servers / 2;
  Cost core;
  for (int pod = 0; pod < s.pods; ++pod) {
    Cost pod_cost;
    const int first_group = pod * s.groups_per_pod;
    for (int g = first_group; g < std::min(s.groups, first_group + s.groups_per_pod); ++g) {
      Cost group;
      const int first_server = g * s.servers_per_group;
      for (int sv = first_server; sv < std::min(s.servers, first_server + s.servers_per_group); ++sv) {
        Cost server;  // a server stays on its half's side; the middle one of an odd count on either
        if (sv < half) server.cut[1] = kFixed;
        if (sv >= s.servers - half) server.cut[0] = kFixed;
        add_child(group, server, server_up[static_cast<size_t>(sv)], LinkTier::kHost);
      }
      add_child(pod_cost, group, group_up[static_cast<size_t>(g)], LinkTier::kTorAgg);
    }
    if (s.tiers == 2) {
      core = pod_cost;  // one pod: its spines are the top of the tree
    } else {
      add_child(core, pod_cost, pod_up[static_cast<size_t>(pod)], LinkTier::kAggCore);
    }
  }
  const int side = core.cut[0] <= core.cut[1] ? 0 : 1;
  out.cut = s.servers >= 2 ? core.cut[side] : 0.0;
  if (s.servers >= 2) out.by_tier = core.by_tier[side];
  return out;
}

// Sum of the host links' capacities in direction `d` (kUp: the NICs sending), faults included.
double host_capacity(const Fabric& fabric, Direction d) {
  double sum = 0;
  for (NicId n = 0; n < fabric.nics(); ++n) sum += fabric.capacity(fabric.host_link(n, d)).bytes_per_s;
  return sum;
}

}  // namespace

FabricStats fabric_stats(const Fabric& fabric) {
  const ClosShape& s = fabric.shape();
  FabricStats st;
  st.gpus = s.gpus;
  st.servers = s.servers;
  st.nics = s.nics;
  st.pods = s.pods;
  st.tors = s.tors;
  st.aggs = s.aggs;
  st.cores = s.cores;
  for (int t = 0; t < kLinkTierCount; ++t)
    st.cables[t] = fabric.cable_count(static_cast<LinkTier>(t));
  if (!fabric.faults().empty()) {
    for (LinkId l = 0; l < fabric.link_count(); ++l) {
      const double built = fabric.built_capacity(l).bytes_per_s;
      const double now = fabric.capacity(l).bytes_per_s;
      if (now <= 0) {
        ++st.failed_directions;
      } else if (now < built) {
        ++st.degraded_directions;
      }
    }
  }

  const Halves built = narrowest_cut(fabric, false, 0);
  st.injection = Bandwidth{s.nics * fabric.tier_spec(LinkTier::kHost).bandwidth.bytes_per_s};
  st.bisection = Bandwidth{built.cut};
  st.bisection_by_tier = built.by_tier;
  st.bisection_tier = LinkTier::kHost;
  for (int t = 0; t < kLinkTierCount; ++t) {
    if (built.by_tier[t] > built.by_tier[static_cast<int>(st.bisection_tier)]) st.bisection_tier = static_cast<LinkTier>(t);
  }
  st.bisection_ratio = built.half_injection > 0 ? built.cut / built.half_injection : 0;
  st.sending_with_faults = st.receiving_with_faults = st.injection;
  st.bisection_forward_with_faults = st.bisection_backward_with_faults = st.bisection;
  if (!fabric.faults().empty()) {
    st.sending_with_faults = Bandwidth{host_capacity(fabric, Direction::kUp)};
    st.receiving_with_faults = Bandwidth{host_capacity(fabric, Direction::kDown)};
    st.bisection_forward_with_faults = Bandwidth{narrowest_cut(fabric, true, 0).cut};
    st.bisection_backward_with_faults = Bandwidth{narrowest_cut(fabric, true, 1).cut};
  }
  st.injection_with_faults = std::min(st.sending_with_faults, st.receiving_with_faults);
  st.bisection_with_faults = std::min(st.bisection_forward_with_faults, st.bisection_backward_with_faults);
  return st;
}

std::string format_summary(const Fabric& fabric) {
  const ClosShape& s = fabric.shape();
  const FabricStats st = fabric_stats(fabric);
  const bool two = s.tiers == 2;
  std::string out;
  out += "fabric: " + std::to_string(s.tiers) + "-tier Clos" + (two ? " (leaf/spine)" : "") + ", " +
         to_string(s.wiring) + " wiring, switch radix " + std::to_string(s.radix) +
         (s.oversubscription_by == OversubscriptionBy::kFewerUplinks
              ? std::string(", oversubscription_by ") + to_string(s.oversubscription_by)
              : std::string()) +
         "\n";
  out += "hosts: " + with_commas(s.gpus) + " GPUs in " + with_commas(s.servers) + " servers (" +
         std::to_string(s.gpus_per_node) + " GPUs, " + std::to_string(s.nics_per_node) +
         " NICs each); " + with_commas(s.nics) + " NICs at " +
         to_string(fabric.tier_spec(LinkTier::kHost).bandwidth) + "\n";
  // What a group holds at most (a cluster of fewer servers fills one partly: "up to", as for pods;
  // until 2026-12-06 it read as the servers the group has).
  const std::string group = s.wiring == Wiring::kRailOptimized
                                ? "up to " + std::to_string(s.servers_per_group) + " servers on " +
                                      std::to_string(s.tors_per_group) + " rail ToRs"
                                : "up to " + std::to_string(s.servers_per_group) +
                                      (s.servers_per_group == 1 ? " server" : " servers") + " on 1 ToR";
  out += "groups: " + with_commas(s.groups) + " (" + group + "); pods: " + with_commas(s.pods) +
         (two ? "" : " of at most " + std::to_string(s.max_pods)) + ", each up to " +
         std::to_string(s.groups_per_pod) + (s.groups_per_pod == 1 ? " group = " : " groups = ") + std::to_string(s.tors_per_pod) +
         " ToRs and " + std::to_string(s.aggs_per_pod) + (two ? " spines" : " aggs") + "\n";

  out += "switches          count  ports down:up  oversubscription\n";
  const char* sw = "  %-10s %10s  %-13s  %s\n";
  // The split's ratio, and the cabled one where whole servers or groups leave down ports empty;
  // where the links down and up differ in speed (network.fabric_bandwidth), the ratio in
  // bandwidth too, which is what throttles (3:1 ports with uplinks twice the NICs' speed: 1.5:1).
  const auto ratio = [&s](int down, int cabled, int up, LinkSpec below, LinkSpec above) {
    std::string r = short_decimal(static_cast<double>(down) / up) + ":1";
    if (cabled < down) {
      r = short_decimal(static_cast<double>(cabled) / up) + ":1 as cabled (" + std::to_string(cabled) + " of " +
          std::to_string(down) + " down ports; " + r + " as split)";
    }
    if (below.bandwidth.bytes_per_s != above.bandwidth.bytes_per_s) {
      r += " in ports, " +
           short_decimal(cabled * below.bandwidth.bytes_per_s / (up * above.bandwidth.bytes_per_s)) + ":1 in bandwidth (" +
           to_string(below.bandwidth) + " down, " + to_string(above.bandwidth) + " up)";
    }
    // network.oversubscription_by: fewer_uplinks leaves ports of the radix uncabled.
    if (down + up < s.radix) r += "; " + std::to_string(s.radix - down - up) + " ports unused (fewer uplinks)";
    return r;
  };
  const LinkSpec host = fabric.tier_spec(LinkTier::kHost), tor_agg = fabric.tier_spec(LinkTier::kTorAgg);
  out += row(sw, two ? "leaf" : "tor", with_commas(s.tors),
             std::to_string(s.tor_down) + ":" + std::to_string(s.tor_up),
             ratio(s.tor_down, s.tor_down_cabled(), s.tor_up, host, tor_agg));
  if (two) {
    out += row(sw, "spine", with_commas(s.aggs), std::to_string(s.agg_down) + ":0",
               std::to_string(s.tors) + " of " + std::to_string(s.agg_down) + " ports used");
  } else {
    out += row(sw, "agg", with_commas(s.aggs),
               std::to_string(s.agg_down) + ":" + std::to_string(s.agg_up),
               ratio(s.agg_down, s.agg_down_cabled(), s.agg_up, tor_agg, fabric.tier_spec(LinkTier::kAggCore)));
    out += row(sw, "core", with_commas(s.cores), std::to_string(s.radix) + ":0",
               std::to_string(s.pods) + " of " + std::to_string(s.radix) + " ports used");
  }
  out += row(sw, "total", with_commas(int64_t{s.tors} + s.aggs + s.cores), "", "");
  if (!two && s.pods == 1) {
    out += "  (one pod built: no path crosses the core tier; its switches and agg_core links are sized for " +
           std::to_string(s.max_pods) + " pods, not a bill of materials for this cluster)\n";
  } else if (!two && s.pods < s.max_pods) {
    // Every agg keeps its uplinks, one to each core of its plane: the cores are those of a full
    // fabric, each using one port per built pod. The cables are real; fewer, fuller cores carry them.
    const int64_t uplinks = int64_t{s.aggs} * s.agg_up;
    // With the total those cores give (the total alone read as the switches to buy: 4,608 where
    // 640 carry the fabric; since 2026-12-06).
    const int64_t fewest = (uplinks + s.radix - 1) / s.radix;
    out += "  (core tier sized for " + std::to_string(s.max_pods) + " pods, " + std::to_string(s.pods) +
           " built: its " + with_commas(uplinks) + " agg_core links would fit " + with_commas(fewest) + " cores of " +
           std::to_string(s.radix) + " ports, " + with_commas(int64_t{s.tors} + s.aggs + fewest) +
           " switches in all; the counts above are the simulated fabric's, not a bill of materials)\n";
  }

  out += "links (full duplex)   count  bandwidth     latency\n";
  const char* ln = "  %-10s %12s  %-12s  %s\n";
  int64_t cables = 0;
  for (int t = 0; t < kLinkTierCount; ++t) {
    const auto tier = static_cast<LinkTier>(t);
    if (st.cables[t] == 0) continue;
    cables += st.cables[t];
    out +=
        row(ln, to_string(tier), with_commas(st.cables[t]),
            to_string(fabric.tier_spec(tier).bandwidth), to_string(fabric.tier_spec(tier).latency));
  }
  out += row(ln, "total", with_commas(cables), "", "");
  out += "  (" + with_commas(fabric.link_count()) + " link directions; switch latency " +
         to_string(fabric.switch_latency()) + " per switch; nvlink latency per hop, GPU to NVSwitch: half of "
         "network.nvlink_latency, which is GPU to GPU)\n";

  const bool faulted = !fabric.faults().empty();
  // With faults, each direction over what the faults leave of it: NICs sending (host links up)
  // and receiving (down); one figure when both agree.
  std::string injection_faulted;
  if (faulted && st.sending_with_faults == st.receiving_with_faults) {
    injection_faulted = " as built; " + faulted_bandwidth(st.sending_with_faults, st.injection) +
                        " with the faults, each direction";
  } else if (faulted) {
    injection_faulted = " as built; with the faults " + faulted_bandwidth(st.sending_with_faults, st.injection) +
                        " sending, " + faulted_bandwidth(st.receiving_with_faults, st.injection) + " receiving";
  }
  out += "injection bandwidth: " + aggregate_bandwidth(st.injection) + injection_faulted + "\n";
  // The tiers whose links the cut takes, largest share first ("set by the tor_agg tier" when one).
  std::vector<int> order;
  for (int t = kLinkTierCount - 1; t >= 0; --t) {
    if (st.bisection_by_tier[t] > 0) order.push_back(t);
  }
  std::string tiers;
  if (order.size() <= 1) {
    tiers = "set by the " + std::string(to_string(st.bisection_tier)) + " tier";
  } else {
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return st.bisection_by_tier[a] > st.bisection_by_tier[b]; });
    tiers = "across tiers:";
    for (size_t i = 0; i < order.size(); ++i) {
      tiers += std::string(i ? "," : "") + " " + to_string(static_cast<LinkTier>(order[i])) + " " +
               aggregate_bandwidth(Bandwidth{st.bisection_by_tier[order[i]]});
    }
  }
  // With faults, an upper bound per direction (narrowest_cut); one figure when both agree.
  std::string bisection_faulted;
  if (faulted && st.bisection_forward_with_faults == st.bisection_backward_with_faults) {
    bisection_faulted = "; with the faults at most " + faulted_bandwidth(st.bisection_forward_with_faults, st.bisection) +
                        " each direction (the same halves over the capacity the faults leave)";
  } else if (faulted) {
    bisection_faulted = "; with the faults at most " + faulted_bandwidth(st.bisection_forward_with_faults, st.bisection) +
                        " from the first half to the last, " +
                        faulted_bandwidth(st.bisection_backward_with_faults, st.bisection) +
                        " from the last to the first (the same halves over the capacity the faults leave in each direction)";
  }
  if (s.servers < 2) {
    out += "bisection bandwidth: none (one server: no cut between servers)\n";
  } else {
    out += "bisection bandwidth: " + aggregate_bandwidth(st.bisection) + " (" +
           short_decimal(100 * st.bisection_ratio, 1) + "% of full bisection, " + tiers + "; " +
           (faulted ? "as built)" : "healthy fabric)") + bisection_faulted + "\n";
  }
  if (fabric.faults().empty()) {
    out += "faults: none\n";
  } else {
    out += "faults: " + std::to_string(fabric.faults().size()) + " (" +
           with_commas(st.failed_directions) + " link directions failed, " +
           with_commas(st.degraded_directions) + " degraded)\n";
    constexpr size_t kListed = 20;  // the rest are counted above
    for (size_t i = 0; i < fabric.faults().size(); ++i) {
      if (i == kListed) {
        out += "  ... and " + with_commas(static_cast<int64_t>(fabric.faults().size() - kListed)) + " more\n";
        break;
      }
      const AppliedFault& f = fabric.faults()[i];
      // Significant digits below 1: a factor of 0.0004 printed "x0" (failed) before 2026-12-05.
      out += "  " + f.element + ": bandwidth x" + internal::nonzero_decimal(f.bandwidth_factor, 3);
      if (f.extra_latency > Time::zero()) out += ", +" + to_string(f.extra_latency);
      out += " on " + std::to_string(f.link_directions) + (f.link_directions == 1 ? " link direction\n" : " link directions\n");
    }
  }
  return out;
}

}  // namespace clustersim::topo
