// SPDX-License-Identifier: Apache-2.0
#include "sim/report/inference_html.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <tuple>

#include "sim/report/inference_report.h"
#include "sim/report/internal/html_text.h"

namespace clustersim::report {
namespace {

using internal::format_number;
using internal::html_escape;

constexpr int kBins = 40;           // histogram bins
constexpr int kPlotW = 640, kPlotH = 160;
constexpr const char* kAttention = "#4e79a7";
constexpr const char* kFfn = "#f28e2b";
constexpr const char* kComm = "#e15759";
constexpr const char* kIdle = "#bab0ac";

// Histogram of `values` (seconds, drawn in ms) over [0, hi], hi = 1.25 x the 99th percentile so
// that a long tail does not flatten the body; values above hi are counted in the last bin.
// `limit` (s, 0 = none) is drawn as a dashed line.
std::string histogram(const std::vector<double>& values, double limit, const char* colour) {
  if (values.empty()) return "<p>No request in this distribution.</p>";
  const Percentiles p = percentiles(values);
  double hi = 1.25 * p.p99;
  if (limit > 0) hi = std::max(hi, 1.1 * limit);
  if (hi <= 0) hi = 1e-3;
  std::array<int64_t, kBins> count{};
  for (const double v : values) {
    const int b = std::clamp(static_cast<int>(v / hi * kBins), 0, kBins - 1);
    ++count[static_cast<size_t>(b)];
  }
  const int64_t top = std::max<int64_t>(1, *std::max_element(count.begin(), count.end()));
  const int left = 50, bottom = 30;
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << left + kPlotW + 20 << "' height='" << kPlotH + bottom + 10
    << "'>";
  const double bw = static_cast<double>(kPlotW) / kBins;
  for (int b = 0; b < kBins; ++b) {
    const double h = static_cast<double>(kPlotH) * count[static_cast<size_t>(b)] / top;
    if (h <= 0) continue;
    const double from = hi * b / kBins * 1e3, to = hi * (b + 1) / kBins * 1e3;
    o << "<rect x='" << format_number("%.2f", left + b * bw) << "' y='" << format_number("%.2f", kPlotH - h) << "' width='"
      << format_number("%.2f", bw - 1) << "' height='" << format_number("%.2f", h) << "' fill='" << colour << "'><title>"
      << format_number("%.1f", from) << (b == kBins - 1 ? " ms and above" : "-" + format_number("%.1f", to) + " ms") << ": "
      << count[static_cast<size_t>(b)] << " requests</title></rect>";
  }
  o << "<line x1='" << left << "' y1='" << kPlotH << "' x2='" << left + kPlotW << "' y2='" << kPlotH
    << "' stroke='black'/>";
  for (int t = 0; t <= 4; ++t) {
    const double x = left + kPlotW * t / 4.0;
    o << "<text x='" << format_number("%.1f", x) << "' y='" << kPlotH + 16 << "' font-size='11' text-anchor='middle'>"
      << format_number("%.0f", hi * t / 4 * 1e3) << (t == 4 ? " ms" : "") << "</text>";
  }
  o << "<text x='0' y='12' font-size='11'>" << top << "</text><text x='0' y='" << kPlotH << "' font-size='11'>0</text>";
  if (limit > 0) {
    const double x = left + kPlotW * limit / hi;
    o << "<line x1='" << format_number("%.1f", x) << "' y1='0' x2='" << format_number("%.1f", x) << "' y2='" << kPlotH
      << "' stroke='black' stroke-dasharray='4 3'><title>limit " << format_number("%.0f", limit * 1e3)
      << " ms</title></line>";
  }
  o << "</svg><p>mean " << format_number("%.1f", p.mean * 1e3) << " ms, p50 " << format_number("%.1f", p.p50 * 1e3) << " ms, p99 "
    << format_number("%.1f", p.p99 * 1e3) << " ms over " << p.count << " requests"
    << (limit > 0 ? ", dashed line: the limit" : "") << ".</p>";
  return o.str();
}

// Two bars per pool (compute utilisation, time inside steps), 0-100 %.
std::string pool_bars(const engine::ServingResult& r, double duration) {
  const int label_w = 200, bar_w = 440, row_h = 20;
  std::ostringstream o;
  const int height = row_h * 2 * static_cast<int>(r.pools.size()) + 10;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << label_w + bar_w + 60 << "' height='" << height << "'>";
  int y = 0;
  for (const engine::PoolStats& p : r.pools) {
    const double span = duration * std::max(1, p.instances);
    const double util = span > 0 ? p.compute_busy.as_s() / span : 0.0;
    const double busy = span > 0 ? p.stepping.as_s() / span : 0.0;
    const std::string name = std::string(engine::to_string(p.role)) + " (" + std::to_string(p.gpus) + " x " + p.gpu + ")";
    for (const auto& [what, v, colour] : {std::tuple{"compute", util, kAttention}, std::tuple{"in steps", busy, kIdle}}) {
      o << "<text x='0' y='" << y + 14 << "' font-size='12'>" << html_escape(name) << " " << what << "</text>";
      o << "<rect x='" << label_w << "' y='" << y + 3 << "' width='" << format_number("%.1f", bar_w * std::clamp(v, 0.0, 1.0))
        << "' height='" << row_h - 6 << "' fill='" << colour << "'/>";
      o << "<text x='" << label_w + bar_w + 5 << "' y='" << y + 14 << "' font-size='12'>" << format_number("%.0f", 100 * v)
        << " %</text>";
      y += row_h;
    }
  }
  o << "</svg>";
  return o.str();
}

// The mean decode-only step as one stacked bar: attention, FFN, communication, idle.
std::string step_bar(const engine::ServingResult& r) {
  if (r.decode_steps == 0) return "<p>No decode-only step in this run.</p>";
  const double n = static_cast<double>(r.decode_steps);
  const engine::StepTiming& s = r.decode_step_sum;
  const std::array<std::tuple<const char*, double, const char*>, 4> parts = {
      {{"attention", s.attention.as_s() / n, kAttention}, {"FFN", s.ffn.as_s() / n, kFfn},
       {"communication", s.communication.as_s() / n, kComm}, {"idle", s.idle.as_s() / n, kIdle}}};
  const double total = s.total.as_s() / n;
  const int bar_w = 640;
  std::ostringstream o;
  o << "<svg xmlns='http://www.w3.org/2000/svg' width='" << bar_w + 20 << "' height='60'>";
  double x = 0;
  int lx = 0;
  for (const auto& [name, v, colour] : parts) {
    const double w = total > 0 ? bar_w * v / total : 0.0;
    if (w > 0) {
      o << "<rect x='" << format_number("%.2f", x) << "' y='0' width='" << format_number("%.2f", w) << "' height='24' fill='" << colour
        << "'><title>" << name << ": " << format_number("%.2f", v * 1e3) << " ms</title></rect>";
    }
    x += w;
    o << "<rect x='" << lx << "' y='36' width='10' height='10' fill='" << colour << "'/><text x='" << lx + 14
      << "' y='45' font-size='11'>" << name << " " << format_number("%.2f", v * 1e3) << " ms</text>";
    lx += 160;
  }
  o << "</svg><p>Mean of " << r.decode_steps << " decode-only steps, " << format_number("%.2f", total * 1e3) << " ms at a mean batch of "
    << format_number("%.0f", static_cast<double>(r.decode_step_seqs) / n)
    << " sequences. An instant counts as attention when the attention side computes, else FFN when experts compute, "
       "else communication when bytes are in flight, else idle";
  if (r.micro_batches > 1) o << " (m = " << r.micro_batches << " ping-pong micro-batches overlap the two pools)";
  o << ".</p>";
  return o.str();
}

}  // namespace

std::string write_inference_html(const ScenarioConfig& cfg, const engine::ServingResult& r, const ServingFigures& f) {
  const InferenceConfig& in = *cfg.inference;
  const std::string name = scenario_name(cfg);
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>clustersim serving: " << html_escape(name)
    << "</title><style>body{font-family:sans-serif;max-width:960px;margin:2em auto}"
       "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
       "td:first-child,th:first-child{text-align:left}</style></head><body>\n";
  o << "<h1>Serving " << html_escape(name) << "</h1>\n";
  o << "<h2 id='summary'>Summary</h2>\n<table>";
  auto row = [&](const std::string& k, const std::string& v) { o << "<tr><td>" << k << "</td><td>" << html_escape(v) << "</td></tr>"; };
  row("mode", std::string(to_string(in.mode)) + (in.mode == ServingMode::kAttentionFfn
                                                     ? ", m = " + std::to_string(r.micro_batches) + " micro-batches"
                                                     : ""));
  row("network level", to_string(cfg.network.fidelity));
  row("GPUs", std::to_string(f.gpus));
  row("duration", format_number("%.2f s", f.duration_s));
  row("throughput", format_number("%.0f tokens/s", f.tokens_per_s) + format_number(", %.1f per GPU", f.tokens_per_s_per_gpu));
  row("tokens per cost unit", f.tokens_per_cost_unit > 0 ? format_number("%.0f", f.tokens_per_cost_unit) : "unpriced");
  const Percentiles ttft = percentiles(f.ttft_s), tpot = percentiles(f.tpot_s);
  row("TTFT p50 / p99", format_number("%.1f ms", ttft.p50 * 1e3) + format_number(" / %.1f ms", ttft.p99 * 1e3));
  row("TPOT p50 / p99", f.tpot_s.empty()
                            ? std::string("none (no completed request has a second output token)")
                            : format_number("%.1f ms", tpot.p50 * 1e3) + format_number(" / %.1f ms", tpot.p99 * 1e3) +
                                  (in.tpot_limit > Time::zero() ? " (limit " + to_string(in.tpot_limit) + ")" : ""));
  if (in.mode == ServingMode::kAttentionFfn) row("M2N fabric factor", format_number("%.3f", r.m2n_factor));
  o << "</table>\n";
  o << "<h2 id='ttft'>Time to first token</h2>\n" << histogram(f.ttft_s, 0.0, kAttention) << "\n";
  if (!f.tpot_s.empty()) {
    o << "<h2 id='tpot'>Time per output token</h2>\n" << histogram(f.tpot_s, in.tpot_limit.as_s(), kFfn) << "\n";
  }
  o << "<h2 id='pools'>Pools</h2>\n" << pool_bars(r, f.duration_s);
  o << "<p>compute: compute time / (instances x duration); in steps: time inside steps, including communication "
       "and pipeline waits.</p>\n<table><tr><th>pool</th><th>GPU</th><th>GPUs</th><th>instances</th><th>price per "
       "GPU-hour</th><th>weights GiB/GPU</th><th>KV cache GiB/GPU</th><th>steps</th><th>max batch (limit)</th></tr>";
  for (const engine::PoolStats& p : r.pools) {
    o << "<tr><td>" << engine::to_string(p.role) << "</td><td>" << html_escape(p.gpu) << "</td><td>" << p.gpus << "</td><td>"
      << p.instances << "</td><td>" << (p.price_per_gpu_hour > 0 ? format_number("%.2f", p.price_per_gpu_hour) : "-")
      << "</td><td>" << format_number("%.1f", p.weights_per_gpu.as_gib()) << "</td><td>" << format_number("%.1f", p.kv_budget_per_gpu.as_gib())
      << "</td><td>" << p.steps << "</td><td>" << (p.max_batch_seen > 0 ? std::to_string(p.max_batch_seen) : std::string("-"))
      // The pool's limit beside it (the expert pool of attention_ffn holds none); since 2026-12-07.
      << (p.role == engine::PoolRole::kExpert ? std::string() : " (" + std::to_string(p.max_batch) + ")") << "</td></tr>";
  }
  o << "</table>\n";
  o << "<h2 id='decode-step'>Decode step breakdown</h2>\n" << step_bar(r) << "\n";
  o << "<p>Produced by clustersim; the step-by-step timeline is in trace.json (open it in ui.perfetto.dev).</p>\n";
  o << "</body></html>\n";
  return o.str();
}

}  // namespace clustersim::report
