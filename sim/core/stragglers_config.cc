// SPDX-License-Identifier: Apache-2.0
#include "sim/core/stragglers_config.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"

namespace clustersim {
namespace {

// What a list of whole numbers holds, in the reader's messages: `list` and `hosts` hold indices,
// `stage_layers` layer counts (called "a list of indices" too until 2026-12-05).
struct IntList {
  const char* expected;  // the whole list
  const char* item;      // one entry
};
const IntList kIndices{"a list of indices such as [3, 17]", "a non-negative integer"};
const IntList kStageLayers{
    "a list of layer counts, one per pipeline stage (pp entries) adding up to model.layers, such as [10, 14]",
    "a stage's layer count (a whole number)"};

// A list of non-negative integers under `key`; errors say what it holds and name the item.
bool read_int_list(MapReader& r, const std::string& key, const IntList& kind, std::vector<int>& out) {
  const YamlNode* n = r.child(key);
  if (!n) return false;
  if (!n->is_seq()) {
    r.error(key, std::string("expected ") + kind.expected);
    return false;
  }
  if (n->seq.empty()) {
    r.error(key, "the list is empty; give its entries or remove the key");
    return false;
  }
  std::vector<int> values;
  for (size_t i = 0; i < n->seq.size(); ++i) {
    const YamlNode& item = n->seq[i];
    const std::optional<long long> v = plain_integer(item);
    if (!v || *v < 0 || *v > INT32_MAX) {
      r.error(key, "item " + std::to_string(i) + ": expected " + kind.item + ", got '" + item.scalar + "'");
      return false;
    }
    values.push_back(static_cast<int>(*v));
  }
  out = std::move(values);
  return true;
}

// The slow hosts or GPUs under `key` of the stragglers section `parent`; `units` names what the
// indices count ("hosts", "GPUs").
void read_compute(MapReader& parent, const std::string& key, ComputeStraggler& c, const std::string& units) {
  MapReader r = parent.section(key);
  read_int_list(r, "list", kIndices, c.list);
  r.read("fraction", c.fraction, Need::kOptional, 0.0, 1.0);
  r.read("count", c.count, Need::kOptional, 0);
  r.read("slowdown", c.slowdown, Need::kRequired, 1.0, 100.0);
  r.read_enum("phase", c.phase,
              {{"all", StragglerPhase::kAll}, {"forward", StragglerPhase::kForward},
               {"backward", StragglerPhase::kBackward}});
  // Said of the mapping (stragglers.gpus, at its line), with what it gives: the message named
  // `.list` whether or not a list was given (`--set stragglers.gpus.slowdown=1.5` on a file
  // without gpus) until 2026-12-05.
  std::vector<std::string> given;
  for (const char* k : {"list", "fraction", "count"}) {
    if (r.has(k)) given.push_back(k);
  }
  if (given.size() != 1) {
    const std::string got = given.empty() ? "none of them is given" : "it gives " + joined_words(given);
    parent.error(key, "give exactly one of list (the slow " + units + "' indices), fraction (of all " + units +
                          ") or count (drawn at random); " + got);
  }
  r.finish();
}

void read_nics(MapReader r, NicStraggler& n) {
  if (!read_int_list(r, "hosts", kIndices, n.hosts) && !r.has("hosts")) r.missing("hosts");
  r.read("nic", n.nic, Need::kOptional, 0);
  r.read("bandwidth_factor", n.bandwidth_factor, Need::kOptional, 1e-6, 1.0);
  r.read("extra_latency", n.extra_latency);
  r.finish();
}

std::string str(long long v) { return std::to_string(v); }

// stragglers.variation.spread's range, in the reader's words and the check's alike (the reader
// said ">= 0" and the check "above zero" until 2026-12-05).
const char* const kSpreadRange =
    "a number above 0 and at most 0.5 (the spread of the GPUs' compute times; remove `variation` for identical GPUs)";

}  // namespace

const char* to_string(StragglerPhase p) {
  switch (p) {
    case StragglerPhase::kAll: return "all";
    case StragglerPhase::kForward: return "forward";
    case StragglerPhase::kBackward: return "backward";
  }
  return "?";
}

void read_stragglers(MapReader r, StragglersConfig& out) {
  r.read("seed", out.seed);
  // child() marks the key known, so an unknown key's hint lists all three.
  if (r.child("hosts")) read_compute(r, "hosts", out.hosts.emplace(), "hosts");
  if (r.child("gpus")) read_compute(r, "gpus", out.gpus.emplace(), "GPUs");
  if (r.child("nics")) read_nics(r.section("nics"), out.nics.emplace());
  read_int_list(r, "stage_layers", kStageLayers, out.stage_layers);
  if (r.child("variation")) {
    MapReader v = r.section("variation");
    SpeedVariation& sv = out.variation.emplace();
    if (double spread = 0; v.read("spread", spread, Need::kRequired)) {
      if (spread > 0 && spread <= 0.5) {
        sv.spread = spread;
      } else {
        v.error("spread", std::string("expected ") + kSpreadRange + ", got " + format_number(spread));
      }
    }
    v.read_enum("phase", sv.phase,
                {{"all", StragglerPhase::kAll}, {"forward", StragglerPhase::kForward},
                 {"backward", StragglerPhase::kBackward}});
    v.finish();
  }
  MapReader s = r.section("sequence_imbalance");
  s.read("max_over_mean", out.sequence_imbalance.max_over_mean, Need::kOptional, 1.0, 100.0);
  s.read("replicas", out.sequence_imbalance.replicas, Need::kOptional, 1);
  s.finish();
  r.finish();
}

ScenarioConfig with_heavy_sequences(const ScenarioConfig& cfg, const SequenceImbalance& si) {
  ScenarioConfig longer = cfg;
  const int cp = cfg.parallelism.cp;
  const double tokens = si.max_over_mean * cfg.model.seq_len;
  longer.model.seq_len = std::max(cp, static_cast<int>(std::llround(tokens / cp)) * cp);
  // A window as long as the sequence is full causal attention (model.attention_window), and stays
  // so over the longer sequence (QA, 2026-12-08: window = seq_len read 7.6% faster than 0 with
  // heavy sequences, their attention priced as a window of the mean length).
  if (cfg.model.attention_window >= cfg.model.seq_len) longer.model.attention_window = 0;
  return longer;
}

namespace {

// stragglers.stage_layers as given (a dense model's, or an MoE model's layer map in
// ParallelismConfig::stage_layers): one entry per stage, none empty, adding up to model.layers;
// an MoE model's entries split whole over the stage's vpp chunks.
void check_stage_layers(const ScenarioConfig& cfg, const std::vector<int>& listed, std::vector<InputError>& errors) {
  if (listed.empty()) return;
  const ParallelismConfig& p = cfg.parallelism;
  long long sum = 0;
  for (int l : listed) sum += l;
  const auto empty_stage = std::find(listed.begin(), listed.end(), 0);
  const auto uneven_chunks =
      std::find_if(listed.begin(), listed.end(), [&](int l) { return p.vpp > 0 && l % p.vpp != 0; });
  if (static_cast<int>(listed.size()) != p.pp) {
    errors.push_back(scenario_error(cfg, "stragglers.stage_layers", "needs one entry per pipeline stage (pp = " +
                                                                        str(p.pp) + "); got " + str(listed.size())));
  } else if (empty_stage != listed.end()) {
    errors.push_back(scenario_error(cfg, "stragglers.stage_layers",
                                    "every stage needs at least one layer; stage " + str(empty_stage - listed.begin()) +
                                        " has 0"));
  } else if (sum != cfg.model.layers) {
    errors.push_back(scenario_error(cfg, "stragglers.stage_layers", "entries must add up to model.layers (" +
                                                                        str(cfg.model.layers) + "); they add up to " + str(sum)));
  } else if (cfg.model.moe && uneven_chunks != listed.end()) {
    errors.push_back(scenario_error(
        cfg, "stragglers.stage_layers",
        "an MoE model's layers go whole to each of a stage's vpp (" + str(p.vpp) + ") chunks: stage " +
            str(uneven_chunks - listed.begin()) + " has " + str(*uneven_chunks) + ", not a multiple of " + str(p.vpp)));
  }
}

}  // namespace

void validate_stragglers(const ScenarioConfig& cfg, std::vector<InputError>& errors) {
  const StragglersConfig& s = cfg.stragglers;
  check_stage_layers(cfg, cfg.parallelism.stage_layers, errors);  // an MoE model's layer map
  // Checked before the early return: without max_over_mean > 1 the section counts as empty.
  if (cfg.given.count("stragglers.sequence_imbalance.replicas") && s.sequence_imbalance.max_over_mean <= 1.0) {
    errors.push_back(scenario_error(cfg, "stragglers.sequence_imbalance.replicas",
                                    "has no effect without max_over_mean > 1 (the heavy replicas' load over the mean)"));
  }
  if (s.empty()) return;
  if (s.variation && s.variation->spread <= 0.0) {
    errors.push_back(scenario_error(cfg, "stragglers.variation.spread",
                                    std::string("expected ") + kSpreadRange + ", got " + format_number(s.variation->spread)));
  }
  const int gpus = cfg.cluster.gpus;
  const int hosts = cfg.cluster.gpus_per_node > 0 ? gpus / cfg.cluster.gpus_per_node : 0;
  auto check = [&](const std::optional<ComputeStraggler>& c, const std::string& key, int units) {
    if (!c) return;
    std::set<int> seen;
    for (int v : c->list) {
      if (v >= units) {
        errors.push_back(scenario_error(cfg, key + ".list", "index " + str(v) + " is out of range: there are " +
                                                                str(units) + " (0 to " + str(units - 1) + ")"));
      }
      if (!seen.insert(v).second) {
        errors.push_back(scenario_error(cfg, key + ".list", "index " + str(v) + " is listed twice"));
      }
    }
    if (c->count > units) {
      errors.push_back(scenario_error(cfg, key + ".count", "there are only " + str(units) + "; got " + str(c->count)));
    }
  };
  check(s.hosts, "stragglers.hosts", hosts);
  check(s.gpus, "stragglers.gpus", gpus);
  if (s.nics) {
    std::set<int> seen;
    for (int h : s.nics->hosts) {
      if (!seen.insert(h).second) {
        errors.push_back(scenario_error(cfg, "stragglers.nics.hosts", "host " + str(h) + " is listed twice"));
      }
      if (h >= hosts) {
        errors.push_back(scenario_error(cfg, "stragglers.nics.hosts", "host " + str(h) + " is out of range: there are " +
                                                                         str(hosts) + " hosts"));
      }
    }
    if (s.nics->nic >= cfg.cluster.nics_per_node) {
      errors.push_back(scenario_error(cfg, "stragglers.nics.nic", "must be below cluster.nics_per_node (" +
                                                                      str(cfg.cluster.nics_per_node) + ")"));
    }
    if (s.nics->bandwidth_factor == 1.0 && s.nics->extra_latency == Time::zero()) {
      errors.push_back(scenario_error(cfg, "stragglers.nics", "a degraded NIC needs bandwidth_factor < 1 or extra_latency > 0"));
    }
  }
  check_stage_layers(cfg, s.stage_layers, errors);
  const ParallelismConfig& p = cfg.parallelism;
  const long long model_ranks = static_cast<long long>(p.tp) * p.pp * p.cp;
  const long long dp = model_ranks > 0 ? gpus / model_ranks : 0;
  // With no whole replica (the plan's own error says why: tp x pp x cp above the GPUs) there is
  // nothing to check here; a default the user never wrote was named until 2026-12-06.
  if (dp < 1) return;
  if (s.sequence_imbalance.replicas > dp) {
    errors.push_back(scenario_error(cfg, "stragglers.sequence_imbalance.replicas",
                                    "there are only " + str(dp) + " DP replicas; got " + str(s.sequence_imbalance.replicas)));
  } else if (s.sequence_imbalance.max_over_mean > 1.0 &&
             s.sequence_imbalance.replicas * s.sequence_imbalance.max_over_mean > dp) {
    errors.push_back(scenario_error(cfg, "stragglers.sequence_imbalance.replicas",
                                    "replicas x max_over_mean must not exceed the DP size (" + str(dp) +
                                        "): the heavy replicas cannot carry more than the whole batch"));
  }
}

}  // namespace clustersim
