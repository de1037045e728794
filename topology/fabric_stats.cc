// SPDX-License-Identifier: Apache-2.0
// Fabric statistics (counts, bisection from the Clos structure) and the `clustersim topo` summary.
#include "topology/fabric_stats.h"

#include <cstdio>

#include "topology/internal/text.h"

namespace clustersim::topo {
namespace {

using internal::aggregate_bandwidth;
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
      const double built = fabric.tier_spec(fabric.link_tier(l)).bandwidth.bytes_per_s;
      const double now = fabric.capacity(l).bytes_per_s;
      if (now <= 0) {
        ++st.failed_directions;
      } else if (now < built) {
        ++st.degraded_directions;
      }
    }
  }

  const double nic_bw = fabric.tier_spec(LinkTier::kHost).bandwidth.bytes_per_s;
  const double fabric_bw = fabric.tier_spec(LinkTier::kTorAgg).bandwidth.bytes_per_s;
  st.injection = Bandwidth{s.nics * nic_bw};
  double cut = st.injection.bytes_per_s / 2;
  st.bisection_tier = LinkTier::kHost;
  if (s.groups >= 2) {
    const double tor_up = static_cast<double>(s.tors) * s.tor_up * fabric_bw / 2;
    if (tor_up < cut) {
      cut = tor_up;
      st.bisection_tier = LinkTier::kTorAgg;
    }
  }
  if (s.tiers == 3 && s.pods >= 2) {
    const double agg_up = static_cast<double>(s.aggs) * s.agg_up * fabric_bw / 2;
    if (agg_up < cut) {
      cut = agg_up;
      st.bisection_tier = LinkTier::kAggCore;
    }
  }
  st.bisection = Bandwidth{cut};
  st.bisection_ratio = st.injection.bytes_per_s > 0 ? cut / (st.injection.bytes_per_s / 2) : 0;
  st.injection_with_faults = st.injection;
  st.bisection_with_faults = st.bisection;
  if (!fabric.faults().empty()) {
    // One direction per cable (links come in pairs l, l ^ 1), at its slower direction.
    std::array<double, kLinkTierCount> left{};
    for (LinkId l = 0; l < fabric.link_count(); l += 2) {
      left[static_cast<int>(fabric.link_tier(l))] +=
          std::min(fabric.capacity(l).bytes_per_s, fabric.capacity(Fabric::reverse(l)).bytes_per_s);
    }
    const double host = left[static_cast<int>(LinkTier::kHost)];
    double faulted = host / 2;
    if (s.groups >= 2) faulted = std::min(faulted, left[static_cast<int>(LinkTier::kTorAgg)] / 2);
    if (s.tiers == 3 && s.pods >= 2) faulted = std::min(faulted, left[static_cast<int>(LinkTier::kAggCore)] / 2);
    st.injection_with_faults = Bandwidth{host};
    st.bisection_with_faults = Bandwidth{faulted};
  }
  return st;
}

std::string format_summary(const Fabric& fabric) {
  const ClosShape& s = fabric.shape();
  const FabricStats st = fabric_stats(fabric);
  const bool two = s.tiers == 2;
  std::string out;
  out += "fabric: " + std::to_string(s.tiers) + "-tier Clos" + (two ? " (leaf/spine)" : "") + ", " +
         to_string(s.wiring) + " wiring, switch radix " + std::to_string(s.radix) + "\n";
  out += "hosts: " + with_commas(s.gpus) + " GPUs in " + with_commas(s.servers) + " servers (" +
         std::to_string(s.gpus_per_node) + " GPUs, " + std::to_string(s.nics_per_node) +
         " NICs each); " + with_commas(s.nics) + " NICs at " +
         to_string(fabric.tier_spec(LinkTier::kHost).bandwidth) + "\n";
  const std::string group = s.wiring == Wiring::kRailOptimized
                                ? std::to_string(s.servers_per_group) + " servers on " +
                                      std::to_string(s.tors_per_group) + " rail ToRs"
                                : std::to_string(s.servers_per_group) + " servers on 1 ToR";
  out += "groups: " + with_commas(s.groups) + " (" + group + "); pods: " + with_commas(s.pods) +
         (two ? "" : " of at most " + std::to_string(s.max_pods)) + ", each up to " +
         std::to_string(s.groups_per_pod) + " groups = " + std::to_string(s.tors_per_pod) +
         " ToRs and " + std::to_string(s.aggs_per_pod) + (two ? " spines" : " aggs") + "\n";

  out += "switches          count  ports down:up  oversubscription\n";
  const char* sw = "  %-10s %10s  %-13s  %s\n";
  out += row(sw, two ? "leaf" : "tor", with_commas(s.tors),
             std::to_string(s.tor_down) + ":" + std::to_string(s.tor_up),
             short_decimal(static_cast<double>(s.tor_down) / s.tor_up) + ":1");
  if (two) {
    out += row(sw, "spine", with_commas(s.aggs), std::to_string(s.agg_down) + ":0",
               std::to_string(s.tors) + " of " + std::to_string(s.agg_down) + " ports used");
  } else {
    out += row(sw, "agg", with_commas(s.aggs),
               std::to_string(s.agg_down) + ":" + std::to_string(s.agg_up),
               short_decimal(static_cast<double>(s.agg_down) / s.agg_up) + ":1");
    out += row(sw, "core", with_commas(s.cores), std::to_string(s.radix) + ":0",
               std::to_string(s.pods) + " of " + std::to_string(s.radix) + " ports used");
  }
  out += row(sw, "total", with_commas(int64_t{s.tors} + s.aggs + s.cores), "", "");
  if (!two && s.pods == 1) {
    out += "  (one pod built: no path crosses the core tier; its switches and agg_core links are sized for " +
           std::to_string(s.max_pods) + " pods, not a bill of materials for this cluster)\n";
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
  out += "injection bandwidth: " + aggregate_bandwidth(st.injection) +
         (faulted ? " as built; " + aggregate_bandwidth(st.injection_with_faults) + " with the faults" : std::string()) +
         "\n";
  out += "bisection bandwidth: " + aggregate_bandwidth(st.bisection) + " (" +
         short_decimal(100 * st.bisection_ratio, 1) + "% of full bisection, set by the " +
         to_string(st.bisection_tier) + " tier; " + (faulted ? "as built)" : "healthy fabric)") +
         (faulted ? "; with the faults at most " + aggregate_bandwidth(st.bisection_with_faults) +
                        " (each tier's remaining cables, a cable at its slower direction)"
                  : std::string()) +
         "\n";
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
      out += "  " + f.element + ": bandwidth x" + short_decimal(f.bandwidth_factor, 3);
      if (f.extra_latency > Time::zero()) out += ", +" + to_string(f.extra_latency);
      out += " on " + std::to_string(f.link_directions) + (f.link_directions == 1 ? " link direction\n" : " link directions\n");
    }
  }
  return out;
}

}  // namespace clustersim::topo
