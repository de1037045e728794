// SPDX-License-Identifier: Apache-2.0
// Whole-graph views of a Fabric: DOT/GraphML/CSV export, connectivity, max-flow between halves.
#pragma once

#include <cstdint>
#include <iosfwd>

#include "sim/core/units.h"
#include "topology/fabric.h"

namespace clustersim::topo {

// Graphviz DOT, one undirected edge per cable. Vertices are numbered by NodeId and carry
// name ("tor:3"), kind and, for GPUs, nic (the NIC the GPU sends through); edges carry name
// ("tor_agg:45"), tier, up_gbps, down_gbps (current capacity per direction, 0 = failed; below
// 1 Gbps in significant digits), up_latency_us, down_latency_us (per direction, faults' extra
// latency included) and latency_us (the up direction's, the only latency before 2026-12-05).
// Linear in the fabric size.
void write_dot(const Fabric& fabric, std::ostream& out);

// GraphML with the same vertex and edge attributes as write_dot. Linear in the fabric size.
void write_graphml(const Fabric& fabric, std::ostream& out);

// One CSV line per link direction: link,tier,from,to,capacity_gbps,latency_us (with a header);
// `link` is the name faults and links.csv use ("host:97/up").
void write_link_list(const Fabric& fabric, std::ostream& out);

// Who can still reach whom over links with both directions alive.
struct Connectivity {
  int components = 0;     // among NICs and switches (a failed switch counts alone)
  int isolated_nics = 0;  // NICs outside the component that holds the most NICs
};
Connectivity check_connectivity(const Fabric& fabric);

// Which half of the servers sends in halves_max_flow.
enum class HalfToHalf : uint8_t { kFirstToLast, kLastToFirst };

// Maximum flow (one direction, current capacities, faults included) from the NICs of the first
// half of the servers to those of the second half (or back). With pods and groups fully
// populated, equals FabricStats::bisection on a healthy fabric. Push-relabel: meant for tests and
// small fabrics (a few thousand GPUs). Needs at least 2 servers.
Bandwidth halves_max_flow(const Fabric& fabric, HalfToHalf direction = HalfToHalf::kFirstToLast);

}  // namespace clustersim::topo
