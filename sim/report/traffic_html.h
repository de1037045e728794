// SPDX-License-Identifier: Apache-2.0
// report.html of a traffic (network microbenchmark) run: completion against the ideal, per-tier
// load, the most loaded links and, at the flow+dcqcn and packet levels, queue length and DCQCN
// rate over time, all as inline SVG (one self-contained file, no network access).
#pragma once

#include <string>

#include "sim/engine/network_bench.h"

namespace clustersim::report {

// Section ids (the test looks for them): "completion", "tiers", "links", and with congestion
// data "congestion", "queues", "rates".
std::string write_traffic_html(const engine::TrafficResult& result);

}  // namespace clustersim::report
