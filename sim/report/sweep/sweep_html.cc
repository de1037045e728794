// SPDX-License-Identifier: Apache-2.0
// sweep.html: the summary, the ranking, the objective against each axis and the Pareto front of
// throughput against GPU count (and cost), as inline SVG (no network access needed to view it).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "sim/report/sweep/sweep_output.h"

namespace clustersim::sweep {
namespace {

// Points drawn per plot at most (a deterministic stride keeps the file small).
constexpr size_t kMaxPoints = 4000;

struct Series {
  std::vector<std::pair<double, double>> points;
  std::string color;
  bool line = false;
  double radius = 2;
  std::string name;
};

std::string esc(const std::string& s) {
  std::string o;
  for (const char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o += c;
  }
  return o;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A scatter/line plot. `x_labels` (optional) names integer x positions (categorical axes).
std::string svg_plot(const std::string& title, const std::string& xlabel, const std::string& ylabel,
                     const std::vector<Series>& series, const std::vector<std::string>& x_labels, bool log_x) {
  constexpr double kW = 560, kH = 320, kL = 70, kR = 20, kT = 30, kB = 50;
  double x0 = 1e300, x1 = -1e300, y0 = 1e300, y1 = -1e300;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      const double xv = log_x ? std::log2(x) : x;
      x0 = std::min(x0, xv), x1 = std::max(x1, xv), y0 = std::min(y0, y), y1 = std::max(y1, y);
    }
  }
  if (x0 > x1) return "<p>(no ranked candidates to plot)</p>";
  if (!x_labels.empty()) x0 = -0.5, x1 = static_cast<double>(x_labels.size()) - 0.5;
  if (x1 - x0 < 1e-12) x0 -= 1, x1 += 1;
  y0 = std::min(y0, 0.0);
  if (y1 - y0 < 1e-300) y1 = y0 + 1;
  y1 += 0.05 * (y1 - y0);
  const auto px = [&](double x) { return kL + ((log_x ? std::log2(x) : x) - x0) / (x1 - x0) * (kW - kL - kR); };
  const auto py = [&](double y) { return kT + (y1 - y) / (y1 - y0) * (kH - kT - kB); };
  std::string s = "<svg xmlns='http://www.w3.org/2000/svg' width='" + fmt(kW) + "' height='" + fmt(kH) +
                  "' style='background:#fff;border:1px solid #ddd;margin:4px'>";
  s += "<text x='" + fmt(kW / 2) + "' y='18' text-anchor='middle' font-size='13'>" + esc(title) + "</text>";
  s += "<line x1='" + fmt(kL) + "' y1='" + fmt(kH - kB) + "' x2='" + fmt(kW - kR) + "' y2='" + fmt(kH - kB) + "' stroke='#333'/>";
  s += "<line x1='" + fmt(kL) + "' y1='" + fmt(kT) + "' x2='" + fmt(kL) + "' y2='" + fmt(kH - kB) + "' stroke='#333'/>";
  for (int i = 0; i <= 4; ++i) {
    const double y = y0 + (y1 - y0) * i / 4;
    s += "<text x='" + fmt(kL - 4) + "' y='" + fmt(py(y) + 4) + "' text-anchor='end' font-size='10'>" + fmt(y) + "</text>";
    s += "<line x1='" + fmt(kL) + "' y1='" + fmt(py(y)) + "' x2='" + fmt(kW - kR) + "' y2='" + fmt(py(y)) + "' stroke='#eee'/>";
  }
  if (!x_labels.empty()) {
    const size_t step = std::max<size_t>(1, x_labels.size() / 12);
    for (size_t i = 0; i < x_labels.size(); i += step) {
      s += "<text x='" + fmt(px(static_cast<double>(i))) + "' y='" + fmt(kH - kB + 14) +
           "' text-anchor='middle' font-size='10'>" + esc(x_labels[i].substr(0, 14)) + "</text>";
    }
  } else {
    for (int i = 0; i <= 4; ++i) {
      const double xv = x0 + (x1 - x0) * i / 4;
      const double x = log_x ? std::exp2(xv) : xv;
      s += "<text x='" + fmt(px(x)) + "' y='" + fmt(kH - kB + 14) + "' text-anchor='middle' font-size='10'>" + fmt(x) + "</text>";
    }
  }
  s += "<text x='" + fmt(kW / 2) + "' y='" + fmt(kH - 10) + "' text-anchor='middle' font-size='11'>" + esc(xlabel) + "</text>";
  s += "<text x='14' y='" + fmt(kH / 2) + "' text-anchor='middle' font-size='11' transform='rotate(-90 14 " +
       fmt(kH / 2) + ")'>" + esc(ylabel) + "</text>";
  for (const Series& ser : series) {
    if (ser.line && ser.points.size() > 1) {
      std::string d;
      for (const auto& [x, y] : ser.points) d += (d.empty() ? "M" : " L") + fmt(px(x)) + " " + fmt(py(y));
      s += "<path d='" + d + "' fill='none' stroke='" + ser.color + "' stroke-width='1.5'/>";
    }
    for (const auto& [x, y] : ser.points) {
      s += "<circle cx='" + fmt(px(x)) + "' cy='" + fmt(py(y)) + "' r='" + fmt(ser.radius) + "' fill='" + ser.color + "'/>";
    }
  }
  int legend = 0;
  for (const Series& ser : series) {
    if (ser.name.empty()) continue;
    s += "<text x='" + fmt(kW - kR - 4) + "' y='" + fmt(kT + 12 + 13 * legend++) + "' text-anchor='end' font-size='10' fill='" +
         ser.color + "'>" + esc(ser.name) + "</text>";
  }
  return s + "</svg>";
}

// Non-dominated points: fewer (x) is better, more (y) is better; sorted by x.
std::vector<std::pair<double, double>> pareto(std::vector<std::pair<double, double>> pts) {
  std::sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
  std::vector<std::pair<double, double>> front;
  double best = -1e300;
  for (const auto& p : pts) {
    if (p.second > best) {
      front.push_back(p);
      best = p.second;
    }
  }
  return front;
}

std::vector<int64_t> sample(const std::vector<int64_t>& v) {
  if (v.size() <= kMaxPoints) return v;
  std::vector<int64_t> out;
  const double stride = static_cast<double>(v.size()) / kMaxPoints;
  for (size_t i = 0; i < kMaxPoints; ++i) out.push_back(v[static_cast<size_t>(static_cast<double>(i) * stride)]);
  return out;
}

}  // namespace

