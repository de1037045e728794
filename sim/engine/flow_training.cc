// SPDX-License-Identifier: Apache-2.0
// simulate_training: fabric + network + graph on a clock; the critical rank group's breakdown.
#include "sim/engine/flow_training.h"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/event_queue_clock.h"
#include "sim/engine/graph_executor.h"
#include "sim/engine/simgrid_clock.h"
#include "sim/engine/straggler_model.h"
#include "sim/network/dcqcn/fluid_dcqcn_network.h"
#include "sim/network/fabric_routes.h"
#include "sim/network/make_network.h"
#include "topology/fabric.h"
#include "topology/fabric_router.h"

namespace clustersim::engine {

using work::OpRole;

const char* breakdown_kind(OpRole role) {
  switch (role) {
    case OpRole::kForward:
    case OpRole::kBackward: return "compute";
    case OpRole::kTpComm:
    case OpRole::kCpComm: return "tp";
    case OpRole::kPpSend: return "pp";
    case OpRole::kDpReduce:
    case OpRole::kDpGather: return "dp";
    case OpRole::kOptimizer:
    case OpRole::kEmbeddingSync: return "optimizer";
    case OpRole::kEpComm: return "ep";
    case OpRole::kStepStall: return "stall";
    case OpRole::kBarrier: return "";
  }
  return "";
}

namespace {

Time& part(TrainingBreakdown& b, const char* kind) {
  const std::string k = kind;
  if (k == "compute") return b.compute;
  if (k == "tp") return b.tp_exposed;
  if (k == "pp") return b.pp_exposed;
  if (k == "dp") return b.dp_exposed;
  if (k == "optimizer") return b.optimizer;
  if (k == "ep") return b.ep_exposed;
  if (k == "stall") return b.step_stall;
  return b.bubble;
}

// A wait of `gap` on the main line, ended by `releaser`: the releaser's own duration (up to the
// gap) counts as its kind, and what remains of the gap was spent waiting for whatever released
// the releaser, walking back until the gap is used up. Compute of other rank groups (a pipeline
// receive waiting on its producer) counts as bubble, as does a wait with no releaser.
void attribute_wait(TrainingBreakdown& b, Time gap, int32_t releaser, const work::TrainingGraph& g,
                    const std::vector<OpTiming>& t) {
  while (gap > Time::zero()) {
    if (releaser < 0) {
      b.bubble += gap;
      return;
    }
    const OpRole role = g.ops[releaser].role;
    const Time own = min(gap, t[releaser].end - t[releaser].start);
    const bool compute = role == OpRole::kForward || role == OpRole::kBackward || role == OpRole::kBarrier ||
                         role == OpRole::kOptimizer;
    part(b, compute ? "bubble" : breakdown_kind(role)) += own;
    gap -= own;
    releaser = t[releaser].releaser;
  }
}

std::vector<CriticalSegment> critical_path(int32_t last, const work::TrainingGraph& g, const std::vector<OpTiming>& t) {
  std::vector<CriticalSegment> rev;
  for (int32_t op = last; op >= 0; op = t[op].releaser) {
    const char* kind = breakdown_kind(g.ops[op].role);
    const Time d = t[op].end - t[op].start;
    if (*kind == 0 || d == Time::zero()) continue;
    const int32_t group = g.ops[op].group;
    if (!rev.empty() && rev.back().group == group && rev.back().kind == kind) {
      rev.back().time += d;
    } else {
      rev.push_back({group, kind, d});
    }
  }
  std::reverse(rev.begin(), rev.end());
  return rev;
}

void collect_links(const topo::Fabric& fabric, const std::vector<net::LinkUsage>& usage,
                   const std::vector<FabricFault>& degraded_nics, FlowTrainingResult& r) {
  // Every link direction slower than its tier was built (network.faults, and the host links of
  // stragglers.nics, "nic:N", named after their NIC) or failed, with its load.
  std::unordered_map<net::LinkIndex, std::string> nic_of;
  for (const FabricFault& f : degraded_nics) {
    const int nic = std::stoi(f.element.substr(4));
    for (const topo::Direction d : {topo::Direction::kUp, topo::Direction::kDown}) nic_of[fabric.host_link(nic, d)] = f.element;
  }
  r.degraded_links = degraded_links(fabric, usage, nic_of);
  r.tiers = tier_loads(fabric, usage);
  r.top_links = most_loaded_links(fabric, usage, 10);
  r.busiest_fabric_links = busiest_fabric_links(fabric, usage, 10);
}

// Rows each series may keep: whole series in `ranked` order while they fit in `max_rows`, the
// first cut to `max_rows` when it alone does not fit.
std::vector<int64_t> series_quota(const std::vector<int32_t>& ranked, const std::vector<int64_t>& rows,
                                  int64_t max_rows) {
  std::vector<int64_t> quota(rows.size(), 0);
  int64_t used = 0;
  for (const int32_t k : ranked) {
    if (used + rows[k] > max_rows) {
      if (used == 0) quota[k] = max_rows;
      break;
    }
    quota[k] = rows[k];
    used += rows[k];
  }
  return quota;
}

// The samples within their series' quota, in their order.
template <class Sample, class KeyOf>
std::vector<Sample> take_quota(const std::vector<Sample>& samples, std::vector<int64_t> quota, KeyOf key_of) {
  std::vector<Sample> kept;
  for (const Sample& s : samples) {
    int64_t& left = quota[static_cast<size_t>(key_of(s))];
    if (left == 0) continue;
    --left;
    kept.push_back(s);
  }
  return kept;
}

// Rows per series key (link index or trace index, both small non-negative integers).
template <class Sample, class KeyOf>
std::vector<int64_t> rows_per_key(const std::vector<Sample>& samples, KeyOf key_of) {
  std::vector<int64_t> rows;
  for (const Sample& s : samples) {
    const auto k = static_cast<size_t>(key_of(s));
    if (k >= rows.size()) rows.resize(k + 1, 0);
    ++rows[k];
  }
  return rows;
}

int64_t count_nonzero(const std::vector<int64_t>& v) {
  return static_cast<int64_t>(std::count_if(v.begin(), v.end(), [](int64_t x) { return x > 0; }));
}

// Which ranks' flows a folded run put on the fabric (training_graph.h): the DP collectives, the
// embedding sync and MoE dispatch carry every replica; TP/CP and pipeline flows inside a node only
// the simulated replicas', those between nodes every replica's that meets the representative's.
std::string represented_ranks(const work::TrainingGraph& g) {
  if (!g.folded) return "every rank group's flows (not folded)";
  std::string replicas;
  for (size_t i = 0; i < g.replicas.size(); ++i) replicas += (i ? ", " : "") + std::to_string(g.replicas[i]);
  return "folded: every replica's DP, embedding-sync and MoE all-to-all flows; TP/CP and pipeline flows between "
         "nodes of the folded replicas where they share a link with DP replica " +
         std::to_string(g.replicas.front()) + "'s (started in step with them); inside a node only DP replica" +
         std::string(g.replicas.size() > 1 ? "s " : " ") + replicas + " of " + std::to_string(g.dp) +
         ": an NVLink port that only other replicas' TP/CP flows would use shows no queue.";
}

TrainingCongestion training_congestion(const net::CongestionTrace& trace, const topo::Fabric& fabric,
                                       int64_t max_rows) {
  TrainingCongestion c;
  c.counters = trace.counters;
  for (size_t l = 0; l < trace.links.size(); ++l) {
    const double capacity = fabric.capacity(static_cast<net::LinkIndex>(l)).bytes_per_s;
    if (capacity > 0 && trace.links[l].max_queue_bytes > 0) {
      c.max_queue_delay = max(c.max_queue_delay, Time::s(trace.links[l].max_queue_bytes / capacity));
    }
  }
  const auto link_of = [](const net::QueueSample& q) { return q.link; };
  const auto flow_of = [](const net::RateSample& s) { return s.flow; };
  c.queued_links = count_nonzero(rows_per_key(trace.queues, link_of));
  c.queue_samples = static_cast<int64_t>(trace.queues.size());
  c.queues = keep_largest_queues(trace.queues, max_rows);
  for (const net::QueueSample& q : c.queues) {
    if (!c.link_names.contains(q.link)) c.link_names.emplace(q.link, fabric.link_name(q.link));
  }
  c.traced_flows = count_nonzero(rows_per_key(trace.rates, flow_of));
  c.rate_samples = static_cast<int64_t>(trace.rates.size());
  c.rates = keep_first_rates(trace.rates, max_rows);
  return c;
}

}  // namespace

void check_graph_ops(const ScenarioConfig& cfg, int64_t ops) {
  if (ops <= kMaxGraphOps) return;
  const ParallelismConfig& p = cfg.parallelism;
  // Unfolded, every DP replica is simulated: folding is the first remedy.
  const int dp = data_parallel_size(cfg);
  const bool unfolded = !work::folds_replicas(cfg) && dp > 2;
  char buf[760];
  std::snprintf(buf, sizeof buf,
                "the flow level's operation graph would hold %.3g ops (%d micro-batches x %d stages x %d virtual, "
                "forward and backward, each with its TP, CP, pipeline and MoE ops, per rank group simulated%s); at "
                "most %.0e are simulated (each holds up to about 370 bytes, %.2g GB in all, and takes 3 to 15 us of "
                "wall time, more on larger fabrics: about 9 us at 12,288 GPUs unfolded, 13 us at 32,768): %sraise parallelism.micro_batch (fewer micro-batches per pipeline), or price it at "
                "network.fidelity: analytical",
                static_cast<double>(ops), micro_batches_per_iteration(cfg), p.pp, p.vpp,
                unfolded ? (", every one of the " + std::to_string(dp) + " DP replicas' unfolded").c_str() : "",
                static_cast<double>(kMaxGraphOps), ops * 370e-9,
                unfolded ? "set training.fold_ranks: true (one representative replica), " : "");
  throw BadInput(scenario_error(cfg, unfolded ? "training.fold_ranks" : "training.global_batch", buf));
}

void check_packet_work(const ScenarioConfig& cfg, double bytes, const std::function<void(const std::string&)>& notice) {
  // Every packet is an event at each hop: about 3 million packets a second of wall time on one
  // core (GPT 3.6B's plan on 16 and 32 A100s: 6.1e7 and 1.04e8 packets, on the wire after the
  // links' efficiencies, in 18.7 and 38.0 s, 2026-12-07). A run said nothing before it ended,
  // however long (review: 70B on 512 GPUs, about 15 minutes, killed at 5 without a word).
  constexpr double kPacketsPerSecond = 3e6;
  constexpr double kMostSeconds = 24 * 3600.0;
  const double packets = bytes / cfg.network.dcqcn.mtu.as_double();
  const double seconds = packets / kPacketsPerSecond;
  const auto [per, unit] = seconds >= 86400 ? std::pair{86400.0, "day"}
                          : seconds >= 3600  ? std::pair{3600.0, "hour"}
                          : seconds >= 60    ? std::pair{60.0, "minute"}
                                             : std::pair{1.0, "second"};
  char amount[32];
  std::snprintf(amount, sizeof amount, "%.3g", seconds / per);
  char buf[480];
  std::snprintf(buf, sizeof buf,
                "the packet level moves about %.2g packets of %s (%.3g GB, NVLink included), about %s %s%s of wall "
                "time at 3 million a second",
                packets, to_string(cfg.network.dcqcn.mtu).c_str(), bytes / 1e9, amount, unit,
                std::string(amount) == "1" ? "" : "s");  // "about 1 minute", not "1 minutes"
  const std::string words = buf;
  if (seconds > kMostSeconds) {
    throw BadInput(scenario_error(cfg, "network.fidelity",
                                  words + "; at most a day's are run: use flow+dcqcn, the same congestion control "
                                          "on fluid queues, or fewer GPUs or micro-batches"));
  }
  if (notice && seconds >= 60) notice(words + " (flow+dcqcn runs the same congestion control on fluid queues)");
}

std::vector<net::QueueSample> keep_largest_queues(const std::vector<net::QueueSample>& samples, int64_t max_rows) {
  const auto link_of = [](const net::QueueSample& q) { return q.link; };
  if (static_cast<int64_t>(samples.size()) <= max_rows) return samples;
  const std::vector<int64_t> rows = rows_per_key(samples, link_of);
  std::vector<int64_t> peak(rows.size(), 0);
  for (const net::QueueSample& q : samples) peak[q.link] = std::max(peak[q.link], q.bytes);
  std::vector<int32_t> ranked;
  for (size_t l = 0; l < rows.size(); ++l) {
    if (rows[l] > 0) ranked.push_back(static_cast<int32_t>(l));
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&peak](int32_t a, int32_t b) { return peak[a] > peak[b]; });
  return take_quota(samples, series_quota(ranked, rows, max_rows), link_of);
}

