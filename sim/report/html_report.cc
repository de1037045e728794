// SPDX-License-Identifier: Apache-2.0
#include "sim/report/html_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <sstream>

#include "sim/report/internal/html_text.h"
#include "sim/report/internal/straggler_words.h"

namespace clustersim::report {
namespace {

using internal::format_number;
using internal::html_escape;

// Each breakdown part's colour, by its results.json name (breakdown_parts gives the parts).
const char* part_colour(const std::string& name) {
  static const std::array<std::pair<const char*, const char*>, 8> kColours = {{{"compute", "#4e79a7"},
                                                                               {"tp_exposed", "#f28e2b"},
                                                                               {"pp_exposed", "#e15759"},
                                                                               {"bubble", "#bab0ac"},
                                                                               {"dp_exposed", "#76b7b2"},
                                                                               {"optimizer", "#59a14f"},
                                                                               {"ep_exposed", "#b07aa1"},
                                                                               {"step_stall", "#edc948"}}};
  for (const auto& [n, c] : kColours) {
    if (name == n) return c;
  }
  return "#9c755f";
}

// One horizontal stacked bar per row, widths proportional to time over `total`; the parts are
// breakdown_parts' (MoE runs' ep_exposed too: until 2026-12-07 the bars left it out and ended short
// of the iteration, 102 ms of Mixtral's 3.155 s), and the legend names the parts some row has.
std::string stacked_bars(const std::vector<std::pair<std::string, engine::TrainingBreakdown>>& rows, Time total, bool moe) {
  const int label_w = 120, bar_w = 640, row_h = 22;
  const int height = row_h * static_cast<int>(rows.size()) + 30;
  std::vector<std::string> legend;
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << label_w + bar_w + 20 << "' height='" << height << "'>";
  for (size_t r = 0; r < rows.size(); ++r) {
    const int y = static_cast<int>(r) * row_h;
    o << "<text x='0' y='" << y + 15 << "' font-size='12'>" << html_escape(rows[r].first) << "</text>";
    double x = label_w;
    for (const auto& [name, t] : breakdown_parts(rows[r].second, moe)) {
      if (std::find(legend.begin(), legend.end(), name) == legend.end()) legend.emplace_back(name);
      const double w = total > Time::zero() ? bar_w * (t / total) : 0.0;
      if (w <= 0) continue;
      o << "<rect x='" << format_number("%.2f", x) << "' y='" << y + 3 << "' width='" << format_number("%.2f", w) << "' height='" << row_h - 6
        << "' fill='" << part_colour(name) << "'><title>" << name << ": " << to_string(t) << "</title></rect>";
      x += w;
    }
  }
  int lx = label_w;
  const int ly = static_cast<int>(rows.size()) * row_h + 8;
  for (const std::string& name : legend) {
    o << "<rect x='" << lx << "' y='" << ly << "' width='10' height='10' fill='" << part_colour(name) << "'/>"
      << "<text x='" << lx + 14 << "' y='" << ly + 10 << "' font-size='11'>" << name << "</text>";
    lx += 85;
  }
  o << "</svg>";
  return o.str();
}

// The MoE layers of the critical stage, as the text summary and results.json's `moe.layers` give
// them (issue #7's per-layer all-to-all and imbalance; the report had none until 2026-12-07).
std::string moe_layer_table(const ScenarioConfig& cfg, const engine::TrainingEstimate& est) {
  std::ostringstream o;
  o << "<h2>MoE layers</h2>\n<p>Stage " << est.critical_stage
    << " (the critical stage), per micro-batch, forward + backward; ep " << cfg.parallelism.ep << ", expert_tp "
    << cfg.parallelism.expert_tp << ", attention " << to_string(cfg.training.attention_parallel) << ", comm "
    << to_string(cfg.training.comm_precision) << ".</p>\n"
    << "<table><tr><th>layer</th><th>imbalance (busiest GPU / mean)</th><th>dropped pairs</th><th>all-to-all</th>"
       "<th>exposed</th><th>expert compute</th><th>chunks</th></tr>\n";
  for (const engine::MoeLayerReport& l : est.moe_layers) {
    o << "<tr><td>" << l.layer << "</td><td>" << format_number("%.3f", l.imbalance) << "</td><td>"
      << format_number("%.1f%%", 100 * l.dropped_fraction) << "</td><td>" << html_escape(to_string(l.a2a)) << "</td><td>"
      << html_escape(to_string(l.a2a_exposed)) << "</td><td>" << html_escape(to_string(l.expert_compute)) << "</td><td>"
      << l.chunks << "</td></tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

std::string tier_bars(const std::vector<engine::TierLoad>& tiers) {
  const int label_w = 90, bar_w = 400, row_h = 22;
  double max_bytes = 1;
  for (const engine::TierLoad& t : tiers) max_bytes = std::max(max_bytes, t.bytes.as_double());
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << label_w + 2 * bar_w + 60 << "' height='"
    << row_h * (static_cast<int>(tiers.size()) + 1) << "'>";
  o << "<text x='" << label_w << "' y='14' font-size='12'>bytes carried</text><text x='" << label_w + bar_w + 30
    << "' y='14' font-size='12'>peak utilisation (mean, max)</text>";
  for (size_t r = 0; r < tiers.size(); ++r) {
    const engine::TierLoad& t = tiers[r];
    const int y = (static_cast<int>(r) + 1) * row_h;
    o << "<text x='0' y='" << y + 15 << "' font-size='12'>" << html_escape(t.tier) << "</text>";
    const double w = bar_w * t.bytes.as_double() / max_bytes;
    o << "<rect x='" << label_w << "' y='" << y + 3 << "' width='" << format_number("%.2f", w) << "' height='" << row_h - 6
      << "' fill='#4e79a7'><title>" << html_escape(to_string(t.bytes)) << " over " << t.used_links << " of " << t.links
      << " link directions</title></rect>";
    const int x2 = label_w + bar_w + 30;
    o << "<rect x='" << x2 << "' y='" << y + 3 << "' width='" << format_number("%.2f", bar_w * std::min(1.0, t.max_peak_utilisation))
      << "' height='" << row_h - 6 << "' fill='#f28e2b'/>";
    o << "<rect x='" << x2 << "' y='" << y + 6 << "' width='" << format_number("%.2f", bar_w * std::min(1.0, t.mean_peak_utilisation))
      << "' height='" << row_h - 12 << "' fill='#e15759'><title>mean " << format_number("%.2f", t.mean_peak_utilisation) << ", max "
      << format_number("%.2f", t.max_peak_utilisation) << "</title></rect>";
  }
  o << "</svg>";
  return o.str();
}

}  // namespace

std::string write_html_report(const ScenarioConfig& cfg, const calib::HardwareProfile& hw,
                              const engine::FlowTrainingResult& flow, const AnalyticalPeer& peer) {
  const engine::TrainingEstimate& est = flow.estimate;
  const std::string name = scenario_name(cfg);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>clustersim: " << html_escape(name) << "</title>"
    << "<style>body{font-family:sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}"
    << "td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#eee}td:first-child{text-align:left}</style>"
    << "</head><body>\n";
  o << "<h1>" << html_escape(name) << "</h1>\n<p>" << cfg.cluster.gpus << " x " << html_escape(hw.name) << ", tp " << cfg.parallelism.tp
    << ", pp " << cfg.parallelism.pp << ", vpp " << cfg.parallelism.vpp << ", cp " << cfg.parallelism.cp << ", dp " << est.dp
    << ", " << est.micro_batches << " micro-batches per pipeline";
  if (!cfg.parallelism.stage_layers.empty()) o << "; layers per stage " << internal::layer_map_list(cfg);
  o << "; fidelity flow"
    << (flow.folded ? " (folded)" : "") << "</p>\n";
  // With stragglers the analytical figures say which they are: the same stragglers' (peer), and
  // the breakdown, the closed form's, without them (the paragraph says so; the bars' labels are
  // 120 px). Both were unlabelled before 2026-12-05.
  const bool straggled = !cfg.stragglers.empty();
  // An uneven layer split alone is the plan, named so (2026-12-07).
  const std::string stragglers_label = !straggled             ? ""
                                       : peer.with_stragglers ? "same " + std::string(internal::stragglers_name(cfg))
                                                              : internal::baseline_words(cfg);
  const std::string faults_label = peer.without_faults ? "without network faults" : "";
  const std::string both = stragglers_label + (stragglers_label.empty() || faults_label.empty() ? "" : ", ") + faults_label;
  const std::string peer_label = both.empty() ? "" : " (" + both + ")";
  o << "<table><tr><th>iteration</th><th>tokens/s</th><th>MFU</th><th>analytical iteration" << peer_label
    << "</th><th>analytical MFU" << peer_label << "</th></tr><tr><td>"
    << html_escape(to_string(est.iteration)) << "</td><td>" << format_number("%.4g", est.tokens_per_s) << "</td><td>"
    << format_number("%.1f%%", 100 * est.mfu) << "</td><td>" << html_escape(to_string(peer.iteration)) << "</td><td>"
    << format_number("%.1f%%", 100 * peer.mfu) << "</td></tr></table>\n";

  o << "<h2>Where the time goes</h2>\n<p>Critical rank group (" << html_escape(flow.groups.empty() ? "" : flow.groups[flow.critical_group].name)
    << ") at the flow level, and the analytical level"
    << (straggled ? " " + std::string(internal::baseline_words(cfg)) : std::string())
    << (peer.without_faults ? (straggled ? " or network faults" : " without network faults") : "") << ":</p>\n";
  std::vector<std::pair<std::string, engine::TrainingBreakdown>> headline = {{"flow", est.breakdown},
                                                                             {"analytical", flow.analytical.breakdown}};
  const bool moe = cfg.model.moe.has_value();
  o << stacked_bars(headline, max(est.iteration, flow.analytical.iteration), moe) << "\n";
  o << "<h2>Rank groups</h2>\n<p>Each representative rank group's own timeline over the iteration (idle time at the end counts as bubble).</p>\n";
  std::vector<std::pair<std::string, engine::TrainingBreakdown>> rows;
  for (const engine::RankGroupTiming& g : flow.groups) rows.emplace_back(g.name, g.breakdown);
  o << stacked_bars(rows, est.iteration, moe) << "\n";
  if (moe && !est.moe_layers.empty()) o << moe_layer_table(cfg, est);

  o << "<h2>Fabric load</h2>\n" << tier_bars(flow.tiers) << "\n";
  o << "<h3>Most loaded links</h3>\n<table><tr><th>link</th><th>tier</th><th>capacity (Gbps)</th><th>bytes</th><th>peak utilisation</th></tr>\n";
  for (const engine::LinkLoad& l : flow.top_links) {
    o << "<tr><td>" << html_escape(l.name) << "</td><td>" << html_escape(l.tier) << "</td><td>" << format_number("%.0f", l.capacity.as_gbps()) << "</td><td>"
      << html_escape(to_string(l.bytes)) << "</td><td>" << format_number("%.2f", l.peak_utilisation) << "</td></tr>\n";
  }
  o << "</table>\n<p>" << flow.ops << " ops and " << flow.flows << " flows simulated for " << flow.rank_groups
    << " rank groups in " << format_number("%.2f", flow.wall_seconds) << " s.</p>\n</body></html>\n";
  return o.str();
}

}  // namespace clustersim::report
