// SPDX-License-Identifier: Apache-2.0
// Traffic patterns, the microbenchmark run on SimGrid's clock, and its reports.
#include "sim/engine/network_bench.h"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <cstdio>
#include <cassert>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <limits>
#include <ostream>
#include <random>
#include <sstream>

#include "sim/collectives/collective_cost.h"
#include "sim/collectives/collective_flows.h"
#include "sim/core/error.h"
#include "sim/engine/scenario_nvlink.h"
#include "sim/engine/simgrid_clock.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/flow/fluid_network.h"
#include "sim/network/make_network.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim::engine {

namespace {

[[noreturn]] void bad_traffic(const std::string& key, const std::string& message) {
  throw BadInput(InputError{"", 0, "traffic." + key, message});
}

// Uniform index in [0, n) from a 64-bit generator, by rejection: the same sequence on every
// standard library (std::uniform_int_distribution is implementation-defined).
uint64_t uniform_below(std::mt19937_64& rng, uint64_t n) {
  const uint64_t limit = std::numeric_limits<uint64_t>::max() - std::numeric_limits<uint64_t>::max() % n;
  uint64_t x;
  do {
    x = rng();
  } while (x >= limit);
  return x % n;
}

}  // namespace

std::vector<net::GpuId> random_derangement(int n, uint64_t seed) {
  assert(n >= 2 && "a derangement needs 2 or more elements");
  std::vector<net::GpuId> perm(static_cast<size_t>(std::max(n, 0)));
  if (n < 2) return perm;  // none exists; make_traffic refuses fewer than 2 GPUs before
  std::mt19937_64 rng(seed);
  const auto has_fixed_point = [&perm] {
    for (size_t i = 0; i < perm.size(); ++i) {
      if (perm[i] == static_cast<net::GpuId>(i)) return true;
    }
    return false;
  };
  do {
    for (int i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
    for (int i = n - 1; i > 0; --i) {  // Fisher-Yates
      std::swap(perm[static_cast<size_t>(i)], perm[uniform_below(rng, static_cast<uint64_t>(i) + 1)]);
    }
  } while (has_fixed_point());
  return perm;
}

namespace {

// A sample time in us to the nanosecond (samples are at least a 10 ns fluid step apart): the
// stream's default 6 digits would print a training step's 6574080.5 us as 6.57408e+06 and merge
// neighbouring samples; more would print the fluid steps' picosecond rounding (2512.500001).
struct TimeUs {
  Time t;
};
std::ostream& operator<<(std::ostream& out, TimeUs v) {
  const std::streamsize precision = out.precision(15);
  out << static_cast<double>((v.t.as_ps() + 500) / 1000) / 1e3;
  out.precision(precision);
  return out;
}


// What a set of transfers puts on each link over `routes`' paths, for the bounds: the bytes on
// every link, the bytes through each endpoint (NIC or NVLink) link, each link's shortest path
// latency, and the longest time a sub-flow alone would take on a non-blocking fabric.
struct RouteLoads {
  std::vector<double> link_bytes;    // by link
  std::vector<Bytes> endpoint_bytes;  // by link: first and last links of the paths
  std::vector<double> link_latency;  // s, by link: the shortest latency of the paths crossing it
  double alone_s = 0;
};

RouteLoads route_loads(const net::RouteSource& routes, const std::vector<TrafficTransfer>& transfers) {
  RouteLoads out;
  const auto links = static_cast<size_t>(routes.link_count());
  out.link_bytes.assign(links, 0.0);
  out.endpoint_bytes.assign(links, Bytes{});
  // Per link, the shortest path latency of the traffic crossing it: its last byte still travels at
  // least that after the link has carried every byte, so bytes / capacity + that bounds the run
  // (before 2026-12-04 the shortest latency of any path in the run: an NVLink pair's 2 us under a
  // fabric link whose flows each cross 8.5 us put the analytical level 28% under that bound).
  out.link_latency.assign(links, std::numeric_limits<double>::infinity());
  std::vector<net::Path> paths;
  for (const TrafficTransfer& t : transfers) {
    if (t.src == t.dst) continue;
    routes.paths(t.src, t.dst, t.connection, paths);
    const int parts = static_cast<int>(paths.size());
    for (int k = 0; k < parts; ++k) {
      const net::Path& p = paths[k];
      if (p.links.empty()) continue;
      const Bytes share = net::share_of(t.bytes, parts, k);
      // A sub-flow alone on a non-blocking fabric: its rate is at most capacity / share on its
      // endpoints' links (the first and the last of its path). The fabric's own links are left
      // out, as oversubscription is, so the bound does not depend on the routing: before
      // 2026-12-06 a path's slower switch links entered it, and switch links at a quarter of the
      // NICs' speed gave D-mod-k's shift 1.00x (its single paths bound the ideal too) where
      // spraying the same fabric gave 3.99x and a 3:1 port taper 2.99x.
      double bottleneck = std::numeric_limits<double>::infinity();
      for (const size_t i : {size_t{0}, p.links.size() - 1}) {
        bottleneck = std::min(bottleneck, routes.capacity(p.links[i]).bytes_per_s / p.share(i));
      }
      for (const net::LinkIndex l : p.links) out.link_latency[l] = std::min(out.link_latency[l], p.latency.as_s());
      if (bottleneck > 0) out.alone_s = std::max(out.alone_s, p.latency.as_s() + share.as_double() / bottleneck);
      out.endpoint_bytes[p.links.front()] += share;
      out.endpoint_bytes[p.links.back()] += share;
      for (size_t i = 0; i < p.links.size(); ++i) out.link_bytes[p.links[i]] += share.as_double() * p.share(i);
    }
  }
  return out;
}

// The bound no schedule beats on a non-blocking fabric: each sub-flow alone, and each endpoint
// link's bytes over its capacity plus its shortest path latency.
Time ideal_time(const net::RouteSource& routes, const RouteLoads& loads) {
  double endpoint_s = 0;
  for (net::LinkIndex l = 0; l < routes.link_count(); ++l) {
    const double capacity = routes.capacity(l).bytes_per_s;
    if (loads.endpoint_bytes[l].n > 0 && capacity > 0) {
      endpoint_s = std::max(endpoint_s, loads.endpoint_bytes[l].as_double() / capacity + loads.link_latency[l]);
    }
  }
  return Time::s(std::max(loads.alone_s, endpoint_s));
}

}  // namespace

std::vector<TrafficTransfer> make_traffic(const ClusterConfig& cluster, const TrafficConfig& traffic) {
  const int gpus = cluster.gpus;
  const int per_node = cluster.gpus_per_node;
  const int nodes = per_node > 0 ? gpus / per_node : 0;
  const Bytes bytes = traffic.bytes_per_pair;
  if (gpus < 2) throw BadInput(InputError{"", 0, "cluster.gpus", "a traffic pattern needs 2 or more GPUs"});
  if (bytes.n < 0) bad_traffic("bytes_per_pair", "must not be negative");
  std::vector<TrafficTransfer> out;
  switch (traffic.pattern) {
    case TrafficPattern::kShift: {
      const int shift = traffic.shift == 0 ? per_node : traffic.shift;
      if (shift < 0 || shift % gpus == 0) {
        bad_traffic("shift", "must be positive and not a multiple of cluster.gpus (" + std::to_string(gpus) + ")" +
                                 (traffic.shift == 0 ? "; unset, it is cluster.gpus_per_node (" + std::to_string(per_node) +
                                                           "): set traffic.shift"
                                                     : std::string()));
      }
      out.reserve(static_cast<size_t>(gpus));
      for (int i = 0; i < gpus; ++i) out.push_back({i, static_cast<net::GpuId>((i + int64_t{shift}) % gpus), bytes});
      break;
    }
    case TrafficPattern::kRandomPermutation: {
      const std::vector<net::GpuId> perm = random_derangement(gpus, traffic.seed);
      out.reserve(static_cast<size_t>(gpus));
      for (int i = 0; i < gpus; ++i) out.push_back({i, perm[static_cast<size_t>(i)], bytes});
      break;
    }
    case TrafficPattern::kRingAllReduce: {
      if (nodes < 2) bad_traffic("pattern", "ring_allreduce across nodes needs 2 or more nodes");
      // NCCL's ring over every GPU, as the training level builds it (coll::collective_flows): each
      // node's NVLink ring carries 2(n-1)/n of the buffer, n the ranks, and each rail's edge to the
      // next node 1/k of that, k GPUs per node (one channel per rail). Before 2026-12-05 every rail
      // carried the whole 2(N-1)/N, N the nodes: 8x the bytes per NIC on 8-GPU nodes, a bus
      // bandwidth of 94 GB/s on 2 H100 nodes where nccl-tests shows 330-400.
      std::vector<int32_t> ring(static_cast<size_t>(gpus));
      for (int i = 0; i < gpus; ++i) ring[static_cast<size_t>(i)] = i;
      std::vector<coll::FlowSpec> flows;
      coll::collective_flows(coll::CollectiveOp::kAllReduce, coll::Algorithm::kRing, bytes, ring, per_node, flows);
      out.reserve(flows.size());
      for (const coll::FlowSpec& f : flows) out.push_back({f.src, f.dst, f.bytes});
      break;
    }
    case TrafficPattern::kAllToAll:
      // In NCCL's order: round k sends from every GPU i to i + k (mod N), so no two senders start
      // on one receiver. Until 2026-12-07 in (i, j) order, and at the packet level, whose NICs
      // break ties by flow, every sender began with GPU 0, then 1, ...: 8-11% over the flow level
      // at 4 KiB a pair (QA).
      out.reserve(static_cast<size_t>(gpus) * (gpus - 1));
      for (int k = 1; k < gpus; ++k) {
        for (int i = 0; i < gpus; ++i) out.push_back({i, (i + k) % gpus, bytes});
      }
      break;
    case TrafficPattern::kIncast: {
      const int senders = traffic.incast_senders;
      if (senders < 1 || senders > gpus - 1) {
        bad_traffic("incast_senders", "must be between 1 and cluster.gpus - 1 (" + std::to_string(gpus - 1) + ")");
      }
      const int span = std::max(nodes, 1);
      for (int k = 1; k <= senders; ++k) {
        // Local rank 0 of nodes 1, 2, ..., then the next local rank around again.
        const int node = k % span;
        const int local = k / span;
        out.push_back({node * per_node + local, 0, bytes});
      }
      break;
    }
  }
  return out;
}

TrafficResult run_traffic(const ScenarioConfig& cfg, const TrafficOptions& options) {
  if (!cfg.traffic) throw BadInput(InputError{cfg.file, 0, "traffic", "the scenario has no traffic section"});
  const TrafficConfig& traffic = *cfg.traffic;
  const std::vector<TrafficTransfer> pattern = make_traffic(cfg.cluster, traffic);
  // NCCL's all-to-all moves the pattern's bytes through PXN (network.pxn): its sends to another
  // rail cross NVLink to the rail's GPU first. The pattern's transfers and bytes are what is
  // counted and reported; the relays are only load.
  std::vector<TrafficTransfer> relayed;
  if (traffic.pattern == TrafficPattern::kAllToAll && cfg.network.pxn) {
    const int per_node = cfg.cluster.gpus_per_node;
    std::vector<coll::FlowSpec> flows;
    flows.reserve(pattern.size());
    for (const TrafficTransfer& t : pattern) flows.push_back({t.src, t.dst, t.bytes, t.src / per_node != t.dst / per_node});
    coll::route_through_pxn(flows, per_node, cfg.cluster.nics_per_node);
    relayed.reserve(flows.size());
    for (const coll::FlowSpec& f : flows) relayed.push_back({f.src, f.dst, f.bytes, f.connection});
  }
  const std::vector<TrafficTransfer>& transfers = relayed.empty() ? pattern : relayed;

  // NVLink at the GPU profile's speed: before 2026-12-05 at H100's 450 GB/s whatever the GPU (a
  // 64 MiB NVLink transfer took 151.1 us on H800-SXM, 200 GB/s, instead of 337.5).
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, cfg.network, cfg.file, scenario_nvlink_bandwidth(cfg));
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));

  TrafficResult r;
  r.scenario = cfg.name;
  r.pattern = to_string(traffic.pattern);
  r.fidelity = to_string(cfg.network.fidelity);
  // The solver that actually runs: network.solver picks the flow level's; the other levels have
  // their own (none at the analytical level).
  switch (cfg.network.fidelity) {
    case Fidelity::kFlow: r.solver = to_string(cfg.network.solver); break;
    case Fidelity::kFlowDcqcn: r.solver = "fluid_dcqcn"; break;
    case Fidelity::kPacket: r.solver = "packet"; break;
    case Fidelity::kAnalytical: r.solver = "none"; break;
  }
  r.routing = to_string(cfg.network.routing);
  r.gpus = cfg.cluster.gpus;
  // Spraying splits every flow over all paths: queue pairs do not apply, one flow a transfer (it
  // reported the scenario's value beside flows = transfers until 2026-12-07; review).
  r.qps_per_connection = cfg.network.routing == Routing::kSpray ? 1 : cfg.network.qps_per_connection;
  r.transfers = static_cast<int64_t>(pattern.size());
  for (const TrafficTransfer& t : pattern) r.total_bytes += t.bytes;

  // The bound, from the same paths the run will use; with network.faults, from the healthy
  // fabric's, so that a degraded NIC or endpoint link shows in the slowdown as a degraded switch
  // link does (until 2026-12-06 the faulted endpoints' capacities and latencies were the bound's:
  // a NIC at 1e-6 of its rate read 1.00x).
  const RouteLoads loads = route_loads(routes, transfers);
  if (cfg.network.faults.empty()) {
    r.ideal_time = ideal_time(routes, loads);
  } else {
    NetworkConfig healthy_network = cfg.network;
    healthy_network.faults.clear();
    const topo::Fabric healthy = topo::build_fabric(cfg.cluster, healthy_network, cfg.file, scenario_nvlink_bandwidth(cfg));
    const net::FabricRoutes healthy_routes(healthy, topo::routing_options(healthy_network));
    r.ideal_time = ideal_time(healthy_routes, route_loads(healthy_routes, transfers));
  }
  const std::vector<double>& link_bytes = loads.link_bytes;
  const std::vector<double>& link_latency = loads.link_latency;

  // The run.
  simgrid::s4u::Engine* engine = simgrid_engine();
  SimGridClock clock;
  const auto wall_start = std::chrono::steady_clock::now();
  const Time start = clock.now();
  Time last = start;
  int64_t completed = 0;
  double time_sum = 0, rate_sum = 0;  // s, bytes/s: over the completed transfers
  {
    std::unique_ptr<net::Network> network = net::make_network(cfg.network, routes, clock, options.lmm);
    for (const TrafficTransfer& t : transfers) {
      const auto done = [&last, &completed, &time_sum, &rate_sum, start, bytes = t.bytes](Time when) {
        last = max(last, when);
        ++completed;
        const double took = (when - start).as_s();
        time_sum += took;
        if (took > 0) rate_sum += bytes.as_double() / took;
      };
      network->send(t.src, t.dst, t.bytes, done, t.connection);
    }
    ensure_simgrid_platform();
    engine->run();
    r.flows = network->flow_count();
    if (const auto* fluid = dynamic_cast<const net::FluidNetwork*>(network.get())) {
      r.solver_events = fluid->solves();
    }
    if (const auto* cc = dynamic_cast<const net::CongestionObservable*>(network.get())) {
      const net::CongestionTrace& trace = cc->congestion();
      r.has_congestion = true;
      r.congestion = trace.counters;
      r.queue_samples = trace.queues;
      r.rate_samples = trace.rates;
      r.link_congestion = trace.links;
      r.solver_events = trace.counters.events;
      for (size_t l = 0; l < trace.links.size(); ++l) {
        const double capacity = fabric.capacity(static_cast<net::LinkIndex>(l)).bytes_per_s;
        if (capacity > 0 && trace.links[l].max_queue_bytes > 0) {
          r.max_queue_delay = max(r.max_queue_delay, Time::s(trace.links[l].max_queue_bytes / capacity));
        }
      }
    }
    const std::vector<net::LinkUsage> usage = network->link_usage();
    r.links.reserve(usage.size());
    for (size_t l = 0; l < usage.size(); ++l) r.links.push_back(link_load(fabric, usage, static_cast<net::LinkIndex>(l)));
    r.tiers = tier_loads(fabric, usage);
    r.top_links = most_loaded_links(fabric, usage, options.top_links);
    r.degraded_links = degraded_links(fabric, usage);
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  r.incomplete_transfers = static_cast<int64_t>(transfers.size()) - completed;
  if (completed > 0) {
    r.mean_transfer_time = Time::s(time_sum / static_cast<double>(completed));
    r.mean_transfer_rate = Bandwidth{rate_sum / static_cast<double>(completed)};
  }
  r.completion_time = last - start;
  if (cfg.network.fidelity == Fidelity::kAnalytical) {
    // The analytical level times each transfer alone; traffic started together also queues on
    // its most loaded link: bytes / capacity there (the fluid completion of flows that share it
    // from start to end, as the training level's static contention takes it), whichever is longer.
    double static_s = 0;
    for (net::LinkIndex l = 0; l < routes.link_count(); ++l) {
      const double capacity = routes.capacity(l).bytes_per_s;
      if (link_bytes[l] > 0 && capacity > 0) static_s = std::max(static_s, link_bytes[l] / capacity + link_latency[l]);
    }
    r.completion_time = max(r.completion_time, Time::s(static_s));
  }
  if (traffic.pattern == TrafficPattern::kRingAllReduce) {
    // The flows move the ring's bytes; its dependent steps also pay their latency, as the training
    // level charges them (NCCL's tuning model: 2(nodes - 1) network steps and each node's NVLink
    // steps at the GPU profile's collective latencies), at the end, as NCCL's model adds it to the
    // bandwidth term. Until 2026-12-06 none: a 1 MiB ring over 128 nodes took 10.7 us, one hop.
    coll::GroupLinks g;
    g.ranks = cfg.cluster.gpus;
    g.ranks_per_node = cfg.cluster.gpus_per_node;
    const calib::HardwareProfile hw = scenario_profile(cfg);
    g.intra_alpha = hw.eff.nvlink_collective_latency;
    g.inter_alpha = hw.eff.network_collective_latency;
    r.step_latency = coll::ring_latency(coll::CollectiveOp::kAllReduce, g);
    r.completion_time += r.step_latency;
    r.ideal_time += r.step_latency;
  }
  const double completion_s = r.completion_time.as_s();
  const double ideal_s = r.ideal_time.as_s();
  r.slowdown = ideal_s > 0 ? completion_s / ideal_s : 1.0;
  r.achieved_bandwidth = {completion_s > 0 ? r.total_bytes.as_double() / completion_s : 0.0};
  r.ideal_bandwidth = {ideal_s > 0 ? r.total_bytes.as_double() / ideal_s : 0.0};
  if (traffic.pattern == TrafficPattern::kRingAllReduce && completion_s > 0) {
    // nccl-tests' bus bandwidth (doc/PERFORMANCE.md): 2(n-1)/n x the buffer over the time.
    const double n = r.gpus;
    r.bus_bandwidth = Bandwidth{2.0 * (n - 1) / n * traffic.bytes_per_pair.as_double() / completion_s};
  }

  return r;
}

