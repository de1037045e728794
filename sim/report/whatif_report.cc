// SPDX-License-Identifier: Apache-2.0
#include "sim/report/whatif_report.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <numeric>
#include <set>
#include <sstream>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/engine/flow_training.h"
#include "sim/engine/reliability_sim.h"
#include "sim/report/internal/html_text.h"
#include "sim/report/internal/straggler_words.h"
#include "sim/report/run_scenario.h"
#include "sim/report/sweep/worker_pool.h"
#include "topology/fabric_router.h"

namespace clustersim::report {
namespace {

using engine::StragglerImpact;
using internal::critical_words;
using internal::flow_critical_stage;
using internal::flow_critical_words;
using internal::flow_link_words;
using internal::flow_pacing_representative;
using internal::impact_json;
using internal::index_array;
using internal::index_list;
using internal::representative_pacing_words;
using internal::stage_words;
constexpr auto fmt = &internal::format_number;
constexpr const char* kLinksSource = "links";  // network.faults, as a what-if source

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

// `stage_layers`: an MoE model's listed layer map, which the baseline runs (absent when even).
void set_layer_map(Json& j, const ScenarioConfig& cfg) {
  if (!cfg.parallelism.stage_layers.empty()) j.set("stage_layers", index_array(cfg.parallelism.stage_layers));
}

// The baseline's layer map where an MoE model lists one, in words.
std::string map_words(const ScenarioConfig& cfg) {
  const std::string map = internal::layer_map_list(cfg);
  return map.empty() ? "" : "; layers per stage " + map;
}

}  // namespace

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

// Whether some hosts or GPUs are slowed (present, and not inert: a count of 0 or a slowdown of 1).
bool slows_units(const ScenarioConfig& cfg) {
  const auto slows = [](const std::optional<ComputeStraggler>& c) { return c && !c->inert_reason(); };
  return slows(cfg.stragglers.hosts) || slows(cfg.stragglers.gpus);
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
  if (!hosts.empty()) out += (hosts.size() == 1 ? "host " : "hosts ") + index_list(hosts);
  if (!gpus.empty()) out += (out.empty() ? "" : ", ") + std::string(gpus.size() == 1 ? "GPU " : "GPUs ") + index_list(gpus);
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
  const std::vector<std::string> sources = engine::straggler_sources(cfg.stragglers);
  const std::vector<int> stages = slows_units(cfg) ? slow_stages(cfg) : std::vector<int>{};
  // Each source and each slowed stage alone and removed, then removed beside the cause's repair
  // (the next repair), and the draws; the variants replay no more than the whole.
  const int runs = 1 + 3 * static_cast<int>(sources.size() + stages.size()) + (draws > 1 ? draws : 0);
  engine::check_replay_work(cfg, "stragglers", runs, runs * engine::replay_passes(cfg),
                            "the what-if's " + std::to_string(runs - (draws > 1 ? draws : 0)) + " variants" +
                                (draws > 1 ? " and " + std::to_string(draws) + " draws" : std::string()),
                            draws > 1 ? ", or lower --draws" : "");
  WhatIf w;
  w.all = engine::simulate_stragglers(cfg, hw, level);
  for (const std::string& source : sources) {
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
  // By stage: the slow hosts and GPUs of each stage alone, and repaired with the rest still slow
  // (none when they slow nothing: a slowdown of 1 still places them).
  for (const int stage : stages) {
    WhatIfStage st;
    st.stage = stage;
    const ScenarioConfig only = only_stage(cfg, stage);
    st.hosts = engine::slow_units(only, "hosts");
    st.gpus = engine::slow_units(only, "gpus");
    st.alone = engine::simulate_stragglers(only, hw, level);
    st.saved_if_removed = w.all.iteration - engine::simulate_stragglers(without_stage(cfg, stage), hw, level).iteration;
    w.stages.push_back(st);
  }
  // The cause: the repair that regains the most, every other straggler left in place: a stage's
  // slow hosts and GPUs, or another source (degraded NICs, uneven stages, a sequence imbalance);
  // ties go to what costs more alone, then to the later stage. The iteration waits for the slowest
  // replica, so costs do not add up: where two replicas are as slow, repairing either regains
  // nothing. Until 2026-12-07 the stage whose slow hosts cost the most alone (QA: hosts 1 and 17
  // on stage 1 and host 15 on stage 15 of the 405B job at 1.2x named host 15, whose repair
  // regains 0.84 of the 4.44 points lost, where repairing stage 1 regains 3.36).
  struct Repair {
    std::string words;  // "the slow host 15 on stage 15 of 16", "the straggler source 'nics'"
    Time saved;
    Time alone;         // the iteration with it alone
    double alone_lost;  // MFU points lost with it alone
    int stage;          // -1 for a source
    bool one;           // a single host or GPU (or a source): "it", else "them"
    std::string source; // the source's name (empty for a stage)
  };
  // `c` with the repair made.
  const auto repaired = [](const ScenarioConfig& c, const Repair& r) {
    if (r.stage >= 0) return without_stage(c, r.stage);
    ScenarioConfig out = c;
    out.stragglers = engine::without_source(c.stragglers, r.source);
    return out;
  };
  std::vector<Repair> repairs;
  for (const WhatIfStage& st : w.stages) {
    repairs.push_back({"the slow " + units_words(st.hosts, st.gpus) + " on " + stage_words(cfg, st.stage),
                       st.saved_if_removed, st.alone.iteration, st.alone.baseline_mfu - st.alone.mfu, st.stage,
                       st.hosts.size() + st.gpus.size() == 1, ""});
  }
  bool others = false;
  for (const WhatIfRow& row : w.rows) {
    if (row.source == "hosts" || row.source == "gpus") continue;
    // A configured source may cost nothing (GPU speed variation is no remedy either way).
    if (row.saved_if_removed <= Time::zero() && row.alone.iteration <= row.alone.baseline) continue;
    others = true;
    repairs.push_back({"the straggler source '" + row.source + "'", row.saved_if_removed, row.alone.iteration,
                       row.alone.baseline_mfu - row.alone.mfu, -1, true, row.source});
  }
  std::stable_sort(repairs.begin(), repairs.end(), [](const Repair& x, const Repair& y) {
    if (x.saved != y.saved) return x.saved > y.saved;
    if (x.alone != y.alone) return x.alone > y.alone;
    return x.stage > y.stage;
  });
  // MFU points lost, and regained by removing what saves `saved` of the iteration.
  const double lost = w.all.baseline_mfu - w.all.mfu;
  const auto regained_by = [&w](Time saved) { return mfu_regained(w.all, saved); };
  if (!repairs.empty() && w.all.iteration > w.all.baseline) {
    const Repair& top = repairs.front();
    const double regained = regained_by(top.saved);
    const std::string it = top.one ? "it" : "them";
    w.cause = top.words + ": " + (top.stage < 0 ? "removing " : "repairing ") + it + " regains " + mfu_points(regained) +
              " of the " + mfu_points(lost) + " lost (" + mfu_points(top.alone_lost) + " lost with " + it + " alone)";
    if (top.saved <= Time::zero()) {
      w.cause += "; no single repair regains anything: the iteration waits for the slowest replica, and more than one "
                 "is as slow (repair them together: see 'stages' and 'sources')";
    } else if (repairs.size() > 1 && regained < lost - 5e-5) {
      // The next repair once this one is made: the one that then regains the most (the iteration
      // waits for the slowest replica, so what regains nothing before can regain after). The
      // repaired run is the one top.saved came from.
      const ScenarioConfig after = repaired(cfg, top);
      const Time after_iteration = w.all.iteration - top.saved;
      const Repair* next = nullptr;
      Time next_saved;
      for (size_t i = 1; i < repairs.size(); ++i) {
        const Time saved = after_iteration - engine::simulate_stragglers(repaired(after, repairs[i]), hw, level).iteration;
        if (saved > next_saved) {
          next = &repairs[i];
          next_saved = saved;
        }
      }
      if (next) {
        w.cause += "; then " + next->words + " (" + (next->stage < 0 ? "removing " : "repairing ") +
                   (next->one ? "it" : "them") + " too regains " +
                   mfu_points(regained_by(top.saved + next_saved) - regained) + ")";
      }
      if (others && repairs.size() > 2) w.cause += "; the others in 'stages' and 'sources'";
    }
  }
  // Slow hosts or GPUs that slow nothing: say so as the cause (it was empty, 2026-12-05).
  if (const std::vector<std::string> inert = inert_straggler_notes(cfg);
      w.cause.empty() && !inert.empty() && w.all.iteration == w.all.baseline) {
    w.cause = "none: nothing is slowed";
    for (size_t i = 0; i < inert.size(); ++i) w.cause += (i == 0 ? " (" : "; ") + inert[i];
    w.cause += ")";
  }
  // Sources that slow nothing, or make the step faster (listed stage layers that balance the LM
  // head better than the even split): no cause to name, and the cause says so (it was empty,
  // 2026-12-06 review).
  if (w.cause.empty() && w.all.iteration < w.all.baseline) {
    w.cause = "none: the sources make the iteration faster, " + to_string(w.all.baseline) + " -> " +
              to_string(w.all.iteration) + " (" + mfu_points(w.all.mfu - w.all.baseline_mfu) + " gained)";
  } else if (w.cause.empty() && w.all.iteration == w.all.baseline) {
    w.cause = "none: nothing is slowed";
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
  // The straggler-free prices are the same for every draw: computed once.
  const engine::StragglerBase base = engine::straggler_base(cfg, hw, level);
  for (int k = 0; k < draws; ++k) {
    ScenarioConfig c = cfg;
    c.stragglers.seed = cfg.stragglers.seed + static_cast<uint64_t>(k);
    const engine::StragglerImpact s = engine::simulate_stragglers(c, hw, level, &base);
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
  j.set("fidelity", "analytical");  // the layout of `all`, `sources`, `stages` (since 2026-12-07)
  j.set("scenario", scenario_name(cfg));
  set_layer_map(j, cfg);
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
  o << "scenario   " << scenario_name(cfg) << "\n";
  o << "baseline   iteration " << to_string(w.all.baseline) << fmt(", MFU %.2f%% (no stragglers", 100 * w.all.baseline_mfu)
    << map_words(cfg) << ")\n\n";
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
  if (!w.all.slow_hosts.empty() && slows_units(cfg)) o << "\nslow hosts " << index_list(w.all.slow_hosts, 64) << "\n";
  if (w.draws.count > 0) o << draws_words(w.draws, cfg.stragglers.seed);
  return o.str();
}

std::vector<std::pair<std::string, ScenarioConfig>> flow_whatif_variants(const ScenarioConfig& cfg, int draws) {
  std::vector<std::pair<std::string, ScenarioConfig>> out;
  ScenarioConfig c = cfg;
  c.network.fidelity = Fidelity::kFlow;
  ScenarioConfig clean = c;
  clean.stragglers = StragglersConfig{};
  clean.network.faults.clear();
  // Every variant, the baseline too, unfolds the replicas any of them does (replicas_to_unfold,
  // the caller's), so that folding moves none against another.
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
  // Each redraw with its own baseline, which unfolds the replicas that draw's stragglers do.
  for (int k = 1; k < draws; ++k) {
    ScenarioConfig d = c;
    d.stragglers.seed = cfg.stragglers.seed + static_cast<uint64_t>(k);
    const std::string seed = ", seed " + std::to_string(d.stragglers.seed);
    out.emplace_back("baseline" + seed, clean);
    out.emplace_back("all" + seed, d);
  }
  return out;
}

namespace {

// ", seed 4" for the variants of a redraw, empty for the others.
std::string seed_suffix(const std::string& name) {
  const size_t at = name.find(", seed ");
  return at == std::string::npos ? std::string() : name.substr(at);
}

}  // namespace

std::vector<std::vector<int>> unfold_per_variant(const std::vector<std::pair<std::string, ScenarioConfig>>& variants,
                                                 const calib::HardwareProfile& hw) {
  std::map<std::string, std::vector<const ScenarioConfig*>> groups;
  for (const auto& [name, cfg] : variants) groups[seed_suffix(name)].push_back(&cfg);
  std::map<std::string, std::vector<int>> unfold;
  for (const auto& [suffix, configs] : groups) unfold[suffix] = replicas_to_unfold(configs, hw);
  std::vector<std::vector<int>> out;
  for (const auto& v : variants) out.push_back(unfold[seed_suffix(v.first)]);
  return out;
}

const FlowVariant* baseline_of(const std::vector<FlowVariant>& variants, const FlowVariant& v) {
  const std::string suffix = seed_suffix(v.name);
  if (!suffix.empty()) {
    for (const FlowVariant& b : variants) {
      if (b.name == "baseline" + suffix) return b.error.empty() ? &b : nullptr;
    }
  }
  return variants.empty() || !variants.front().error.empty() ? nullptr : &variants.front();
}

std::vector<int> replicas_to_unfold(const std::vector<const ScenarioConfig*>& configs, const calib::HardwareProfile& hw) {
  std::set<int> replicas;
  // A fault above the hosts unfolds a variant whole (engine::unfold_for_fabric_faults): then every
  // variant, the straggler-free baseline too, so that folding moves none against another (until
  // 2026-12-06 the baseline was given every replica by name and refused past the graph's limit).
  for (const ScenarioConfig* c : configs) {
    if (engine::unfold_for_fabric_faults(*c, hw)) {
      std::vector<int> all(static_cast<size_t>(data_parallel_size(*c)));
      std::iota(all.begin(), all.end(), 0);
      return all;
    }
  }
  for (const ScenarioConfig* c : configs) {
    if (!work::folds_replicas(*c)) continue;  // every replica runs on its own anyway
    for (const auto& [replica, scaling] : engine::flow_stragglers(*c, hw).graph.replicas) replicas.insert(replica);
  }
  return {replicas.begin(), replicas.end()};
}

FlowVariant run_flow_variant(const std::string& name, const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                             const std::vector<int>& unfold) {
  FlowVariant v;
  v.name = name;
  engine::FlowTrainingOptions options;
  options.keep_spans = false;
  options.unfold_replicas = unfold;
  const engine::FlowTrainingResult f = engine::simulate_training(cfg, hw, options);
  v.iteration_s = f.estimate.iteration.as_s();
  v.mfu = f.estimate.mfu;
  v.wall_s = f.wall_seconds;
  v.rank_groups = static_cast<int>(f.rank_groups);
  v.critical = flow_critical_words(f);
  for (const std::string& g : f.straggling_groups) v.straggling += (v.straggling.empty() ? "" : ", ") + g;
  v.links = flow_link_words(f);
  v.critical_stage = flow_critical_stage(f);
  v.representative_paces = flow_pacing_representative(f);
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
         "\tstraggling=" + one_line(v.straggling) + "\tlinks=" + one_line(v.links) + "\trepresentative_paces=" + one_line(v.representative_paces) +
         "\tbad_input=" + (v.bad_input ? "1" : "0") + "\terror=" + one_line(v.error);
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
      if (key == "representative_paces") v.representative_paces = value;
      if (key == "bad_input") v.bad_input = value == "1";
      if (key == "error") v.error = value;
    }
    start = tab + 1;
  }
  return v;
}

std::vector<FlowVariant> run_flow_variants(const std::vector<std::pair<std::string, ScenarioConfig>>& variants,
                                           const calib::HardwareProfile& hw, const std::vector<std::vector<int>>& unfold,
                                           int jobs) {
  assert(unfold.size() == variants.size() && "one unfold set per variant");
  std::vector<FlowVariant> results(variants.size());
  const auto baseline = [&](size_t i) { return variants[i].first.rfind("baseline", 0) == 0; };
  std::vector<int> same_as(variants.size(), -1);
  std::vector<int64_t> todo;
  for (size_t i = 0; i < variants.size(); ++i) {
    results[i].name = variants[i].first;
    for (size_t j = 0; baseline(i) && j < i && same_as[i] < 0; ++j) {
      if (baseline(j) && same_as[j] < 0 && unfold[j] == unfold[i]) same_as[i] = static_cast<int>(j);
    }
    if (same_as[i] < 0) todo.push_back(static_cast<int64_t>(i));
  }
  sweep::WorkerPool pool(jobs, /*fork_always=*/true);
  pool.run(
      sweep::make_chunks(todo, jobs, 1),
      [&](int64_t i) {
        const auto failed = [&](const std::string& why, bool bad_input) {
          FlowVariant v;
          v.name = variants[i].first;
          v.error = why;
          v.bad_input = bad_input;
          return encode_variant(v);
        };
        try {
          return encode_variant(run_flow_variant(variants[i].first, variants[i].second, hw, unfold[i]));
        } catch (const BadInput& e) {
          return failed(e.what(), true);
        } catch (const topo::NoRoute& e) {
          // Faults that cut GPUs off from each other are a property of the input, as in `run`.
          return failed("network.faults: " + no_path_words(e.what()), true);
        } catch (const std::exception& e) {
          return failed(e.what(), false);
        }
      },
      [&](int64_t i, const std::string& line) { results[i] = decode_variant(line); },
      [&](int64_t i, const std::string& why) { results[i].error = why; }, [] {});
  for (size_t i = 0; i < variants.size(); ++i) {
    if (same_as[i] < 0) continue;
    results[i] = results[static_cast<size_t>(same_as[i])];
    results[i].name = variants[i].first;
  }
  return results;
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
      const FlowVariant* b = baseline_of(variants, v);
      if (!b) continue;
      lost.push_back(b->mfu - v.mfu);
      if (v.critical_stage == cfg.parallelism.pp - 1) ++out.draws.last_stage;
    }
    if (v.repaired_stage >= 0) out.stages.push_back(&v);
  }
  if (lost.size() > 1) summarise_draws(lost, out.draws);
  if (all && !all->representative_paces.empty()) {
    out.cause = "not found: the folded representative replica (" + all->representative_paces +
                "), not a straggling one, paces the run (see the note)";
    return out;
  }
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
  // whose removal regains more than repairing the slow hosts and GPUs: the cause, as at the
  // analytical level, followed by what repairing the slow hosts regains (until 2026-12-07 the
  // source that cost more alone: QA, a degraded NIC whose removal regained 0.45 points lost to
  // host 44's 0.07 because the hosts cost more alone).
  const bool several = sources.size() > 1;
  const auto regain_without = [&](const std::string& source) {
    if (!several) return base.mfu - all->mfu;
    const FlowVariant* rest = find_variant(variants, "all but " + source);
    return rest ? rest->mfu - all->mfu : 0.0;
  };
  std::string top_source;
  double top_alone = 0, top_regain = 0, compute_regain = std::max(regained, 0.0);
  for (const std::string& source : sources) {
    const FlowVariant* v = several ? find_variant(variants, source) : all;
    if (!v) continue;
    if (source == "hosts" || source == "gpus") {
      if (!repaired) compute_regain = std::max(compute_regain, regain_without(source));
    } else if (const double r = regain_without(source); r > top_regain || (r == top_regain && base.mfu - v->mfu > top_alone)) {
      top_regain = r;
      top_alone = base.mfu - v->mfu;
      top_source = source;
    }
  }
  if (!top_source.empty() && top_regain > compute_regain) {
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
  // The stage the repaired run then waits for, when repairing that one too would regain something
  // (its "all but stage N" run is faster than "all"; with one stage holding stragglers, no such run).
  if (repaired && repaired->critical_stage >= 0 && repaired->critical_stage != stage && base.mfu - repaired->mfu > 5e-5) {
    const FlowVariant* next = find_variant(variants, "all but stage " + std::to_string(repaired->critical_stage));
    if (next && next->mfu - all->mfu > 5e-5) {
      out.cause += ", the rest is the slow hosts on stage " + std::to_string(repaired->critical_stage) +
                   ", which the iteration then waits for";
    }
  }
  return out;
}

}  // namespace

