// SPDX-License-Identifier: Apache-2.0
// results.json rows for link load (`tiers[]`, `top_links[]`), the same for network
// microbenchmarks and flow-level training (docs/results.md).
#pragma once

#include <vector>

#include "sim/engine/link_load.h"
#include "sim/report/json_writer.h"

namespace clustersim::report {

// [{tier, links, used_links, bytes, mean_peak_utilisation, max_peak_utilisation}, ...]
Json tier_loads_json(const std::vector<engine::TierLoad>& tiers);

// [{link, tier, capacity_gbps, bytes, peak_utilisation}, ...]
Json link_loads_json(const std::vector<engine::LinkLoad>& links);

}  // namespace clustersim::report
