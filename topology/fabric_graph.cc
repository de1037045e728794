// SPDX-License-Identifier: Apache-2.0
// The Boost.Graph side of the topology layer: exports, connected components, max-flow.
#include "topology/fabric_graph.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/graphml.hpp>
#include <boost/graph/graphviz.hpp>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <boost/property_map/function_property_map.hpp>
#include <cassert>
#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "topology/internal/text.h"

namespace clustersim::topo {
namespace {

// One edge per cable; the edge remembers the cable's up direction.
struct CableEdge {
  LinkId up = 0;
};
using CableGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                         boost::no_property, CableEdge>;

// Every node as a vertex (vertex index = NodeId), every cable as an edge, when `keep(up)` holds.
template <typename Keep>
CableGraph cable_graph(const Fabric& f, Keep keep) {
  CableGraph g(static_cast<size_t>(f.node_count()));
  for (LinkId up = 0; up < f.link_count(); up += 2) {
    if (!keep(up)) continue;
    const LinkEnds e = f.link_ends(up);
    boost::add_edge(static_cast<size_t>(e.from), static_cast<size_t>(e.to), CableEdge{up}, g);
  }
  return g;
}

// Three decimals, or three significant digits below 1 Gbps: a link degraded to 1e-6 of 400 Gbps
// reads 0.0004 (before 2026-12-05 it read 0, which means failed).
std::string gbps_text(Bandwidth bw) { return internal::nonzero_decimal(bw.as_gbps(), 3); }
std::string micros(Time t) { return internal::short_decimal(t.as_us(), 6); }

}  // namespace

void write_dot(const Fabric& f, std::ostream& out) {
  const CableGraph g = cable_graph(f, [](LinkId) { return true; });
  auto vertex_writer = [&f](std::ostream& os, size_t v) {
    const auto n = static_cast<NodeId>(v);
    os << "[label=\"" << f.node_name(n) << "\",kind=\"" << to_string(f.node_kind(n)) << '"';
    if (f.node_kind(n) == NodeKind::kGpu) {
      os << ",nic=\"" << f.node_name(f.node(NodeKind::kNic, f.nic_of_gpu(f.node_index(n)))) << '"';
    }
    os << ']';
  };
  auto edge_writer = [&f, &g](std::ostream& os, const CableGraph::edge_descriptor& e) {
    const LinkId up = g[e].up;
    os << "[name=\"" << f.cable_name(up) << "\",tier=\"" << to_string(f.link_tier(up))
       << "\",up_gbps=" << gbps_text(f.capacity(up))
       << ",down_gbps=" << gbps_text(f.capacity(Fabric::reverse(up)))
       << ",latency_us=" << micros(f.latency(up)) << ",up_latency_us=" << micros(f.latency(up))
       << ",down_latency_us=" << micros(f.latency(Fabric::reverse(up))) << "]";
  };
  boost::write_graphviz(out, g, vertex_writer, edge_writer);
}

void write_graphml(const Fabric& f, std::ostream& out) {
  const CableGraph g = cable_graph(f, [](LinkId) { return true; });
  using Vertex = CableGraph::vertex_descriptor;
  using Edge = CableGraph::edge_descriptor;
  boost::dynamic_properties dp;
  dp.property("name", boost::make_function_property_map<Vertex, std::string>(
                          [&f](Vertex v) { return f.node_name(static_cast<NodeId>(v)); }));
  dp.property("kind", boost::make_function_property_map<Vertex, std::string>([&f](Vertex v) {
                return std::string(to_string(f.node_kind(static_cast<NodeId>(v))));
              }));
  dp.property("nic", boost::make_function_property_map<Vertex, std::string>([&f](Vertex v) {
                const auto n = static_cast<NodeId>(v);
                if (f.node_kind(n) != NodeKind::kGpu) return std::string();
                return f.node_name(f.node(NodeKind::kNic, f.nic_of_gpu(f.node_index(n))));
              }));
  dp.property("name", boost::make_function_property_map<Edge, std::string>(
                          [&f, &g](Edge e) { return f.cable_name(g[e].up); }));
  dp.property("tier", boost::make_function_property_map<Edge, std::string>([&f, &g](Edge e) {
                return std::string(to_string(f.link_tier(g[e].up)));
              }));
  dp.property("up_gbps", boost::make_function_property_map<Edge, double>(
                             [&f, &g](Edge e) { return f.capacity(g[e].up).as_gbps(); }));
  dp.property("down_gbps", boost::make_function_property_map<Edge, double>([&f, &g](Edge e) {
                return f.capacity(Fabric::reverse(g[e].up)).as_gbps();
              }));
  dp.property("latency_us", boost::make_function_property_map<Edge, double>(
                                [&f, &g](Edge e) { return f.latency(g[e].up).as_us(); }));
  dp.property("up_latency_us", boost::make_function_property_map<Edge, double>(
                                   [&f, &g](Edge e) { return f.latency(g[e].up).as_us(); }));
  dp.property("down_latency_us", boost::make_function_property_map<Edge, double>([&f, &g](Edge e) {
                return f.latency(Fabric::reverse(g[e].up)).as_us();
              }));
  boost::write_graphml(out, g, dp, true);
}

void write_link_list(const Fabric& f, std::ostream& out) {
  out << "link,tier,from,to,capacity_gbps,latency_us\n";
  for (LinkId l = 0; l < f.link_count(); ++l) {
    const LinkEnds e = f.link_ends(l);
    out << f.link_name(l) << ',' << to_string(f.link_tier(l)) << ',' << f.node_name(e.from) << ','
        << f.node_name(e.to) << ',' << gbps_text(f.capacity(l)) << ',' << micros(f.latency(l))
        << '\n';
  }
}

Connectivity check_connectivity(const Fabric& f) {
  const CableGraph g = cable_graph(
      f, [&f](LinkId up) { return !f.is_failed(up) && !f.is_failed(Fabric::reverse(up)); });
  std::vector<int> component(boost::num_vertices(g));
  Connectivity c;
  const int all = boost::connected_components(g, component.data());
  // GPUs and NVSwitches have no link to the NICs (no PCIe tier); count network nodes only.
  std::vector<char> seen(static_cast<size_t>(all), 0);
  for (NodeId v = f.node(NodeKind::kNic, 0); v < f.node_count(); ++v) {
    if (!seen[component[v]]) {
      seen[component[v]] = 1;
      ++c.components;
    }
  }
  std::vector<int> nics_in(static_cast<size_t>(all), 0);
  for (NicId n = 0; n < f.nics(); ++n) ++nics_in[component[f.node(NodeKind::kNic, n)]];
  const int largest = nics_in.empty() ? 0 : *std::max_element(nics_in.begin(), nics_in.end());
  c.isolated_nics = f.nics() - largest;
  return c;
}

Bandwidth halves_max_flow(const Fabric& f, HalfToHalf direction) {
  assert(f.servers() >= 2 && "needs two halves");
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<
          boost::edge_capacity_t, int64_t,
          boost::property<boost::edge_residual_capacity_t, int64_t,
                          boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto source = static_cast<size_t>(f.node_count());
  const size_t sink = source + 1;
  FlowGraph g(sink + 1);
  auto capacity = boost::get(boost::edge_capacity, g);
  auto reverse = boost::get(boost::edge_reverse, g);
  // Each directed arc gets a zero-capacity twin, as push-relabel requires.
  auto arc = [&](size_t u, size_t v, int64_t cap) {
    const auto e = boost::add_edge(u, v, g).first;
    const auto r = boost::add_edge(v, u, g).first;
    capacity[e] = cap;
    capacity[r] = 0;
    reverse[e] = r;
    reverse[r] = e;
  };
  // Integer Mbps: push-relabel's flow checks are exact only with integer capacities.
  for (LinkId l = 2 * static_cast<LinkId>(f.cable_count(LinkTier::kNvlink)); l < f.link_count();
       ++l) {
    const LinkEnds e = f.link_ends(l);
    arc(static_cast<size_t>(e.from), static_cast<size_t>(e.to),
        std::llround(f.capacity(l).as_gbps() * 1e3));
  }
  // A NIC can never send or receive more than its host link carries, so that is the arc's
  // capacity (and keeps the preflow's sums far from overflow).
  const int half = f.servers() / 2;
  for (NicId n = 0; n < f.nics(); ++n) {
    const int server = f.server_of_nic(n);
    const auto v = static_cast<size_t>(f.node(NodeKind::kNic, n));
    const int64_t nic_mbps = std::llround(f.tier_spec(LinkTier::kHost).bandwidth.as_gbps() * 1e3);
    const bool first = server < half, last = server >= f.servers() - half;
    const bool sends = direction == HalfToHalf::kFirstToLast ? first : last;
    const bool receives = direction == HalfToHalf::kFirstToLast ? last : first;
    if (sends) arc(source, v, nic_mbps);
    if (receives) arc(v, sink, nic_mbps);
  }
  const int64_t flow_mbps = boost::push_relabel_max_flow(g, source, sink);
  return gbps(static_cast<double>(flow_mbps) * 1e-3);
}

}  // namespace clustersim::topo
