// SPDX-License-Identifier: Apache-2.0
// `stragglers`: slow GPUs, hosts, links and stages in the detailed simulation (issue 9).
// Plain structs (no yaml-cpp); read_stragglers fills them from the scenario, validate_stragglers checks
// them against the rest of the scenario. Keys are documented in scenarios/README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/error.h"
#include "sim/core/units.h"

namespace clustersim {

class MapReader;
struct ScenarioConfig;

// Which part of a micro-batch's compute a slowdown stretches.
enum class StragglerPhase { kAll, kForward, kBackward };

// Hosts or GPUs whose kernels take `slowdown` times as long: listed by index, or drawn at random
// (`fraction` of all hosts/GPUs, rounded to the nearest whole one, or `count` of them).
struct ComputeStraggler {
  std::vector<int> list;      // host (or GPU) indices, 0-based; host = gpu / gpus_per_node
  double fraction = 0.0;      // drawn: this share of hosts (GPUs), in [0, 1]
  int count = 0;              // drawn: this many hosts (GPUs)
  double slowdown = 1.0;      // compute time factor, >= 1 (1.1 = 10% slower)
  StragglerPhase phase = StragglerPhase::kAll;

  // Why this source slows nothing (its count and fraction are 0, or its slowdown is 1), in the
  // words of run's note; nullptr when it can slow something.
  const char* inert_reason() const {
    if (list.empty() && count == 0 && fraction == 0.0) return "slows none: its count (or fraction) is 0";
    if (slowdown == 1.0) return "slows nothing: its slowdown is 1";
    return nullptr;
  }
};

// Degraded NICs: lower bandwidth and/or extra latency on the listed hosts' NIC `nic` (or all of
// their NICs).
struct NicStraggler {
  std::vector<int> hosts;
  int nic = -1;                   // -1: every NIC of the host
  double bandwidth_factor = 1.0;  // (0, 1]: share of the line rate left
  Time extra_latency = Time::zero();
};

// Sequence-length imbalance across DP replicas: the heaviest `replicas` replicas carry
// `max_over_mean` times the mean tokens, in longer sequences (attention grows quadratically).
struct SequenceImbalance {
  double max_over_mean = 1.0;
  int replicas = 1;
};

// Persistent GPU-to-GPU speed variation (manufacturing and power management): every GPU's compute
// time is multiplied by its own factor, drawn once from a normal distribution around 1 (the
// calibrated speed is the median GPU's). `spread` is Sinha et al.'s measure ("Not All GPUs Are
// Created Equal", SC'22): 4 x IQR / median of the per-GPU times (the Tukey whiskers' span), 0.08
// on average over their clusters and applications, 0.22 at most. For a normal distribution
// IQR = 1.349 sigma, so sigma = spread / 5.396.
struct SpeedVariation {
  double spread = 0.0;  // (0, 0.5]
  StragglerPhase phase = StragglerPhase::kAll;
};

struct StragglersConfig {
  uint64_t seed = 0;                      // for drawn hosts/GPUs and the variation
  std::optional<ComputeStraggler> hosts;  // `hosts`
  std::optional<ComputeStraggler> gpus;   // `gpus`
  std::optional<NicStraggler> nics;       // `nics`
  std::vector<int> stage_layers;          // layers per pipeline stage (empty: even split)
  SequenceImbalance sequence_imbalance;   // `sequence_imbalance`
  std::optional<SpeedVariation> variation;  // `variation`
  // Listed hosts a cluster state slows on top of `hosts` (the reliability model's degraded
  // states: one more slow host beside the scenario's own); not a scenario key.
  std::vector<ComputeStraggler> added_hosts;

  bool empty() const {
    return !hosts && !gpus && !nics && stage_layers.empty() &&
           sequence_imbalance.max_over_mean == 1.0 && !variation && added_hosts.empty();
  }
  // Only an uneven layer split: the plan itself (Llama 3 405B's 7, 8, ..., 8, 7), not a straggler;
  // the reports then compare it with the even split in those words.
  bool only_stage_layers() const {
    StragglersConfig rest = *this;
    rest.stage_layers.clear();
    return !stage_layers.empty() && rest.empty();
  }
  // Whether some slow hosts or GPUs are drawn at random (`fraction` or `count`), not listed:
  // redrawing them moves them.
  bool units_drawn() const {
    auto random = [](const std::optional<ComputeStraggler>& c) { return c && c->list.empty(); };
    return random(hosts) || random(gpus);
  }
  // Whether the cost depends on the seed: slow units drawn, or every GPU's speed (`variation`);
  // the what-if then reports it over draws.
  bool drawn() const { return units_drawn() || variation.has_value(); }
  // drawn(), less slow hosts or GPUs that slow nothing (inert_reason): what the default placement
  // draws of run and whatif price (100 draws of nothing until 2026-12-05), and what an explicit
  // --draws needs (since 2026-12-06; replicas that slow nothing stay folded at the flow level).
  bool drawn_slow() const {
    auto random = [](const std::optional<ComputeStraggler>& c) { return c && c->list.empty() && !c->inert_reason(); };
    return random(hosts) || random(gpus) || variation.has_value();
  }
  // Whether there is a `variation` and some other source to price on top of it.
  bool variation_with_others() const {
    StragglersConfig others = *this;
    others.variation.reset();
    return variation.has_value() && !others.empty();
  }
};

const char* to_string(StragglerPhase p);

// Reads the `stragglers` mapping strictly (unknown keys are errors). Called by the scenario loader.
void read_stragglers(MapReader r, StragglersConfig& out);

// Cross-field checks; appends problems to `errors` (see scenario_error in sim/core/scenario.h).
void validate_stragglers(const ScenarioConfig& cfg, std::vector<InputError>& errors);

// The scenario as the heaviest replicas of `si` run it: model.seq_len times max_over_mean, a whole
// multiple of cp.
ScenarioConfig with_heavy_sequences(const ScenarioConfig& cfg, const SequenceImbalance& si);

}  // namespace clustersim
