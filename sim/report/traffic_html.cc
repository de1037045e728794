// SPDX-License-Identifier: Apache-2.0
// write_traffic_html: tables and inline SVG bar and line charts of a TrafficResult.
#include "sim/report/traffic_html.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <vector>

#include "sim/report/internal/html_text.h"

namespace clustersim::report {
namespace {

using internal::format_number;
using internal::html_escape;

constexpr int kPlotW = 640, kPlotH = 180, kLeft = 60, kBottom = 30;
constexpr int kQueuePorts = 6;  // most congested ports drawn
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr int kColourCount = sizeof kColours / sizeof kColours[0];

// Horizontal bars, one per (label, value); value / full gives the bar length.
std::string bars(const std::vector<std::pair<std::string, double>>& rows, double full, const char* unit) {
  const int row_h = 20, label_w = 180;
  std::ostringstream o;
  o << "<svg width='" << label_w + kPlotW + 80 << "' height='" << row_h * static_cast<int>(rows.size()) + 10 << "'>";
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = static_cast<double>(i) * row_h + 4;
    const double w = full > 0 ? std::clamp(rows[i].second / full, 0.0, 1.0) * kPlotW : 0.0;
    o << "<text x='0' y='" << format_number("%.0f", y + 12) << "' font-size='11'>" << html_escape(rows[i].first) << "</text>"
      << "<rect x='" << label_w << "' y='" << format_number("%.0f", y) << "' width='" << format_number("%.1f", w) << "' height='"
      << row_h - 6 << "' fill='" << kColours[i % kColourCount] << "'/>"
      << "<text x='" << format_number("%.1f", label_w + w + 4) << "' y='" << format_number("%.0f", y + 12) << "' font-size='11'>"
      << format_number("%.3g", rows[i].second) << ' ' << unit << "</text>";
  }
  o << "</svg>";
  return o.str();
}

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

// Line chart of several series sharing axes; x in `xunit`, y in `yunit`.
std::string lines(const std::vector<Series>& series, const char* xunit, const char* yunit) {
  double xmax = 0, ymax = 0;
  for (const Series& s : series) {
    for (const auto& [x, y] : s.points) {
      xmax = std::max(xmax, x);
      ymax = std::max(ymax, y);
    }
  }
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  std::ostringstream o;
  o << "<svg width='" << kLeft + kPlotW + 20 << "' height='" << kPlotH + kBottom + 10 << "'>";
  o << "<line x1='" << kLeft << "' y1='" << kPlotH << "' x2='" << kLeft + kPlotW << "' y2='" << kPlotH
    << "' stroke='black'/><line x1='" << kLeft << "' y1='0' x2='" << kLeft << "' y2='" << kPlotH
    << "' stroke='black'/>";
  for (int t = 0; t <= 4; ++t) {
    o << "<text x='" << format_number("%.1f", kLeft + kPlotW * t / 4.0) << "' y='" << kPlotH + 16
      << "' font-size='11' text-anchor='middle'>" << format_number("%.4g", xmax * t / 4) << (t == 4 ? std::string(" ") + xunit : "")
      << "</text>";
  }
  o << "<text x='0' y='12' font-size='11'>" << format_number("%.4g", ymax) << "</text><text x='0' y='28' font-size='11'>"
    << yunit << "</text><text x='0' y='" << kPlotH << "' font-size='11'>0</text>";
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    o << "<polyline fill='none' stroke-width='1.5' stroke='" << kColours[i % kColourCount] << "' points='";
    for (const auto& [x, y] : s.points) {
      o << format_number("%.1f", kLeft + kPlotW * x / xmax) << ',' << format_number("%.1f", kPlotH - kPlotH * y / ymax) << ' ';
    }
    o << "'><title>" << html_escape(s.name) << "</title></polyline>";
  }
  o << "</svg><p class='legend'>";
  for (size_t i = 0; i < series.size(); ++i) {
    o << "<span style='color:" << kColours[i % kColourCount] << "'>&#9632;</span> " << html_escape(series[i].name) << " &nbsp; ";
  }
  o << "</p>";
  return o.str();
}

std::string link_name(const engine::TrafficResult& r, net::LinkIndex l) {
  const auto i = static_cast<size_t>(l);
  return i < r.links.size() ? r.links[i].name : "link " + std::to_string(l);
}

}  // namespace

