// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/sweep_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "calibration/hardware_profile.h"
#include "sim/core/digest.h"
#include "sim/core/error.h"
#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"
#include "sim/core/unit_parse.h"
#include "sim/core/yaml_tree.h"

namespace clustersim::sweep {
namespace {

// A range may not expand beyond this many values (a typo such as `to: 1e9` fails fast).
constexpr int64_t kMaxAxisValues = 100000;
// Nor may the whole sweep exceed this many candidates.
constexpr double kMaxCandidates = 1e8;


YamlNode scalar_node(const std::string& text, const YamlNode& like) {
  YamlNode n;
  n.kind = YamlNode::Kind::kScalar;
  n.scalar = text;
  n.file = like.file;
  n.line = like.line;
  return n;
}

// Leaves of a mapping value, as (key path, node) under `prefix`.
void flatten(const YamlNode& n, const std::string& prefix,
             std::vector<std::pair<std::string, YamlNode>>& out) {
  if (n.is_map() && !n.map.empty()) {
    for (const auto& [k, v] : n.map) flatten(v, prefix + "." + k, out);
  } else {
    out.emplace_back(prefix, n);
  }
}

// A key read as a down:up ratio (MapReader::read_ratio), where 1 and "64:64", or 3, "3:1" and
// "96:32", are one value: they ran as two identical candidates until 2026-12-05.
bool is_ratio_key(const std::string& path) {
  return path == "network.tor_oversubscription" || path == "network.agg_oversubscription";
}

AxisValue value_from_node(const std::string& key, const YamlNode& n) {
  AxisValue v;
  if (n.is_map()) {
    flatten(n, key, v.sets);
    for (const auto& [path, leaf] : v.sets) {
      v.label += (v.label.empty() ? "" : " ") + path.substr(key.size() + 1) + "=" + canonical_text(leaf);
    }
  } else {
    v.sets.emplace_back(key, n);
    v.label = canonical_text(n);
    if (const auto x = is_ratio_key(key) ? plain_ratio(n) : plain_real(n)) {
      v.number = *x;
      v.numeric = true;
    }
  }
  return v;
}

// What makes two values of an axis one value: the number (8 and 8.0), or the settings in any
// order (mappings that set the same keys to the same text, or to one quantity in other units).
using Settings = std::vector<std::pair<std::string, std::string>>;
// A scalar with a unit as its quantity ("time 200000000000 ps", "bandwidth 2.5e+10 B/s"), so that
// 200Gbps and 25GBps, or 200ms and 0.2s, compare equal; a ratio key's value as its ratio ("ratio 1"
// for 1 and "64:64"); anything else as written.
std::string quantity_text(const std::string& path, const YamlNode& n) {
  if (is_ratio_key(path)) {
    if (const auto r = plain_ratio(n)) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "ratio %.17g", *r);
      return buf;
    }
  }
  if (n.kind != YamlNode::Kind::kScalar || n.scalar.empty() || !std::isalpha(static_cast<unsigned char>(n.scalar.back()))) {
    return canonical_text(n);
  }
  char buf[64];
  if (const std::optional<Bandwidth> b = parse_bandwidth(n.scalar)) {
    std::snprintf(buf, sizeof buf, "bandwidth %.17g B/s", b->bytes_per_s);
  } else if (const std::optional<Time> t = parse_time(n.scalar)) {
    std::snprintf(buf, sizeof buf, "time %lld ps", static_cast<long long>(t->as_ps()));
  } else if (const std::optional<Bytes> y = parse_bytes(n.scalar)) {
    std::snprintf(buf, sizeof buf, "bytes %lld B", static_cast<long long>(y->n));
  } else {
    return canonical_text(n);
  }
  return buf;
}

Settings settings_of(const AxisValue& v) {
  Settings out;
  for (const auto& [path, node] : v.sets) out.emplace_back(path, quantity_text(path, node));
  std::sort(out.begin(), out.end());
  return out;
}


// The key paths an axis's values set, each once, in the order they first appear.
std::vector<std::string> axis_paths(const Axis& a) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const AxisValue& v : a.values) {
    for (const auto& [path, node] : v.sets) {
      if (seen.insert(path).second) out.push_back(path);
    }
  }
  return out;
}

void read_range(const std::string& key, const YamlNode& n, Axis& axis, ErrorList& errors) {
  MapReader r(&n, "axes." + key, errors);
  double from = 0, to = 0, step = 1, times = 0;
  const bool ok_from = r.read("from", from, Need::kRequired);
  const bool ok_to = r.read("to", to, Need::kRequired);
  const bool has_step = r.read("step", step);
  const bool has_times = r.read("times", times);
  r.finish();
  if (!ok_from || !ok_to) return;
  if (has_step && has_times) {
    r.error("step", "give either step (arithmetic range) or times (geometric range), not both");
    return;
  }
  if (has_step && step <= 0) {
    r.error("step", "must be above zero");
    return;
  }
  if (has_times && (times <= 1 || from <= 0)) {
    r.error("times", "a geometric range needs times > 1 and from > 0");
    return;
  }
  if (from > to) {
    errors.add(InputError{n.file, n.line, "axes." + key,
                          "the range is empty: from (" + format_number(from) + ") is above to (" +
                              format_number(to) + ")"});
    return;
  }
  const double tolerance = 1e-9 * std::max(1.0, std::fabs(to));
  for (int64_t i = 0;; ++i) {
    const double v = has_times ? from * std::pow(times, static_cast<double>(i)) : from + static_cast<double>(i) * step;
    if (v > to + tolerance) break;
    if (i >= kMaxAxisValues) {
      errors.add(InputError{n.file, n.line, "axes." + key,
                            "the range has more than " + std::to_string(kMaxAxisValues) + " values"});
      axis.values.clear();  // not also checked one by one
      return;
    }
    axis.values.push_back(value_from_node(key, scalar_node(format_number(v), n)));
  }
}

// A section written with no value, or as {}: it sets nothing (set, constraints and prices: both
// ignored until 2026-12-06 and 2026-12-07; axes: refused as missing).
bool no_entries(const YamlNode& n) { return n.is_null() || (n.is_map() && n.map.empty()); }

