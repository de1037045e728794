// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/sweep_table.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string_view>

namespace clustersim::sweep {
namespace {

// Sorts ranked rows by objective (ties: the higher tokens_per_s where both have it, then the
// candidate index) and numbers them from 1. The throughput tie-break since 2026-12-06: under
// objective gpus every plan of one cluster size ties, and the first in candidate order, pp 2 at
// 11.0M tokens/s, stood as the best for 16,384 GPUs beside pp 4 at 11.95M.
std::vector<int64_t> rank_rows(const SweepSpec& spec, std::vector<Row>& rows, StageResult Row::*stage) {
  std::vector<int64_t> order;
  for (size_t i = 0; i < rows.size(); ++i) {
    if ((rows[i].*stage).objective) order.push_back(static_cast<int64_t>(i));
  }
  const bool maximise = spec.goal == Goal::kMaximize;
  // A row without the metric ranks as the slowest (a total order: comparing only rows that have
  // it would not be one).
  const auto throughput = [&](int64_t i) {
    const auto& m = (rows[static_cast<size_t>(i)].*stage).metrics;
    const auto it = m.find("tokens_per_s");
    return it == m.end() ? -std::numeric_limits<double>::infinity() : it->second;
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const double x = *(rows[a].*stage).objective;
    const double y = *(rows[b].*stage).objective;
    if (x != y) return maximise ? x > y : x < y;
    const double ta = throughput(a), tb = throughput(b);
    if (ta != tb) return ta > tb;
    return a < b;
  });
  for (size_t r = 0; r < order.size(); ++r) (rows[order[r]].*stage).rank = static_cast<int>(r + 1);
  return order;
}

void fill(StageResult& s, const Record& r) {
  s.ran = true;
  s.status = r.outcome.status;
  s.reason = r.outcome.reason;
  s.metrics = r.outcome.metrics;
  s.info = r.outcome.info;
}

// Why a candidate's results lack `metric` (a constraint names it): the derived metrics say what
// they need; a raw one the run did not report.
std::string why_missing(const SweepSpec& spec, const StageResult& s, const std::string& metric) {
  const auto tokens = s.metrics.find("tokens_per_s");
  const bool no_tokens = tokens == s.metrics.end() || !(tokens->second > 0);
  if ((metric == "cost_per_mtoken" || metric == "tokens_per_s_per_gpu" || needs_train_tokens(metric)) && no_tokens) {
    return "it is derived from tokens_per_s, which is 0 or absent";
  }
  if (needs_train_tokens(metric) && !(spec.train_tokens > 0)) return "it needs objective.train_tokens";
  if (metric == "tokens_per_s_per_gpu" || metric == "gpu_hours_to_train") return "the candidate has no GPU count";
  if (metric == "cost_per_mtoken" || metric == "cost_to_train") {
    const auto counts = s.info.find(kGpuCountsInfo);
    const auto gpu = s.info.find("gpu");
    std::map<std::string, int> by_type;
    if (counts != s.info.end()) by_type = gpu_counts_from_text(counts->second);
    else if (gpu != s.info.end()) by_type[gpu->second] = 1;
    std::string unpriced;
    for (const auto& [g, n] : by_type) {
      if (!spec.price_per_gpu_hour.count(g)) unpriced += (unpriced.empty() ? "'" : ", '") + g + "'";
    }
    return unpriced.empty() ? "the candidate names no GPU to price"
                            : "price_per_gpu_hour has no price for GPU " + unpriced + ", which it uses";
  }
  if (metric == "tpot_p50_s" || metric == "tpot_p99_s") {
    return "no request decoded past its first token: every output is one token long, or none finished";
  }
  if (metric == "slo_attainment" || metric == "goodput_requests_per_s") {
    return "no service objective: set inference.ttft_limit and/or inference.tpot_limit in the base scenario";
  }
  if (metric == "served_fraction") {
    return "no steady load to measure: the requests arrive in a burst (their arrival window is under ten first "
           "tokens, or under one request's life on an idle deployment), or none completed";
  }
  return "the run did not report it";
}

}  // namespace

