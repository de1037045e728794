// SPDX-License-Identifier: Apache-2.0
#include "sim/report/faults_report.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"
#include "sim/report/sweep/worker_pool.h"
#include "sim/report/training_report.h"
#include "workloads/placement.h"
#include "workloads/transformer.h"

namespace clustersim::report {
namespace {

using engine::LossCause;
using engine::StragglerImpact;

// A list of host or GPU indices as a JSON array.
Json index_array(const std::vector<int>& indices) {
  Json a = Json::array();
  for (int i : indices) a.push(i);
  return a;
}

// Checkpoint bytes per parameter: BF16 weights (2) + FP32 master weights, Adam m and v (12), as
// mixed-precision Adam keeps them (Rajbhandari et al., "ZeRO", SC'20, section 3.1: 2 + 2 + 12
// bytes per parameter in training, of which the 16-bit gradients are not saved).
constexpr double kCheckpointBytesPerParam = 14.0;

std::string fmt(const char* f, double v) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string list(const std::vector<int>& v, size_t limit = 12) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < limit; ++i) out += (i ? "," : "") + std::to_string(v[i]);
  if (v.size() > limit) out += ",... (" + std::to_string(v.size()) + ")";
  return out;
}

double units_of(const ScenarioConfig& cfg, FailureUnit u) {
  const double hosts = static_cast<double>(cfg.cluster.gpus) / cfg.cluster.gpus_per_node;
  switch (u) {
    case FailureUnit::kGpu: return cfg.cluster.gpus;
    case FailureUnit::kHost: return hosts;
    case FailureUnit::kNic: return hosts * cfg.cluster.nics_per_node;
    case FailureUnit::kJob: return 1.0;
  }
  return 1.0;
}

// A component's failure rate over the whole job, per second: per unit per day x units x rate_scale.
double job_rate_per_s(const ScenarioConfig& cfg, const FailureComponent& c) {
  return c.rate_per_day * units_of(cfg, c.unit) * cfg.faults->rate_scale / 86400.0;
}

// The name of the state with `host` (holding `stage` of replica 0) slowed as `c` says.
std::string degraded_state_name(int host, int stage, const FailureComponent& c) {
  return "host " + std::to_string(host) + " (stage " + std::to_string(stage) + ")" + fmt(" x%g ", c.slowdown) +
         to_string(c.phase);
}

// The host of the first GPU of pipeline stage `stage` in replica 0 (tp, cp, dp = 0) under the
// scenario's parallelism.placement, as the straggler model and the flow level place ranks.
int stage_host(const ScenarioConfig& cfg, int stage) {
  const ParallelismConfig& p = cfg.parallelism;
  const work::Placement pl(p.placement, p.tp, p.cp, data_parallel_size(cfg), p.pp);
  return pl.gpu(0, 0, 0, stage) / cfg.cluster.gpus_per_node;
}

// The 95% interval of a quantity that cannot be negative (a count, a time).
Json ci_pair(const engine::MeanCi& c) {
  Json a = Json::array();
  a.push(std::max(0.0, c.mean - c.half_width));
  a.push(c.mean + c.half_width);
  return a;
}

// "stage 7 of 8 (the last, with the LM head)".
std::string stage_words(const ScenarioConfig& cfg, int stage) {
  const int pp = cfg.parallelism.pp;
  return "stage " + std::to_string(stage) + " of " + std::to_string(pp) +
         (stage == pp - 1 && pp > 1 ? " (the last, which also runs the LM head)" : "");
}

std::string ms(Time t) { return fmt("%.1f ms", t.as_s() * 1e3); }

std::string critical_words(const ScenarioConfig& cfg, const std::string& source, const StragglerImpact& s) {
  const engine::CriticalPath& c = s.critical;
  std::string out;
  if (c.replica >= 0) {
    out = "replica " + std::to_string(c.replica) + ", " + stage_words(cfg, c.stage);
    if (!c.hosts.empty()) out += ", host " + list(c.hosts);
    const double over = c.stage_time / c.nominal_stage_time - 1.0;
    const auto named = std::find_if(c.slow_stages.begin(), c.slow_stages.end(),
                                    [&](const engine::SlowStage& x) { return x.stage == c.stage; });
    if (over > 1e-4) {
      out += fmt(": its forward + backward per micro-batch is %.2f%% over the nominal bottleneck stage's, so it paces "
                 "every micro-batch of the replica, and every replica waits for it at the gradient reduction",
                 100.0 * over);
    } else if (named != c.slow_stages.end()) {
      out += fmt(": its forward + backward per micro-batch stays %.2f%% under the nominal bottleneck stage's (the "
                 "last, with the LM head), yet alone its slower passes stretch the schedule (fill, drain and "
                 "waits between chunks) by ",
                 -100.0 * over) +
             ms(named->alone);
    } else {
      out += ": the replica's bottleneck stage";
    }
    for (const engine::SlowStage& x : c.slow_stages) {
      if (x.stage == c.stage) continue;
      out += "; also slowed in that replica: stage " + std::to_string(x.stage) + " (host " + list(x.hosts) +
             ", alone " + ms(x.alone) + ")";
    }
  } else if (source == "hosts" || source == "gpus") {
    out = "no slow host on a stage that paces its pipeline (hidden by the last stage's LM-head slack)";
  }
  for (const std::string& l : c.links) out += (out.empty() ? "" : "; ") + l;
  if (source == "sequence_imbalance") {
    out += fmt("; %.2fx the mean tokens on the heaviest replicas", cfg.stragglers.sequence_imbalance.max_over_mean);
  }
  if (source == "variation" && cfg.stragglers.variation) {
    const StragglerPhase phase = cfg.stragglers.variation->phase;
    const char* of = phase == StragglerPhase::kForward ? " of the forward compute time)"
                     : phase == StragglerPhase::kBackward ? " of the backward compute time)"
                                                          : " of the compute time)";
    out += fmt("; every GPU at its own speed (spread %.3f,", cfg.stragglers.variation->spread) +
           fmt(" sigma %.2f%%", 100 * cfg.stragglers.variation->spread / 5.396) + of;
  }
  return out.empty() ? "no effect on the critical path" : out;
}

Json impact_json(const ScenarioConfig& cfg, const std::string& source, const StragglerImpact& s) {
  Json j = Json::object();
  j.set("iteration_time_s", s.iteration.as_s());
  j.set("baseline_iteration_time_s", s.baseline.as_s());
  j.set("slowdown", s.slowdown());
  j.set("mfu", s.mfu);
  j.set("baseline_mfu", s.baseline_mfu);
  j.set("mfu_lost", s.baseline_mfu - s.mfu);
  if (s.variation) {
    j.set("variation_iteration_time_s", s.variation_iteration.as_s());
    j.set("variation_mfu", s.variation_mfu);
    j.set("mfu_lost_beyond_variation", s.variation_mfu - s.mfu);
  }
  j.set("pipeline_delta_s", s.pipeline_delta.as_s());
  j.set("communication_delta_s", s.communication_delta.as_s());
  j.set("slow_hosts", index_array(s.slow_hosts));
  j.set("slow_gpus", index_array(s.slow_gpus));
  Json& cp = j.set("critical_path", Json::object());
  cp.set("replica", s.critical.replica);
  cp.set("stage", s.critical.stage);
  cp.set("hosts", index_array(s.critical.hosts));
  cp.set("stage_time_s", s.critical.stage_time.as_s());
  cp.set("nominal_stage_time_s", s.critical.nominal_stage_time.as_s());
  Json& slowed = cp.set("slow_stages", Json::array());
  for (const engine::SlowStage& x : s.critical.slow_stages) {
    Json row = Json::object();
    row.set("stage", x.stage);
    row.set("hosts", index_array(x.hosts));
    row.set("stage_time_s", x.stage_time.as_s());
    row.set("saved_if_repaired_s", x.saved.as_s());
    slowed.push(row);
  }
  Json links = Json::array();
  for (const std::string& l : s.critical.links) links.push(l);
  cp.set("links", links);
  cp.set("cause", critical_words(cfg, source, s));
  return j;
}

// The rank groups with the most compute on the flow level's critical path (the chain of ops whose
// ends released each other, back from the last rank group's last op), slowest first, with their
// slow hosts.
std::string flow_critical_words(const engine::FlowTrainingResult& f, size_t limit = 3) {
  if (f.groups.empty()) return "";
  std::map<int32_t, Time> compute;
  for (const engine::CriticalSegment& seg : f.groups[f.critical_group].critical_path) {
    if (seg.kind == "compute") compute[seg.group] += seg.time;
  }
  std::vector<std::pair<int32_t, Time>> order(compute.begin(), compute.end());
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (size_t i = 0; i < order.size() && i < limit; ++i) {
    std::string name = f.group_names[order[i].first];
    for (const std::string& slow : f.straggling_groups) {
      if (slow.rfind(name + " ", 0) == 0) name = slow;
    }
    out += (i ? ", " : "") + name + fmt(" %.3f s", order[i].second.as_s());
  }
  return out.empty() ? out : "compute on the critical path: " + out;
}