void write_links_csv(const TrafficResult& result, std::ostream& out) {
  out << "link,tier,direction,capacity_gbps,bytes,peak_utilisation\n";
  for (const LinkLoad& link : result.links) {
    const bool up = topo::Fabric::link_direction(link.id) == topo::Direction::kUp;
    // The cable name without the "/up" or "/down" suffix.
    const std::string cable = link.name.substr(0, link.name.rfind('/'));
    out << cable << ',' << link.tier << ',' << (up ? "up" : "down") << ','
        << link.capacity.as_gbps() << ',' << link.bytes.n << ',' << link.peak_utilisation << '\n';
  }
}

void write_queues_csv(const TrafficResult& result, std::ostream& out) {
  write_queues_csv(
      result.queue_samples,
      [&result](net::LinkIndex l) -> const std::string& {
        static const std::string unknown;
        return static_cast<size_t>(l) < result.links.size() ? result.links[l].name : unknown;
      },
      out);
}

void write_rates_csv(const TrafficResult& result, std::ostream& out) { write_rates_csv(result.rate_samples, out); }

void write_queues_csv(const std::vector<net::QueueSample>& samples,
                      const std::function<const std::string&(net::LinkIndex)>& link_name, std::ostream& out) {
  out << "time_us,link,bytes\n";
  for (const net::QueueSample& q : samples) out << TimeUs{q.t} << ',' << link_name(q.link) << ',' << q.bytes << '\n';
}

