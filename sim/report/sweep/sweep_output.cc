// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/sweep_output.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace clustersim::sweep {
namespace {

using report::Json;

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

const std::vector<std::string>& plan_columns(const SweepSpec& spec) {
  static const std::vector<std::string> kTraining = {"gpus", "tp", "pp", "vpp", "cp", "dp", "micro_batch", "zero_stage"};
  static const std::vector<std::string> kTraffic = {"gpus"};
  return spec.kind == ScenarioKind::kTraining ? kTraining : kTraffic;
}

std::string metric_or_empty(const StageResult& s, const std::string& m) {
  const auto it = s.metrics.find(m);
  return it == s.metrics.end() ? "" : number(it->second);
}

std::string info_or_empty(const StageResult& s, const std::string& k) {
  const auto it = s.info.find(k);
  return it == s.info.end() ? "" : it->second;
}

std::string pad(const std::string& s, size_t w, bool right = true) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

// A fixed-width table of ranked rows: axis values, then metrics.
std::string ranked_table(const CandidateSpace& space, const SweepTable& table, const std::vector<int64_t>& rows,
                         const std::vector<std::string>& metrics) {
  const SweepSpec& spec = space.spec();
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head = {"rank"};
  std::vector<std::string> keys;
  for (const Axis& a : spec.axes) keys.push_back(a.key);
  const std::map<std::string, std::string> columns = non_axis_columns(spec);
  for (const Axis& a : spec.axes) head.push_back(axis_header(a.key, keys, columns));
  for (const std::string& m : metrics) head.push_back(m);
  cells.push_back(head);
  for (const int64_t pos : rows) {
    const Row& r = table.rows[static_cast<size_t>(pos)];
    std::vector<std::string> line = {std::to_string(r.analytical.rank)};
    for (size_t i = 0; i < spec.axes.size(); ++i) line.push_back(spec.axes[i].values[r.choice[i]].label);
    for (const std::string& m : metrics) {
      const auto it = r.analytical.metrics.find(m);
      line.push_back(it == r.analytical.metrics.end() ? "-" : format_metric(m, it->second));
    }
    cells.push_back(line);
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& line : cells) {
    for (size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], line[c].size());
  }
  std::string out;
  for (const auto& line : cells) {
    out += " ";
    for (size_t c = 0; c < line.size(); ++c) out += " " + pad(line[c], width[c]);
    out += "\n";
  }
  return out;
}

// Empty unless the best `k` stop inside a tie: the candidates ranked k and k+1 have the same
// objective, so which of them was re-run follows the tie-break (sweep_table.cc: the higher
// tokens_per_s where both have it, then candidate order; until 2026-12-06 the note said
// candidate order alone).
std::string tie_at_cut(const SweepSpec& spec, const SweepTable& table, size_t k) {
  if (k == 0 || k >= table.ranking.size()) return "";
  const Row& last = table.rows[static_cast<size_t>(table.ranking[k - 1])];
  const Row& next = table.rows[static_cast<size_t>(table.ranking[k])];
  if (!same_objective(*last.analytical.objective, *next.analytical.objective)) return "";
  size_t tied = 0;
  for (size_t r = 0; r < table.ranking.size(); ++r) {
    tied += same_objective(*table.rows[static_cast<size_t>(table.ranking[r])].analytical.objective,
                           *last.analytical.objective);
  }
  return "the best " + std::to_string(k) + " stop inside a tie: " + std::to_string(tied) +
         " candidates share the objective " + number(*last.analytical.objective) +
         // rank_rows breaks exact ties only; objectives within rounding keep their own order.
         (*last.analytical.objective != *next.analytical.objective
              ? " (their order follows differences within rounding)"
          : spec.objective != "tokens_per_s" && last.analytical.metrics.contains("tokens_per_s") &&
                  next.analytical.metrics.contains("tokens_per_s")
              ? " (ties go by the higher tokens/s, then candidate order)"
              : " (ties go by candidate order)") +
         "; a larger --top re-runs them all";
}

}  // namespace