// The stage of the straggling rank group with the most compute on the critical path (-1: none).
int flow_critical_stage(const engine::FlowTrainingResult& f) {
  if (f.groups.empty()) return -1;
  std::map<int32_t, Time> compute;
  for (const engine::CriticalSegment& seg : f.groups[f.critical_group].critical_path) {
    if (seg.kind == "compute") compute[seg.group] += seg.time;
  }
  int stage = -1;
  Time most;
  for (const auto& [group, t] : compute) {
    const std::string& name = f.group_names[group];
    const bool straggling = std::any_of(f.straggling_groups.begin(), f.straggling_groups.end(),
                                        [&](const std::string& g) { return g.rfind(name + " ", 0) == 0; });
    int s = -1, r = -1;
    if (!straggling || std::sscanf(name.c_str(), "stage%d/dp%d", &s, &r) != 2) continue;
    if (stage < 0 || t > most) {
      stage = s;
      most = t;
    }
  }
  return stage;
}

std::string flow_link_words(const engine::FlowTrainingResult& f, size_t limit = 3) {
  std::string out;
  for (size_t i = 0; i < f.degraded_links.size(); ++i) {
    const engine::LinkLoad& l = f.degraded_links[i];
    if (i == 4 && f.degraded_links.size() > 5) {
      out += ", ... (" + std::to_string(f.degraded_links.size()) + " link directions)";
      break;
    }
    out += (out.empty() ? "degraded " : ", ") + l.name + fmt(" peak %.0f%%", 100 * l.peak_utilisation);
  }
  std::string top;
  for (size_t i = 0; i < f.top_links.size() && i < limit; ++i) {
    top += (i ? ", " : "") + f.top_links[i].name + fmt(" %.0f%%", 100 * f.top_links[i].peak_utilisation);
  }
  if (!top.empty()) out += (out.empty() ? "" : "; ") + std::string("most loaded ") + top;
  return out;
}