// `duplicates` gets the values given twice, for the caller to say where the key takes them (a
// value the key refuses, `8.0` for an integer, is that mistake, not a duplicate of `8`).
void read_axes(const YamlNode* axes, const std::string& file, SweepSpec& spec, ErrorList& errors,
               std::vector<std::pair<std::string, InputError>>& duplicates) {
  if (!axes || no_entries(*axes)) {
    errors.add(InputError{file, axes ? axes->line : 0, "axes",
                          "required: at least one axis, e.g. axes: {parallelism.tp: [1, 2, 4, 8]}"});
    return;
  }
  if (!axes->is_map()) {
    errors.add(InputError{file, axes->line, "axes", "expected a mapping of scenario key -> list or range"});
    return;
  }
  for (const auto& [key, n] : axes->map) {
    // An empty key (or one with an empty part, `parallelism..tp`) names no scenario key (QA,
    // 2026-12-07: it was said as "axes.: '' is not a scenario key (: unknown key; ...)").
    if (key.empty() || key.front() == '.' || key.back() == '.' || key.find("..") != std::string::npos) {
      errors.add(InputError{n.file, n.line, "axes",
                            "'" + key + "' is not a scenario key: give a dotted key path, e.g. parallelism.tp"});
      continue;
    }
    Axis axis;
    axis.key = key;
    axis.line = n.line;
    if (n.is_seq()) {
      bool refused = false;  // one message an axis (QA, 2026-12-07: it was repeated for every value)
      for (const YamlNode& item : n.seq) {
        if (item.is_null() || item.is_seq() || (item.is_map() && item.map.empty())) {
          // A list value goes inside a mapping of the key's parent section, which the axis sets whole
          // (stragglers: [{stage_layers: [..]}, ..]).
          const size_t dot = key.rfind('.');
          const std::string hint =
              item.is_seq() && dot != std::string::npos
                  ? "; a list value goes in a mapping of its section: axis " + key.substr(0, dot) + ": [{" +
                        key.substr(dot + 1) + ": [...]}, {" + key.substr(dot + 1) + ": [...]}] (it sets the keys it names and keeps the section's others)"
                  : "";
          if (!refused) {
            errors.add(InputError{item.file, item.line, "axes." + key,
                                  "each value must be a scalar or a non-empty mapping of keys under '" + key + "'" + hint});
          }
          refused = true;
          continue;
        }
        axis.values.push_back(value_from_node(key, item));
      }
      if (n.seq.empty()) {
        errors.add(InputError{n.file, n.line, "axes." + key, "the axis is empty; give at least one value"});
      }
    } else if (n.is_map()) {
      read_range(key, n, axis, errors);
    } else {
      errors.add(InputError{n.file, n.line, "axes." + key,
                            "expected a list of values or a range {from, to, step} / {from, to, times}"});
    }
    // A value given twice would run and rank the same candidates twice (ranges hold up to
    // kMaxAxisValues: looked up, not compared pairwise).
    std::map<double, size_t> numbers;
    std::map<Settings, size_t> others;
    for (size_t i = 0; i < axis.values.size(); ++i) {
      const AxisValue& a = axis.values[i];
      const size_t first = a.numeric ? numbers.emplace(a.number, i).first->second
                                     : others.emplace(settings_of(a), i).first->second;
      if (first == i) continue;
      const AxisValue& b = axis.values[first];
      duplicates.push_back({a.label, InputError{n.file, a.sets.empty() ? n.line : a.sets.front().second.line, "axes." + key,
                                                "the value " + a.label + (a.label == b.label ? "" : " (" + b.label + ")") +
                                                    " is given twice; give each value once"}});
    }
    if (!axis.values.empty()) spec.axes.push_back(std::move(axis));
  }
  // Two axes that set one key (parallelism: [{tp: 1}] and parallelism.tp: [4, 8]): the later
  // would override the earlier while the results' columns still named both values.
  // Compared by the paths each axis sets, not value by value: two ranges of 100,000 values made
  // 1e10 pairs (most of 91 s, until 2026-12-05).
  std::vector<std::vector<std::string>> paths;
  for (const Axis& a : spec.axes) paths.push_back(axis_paths(a));
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    for (size_t j = i + 1; j < spec.axes.size(); ++j) {
      std::string shared;
      for (const std::string& pi : paths[i]) {
        for (const std::string& pj : paths[j]) {
          if (shared.empty() && paths_overlap(pi, pj)) shared = pi.size() >= pj.size() ? pi : pj;
        }
      }
      if (!shared.empty()) {
        errors.add(InputError{file, spec.axes[j].line, "axes." + spec.axes[j].key,
                              "sets " + shared + ", which axes." + spec.axes[i].key +
                                  " sets too: one would override the other; give each key one axis"});
      }
    }
  }
}

std::string kind_name(ScenarioKind k) {
  return k == ScenarioKind::kTraining ? "training" : k == ScenarioKind::kTraffic ? "traffic" : "inference";
}

// Applies `sets` to a copy of `base` and reports what the scenario reader refuses at those
// paths: keys it does not know, and values of the wrong type, out of range or not among an enum's
// names. Checks between fields are left to each candidate (a plan that does not divide is a
// candidate reported invalid; a mistyped value is a mistake in the sweep file).
// Returns whether a set path itself is wrong (not a scenario key, or crossing a value that is not a
// mapping): then the axis's other values would say the same.
bool check_value(const YamlNode& base, const std::vector<std::pair<std::string, YamlNode>>& sets,
                 const std::string& where, const std::string& label, const YamlNode& at, ErrorList& errors) {
  YamlNode tree = base;
  for (const auto& [path, value] : sets) {
    if (!set_path(tree, path, value)) {
      errors.add(InputError{at.file, at.line, where, "'" + path + "' crosses a key that is not a mapping"});
      return true;
    }
  }
  bool unknown = false;
  try {
    (void)read_scenario_tree(tree, "sweep");
  } catch (const BadInput& e) {
    for (const InputError& err : e.errors()) {
      for (const auto& [path, value] : sets) {
        if (path != err.key_path && path.rfind(err.key_path + ".", 0) != 0 && err.key_path.rfind(path + ".", 0) != 0) {
          continue;
        }
        if (is_unknown_key(err)) {
          errors.add(InputError{at.file, at.line, where,
                                "'" + path + "' is not a scenario key (" + err.key_path + ": " + err.message +
                                    "); scenarios/README.md lists the keys"});
          unknown = true;
        } else {
          errors.add(InputError{at.file, at.line, where, "value '" + label + "': " + err.key_path + ": " + err.message});
        }
        break;
      }
    }
  }
  return unknown;
}