std::vector<net::RateSample> keep_first_rates(const std::vector<net::RateSample>& samples, int64_t max_rows) {
  const auto flow_of = [](const net::RateSample& s) { return s.flow; };
  if (static_cast<int64_t>(samples.size()) <= max_rows) return samples;
  const std::vector<int64_t> rows = rows_per_key(samples, flow_of);
  std::vector<int32_t> ranked;
  for (size_t f = 0; f < rows.size(); ++f) {
    if (rows[f] > 0) ranked.push_back(static_cast<int32_t>(f));
  }
  return take_quota(samples, series_quota(ranked, rows, max_rows), flow_of);
}

namespace {

ScenarioConfig with_fold_ranks(const ScenarioConfig& cfg, FoldRanks fold) {
  ScenarioConfig out = cfg;
  out.training.fold_ranks = fold;
  return out;
}

// The ops of `cfg`'s graph with every replica simulated (graph costs do not depend on folding).
int64_t unfolded_graph_ops(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const work::GraphCosts& costs) {
  const ScenarioConfig unfolded = with_fold_ranks(cfg, FoldRanks::kUnfold);
  return work::training_graph_ops(unfolded, costs, flow_stragglers(unfolded, hw).graph);
}

}  // namespace

bool unfold_for_fabric_faults(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, int64_t* ops) {
  const int64_t n =
      flow_stragglers(cfg, hw).fabric_faults_unfold ? unfolded_graph_ops(cfg, hw, work::graph_costs(cfg, hw)) : 0;
  if (ops) *ops = n;
  return n > 0 && n <= kMaxGraphOps;
}