// `d` with the count, mean (95% CI) and range of the MFU lost over `lost` (one entry per draw).
WhatIfDraws::Spread spread_of(const std::vector<double>& v) {
  const engine::MeanCi m = engine::mean_ci(v);
  return {m.mean, m.half_width, *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

void summarise_draws(const std::vector<double>& lost, WhatIfDraws& d) {
  if (lost.empty()) return;
  const WhatIfDraws::Spread m = spread_of(lost);
  d.count = static_cast<int>(lost.size());
  d.mfu_lost_mean = m.mean;
  d.mfu_lost_ci95 = m.ci95;
  d.mfu_lost_min = m.min;
  d.mfu_lost_max = m.max;
}

Json draws_json(const WhatIfDraws& d) {
  Json j = Json::object();
  j.set("count", d.count);
  auto add = [&j](const std::string& key, const WhatIfDraws::Spread& m) {
    j.set(key + "_mean", m.mean);
    Json ci = Json::array();
    ci.push(m.mean - m.ci95);
    ci.push(m.mean + m.ci95);
    j.set(key + "_ci95", ci);
    j.set(key + "_min", m.min);
    j.set(key + "_max", m.max);
  };
  add("mfu_lost", {d.mfu_lost_mean, d.mfu_lost_ci95, d.mfu_lost_min, d.mfu_lost_max});
  j.set("last_stage_draws", d.last_stage);
  if (d.beyond_variation) add("mfu_lost_beyond_variation", *d.beyond_variation);
  return j;
}

std::string draws_words(const WhatIfDraws& d, uint64_t seed) {
  std::string out = fmt(d.placements ? "\nover %.0f placements" : "\nover %.0f draws of the GPU speeds", d.count) +
         fmt(" (seeds %.0f", static_cast<double>(seed)) + fmt("..%.0f): MFU lost ", static_cast<double>(seed + d.count - 1)) +
         fmt("%.2f", 100 * d.mfu_lost_mean) + fmt(" +- %.2f points (95%% CI of the mean)", 100 * d.mfu_lost_ci95) +
         fmt(", %.2f", 100 * d.mfu_lost_min) + fmt(" to %.2f; ", 100 * d.mfu_lost_max) +
         fmt("the costliest stage is the last (LM head) in %.0f", d.last_stage) + fmt(" of %.0f draws\n", d.count);
  if (d.beyond_variation) {
    const WhatIfDraws::Spread& b = *d.beyond_variation;
    out += fmt("beyond the GPU speed variation alone (what repairing the other sources regains): %.2f", 100 * b.mean) +
           fmt(" +- %.2f points, ", 100 * b.ci95) + fmt("%.2f", 100 * b.min) + fmt(" to %.2f\n", 100 * b.max);
  }
  return out;
}

// A flow-level training run with the scenario's stragglers (one simulation: the straggler-free
// iteration needs a second one, which `clustersim whatif` runs in another process).
RunOutput run_straggled_flow(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const engine::FlowTrainingResult flow = engine::simulate_training(cfg, hw);
  RunOutput out = flow_training_output(cfg, hw, flow);
  add_flow_stragglers(cfg, flow, out);
  return out;
}

}  // namespace

void add_flow_stragglers(const ScenarioConfig& cfg, const engine::FlowTrainingResult& flow, RunOutput& out) {
  Json& s = out.results.set("stragglers", Json::object());
  s.set("slow_hosts", index_array(flow.slow_hosts));
  s.set("slow_gpus", index_array(flow.slow_gpus));
  Json groups = Json::array();
  for (const std::string& g : flow.straggling_groups) groups.push(g);
  s.set("straggling_groups", groups);
  s.set("unfolded_replicas", flow.unfolded_replicas);
  if (cfg.stragglers.variation) s.set("variation_spread", cfg.stragglers.variation->spread);
  Json links = Json::array();
  for (const engine::LinkLoad& l : flow.degraded_links) {
    Json row = Json::object();
    row.set("link", l.name);
    row.set("capacity_gbps", l.capacity.as_gbps());
    row.set("bytes", l.bytes.n);
    row.set("peak_utilisation", l.peak_utilisation);
    links.push(row);
  }
  s.set("degraded_links", links);
  s.set("critical_path", flow_critical_words(flow));
  const size_t slow_groups = flow.straggling_groups.size();
  out.summary += "\nstragglers   " + std::to_string(slow_groups) + (slow_groups == 1 ? " rank group" : " rank groups") +
                 " with slow hosts or GPUs" +
                 (flow.folded ? ", " + std::to_string(flow.unfolded_replicas) + " replicas simulated on their own" : "") +
                 (cfg.stragglers.variation
                      ? fmt("; every rank group at its slowest GPU's own speed (variation spread %.3f)",
                            cfg.stragglers.variation->spread)
                      : "") +
                 "\n             " + flow_critical_words(flow) + "\n" +
                 (flow.degraded_links.empty() ? "" : "             " + flow_link_words(flow, 0) + "\n") +
                 "             (one simulation, with stragglers; 'clustersim whatif' runs the straggler-free one too)\n";
}

namespace {

// A plain training run whose iteration is slowed by the scenario's stragglers.
RunOutput run_straggled_training(const ScenarioConfig& cfg, const RunOptions& options) {
  const calib::HardwareProfile hw = training_profile(cfg);
  if (cfg.network.fidelity == Fidelity::kFlow) return run_straggled_flow(cfg, hw);
  const engine::TrainingLevel level = engine::analytical_level();
  ScenarioConfig clean = cfg;
  clean.stragglers = StragglersConfig{};
  engine::TrainingEstimate est = level(clean, hw);
  // Listed stage layers change what the most loaded stage holds; the other sources leave memory be.
  est.memory = work::memory_per_gpu(cfg);
  const StragglerImpact s = engine::simulate_stragglers(cfg, hw, level);
  RunOutput out;
  out.results = training_results(cfg, hw, est);
  const double scale = s.baseline / s.iteration;
  const SlowedHeadline slowed{s.iteration, est.tokens_per_s * scale, s.mfu, est.hfu * scale};
  out.results.set("iteration_time_s", slowed.iteration.as_s());
  out.results.set("tokens_per_s", slowed.tokens_per_s);
  out.results.set("mfu", slowed.mfu);
  out.results.set("hfu", slowed.hfu);
  out.results["flops"].set("achieved_tflops_per_gpu", s.mfu * hw.peak(cfg.training.precision).as_tflops());
  Json& block = out.results.set("stragglers", impact_json(cfg, "all", s));
  // Drawn stragglers cost what their placement makes them cost: the seed's placement above, and
  // the spread over placements (milliseconds at this level).
  const WhatIfDraws placements =
      options.placement_draws && cfg.stragglers.drawn() ? placement_draws(cfg, hw, level, kDefaultPlacementDraws)
                                                        : WhatIfDraws{};
  if (placements.count > 0) block.set("placements", draws_json(placements));
  out.summary = training_summary(cfg, hw, est, slowed);
  // Listed stage layers can balance better than the even split: then the run is faster.
  const bool faster = s.iteration < s.baseline;
  out.summary += "\nstragglers   iteration " + to_string(s.iteration) +
                 fmt(faster ? " (%.2f%% faster), " : " (%.2f%% slower), ", 100 * std::abs(s.slowdown() - 1)) +
                 fmt("MFU %.1f%%", 100 * s.mfu) +
                 fmt(faster ? " (%.2f points gained)\n" : " (%.2f points lost)\n", 100 * std::abs(s.baseline_mfu - s.mfu)) +
                 "             " + critical_words(cfg, "all", s) + "\n" +
                 (cfg.stragglers.variation_with_others()
                      ? "             with the GPU speed variation alone: iteration " + to_string(s.variation_iteration) +
                            fmt(", MFU %.1f%%; ", 100 * s.variation_mfu) +
                            fmt("the other sources cost %.2f points on top of it\n", 100 * (s.variation_mfu - s.mfu))
                      : "") +
                 "             ('clustersim whatif' splits the cost by source)\n";
  if (placements.count > 0) {
    std::string words = draws_words(placements, cfg.stragglers.seed);
    words.erase(0, words.find_first_not_of('\n'));
    // Indent every line under the block's label.
    for (size_t at = words.find('\n'); at != std::string::npos && at + 1 < words.size(); at = words.find('\n', at + 1)) {
      words.insert(at + 1, "             ");
    }
    out.summary += "             " + words;
  }
  out.metrics = {{"iteration_time_s", slowed.iteration.as_s()},
                 {"tokens_per_s", slowed.tokens_per_s},
                 {"mfu", slowed.mfu},
                 {"hfu", slowed.hfu}};
  return out;
}

// The event loop handles about ten million failures a second: a study whose rates (after
// rate_scale) would take minutes to hours is refused up front, with the figures that decide it.
void check_failure_budget(const ScenarioConfig& cfg) {
  const FaultsConfig& f = *cfg.faults;
  double per_s = 0;
  for (const FailureComponent& c : f.components) per_s += job_rate_per_s(cfg, c);
  const double per_window = per_s * f.duration.as_s();
  constexpr double kMaxPerWindow = 1e7;
  constexpr double kMaxTotal = 1e9;
  if (per_window > kMaxPerWindow) {
    throw BadInput(scenario_error(cfg, "faults.rate_scale",
                                  fmt("the job would see about %.3g failures in faults.duration (one every ", per_window) +
                                      fmt("%.3g s); at most 1e7 per window are simulated: lower rate_scale, the "
                                          "components' rates or duration",
                                          1.0 / per_s)));
  }
  const double windows = static_cast<double>(f.seeds) * (1 + f.sweep_points);
  if (per_window * windows > kMaxTotal) {
    throw BadInput(scenario_error(
        cfg, "faults.seeds",
        fmt("%.3g failures to simulate ", per_window * windows) +
            fmt("(%.3g per window x ", per_window) + std::to_string(f.seeds) + " seeds x (1 + " +
            std::to_string(f.sweep_points) + " sweep_points)); at most 1e9: lower seeds, sweep_points or rate_scale"));
  }
}

RunOutput run_faults(const ScenarioConfig& cfg) {
  const FaultsConfig& f = *cfg.faults;
  check_failure_budget(cfg);
  const calib::HardwareProfile hw = training_profile(cfg);
  // The analytical run gives the straggler-free MFU (MFU scales as 1 / iteration) and the
  // `stragglers` block; the iteration times of the cluster states come from the chosen level.
  const StragglerImpact s = engine::simulate_stragglers(cfg, hw, engine::analytical_level());
  const std::vector<ClusterState> states = reliability_states(cfg);
  const int jobs = static_cast<int>(std::min<size_t>(states.size(), std::max(1u, std::thread::hardware_concurrency())));
  const StateTimes times = state_iteration_times(cfg, states, hw, iteration_time_fidelity(cfg), jobs);
  const Time iteration = f.iteration_time.value_or(times.iteration.front());
  const double mfu = s.baseline_mfu * (s.baseline / iteration);
  if (f.iteration_time && mfu > 1.0) {
    // Faster than the model's FLOPs at the GPUs' dense peak: not a measurement of this job.
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "%.6g s is shorter than the model's FLOPs take at the GPUs' peak (%.6g s: MFU would be %.0f%%); "
                  "give the measured time of one iteration of this job",
                  iteration.as_s(), s.baseline.as_s() * s.baseline_mfu, 100 * mfu);
    throw BadInput(scenario_error(cfg, "faults.iteration_time", buf));
  }
  const double tokens_per_iteration = static_cast<double>(cfg.training.global_batch) * cfg.model.seq_len;
  const double tokens_per_s = tokens_per_iteration / iteration.as_s();
  const engine::ReliabilityInputs in = reliability_inputs(cfg, states, times);

  std::vector<double> ettr, interruptions, failures, checkpoints, downtime_per, catch_up_per, max_lost;
  std::array<std::vector<double>, engine::kLossCauses> lost;
  std::vector<std::vector<double>> lost_by(in.components.size()), stops_by(in.components.size());
  for (int k = 0; k < f.seeds; ++k) {
    const engine::ReliabilityRun r = engine::simulate_reliability(in, f.seed + static_cast<uint64_t>(k));
    ettr.push_back(r.ettr(in.duration));
    assert(ettr.back() >= 0 && ettr.back() <= 1 && "useful time is part of the window (validate_faults bounds every phase)");
    interruptions.push_back(r.interruptions);
    failures.push_back(r.failures);
    checkpoints.push_back(r.checkpoints);
    const double stops = std::max(1, r.interruptions);
    downtime_per.push_back(r.downtime.as_s() / stops);
    catch_up_per.push_back((r.downtime + r.lost[static_cast<int>(LossCause::kLostWork)]).as_s() / stops);
    max_lost.push_back(r.max_lost_work.as_s());
    for (int c = 0; c < engine::kLossCauses; ++c) lost[c].push_back(r.lost[c].as_s());
    for (size_t i = 0; i < in.components.size(); ++i) {
      lost_by[i].push_back(r.lost_by_component[i].as_s());
      stops_by[i].push_back(r.interruptions_by_component[i]);
    }
  }
  const double mtbf_s = engine::mean_time_between_failures_s(in);
  const double young_s = engine::young_interval_s(in.checkpoint_blocking, mtbf_s);
  const double daly_s = engine::daly_interval_s(in.checkpoint_blocking, mtbf_s);
  // Centred on Young's optimum when the checkpoint costs anything; with a zero cost Young is
  // zero (validate_faults then demands an interval), so centre on the configured interval. A
  // checkpoint starts only once the previous asynchronous write is done, so intervals below the
  // write are the write: the sweep starts there.
  const Time floor = max(engine::checkpoint_interval_floor(iteration), in.checkpoint_async);
  const bool can_fail = engine::has_failures(in);  // else MTBF, Young and Daly are sentinels: reported as none
  const Time center = in.checkpoint_blocking > Time::zero() && can_fail ? Time::s(std::min(young_s, in.duration.as_s()))
                                                                       : in.checkpoint_interval;
  const engine::IntervalSweep sweep =
      engine::sweep_checkpoint_interval(in, center, floor, f.sweep_points, f.seeds, f.seed);
  const engine::MeanCi e = engine::mean_ci(ettr);
  // ETTR lies in [0, 1]; so does the interval reported for it.
  const double ettr_low = std::max(0.0, e.mean - e.half_width), ettr_high = std::min(1.0, e.mean + e.half_width);
  const engine::MeanCi n = engine::mean_ci(interruptions);

  RunOutput out;
  Json& r = out.results;
  r = Json::object();
  r.set("kind", "faults");
  r.set("scenario", cfg.name.empty() ? cfg.file : cfg.name);
  r.set("gpus", cfg.cluster.gpus);
  r.set("days", in.duration.as_s() / 86400.0);
  r.set("seeds", f.seeds);
  r.set("iteration_time_s", iteration.as_s());
  r.set("iteration_time_source", f.iteration_time ? "faults.iteration_time" : to_string(times.fidelity));
  r.set("iteration_time_fidelity", to_string(times.fidelity));
  // No wall times here: results.json is the same on every run (they are in the summary).
  Json& st = r.set("cluster_states", Json::array());
  double timing_wall_s = 0;
  for (size_t i = 0; i < states.size(); ++i) {
    Json row = Json::object();
    row.set("state", states[i].name);
    row.set("iteration_time_s", times.iteration[i].as_s());
    row.set("speed", times.iteration.front() / max(times.iteration.front(), times.iteration[i]));
    st.push(row);
    timing_wall_s += times.wall_s[i];
  }
  r.set("mfu", mfu);
  r.set("tokens_per_s", tokens_per_s);
  r.set("ettr", e.mean);
  Json& ettr_ci = r.set("ettr_ci95", Json::array());
  ettr_ci.push(ettr_low);
  ettr_ci.push(ettr_high);
  r.set("goodput", e.mean * tokens_per_s);
  // Goodput and effective MFU are ETTR times a rate: their intervals are ETTR's, in [0, 1].
  const auto ettr_times = [&](double k) {
    Json a = Json::array();
    a.push(ettr_low * k);
    a.push(ettr_high * k);
    return a;
  };
  r.set("goodput_ci95", ettr_times(tokens_per_s));
  r.set("effective_mfu", e.mean * mfu);
  r.set("effective_mfu_ci95", ettr_times(mfu));
  r.set("interruptions", n.mean);
  r.set("interruptions_ci95", ci_pair(n));
  r.set("failures", engine::mean_ci(failures).mean);
  r.set("checkpoints", engine::mean_ci(checkpoints).mean);
  r.set("mtbf_s", can_fail ? Json(mtbf_s) : Json());
  r.set("mean_downtime_per_interruption_s", engine::mean_ci(downtime_per).mean);
  r.set("mean_catch_up_s", engine::mean_ci(catch_up_per).mean);
  r.set("max_lost_work_s", *std::max_element(max_lost.begin(), max_lost.end()));
  Json& tl = r.set("time_lost_s", Json::object());
  Json& tlc = r.set("time_lost_ci95", Json::object());
  Json& tlf = r.set("time_lost_fraction", Json::object());
  for (int c = 0; c < engine::kLossCauses; ++c) {
    const engine::MeanCi m = engine::mean_ci(lost[c]);
    const char* name = engine::to_string(static_cast<LossCause>(c));
    tl.set(name, m.mean);
    tlc.set(name, ci_pair(m));
    tlf.set(name, m.mean / in.duration.as_s());
  }
  Json& bycomp = r.set("time_lost_by_component_s", Json::object());
  Json& stopcomp = r.set("interruptions_by_component", Json::object());
  for (size_t i = 0; i < in.components.size(); ++i) {
    bycomp.set(in.components[i].spec.name, engine::mean_ci(lost_by[i]).mean);
    stopcomp.set(in.components[i].spec.name, engine::mean_ci(stops_by[i]).mean);
  }
  Json& ck = r.set("checkpoint", Json::object());
  ck.set("interval_s", in.checkpoint_interval.as_s());
  // A checkpoint starts only when the previous asynchronous write has finished.
  const Time effective_interval = max(in.checkpoint_interval, in.checkpoint_async);
  ck.set("effective_interval_s", effective_interval.as_s());
  ck.set("blocking_s", in.checkpoint_blocking.as_s());
  ck.set("async_s", in.checkpoint_async.as_s());
  ck.set("load_s", in.checkpoint_load.as_s());
  ck.set("size_bytes", f.checkpoint.size ? f.checkpoint.size->as_double()
                                         : kCheckpointBytesPerParam * work::count_params(cfg.model).total);
  Json& rc = r.set("recovery", Json::object());
  rc.set("detection_s", in.detection.as_s());
  rc.set("hang_detection_s", in.hang_detection.as_s());
  rc.set("diagnosis_s", in.diagnosis.as_s());
  rc.set("reschedule_s", in.reschedule.as_s());
  rc.set("comm_init_s", in.comm_init.as_s());
  rc.set("checkpoint_load_s", in.checkpoint_load.as_s());
  // Without failures a longer interval is always better: the sweep's best is only its edge.
  r.set("optimal_checkpoint_interval_s", can_fail ? Json(sweep.best.as_s()) : Json());
  r.set("ettr_at_optimal_interval", can_fail ? Json(sweep.best_ettr) : Json());
  r.set("young_daly_interval_s", can_fail ? Json(young_s) : Json());
  r.set("daly_interval_s", can_fail ? Json(daly_s) : Json());
  Json& sw = r.set("checkpoint_sweep", Json::array());
  for (size_t i = 0; i < sweep.intervals.size(); ++i) {
    Json row = Json::object();
    row.set("interval_s", sweep.intervals[i].as_s());
    row.set("ettr", sweep.mean_ettr[i]);
    sw.push(row);
  }
  if (!cfg.stragglers.empty()) r.set("stragglers", impact_json(cfg, "all", s));

  std::ostringstream o;
  o << "scenario       " << (cfg.name.empty() ? cfg.file : cfg.name) << "\n";
  o << "job            " << cfg.cluster.gpus << " GPUs, iteration " << to_string(iteration) << fmt(", MFU %.1f%%", 100 * mfu)
    << "; " << fmt("%.1f", in.duration.as_s() / 86400) << " days x " << f.seeds << " seeds\n";
  o << "iteration      " << (f.iteration_time ? "given (faults.iteration_time); " : "") << states.size()
    << (states.size() == 1 ? " cluster state" : " cluster states") << " timed at the " << to_string(times.fidelity)
    << " level" << (times.fidelity == IterationTimeFidelity::kFlow ? " (one simulation per state, each in its own process)" : "")
    << fmt(", %.2f s of simulation wall time\n", timing_wall_s);
  o << "failures       MTBF " << (can_fail ? fmt("%.2f h", mtbf_s / 3600) : std::string("none (no crash or hang component)"))
    << fmt("; %.1f interruptions", n.mean) << fmt(" (+-%.1f)\n", n.half_width);
  o << "recovery       detect " << to_string(in.detection) << ", diagnose " << to_string(in.diagnosis) << ", reschedule "
    << to_string(in.reschedule) << ", comm init " << to_string(in.comm_init) << ", load " << to_string(in.checkpoint_load)
    << "\ncheckpoint     every " << to_string(in.checkpoint_interval) << ", blocking " << to_string(in.checkpoint_blocking)
    << ", async " << to_string(in.checkpoint_async)
    << (effective_interval > in.checkpoint_interval
            ? "; the write outlasts the interval, and a checkpoint starts only when the previous one is written: "
              "every " + to_string(effective_interval)
            : std::string())
    << "\n\n";
  o << "ETTR           " << fmt("%.2f%%", 100 * e.mean) << fmt("  (95%% CI %.2f", 100 * ettr_low)
    << fmt(" to %.2f%%)\n", 100 * ettr_high);
  o << "goodput        " << fmt("%.4g tokens/s", e.mean * tokens_per_s) << fmt("; effective MFU %.1f%%\n", 100 * e.mean * mfu);
  o << "catch-up       " << fmt("%.1f min per interruption", engine::mean_ci(catch_up_per).mean / 60)
    << " (downtime + lost work)\n\n";
  o << "time lost per cause (mean over seeds)\n";
  for (int c = 0; c < engine::kLossCauses; ++c) {
    const engine::MeanCi m = engine::mean_ci(lost[c]);
    if (m.mean <= 0) continue;
    char line[160];
    std::snprintf(line, sizeof line, "  %-16s %10.2f h  %6.2f%%\n", engine::to_string(static_cast<LossCause>(c)),
                  m.mean / 3600, 100 * m.mean / in.duration.as_s());
    o << line;
  }
  o << "\ncheckpoint interval  "
    << (can_fail ? "best " + to_string(sweep.best) + fmt(" (ETTR %.2f%%)", 100 * sweep.best_ettr)
                 : std::string("no optimum (longer is always better without failures)"))
    << (can_fail ? fmt("; Young %.4g s", young_s) + fmt(", Daly %.4g s", daly_s) : std::string())
    << "\n";
  out.summary = o.str();
  out.metrics = {{"ettr", e.mean},
                 {"goodput", e.mean * tokens_per_s},
                 {"effective_mfu", e.mean * mfu},
                 {"interruptions", n.mean}};
  if (can_fail) {
    out.metrics["optimal_checkpoint_interval_s"] = sweep.best.as_s();
    out.metrics["young_daly_interval_s"] = young_s;
  }
  return out;
}

}  // namespace

