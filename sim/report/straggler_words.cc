// SPDX-License-Identifier: Apache-2.0
#include "sim/report/internal/straggler_words.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "sim/report/internal/html_text.h"

namespace clustersim::report::internal {

using engine::StragglerImpact;
constexpr auto fmt = &format_number;

Json index_array(const std::vector<int>& indices) {
  Json a = Json::array();
  for (int i : indices) a.push(i);
  return a;
}

std::string index_list(const std::vector<int>& v, size_t limit) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < limit; ++i) out += (i ? "," : "") + std::to_string(v[i]);
  if (v.size() > limit) out += ",... (" + std::to_string(v.size()) + ")";
  return out;
}

const char* baseline_words(const ScenarioConfig& cfg) {
  return cfg.stragglers.only_stage_layers() ? "with the layers split evenly" : "without stragglers";
}

const char* stragglers_name(const ScenarioConfig& cfg) {
  return cfg.stragglers.only_stage_layers() ? "stage_layers" : "stragglers";
}

std::string stage_words(const ScenarioConfig& cfg, int stage) {
  const int pp = cfg.parallelism.pp;
  return "stage " + std::to_string(stage) + " of " + std::to_string(pp) +
         (stage == pp - 1 && pp > 1 ? " (the last, which also runs the LM head)" : "");
}

namespace {

std::string ms(Time t) { return fmt("%.1f ms", t.as_s() * 1e3); }

}  // namespace

std::string layer_map_list(const ScenarioConfig& cfg) {
  std::string out;
  for (const int l : cfg.parallelism.stage_layers) out += (out.empty() ? "" : ", ") + std::to_string(l);
  return out;
}

std::string critical_words(const ScenarioConfig& cfg, const std::string& source, const StragglerImpact& s) {
  const engine::CriticalPath& c = s.critical;
  std::string out;
  if (c.replica >= 0) {
    out = "replica " + std::to_string(c.replica) + ", " + stage_words(cfg, c.stage);
    if (!c.hosts.empty()) out += ", host " + index_list(c.hosts);
    const double over = c.stage_time / c.nominal_stage_time - 1.0;
    const auto named = std::find_if(c.slow_stages.begin(), c.slow_stages.end(),
                                    [&](const engine::SlowStage& x) { return x.stage == c.stage; });
    if (over > 1e-4) {
      out += fmt(": its forward + backward per micro-batch is %.2f%% over the nominal bottleneck stage's, so it paces "
                 "every micro-batch of the replica, and every replica waits for it at the gradient reduction",
                 100.0 * over);
    } else if (named != c.slow_stages.end()) {
      // The bottleneck is the last stage, with the LM head, unless an MoE model's layer map puts
      // more on another (named since 2026-12-07; always "the last" before).
      const int pp = cfg.parallelism.pp;
      const std::string bottleneck = c.nominal_stage == pp - 1 ? "the last, with the LM head"
                                                                : "stage " + std::to_string(c.nominal_stage);
      out += fmt(": its forward + backward per micro-batch stays %.2f%% under the nominal bottleneck stage's (",
                 -100.0 * over) +
             bottleneck +
             "), yet alone its slower passes stretch the schedule (fill, drain and waits between chunks) by " +
             ms(named->alone);
    } else if (c.by_nics) {
      out += ": its pipeline runs at nominal speed; its degraded NICs slow its collectives and sends";
    } else {
      out += ": the replica's bottleneck stage";
    }
    for (const engine::SlowStage& x : c.slow_stages) {
      if (x.stage == c.stage) continue;
      out += "; also slowed in that replica: stage " + std::to_string(x.stage) + " (host " + index_list(x.hosts) +
             ", alone " + ms(x.alone) + ")";
    }
  } else if (source == "hosts" || source == "gpus") {
    // A source with no slow unit has nothing to hide (2026-12-05: it read as if slack hid one).
    const std::optional<ComputeStraggler>& unit = source == "hosts" ? cfg.stragglers.hosts : cfg.stragglers.gpus;
    const char* inert = unit ? unit->inert_reason() : nullptr;
    out = inert ? std::string(inert)
                : "no slow host on a stage that paces its pipeline (hidden by the last stage's LM-head slack)";
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

namespace {

// Compute time on the flow level's critical path, per rank group.
std::map<int32_t, Time> critical_compute(const engine::FlowTrainingResult& f) {
  std::map<int32_t, Time> compute;
  if (f.groups.empty()) return compute;
  for (const engine::CriticalSegment& seg : f.groups[f.critical_group].critical_path) {
    if (seg.kind == "compute") compute[seg.group] += seg.time;
  }
  return compute;
}

bool is_straggling(const engine::FlowTrainingResult& f, const std::string& name) {
  return std::any_of(f.straggling_groups.begin(), f.straggling_groups.end(),
                     [&](const std::string& g) { return g.rfind(name + " ", 0) == 0; });
}

}  // namespace

// The rank groups with the most compute on the flow level's critical path (the chain of ops whose
// ends released each other, back from the last rank group's last op), slowest first, with their
// slow hosts.
std::string flow_critical_words(const engine::FlowTrainingResult& f, size_t limit) {
  const std::map<int32_t, Time> compute = critical_compute(f);
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
  int stage = -1;
  Time most;
  for (const auto& [group, t] : critical_compute(f)) {
    const std::string& name = f.group_names[group];
    int s = -1, r = -1;
    if (!is_straggling(f, name) || std::sscanf(name.c_str(), "stage%d/dp%d", &s, &r) != 2) continue;
    if (stage < 0 || t > most) {
      stage = s;
      most = t;
    }
  }
  return stage;
}

std::string flow_pacing_representative(const engine::FlowTrainingResult& f) {
  if (!f.folded || f.straggling_groups.empty() || f.group_names.empty()) return "";
  const std::map<int32_t, Time> compute = critical_compute(f);
  const auto top = std::max_element(compute.begin(), compute.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  if (top == compute.end()) return "";
  // Group 0 is stage 0 of the first simulated replica: with folding, the representative.
  int s = -1, rep = -1, dp = -1;
  const std::string& name = f.group_names[top->first];
  if (std::sscanf(f.group_names.front().c_str(), "stage%d/dp%d", &s, &rep) != 2 ||
      std::sscanf(name.c_str(), "stage%d/dp%d", &s, &dp) != 2 || dp != rep || is_straggling(f, name)) {
    return "";
  }
  return name;
}

std::string representative_pacing_words(const std::string& group) {
  return "the folded representative replica (" + group +
         "), not a straggling one, paces the iteration: folded, it sends in step with every replica it stands for and "
         "meets their ECMP collisions at every send, which the straggling replicas (simulated on their own) do not, "
         "so the stragglers' cost against a folded baseline may be understated, down to nothing; set "
         "training.fold_ranks: false to simulate every replica on its own";
}

std::string flow_link_words(const engine::FlowTrainingResult& f, size_t limit) {
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

}  // namespace clustersim::report::internal
