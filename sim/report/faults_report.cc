// SPDX-License-Identifier: Apache-2.0
#include "sim/report/faults_report.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>
#include <thread>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"
#include "sim/report/internal/html_text.h"
#include "sim/report/internal/straggler_words.h"
#include "sim/report/run_scenario.h"
#include "sim/report/training_report.h"
#include "sim/report/whatif_report.h"
#include "topology/fabric.h"
#include "workloads/placement.h"
#include "workloads/transformer.h"

namespace clustersim::report {
namespace {

using engine::LossCause;
using engine::StragglerImpact;
using internal::critical_words;
using internal::flow_critical_words;
using internal::flow_link_words;
using internal::flow_pacing_representative;
using internal::impact_json;
using internal::index_array;
using internal::representative_pacing_words;
constexpr auto fmt = &internal::format_number;

// Checkpoint bytes per parameter: BF16 weights (2) + FP32 master weights, Adam m and v (12), as
// mixed-precision Adam keeps them (Rajbhandari et al., "ZeRO", SC'20, section 3.1: 2 + 2 + 12
// bytes per parameter in training, of which the 16-bit gradients are not saved).
constexpr double kCheckpointBytesPerParam = 14.0;

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

// The 95% interval of the mean, its low end clamped at 0 for a quantity that cannot be negative
// (a count, a time); null over one seed, where there is none (Student t needs two samples).
// `cap`: the most the quantity can be (the CI's upper end stops there).
Json ci_pair(const engine::MeanCi& c, bool defined, bool non_negative = true,
             double cap = std::numeric_limits<double>::infinity()) {
  if (!defined) return Json();
  Json a = Json::array();
  a.push(non_negative ? std::max(0.0, c.mean - c.half_width) : c.mean - c.half_width);
  // The cap never below the mean: a cap computed apart from it (1 - mean ETTR against the mean of
  // the seeds' gains) can round an ulp under it, and the interval came out inverted where every
  // seed was alike (QA, 2026-12-08: rate_scale 1e-9).
  a.push(std::max(c.mean, std::min(cap, c.mean + c.half_width)));
  return a;
}


// A flow-level training run with the scenario's stragglers (one simulation: the straggler-free
// iteration needs a second one, which `clustersim whatif` runs in another process).
RunOutput run_straggled_flow(const ScenarioConfig& cfg, const calib::HardwareProfile& hw) {
  const engine::FlowTrainingResult flow = engine::simulate_training(cfg, hw);
  RunOutput out = flow_training_output(cfg, hw, flow);
  add_flow_fold_notes(cfg, flow, out);
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
  const std::string paced = flow_pacing_representative(flow);
  if (!paced.empty()) s.set("representative_paces", paced);
  const size_t slow_groups = flow.straggling_groups.size();
  // An uneven layer split alone is the plan simulated, not a straggler (2026-12-07).
  if (cfg.stragglers.only_stage_layers()) {
    out.summary += "\nstage_layers the uneven split simulated (stragglers.stage_layers); 'clustersim whatif' compares it "
                   "with the even split\n             " + flow_critical_words(flow) + "\n";
    return;
  }
  out.summary += "\nstragglers   " + std::to_string(slow_groups) + (slow_groups == 1 ? " rank group" : " rank groups") +
                 " with slow hosts or GPUs" +
                 (flow.folded ? ", " + std::to_string(flow.unfolded_replicas) + " replicas simulated on their own" : "") +
                 (cfg.stragglers.variation
                      ? fmt("; every rank group at its slowest GPU's own speed (variation spread %.3f)",
                            cfg.stragglers.variation->spread)
                      : "") +
                 "\n             " + flow_critical_words(flow) + "\n" +
                 (flow.degraded_links.empty() ? "" : "             " + flow_link_words(flow, 0) + "\n") +
                 (paced.empty() ? "" : "             note: " + representative_pacing_words(paced) + "\n") +
                 "             (one simulation, with stragglers; 'clustersim whatif' runs the straggler-free one too)\n";
}

namespace {

// A plain training run whose iteration is slowed by the scenario's stragglers.
RunOutput run_straggled_training(const ScenarioConfig& cfg, const RunOptions& options) {
  const calib::HardwareProfile hw = training_profile(cfg);
  if (cfg.network.fidelity == Fidelity::kFlow) return run_straggled_flow(cfg, hw);
  // Drawn stragglers cost what their placement makes them cost: the seed's placement, and the
  // spread over placements (milliseconds at this level, unless micro-batches are many).
  const bool draw_placements = options.placement_draws && cfg.stragglers.drawn_slow();
  const int runs = 1 + (draw_placements ? kDefaultPlacementDraws : 0);
  engine::check_replay_work(
      cfg, "stragglers", runs, runs * engine::replay_passes(cfg),
      draw_placements ? "the seed's placement and " + std::to_string(kDefaultPlacementDraws) + " drawn for the spread"
                      : "the scenario's stragglers",
      draw_placements ? ", or list the slow hosts and GPUs (stragglers.hosts.list, gpus.list: one placement)" : "");
  const engine::TrainingLevel level = engine::analytical_level();
  ScenarioConfig clean = cfg;
  clean.stragglers = StragglersConfig{};
  engine::TrainingEstimate est = level(clean, hw);
  // Listed stage layers change what the most loaded stage holds, a sequence imbalance what its
  // heaviest replicas do (the nominal sequences' until 2026-12-05: 44.1 GiB reported where the
  // heavy replicas of max_over_mean 2 need 82.7); the other sources leave memory be.
  est.memory = work::most_loaded_memory_per_gpu(cfg);
  const StragglerImpact s = engine::simulate_stragglers(cfg, hw, level);
  RunOutput out;
  const double scale = s.baseline / s.iteration;
  const SlowedHeadline slowed{s.iteration, est.tokens_per_s * scale, s.mfu, est.hfu * scale};
  out.results = training_results(cfg, hw, est, slowed);
  Json& block = out.results.set("stragglers", impact_json(cfg, "all", s));
  const WhatIfDraws placements =
      draw_placements ? placement_draws(cfg, hw, level, kDefaultPlacementDraws) : WhatIfDraws{};
  if (placements.count > 0) block.set("placements", draws_json(placements));
  out.summary = training_summary(cfg, hw, est, slowed);
  // Listed stage layers can balance better than the even split: then the run is faster.
  const bool faster = s.iteration < s.baseline;
  // An uneven split alone is the plan: named as such (it read "stragglers" until 2026-12-07).
  out.summary += std::string(cfg.stragglers.only_stage_layers() ? "\nstage_layers iteration " : "\nstragglers   iteration ") +
                 to_string(s.iteration) +
                 fmt(faster ? " (%.2f%% faster" : " (%.2f%% slower", 100 * std::abs(s.slowdown() - 1)) +
                 (cfg.stragglers.only_stage_layers() ? " than the even split), " : "), ") +
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
  // The straggled figures; a flow run keeps its other metrics (`folded`).
  out.metrics["iteration_time_s"] = slowed.iteration.as_s();
  out.metrics["tokens_per_s"] = slowed.tokens_per_s;
  out.metrics["mfu"] = slowed.mfu;
  out.metrics["hfu"] = slowed.hfu;
  return out;
}

// Where the job's NICs carry less than storage: "each write at the job's NICs' ..., below
// write_bandwidth's ...; each load at ...", naming what sets each rate; empty otherwise.
std::string nic_bound_words(const ScenarioConfig& cfg) {
  const CheckpointConfig& ck = cfg.faults->checkpoint;
  const Bandwidth read = ck.read_bandwidth.value_or(ck.write_bandwidth);
  const std::string read_key = ck.read_bandwidth ? "read_bandwidth" : "write_bandwidth";
  const bool write_bound = checkpoint_nic_bound(cfg, ck.write_bandwidth);
  const bool read_bound = !cfg.faults->recovery.checkpoint_load && checkpoint_nic_bound(cfg, read);
  if (write_bound && read_bound && !ck.read_bandwidth) {
    return "each write and load at " + checkpoint_rate_words(cfg, ck.write_bandwidth, "write_bandwidth");
  }
  std::string out;
  if (write_bound) out += "each write at " + checkpoint_rate_words(cfg, ck.write_bandwidth, "write_bandwidth");
  if (read_bound) out += (out.empty() ? "" : "; ") + std::string("each load at ") + checkpoint_rate_words(cfg, read, read_key);
  return out;
}

// The hosts away at once that cover 99% of the time, for `mean` away on average: hosts sent to
// repair as a Poisson stream, each away a repair time, are an M/G/infinity queue, whose occupancy
// is Poisson with mean arrival rate x mean service time whatever the service time's distribution
// (Palm's theorem; e.g. Kleinrock, Queueing Systems vol. 1, 1975). The smallest n with
// P(X <= n) >= 0.99, summing the pmf from exp(-mean) (it would underflow past a mean of about
// 745); past a mean of 500 the normal approximation mean + 2.326 sqrt(mean), within a host there.
int hosts_away_99(double mean) {
  if (mean <= 0) return 0;
  if (mean > 500) return static_cast<int>(std::ceil(mean + 2.326 * std::sqrt(mean)));
  double pmf = std::exp(-mean), cdf = pmf;
  int n = 0;
  while (cdf < 0.99) {
    ++n;
    pmf *= mean / n;
    cdf += pmf;
  }
  return n;
}

// The best interval's ETTR against this run's interval, in points, seed by seed: "within the
// seeds' noise" when the 95% CI of the mean gain reaches 0 (a best found among many intervals
// tried is a little optimistic: read it as an upper bound).
// `same`: the best is this run's own interval (a tie with another read as it until 2026-12-06).
// `cap`: the largest gain possible, 1 - this run's mean ETTR (the CI's upper end stops there: it
// read +107 points of a possible 86 until 2026-12-06).
std::string gain_words(const engine::MeanCi& gain, const std::vector<double>& by_seed, bool has_ci, bool same,
                       double cap) {
  if (by_seed.empty()) return "";
  if (gain.mean == 0 && (!has_ci || gain.half_width == 0)) {
    return same ? ", this run's interval" : ", the same as this run's interval";
  }
  std::string words = fmt(", %+.2f points over this run's interval", 100 * gain.mean);
  if (!has_ci) return words + ", one seed";
  words += fmt(", 95%% CI %+.2f", 100 * (gain.mean - gain.half_width)) +
           fmt(" to %+.2f", 100 * std::min(cap, gain.mean + gain.half_width));
  return words + (gain.mean - gain.half_width <= 0 ? ": within the seeds' noise" : "");
}

// What the sweep's best is when it is an edge of the intervals tried (empty when a maximum lies
// between two of them): an edge is no optimum, and the reader should know which one it is.
std::string sweep_edge_words(const engine::IntervalSweep& sweep, const engine::ReliabilityInputs& in, Time iteration) {
  switch (sweep.best_at) {
    case engine::SweepEdge::kInterior: return "";
    case engine::SweepEdge::kFloor:
      return "\n                     the shortest interval simulated (" +
             std::string(in.checkpoint_async > engine::checkpoint_interval_floor(iteration)
                             ? "the asynchronous write: a checkpoint starts only when the previous one is written"
                             : "one iteration, and at least 1 s") +
             "): checkpoint as often as the job allows";
    case engine::SweepEdge::kWindow:
      return "\n                     the longest interval simulated (the window): no checkpoint within it does best";
    case engine::SweepEdge::kSweepEnd:
      return "\n                     at the end of the intervals tried (" + to_string(sweep.intervals.front()) + " to " +
             to_string(sweep.intervals.back()) + ", 1/64 to 64 x the centre at most): the optimum lies beyond";
  }
  return "";
}

}  // namespace

void check_failure_budget(const ScenarioConfig& cfg) {
  const FaultsConfig& f = *cfg.faults;
  double per_s = 0;
  double slow_per_s = 0;  // degrade components' arrivals
  bool sweeps = false;    // crashes or hangs: the checkpoint interval is swept (else the run's interval alone)
  for (const FailureComponent& c : f.components) {
    const double rate = job_rate_per_s(cfg, c);
    per_s += rate;
    if (c.kind == FailureKind::kDegrade) slow_per_s += rate;
    if ((c.kind == FailureKind::kCrash || c.kind == FailureKind::kHang) && rate > 0) sweeps = true;
  }
  const double per_window = per_s * f.duration.as_s();
  const double slow_per_window = slow_per_s * f.duration.as_s();
  // In failures' worth of work: a slow host counts kSlowHostCost.
  const double work_per_window = per_window + (kSlowHostCost - 1) * slow_per_window;
  constexpr double kMaxPerWindow = 1e7;
  constexpr double kMaxTotal = 1e9;
  // "(x of them slow hosts, ... each: y in all)" where degrade components arrive.
  const std::string slow_words =
      slow_per_window > 0 ? fmt(", %.3g of them slow hosts (degrade components), which cost ", slow_per_window) +
                                fmt("about %.0f failures' work each: ", kSlowHostCost) + fmt("%.3g in all", work_per_window)
                          : std::string();
  if (work_per_window > kMaxPerWindow) {
    // Blamed on rate_scale where it scales the rates up, else on the component that brings the
    // most (it was always rate_scale, a key the scenario may not set; 2026-12-06 review).
    const FailureComponent* most = nullptr;
    for (const FailureComponent& c : f.components) {
      if (!most || job_rate_per_s(cfg, c) > job_rate_per_s(cfg, *most)) most = &c;
    }
    const std::string most_key = "faults.components." + most->name + ".rate_per_day";
    const std::string most_words = fmt(", %.3g of them from ", job_rate_per_s(cfg, *most) * f.duration.as_s()) + most_key;
    throw BadInput(scenario_error(cfg, f.rate_scale > 1 ? "faults.rate_scale" : most_key,
                                  fmt("the job would see about %.3g failures in faults.duration (one every ", per_window) +
                                      fmt("%.3g s", 1.0 / per_s) + most_words + slow_words +
                                      "); at most 1e7 per window are simulated: lower rate_scale, the components' "
                                      "rates or duration"));
  }
  // The run's window and the sweep's intervals: sweep_points, up to sweep_points - 1 more where
  // the best lies at the grid's end, and the 2 whole-iteration intervals around its optimum.
  // Without crashes or hangs the sweep is the configured interval alone: the run and it.
  // With them: the grid, up to sweep_points - 1 more steps, 2 around the optimum and the run's own
  // interval where the grid misses it, besides the run.
  const double per_seed = sweeps ? 2.0 * f.sweep_points + 3.0 : 2.0;
  const double windows = static_cast<double>(f.seeds) * per_seed;
  if (work_per_window * windows > kMaxTotal) {
    throw BadInput(scenario_error(
        cfg, "faults.seeds",
        fmt("%.3g failures to simulate ", work_per_window * windows) +
            fmt("(%.3g per window", work_per_window) + (slow_per_window > 0 ? fmt(", a slow host counting %g", kSlowHostCost) : std::string()) +
            " x " + std::to_string(f.seeds) + " seeds" +
            (sweeps ? " x " + std::to_string(2 * f.sweep_points + 3) + " windows: the run, " +
                          std::to_string(f.sweep_points) + " sweep_points, up to " + std::to_string(f.sweep_points - 1) +
                          " more where the best lies at the sweep's end, 2 around the optimum and the run's own interval"
                    : std::string(" x 2 windows: the run and its interval's entry in checkpoint_sweep")) +
            "); at most 1e9: lower seeds, sweep_points or rate_scale"));
  }
}

namespace {

// Checkpoints are events too: 90 days at 1 s intervals hold 7.8 million a window, and 10,000 seeds
// of that passed the failure budget and ran for about an hour (QA, 2026-12-07). Counted as the
// run takes its interval, and the sweep's windows at a quarter of the grid's centre (the grid's
// usual shortest; never under the floor).
void check_checkpoint_budget(const ScenarioConfig& cfg, const engine::ReliabilityInputs& in, bool can_fail, Time floor,
                             Time center) {
  const FaultsConfig& f = *cfg.faults;
  constexpr double kMaxCheckpoints = 1e9;
  const double window = in.duration.as_s();
  const Time run = engine::checkpoint_interval_taken(in.checkpoint_interval, in.iteration);
  const double per_run = run > Time::zero() ? window / run.as_s() : 0.0;
  const double sweep_windows = can_fail ? 2.0 * f.sweep_points + 2.0 : 1.0;
  // Without failures the sweep runs the configured interval alone (the centre).
  const double shortest = can_fail ? std::max(floor.as_s(), center.as_s() / 4) : center.as_s();
  const double per_sweep = shortest > 0 ? window / shortest : 0.0;
  const double total = static_cast<double>(f.seeds) * (per_run + sweep_windows * per_sweep);
  if (total <= kMaxCheckpoints) return;
  const bool run_heavy = per_run >= sweep_windows * per_sweep;
  throw BadInput(scenario_error(
      cfg, run_heavy && cfg.given.count("faults.checkpoint.interval") ? "faults.checkpoint.interval" : "faults.seeds",
      fmt("about %.3g checkpoints to simulate (", total) + fmt("%.3g a window at ", per_run) + to_string(run) +
          fmt(" intervals, %.3g in each of ", per_sweep) + fmt("%.0f", sweep_windows) + " checkpoint_sweep windows, x " +
          std::to_string(f.seeds) + " seeds); at most 1e9: lengthen checkpoint.interval, or lower seeds, duration or "
          "sweep_points"));
}

RunOutput run_faults(const ScenarioConfig& cfg) {
  const FaultsConfig& f = *cfg.faults;
  check_failure_budget(cfg);
  const calib::HardwareProfile hw = training_profile(cfg);
  const std::vector<ClusterState> states = reliability_states(cfg);
  // The straggler model replays the schedule for the `stragglers` block and, at the analytical
  // level, for each cluster state.
  const bool analytical = iteration_time_fidelity(cfg) == IterationTimeFidelity::kAnalytical;
  double passes = engine::replay_passes(cfg);
  for (const ClusterState& state : states) passes += analytical ? engine::replay_passes(state.cfg) : 0;
  engine::check_replay_work(cfg, cfg.stragglers.empty() ? "faults.components" : "stragglers",
                            1 + (analytical ? static_cast<int>(states.size()) : 0), passes,
                            "the straggled run and " + std::to_string(states.size()) + " cluster states",
                            analytical ? ", or set faults.iteration_time_fidelity: flow" : "");
  // The analytical run gives the straggler-free MFU (MFU scales as 1 / iteration) and the
  // `stragglers` block; the iteration times of the cluster states come from the chosen level.
  const StragglerImpact s = engine::simulate_stragglers(cfg, hw, engine::analytical_level());
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
  const double mtbf_s = engine::mean_time_between_failures_s(in);
  const double young_s = engine::young_interval_s(in.checkpoint_blocking, mtbf_s);
  const double daly_s = engine::daly_interval_s(in.checkpoint_blocking, mtbf_s);
  // Centred on Young's optimum when the checkpoint costs anything. A checkpoint starts only once
  // the previous asynchronous write is done, so intervals below the write are the write: the
  // sweep starts there (or at one iteration). With a zero blocking cost Young and Daly are zero,
  // not defined: a checkpoint then costs only the floor's wait, so the sweep centres on the floor
  // (it centred on the configured interval before 2026-12-05, and with interval 1h reported the
  // grid's edge, 900 s, where one iteration, 6.8 s, gave 3.8 points more ETTR). Without failures
  // there is no optimum: the configured interval.
  // (The sweep takes the floor in whole iterations, as runs take it.)
  const Time floor = max(engine::checkpoint_interval_floor(iteration), in.checkpoint_async);
  const bool can_fail = engine::has_failures(in);  // else MTBF, Young and Daly are sentinels: reported as none
  const bool free_checkpoint = in.checkpoint_blocking == Time::zero();
  const bool has_young = can_fail && !free_checkpoint;
  const Time center = has_young ? Time::s(std::min(young_s, in.duration.as_s())) : can_fail ? floor : in.checkpoint_interval;
  check_checkpoint_budget(cfg, in, can_fail, floor, center);

  std::vector<double> ettr, interruptions, failures, checkpoints, max_lost;
  // Downtime and catch-up (downtime + lost work) per interruption: over every interruption of
  // every seed (until 2026-12-06 each seed's own mean, averaged with the seeds that had none as
  // 0: a 1-hour window read 1.1 min of catch-up where its 3 interruptions took 7.3 min each).
  double downtime_sum_s = 0, catch_up_sum_s = 0;
  int64_t stops_total = 0, hosts_repaired = 0;
  std::array<std::vector<double>, engine::kLossCauses> lost;
  std::vector<std::vector<double>> lost_by(in.components.size()), stops_by(in.components.size());
  for (int k = 0; k < f.seeds; ++k) {
    const engine::ReliabilityRun r = engine::simulate_reliability(in, f.seed + static_cast<uint64_t>(k));
    ettr.push_back(r.ettr(in.duration));
    assert(ettr.back() >= 0 && ettr.back() <= 1 && "useful time is part of the window (validate_faults bounds every phase)");
    interruptions.push_back(r.interruptions);
    failures.push_back(r.failures);
    checkpoints.push_back(r.checkpoints);
    stops_total += r.interruptions;
    hosts_repaired += r.hosts_repaired;
    downtime_sum_s += r.downtime.as_s();
    catch_up_sum_s += (r.downtime + r.lost[static_cast<int>(LossCause::kLostWork)]).as_s();
    max_lost.push_back(r.max_lost_work.as_s());
    for (int c = 0; c < engine::kLossCauses; ++c) lost[c].push_back(r.lost[c].as_s());
    for (size_t i = 0; i < in.components.size(); ++i) {
      lost_by[i].push_back(r.lost_by_component[i].as_s());
      stops_by[i].push_back(r.interruptions_by_component[i]);
    }
  }
  // Without crashes or hangs no interval is swept (a longer one is always better, and the note
  // says sweep_points is not used): the configured interval alone (a grid of sweep_points ran,
  // unreported, until 2026-12-06).
  const engine::IntervalSweep sweep =
      engine::sweep_checkpoint_interval(in, center, floor, can_fail ? f.sweep_points : 1, f.seeds, f.seed);
  const engine::MeanCi e = engine::mean_ci(ettr);
  // ETTR lies in [0, 1]; so does the interval reported for it.
  const double ettr_low = std::max(0.0, e.mean - e.half_width), ettr_high = std::min(1.0, e.mean + e.half_width);
  const engine::MeanCi n = engine::mean_ci(interruptions);
  const bool has_ci = f.seeds >= 2;

  RunOutput out;
  Json& r = out.results;
  r = Json::object();
  r.set("kind", "faults");
  r.set("scenario", scenario_name(cfg));
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
  // Goodput and effective MFU are ETTR times a rate: their intervals are ETTR's, in [0, 1].
  const auto ettr_times = [&](double k) {
    if (!has_ci) return Json();
    Json a = Json::array();
    a.push(ettr_low * k);
    a.push(ettr_high * k);
    return a;
  };
  r.set("ettr_ci95", ettr_times(1.0));
  // The spread of single windows (the CI above is the mean's): what one job of this length sees.
  const auto [ettr_min, ettr_max] = std::minmax_element(ettr.begin(), ettr.end());
  Json range = Json::array();
  range.push(*ettr_min);
  range.push(*ettr_max);
  r.set("ettr_range", range);
  r.set("goodput", e.mean * tokens_per_s);
  r.set("goodput_ci95", ettr_times(tokens_per_s));
  r.set("effective_mfu", e.mean * mfu);
  r.set("effective_mfu_ci95", ettr_times(mfu));
  r.set("interruptions", n.mean);
  r.set("interruptions_ci95", ci_pair(n, has_ci));
  r.set("failures", engine::mean_ci(failures).mean);
  r.set("checkpoints", engine::mean_ci(checkpoints).mean);
  r.set("mtbf_s", can_fail ? Json(mtbf_s) : Json());
  const double per_stop = 1.0 / static_cast<double>(std::max<int64_t>(1, stops_total));
  // Means over no interruption are undefined: null (they read 0 before 2026-12-06).
  const auto per_interruption = [&](double sum_s) { return stops_total > 0 ? Json(sum_s * per_stop) : Json(); };
  r.set("mean_downtime_per_interruption_s", per_interruption(downtime_sum_s));
  r.set("mean_catch_up_s", per_interruption(catch_up_sum_s));
  r.set("hosts_repaired", static_cast<double>(hosts_repaired) / f.seeds);
  r.set("max_lost_work_s", *std::max_element(max_lost.begin(), max_lost.end()));
  Json& tl = r.set("time_lost_s", Json::object());
  Json& tlc = r.set("time_lost_ci95", Json::object());
  Json& tlf = r.set("time_lost_fraction", Json::object());
  for (int c = 0; c < engine::kLossCauses; ++c) {
    const engine::MeanCi m = engine::mean_ci(lost[c]);
    const char* name = engine::to_string(static_cast<LossCause>(c));
    tl.set(name, m.mean);
    tlc.set(name, ci_pair(m, has_ci));
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
  // A checkpoint is taken at the end of the iteration under way (whole iterations), and starts
  // only when the previous asynchronous write has finished (until 2026-12-06 the interval asked
  // for was reported: 236 s where 100 s iterations take one every 300 s).
  const Time taken_interval = engine::checkpoint_interval_taken(in.checkpoint_interval, in.iteration);
  const Time effective_interval = engine::checkpoint_interval_taken(max(in.checkpoint_interval, in.checkpoint_async), in.iteration);
  ck.set("effective_interval_s", effective_interval.as_s());
  ck.set("blocking_s", in.checkpoint_blocking.as_s());
  ck.set("async_s", in.checkpoint_async.as_s());
  ck.set("load_s", in.checkpoint_load.as_s());
  const double checkpoint_bytes =
      f.checkpoint.size ? f.checkpoint.size->as_double() : kCheckpointBytesPerParam * work::count_params(cfg.model).total;
  ck.set("size_bytes", checkpoint_bytes);
  // What storage sustains at this interval: a short interval of a large model writes a lot.
  // One checkpoint per cycle of the effective interval's training plus the stall (since 2026-12-06:
  // before, per interval alone, 1.5% high on faults-16k-30d.yaml and 7x with a blocking hour).
  const double write_rate = checkpoint_bytes / (effective_interval + in.checkpoint_blocking).as_s();
  ck.set("mean_write_rate_bytes_per_s", write_rate);
  // The rates the writes and loads go at: the storage keys', or the job's NICs' where those carry
  // less (since 2026-12-06); a given recovery.checkpoint_load reads nothing.
  const Bandwidth read_storage = f.checkpoint.read_bandwidth.value_or(f.checkpoint.write_bandwidth);
  ck.set("effective_write_bandwidth_bytes_per_s", checkpoint_bandwidth(cfg, f.checkpoint.write_bandwidth).bytes_per_s);
  ck.set("effective_read_bandwidth_bytes_per_s", f.recovery.checkpoint_load
                                                     ? Json()
                                                     : Json(checkpoint_bandwidth(cfg, read_storage).bytes_per_s));
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
  r.set("optimal_checkpoint_interval_at", can_fail ? Json(engine::to_string(sweep.best_at)) : Json());
  // What the best interval gains over this run's, seed by seed (the same seeds): the 95% CI of
  // the mean difference says whether the sweep's best is better than noise.
  std::vector<double> gain_by_seed;
  if (can_fail && sweep.best_ettr_by_seed.size() == ettr.size()) {
    for (size_t k = 0; k < ettr.size(); ++k) gain_by_seed.push_back(sweep.best_ettr_by_seed[k] - ettr[k]);
  }
  const engine::MeanCi gain = gain_by_seed.empty() ? engine::MeanCi{} : engine::mean_ci(gain_by_seed);
  r.set("ettr_gain_at_optimal_interval", gain_by_seed.empty() ? Json() : Json(gain.mean));
  // A gain can be negative: the summary's interval, not clamped (it was clamped at 0 until 2026-12-06).
  r.set("ettr_gain_at_optimal_interval_ci95", gain_by_seed.empty() ? Json() : ci_pair(gain, has_ci, false, 1.0 - e.mean));
  r.set("young_daly_interval_s", has_young ? Json(young_s) : Json());
  r.set("daly_interval_s", has_young ? Json(daly_s) : Json());
  Json& sw = r.set("checkpoint_sweep", Json::array());
  for (size_t i = 0; i < sweep.intervals.size(); ++i) {
    Json row = Json::object();
    row.set("interval_s", sweep.intervals[i].as_s());
    row.set("ettr", sweep.mean_ettr[i]);
    sw.push(row);
  }
  if (!cfg.stragglers.empty()) r.set("stragglers", impact_json(cfg, "all", s));

  std::ostringstream o;
  o << "scenario       " << scenario_name(cfg) << "\n";
  o << "job            " << cfg.cluster.gpus << (cfg.cluster.gpus == 1 ? " GPU" : " GPUs") << ", iteration "
    << to_string(iteration) << fmt(", MFU %.1f%%", 100 * mfu) << "; "
    << (in.duration >= Time::s(86400) ? fmt("%.1f days", in.duration.as_s() / 86400)
        : in.duration >= Time::s(3600) ? fmt("%.3g h", in.duration.as_s() / 3600)
                                        : to_string(in.duration))
    << " x "
    << f.seeds << (f.seeds == 1 ? " seed\n" : " seeds\n");
  o << "iteration      " << (f.iteration_time ? "given (faults.iteration_time); " : "") << states.size()
    << (states.size() == 1 ? " cluster state" : " cluster states") << " timed at the " << to_string(times.fidelity)
    << " level" << (times.fidelity == IterationTimeFidelity::kFlow ? " (one simulation per state, each in its own process)" : "")
    << fmt(", %.2f s of simulation wall time\n", timing_wall_s);
  o << "failures       MTBF " << (can_fail ? fmt("%.4g h", mtbf_s / 3600) + " (crashes and hangs)"
                                         : std::string("none (no crash or hang component has a rate)"))
    << fmt("; %.1f interruptions of every kind, planned stops included", n.mean)
    << (has_ci ? fmt(" (95%% CI of the mean over seeds +-%.1f)\n", n.half_width) : std::string("\n"));
  // Llama 3's job-level rows (planned maintenance, dependencies, ...) count per job whatever its
  // size: where they make most of the interruptions, a small job reads as failing like a 16,384-GPU
  // one (an 8-GPU job: 99.7% of its interruptions, 26 planned stops a month; said since 2026-12-06).
  {
    double job = 0, all = 0;
    for (const engine::JobComponent& c : in.components) {
      if (c.spec.kind == FailureKind::kDegrade) continue;
      all += c.rate_per_s;
      if (c.spec.unit == FailureUnit::kJob) job += c.rate_per_s;
    }
    if (all > 0 && job > 0.5 * all && n.mean > 0) {
      o << fmt("note           %.3g%% of the interruptions come from components counted per job (unit: job), ", 100 * job / all)
        << "whatever the job's size" << (f.llama3_rates ? " (Llama 3's, measured on 16,384 GPUs)" : "")
        << ": scale them to this job with faults.components.NAME.rate_per_day\n";
    }
  }
  const std::string nic_words = nic_bound_words(cfg);
  o << "recovery       detect " << to_string(in.detection)
    << (std::any_of(in.components.begin(), in.components.end(),
                    [](const engine::JobComponent& c) { return c.spec.kind == FailureKind::kHang && c.rate_per_s > 0; })
            ? ", hang detect " + to_string(in.hang_detection)
            : std::string())
    << ", diagnose "
    << to_string(in.diagnosis) << ", reschedule "
    << to_string(in.reschedule) << ", comm init " << to_string(in.comm_init) << ", load " << to_string(in.checkpoint_load)
    << "\ncheckpoint     every " << to_string(in.checkpoint_interval) << ", blocking " << to_string(in.checkpoint_blocking)
    << ", async " << to_string(in.checkpoint_async)
    << (effective_interval > taken_interval
            ? "; the write outlasts the interval, and a checkpoint starts only when the previous one is written: "
              "every " + to_string(effective_interval)
        // Seconds to the millisecond: the rounding to whole iterations can be under a second,
        // which to_string's 4 digits hid ("every 7200 s ... every 7200 s"; until 2026-12-06).
        : taken_interval > in.checkpoint_interval
            ? "; taken at the end of the iteration under way: every " + fmt("%.3f s", taken_interval.as_s())
            : std::string())
    << "\n               " << fmt("%.4g GB each", checkpoint_bytes / 1e9) << fmt(", written at %.3g GB/s on average", write_rate / 1e9)
    // What the computed blocking time is: an asynchronous checkpoint stalls for its snapshot
    // only, a synchronous one for its whole write (the sync case said "copy to host memory" of
    // its whole write until 2026-12-05).
    << (f.checkpoint.blocking ? std::string()
        : f.checkpoint.async  ? " (blocking: the shard's copy to host memory only; checkpoint.blocking gives your "
                                "system's stall, coordination and metadata included)"
                              : " (blocking: the whole synchronous write, size / the write rate; checkpoint.blocking "
                                "gives your system's stall, coordination and metadata included)")
    // An asynchronous stall no shorter than the whole write: the premise of going asynchronous
    // does not hold at these settings (faults-16k-30d.yaml's assumed 5 s against 2.84 s at 2 TB/s;
    // said since 2026-12-06).
    << (f.checkpoint.async && in.checkpoint_blocking >= in.checkpoint_async && in.checkpoint_async > Time::zero()
            ? "\n               note: the asynchronous stall, " + to_string(in.checkpoint_blocking) +
                  ", is no shorter than the whole write, " + to_string(in.checkpoint_async) + " at " +
                  checkpoint_rate_words(cfg, f.checkpoint.write_bandwidth, "write_bandwidth") +
                  " (the transfer alone, coordination not counted): async: false would stall that long"
            : std::string())
    // The job's NICs carry less than storage takes: writes and loads go at their rate (since
    // 2026-12-06), on a line of its own.
    << (nic_words.empty() ? std::string() : "\n               " + nic_words)
    << "\n\n";
  // Checkpoint writes share the NICs with the training traffic, which is not charged for them:
  // say so when they take a tenth of what the NICs carry or more (since 2026-12-06).
  const Bandwidth nics = job_nic_bandwidth(cfg);
  if (const double share = write_rate / nics.bytes_per_s; share >= 0.1) {
    o << fmt("note           checkpoint writes take %.0f%% of the job's NIC bandwidth on average ", 100 * share)
      << "(" << bytes_rate_string(Bandwidth{write_rate}) << " of " << bytes_rate_string(nics)
      << "), which the training step's time does not include: a longer interval, or a faster network\n\n";
  }
  o << "ETTR           " << fmt("%.2f%%", 100 * e.mean)
    << (has_ci ? fmt("  (95%% CI of the mean over seeds %.2f", 100 * ettr_low) + fmt(" to %.2f%%", 100 * ettr_high) +
                     fmt("; single windows %.2f", 100 * *ettr_min) + fmt(" to %.2f%%)\n", 100 * *ettr_max)
               : std::string("  (one seed: no confidence interval; faults.seeds >= 2 gives one)\n"));
  o << "goodput        " << fmt("%.4g tokens/s", e.mean * tokens_per_s) << fmt("; effective MFU %.1f%%\n", 100 * e.mean * mfu);
  o << "catch-up       "
    << (stops_total > 0 ? fmt("%.1f min per interruption (downtime + lost work)\n", catch_up_sum_s * per_stop / 60)
                        : std::string("none: no interruption in any window\n"));
  // Failures that come faster than a recovery takes: no interval or spare pool helps, and the
  // optimum and spares lines below would read as advice (QA: MTBF 1.1 s against 210 s of
  // detection and diagnosis printed an optimum interval and 18,144 spares; since 2026-12-07).
  const Time recovery = in.detection + in.diagnosis + in.reschedule + in.comm_init + in.checkpoint_load;
  if (can_fail && mtbf_s < recovery.as_s()) {
    // "recovery-bound" (since 2026-12-07; "no progress ... whatever the checkpoint interval" until
    // then, above an interval line that gained 8 points: QA).
    o << "recovery-bound failures come every " << to_string(Time::s(mtbf_s)) << " on average (MTBF), sooner than a crash's recovery takes ("
      << to_string(recovery)
      << ": detection, diagnosis, rescheduling, communicator init and checkpoint load): recovering takes most of the "
         "window, and no checkpoint interval or spare pool lifts ETTR far; lower the failure rates (faults.rate_scale, "
         "components) or the recovery times\n";
  }
  // A pool of spares that runs dry stops the job until hosts come back: say so, with the queue's
  // size at the rates the job needs hosts (hosts to repair a day x repair_time are away at once on
  // average). Not the hosts the run sent: a dry pool holds that down (engine::hosts_to_repair_per_s).
  const double waited = engine::mean_ci(lost[static_cast<int>(LossCause::kRepairWait)]).mean / in.duration.as_s();
  const double degraded = engine::mean_ci(lost[static_cast<int>(LossCause::kDegraded)]).mean / in.duration.as_s();
  const double needed_per_day = engine::hosts_to_repair_per_s(in) * 86400;
  const double away_at_once = needed_per_day * in.repair_time.as_s() / 86400;
  // A dry pool also shows as slow hosts running on where no spare is free to swap them in: the
  // degraded time, with no wait (QA, 2026-12-07: 4 spares for slow hosts needing about 24 away at
  // once, 22% of the window degraded and no word of the spares; 24 gave 94.9% ETTR against 76.9%).
  const bool dry_degraded = in.spare_hosts && degraded >= 0.01 && away_at_once > *in.spare_hosts;
  if (in.spare_hosts && (waited >= 0.01 || dry_degraded)) {
    const double sent_per_day = static_cast<double>(hosts_repaired) / f.seeds / (in.duration.as_s() / 86400);
    o << "spares         "
      << (*in.spare_hosts == 0 ? std::string("with no hot spares")
                               : "the " + std::to_string(*in.spare_hosts) +
                                     (*in.spare_hosts == 1 ? " hot spare ran dry" : " hot spares ran dry"))
      << (waited >= 0.01 ? ": the job waited " + fmt("%.1f%% of the window for repaired hosts; ", 100 * waited)
                         : ": slow hosts ran on for want of a spare (" + fmt("%.1f%% of the window degraded); ", 100 * degraded))
      << fmt("its failures need %.3g hosts repaired a day", needed_per_day)
      // A dry pool holds the swaps down; a short window's luck can send more than the rate needs.
      // (Only where the gap is more than a window's noise: 5.88 against 5.94 read as a cause.)
      << (sent_per_day < 0.95 * needed_per_day ? fmt(" (the run sent %.3g a day: a dry pool swaps fewer)", sent_per_day)
                                 : fmt(" (the run sent %.3g a day)", sent_per_day))
      << ", each away " << to_string(in.repair_time)
      << fmt(", so %.3g are away at once on average, ", away_at_once) << hosts_away_99(away_at_once)
      << " or fewer 99% of the time: give at least that many spare_hosts, or a shorter repair_time\n";
  }
  // Without a pool the spares are unlimited and free, which the ETTR rests on: said, with the pool
  // that would hold it (QA 2026-12-07: ETTR 98.9% unqualified, 92.9% with 8 spares, 22% with 2).
  if (!in.spare_hosts && needed_per_day > 0) {
    o << "spares         unlimited (faults.recovery.spare_hosts not set: a failed host is swapped at once)"
      << fmt("; its failures need %.3g hosts repaired a day, ", needed_per_day) << "each away "
      << to_string(in.repair_time) << fmt(", %.3g away at once on average, ", away_at_once) << hosts_away_99(away_at_once)
      << " or fewer 99% of the time: set spare_hosts to see a finite pool's cost\n";
  }
  o << "\n";
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
    << (can_fail ? "best " + to_string(sweep.best) + fmt(" (ETTR %.2f%%", 100 * sweep.best_ettr) + gain_words(gain, gain_by_seed, has_ci,
                                                                           sweep.best == in.checkpoint_interval ||
                                                                               sweep.best == taken_interval,
                                                                           1.0 - e.mean) +
                         ")"
                 : std::string("no optimum (longer is always better without failures)"))
    << (has_young ? "; Young " + seconds_to_string(young_s) + ", Daly " + seconds_to_string(daly_s)
        : can_fail ? std::string("; Young and Daly not defined (no blocking cost)")
                   : std::string())
    << (can_fail ? sweep_edge_words(sweep, in, iteration) : std::string()) << "\n";
  out.summary = o.str();
  out.metrics = {{"ettr", e.mean},
                 {"goodput", e.mean * tokens_per_s},
                 {"effective_mfu", e.mean * mfu},
                 {"interruptions", n.mean}};
  if (can_fail) out.metrics["optimal_checkpoint_interval_s"] = sweep.best.as_s();
  if (has_young) out.metrics["young_daly_interval_s"] = young_s;
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
  // At the flow level: the fabric builds and every fault names an element of it, before any
  // variant runs (the what-if's variants and the reliability states run in forked children, which
  // would each fail alone). The analytical level plans the fabric itself (fabric_contention).
  const bool flow = cfg.faults ? iteration_time_fidelity(cfg) == IterationTimeFidelity::kFlow
                               : cfg.network.fidelity == Fidelity::kFlow;
  if (flow) (void)topo::build_fabric(cfg, hw.nvlink_bandwidth);
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
      state.cfg.stragglers.added_hosts.push_back(slow);  // beside the scenario's own slow hosts
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
  // Every state unfolds the replicas any of them does, so folding moves none against another.
  std::vector<std::pair<std::string, ScenarioConfig>> variants;
  std::vector<const ScenarioConfig*> configs;
  for (const ClusterState& s : states) {
    variants.emplace_back(s.name, s.cfg);
    variants.back().second.network.fidelity = Fidelity::kFlow;
    configs.push_back(&s.cfg);
  }
  const std::vector<FlowVariant> runs = run_flow_variants(
      variants, hw, std::vector<std::vector<int>>(states.size(), replicas_to_unfold(configs, hw)), jobs);
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
  const Time write = serialization_time(size, checkpoint_bandwidth(cfg, ck.write_bandwidth));
  if (ck.async) {
    const Bytes shard{size.n / cfg.cluster.gpus};
    in.checkpoint_blocking = ck.blocking.value_or(serialization_time(shard, ck.snapshot_bandwidth));
    in.checkpoint_async = write;
  } else {
    // A synchronous checkpoint blocks for its whole write: a shorter blocking time would lose it.
    if (ck.blocking && *ck.blocking < write) {
      throw BadInput(scenario_error(
          cfg, "faults.checkpoint.blocking",
          "a synchronous checkpoint (async: false) blocks for its whole write, its size at " +
              checkpoint_rate_words(cfg, ck.write_bandwidth, "write_bandwidth") + ", " + to_string(write) + "; " +
              to_string(*ck.blocking) +
              " is shorter: remove blocking, or set async: true for a snapshot followed by a background write"));
    }
    in.checkpoint_blocking = ck.blocking.value_or(write);
  }
  const RecoveryConfig& rc = f.recovery;
  in.checkpoint_load =
      rc.checkpoint_load.value_or(serialization_time(size, checkpoint_bandwidth(cfg, ck.read_bandwidth.value_or(ck.write_bandwidth))));
  in.detection = rc.detection;
  in.hang_detection = rc.hang_detection;
  in.diagnosis = rc.diagnosis;
  in.reschedule = rc.reschedule;
  const double at = rc.comm_init_at_gpus > 0 ? rc.comm_init_at_gpus : cfg.cluster.gpus;
  in.comm_init = rc.comm_init_scaling == CommInitScaling::kLinear ? (cfg.cluster.gpus / at) * rc.comm_init : rc.comm_init;
  in.spare_hosts = rc.spare_hosts;
  in.job_hosts = cfg.cluster.gpus / std::max(1, cfg.cluster.gpus_per_node);
  in.repair_time = rc.repair_time;
  in.straggler_detection = rc.straggler_detection;
  in.straggler_threshold = rc.straggler_threshold;
  in.iteration = f.iteration_time.value_or(healthy);
  // No step of a simulated iteration longer than the window ends in it (a given one is refused
  // when the file is read; a simulated one ran on to an ETTR near 0 until 2026-12-06).
  if (!f.iteration_time && healthy > f.duration) {
    throw BadInput(scenario_error(cfg, "faults.duration",
                                  "the simulated iteration, " + to_string(healthy) + ", is longer than the window (" +
                                      to_string(f.duration) + "): no step would end in it; the plan's step is too slow "
                                      "for its GPUs and network (model, parallelism, cluster.nic_bandwidth), or give "
                                      "faults.iteration_time to study a measured step"));
  }
  // A derived interval is never shorter than one iteration (nor than 1 s); nor may a configured one be.
  const Time floor = engine::checkpoint_interval_floor(in.iteration);
  if (ck.interval && *ck.interval < floor) {
    throw BadInput(scenario_error(cfg, "faults.checkpoint.interval",
                                  "must be at least one training iteration and at least 1s (" + to_string(floor) +
                                      "); got " + to_string(*ck.interval)));
  }
  if (!ck.interval && !engine::has_failures(in)) {
    // Without crashes or hangs the MTBF is infinite: checkpointing less is always better, and
    // Young/Daly (sqrt(2 x cost x MTBF)) has no optimum to derive the interval from.
    throw BadInput(scenario_error(cfg, "faults.checkpoint.interval",
                                  std::string(cfg.faults->rate_scale <= 0
                                                  ? "faults.rate_scale is 0, so nothing fails"
                                                  : "no crash or hang component has a rate") +
                                      ", and there is no Young/Daly optimum to derive the interval from; set it"));
  }
  // Derived: Young's, but never below one iteration, nor below the asynchronous write (a
  // checkpoint starts only when the previous one is written).
  // (Past the window, no checkpoint falls in it: the window is the longest that means anything.)
  // Checkpoints are taken at iterations' ends: Young's interval is rounded to whole iterations
  // (a given one is rounded up as the run waits for the iteration under way).
  const double young_s =
      std::min(in.duration.as_s(), engine::young_interval_s(in.checkpoint_blocking, engine::mean_time_between_failures_s(in)));
  const double iterations = std::max(1.0, std::round(young_s / in.iteration.as_s()));
  in.checkpoint_interval =
      ck.interval.value_or(max(max(floor, in.checkpoint_async), min(in.duration, Time::s(iterations * in.iteration.as_s()))));
  // Taken in whole iterations, an interval may pass the window (no checkpoint in it, as asked), but
  // not simulated time's range, about 106 days (a run of iterations of weeks; until 2026-12-06 a
  // generic "would take over 107 days ... lower model.layers" after simulating every seed).
  const double taken_s = std::ceil(in.checkpoint_interval.as_s() / in.iteration.as_s()) * in.iteration.as_s();
  if (taken_s > Time::ps(std::numeric_limits<int64_t>::max()).as_s()) {
    const std::string key = ck.interval ? "faults.checkpoint.interval" : "faults.iteration_time";
    throw BadInput(scenario_error(cfg, key,
                                  "taken at the end of the iteration under way (" + to_string(in.iteration) + " each), the " +
                                      (ck.interval ? "" : "derived ") + "checkpoint interval, " +
                                      to_string(in.checkpoint_interval) + ", comes to " + seconds_to_string(taken_s) +
                                      ", past the 106 days simulated time holds: a shorter interval or iteration"));
  }
  return in;
}

RunOutput run_reliability(const ScenarioConfig& cfg, const RunOptions& options) {
  return cfg.faults ? run_faults(cfg) : run_straggled_training(cfg, options);
}

}  // namespace clustersim::report