calib::HardwareProfile training_profile(const ScenarioConfig& cfg) {
  calib::HardwareProfile hw;
  try {
    hw = calib::load_hardware_profile(cfg.cluster.gpu, cfg.cluster.source_dir);
  } catch (const BadInput& e) {
    std::vector<InputError> errors = e.errors();
    for (InputError& err : errors) {
      if (err.file.empty()) err = scenario_error(cfg, "cluster.gpu", err.message);
    }
    throw BadInput(errors);
  }
  // A faults scenario's level is faults.iteration_time_fidelity, checked by validate_faults. A
  // straggled run at flow+dcqcn or packet goes through run_scenario's training path instead; the
  // what-if compares variants at the analytical or flow level only.
  if (!cfg.faults && cfg.network.fidelity != Fidelity::kAnalytical && cfg.network.fidelity != Fidelity::kFlow) {
    throw BadInput(scenario_error(cfg, "network.fidelity",
                                  "the straggler what-if runs at the analytical or flow training level; set "
                                  "network.fidelity: analytical or flow (a plain run takes flow+dcqcn and packet)"));
  }
  // Failed or degraded links and switches exist only in the flow level's fabric: timing the job
  // analytically would drop them without a word.
  require_flow_for_network_faults(cfg);
  if (auto errors = engine::check_memory_fit(cfg, hw); !errors.empty()) throw BadInput(errors);
  return hw;
}