// The shortest trailing part of `key` (whole dot-separated segments) that no other of `keys`
// ends with: "tp" alone, "attention.tp" beside "expert.tp" (both printed as "tp" before
// 2026-12-05), and that is not another column's name: inference.pools.expert.gpus printed as
// "gpus" beside the gpus metric until 2026-12-05 (16 under a candidate of 24 GPUs).
std::string axis_header(const std::string& key, const std::vector<std::string>& keys,
                        const std::map<std::string, std::string>& columns) {
  const auto ends_with = [](const std::string& s, const std::string& tail) {
    return s == tail || (s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0 &&
                         s[s.size() - tail.size() - 1] == '.');
  };
  for (size_t dot = key.rfind('.'); dot != std::string::npos; dot = dot == 0 ? std::string::npos : key.rfind('.', dot - 1)) {
    const std::string tail = key.substr(dot + 1);
    const bool unique = std::none_of(keys.begin(), keys.end(), [&](const std::string& k) { return k != key && ends_with(k, tail); });
    const auto column = columns.find(tail);
    const bool free = column == columns.end() || column->second == key;
    if (unique && free) return tail;
  }
  return key;
}

std::map<std::string, std::string> non_axis_columns(const SweepSpec& spec) {
  std::map<std::string, std::string> columns = {{"rank", ""}};
  for (const std::string& m : metric_columns(spec)) columns[m] = "";
  // Plan facts repeat a scenario key, but a serving plan's gpus sums its pools.
  for (const std::string& c : plan_columns(spec)) {
    columns[c] = spec.kind == ScenarioKind::kInference ? "" : c == "gpus" ? "cluster.gpus" : "parallelism." + c;
  }
  return columns;
}

std::vector<std::string> metric_columns(const SweepSpec& spec) {
  if (spec.kind == ScenarioKind::kTraffic) return {"completion_time_s", "ideal_time_s", "slowdown"};
  if (spec.kind == ScenarioKind::kInference) {
    std::vector<std::string> m = {"tokens_per_s", "tokens_per_s_per_gpu", "ttft_p99_s", "tpot_p99_s", "rejected",
                                  "served_fraction"};
    if (!spec.price_per_gpu_hour.empty()) m.push_back("cost_per_mtoken");
    // The service-objective metrics and the medians where the sweep ranks or constrains by them
    // (sweep.json and results.jsonl hold every metric; the medians' columns were missing here
    // even where the sweep ranked by them until 2026-12-06).
    for (const char* slo : {"slo_attainment", "goodput_requests_per_s", "ttft_p50_s", "tpot_p50_s", "ttft_growth"}) {
      const bool limited = std::any_of(spec.limits.begin(), spec.limits.end(),
                                       [slo](const MetricLimit& l) { return l.metric == slo; });
      if (spec.objective == slo || limited) m.push_back(slo);
    }
    return m;
  }
  std::vector<std::string> m = {"iteration_time_s", "tokens_per_s", "tokens_per_s_per_gpu", "mfu", "hfu",
                                "memory_per_gpu_gib"};
  // Plans that overflow HBM are kept only with memory_fits: false; then say which they are.
  if (!spec.memory_fits) m.push_back("memory_fits");
  if (!spec.price_per_gpu_hour.empty()) m.push_back("cost_per_mtoken");
  if (spec.train_tokens > 0) {
    m.push_back("time_to_train_days");
    m.push_back("gpu_hours_to_train");
    if (!spec.price_per_gpu_hour.empty()) m.push_back("cost_to_train");
  }
  return m;
}

