// SPDX-License-Identifier: Apache-2.0
#include "sim/report/link_loads_json.h"

namespace clustersim::report {

Json tier_loads_json(const std::vector<engine::TierLoad>& tiers) {
  Json out = Json::array();
  for (const engine::TierLoad& t : tiers) {
    Json row = Json::object();
    row.set("tier", t.tier);
    row.set("links", t.links);
    row.set("used_links", t.used_links);
    row.set("bytes", t.bytes.n);
    row.set("mean_peak_utilisation", t.mean_peak_utilisation);
    row.set("max_peak_utilisation", t.max_peak_utilisation);
    out.push(row);
  }
  return out;
}

Json link_loads_json(const std::vector<engine::LinkLoad>& links) {
  Json out = Json::array();
  for (const engine::LinkLoad& l : links) {
    Json row = Json::object();
    row.set("link", l.name);
    row.set("tier", l.tier);
    row.set("capacity_gbps", l.capacity.as_gbps());
    row.set("bytes", l.bytes.n);
    row.set("peak_utilisation", l.peak_utilisation);
    out.push(row);
  }
  return out;
}

}  // namespace clustersim::report