std::string sweep_html(const CandidateSpace& space, const SweepTable& table, const SweepRun& run) {
  const SweepSpec& spec = space.spec();
  std::string h = "<!DOCTYPE html><html><head><meta charset='utf-8'><title>sweep " + esc(spec.name) +
                  "</title><style>body{font-family:sans-serif;margin:20px}pre{background:#f6f6f6;padding:8px}"
                  "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px}</style>"
                  "</head><body><h1>sweep " + esc(spec.name) + "</h1><p>" + esc(spec.description) + "</p>";
  h += "<h2>Summary</h2><pre>" + esc(sweep_summary(space, table, run)) + "</pre>";
  if (!run.notes.empty()) {
    h += "<h2>Notes</h2><ul>";
    for (const std::string& n : run.notes) h += "<li>" + esc(n) + "</li>";
    h += "</ul>";
  }

  // Ranking table.
  const std::vector<std::string> metrics = metric_columns(spec);
  h += "<h2>Ranking (analytical level)</h2><table><tr><th>rank</th>";
  for (const Axis& a : spec.axes) h += "<th>" + esc(a.key) + "</th>";
  for (const std::string& m : metrics) h += "<th>" + esc(m) + "</th>";
  h += "<th>" + esc(spec.flow_fidelity) + " rank</th></tr>";
  for (size_t r = 0; r < table.ranking.size() && r < static_cast<size_t>(spec.report_top); ++r) {
    const Row& row = table.rows[static_cast<size_t>(table.ranking[r])];
    h += "<tr><td>" + std::to_string(row.analytical.rank) + "</td>";
    for (size_t i = 0; i < spec.axes.size(); ++i) h += "<td>" + esc(spec.axes[i].values[row.choice[i]].label) + "</td>";
    for (const std::string& m : metrics) {
      const auto it = row.analytical.metrics.find(m);
      h += "<td>" + (it == row.analytical.metrics.end() ? std::string("-") : esc(format_metric(m, it->second))) + "</td>";
    }
    h += "<td>" + (row.finer.rank ? std::to_string(row.finer.rank) : std::string(row.finer.ran ? row.finer.status : "")) + "</td></tr>";
  }
  h += "</table>";

  // The objective against each axis: every ranked candidate (grey) and the best per value (red).
  const std::vector<int64_t> shown = sample(table.ranking);
  h += "<h2>" + esc(spec.objective) + " against each axis</h2>";
  for (size_t a = 0; a < spec.axes.size(); ++a) {
    const Axis& axis = spec.axes[a];
    Series all{{}, "rgba(80,80,80,0.35)", false, 2, "candidates"};
    std::map<int, double> best;
    for (const int64_t pos : table.ranking) {
      const Row& row = table.rows[static_cast<size_t>(pos)];
      const int v = row.choice[a];
      if (!best.count(v)) best[v] = *row.analytical.objective;
    }
    for (const int64_t pos : shown) {
      const Row& row = table.rows[static_cast<size_t>(pos)];
      // Spread points of one value a little, by candidate index (deterministic).
      const double jitter = (static_cast<double>(row.index % 17) / 16.0 - 0.5) * 0.3;
      all.points.emplace_back(row.choice[a] + jitter, *row.analytical.objective);
    }
    Series top{{}, "#c62828", true, 3.5, "best per value"};
    for (const auto& [v, obj] : best) top.points.emplace_back(v, obj);
    std::vector<std::string> labels;
    for (const AxisValue& v : axis.values) labels.push_back(v.label);
    h += svg_plot(spec.objective + " vs " + axis.key, axis.key, spec.objective, {all, top}, labels, false);
  }

  // Pareto fronts: throughput against GPU count, and against cost per token when priced.
  if (spec.kind != ScenarioKind::kTraffic) {
    h += "<h2>Pareto front</h2>";
    std::vector<std::pair<double, double>> by_gpus, by_cost;
    for (const int64_t pos : table.ranking) {
      const auto& m = table.rows[static_cast<size_t>(pos)].analytical.metrics;
      by_gpus.emplace_back(m.at("gpus"), m.at("tokens_per_s"));
      if (m.count("cost_per_mtoken")) by_cost.emplace_back(m.at("cost_per_mtoken"), m.at("tokens_per_s"));
    }
    std::vector<std::pair<double, double>> shown_gpus;
    for (const int64_t pos : shown) {
      const auto& m = table.rows[static_cast<size_t>(pos)].analytical.metrics;
      shown_gpus.emplace_back(m.at("gpus"), m.at("tokens_per_s"));
    }
    h += svg_plot("tokens/s against GPU count (front: no plan with as few GPUs is faster)", "GPUs (log scale)", "tokens/s",
                  {Series{shown_gpus, "rgba(80,80,80,0.35)", false, 2, "candidates"},
                   Series{pareto(by_gpus), "#1565c0", true, 3.5, "Pareto front"}},
                  {}, true);
    if (!by_cost.empty()) {
      h += svg_plot("tokens/s against cost per million tokens", "USD per million tokens", "tokens/s",
                    {Series{by_cost.size() > kMaxPoints ? std::vector<std::pair<double, double>>(by_cost.begin(), by_cost.begin() + kMaxPoints) : by_cost,
                            "rgba(80,80,80,0.35)", false, 2, "candidates"},
                     Series{pareto(by_cost), "#1565c0", true, 3.5, "Pareto front"}},
                    {}, false);
    }
  }
  h += "<p>Rows for every candidate: sweep.csv and sweep.json next to this file.</p></body></html>\n";
  return h;
}

}  // namespace clustersim::sweep