void write_rates_csv(const std::vector<net::RateSample>& samples, std::ostream& out) {
  out << "time_us,flow,src,dst,rate_gbps,target_gbps\n";
  for (const net::RateSample& s : samples) {
    out << TimeUs{s.t} << ',' << s.flow << ',' << s.src << ',' << s.dst << ',' << s.rate * 8e-9 << ','
        << s.target * 8e-9 << '\n';
  }
}

std::string format_traffic_report(const TrafficResult& r) {
  std::ostringstream o;
  o << std::fixed;
  o << "traffic " << r.pattern << " on " << r.gpus << " GPUs: " << r.transfers << " transfers, "
    << r.flows << " flows (" << r.qps_per_connection << " QP/connection), routing " << r.routing
    << ", fidelity " << r.fidelity;
  if (r.fidelity == std::string("flow")) o << " (" << r.solver << " solver)";
  o << "\n";
  o << "  completion  " << to_string(r.completion_time) << "   ideal " << to_string(r.ideal_time)
    << std::setprecision(2) << "   slowdown " << r.slowdown << "x\n";
  o << "  bandwidth   " << to_string(r.achieved_bandwidth) << " achieved of "
    << to_string(r.ideal_bandwidth) << " ideal (" << std::setprecision(1)
    << (r.slowdown > 0 ? 100.0 / r.slowdown : 0.0) << "%), " << to_string(r.total_bytes)
    << " moved (every transfer's bytes, over NVLink inside a node too)\n";
  // The typical transfer beside the last one (the aggregate is set by the worst collision).
  o << "  transfers   mean " << to_string(r.mean_transfer_time) << " each, mean rate " << to_string(r.mean_transfer_rate)
    << " (a transfer's bytes over its time; the aggregate above is set by the last to end)\n";
  if (r.bus_bandwidth) {
    o << "  bus bw      " << std::setprecision(1) << r.bus_bandwidth->bytes_per_s * 1e-9
      << " GB/s per GPU (nccl-tests busbw: 2(n-1)/n x buffer / time; the time includes the ring's step latency, "
      << to_string(r.step_latency) << ")\n";
  }
  if (r.has_congestion) {
    const net::CongestionCounters& c = r.congestion;
    o << "  congestion  " << c.ecn_marks << " ECN marks, " << c.cnps << " CNPs, " << c.cuts << " rate cuts, "
      << c.pauses << " PFC pauses, " << c.drops << " drops, max queueing delay " << to_string(r.max_queue_delay)
      << "\n";
  }
  if (r.incomplete_transfers > 0) {
    o << "  WARNING: " << r.incomplete_transfers << " transfers never completed (no capacity on their path)\n";
  }
  // The analytical level runs each transfer at its alone rate: its utilisation is offered load
  // (above 1 where the flow level would share), not what the links carried.
  const bool offered = r.fidelity == std::string(to_string(Fidelity::kAnalytical));
  // Link directions, as results.json's tiers[].links counts them (clustersim topo counts cables);
  // bytes are summed over both directions, so each byte between two nodes counts on its way up and down.
  o << "  per tier      link dirs    used        bytes   peak util (mean / max)" << (offered ? ", offered load" : "")
    << " (directions; bytes summed over them)\n";
  for (const TierLoad& s : r.tiers) {
    o << "    " << std::left << std::setw(10) << s.tier << std::right << std::setw(11) << s.links
      << std::setw(8) << s.used_links << std::setw(13) << to_string(s.bytes) << std::setprecision(2)
      << std::setw(10) << s.mean_peak_utilisation << " / " << s.max_peak_utilisation << "\n";
  }
  if (!r.top_links.empty()) {
    o << "  most loaded links (peak utilisation" << (offered ? " offered" : "") << ", bytes)\n";
    for (const LinkLoad& link : r.top_links) {
      o << "    " << std::left << std::setw(24) << link.name << std::right << std::setprecision(2)
        << std::setw(6) << link.peak_utilisation << "  " << to_string(link.bytes) << "\n";
    }
  }
  if (!r.degraded_links.empty()) {
    // The faults as applied, with what crossed them (until 2026-12-06 a traffic run reported its
    // faults nowhere but links.csv, and ECMP rehashing around a failed link could read as a gain).
    // Failed and degraded apart, as clustersim topo counts them (until 2026-12-07 all read "degraded").
    const auto failed = std::count_if(r.degraded_links.begin(), r.degraded_links.end(),
                                      [](const LinkLoad& l) { return l.capacity.bytes_per_s <= 0; });
    o << "  faulted     " << r.degraded_links.size() << " link direction" << (r.degraded_links.size() == 1 ? "" : "s")
      << " (" << failed << " failed, " << r.degraded_links.size() - failed
      << " degraded; network.faults; degraded_links in results.json):" << degraded_list(r.degraded_links, false)
      << "\n";
  }
  return o.str();
}

}  // namespace clustersim::engine