void finish_stage(const SweepSpec& spec, StageResult& s) {
  if (!s.ran || s.status != kOk) return;
  auto& m = s.metrics;
  const auto tokens = m.find("tokens_per_s");
  const double gpus = m.count("gpus") ? m["gpus"] : 0;
  if (tokens != m.end() && tokens->second > 0) {
    if (gpus > 0) m["tokens_per_s_per_gpu"] = tokens->second / gpus;
    // Price per hour of every GPU the candidate uses (a serving candidate's pools by their own
    // GPU types); no cost unless each type has a price.
    const auto counts = s.info.find(kGpuCountsInfo);
    const std::map<std::string, int> by_type =
        counts != s.info.end() ? gpu_counts_from_text(counts->second)
                               : std::map<std::string, int>{{s.info["gpu"], static_cast<int>(gpus)}};
    double per_hour = 0;
    bool priced = !by_type.empty();
    for (const auto& [gpu, n] : by_type) {
      const auto price = spec.price_per_gpu_hour.find(gpu);
      priced = priced && price != spec.price_per_gpu_hour.end();
      if (priced) per_hour += price->second * n;
    }
    if (priced) m["cost_per_mtoken"] = per_hour / 3600.0 / tokens->second * 1e6;
    if (spec.train_tokens > 0) {
      // The hours the job takes to read train_tokens at tokens_per_s, running all the time: in
      // days, in GPU-hours (every GPU the candidate holds), and at the GPUs' prices.
      const double hours = spec.train_tokens / tokens->second / 3600.0;
      m["time_to_train_days"] = spec.train_tokens / tokens->second / 86400.0;  // as before 2026-12-07, to the bit
      if (gpus > 0) m["gpu_hours_to_train"] = gpus * hours;
      if (priced) m["cost_to_train"] = per_hour * hours;
    }
  }
  // Every constraint the candidate misses, not only the first (since 2026-12-06: an 8-GPU BF16
  // 70B serving plan named its TTFT alone, where it also missed TPOT, served_fraction and the SLO).
  std::vector<std::string> missed;
  char buf[160];
  if (spec.gpus_min && gpus < *spec.gpus_min) {
    std::snprintf(buf, sizeof buf, "gpus %g below the constraint's minimum %d", gpus, *spec.gpus_min);
    missed.push_back(buf);
  } else if (spec.gpus_max && gpus > *spec.gpus_max) {
    std::snprintf(buf, sizeof buf, "gpus %g above the constraint's maximum %d", gpus, *spec.gpus_max);
    missed.push_back(buf);
  }
  for (const MetricLimit& l : spec.limits) {
    const auto it = m.find(l.metric);
    if (it == m.end() || !std::isfinite(it->second)) {
      // A missing metric never meets a constraint (2026-12-05: it counted as met, so an unpriced
      // GPU passed a cost limit); an error, as for a missing objective, unless a constraint
      // checked before it already rejects the candidate.
      if (!missed.empty()) break;
      s.status = kError;
      s.reason = "the constraint on " + l.metric + " cannot be checked: the candidate does not produce " +
                 l.metric + " (" + (it == m.end() ? why_missing(spec, s, l.metric) : "its value is not finite") + ")";
      return;
    }
    // Times with their unit, as the sweep file may give them (50ms; review, 2026-12-07: a reason
    // standing alone read "tpot_p99_s 0.0631967 above ... 0.05").
    const auto shown = [&](double v) {
      if (l.metric.ends_with("_s")) return seconds_to_string(v);
      std::snprintf(buf, sizeof buf, "%.6g", v);
      return std::string(buf);
    };
    if (l.min && it->second < *l.min) {
      missed.push_back(l.metric + " " + shown(it->second) + " below the constraint's minimum " + shown(*l.min));
    } else if (l.max && it->second > *l.max) {
      missed.push_back(l.metric + " " + shown(it->second) + " above the constraint's maximum " + shown(*l.max));
    }
  }
  if (!missed.empty()) {
    s.status = kRejected;
    s.reason = missed.front();
    for (size_t i = 1; i < missed.size(); ++i) s.reason += "; " + missed[i];
  }
  if (s.status != kOk) return;
  const auto obj = m.find(spec.objective);
  if (obj == m.end() || !std::isfinite(obj->second)) {
    s.status = kError;
    // Why, as a constraint's reason says it (review, 2026-12-07: the bare fact, where a constraint
    // on the same metric named the missing service objective).
    s.reason = "the run did not produce the objective '" + spec.objective + "' (" +
               (obj == m.end() ? why_missing(spec, s, spec.objective) : std::string("its value is not finite")) + ")";
    return;
  }
  s.objective = obj->second;
}

SweepTable build_table(const CandidateSpace& space, const std::vector<Record>& records) {
  const SweepSpec& spec = space.spec();
  SweepTable t;
  t.rows.resize(static_cast<size_t>(space.size()));
  for (int64_t i = 0; i < space.size(); ++i) {
    Row& row = t.rows[static_cast<size_t>(i)];
    row.index = i;
    row.id = space.id(i);
    row.choice = space.choice(i);
  }
  for (const Record& r : records) {
    if (r.index < 0 || r.index >= space.size()) continue;
    Row& row = t.rows[static_cast<size_t>(r.index)];
    if (r.id != row.id) continue;
    StageResult& s = r.stage == kStageAnalytical ? row.analytical : row.finer;
    if (!s.ran) fill(s, r);
  }
  for (Row& row : t.rows) {
    finish_stage(spec, row.analytical);
    finish_stage(spec, row.finer);
    if (!row.analytical.ran) continue;
    ++t.status_counts[row.analytical.status];
    if (row.analytical.status != kOk) {
      const std::string cls = reason_class(row.analytical.status, row.analytical.reason);
      if (++t.reason_counts[cls] == 1) t.reason_example[cls] = row.analytical.status + ": " + row.analytical.reason;
    }
  }
  t.ranking = rank_rows(spec, t.rows, &Row::analytical);
  t.finer_ranking = rank_rows(spec, t.rows, &Row::finer);
  return t;
}