// A cluster.gpu value resolved as the runs resolve it: a built-in name, or a profile file (relative
// to `dir`, the base scenario's directory) that loads. A misspelt name was an error in each
// candidate and the sweep exited 0 until 2026-12-05; now, as a value not among a key's names, it
// is a mistake in the sweep file, reported at `file`:`value.line` under `where`.
void check_gpu_value(const YamlNode& value, const std::string& where, const std::string& dir, const std::string& file,
                     ErrorList& errors) {
  if (!value.is_scalar()) return;  // a list or a mapping: check_value says so
  const std::string& gpu = value.scalar;
  if (!gpu.empty() && calib::builtin_profile_text(gpu).empty()) {
    const std::string path = calib::profile_file_path(gpu, dir);
    std::error_code ec;
    if (!std::filesystem::exists(path, ec) && !ec) {
      errors.add(InputError{file, value.line, where,
                            "'" + gpu + "' is neither a built-in profile (" + calib::builtin_profile_names_text() + ") nor a profile file (no file " +
                                path + "; paths are relative to the base scenario's directory)"});
      return;
    }
  }
  try {
    (void)calib::load_hardware_profile(gpu, dir);
  } catch (const BadInput& e) {
    for (const InputError& err : e.errors()) {
      // The profile's own errors name its file and line; the others are said of the value.
      errors.add(InputError{file, value.line, where,
                            err.file.empty() ? err.message : "value '" + gpu + "': " + err.to_string()});
    }
  }
}

void read_constraints(const YamlNode* c, SweepSpec& spec, ErrorList& errors) {
  if (!c) return;
  if (no_entries(*c)) {
    errors.add(InputError{c->file, c->line, "constraints", "has no value; give a mapping of metric -> {min, max}, or remove it"});
    return;
  }
  if (!c->is_map()) {
    errors.add(InputError{c->file, c->line, "constraints", "expected a mapping"});
    return;
  }
  const std::vector<std::string> outputs = output_metrics(spec.kind);
  for (const auto& [key, n] : c->map) {
    const std::string path = "constraints." + key;
    if (key == "memory_fits") {
      if (n.scalar != "true" && n.scalar != "false") {
        errors.add(InputError{n.file, n.line, path, "expected true or false"});
      } else {
        spec.memory_fits = n.scalar == "true";
      }
      continue;
    }
    if (key == "gpus") {
      if (plain_real(n)) {
        // A fixed count is read as {min, max} are (2026-12-05: it was cast to int unchecked, so
        // 12288.7 became 12288 and 3e9 wrapped around).
        MapReader whole(c, "constraints", errors);
        int count = 0;
        if (whole.read("gpus", count, Need::kOptional, 1)) spec.gpus_min = spec.gpus_max = count;
      } else {
        MapReader r(&n, path, errors);
        int lo = 0, hi = 0;
        if (r.read("min", lo, Need::kOptional, 1)) spec.gpus_min = lo;
        if (r.read("max", hi, Need::kOptional, 1)) spec.gpus_max = hi;
        r.finish();
        if (!n.is_map()) errors.add(InputError{n.file, n.line, path, "expected a GPU count or {min, max}"});
      }
      // Contradictory bounds would reject every candidate; say so now rather than after the run.
      if (spec.gpus_min && spec.gpus_max && *spec.gpus_min > *spec.gpus_max) {
        errors.add(InputError{n.file, n.line, path,
                              "min " + std::to_string(*spec.gpus_min) + " is above max " +
                                  std::to_string(*spec.gpus_max) + ": no candidate can satisfy it"});
      } else if (spec.gpus_min && *spec.gpus_min < 1) {
        errors.add(InputError{n.file, n.line, path, "a GPU count must be at least 1"});
      }
      continue;
    }
    if (std::find(outputs.begin(), outputs.end(), key) == outputs.end()) {
      std::string list;
      for (const std::string& m : outputs) list += (list.empty() ? "" : ", ") + m;
      errors.add(InputError{n.file, n.line, path,
                            "'" + key + "' is not an output of " +
                                kind_name(spec.kind) +
                                " scenarios; constraints are memory_fits, gpus, or limits on: " + list});
      continue;
    }
    MetricLimit limit;
    limit.metric = key;
    limit.line = n.line;
    MapReader r(&n, path, errors);
    // A metric in seconds (`ttft_p99_s`) takes a duration with its unit (`{max: 50ms}`), as the
    // scenario's limits do, or a plain number of seconds (until 2026-12-06 only the number, so
    // `{max: 50}` meant for milliseconds passed as 50 s unremarked).
    const auto ends_with = [&key](const std::string& tail) {
      return key.size() > tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
    };
    const bool seconds = ends_with("_s") && !ends_with("_per_s");
    // Likewise a metric in GiB takes a size with its unit (`{max: 40GiB}`; since 2026-12-06).
    const bool gib = ends_with("_gib");
    // And a metric in days a duration (`time_to_train_days: {max: 30d}`, or `720h`; since 2026-12-07:
    // "expected a number, got '30d'" before).
    const bool days = ends_with("_days");
    for (const char* bound : {"min", "max"}) {
      const YamlNode* b = n.is_map() ? n.find(bound) : nullptr;
      std::optional<double>& into = std::string(bound) == "min" ? limit.min : limit.max;
      double v = 0;
      Time t;
      Bytes size;
      if ((seconds || days) && b && b->is_scalar() && !plain_real(*b)) {
        if (r.read(bound, t)) into = days ? t.as_s() / 86400.0 : t.as_s();
      } else if (gib && b && b->is_scalar() && !plain_real(*b)) {
        if (r.read(bound, size)) into = size.as_gib();
      } else if (r.read(bound, v)) {
        into = v;
      }
    }
    r.finish();
    if (!n.is_map() || (!limit.min && !limit.max)) {
      errors.add(InputError{n.file, n.line, path,
                            seconds ? "expected {min: DURATION} and/or {max: DURATION} (50ms, 1.5s, or a number of seconds)"
                            : days  ? "expected {min: DURATION} and/or {max: DURATION} (30d, 720h, or a number of days)"
                            : gib   ? "expected {min: SIZE} and/or {max: SIZE} (40GiB, or a number of GiB)"
                                    : "expected {min: NUMBER} and/or {max: NUMBER}"});
      continue;
    }
    // MFU, HFU, served_fraction and slo_attainment are fractions: {min: 40} (percent) would reject
    // every candidate after the run (accepted until 2026-12-06).
    if (key == "mfu" || key == "hfu" || key == "served_fraction" || key == "slo_attainment") {
      const double over = std::max(limit.min.value_or(0.0), limit.max.value_or(0.0));
      if (over > 1) {
        char buf[200];
        std::snprintf(buf, sizeof buf, "%s is a fraction, at most 1; got %.6g (for %.6g%%, write %.6g)", key.c_str(),
                      over, over, over / 100);
        errors.add(InputError{n.file, n.line, path, buf});
        continue;
      }
    }
    // Every output is zero or more: a negative bound is a slip (`{max: -1}` ran every candidate
    // and rejected them all, accepted until 2026-12-06, where -1GiB or -1s was refused).
    if ((limit.min && *limit.min < 0) || (limit.max && *limit.max < 0)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s is never negative; got %s %.6g", key.c_str(),
                    limit.min && *limit.min < 0 ? "min" : "max",
                    limit.min && *limit.min < 0 ? *limit.min : *limit.max);
      errors.add(InputError{n.file, n.line, path, buf});
      continue;
    }
    if (limit.min && limit.max && *limit.min > *limit.max) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "min %.6g is above max %.6g: no candidate can satisfy it", *limit.min, *limit.max);
      errors.add(InputError{n.file, n.line, path, buf});
      continue;
    }
    spec.limits.push_back(limit);
  }
}