std::vector<ClusterState> reliability_states(const ScenarioConfig& cfg) {
  std::vector<ClusterState> states{{"healthy", cfg}};
  for (const FailureComponent& c : cfg.faults->components) {
    if (c.kind != FailureKind::kDegrade) continue;
    for (int s = 0; s < cfg.parallelism.pp; ++s) {
      const int host = stage_host(cfg, s);
      const std::string name = degraded_state_name(host, s, c);
      if (std::any_of(states.begin(), states.end(), [&](const ClusterState& x) { return x.name == name; })) continue;
      ClusterState state{name, cfg};
      ComputeStraggler slow;
      slow.list = {host};
      slow.slowdown = c.slowdown;
      slow.phase = c.phase;
      state.cfg.stragglers.hosts = slow;
      states.push_back(std::move(state));
    }
  }
  return states;
}

StateTimes state_iteration_times(const ScenarioConfig& cfg, const std::vector<ClusterState>& states,
                                 const calib::HardwareProfile& hw, IterationTimeFidelity fidelity, int jobs) {
  StateTimes out;
  out.fidelity = fidelity;
  out.iteration.resize(states.size());
  out.wall_s.resize(states.size());
  if (fidelity == IterationTimeFidelity::kAnalytical) {
    const engine::TrainingLevel level = engine::analytical_level();
    for (size_t i = 0; i < states.size(); ++i) {
      const auto start = std::chrono::steady_clock::now();
      out.iteration[i] = engine::simulate_stragglers(states[i].cfg, hw, level).iteration;
      out.wall_s[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    return out;
  }
  std::vector<FlowVariant> runs(states.size());
  std::vector<int64_t> todo;
  for (size_t i = 0; i < states.size(); ++i) todo.push_back(static_cast<int64_t>(i));
  sweep::WorkerPool pool(jobs, /*fork_always=*/true);
  pool.run(
      sweep::make_chunks(todo, jobs, 1),
      [&](int64_t i) {
        ScenarioConfig flow = states[i].cfg;
        flow.network.fidelity = Fidelity::kFlow;
        try {
          return encode_variant(run_flow_variant(states[i].name, flow, hw));
        } catch (const std::exception& e) {
          FlowVariant failed;
          failed.error = e.what();
          return encode_variant(failed);
        }
      },
      [&](int64_t i, const std::string& line) { runs[i] = decode_variant(line); },
      [&](int64_t i, const std::string& why) { runs[i].error = why; }, [] {});
  for (size_t i = 0; i < states.size(); ++i) {
    if (!runs[i].error.empty() || runs[i].iteration_s <= 0) {
      throw BadInput(scenario_error(cfg, "faults.iteration_time_fidelity",
                                    "the flow-level simulation of cluster state '" + states[i].name +
                                        "' failed: " + (runs[i].error.empty() ? "no iteration time" : runs[i].error)));
    }
    out.iteration[i] = Time::s(runs[i].iteration_s);
    out.wall_s[i] = runs[i].wall_s;
  }
  return out;
}

engine::ReliabilityInputs reliability_inputs(const ScenarioConfig& cfg, const std::vector<ClusterState>& states,
                                             const StateTimes& times) {
  assert(!states.empty() && times.iteration.size() == states.size() && "one time per state, healthy first");
  const FaultsConfig& f = *cfg.faults;
  const Time healthy = times.iteration.front();
  engine::ReliabilityInputs in;
  in.duration = f.duration;
  for (const FailureComponent& c : f.components) {
    engine::JobComponent j;
    j.spec = c;
    j.rate_per_s = job_rate_per_s(cfg, c);
    if (c.kind == FailureKind::kDegrade) {
      for (int s = 0; s < cfg.parallelism.pp; ++s) {
        const std::string name = degraded_state_name(stage_host(cfg, s), s, c);
        const auto it = std::find_if(states.begin(), states.end(), [&](const ClusterState& x) { return x.name == name; });
        assert(it != states.end() && "every degraded state comes from reliability_states");
        j.degraded_speed.push_back(healthy / max(healthy, times.iteration[static_cast<size_t>(it - states.begin())]));
      }
    }
    in.components.push_back(j);
  }
  const CheckpointConfig& ck = f.checkpoint;
  const Bytes size = ck.size.value_or(bytes_of(kCheckpointBytesPerParam * work::count_params(cfg.model).total));
  // validate_faults checked an explicit size; a size derived from the model is checked here,
  // before serialization_time, which would overflow on a write longer than ~106 days.
  if (std::vector<InputError> errors; validate_checkpoint_times(cfg, size, errors), !errors.empty()) {
    throw BadInput(errors);
  }
  const Time write = serialization_time(size, ck.write_bandwidth);
  if (ck.async) {
    const Bytes shard{size.n / cfg.cluster.gpus};
    in.checkpoint_blocking = ck.blocking.value_or(serialization_time(shard, ck.snapshot_bandwidth));
    in.checkpoint_async = write;
  } else {
    // A synchronous checkpoint blocks for its whole write: a shorter blocking time would lose it.
    if (ck.blocking && *ck.blocking < write) {
      throw BadInput(scenario_error(
          cfg, "faults.checkpoint.blocking",
          "a synchronous checkpoint (async: false) blocks for its whole write, size / write_bandwidth = " +
              to_string(write) + "; " + to_string(*ck.blocking) +
              " is shorter: remove blocking, or set async: true for a snapshot followed by a background write"));
    }
    in.checkpoint_blocking = ck.blocking.value_or(write);
  }
  const RecoveryConfig& rc = f.recovery;
  in.checkpoint_load = rc.checkpoint_load.value_or(serialization_time(size, ck.read_bandwidth.value_or(ck.write_bandwidth)));
  in.detection = rc.detection;
  in.hang_detection = rc.hang_detection;
  in.diagnosis = rc.diagnosis;
  in.reschedule = rc.reschedule;
  const double at = rc.comm_init_at_gpus > 0 ? rc.comm_init_at_gpus : cfg.cluster.gpus;
  in.comm_init = rc.comm_init_scaling == CommInitScaling::kLinear ? (cfg.cluster.gpus / at) * rc.comm_init : rc.comm_init;
  in.spare_hosts = rc.spare_hosts;
  in.repair_time = rc.repair_time;
  in.straggler_detection = rc.straggler_detection;
  in.straggler_threshold = rc.straggler_threshold;
  // A derived interval is never shorter than one iteration (nor than 1 s); nor may a configured one be.
  const Time floor = engine::checkpoint_interval_floor(f.iteration_time.value_or(healthy));
  if (ck.interval && *ck.interval < floor) {
    throw BadInput(scenario_error(cfg, "faults.checkpoint.interval",
                                  "must be at least one training iteration and at least 1s (" + to_string(floor) +
                                      "); got " + to_string(*ck.interval)));
  }
  if (!ck.interval && !engine::has_failures(in)) {
    // Without crashes or hangs the MTBF is infinite: checkpointing less is always better, and
    // Young/Daly (sqrt(2 x cost x MTBF)) has no optimum to derive the interval from.
    throw BadInput(scenario_error(cfg, "faults.checkpoint.interval",
                                  "no crash or hang component has a rate, so there is no Young/Daly optimum to "
                                  "derive the interval from; set it"));
  }
  // Derived: Young's, but never below one iteration, nor below the asynchronous write (a
  // checkpoint starts only when the previous one is written).
  // (Past the window, no checkpoint falls in it: the window is the longest that means anything.)
  in.checkpoint_interval = ck.interval.value_or(
      max(max(floor, in.checkpoint_async),
          Time::s(std::min(in.duration.as_s(),
                           engine::young_interval_s(in.checkpoint_blocking, engine::mean_time_between_failures_s(in))))));
  return in;
}

RunOutput run_reliability(const ScenarioConfig& cfg, const RunOptions& options) {
  return cfg.faults ? run_faults(cfg) : run_straggled_training(cfg, options);
}

namespace {

// `cfg` with the slow hosts and GPUs on `stage` repaired (other stragglers kept).
ScenarioConfig without_stage(const ScenarioConfig& cfg, int stage) {
  ScenarioConfig out = cfg;
  for (const char* source : {"hosts", "gpus"}) {
    const auto by_stage = engine::slow_units_by_stage(out, source);
    const auto it = by_stage.find(stage);
    if (it != by_stage.end()) out.stragglers = engine::without_units(out, source, it->second);
  }
  return out;
}

// `cfg` with only the slow hosts and GPUs on `stage`.
ScenarioConfig only_stage(const ScenarioConfig& cfg, int stage) {
  ScenarioConfig out = cfg;
  StragglersConfig only;
  only.seed = cfg.stragglers.seed;
  for (const char* source : {"hosts", "gpus"}) {
    const std::optional<ComputeStraggler>& entry = std::string(source) == "hosts" ? cfg.stragglers.hosts : cfg.stragglers.gpus;
    const auto by_stage = engine::slow_units_by_stage(cfg, source);
    const auto it = by_stage.find(stage);
    if (!entry || it == by_stage.end()) continue;
    ComputeStraggler c = *entry;
    c.list = it->second;
    c.fraction = 0.0;
    c.count = 0;
    (std::string(source) == "hosts" ? only.hosts : only.gpus) = c;
  }
  out.stragglers = only;
  return out;
}

// Stages holding a slow host or GPU, in order.
std::vector<int> slow_stages(const ScenarioConfig& cfg) {
  std::set<int> stages;
  for (const char* source : {"hosts", "gpus"}) {
    for (const auto& [stage, units] : engine::slow_units_by_stage(cfg, source)) stages.insert(stage);
  }
  return {stages.begin(), stages.end()};
}

std::string units_words(const std::vector<int>& hosts, const std::vector<int>& gpus) {
  std::string out;
  if (!hosts.empty()) out += (hosts.size() == 1 ? "host " : "hosts ") + list(hosts);
  if (!gpus.empty()) out += (out.empty() ? "" : ", ") + std::string(gpus.size() == 1 ? "GPU " : "GPUs ") + list(gpus);
  return out;
}

std::string mfu_points(double lost) { return fmt("%.2f pt", 100 * lost); }

// MFU points regained by removing what saves `saved` of the straggled iteration `all`.
double mfu_regained(const StragglerImpact& all, Time saved) {
  return all.baseline_mfu * (all.baseline / (all.iteration - saved)) - all.mfu;
}

}  // namespace

WhatIf run_whatif(const ScenarioConfig& cfg, const calib::HardwareProfile& hw, const engine::TrainingLevel& level,
                  int draws) {
  WhatIf w;
  w.all = engine::simulate_stragglers(cfg, hw, level);
  for (const std::string& source : engine::straggler_sources(cfg.stragglers)) {
    WhatIfRow row;
    row.source = source;
    ScenarioConfig one = cfg;
    one.stragglers = engine::only_source(cfg.stragglers, source);
    row.alone = engine::simulate_stragglers(one, hw, level);
    ScenarioConfig rest = cfg;
    rest.stragglers = engine::without_source(cfg.stragglers, source);
    row.saved_if_removed = w.all.iteration - engine::simulate_stragglers(rest, hw, level).iteration;
    row.cause = critical_words(cfg, source, row.alone);
    w.rows.push_back(row);
  }
  // By stage: the slow hosts and GPUs of each stage alone, and repaired with the rest still slow.
  const WhatIfStage* top = nullptr;
  for (const int stage : slow_stages(cfg)) {
    WhatIfStage st;
    st.stage = stage;
    const ScenarioConfig only = only_stage(cfg, stage);
    st.hosts = engine::slow_units(only, "hosts");
    st.gpus = engine::slow_units(only, "gpus");
    st.alone = engine::simulate_stragglers(only, hw, level);
    st.saved_if_removed = w.all.iteration - engine::simulate_stragglers(without_stage(cfg, stage), hw, level).iteration;
    w.stages.push_back(st);
  }
  // The cause: the stage whose slow hosts alone cost the most (ties: the one whose repair saves
  // more, then the later stage). The iteration waits for the slowest replica, so costs do not
  // add up: repairing one stage leaves the next costliest.
  for (const WhatIfStage& st : w.stages) {
    if (!top || st.alone.iteration > top->alone.iteration ||
        (st.alone.iteration == top->alone.iteration && st.saved_if_removed >= top->saved_if_removed)) {
      top = &st;
    }
  }
  // Another source (degraded NICs, uneven stages, a sequence imbalance) may cost more alone than
  // any stage's slow hosts: then it is the cause, and the slow hosts are not "the rest".
  // Only sources that cost something count (a configured one may cost nothing).
  const WhatIfRow* top_source = nullptr;
  bool others = false;
  for (const WhatIfRow& row : w.rows) {
    if (row.source == "hosts" || row.source == "gpus" || row.saved_if_removed <= Time::zero()) continue;
    others = true;
    if (!top_source || row.alone.iteration > top_source->alone.iteration) top_source = &row;
  }
  // MFU points lost, and regained by removing what saves `saved` of the iteration.
  const double lost = w.all.baseline_mfu - w.all.mfu;
  const auto regained_by = [&w](Time saved) { return mfu_regained(w.all, saved); };
  if (top_source && (!top || top_source->alone.iteration > top->alone.iteration) && w.all.iteration > w.all.baseline) {
    const double regained = regained_by(top_source->saved_if_removed);
    w.cause = "the straggler source '" + top_source->source + "': " +
              mfu_points(top_source->alone.baseline_mfu - top_source->alone.mfu) + " lost with it alone; removing it " +
              "regains " + mfu_points(regained) + " of the " + mfu_points(lost) + " lost";
    // What repairing slow hosts and GPUs would regain on top (GPU speed variation is no remedy):
    // the stage whose repair regains the most.
    const WhatIfStage* best = nullptr;
    for (const WhatIfStage& st : w.stages) {
      if (st.saved_if_removed > Time::zero() && (!best || st.saved_if_removed > best->saved_if_removed)) best = &st;
    }
    if (best) {
      w.cause += "; repairing the slow " + units_words(best->hosts, best->gpus) + " on " + stage_words(cfg, best->stage) +
                 " regains " + mfu_points(regained_by(best->saved_if_removed));
    }
  } else if (top && w.all.iteration > w.all.baseline) {
    const double regained = regained_by(top->saved_if_removed);
    const bool one = top->hosts.size() + top->gpus.size() == 1;
    w.cause = "the slow " + units_words(top->hosts, top->gpus) + " on " + stage_words(cfg, top->stage) + ": " +
              mfu_points(top->alone.baseline_mfu - top->alone.mfu) + " lost with " + (one ? "it" : "them") +
              " alone; repairing " + (one ? "it" : "them") + " regains " + mfu_points(regained) + " of the " +
              mfu_points(lost) + " lost";
    const WhatIfStage* next = nullptr;
    for (const WhatIfStage& st : w.stages) {
      if (&st != top && (!next || st.alone.iteration > next->alone.iteration)) next = &st;
    }
    if (next && regained < lost - 5e-5) {
      w.cause += ", the rest is the slow " + units_words(next->hosts, next->gpus) + " on stage " + std::to_string(next->stage) +
                 " (alone " + mfu_points(next->alone.baseline_mfu - next->alone.mfu) + "), which the iteration then waits for";
    }
    if (others && regained < lost - 5e-5) w.cause += std::string(next ? "," : ";") + " and the other sources (see 'sources')";
  }
  if (draws > 1) w.draws = placement_draws(cfg, hw, level, draws);
  return w;
}

WhatIfDraws placement_draws(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                            const engine::TrainingLevel& level, int draws) {
  WhatIfDraws out;
  out.placements = cfg.stragglers.units_drawn();
  std::vector<double> lost, beyond;
  const bool variation = cfg.stragglers.variation_with_others();
  for (int k = 0; k < draws; ++k) {
    ScenarioConfig c = cfg;
    c.stragglers.seed = cfg.stragglers.seed + static_cast<uint64_t>(k);
    const engine::StragglerImpact s = engine::simulate_stragglers(c, hw, level);
    lost.push_back(s.baseline_mfu - s.mfu);
    if (variation) beyond.push_back(s.variation_mfu - s.mfu);
    // The named stage: the slowed stage that costs the most, or with none slowed (GPU speed
    // variation, uneven stages) the replica's bottleneck stage.
    if (s.critical.stage == cfg.parallelism.pp - 1 && s.critical.replica >= 0) ++out.last_stage;
  }
  summarise_draws(lost, out);
  if (!beyond.empty()) out.beyond_variation = spread_of(beyond);
  return out;
}

Json whatif_json(const ScenarioConfig& cfg, const WhatIf& w) {
  Json j = Json::object();
  j.set("kind", "whatif");
  j.set("scenario", cfg.name.empty() ? cfg.file : cfg.name);
  j.set("all", impact_json(cfg, "all", w.all));
  Json& rows = j.set("sources", Json::array());
  for (const WhatIfRow& r : w.rows) {
    Json row = impact_json(cfg, r.source, r.alone);
    row.set("source", r.source);
    row.set("saved_if_removed_s", r.saved_if_removed.as_s());
    row.set("mfu_regained_if_removed", mfu_regained(w.all, r.saved_if_removed));
    rows.push(row);
  }
  Json& stages = j.set("stages", Json::array());
  for (const WhatIfStage& st : w.stages) {
    Json row = Json::object();
    row.set("stage", st.stage);
    row.set("hosts", index_array(st.hosts));
    row.set("gpus", index_array(st.gpus));
    row.set("alone_iteration_time_s", st.alone.iteration.as_s());
    row.set("alone_mfu_lost", st.alone.baseline_mfu - st.alone.mfu);
    row.set("saved_if_removed_s", st.saved_if_removed.as_s());
    row.set("mfu_regained_if_removed", mfu_regained(w.all, st.saved_if_removed));
    stages.push(row);
  }
  j.set("cause", w.cause);
  if (w.draws.count > 0) j.set("draws", draws_json(w.draws));
  return j;
}

std::string whatif_table(const ScenarioConfig& cfg, const WhatIf& w) {
  std::ostringstream o;
  o << "scenario   " << (cfg.name.empty() ? cfg.file : cfg.name) << "\n";
  o << "baseline   iteration " << to_string(w.all.baseline) << fmt(", MFU %.2f%% (no stragglers)\n\n", 100 * w.all.baseline_mfu);
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %12s %9s %10s %12s %10s  %s\n", "source", "iteration", "slowdown", "MFU lost",
                "if removed", "regained", "critical path");
  o << line;
  auto print = [&](const std::string& name, const StragglerImpact& s, Time saved, const std::string& cause) {
    std::snprintf(line, sizeof line, "%-20s %12s %8.2f%% %7.2f pt %12s %7.2f pt  ", name.c_str(),
                  to_string(s.iteration).c_str(), 100 * (s.slowdown() - 1), 100 * (s.baseline_mfu - s.mfu),
                  to_string(saved).c_str(), 100 * mfu_regained(w.all, saved));
    o << line << cause << "\n";
  };
  for (const WhatIfRow& r : w.rows) print(r.source, r.alone, r.saved_if_removed, r.cause);
  print("all", w.all, w.all.iteration - w.all.baseline, critical_words(cfg, "all", w.all));
  if (!w.stages.empty()) {
    o << (cfg.stragglers.variation ? "\nby stage (its slow hosts/GPUs alone, on identical GPUs; and repaired, the others and the "
                                     "variation kept)\n"
                                   : "\nby stage (its slow hosts/GPUs alone; and repaired, the others still slow)\n");
    std::snprintf(line, sizeof line, "%-20s %12s %9s %10s %12s %10s  %s\n", "stage", "alone", "slowdown", "MFU lost",
                  "if repaired", "regained", "slow hosts / GPUs");
    o << line;
    for (const WhatIfStage& st : w.stages) {
      const std::string name = "stage " + std::to_string(st.stage) + (st.stage == cfg.parallelism.pp - 1 ? " (LM head)" : "");
      print(name, st.alone, st.saved_if_removed, units_words(st.hosts, st.gpus));
    }
  }
  if (!w.cause.empty()) o << "\ncause      " << w.cause << "\n";
  if (!w.all.slow_hosts.empty()) o << "\nslow hosts " << list(w.all.slow_hosts, 64) << "\n";
  if (w.draws.count > 0) o << draws_words(w.draws, cfg.stragglers.seed);
  return o.str();
}

}  // namespace clustersim::report

