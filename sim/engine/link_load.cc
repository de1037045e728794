// SPDX-License-Identifier: Apache-2.0
#include "sim/engine/link_load.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace clustersim::engine {

LinkLoad link_load(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage, net::LinkIndex id) {
  return {id, fabric.link_name(id), topo::to_string(fabric.link_tier(id)), fabric.capacity(id), usage[id].bytes,
          usage[id].peak_utilisation};
}

std::vector<TierLoad> tier_loads(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage) {
  std::vector<TierLoad> tiers(topo::kLinkTierCount);
  std::vector<double> sum_peak(topo::kLinkTierCount, 0.0);
  for (size_t l = 0; l < usage.size(); ++l) {
    const int tier = static_cast<int>(fabric.link_tier(static_cast<net::LinkIndex>(l)));
    TierLoad& s = tiers[tier];
    ++s.links;
    if (usage[l].bytes.n == 0) continue;
    ++s.used_links;
    s.bytes += usage[l].bytes;
    sum_peak[tier] += usage[l].peak_utilisation;
    s.max_peak_utilisation = std::max(s.max_peak_utilisation, usage[l].peak_utilisation);
  }
  std::vector<TierLoad> present;
  for (int t = 0; t < topo::kLinkTierCount; ++t) {
    TierLoad& s = tiers[t];
    if (s.links == 0) continue;
    s.tier = topo::to_string(static_cast<topo::LinkTier>(t));
    if (s.used_links > 0) s.mean_peak_utilisation = sum_peak[t] / static_cast<double>(s.used_links);
    present.push_back(s);
  }
  return present;
}

namespace {

// The `count` link directions that carried bytes and pass `keep`, first by `before` (a strict
// order; ties left to link id, so reports are deterministic), with their loads.
template <typename Keep, typename Before>
std::vector<LinkLoad> top_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage, int count,
                                Keep keep, Before before) {
  std::vector<net::LinkIndex> used;
  for (size_t l = 0; l < usage.size(); ++l) {
    const auto id = static_cast<net::LinkIndex>(l);
    if (usage[l].bytes.n > 0 && keep(id)) used.push_back(id);
  }
  const size_t top = std::min(used.size(), static_cast<size_t>(std::max(0, count)));
  std::partial_sort(used.begin(), used.begin() + static_cast<std::ptrdiff_t>(top), used.end(),
                    [&](net::LinkIndex a, net::LinkIndex b) { return before(a, b) || (!before(b, a) && a < b); });
  std::vector<LinkLoad> out;
  for (size_t i = 0; i < top; ++i) out.push_back(link_load(fabric, usage, used[i]));
  return out;
}

}  // namespace

std::vector<LinkLoad> most_loaded_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                                        int count) {
  // Under max-min sharing most used links peak at a utilisation of 1 give or take floating-point
  // noise, so the raw double ranked them at random (2026-12-06 review: of a 1,024-GPU random
  // permutation's links, 933 peaked at about 1 and the four that carried 176 MiB, the ones that
  // set the completion time, were not listed). Utilisation counts to 1e-6; between equals, the
  // link busy longest at line rate (bytes over capacity) comes first.
  const auto level = [&](net::LinkIndex l) { return std::llround(usage[l].peak_utilisation * 1e6); };
  const auto busy_s = [&](net::LinkIndex l) { return usage[l].bytes.as_double() / fabric.capacity(l).bytes_per_s; };
  return top_links(fabric, usage, count, [](net::LinkIndex) { return true; }, [&](net::LinkIndex a, net::LinkIndex b) {
    return level(a) != level(b) ? level(a) > level(b) : busy_s(a) > busy_s(b);
  });
}

std::vector<LinkLoad> busiest_fabric_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                                           int count) {
  const auto busy_s = [&](net::LinkIndex l) { return usage[l].bytes.as_double() / fabric.capacity(l).bytes_per_s; };
  return top_links(
      fabric, usage, count, [&](net::LinkIndex l) { return fabric.link_tier(l) != topo::LinkTier::kNvlink; },
      [&](net::LinkIndex a, net::LinkIndex b) { return busy_s(a) > busy_s(b); });
}

std::vector<LinkLoad> degraded_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                                     const std::unordered_map<net::LinkIndex, std::string>& nic_names) {
  std::vector<LinkLoad> out;
  for (topo::LinkId l = 0; l < fabric.link_count(); ++l) {
    const topo::LinkSpec& built = fabric.tier_spec(fabric.link_tier(l));
    // Against the link as built (a GPU's own NVLink speed where it has one), not its tier's.
    if (fabric.capacity(l).bytes_per_s >= fabric.built_capacity(l).bytes_per_s && fabric.latency(l) <= built.latency) {
      continue;
    }
    LinkLoad load = link_load(fabric, usage, l);
    const auto nic = nic_names.find(l);
    if (nic != nic_names.end()) {
      load.name += " (" + nic->second + ")";
    } else if (fabric.is_failed(l)) {
      load.name += " (failed)";
    }
    out.push_back(load);
  }
  return out;
}

std::string degraded_list(const std::vector<LinkLoad>& links, bool with_peak) {
  std::string out;
  char buf[64];
  for (size_t i = 0; i < links.size() && i < 8; ++i) {
    const LinkLoad& l = links[i];
    std::snprintf(buf, sizeof buf, l.capacity.as_gbps() >= 1 ? "%.0f" : "%.3g", l.capacity.as_gbps());
    out += (i ? ", " : " ") + l.name + " " + buf + " Gbps " + to_string(l.bytes);
    if (with_peak) {
      std::snprintf(buf, sizeof buf, " peak %.0f%%", 100 * l.peak_utilisation);
      out += buf;
    }
  }
  if (links.size() > 8) out += ", ...";
  return out;
}

}  // namespace clustersim::engine