Json whatif_flow_json(const ScenarioConfig& cfg, const std::vector<FlowVariant>& variants) {
  Json j = Json::object();
  j.set("kind", "whatif");
  j.set("fidelity", "flow");
  j.set("scenario", scenario_name(cfg));
  set_layer_map(j, cfg);
  Json& rows = j.set("variants", Json::array());
  for (const FlowVariant& v : variants) {
    const FlowVariant* base = baseline_of(variants, v);
    Json row = Json::object();
    row.set("variant", v.name);
    if (!v.error.empty()) {
      row.set("error", v.error);
      rows.push(row);
      continue;
    }
    row.set("iteration_time_s", v.iteration_s);
    row.set("mfu", v.mfu);
    if (base) {
      row.set("slowdown", v.iteration_s / base->iteration_s);
      row.set("mfu_lost", base->mfu - v.mfu);
    }
    row.set("rank_groups_simulated", v.rank_groups);
    row.set("wall_time_s", v.wall_s);
    row.set("critical_path", v.critical);
    row.set("critical_stage", v.critical_stage);
    row.set("straggling_groups", v.straggling);
    row.set("links", v.links);
    if (!v.representative_paces.empty()) row.set("representative_paces", v.representative_paces);
    rows.push(row);
  }
  const FlowSummary sum = flow_summary(cfg, variants);
  j.set("cause", sum.cause);
  if (sum.draws.count > 1) j.set("draws", draws_json(sum.draws));
  return j;
}