namespace clustersim::report {

namespace {
constexpr const char* kLinksSource = "links";  // network.faults, as a what-if source
}  // namespace

std::vector<std::pair<std::string, ScenarioConfig>> flow_whatif_variants(const ScenarioConfig& cfg, int draws) {
  std::vector<std::pair<std::string, ScenarioConfig>> out;
  ScenarioConfig c = cfg;
  c.network.fidelity = Fidelity::kFlow;
  ScenarioConfig clean = c;
  clean.stragglers = StragglersConfig{};
  clean.network.faults.clear();
  // The baseline folds as the variants do (training.fold_ranks), so the two compare like with like.
  // Folded, every replica's pipeline sends start in step with the representative's and meet its
  // ECMP collisions each time, where unfolded replicas drift apart: on stragglers-175b-12288 the
  // folded baseline is 0.5% slower than the unfolded one (6.352 s against 6.321 s) while the
  // straggled runs agree (6.494 s against 6.497 s), so the folded cost is 0.3 point low there
  // (1.22 against 1.51); an unfolded baseline beside folded variants could make a slow host look
  // like a speed-up where folding errs the other way (docs/results.md).
  out.emplace_back("baseline", clean);
  out.emplace_back("all", c);
  // Degraded or failed fabric elements (network.faults) are one more source, "links".
  std::vector<std::string> sources = engine::straggler_sources(cfg.stragglers);
  if (!cfg.network.faults.empty()) sources.push_back(kLinksSource);
  if (sources.size() > 1) {
    for (const std::string& source : sources) {
      const bool links = source == kLinksSource;
      ScenarioConfig one = c;
      one.stragglers = links ? StragglersConfig{} : engine::only_source(cfg.stragglers, source);
      if (!links) one.network.faults.clear();
      out.emplace_back(source, one);
      ScenarioConfig rest = c;
      if (links) {
        rest.network.faults.clear();
      } else {
        rest.stragglers = engine::without_source(cfg.stragglers, source);
      }
      out.emplace_back("all but " + source, rest);
    }
  }
  // Per stage holding slow hosts or GPUs (when several do): that stage's repaired.
  const std::vector<int> stages = slow_stages(cfg);
  if (stages.size() > 1) {
    for (const int stage : stages) out.emplace_back("all but stage " + std::to_string(stage), without_stage(c, stage));
  }
  for (int k = 1; k < draws; ++k) {
    ScenarioConfig d = c;
    d.stragglers.seed = cfg.stragglers.seed + static_cast<uint64_t>(k);
    out.emplace_back("all, seed " + std::to_string(d.stragglers.seed), d);
  }
  return out;
}

FlowVariant run_flow_variant(const std::string& name, const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  FlowVariant v;
  v.name = name;
  engine::FlowTrainingOptions options;
  options.keep_spans = false;
  const engine::FlowTrainingResult f = engine::simulate_training(cfg, hw, options);
  v.iteration_s = f.estimate.iteration.as_s();
  v.mfu = f.estimate.mfu;
  v.wall_s = f.wall_seconds;
  v.rank_groups = static_cast<int>(f.rank_groups);
  v.critical = flow_critical_words(f);
  for (const std::string& g : f.straggling_groups) v.straggling += (v.straggling.empty() ? "" : ", ") + g;
  v.links = flow_link_words(f);
  v.critical_stage = flow_critical_stage(f);
  if (name.rfind("all but stage ", 0) == 0) v.repaired_stage = std::atoi(name.c_str() + 14);
  return v;
}

namespace {

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\t', ' ');
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

std::string encode_variant(const FlowVariant& v) {
  char num[320];
  std::snprintf(num, sizeof num, "iteration_s=%.17g\tmfu=%.17g\twall_s=%.6g\trank_groups=%d\tcritical_stage=%d\trepaired_stage=%d",
                v.iteration_s, v.mfu, v.wall_s, v.rank_groups, v.critical_stage, v.repaired_stage);
  return "name=" + one_line(v.name) + "\t" + num + "\tcritical=" + one_line(v.critical) +
         "\tstraggling=" + one_line(v.straggling) + "\tlinks=" + one_line(v.links) + "\terror=" + one_line(v.error);
}

FlowVariant decode_variant(const std::string& line) {
  FlowVariant v;
  size_t start = 0;
  while (start <= line.size()) {
    size_t tab = line.find('\t', start);
    if (tab == std::string::npos) tab = line.size();
    const std::string field = line.substr(start, tab - start);
    const size_t eq = field.find('=');
    if (eq != std::string::npos) {
      const std::string key = field.substr(0, eq), value = field.substr(eq + 1);
      if (key == "name") v.name = value;
      if (key == "iteration_s") v.iteration_s = std::strtod(value.c_str(), nullptr);
      if (key == "mfu") v.mfu = std::strtod(value.c_str(), nullptr);
      if (key == "wall_s") v.wall_s = std::strtod(value.c_str(), nullptr);
      if (key == "rank_groups") v.rank_groups = std::atoi(value.c_str());
      if (key == "critical_stage") v.critical_stage = std::atoi(value.c_str());
      if (key == "repaired_stage") v.repaired_stage = std::atoi(value.c_str());
      if (key == "critical") v.critical = value;
      if (key == "straggling") v.straggling = value;
      if (key == "links") v.links = value;
      if (key == "error") v.error = value;
    }
    start = tab + 1;
  }
  return v;
}

namespace {

// What the flow variants add up to: the draws, each repaired stage's regain and the cause.
struct FlowSummary {
  WhatIfDraws draws;                  // over "all" and "all, seed K" (count 0 with one)
  std::vector<const FlowVariant*> stages;  // "all but stage N", in order
  std::string cause;
};

// The variant named `name` that ran, or null.
const FlowVariant* find_variant(const std::vector<FlowVariant>& variants, const std::string& name) {
  for (const FlowVariant& v : variants) {
    if (v.error.empty() && v.name == name) return &v;
  }
  return nullptr;
}

FlowSummary flow_summary(const ScenarioConfig& cfg, const std::vector<FlowVariant>& variants) {
  FlowSummary out;
  out.draws.placements = cfg.stragglers.units_drawn();
  if (variants.size() < 2 || !variants[0].error.empty()) return out;
  const FlowVariant& base = variants[0];
  const FlowVariant* all = nullptr;
  std::vector<double> lost;
  for (const FlowVariant& v : variants) {
    if (!v.error.empty()) continue;
    if (v.name == "all") all = &v;
    if (v.name == "all" || v.name.rfind("all, seed", 0) == 0) {
      lost.push_back(base.mfu - v.mfu);
      if (v.critical_stage == cfg.parallelism.pp - 1) ++out.draws.last_stage;
    }
    if (v.repaired_stage >= 0) out.stages.push_back(&v);
  }
  if (lost.size() > 1) summarise_draws(lost, out.draws);
  if (!all || all->iteration_s <= base.iteration_s) return out;
  // The stage whose repair regains the most; with a single stage holding stragglers, the
  // straggling stage on the critical path.
  int stage = all->critical_stage;
  double regained = -1;
  const FlowVariant* repaired = nullptr;
  for (const FlowVariant* v : out.stages) {
    if (v->mfu - all->mfu > regained) {
      regained = v->mfu - all->mfu;
      stage = v->repaired_stage;
      repaired = v;
    }
  }
  // Degraded links (network.faults): named when repairing them regains more than any stage's
  // slow hosts, or when they are the only source.
  const std::vector<std::string> sources = engine::straggler_sources(cfg.stragglers);
  if (!cfg.network.faults.empty()) {
    const FlowVariant* but_links = find_variant(variants, "all but links");
    const double links_regain = but_links ? but_links->mfu - all->mfu : base.mfu - all->mfu;
    const bool only_links = sources.empty();
    // What repairing any other source (or one stage's slow hosts) regains.
    double others = std::max(regained, 0.0);
    for (const std::string& source : sources) {
      if (const FlowVariant* v = find_variant(variants, "all but " + source)) others = std::max(others, v->mfu - all->mfu);
    }
    if (only_links || links_regain > others) {
      std::string elements;
      for (const FabricFault& f : cfg.network.faults) elements += (elements.empty() ? "" : ", ") + f.element;
      out.cause = "the degraded links (network.faults: " + elements + ")" +
                  (only_links ? ": " + mfu_points(base.mfu - all->mfu) + " lost"
                              : ": repairing them regains " + mfu_points(links_regain) + " of the " +
                                    mfu_points(base.mfu - all->mfu) + " lost");
      return out;
    }
  }
  // The slow hosts and GPUs of the named stage.
  std::vector<int> hosts, gpus;
  if (stage >= 0) {
    if (const auto h = engine::slow_units_by_stage(cfg, "hosts"); h.count(stage)) hosts = h.at(stage);
    if (const auto g = engine::slow_units_by_stage(cfg, "gpus"); g.count(stage)) gpus = g.at(stage);
  }
  // Another source (GPU speed variation, degraded NICs, uneven stages, a sequence imbalance)
  // that costs more alone than the slow hosts and GPUs: the cause, as at the analytical level,
  // followed by what repairing the slow hosts regains.
  const bool several = sources.size() > 1;
  std::string top_source;
  double top_alone = 0, compute_alone = 0;
  for (const std::string& source : sources) {
    const FlowVariant* v = several ? find_variant(variants, source) : all;
    if (!v) continue;
    const double alone = base.mfu - v->mfu;
    if (source == "hosts" || source == "gpus") {
      compute_alone = std::max(compute_alone, alone);
    } else if (alone > top_alone) {
      top_alone = alone;
      top_source = source;
    }
  }
  if (!top_source.empty() && top_alone > compute_alone) {
    out.cause = "the straggler source '" + top_source + "': " + mfu_points(top_alone) + " lost with it alone";
    if (const FlowVariant* rest = several ? find_variant(variants, "all but " + top_source) : nullptr) {
      out.cause += "; removing it regains " + mfu_points(rest->mfu - all->mfu) + " of the " +
                   mfu_points(base.mfu - all->mfu) + " lost";
    }
    // What repairing the slow hosts and GPUs regains: the best stage's, or all of them (one stage).
    if (repaired && stage >= 0) {
      out.cause += "; repairing the slow " + units_words(hosts, gpus) + " on " + stage_words(cfg, stage) + " regains " +
                   mfu_points(regained);
    } else {
      for (const char* source : {"hosts", "gpus"}) {
        if (const FlowVariant* rest = find_variant(variants, std::string("all but ") + source)) {
          out.cause += "; repairing the slow " + std::string(source) + " regains " + mfu_points(rest->mfu - all->mfu);
        }
      }
    }
    return out;
  }
  if (stage < 0) return out;
  const bool one = hosts.size() + gpus.size() == 1;
  out.cause = "the slow " + units_words(hosts, gpus) + " on " + stage_words(cfg, stage);
  out.cause += regained >= 0 ? std::string(": repairing ") + (one ? "it" : "them") + " regains " + mfu_points(regained) +
                                   " of the " + mfu_points(base.mfu - all->mfu) + " lost"
                             : std::string(": ") + (one ? "its rank group has" : "their rank groups have") +
                                   " the most compute on the critical path";
  if (repaired && repaired->critical_stage >= 0 && repaired->critical_stage != stage && base.mfu - repaired->mfu > 5e-5) {
    out.cause += ", the rest is the slow hosts on stage " + std::to_string(repaired->critical_stage) +
                 ", which the iteration then waits for";
  }
  return out;
}

}  // namespace

Json whatif_flow_json(const ScenarioConfig& cfg, const std::vector<FlowVariant>& variants) {
  Json j = Json::object();
  j.set("kind", "whatif");
  j.set("fidelity", "flow");
  j.set("scenario", cfg.name.empty() ? cfg.file : cfg.name);
  const FlowVariant* base = variants.empty() ? nullptr : &variants.front();
  Json& rows = j.set("variants", Json::array());
  for (const FlowVariant& v : variants) {
    Json row = Json::object();
    row.set("variant", v.name);
    if (!v.error.empty()) {
      row.set("error", v.error);
      rows.push(row);
      continue;
    }
    row.set("iteration_time_s", v.iteration_s);
    row.set("mfu", v.mfu);
    if (base && base->error.empty()) {
      row.set("slowdown", v.iteration_s / base->iteration_s);
      row.set("mfu_lost", base->mfu - v.mfu);
    }
    row.set("rank_groups_simulated", v.rank_groups);
    row.set("wall_time_s", v.wall_s);
    row.set("critical_path", v.critical);
    row.set("critical_stage", v.critical_stage);
    row.set("straggling_groups", v.straggling);
    row.set("links", v.links);
    rows.push(row);
  }
  const FlowSummary sum = flow_summary(cfg, variants);
  j.set("cause", sum.cause);
  if (sum.draws.count > 1) j.set("draws", draws_json(sum.draws));
  return j;
}

std::string whatif_flow_table(const ScenarioConfig& cfg, const std::vector<FlowVariant>& variants) {
  std::ostringstream o;
  o << "scenario   " << (cfg.name.empty() ? cfg.file : cfg.name) << " (flow level: one detailed simulation per variant)\n";
  if (variants.empty()) return o.str();
  const FlowVariant& base = variants.front();
  if (!base.error.empty()) return o.str() + "baseline failed: " + base.error + "\n";
  o << "baseline   iteration " << to_string(Time::s(base.iteration_s))
    << fmt(cfg.network.faults.empty() ? ", MFU %.2f%% (no stragglers)\n\n" : ", MFU %.2f%% (no stragglers, no network.faults)\n\n",
           100 * base.mfu);
  char line[512];
  std::snprintf(line, sizeof line, "%-20s %12s %9s %10s %7s %8s\n", "variant", "iteration", "slowdown", "MFU lost", "groups",
                "wall");
  o << line;
  for (size_t i = 1; i < variants.size(); ++i) {
    const FlowVariant& v = variants[i];
    if (!v.error.empty()) {
      o << v.name << ": failed: " << v.error << "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "%-20s %12s %8.2f%% %7.2f pt %7d %7.1fs\n", v.name.c_str(),
                  to_string(Time::s(v.iteration_s)).c_str(), 100 * (v.iteration_s / base.iteration_s - 1),
                  100 * (base.mfu - v.mfu), v.rank_groups, v.wall_s);
    o << line;
    if (!v.critical.empty()) o << "    " << v.critical << "\n";
    if (!v.links.empty()) o << "    links: " << v.links << "\n";
  }
  if (!variants[1].straggling.empty()) o << "\nstraggling rank groups  " << variants[1].straggling << "\n";
  const FlowSummary sum = flow_summary(cfg, variants);
  if (!sum.cause.empty()) o << "\ncause      " << sum.cause << "\n";
  if (sum.draws.count > 1) {
    o << draws_words(sum.draws, cfg.stragglers.seed);
  } else if (cfg.stragglers.drawn()) {
    const bool units = cfg.stragglers.units_drawn();
    const std::string what = units && cfg.stragglers.variation ? "where the drawn hosts land and on the drawn GPU speeds"
                             : units                           ? "where the drawn hosts land"
                                                               : "the drawn GPU speeds";
    o << fmt("\none draw (seed %.0f); the cost depends on ", static_cast<double>(cfg.stragglers.seed)) + what +
             ": --draws N redraws them (the analytical level draws 100 by default)\n";
  }
  // Replicas that run in perfect lockstep meet each other's ECMP collisions every time; any speed
  // spread desynchronises them, which alone can move the flow level's iteration by several percent
  // either way where TP or CP groups span nodes.
  const FlowVariant* all_variant = find_variant(variants, "all");
  if (cfg.stragglers.variation && all_variant && all_variant->iteration_s < base.iteration_s) {
    o << "\nnote       with the GPU speed variation the run is faster than the baseline: the baseline's replicas run "
         "in lockstep and meet each other's ECMP collisions every time, which any speed spread breaks up "
         "(several percent where TP or CP groups span nodes); compare variants that all have the variation\n";
  }
  return o.str();
}

}  // namespace clustersim::report