void read_objective(const YamlNode* o, SweepSpec& spec, ErrorList& errors) {
  std::optional<Goal> goal;
  int line = 0;
  std::string file = spec.file;
  if (o && o->is_scalar()) {
    spec.objective = o->scalar;
    line = o->line;
  } else if (o && o->is_map()) {
    MapReader r(o, "objective", errors);
    r.read("metric", spec.objective, Need::kRequired);
    // One of the two ('' took the metric's default goal until 2026-12-05).
    r.read_enum("goal", goal, {{"max", std::optional(Goal::kMaximize)}, {"min", std::optional(Goal::kMinimize)}});
    r.read("train_tokens", spec.train_tokens, Need::kOptional, 1.0);
    r.finish();
    line = o->line;
    // The tokens a training run reads; a serving or traffic sweep has none to reach (accepted
    // until 2026-12-07, and a serving sweep's candidates took output tokens for training ones).
    if (spec.train_tokens > 0 && spec.kind != ScenarioKind::kTraining) {
      errors.add(InputError{file, o->line, "objective.train_tokens",
                            "only a training sweep takes train_tokens (time_to_train_days, gpu_hours_to_train, "
                            "cost_to_train); this sweep's base is not a training scenario"});
      spec.train_tokens = 0;
    }
  } else if (o && o->is_null()) {  // took the default until 2026-12-06, as set: and the others did
    errors.add(InputError{file, o->line, "objective", "has no value; give a metric name or {metric, goal}, or remove it"});
  } else if (o) {
    errors.add(InputError{file, o->line, "objective", "expected a metric name or {metric, goal, train_tokens}"});
  }
  const std::vector<std::string> outputs = output_metrics(spec.kind);
  if (std::find(outputs.begin(), outputs.end(), spec.objective) == outputs.end()) {
    std::string list;
    for (const std::string& m : outputs) list += (list.empty() ? "" : ", ") + m;
    errors.add(InputError{file, line, "objective", "'" + spec.objective + "' is not an output; choose one of: " + list});
    return;
  }
  spec.goal = goal.value_or(default_goal(spec.objective));
}

constexpr double kMaxPricePerGpuHour = 1e9;

void read_prices(const YamlNode* p, SweepSpec& spec, ErrorList& errors) {
  if (!p) return;
  if (no_entries(*p)) {
    errors.add(InputError{p->file, p->line, "price_per_gpu_hour", "has no value; give a mapping GPU -> price per GPU-hour, or remove it"});
    return;
  }
  if (!p->is_map()) {
    errors.add(InputError{p->file, p->line, "price_per_gpu_hour", "expected a mapping GPU -> price per GPU-hour"});
    return;
  }
  for (const auto& [gpu, n] : p->map) {
    const auto v = plain_real(n);
    // At most 1e9, as a serving pool's price_per_gpu_hour: 1e308 passed, and a candidate's cost
    // (price x GPUs) overflowed to inf in sweep.csv (until 2026-12-05).
    if (!v || *v < 0 || *v > kMaxPricePerGpuHour) {
      errors.add(InputError{n.file, n.line, "price_per_gpu_hour." + gpu,
                            "expected a price per GPU-hour in [0, 1e9] as a plain decimal (no '+', spaces or hexadecimal), got '" +
                                (n.is_scalar() ? n.scalar : std::string("a list or mapping")) + "'"});
      continue;
    }
    spec.price_per_gpu_hour[gpu] = *v;
  }
}

// The GPU types a scenario tree runs on, as a candidate's cost prices them (add_plan_facts in
// candidate_evaluator.cc): each serving pool's own `gpu`, or cluster.gpu for a pool without one
// (or one whose gpu an axis sets to null) and for training and traffic. Empty when the tree does
// not read (its own error says why). Sets `uses_cluster_gpu` when cluster.gpu is among them.
std::vector<std::string> gpus_of_tree(const YamlNode& tree, bool& uses_cluster_gpu) {
  ScenarioConfig cfg;
  try {
    cfg = read_scenario_tree(tree, "sweep");
  } catch (const BadInput&) {
    return {};
  }
  if (!cfg.inference) {
    uses_cluster_gpu = true;
    return {cfg.cluster.gpu};
  }
  std::vector<std::string> gpus;
  for (const PoolConfig* p : given_pools(*cfg.inference)) {
    uses_cluster_gpu = uses_cluster_gpu || p->gpu.empty();
    gpus.push_back(p->gpu.empty() ? cfg.cluster.gpu : p->gpu);
  }
  return gpus;
}

// Applies to `tree` the values of combination `c` of the axes `axes` (indices into spec.axes), the
// first of them varying fastest, and appends each value's label to `where` when given. False where
// a value's path crosses a key that is not a mapping.
bool apply_combination(const SweepSpec& spec, const std::vector<size_t>& axes, int64_t c, YamlNode& tree,
                       std::string* where = nullptr) {
  bool placed = true;
  for (const size_t i : axes) {
    const Axis& a = spec.axes[i];
    const auto n = static_cast<int64_t>(a.values.size());
    const AxisValue& v = a.values[static_cast<size_t>(c % n)];
    c /= n;
    for (const auto& [path, node] : v.sets) placed = set_path(tree, path, node) && placed;
    if (where) *where += (where->empty() ? "" : ", ") + ("axes." + a.key + " value '" + v.label + "'");
  }
  return placed;
}

