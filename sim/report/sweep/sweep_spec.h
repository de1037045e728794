// SPDX-License-Identifier: Apache-2.0
// A sweep file: a base scenario, axes over scenario keys, constraints and an objective, read
// strictly (unknown keys, empty axes and objectives that are not outputs are errors).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sim/core/yaml_tree.h"

namespace clustersim::sweep {

// One value of an axis: the scenario keys it sets (one for a scalar axis, several when the value
// is a mapping such as {tp: 8, pp: 8, vpp: 6}), and how it prints in tables.
struct AxisValue {
  std::vector<std::pair<std::string, YamlNode>> sets;  // full key path -> YAML value
  std::string label;                                   // "8", "tp=8 pp=8 vpp=6"
  double number = 0;                                   // numeric value for plots (index if not numeric)
  bool numeric = false;
};

struct Axis {
  std::string key;  // scenario key path ("parallelism.tp") or section ("parallelism")
  int line = 0;
  std::vector<AxisValue> values;  // never empty
};

enum class Goal { kMaximize, kMinimize };

// A bound on one output metric; either side may be absent.
struct MetricLimit {
  std::string metric;
  std::optional<double> min, max;
  int line = 0;  // in the sweep file, for messages
};

enum class ScenarioKind { kTraining, kTraffic, kInference };

struct SweepSpec {
  std::string file;         // the sweep file, for messages
  std::string name;
  std::string description;
  std::string base_origin;  // the base scenario file, or the sweep file for an inline base
  // The base as the sweep file writes it (relative to the sweep file), or "inline": what
  // sweep.json records, the same from any directory.
  std::string base_written;
  YamlNode base;            // the base scenario with `set` applied
  ScenarioKind kind = ScenarioKind::kTraining;
  std::vector<Axis> axes;   // file order; the last varies fastest

  // constraints
  bool memory_fits = true;       // plans that do not fit are infeasible (false: keep and report)
  std::optional<int> gpus_min;   // cluster.gpus bounds (a fixed count sets both)
  std::optional<int> gpus_max;
  std::vector<MetricLimit> limits;

  // objective
  std::string objective = "tokens_per_s";
  Goal goal = Goal::kMaximize;
  double train_tokens = 0;  // for time_to_train_days, gpu_hours_to_train and cost_to_train
  std::map<std::string, double> price_per_gpu_hour;  // GPU (cluster.gpu as written) -> price

  int flow_top_k = 5;                 // candidates re-run at the flow level; 0 = none
  std::string flow_fidelity = "flow";
  int report_top = 20;                // rows in the printed and HTML rankings

  std::string fingerprint;  // hash of everything that decides the results (resume checks it)

  int64_t candidate_count() const;
};

// Output metrics of a scenario kind, and which way is better for each.
std::vector<std::string> output_metrics(ScenarioKind kind);
Goal default_goal(const std::string& metric);
// Whether `metric` follows from objective.train_tokens: time_to_train_days, gpu_hours_to_train,
// cost_to_train.
bool needs_train_tokens(const std::string& metric);
// Whether `metric` is priced from price_per_gpu_hour: cost_per_mtoken, cost_to_train.
bool is_cost(const std::string& metric);

// Reads a sweep file. Throws BadInput listing every problem with file, line and key path.
SweepSpec load_sweep_spec(const std::string& path);

// Warnings about the objective the axes make misleading: MFU and HFU are against the peak of the
// precision trained in and of each candidate's GPU, so an axis over training.precision or
// cluster.gpu ranks a faster plan below a slower one (FP8 doubles the peak).
std::vector<std::string> objective_notes(const SweepSpec& spec);

// Same, from a parsed tree; `file` names it in messages and resolves a relative `base`.
SweepSpec sweep_spec_from_tree(const YamlNode& root, const std::string& file);

// Sets `path` ("a.b.c") in `root` to `value`, creating maps on the way. Returns false when the
// path crosses a node that is not a map.
bool set_path(YamlNode& root, const std::string& path, const YamlNode& value);

// A canonical one-line text of a YAML node (for hashing and labels).
std::string canonical_text(const YamlNode& n);

// FNV-1a 64-bit hash as 16 hex digits.
std::string hash_hex(const std::string& text);

}  // namespace clustersim::sweep