std::string sweep_csv(const CandidateSpace& space, const SweepTable& table) {
  const SweepSpec& spec = space.spec();
  const std::vector<std::string> metrics = metric_columns(spec);
  std::string out = "index,id";
  for (const Axis& a : spec.axes) out += "," + csv_field(a.key);
  out += ",status,gpu";
  for (const std::string& c : plan_columns(spec)) out += "," + c;
  if (spec.kind == ScenarioKind::kTraining) out += ",recompute";
  for (const std::string& m : metrics) out += "," + m;
  out += ",objective,rank,finer_status,finer_objective,finer_rank,reason,finer_reason\n";
  for (const Row& r : table.rows) {
    const StageResult& a = r.analytical;
    out += std::to_string(r.index) + "," + r.id;
    for (size_t i = 0; i < spec.axes.size(); ++i) out += "," + csv_field(spec.axes[i].values[r.choice[i]].label);
    out += "," + (a.ran ? a.status : std::string("not_run")) + "," + csv_field(info_or_empty(a, "gpu"));
    for (const std::string& c : plan_columns(spec)) out += "," + metric_or_empty(a, c);
    if (spec.kind == ScenarioKind::kTraining) out += "," + info_or_empty(a, "recompute");
    for (const std::string& m : metrics) out += "," + metric_or_empty(a, m);
    out += "," + (a.objective ? number(*a.objective) : "") + "," + (a.rank ? std::to_string(a.rank) : "");
    out += "," + (r.finer.ran ? r.finer.status : std::string()) + "," +
           (r.finer.objective ? number(*r.finer.objective) : "") + "," +
           (r.finer.rank ? std::to_string(r.finer.rank) : "");
    out += "," + csv_field(a.reason) + "," + csv_field(r.finer.reason) + "\n";
  }
  return out;
}

namespace {

// sweep.json without its rows.
Json sweep_json_head(const CandidateSpace& space, const SweepTable& table, const SweepRun& run) {
  const SweepSpec& spec = space.spec();
  Json j = Json::object();
  j.set("sweep", spec.name);
  j.set("clustersim", report::build_stamp());
  // As the sweep file writes it (until 2026-12-07 the path as resolved from the working
  // directory, which differed with the directory the sweep ran from).
  j.set("base", spec.base_written);
  j.set("objective", spec.objective);
  j.set("goal", spec.goal == Goal::kMaximize ? "max" : "min");
  j.set("candidates", static_cast<int64_t>(space.size()));
  j.set("finer_fidelity", spec.flow_fidelity);
  // The candidates the finer stage holds, as the summary's "best K re-run": the requested top
  // (--top, flow_stage.top_k) capped at the candidates ranked (before 2026-12-05 the request:
  // 10 where 4 were re-run).
  j.set("finer_top_k", run.finer.candidates);
  Json& counts = j.set("status_counts", Json::object());
  for (const auto& [k, v] : table.status_counts) counts.set(k, static_cast<int64_t>(v));
  Json& reasons = j.set("skipped_reasons", Json::object());
  for (const auto& [k, v] : table.reason_counts) reasons.set(k, static_cast<int64_t>(v));
  if (!run.notes.empty()) {
    Json& notes = j.set("notes", Json::array());
    for (const std::string& n : run.notes) notes.push(n);
  }
  j.set("rows", Json::array());
  return j;
}

Json stage_json(const StageResult& s) {
  Json o = Json::object();
  o.set("status", s.ran ? s.status : std::string("not_run"));
  if (!s.reason.empty()) o.set("reason", s.reason);
  Json& m = o.set("metrics", Json::object());
  // The plan's sizes and the 0/1 flags are whole numbers by nature: JSON integers (the other
  // metrics are floats on every run, 77.0 as 77.5; since 2026-12-07).
  static const std::set<std::string> kWhole = {"gpus", "tp", "pp", "vpp", "cp", "dp", "micro_batch", "zero_stage",
                                               "memory_fits", "folded"};
  for (const auto& [k, v] : s.metrics) {
    if (kWhole.count(k) && v == std::trunc(v) && std::fabs(v) < 9e15) {
      m.set(k, static_cast<int64_t>(v));
    } else {
      m.set(k, v);
    }
  }
  for (const auto& [k, v] : s.info) o.set(k, v);
  if (s.objective) o.set("objective", *s.objective);
  if (s.rank) o.set("rank", s.rank);
  return o;
}

Json row_json(const SweepSpec& spec, const Row& r) {
  Json row = Json::object();
  row.set("index", static_cast<int64_t>(r.index));
  row.set("id", r.id);
  Json& axes = row.set("axes", Json::object());
  for (size_t i = 0; i < spec.axes.size(); ++i) axes.set(spec.axes[i].key, spec.axes[i].values[r.choice[i]].label);
  row.set("analytical", stage_json(r.analytical));
  if (r.finer.ran) row.set("finer", stage_json(r.finer));
  return row;
}

}  // namespace