// Every GPU the sweep can use needs a price when the objective or a constraint is a cost.
// The GPUs are read from `base` (the base with `set`, or, where that loads only once the axes
// apply, the first candidate that loads) with every combination of the values of the axes that set
// GPUs (cluster.gpu, the serving mode or pools) applied, where they make at most 4,096; past that,
// from the base and the base with each such value applied (2026-12-05: the scan of the base's
// pools alone missed a pool an axis adds, which then ran on an unpriced cluster.gpu and passed a
// cost constraint, and named a GPU '' for a pool whose gpu an axis sets to null). A combination
// the fallback misses makes that candidate an error in finish_stage, never a pass.
void check_prices(const SweepSpec& spec, const YamlNode& base, ErrorList& errors) {
  // The cost the objective or a constraint asks for, to name in the messages.
  std::string cost = is_cost(spec.objective) ? spec.objective : "";
  for (const MetricLimit& l : spec.limits) {
    if (cost.empty() && is_cost(l.metric)) cost = l.metric;
  }
  const bool needs = !cost.empty();
  // Nothing to check without prices or a cost: no scenario read per GPU-touching axis value.
  if (!needs && spec.price_per_gpu_hour.empty()) return;
  std::vector<std::pair<std::string, std::string>> gpus;  // GPU -> where first used
  const auto add = [&gpus](const std::string& gpu, const std::string& where) {
    const bool known = std::any_of(gpus.begin(), gpus.end(), [&](const auto& g) { return g.first == gpu; });
    if (!known && !gpu.empty()) gpus.emplace_back(gpu, where);
  };
  bool uses_cluster_gpu = false;
  // (Only the keys that place GPUs: an axis over the arrival rate counted until 2026-12-07, and
  // pushed the combinations past the exact count; code review.)
  const auto touches_gpus = [](const std::string& path) {
    return path == "cluster" || path == "cluster.gpu" || path == "inference" || path == "inference.mode" ||
           path == "inference.pools" || path.starts_with("inference.pools.");
  };
  // Exactly, where the axes that touch GPUs make few combinations: the GPUs of each combination
  // applied to the base (a base GPU every combination replaces is no candidate's; until
  // 2026-12-07 it was asked a price, and a price for it passed as used; review).
  std::vector<size_t> gpu_axes;
  double combinations = 1;
  for (size_t i = 0; i < spec.axes.size(); ++i) {
    const Axis& a = spec.axes[i];
    const bool touches = std::any_of(a.values.begin(), a.values.end(), [&](const AxisValue& v) {
      return std::any_of(v.sets.begin(), v.sets.end(), [&](const auto& s) { return touches_gpus(s.first); });
    });
    if (touches) {
      gpu_axes.push_back(i);
      combinations *= static_cast<double>(std::max<size_t>(1, a.values.size()));
    }
  }
  if (combinations <= 4096) {
    for (int64_t c = 0; c < static_cast<int64_t>(combinations); ++c) {
      YamlNode tree = base;
      std::string where;
      apply_combination(spec, gpu_axes, c, tree, &where);
      for (const std::string& g : gpus_of_tree(tree, uses_cluster_gpu)) add(g, where.empty() ? "the base" : where);
    }
  } else {
    for (const std::string& g : gpus_of_tree(base, uses_cluster_gpu)) add(g, "the base");
    for (const size_t i : gpu_axes) {
      for (size_t k = 0; k < spec.axes[i].values.size(); ++k) {
        YamlNode tree = base;
        std::string where;
        apply_combination(spec, {i}, static_cast<int64_t>(k), tree, &where);
        for (const std::string& g : gpus_of_tree(tree, uses_cluster_gpu)) add(g, where);
      }
    }
  }
  // Where any candidate runs on cluster.gpu, every value a cluster.gpu axis gives it is used.
  if (uses_cluster_gpu) {
    for (const Axis& a : spec.axes) {
      for (const AxisValue& v : a.values) {
        for (const auto& [path, node] : v.sets) {
          if (path == "cluster.gpu" && node.is_scalar()) add(node.scalar, "axes." + a.key + " value '" + v.label + "'");
        }
      }
    }
  }
  // A price for a GPU no candidate uses is most likely a misspelt name.
  for (const auto& [g, price] : spec.price_per_gpu_hour) {
    if (std::any_of(gpus.begin(), gpus.end(), [&](const auto& u) { return u.first == g; })) continue;
    std::string used;
    for (const auto& [u, where] : gpus) used += (used.empty() ? "'" : ", '") + u + "'";
    errors.add(InputError{spec.file, 0, "price_per_gpu_hour." + g,
                          "no candidate uses GPU '" + g + "' (cluster.gpu, or serving pools' gpu, as the axes leave them: " +
                              used + ")"});
  }
  if (!needs) return;
  // Every price 0: every cost is 0, and the ranking would follow the tie-break alone.
  if (!spec.price_per_gpu_hour.empty() &&
      std::all_of(spec.price_per_gpu_hour.begin(), spec.price_per_gpu_hour.end(),
                  [](const auto& kv) { return kv.second == 0; })) {
    errors.add(InputError{spec.file, 0, "price_per_gpu_hour",
                          "every price is 0, so every candidate's " + cost + " would be 0; give the prices"});
  }
  // A price given wrongly has its error already: not "needs a price" as well (QA 2026-12-07).
  const auto refused = [&errors](const std::string& g) {
    return std::any_of(errors.errors().begin(), errors.errors().end(),
                       [&g](const InputError& e) { return e.key_path == "price_per_gpu_hour." + g; });
  };
  for (const auto& [g, where] : gpus) {
    if (!spec.price_per_gpu_hour.count(g) && !refused(g)) {
      errors.add(InputError{spec.file, 0, "price_per_gpu_hour",
                            cost + " needs a price for GPU '" + g + "' (used by " + where + ")"});
    }
  }
}

}  // namespace

int64_t SweepSpec::candidate_count() const {
  int64_t n = 1;
  for (const Axis& a : axes) n *= static_cast<int64_t>(a.values.size());
  return n;
}

std::vector<std::string> objective_notes(const SweepSpec& spec) {
  if (spec.objective != "mfu" && spec.objective != "hfu") return {};
  std::vector<std::string> notes;
  for (const Axis& axis : spec.axes) {
    for (const char* key : {"training.precision", "cluster.gpu"}) {
      std::set<std::string> values;  // the axis's values of `key`: a note only where they differ
      for (const AxisValue& v : axis.values) {
        for (const auto& [path, value] : v.sets) {
          if (path == key) values.insert(canonical_text(value));
        }
      }
      if (values.size() < 2) continue;
      notes.push_back("objective " + spec.objective + ": the axis over " + key + " changes the peak that " +
                      spec.objective + " is a fraction of (" +
                      (std::string(key) == "cluster.gpu" ? "each GPU's own" : "FP8 doubles it") +
                      "), so a faster plan can rank lower; objective: tokens_per_s (or cost_per_mtoken) compares "
                      "them on throughput");
    }
  }
  return notes;
}

