// SPDX-License-Identifier: Apache-2.0
// Per-link and per-tier load after a flow-level run: what links.csv, the summaries and reports
// show, shared by network microbenchmarks and flow-level training.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "sim/core/units.h"
#include "sim/network/network.h"
#include "topology/fabric.h"

namespace clustersim::engine {

// One link direction.
struct LinkLoad {
  net::LinkIndex id = 0;
  std::string name;  // "tor_agg:45/up"
  std::string tier;  // "nvlink", "host", "tor_agg", "agg_core"
  Bandwidth capacity;
  Bytes bytes;
  double peak_utilisation = 0;
};

// One tier of the fabric.
struct TierLoad {
  std::string tier;
  int64_t links = 0;       // link directions in the tier
  int64_t used_links = 0;  // that carried bytes
  Bytes bytes;
  double mean_peak_utilisation = 0;  // over used links
  double max_peak_utilisation = 0;
};

// The load of link `id`, named as `clustersim topo --list-links` names it.
LinkLoad link_load(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage, net::LinkIndex id);

// Tiers in tier order, leaving out tiers the fabric does not have.
std::vector<TierLoad> tier_loads(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage);

// The `count` most loaded link directions that carried bytes: by peak utilisation (to 1e-6), then
// by the time their bytes take at line rate, then link id (a total order, so reports are
// deterministic).
std::vector<LinkLoad> most_loaded_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                                        int count);

// The `count` network link directions (NIC to ToR and above: no NVLink) that carried the most
// for their speed: by the time their bytes take at line rate (bytes over capacity), then link id.
// Where NVLink links and most fabric links peak at utilisation 1, most_loaded_links names NVLink
// ones and this the fabric's hot spots (since 2026-12-07).
std::vector<LinkLoad> busiest_fabric_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                                           int count);

// Every link direction slower or later than its tier was built (network.faults, and degraded
// NICs' host links), or failed, with its load: a name in `nic_names` (by link) is appended to its
// link's name ("host:3/up (nic:3)"), a failed one gets " (failed)".
std::vector<LinkLoad> degraded_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                                     const std::unordered_map<net::LinkIndex, std::string>& nic_names = {});

// The first 8 of `links` in words, each "NAME CAPACITY Gbps BYTES" (with " peak P%" where
// `with_peak`; a working link below 1 Gbps in three significant digits, so only a failed one reads
// 0), after a space and separated by ", ", and ", ..." where there are more: the summaries'
// degraded lines.
std::string degraded_list(const std::vector<LinkLoad>& links, bool with_peak);

}  // namespace clustersim::engine