Json sweep_json(const CandidateSpace& space, const SweepTable& table, const SweepRun& run) {
  Json j = sweep_json_head(space, table, run);
  Json& rows = j["rows"];
  for (const Row& r : table.rows) rows.push(row_json(space.spec(), r));
  return j;
}

std::string sweep_json_text(const CandidateSpace& space, const SweepTable& table, const SweepRun& run) {
  // The head's empty "rows": [] (its last member) is opened and the rows are written one at a
  // time at their depth (2, one space per level), as the whole tree's dump(1) writes them.
  std::string out = sweep_json_head(space, table, run).dump(1);
  const std::string empty_rows = "[]\n}\n";  // dump ends with a newline
  assert(out.size() >= empty_rows.size() && out.compare(out.size() - empty_rows.size(), empty_rows.size(), empty_rows) == 0 &&
         "rows is the head's last member");
  if (table.rows.empty()) return out;
  out.resize(out.size() - empty_rows.size());
  out += "[";
  for (size_t i = 0; i < table.rows.size(); ++i) {
    out += i ? ",\n  " : "\n  ";
    const std::string row = row_json(space.spec(), table.rows[i]).dump(1);
    for (size_t c = 0; c + 1 < row.size(); ++c) {  // not its final newline
      out += row[c];
      if (row[c] == '\n') out += "  ";
    }
  }
  out += "\n ]\n}\n";
  return out;
}

std::string ranking_change_text(const CandidateSpace& space, const SweepTable& table) {
  const SweepSpec& spec = space.spec();
  std::vector<const Row*> ran;
  for (const Row& r : table.rows) {
    if (r.finer.ran) ran.push_back(&r);
  }
  // A row's place among the re-run rows with ties counted as one place: 1 + the rows better
  // beyond rounding noise (2026-12-05: 6.228820157 s against 6.228820159 s showed as -1/+1).
  const bool maximise = spec.goal == Goal::kMaximize;
  const auto place = [&](const Row* r, StageResult Row::*stage) {
    int better = 0;
    for (const Row* o : ran) {
      const auto& x = (o->*stage).objective;
      if (x && !same_objective(*x, *(r->*stage).objective) && (maximise ? *x > *(r->*stage).objective
                                                                         : *x < *(r->*stage).objective)) {
        ++better;
      }
    }
    return better + 1;
  };
  std::sort(ran.begin(), ran.end(), [](const Row* a, const Row* b) { return a->analytical.rank < b->analytical.rank; });
  std::string out = "  analytical  " + pad(spec.flow_fidelity, 6) + "  change  " + pad(spec.objective + " (analytical)", 24) +
                    "  " + pad(spec.objective + " (" + spec.flow_fidelity + ")", 24) + "  plan\n";
  for (const Row* r : ran) {
    const std::string fr = r->finer.rank ? std::to_string(r->finer.rank) : "-";
    std::string change = "-";
    if (r->finer.rank) {
      const int d = place(r, &Row::analytical) - place(r, &Row::finer);
      change = d == 0 ? "=" : (d > 0 ? "+" : "") + std::to_string(d);
    }
    const std::string after = r->finer.objective ? format_metric(spec.objective, *r->finer.objective)
                                                 : r->finer.status;
    out += "  " + pad(std::to_string(r->analytical.rank), 10) + "  " + pad(fr, 6) + "  " + pad(change, 6) + "  " +
           pad(format_metric(spec.objective, *r->analytical.objective), 24) + "  " + pad(after, 24) + "  " +
           space.label(r->index) + "\n";
  }
  return out;
}