std::vector<std::string> output_metrics(ScenarioKind kind) {
  if (kind == ScenarioKind::kTraffic) return {"completion_time_s", "ideal_time_s", "slowdown", "gpus"};
  if (kind == ScenarioKind::kInference) {
    return {"tokens_per_s", "tokens_per_s_per_gpu", "ttft_p50_s", "ttft_p99_s", "tpot_p50_s", "tpot_p99_s",
            "rejected", "served_fraction", "ttft_growth", "slo_attainment", "goodput_requests_per_s", "gpus",
            "cost_per_mtoken"};
  }
  return {"tokens_per_s", "tokens_per_s_per_gpu", "mfu", "hfu", "iteration_time_s",
          "memory_per_gpu_gib", "gpus", "cost_per_mtoken", "time_to_train_days", "gpu_hours_to_train", "cost_to_train"};
}

bool needs_train_tokens(const std::string& metric) {
  return metric == "time_to_train_days" || metric == "gpu_hours_to_train" || metric == "cost_to_train";
}

bool is_cost(const std::string& metric) { return metric == "cost_per_mtoken" || metric == "cost_to_train"; }

Goal default_goal(const std::string& metric) {
  static const char* const kHigherIsBetter[] = {"tokens_per_s", "tokens_per_s_per_gpu", "mfu", "hfu",
                                                "served_fraction", "slo_attainment", "goodput_requests_per_s"};
  for (const char* m : kHigherIsBetter) {
    if (metric == m) return Goal::kMaximize;
  }
  return Goal::kMinimize;
}

bool set_path(YamlNode& root, const std::string& path, const YamlNode& value) {
  // A null value removes the key, as `--set key=null` does (its default applies).
  if (value.is_null()) return remove_path(root, path);
  YamlNode* node = &root;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (node->is_null()) node->kind = YamlNode::Kind::kMap;
    if (!node->is_map()) return false;
    YamlNode* child = node->find(key);
    if (!child) {
      node->map.emplace_back(key, YamlNode{});
      child = &node->map.back().second;
    }
    if (dot == std::string::npos) {
      *child = value;
      return true;
    }
    node = child;
    start = dot + 1;
  }
}

std::string canonical_text(const YamlNode& n) {
  switch (n.kind) {
    case YamlNode::Kind::kNull: return "null";
    case YamlNode::Kind::kScalar: return n.scalar;
    case YamlNode::Kind::kSeq: {
      std::string s = "[";
      for (size_t i = 0; i < n.seq.size(); ++i) s += (i ? ", " : "") + canonical_text(n.seq[i]);
      return s + "]";
    }
    case YamlNode::Kind::kMap: {
      std::string s = "{";
      for (size_t i = 0; i < n.map.size(); ++i) {
        s += (i ? ", " : "") + n.map[i].first + ": " + canonical_text(n.map[i].second);
      }
      return s + "}";
    }
  }
  return "";
}

std::string hash_hex(const std::string& text) { return digest_hex(text); }

namespace {

// The files a scenario names (a GPU profile in cluster.gpu or a pool's gpu, inference.trace),
// as path=digest of their contents: a log resumed after one changed would rank results of two
// inputs together. Every scalar that names a regular file relative to the base scenario's
// directory (or absolute) counts; a scalar that names none adds nothing.
void add_named_files(const YamlNode& n, const std::filesystem::path& dir, std::string& fp) {
  if (n.is_map()) {
    for (const auto& [k, v] : n.map) add_named_files(v, dir, fp);
  } else if (n.is_seq()) {
    for (const YamlNode& v : n.seq) add_named_files(v, dir, fp);
  } else if (n.is_scalar() && !n.scalar.empty() && !plain_real(n)) {
    std::filesystem::path p(n.scalar);
    if (p.is_relative()) p = dir / p;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec)) return;
    if (const std::string digest = file_digest_hex(p.string()); !digest.empty()) fp += "|" + n.scalar + "=" + digest;
  }
}

}  // namespace