std::string no_valid_candidates(const SweepTable& table) {
  if (!table.ranking.empty()) return "";
  std::vector<std::pair<int64_t, std::string>> reasons;
  for (const auto& [k, v] : table.reason_counts) reasons.emplace_back(-v, k);
  std::sort(reasons.begin(), reasons.end());
  std::string out = (table.rows.size() == 1 ? std::string("the one candidate is not valid")
                                            : "none of the " + std::to_string(table.rows.size()) + " candidates is valid") +
                    " (reasons grouped, numbers shown as #)";
  for (size_t i = 0; i < reasons.size(); ++i) {
    out += (i ? "; " : ": ") + std::to_string(-reasons[i].first) + " x " + shown_reason(table, reasons[i].second);
  }
  return out;
}

std::string folding_mix_note(const SweepTable& table) {
  int64_t folded = 0, unfolded = 0, over_taper = 0, in_step = 0, groups_across = 0;
  for (const Row& row : table.rows) {
    const auto it = row.finer.metrics.find("folded");
    if (!row.finer.ran || row.finer.status != kOk || it == row.finer.metrics.end()) continue;
    ++(it->second > 0 ? folded : unfolded);
    over_taper += row.finer.info.count(kFoldedOverTaperInfo) > 0 ? 1 : 0;
    in_step += row.finer.info.count(kFoldedInStepInfo) > 0 ? 1 : 0;
    groups_across += row.finer.info.count(kFoldedGroupsAcrossInfo) > 0 ? 1 : 0;
  }
  std::string out;
  if (folded > 0 && unfolded > 0) {
    out = "the flow stage simulated " + std::to_string(folded) + " finalist" + (folded == 1 ? "" : "s") +
          " folded (one representative DP replica) and " + std::to_string(unfolded) +
          " unfolded (training.fold_ranks auto unfolds TP groups across nodes, and pipeline sends or CP rings across "
          "a tapered tier): folded figures can be a few percent off (Llama 3 405B, PP outermost, 1:1 spine: 7.10 s "
          "folded, 6.86 s unfolded), so close calls between the two kinds are not decided; set training.fold_ranks: "
          "false in the sweep's set: to simulate every finalist alike (`folded` in sweep.json says which ran how)";
  }
  // One clause per kind of folded finalist: "the flow stage simulated N finalist(s) folded " + what.
  const auto say = [&out](int64_t n, const char* what) {
    if (n <= 0) return;
    out += std::string(out.empty() ? "" : "; ") + "the flow stage simulated " + std::to_string(n) + " finalist" +
           (n == 1 ? "" : "s") + " folded " + what;
  };
  say(over_taper,
      "whose pipeline sends or CP rings cross a tapered tier (training.fold_ranks: true, or auto where the "
      "unfolded graph would pass its op limit: `clustersim run` on the plan says which), which can be off either "
      "way (Llama 3 405B, PP outermost, an 8:1 spine: 8.82 s folded, 7.03 s unfolded): set training.fold_ranks: "
      "false for the figures (past the op limit, a larger parallelism.micro_batch makes fewer ops)");
  say(in_step,
      "whose pipeline sends leave their pods: folded, every replica's sends start in step with replica 0's and meet "
      "each other's ECMP collisions every time, 0.4 to 3.5% slow on the plans measured (MegaScale 175B on 12,288 "
      "GPUs: 0.6%): set training.fold_ranks: false to compare them exactly");
  say(groups_across,
      "whose TP or CP groups span nodes: folded, the other replicas' flows there start in step with replica 0's, "
      "and such a run can come out fast where the unfolded replicas meet out of step (CP across nodes: 0.3% on "
      "Llama 3 405B's 16,384 GPUs with cp 2; TP across nodes: 18 to 47%): set training.fold_ranks: false for the "
      "exact figures");
  return out;
}