ScenarioConfig without_network_faults(const ScenarioConfig& cfg) {
  ScenarioConfig out = cfg;
  out.network.faults.clear();
  return out;
}

FlowTrainingResult simulate_training(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                                     const FlowTrainingOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  FlowTrainingResult r;
  r.estimate = estimate_training(cfg, hw);
  r.analytical = cfg.network.faults.empty() ? r.estimate : estimate_training(without_network_faults(cfg), hw);
  r.estimate.breakdown = {};
  r.estimate.gather_slack = Time::zero();  // the analytical level's; the graph paces itself

  const work::GraphCosts costs = options.costs ? *options.costs : work::graph_costs(cfg, hw);
  FlowStragglers stragglers = flow_stragglers(cfg, hw);
  // Faults above the hosts under fold_ranks auto: every replica, where that graph fits
  // (unfold_for_fabric_faults, from the stragglers and costs at hand).
  if (stragglers.fabric_faults_unfold) {
    const int64_t unfolded_ops = unfolded_graph_ops(cfg, hw, costs);
    if (unfolded_ops <= kMaxGraphOps) {
      FlowTrainingResult f = simulate_training(with_fold_ranks(cfg, FoldRanks::kUnfold), hw, options);
      f.fabric_faults_unfolded = true;
      return f;
    }
    r.fabric_faults_folded_ops = unfolded_ops;
  }
  for (const int replica : options.unfold_replicas) {
    stragglers.graph.replicas.try_emplace(replica, std::vector<work::GroupScaling>(static_cast<size_t>(cfg.parallelism.pp)));
  }
  const int micro_batches = micro_batches_per_iteration(cfg);
  int64_t expected_ops = 0;
  if (micro_batches > 4 * cfg.parallelism.pp || work::simulated_replica_count(cfg, stragglers.graph) > 2) {
    expected_ops = work::training_graph_ops(cfg, costs, stragglers.graph);
    // fold_ranks auto leaves a plan whose TP groups span nodes unfolded, for exactness; where that
    // is past the limit it folds after all, and says so, rather than refuse a key not given.
    if (expected_ops > kMaxGraphOps && cfg.training.fold_ranks == FoldRanks::kAuto && !work::folds_replicas(cfg)) {
      FlowTrainingResult f = simulate_training(with_fold_ranks(cfg, FoldRanks::kFold), hw, options);
      f.auto_folded_ops = expected_ops;
      // Folded by auto, not by the user: the fault note gives the op count, not fold_ranks: true.
      if (f.fabric_faults_folded_ops == -1) f.fabric_faults_folded_ops = expected_ops;
      return f;
    }
    check_graph_ops(cfg, expected_ops);
  }
  const work::TrainingGraph graph = work::build_training_graph(cfg, costs, stragglers.graph, expected_ops);
  check_graph_ops(cfg, static_cast<int64_t>(graph.ops.size()));
  r.folded = graph.folded;
  if (stragglers.fabric_faults_folded) r.fabric_faults_folded_ops = -1;
  r.slow_hosts = stragglers.slow_hosts;
  r.slow_gpus = stragglers.slow_gpus;
  r.unfolded_replicas = graph.folded ? static_cast<int>(graph.replicas.size()) - 1 : 0;
  for (const auto& [cell, hosts] : stragglers.hosts_of) {
    std::string name = "stage" + std::to_string(cell.second) + "/dp" + std::to_string(cell.first) + " (host";
    for (size_t i = 0; i < hosts.size(); ++i) name += (i ? "," : " ") + std::to_string(hosts[i]);
    r.straggling_groups.push_back(name + ")");
  }
  r.ops = static_cast<int64_t>(graph.ops.size());
  r.rank_groups = static_cast<int64_t>(graph.groups.size());
  for (const work::RankGroup& g : graph.groups) r.group_names.push_back(g.name);

  NetworkConfig fabric_cfg = cfg.network;
  fabric_cfg.faults.insert(fabric_cfg.faults.end(), stragglers.faults.begin(), stragglers.faults.end());
  const topo::Fabric fabric = topo::build_fabric(cfg.cluster, fabric_cfg, cfg.file,
                                                 cfg.network.nvlink_bandwidth.value_or(hw.nvlink_bandwidth));
  const net::FabricRoutes routes(fabric, topo::routing_options(cfg.network));

  ExecutorOptions eo;
  eo.nvlink_efficiency = hw.eff.nvlink_busbw;
  eo.network_efficiency = hw.eff.network_busbw;
  eo.free_communication = options.free_communication;
  eo.routes = &routes;
  double last_report = 2.0;
  if (options.progress) {
    eo.progress = [&](int64_t done, Time now) {
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
      if (wall < last_report) return;
      last_report = wall + 1.0;
      char line[160];
      std::snprintf(line, sizeof line, "%s level: %lld of %lld ops, %.3f s simulated, %.0f s wall",
                    to_string(cfg.network.fidelity == Fidelity::kAnalytical ? Fidelity::kFlow : cfg.network.fidelity),
                    static_cast<long long>(done), static_cast<long long>(r.ops), now.as_s(), wall);
      options.progress(line);
    };
  }

  std::vector<OpTiming> timing;
  Time origin;
  {
    std::unique_ptr<Clock> clock;
    simgrid::s4u::Engine* engine = nullptr;
    if (options.use_simgrid) {
      engine = simgrid_engine();
      clock = std::make_unique<SimGridClock>();
    } else {
      if (cfg.network.solver == FlowSolver::kLmm) {
        throw BadInput(InputError{cfg.file, 0, "network.solver", "the lmm solver needs SimGrid's engine"});
      }
      clock = std::make_unique<EventQueueClock>();
    }
    // The scenario's level: flow (also for callers that hold an analytical scenario and ask for
    // the detailed run), flow+dcqcn or packet, all behind the same Network interface.
    NetworkConfig net_cfg = cfg.network;
    if (net_cfg.fidelity == Fidelity::kAnalytical) net_cfg.fidelity = Fidelity::kFlow;
    std::unique_ptr<net::Network> network;
    try {
      network = net::make_network(net_cfg, routes, *clock);
    } catch (const BadInput& e) {
      // The backend names the key; the scenario knows the file and line.
      throw in_scenario(cfg, e);
    }
    // A training step starts flows all along; the first ones started rarely congest. (The packet
    // level traces the first started.)
    auto* fluid_dcqcn = dynamic_cast<net::FluidDcqcnNetwork*>(network.get());
    if (fluid_dcqcn != nullptr) fluid_dcqcn->trace_flows(net::FluidDcqcnNetwork::TracedFlows::kFirstCut);
    GraphExecutor exec(graph, *network, *clock, eo);
    if (cfg.network.fidelity == Fidelity::kPacket) check_packet_work(cfg, exec.bytes_to_send(), options.notice);
    exec.start();
    if (engine != nullptr) {
      ensure_simgrid_platform();
      engine->run();
    } else {
      static_cast<EventQueueClock&>(*clock).run();
    }
    if (exec.finished() != r.ops) {
      throw std::logic_error("flow level: " + std::to_string(r.ops - exec.finished()) +
                             " ops never ran (a dependency cycle or a transfer without a path)");
    }
    r.flows = exec.flows();
    timing = exec.take_timings();
    origin = exec.origin();
    collect_links(fabric, network->link_usage(), stragglers.faults, r);
    if (const auto* cc = dynamic_cast<const net::CongestionObservable*>(network.get())) {
      r.congestion = training_congestion(cc->congestion(), fabric, options.max_series_rows);
      r.congestion->traced_from_first_cut = fluid_dcqcn != nullptr;
      r.congestion->represented = represented_ranks(graph);
    }
  }

  // Iteration time and each representative group's timeline.
  Time end = origin;
  for (const OpTiming& t : timing) end = max(end, t.end);
  const Time iteration = end - origin;
  std::vector<std::vector<int32_t>> main_line(graph.groups.size());
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const work::Op& op = graph.ops[i];
    if (op.main_line && op.group >= 0 && graph.groups[op.group].reported) main_line[op.group].push_back(static_cast<int32_t>(i));
  }
  Time critical_end = Time::zero();
  for (size_t gi = 0; gi < graph.groups.size(); ++gi) {
    if (!graph.groups[gi].reported) continue;
    RankGroupTiming rg;
    rg.name = graph.groups[gi].name;
    rg.stage = graph.groups[gi].stage;
    rg.dp = graph.groups[gi].dp;
    Time cursor = origin;
    for (const int32_t id : main_line[gi]) {
      const OpTiming& t = timing[id];
      attribute_wait(rg.breakdown, t.start - cursor, t.releaser, graph, timing);
      const char* kind = breakdown_kind(graph.ops[id].role);
      if (*kind != 0) part(rg.breakdown, kind) += t.end - t.start;
      cursor = max(cursor, t.end);
    }
    rg.end = cursor - origin;
    rg.breakdown.bubble += end - cursor;
    if (!main_line[gi].empty()) rg.critical_path = critical_path(main_line[gi].back(), graph, timing);
    if (rg.end >= critical_end) {
      critical_end = rg.end;
      r.critical_group = static_cast<int>(r.groups.size());
    }
    r.groups.push_back(std::move(rg));
  }

  if (options.keep_spans) {
    for (size_t i = 0; i < graph.ops.size(); ++i) {
      const work::Op& op = graph.ops[i];
      if (op.role == OpRole::kBarrier || op.group < 0 || !graph.groups[op.group].reported) continue;
      if (timing[i].end == timing[i].start && op.kind == work::OpKind::kCompute) continue;
      r.spans.push_back({op.group, op.peer_group, op.stream, op.role, op.microbatch, op.chunk, op.layer,
                         timing[i].start - origin, timing[i].end - origin});
    }
  }

  // MoE: per layer of the critical group's stage, the all-to-all time its blocks left on the
  // line (block span less expert compute), per micro-batch, forward + backward, as measured.
  // Where that stage holds no MoE layer (dense first layers), the stage whose group computes and
  // exchanges longest among those that do (until 2026-12-07 the report was empty there; QA).
  if (!graph.moe_blocks.empty() && !r.groups.empty()) {
    const auto has_moe = [&](int stage) {
      const work::MoeStageCost& m = costs.moe_stages[static_cast<size_t>(stage)];
      return std::any_of(m.costs.begin(), m.costs.end(), [](const work::MoeLayerCost& lc) { return lc.moe; });
    };
    size_t pick = r.critical_group;
    if (!has_moe(r.groups[pick].stage)) {
      Time longest = Time::zero();
      for (size_t i = 0; i < r.groups.size(); ++i) {
        const TrainingBreakdown& b = r.groups[i].breakdown;
        if (has_moe(r.groups[i].stage) && b.compute + b.ep_exposed > longest) {
          longest = b.compute + b.ep_exposed;
          pick = i;
        }
      }
    }
    const RankGroupTiming& crit = r.groups[pick];
    std::map<int32_t, Time> exposed;
    int32_t crit_group = -1;
    for (size_t gi = 0; gi < graph.groups.size(); ++gi) {
      if (graph.groups[gi].name == crit.name) crit_group = static_cast<int32_t>(gi);
    }
    for (const work::TrainingGraph::MoeBlock& blk : graph.moe_blocks) {
      if (blk.group != crit_group) continue;
      // The span is the sum of chunked compute pieces on the picosecond clock; the expert compute
      // is the exact sum: a block with nothing exposed can come out a picosecond under it.
      exposed[blk.layer] += std::max(Time::zero(), timing[blk.join].end - timing[blk.before].end - blk.expert);
    }
    const double per_mb = 1.0 / std::max(1, graph.micro_batches);
    const work::MoeStageCost& msc = costs.moe_stages[crit.stage];
    r.estimate.moe_layers.clear();
    r.estimate.critical_stage = crit.stage;
    for (size_t i = 0; i < msc.layers.size(); ++i) {
      const work::MoeLayerCost& lc = msc.costs[i];
      if (lc.moe) r.estimate.moe_layers.push_back(moe_layer_report(msc.layers[i], lc, per_mb * exposed[msc.layers[i]]));
    }
  }

  TrainingEstimate& est = r.estimate;
  est.iteration = iteration;
  if (!r.groups.empty()) est.breakdown = r.groups[r.critical_group].breakdown;
  const double seconds = iteration.as_s();
  const double tokens = static_cast<double>(cfg.training.global_batch) * cfg.model.seq_len;
  const double peak = hw.peak(cfg.training.precision).per_s;
  est.tokens_per_s = tokens / seconds;
  est.mfu = est.flops.model.n / (seconds * cfg.cluster.gpus * peak);
  est.hfu = est.flops.hardware.n / (seconds * cfg.cluster.gpus * peak);
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return r;
}

}  // namespace clustersim::engine