SweepSpec sweep_spec_from_tree(const YamlNode& root, const std::string& file) {
  if (!root.is_map()) {
    throw BadInput(InputError{file, root.line, "", "a sweep file is a mapping with base, axes, constraints, objective"});
  }
  // A scenario given where a sweep belongs: one error that says so, as `run` says it of a sweep
  // file (until 2026-12-06 an unknown-key error per section).
  if (!root.find("axes") && !root.find("base") && (root.find("cluster") || root.find("model"))) {
    throw BadInput(InputError{file, 0, "",
                              "this is a scenario (it has 'cluster' or 'model'), not a sweep file: run it with "
                              "'clustersim run', or sweep it from a file with 'base: " +
                                  std::filesystem::path(file).filename().string() +
                                  "' and axes (docs/sweep.md)"});
  }
  SweepSpec spec;
  spec.file = file;
  spec.name = std::filesystem::path(file).stem().string();
  ErrorList errors;
  MapReader top(&root, "", errors);
  // '' named the results after nothing (the file's stem names them when the key is left out).
  top.read_text("name", spec.name, "the sweep's name (or remove the key: the file's name is used)");
  top.read("description", spec.description);

  // The base: a scenario file (relative to the sweep file) or an inline scenario mapping.
  const YamlNode* base = top.child("base");
  if (!base || base->is_null()) {
    top.error("base", "required: the scenario file the sweep starts from (or an inline scenario)");
  } else if (base->is_scalar()) {
    std::filesystem::path p(base->scalar);
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    spec.base_origin = p.lexically_normal().string();
    spec.base_written = base->scalar;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(spec.base_origin, ec)) {
      top.error("base", "no scenario file '" + spec.base_origin + "' (paths are relative to the sweep file)");
    } else {
      spec.base = parse_yaml_file(spec.base_origin);
    }
  } else if (base->is_map()) {
    spec.base_origin = file;
    spec.base_written = "inline";
    spec.base = *base;
  } else {
    top.error("base", "expected a scenario file name or an inline scenario mapping");
  }

  // Fixed overrides of the base.
  std::vector<std::pair<std::string, YamlNode>> fixed;
  if (const YamlNode* set = top.child("set"); set && no_entries(*set)) {
    top.error("set", "has no value; give a mapping of scenario key -> value, or remove it");
  } else if (set) {
    if (!set->is_map()) {
      top.error("set", "expected a mapping of scenario key -> value");
    } else {
      for (const auto& [key, v] : set->map) flatten(v, key, fixed);
      // One key given twice, dotted and nested (training.global_batch and training: {global_batch}):
      // the later won without a word (until 2026-12-06).
      for (size_t i = 0; i < fixed.size(); ++i) {
        for (size_t j = i + 1; j < fixed.size(); ++j) {
          const std::string& a = fixed[i].first;
          const std::string& b = fixed[j].first;
          if (!paths_overlap(a, b)) continue;
          errors.add(InputError{fixed[j].second.file, fixed[j].second.line, "set." + b,
                                a == b ? "is given twice (as a dotted path and inside a mapping): give each key once"
                                       : "sets " + (a.size() >= b.size() ? a : b) + ", which set." + a +
                                             " sets too: one would override the other; give each key once"});
        }
      }
      if (spec.base.is_map()) {
        for (const auto& [path, v] : fixed) {
          // A removal (null) of a key the base does not give is a typo when the key does not exist
          // at all, as with --set key=null.
          if (v.is_null() && !find_path(spec.base, path)) {
            if (const auto err = unknown_key_error(spec.base, path)) {
              errors.add(InputError{v.file, v.line, "set." + path, "not a scenario key, so there is nothing to remove: " +
                                                                       err->key_path + ": " + err->message});
            }
          }
          if (!set_path(spec.base, path, v)) top.error("set", "'" + path + "' crosses a key that is not a mapping");
        }
      }
    }
  }
  std::vector<std::pair<std::string, InputError>> duplicates;
  read_axes(top.child("axes"), file, spec, errors, duplicates);
  // A key `set` gives and an axis varies: the axis would override it in every candidate, as one
  // axis would another's (it did, without a word, until 2026-12-05).
  for (const auto& [path, v] : fixed) {
    for (const Axis& a : spec.axes) {
      for (const std::string& p : axis_paths(a)) {
        if (!paths_overlap(path, p)) continue;
        errors.add(InputError{v.file, v.line, "set." + path,
                              "axes." + a.key + " sets " + (p.size() >= path.size() ? p : path) +
                                  " too: the axis would override it in every candidate; give the key in set or "
                                  "as an axis, not both"});
        break;
      }
    }
  }
  // Each stage sets network.fidelity itself (tree_at in candidate_evaluator.cc): a level given by
  // `set` or an axis was overridden in every run, and an axis over it ranked copies of each
  // candidate, all at the analytical level, under labels naming other levels (until 2026-12-05).
  const std::string level_key = "network.fidelity";
  const std::string level_why =
      "each stage sets network.fidelity itself (the screen runs at 'analytical', the re-run of the best at "
      "flow_stage.fidelity), so a level given here is never used; remove it (flow_stage.fidelity picks the second "
      "stage's level)";
  for (const auto& [path, v] : fixed) {
    if (path == level_key) errors.add(InputError{v.file, v.line, "set." + path, level_why});
  }
  for (const Axis& a : spec.axes) {
    const std::vector<std::string> paths = axis_paths(a);
    if (std::find(paths.begin(), paths.end(), level_key) != paths.end()) {
      errors.add(InputError{file, a.line, "axes." + a.key, level_why});
    }
  }
  // The count before any value is read on the base: a sweep of 2.4e11 candidates was refused only
  // after each of its 200,000 axis values had been, and its two long axes compared value by value
  // (91 s, until 2026-12-05; 0.15 s now).
  double total = 1;
  for (const Axis& a : spec.axes) total *= static_cast<double>(a.values.size());
  const bool too_many = total > kMaxCandidates;
  if (too_many) {
    errors.add(InputError{file, 0, "axes", "the axes make " + format_number(total) + " candidates; the limit is 1e8"});
  }

  // The base decides the kind of run (and so which metrics exist); it must load on its own.
  const std::string base_label = spec.base_origin.empty() ? file : spec.base_origin;
  bool base_loads = false;
  YamlNode loading_base = spec.base;  // the base, or the first candidate that loads where it does not
  if (spec.base.is_map()) {
    // The base with `set` may not load alone where the axes give what it needs (a global batch
    // for the axes' GPU counts, the size of a pool an axis sizes): then the first candidates that
    // load stand for it (until 2026-12-07 such a sweep was refused though its candidates ran;
    // review). Its own errors are said where none does.
    // In candidate order (the last axis varies fastest, as CandidateSpace::choice; code review).
    const auto first_loading = [&]() -> std::optional<ScenarioConfig> {
      if (too_many || spec.axes.empty()) return std::nullopt;
      std::vector<size_t> last_first(spec.axes.size());  // the last axis varies fastest
      for (size_t k = 0; k < last_first.size(); ++k) last_first[k] = last_first.size() - 1 - k;
      const int64_t tries = std::min<int64_t>(static_cast<int64_t>(total), 256);
      for (int64_t i = 0; i < tries; ++i) {
        YamlNode tree = spec.base;
        if (!apply_combination(spec, last_first, i, tree)) continue;
        try {
          ScenarioConfig cfg = scenario_from_tree(tree, base_label);
          loading_base = tree;
          return cfg;
        } catch (const BadInput&) {
        }
      }
      return std::nullopt;
    };
    try {
      std::optional<ScenarioConfig> loaded;
      try {
        loaded = scenario_from_tree(spec.base, base_label);
      } catch (const BadInput&) {
        loaded = first_loading();
        if (!loaded) throw;
      }
      const ScenarioConfig& cfg = *loaded;
      spec.kind = cfg.inference ? ScenarioKind::kInference
                  : cfg.traffic ? ScenarioKind::kTraffic
                                : ScenarioKind::kTraining;
      base_loads = true;
      if (cfg.faults) {
        // A reliability study has no iteration metrics to rank; what it varies (checkpoint
        // interval) it already optimises itself.
        errors.add(InputError{base_label, 0, "faults",
                              "a sweep screens training, serving and network scenarios; this base is a reliability "
                              "study (faults section), which finds its best checkpoint interval itself: run it with "
                              "clustersim run, or sweep its training plan without the faults section"});
      }
    } catch (const BadInput& e) {
      bool unknown_in_set = false;
      for (const InputError& err : e.errors()) {
        for (const auto& [path, v] : fixed) {
          if (is_unknown_key_at(err, path)) {
            errors.add(InputError{v.file, v.line, "set." + path, "not a scenario key: " + err.message});
            unknown_in_set = true;
          }
        }
      }
      if (!unknown_in_set) {
        for (const InputError& err : e.errors()) {
          InputError copy = err;
          copy.message = std::string("the base scenario (with `set`) does not load") +
                         (too_many || spec.axes.empty() ? "" : ", nor do the first candidates") + ": " + err.message;
          // A value `set` gives is reported at its line in the sweep file (it was reported at the
          // base's path with the sweep file's line; review 2026-12-07).
          for (const auto& [path, v] : fixed) {
            if (!err.key_path.empty() && path_within(err.key_path, path)) {
              copy.file = v.file;
              copy.line = v.line;
              copy.key_path = "set." + err.key_path;
              break;
            }
          }
          errors.add(copy);
        }
      }
    }
  }

  // Axis keys must be scenario keys, and each value one the key accepts (each on the base alone),
  // reported with the file's other mistakes. An unknown key is said once, not once per value.
  if (base_loads && !too_many) {
    for (const Axis& a : spec.axes) {
      YamlNode at;
      at.file = file;
      at.line = a.line;
      const size_t before = errors.size();
      for (const AxisValue& v : a.values) {
        if (check_value(spec.base, v.sets, "axes." + a.key, v.label, at, errors)) break;
        if (errors.size() > before + 5) break;  // the first few say enough
      }
    }
    // The GPU an axis, `set` or the base names (cluster.gpu, or a serving pool's gpu) is resolved
    // now, where a candidate would have failed on it (the base's and the pools' since later on
    // 2026-12-05).
    const std::string dir = std::filesystem::path(spec.base_origin).parent_path().string();
    const auto names_gpu = [](const std::string& path) {
      if (path == "cluster.gpu") return true;
      const std::string pools = "inference.pools.";
      return path.starts_with(pools) && path.ends_with(".gpu") &&
             path.find('.', pools.size()) == path.size() - 4;  // inference.pools.ROLE.gpu
    };
    if (const YamlNode* g = find_path(spec.base, "cluster.gpu"); g && g->is_scalar()) {
      check_gpu_value(*g, "cluster.gpu", dir, g->file.empty() ? spec.base_origin : g->file, errors);
    }
    if (const YamlNode* pools = find_path(spec.base, "inference.pools"); pools && pools->is_map()) {
      for (const auto& [role, pool] : pools->map) {
        const YamlNode* g = pool.find("gpu");
        if (g && g->is_scalar()) {
          check_gpu_value(*g, "inference.pools." + role + ".gpu", dir, g->file.empty() ? spec.base_origin : g->file, errors);
        }
      }
    }
    for (const Axis& a : spec.axes) {
      for (size_t i = 0; i < a.values.size(); ++i) {
        for (const auto& [path, node] : a.values[i].sets) {
          if (!names_gpu(path)) continue;
          // axes.cluster.gpu[1], or axes.cluster[1].gpu for a mapping axis.
          const std::string where =
              "axes." + a.key + "[" + std::to_string(i) + "]" + path.substr(std::min(path.size(), a.key.size()));
          check_gpu_value(node, where, dir, file, errors);
        }
      }
    }
    for (const auto& [path, v] : fixed) {
      if (names_gpu(path)) check_gpu_value(v, "set." + path, dir, v.file, errors);
    }
  }
  // Which metrics exist depends on the kind of run: with a base that does not load, unknown, so
  // the constraints and the objective wait for it (a serving base's tpot_p99_s was called "not an
  // output of training scenarios").
  if (base_loads) {
    read_constraints(top.child("constraints"), spec, errors);
    read_objective(top.child("objective"), spec, errors);
  } else {
    top.child("constraints");
    top.child("objective");
  }
  read_prices(top.child("price_per_gpu_hour"), spec, errors);
  MapReader flow = top.section("flow_stage");
  flow.read("top_k", spec.flow_top_k, Need::kOptional, 0, 100000);
  if (const YamlNode* fid = flow.child("fidelity"); fid && fid->is_scalar() && fid->scalar == "analytical") {
    flow.error("fidelity", "the second stage must be finer than 'analytical'");
  } else {
    flow.read_enum("fidelity", spec.flow_fidelity,
                   {{"flow", std::string("flow")}, {"flow+dcqcn", std::string("flow+dcqcn")},
                    {"packet", std::string("packet")}});
  }
  flow.finish();
  MapReader rep = top.section("report");
  rep.read("top", spec.report_top, Need::kOptional, 1, 10000);
  rep.finish();
  top.finish();
  // Not where train_tokens was given and refused (its own error says why).
  const bool tokens_refused = std::any_of(errors.errors().begin(), errors.errors().end(),
                                          [](const InputError& e) { return e.key_path == "objective.train_tokens"; });
  if (needs_train_tokens(spec.objective) && spec.train_tokens <= 0 && !tokens_refused) {
    errors.add(InputError{file, 0, "objective.train_tokens", spec.objective + " needs objective.train_tokens"});
  }
  // A constraint on a metric no candidate can produce would have counted as met (2026-12-05).
  for (const MetricLimit& l : spec.limits) {
    if (needs_train_tokens(l.metric) && spec.train_tokens <= 0 && !tokens_refused) {
      errors.add(InputError{file, l.line, "constraints." + l.metric,
                            l.metric + " needs objective.train_tokens (e.g. objective: {metric: " +
                                spec.objective + ", train_tokens: 300e9})"});
    }
  }
  if (base_loads && !too_many) check_prices(spec, loading_base, errors);
  // A duplicate whose value the key refuses (check_value above) is that mistake alone (`[8, 4, 8.0]`
  // on tp said both "8.0 (8) is given twice" and "expected an integer, got '8.0'" until 2026-12-07;
  // review).
  for (auto& [label, err] : duplicates) {
    const std::string refused = "value '" + label + "': ";
    const bool typed = std::any_of(errors.errors().begin(), errors.errors().end(), [&](const InputError& e) {
      return e.key_path == err.key_path && e.message.starts_with(refused);
    });
    if (!typed) errors.add(std::move(err));
  }
  errors.throw_if_any();

  std::string fp = canonical_text(spec.base);
  for (const Axis& a : spec.axes) {
    fp += "|" + a.key;
    for (const AxisValue& v : a.values) fp += ";" + v.label;
  }
  const std::filesystem::path dir = std::filesystem::path(spec.base_origin).parent_path();
  add_named_files(spec.base, dir, fp);
  for (const Axis& a : spec.axes) {
    for (const AxisValue& v : a.values) {
      for (const auto& [path, node] : v.sets) add_named_files(node, dir, fp);
    }
  }
  fp += spec.memory_fits ? "|fit" : "|nofit";
  fp += "|" + spec.flow_fidelity;
  spec.fingerprint = hash_hex(fp);
  return spec;
}

SweepSpec load_sweep_spec(const std::string& path) {
  return sweep_spec_from_tree(parse_yaml_file(path), path);
}

}  // namespace clustersim::sweep