std::string shown_reason(const SweepTable& table, const std::string& cls) {
  // A class of one candidate is that candidate's reason: nothing to group, so the numbers show.
  const auto count = table.reason_counts.find(cls);
  const auto example = table.reason_example.find(cls);
  if (count == table.reason_counts.end() || count->second != 1 || example == table.reason_example.end()) return cls;
  std::string out = example->second;
  if (out.size() > 480) out = out.substr(0, 477) + "...";  // 160 until 2026-12-07: it cut a reason before its why (review)
  return out;
}

std::string reason_class(const std::string& status, const std::string& reason) {
  std::string out = status + ": ";
  // The first problem only, numbers masked; digits inside names stay ("A100-SXM4-80GB", "1F1B",
  // "stage3"): a run of digits touching a letter, or after a '-' or '_' that follows one. A
  // rejection keeps every constraint it misses (each "; "-separated), so candidates that miss
  // more are a class of their own (since 2026-12-06, when rejections began to list them all).
  const std::string first = status == kRejected ? reason : reason.substr(0, reason.find("; "));
  const auto alpha = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; };
  const auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t i = 0; i < first.size();) {
    if (!std::isdigit(static_cast<unsigned char>(first[i]))) {
      out += first[i++];
      continue;
    }
    size_t end = i;
    while (end < first.size() &&
           (std::isdigit(static_cast<unsigned char>(first[end])) ||
            (first[end] == '.' && end + 1 < first.size() && std::isdigit(static_cast<unsigned char>(first[end + 1]))))) {
      ++end;
    }
    // An exponent belongs to the number ("3.54457e+06"): taken for a letter it kept the number
    // as part of a name, and every candidate was a class of its own (until 2026-12-06).
    const auto digit_at = [&](size_t k) { return k < first.size() && std::isdigit(static_cast<unsigned char>(first[k])) != 0; };
    if (end < first.size() && (first[end] == 'e' || first[end] == 'E')) {
      const size_t sign = end + 1 < first.size() && (first[end + 1] == '+' || first[end + 1] == '-') ? end + 2 : end + 1;
      if (digit_at(sign)) {
        end = sign;
        while (digit_at(end)) ++end;
      }
    }
    const char before = i > 0 ? first[i - 1] : ' ';
    const bool joined = before == '-' || before == '_';
    const bool in_name = alpha(before) || (end < first.size() && alpha(first[end])) ||
                         (joined && i > 1 && alnum(first[i - 2]));
    out += in_name ? first.substr(i, end - i) : "#";
    i = end;
  }
  if (status == kRejected) {  // "ttft_p99_s # above maximum #; ...": short enough for four
    constexpr std::string_view kPhrase = " the constraint's ";
    for (size_t at = out.find(kPhrase); at != std::string::npos; at = out.find(kPhrase, at)) out.replace(at, kPhrase.size(), " ");
  }
  if (out.size() > 480) out = out.substr(0, 477) + "...";  // 160 until 2026-12-07: it cut a reason before its why (review)
  return out;
}

bool same_objective(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

std::string rate_text(double per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, per_s >= 10 ? "%.0f" : "%.2g", per_s);
  return buf;
}

std::string format_metric(const std::string& metric, double v) {
  if (!std::isfinite(v)) return "-";  // no number to show (the table's mark for a missing metric)
  char buf[64];
  if (metric == "mfu" || metric == "hfu") {
    std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  } else if (metric.ends_with("_s") && !metric.ends_with("_per_s")) {  // times, not rates
    // Traffic runs finish in milliseconds and TPOT is tens of them: "0.001 s" hid 1.35 ms.
    if (std::fabs(v) >= 1 || v == 0) std::snprintf(buf, sizeof buf, "%.3f s", v);
    else if (std::fabs(v) >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", v * 1e3);
    else std::snprintf(buf, sizeof buf, "%.2f us", v * 1e6);
  } else if (metric == "cost_per_mtoken") {
    std::snprintf(buf, sizeof buf, "$%.3f", v);
  } else if (metric == "cost_to_train") {
    if (std::fabs(v) >= 1e6) std::snprintf(buf, sizeof buf, "$%.3fM", v / 1e6);
    else if (std::fabs(v) >= 1e3) std::snprintf(buf, sizeof buf, "$%.0f", v);
    else std::snprintf(buf, sizeof buf, "$%.2f", v);
  } else if (metric == "time_to_train_days") {
    std::snprintf(buf, sizeof buf, "%.1f d", v);
  } else if (std::fabs(v) >= 1e6) {
    // Rates and counts in one form whatever their metric: "14583" tokens/s per GPU beside "14583"
    // tokens/s, not "1.458e+04" (before 2026-12-05 %.4g for all but tokens_per_s), and millions
    // as "1.295M"; below 1,000, four significant digits ("105.4", "0.9998").
    std::snprintf(buf, sizeof buf, "%.3fM", v / 1e6);
  } else if (std::fabs(v) >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

}  // namespace clustersim::sweep