std::string sweep_summary(const CandidateSpace& space, const SweepTable& table, const SweepRun& run) {
  const SweepSpec& spec = space.spec();
  char buf[256];
  std::string out = "sweep " + spec.name + ": " + with_commas(space.size()) + (space.size() == 1 ? " candidate from " : " candidates from ") + spec.base_origin + "\n";
  const double rate = run.analytical.seconds > 0 ? static_cast<double>(run.analytical.ran) / run.analytical.seconds : 0;
  std::snprintf(buf, sizeof buf, "  analytical stage: %s run in %.2f s (%s candidates/s), %s from the log\n",
                with_commas(run.analytical.ran).c_str(), run.analytical.seconds, rate_text(rate).c_str(),
                with_commas(run.analytical.reused).c_str());
  out += buf;
  out += "  status:";
  for (const auto& [k, v] : table.status_counts) out += "  " + k + " " + with_commas(v);
  out += "\n";
  if (!table.reason_counts.empty()) {
    std::vector<std::pair<int64_t, std::string>> reasons;
    for (const auto& [k, v] : table.reason_counts) reasons.emplace_back(-v, k);
    std::sort(reasons.begin(), reasons.end());
    out += "  skipped, by reason:\n";
    for (size_t i = 0; i < reasons.size() && i < 12; ++i) {
      out += "    " + pad(with_commas(-reasons[i].first), 9) + "  " + shown_reason(table, reasons[i].second) + "\n";
    }
    if (reasons.size() > 12) out += "    ... " + std::to_string(reasons.size() - 12) + " more reasons in sweep.json\n";
  }
  const std::vector<std::string> metrics = metric_columns(spec);
  const size_t top = std::min<size_t>(static_cast<size_t>(spec.report_top), table.ranking.size());
  out += "\nbest " + std::to_string(top) + " by " + spec.objective + " (" +
         (spec.goal == Goal::kMaximize ? "higher" : "lower") + " is better), analytical level:\n";
  out += ranked_table(space, table, std::vector<int64_t>(table.ranking.begin(), table.ranking.begin() + top), metrics);

  // The best plan per value of the first axis that sets cluster.gpus (a different scale per value).
  for (size_t a = 0; a < spec.axes.size(); ++a) {
    if (spec.axes[a].key != "cluster.gpus" || spec.axes[a].values.size() < 2) continue;
    std::map<int, int64_t> best;
    for (const int64_t pos : table.ranking) {
      const int v = table.rows[static_cast<size_t>(pos)].choice[a];
      if (!best.count(v)) best[v] = pos;
    }
    std::vector<int64_t> rows;
    for (const auto& [v, pos] : best) rows.push_back(pos);
    out += "\nbest plan per cluster.gpus:\n" + ranked_table(space, table, rows, metrics);
  }
  if (run.finer.candidates > 0) {
    std::snprintf(buf, sizeof buf, "\n%s stage: best %lld re-run (%lld run in %.1f s, %lld from the log)\n",
                  spec.flow_fidelity.c_str(), static_cast<long long>(run.finer.candidates),
                  static_cast<long long>(run.finer.ran), run.finer.seconds, static_cast<long long>(run.finer.reused));
    out += buf;
    std::map<std::string, int64_t> reasons;
    for (const Row& r : table.rows) {
      if (r.finer.ran && r.finer.status != kOk) ++reasons[reason_class(r.finer.status, r.finer.reason)];
    }
    for (const auto& [k, v] : reasons) out += "  not ranked: " + std::to_string(v) + " x " + k + "\n";
    if (const std::string tie = tie_at_cut(spec, table, static_cast<size_t>(run.finer.candidates)); !tie.empty()) {
      out += "  note: " + tie + "\n";
    }
    out += ranking_change_text(space, table);
  }
  return out;
}

}  // namespace clustersim::sweep