std::string write_traffic_html(const engine::TrafficResult& r) {
  std::ostringstream o;
  o << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>" << html_escape(r.scenario)
    << " - clustersim traffic</title><style>body{font-family:sans-serif;margin:2em;max-width:960px}"
       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
       "th:first-child,td:first-child{text-align:left}.legend{font-size:12px}</style></head><body>";
  o << "<h1>" << html_escape(r.scenario) << "</h1><p>" << html_escape(r.pattern) << " on " << r.gpus << " GPUs, fidelity "
    << html_escape(r.fidelity) << ", solver " << html_escape(r.solver) << ", routing " << html_escape(r.routing) << ", "
    << r.qps_per_connection << " QP(s) per connection, " << r.transfers << " transfers, " << r.flows
    << " sub-flows.</p>";

  o << "<section id='completion'><h2>Completion against the ideal</h2>";
  o << bars({{"ideal", r.ideal_time.as_us() / 1e3}, {"simulated", r.completion_time.as_us() / 1e3}},
            std::max(r.ideal_time.as_us(), r.completion_time.as_us()) / 1e3, "ms");
  o << "<p>Slowdown " << format_number("%.3f", r.slowdown) << "x; aggregate " << format_number("%.1f", r.achieved_bandwidth.as_gbps())
    << " Gbps of an ideal " << format_number("%.1f", r.ideal_bandwidth.as_gbps()) << " Gbps; "
    << r.incomplete_transfers << " incomplete transfers; simulated in " << format_number("%.2f", r.wall_seconds)
    << " s.</p></section>";

  o << "<section id='tiers'><h2>Load per tier</h2><table><tr><th>tier</th><th>link directions</th><th>used</th>"
       "<th>GB (both directions)</th><th>mean peak util.</th><th>max peak util.</th></tr>";
  std::vector<std::pair<std::string, double>> tier_bars;
  for (const engine::TierLoad& t : r.tiers) {
    o << "<tr><td>" << html_escape(t.tier) << "</td><td>" << t.links << "</td><td>" << t.used_links << "</td><td>"
      << format_number("%.3f", t.bytes.as_double() / 1e9) << "</td><td>" << format_number("%.3f", t.mean_peak_utilisation) << "</td><td>"
      << format_number("%.3f", t.max_peak_utilisation) << "</td></tr>";
    tier_bars.emplace_back(t.tier + " (mean)", 100 * t.mean_peak_utilisation);
  }
  o << "</table>" << bars(tier_bars, 100, "%") << "</section>";

  o << "<section id='links'><h2>Most loaded links</h2><table><tr><th>link</th><th>tier</th><th>Gbps</th>"
       "<th>GB</th><th>peak util.</th></tr>";
  std::vector<std::pair<std::string, double>> link_bars;
  for (const engine::LinkLoad& l : r.top_links) {
    o << "<tr><td>" << html_escape(l.name) << "</td><td>" << html_escape(l.tier) << "</td><td>" << format_number("%.0f", l.capacity.as_gbps())
      << "</td><td>" << format_number("%.3f", l.bytes.as_double() / 1e9) << "</td><td>" << format_number("%.3f", l.peak_utilisation)
      << "</td></tr>";
    link_bars.emplace_back(l.name, 100 * l.peak_utilisation);
  }
  o << "</table>" << bars(link_bars, 100, "%") << "</section>";

  if (r.has_congestion) {
    const net::CongestionCounters& c = r.congestion;
    o << "<section id='congestion'><h2>Congestion control</h2><table><tr><th>counter</th><th>value</th></tr>";
    const std::pair<const char*, int64_t> counters[] = {
        {"ECN marks", c.ecn_marks}, {"CNPs", c.cnps},   {"rate cuts", c.cuts},       {"PFC pauses", c.pauses},
        {"PFC resumes", c.resumes}, {"drops", c.drops}, {"retransmits", c.retransmits}};
    for (const auto& [name, v] : counters) o << "<tr><td>" << name << "</td><td>" << v << "</td></tr>";
    o << "<tr><td>largest queueing delay</td><td>" << format_number("%.2f", r.max_queue_delay.as_us()) << " us</td></tr>"
      << "</table></section>";

    // The ports with the largest queues, by their peak.
    std::vector<std::pair<int64_t, net::LinkIndex>> peaks;
    for (size_t l = 0; l < r.link_congestion.size(); ++l) {
      if (r.link_congestion[l].max_queue_bytes > 0) {
        peaks.emplace_back(r.link_congestion[l].max_queue_bytes, static_cast<net::LinkIndex>(l));
      }
    }
    std::sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    if (peaks.size() > static_cast<size_t>(kQueuePorts)) peaks.resize(kQueuePorts);
    std::map<net::LinkIndex, size_t> slot;
    std::vector<Series> queues;
    for (const auto& [peak, l] : peaks) {
      slot[l] = queues.size();
      queues.push_back({link_name(r, l) + " (peak " + format_number("%.0f", static_cast<double>(peak) / 1e3) + " KB)", {}});
    }
    for (const net::QueueSample& s : r.queue_samples) {
      const auto it = slot.find(s.link);
      if (it != slot.end()) queues[it->second].points.emplace_back(s.t.as_us(), static_cast<double>(s.bytes) / 1e3);
    }
    o << "<section id='queues'><h2>Queue length of the most congested ports</h2>";
    o << (queues.empty() ? "<p>No queue built up.</p>" : lines(queues, "us", "KB")) << "</section>";

    std::map<int32_t, size_t> flow_slot;
    std::vector<Series> rates;
    for (const net::RateSample& s : r.rate_samples) {
      auto it = flow_slot.find(s.flow);
      if (it == flow_slot.end()) {
        it = flow_slot.emplace(s.flow, rates.size()).first;
        rates.push_back({"flow " + std::to_string(s.flow) + ": GPU " + std::to_string(s.src) + " to " +
                             std::to_string(s.dst),
                         {}});
      }
      rates[it->second].points.emplace_back(s.t.as_us(), s.rate * 8 / 1e9);
    }
    o << "<section id='rates'><h2>DCQCN rate of the traced flows</h2>";
    o << (rates.empty() ? "<p>No traced flow.</p>" : lines(rates, "us", "Gbps")) << "</section>";
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace clustersim::report
