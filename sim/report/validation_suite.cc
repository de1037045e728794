// SPDX-License-Identifier: Apache-2.0
#include "sim/report/validation_suite.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "sim/core/error.h"
#include "sim/core/map_reader.h"
#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"

namespace clustersim::report {

ValidationSuite load_validation_suite(const std::string& path) {
  const YamlNode root = parse_yaml_file(path);
  ErrorList errors;
  ValidationSuite s;
  s.file = path;
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  MapReader top(&root, "", errors);
  top.read("name", s.name, Need::kRequired);
  top.read("description", s.description);
  MapReader budget = top.section("budget");
  budget.read("mean_abs_rel_error", s.mean_abs_rel_error, Need::kRequired, 0.0, 10.0);
  budget.read("max_abs_rel_error", s.max_abs_rel_error, Need::kOptional, 0.0, 10.0);
  budget.finish();
  if (!top.has("budget")) top.error("budget", "required section is missing");
  if (const YamlNode* set = top.child("set"); set && !set->is_null()) {
    if (!set->is_seq()) {
      top.error("set", "expected a list of key.path=value overrides");
    } else {
      for (const YamlNode& o : set->seq) s.overrides.push_back(o.scalar);
    }
  }
  const YamlNode* cases = top.child("cases");
  if (!cases || !cases->is_seq() || cases->seq.empty()) {
    top.error("cases", "expected a non-empty list of {scenario, metric, reference, source}");
  } else {
    for (size_t i = 0; i < cases->seq.size(); ++i) {
      MapReader r(&cases->seq[i], "cases[" + std::to_string(i) + "]", errors);
      ValidationCase c;
      std::string scenario;
      r.read("scenario", scenario, Need::kRequired);
      r.read_enum("metric", c.metric,
                  {{"mfu", std::string("mfu")},
                   {"hfu", std::string("hfu")},
                   {"tokens_per_s", std::string("tokens_per_s")},
                   {"iteration_time_s", std::string("iteration_time_s")}},
                  Need::kRequired);
      r.read("reference", c.reference, Need::kRequired, 1e-300);
      r.read("source", c.source, Need::kRequired);
      r.finish();
      c.scenario = (dir / scenario).lexically_normal().string();
      s.cases.push_back(c);
    }
  }
  top.finish();
  errors.throw_if_any();
  return s;
}

ValidationResult run_validation(const ValidationSuite& suite, const std::vector<std::string>& extra_overrides) {
  ValidationResult result;
  std::vector<std::string> overrides = suite.overrides;
  overrides.insert(overrides.end(), extra_overrides.begin(), extra_overrides.end());
  double sum = 0;
  bool all_ran = true;
  for (const ValidationCase& c : suite.cases) {
    ValidationRow row;
    row.c = c;
    try {
      const ScenarioConfig cfg = load_scenario(c.scenario, overrides);
      const RunOutput out = run_scenario(cfg);
      const auto it = out.metrics.find(c.metric);
      if (it == out.metrics.end()) {
        row.error = "results have no metric '" + c.metric + "'";
      } else {
        row.predicted = it->second;
      }
    } catch (const BadInput& e) {
      row.error = e.what();
    }
    if (row.error.empty()) {
      row.rel_error = (row.predicted - c.reference) / c.reference;
      sum += std::fabs(row.rel_error);
      result.max_abs_rel_error = std::max(result.max_abs_rel_error, std::fabs(row.rel_error));
    } else {
      all_ran = false;
    }
    result.rows.push_back(row);
  }
  result.mean_abs_rel_error = suite.cases.empty() ? 0 : sum / static_cast<double>(suite.cases.size());
  result.passed = all_ran && result.mean_abs_rel_error <= suite.mean_abs_rel_error &&
                  (suite.max_abs_rel_error <= 0 || result.max_abs_rel_error <= suite.max_abs_rel_error);
  return result;
}

std::string format_validation(const ValidationSuite& suite, const ValidationResult& result) {
  std::ostringstream o;
  char line[512];
  o << "validation suite " << suite.name << " (" << suite.file << ")\n";
  std::snprintf(line, sizeof line, "%-44s %-6s %10s %10s %8s\n", "scenario", "metric", "predicted", "reference", "error");
  o << line;
  for (const ValidationRow& r : result.rows) {
    const std::string name = std::filesystem::path(r.c.scenario).stem().string();
    if (!r.error.empty()) {
      std::snprintf(line, sizeof line, "%-44s %-6s %10s %10.4g %8s  %s\n", name.c_str(), r.c.metric.c_str(), "FAILED",
                    r.c.reference, "-", r.error.c_str());
    } else {
      std::snprintf(line, sizeof line, "%-44s %-6s %10.4g %10.4g %+7.1f%%\n", name.c_str(), r.c.metric.c_str(),
                    r.predicted, r.c.reference, 100.0 * r.rel_error);
    }
    o << line;
  }
  std::snprintf(line, sizeof line, "mean |error| %.2f%% (budget %.2f%%)", 100 * result.mean_abs_rel_error,
                100 * suite.mean_abs_rel_error);
  o << line;
  if (suite.max_abs_rel_error > 0) {
    std::snprintf(line, sizeof line, ", worst %.2f%% (budget %.2f%%)", 100 * result.max_abs_rel_error,
                  100 * suite.max_abs_rel_error);
    o << line;
  } else {
    std::snprintf(line, sizeof line, ", worst %.2f%%", 100 * result.max_abs_rel_error);
    o << line;
  }
  o << (result.passed ? "  PASS\n" : "  FAIL\n");
  return o.str();
}

}  // namespace clustersim::report