std::string whatif_flow_table(const ScenarioConfig& cfg, const std::vector<FlowVariant>& variants) {
  std::ostringstream o;
  o << "scenario   " << scenario_name(cfg) << " (flow level: one detailed simulation per variant)\n";
  if (variants.empty()) return o.str();
  const FlowVariant& base = variants.front();
  if (!base.error.empty()) return o.str() + "baseline failed: " + base.error + "\n";
  o << "baseline   iteration " << to_string(Time::s(base.iteration_s))
    << fmt(cfg.network.faults.empty() ? ", MFU %.2f%% (no stragglers" : ", MFU %.2f%% (no stragglers, no network.faults",
           100 * base.mfu)
    << map_words(cfg) << ")\n\n";
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
    const FlowVariant* bp = baseline_of(variants, v);  // a redraw against its own baseline
    if (!bp) {
      o << v.name << ": its baseline failed\n";
      continue;
    }
    const FlowVariant& b = *bp;
    if (&b == &v) {  // a redraw's own baseline: what its "all, seed K" is priced against
      std::snprintf(line, sizeof line, "%-20s %12s %9s %10s %7d %7.1fs\n", v.name.c_str(),
                    to_string(Time::s(v.iteration_s)).c_str(), "-", "baseline", v.rank_groups, v.wall_s);
      o << line;
      continue;
    }
    std::snprintf(line, sizeof line, "%-20s %12s %8.2f%% %7.2f pt %7d %7.1fs\n", v.name.c_str(),
                  to_string(Time::s(v.iteration_s)).c_str(), 100 * (v.iteration_s / b.iteration_s - 1),
                  100 * (b.mfu - v.mfu), v.rank_groups, v.wall_s);
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
  // A folded representative that paces a straggled variant hides the stragglers behind its
  // in-step ECMP collisions.
  int paced = 0, straggled = 0;
  std::string paced_group;
  for (const FlowVariant& v : variants) {
    if (!v.error.empty() || v.straggling.empty()) continue;
    ++straggled;
    if (v.representative_paces.empty()) continue;
    ++paced;
    if (paced_group.empty()) paced_group = v.representative_paces;
  }
  if (paced > 0) {
    o << "\nnote       " << representative_pacing_words(paced_group)
      << fmt(" (%.0f of ", paced) << straggled << " variants with stragglers)\n";
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
