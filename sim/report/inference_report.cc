// SPDX-License-Identifier: Apache-2.0
#include "sim/report/inference_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "sim/core/error.h"
#include "sim/report/inference_html.h"
#include "sim/report/internal/trace_lanes.h"

namespace clustersim::report {
namespace {

// Trace threads, the same numbers in every process.
enum Track { kSteps = 0, kAttentionTrack, kFfnTrack, kCommTrack, kKvSend, kKvRecv, kTrackCount };
constexpr const char* kTrackNames[kTrackCount] = {"steps", "attention", "ffn", "communication", "kv send", "kv recv"};

std::string us(Time t) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(t.as_ps()) * 1e-6);
  return buf;
}

std::string step_name(const engine::TracedStep& s) {
  if (s.prefill_seqs == 0) return "decode";
  return s.decode_seqs == 0 ? "prefill" : "prefill+decode";
}

std::string span_name(const engine::StepSpan& s, bool ping_pong) {
  static const char* const kNames[] = {"attention", "FFN", "M2N", "N2M", "communication"};
  std::string name = kNames[static_cast<int>(s.part)];
  if (!ping_pong) return name + " (all layers)";
  if (s.layer < 0) return "LM head mb" + std::to_string(s.micro_batch);
  return name + " L" + std::to_string(s.layer) + " mb" + std::to_string(s.micro_batch);
}

Json stats_json(const Percentiles& p) {
  Json j = Json::object();
  j.set("mean", p.mean);
  j.set("p50", p.p50);
  j.set("p99", p.p99);
  return j;
}

// Milliseconds below 10 s ("227191.0 ms" read badly), seconds from there.
// A latency in ms below 10 s, else in s; `scale` (default: the value itself) picks the unit, so a
// line of statistics shares the unit of its largest (it read "mean 10.7 s, p50 8811.8 ms" until
// 2026-12-06).
std::string ms(double s, double scale = -1) {
  char buf[32];
  if ((scale < 0 ? s : scale) < 10) {
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  } else if (s >= 10 || s == 0) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else {
    // A short figure beside a long one, in seconds, keeps its digits (40 ms read "0.0 s").
    std::snprintf(buf, sizeof buf, "%.3g s", s);
  }
  return buf;
}

// "mean M, p50 P, p99 Q" in one unit.
std::string latency_stats(const Percentiles& p) {
  const double top = std::max({p.mean, p.p50, p.p99});
  return "mean " + ms(p.mean, top) + ", p50 " + ms(p.p50, top) + ", p99 " + ms(p.p99, top);
}

// A rate in tokens/s: whole numbers from 100, three significant digits below (a low-load run's
// 0.26 tokens/s printed as 0).
std::string rate(double per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, per_s >= 100 ? "%.0f" : "%.3g", per_s);
  return buf;
}

}  // namespace

Percentiles percentiles(std::vector<double> v) {
  Percentiles p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const auto rank = [&](double q) {
    // Nearest rank: the smallest value with at least q of the sample at or below it.
    const size_t r = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(r, 1, v.size()) - 1];
  };
  p.count = static_cast<int64_t>(v.size());
  p.mean = sum / static_cast<double>(v.size());
  p.p50 = rank(0.50);
  p.p99 = rank(0.99);
  return p;
}

std::string write_inference_trace_json(const ScenarioConfig& cfg, const engine::ServingResult& r) {
  const engine::ServingTrace& t = r.trace;
  const bool afd = cfg.inference->mode == ServingMode::kAttentionFfn;
  std::string out = "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"scenario\":" +
                    json_quote(scenario_name(cfg)) +
                    ",\"steps_per_instance\":" + std::to_string(t.limits.steps_per_instance) +
                    ",\"detailed_decode_steps\":" + std::to_string(t.limits.detailed_decode_steps) +
                    ",\"kv_transfers\":" + std::to_string(t.limits.kv_transfers) + "},\"traceEvents\":[\n";
  bool first = true;
  auto emit = [&](const std::string& event) {
    if (!first) out += ",\n";
    first = false;
    out += event;
  };
  // KV transfers in flight together overlap on their instance's kv tracks without nesting: each
  // gets a lane where it fits ("kv send 2"; until 2026-12-06 they overlapped on one lane).
  std::vector<internal::LaneSpan> kv_spans;
  kv_spans.reserve(2 * t.kv.size());
  for (const engine::TracedKvTransfer& kv : t.kv) {
    kv_spans.push_back({kv.from_instance, kKvSend, kv.sent, kv.arrived});
    kv_spans.push_back({kv.to_instance, kKvRecv, kv.sent, kv.arrived});
  }
  const std::vector<int> kv_lanes = internal::pack_lanes(kv_spans);
  const internal::LaneCounts lanes_used(kv_spans, kv_lanes);
  const bool moves_kv = cfg.inference->mode == ServingMode::kPrefillDecode;
  auto meta = [&](int pid, const std::string& name) {
    const std::string p = std::to_string(pid);
    emit("{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + p + ",\"tid\":0,\"args\":{\"name\":" + json_quote(name) + "}}");
    emit("{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" + p + ",\"tid\":0,\"args\":{\"sort_index\":" + p + "}}");
    // The kv tracks only where caches move (prefill_decode; declared empty elsewhere until 2026-12-06).
    for (int k = 0; k < (moves_kv ? kTrackCount : kKvSend); ++k) {
      for (const std::string& e : internal::lane_metadata(pid, k, lanes_used.of(pid, k), kTrackCount, kTrackNames[k])) emit(e);
    }
  };
  auto span = [&](int pid, int tid, const std::string& name, const char* cat, Time start, Time end,
                  const std::string& args) {
    emit("{\"ph\":\"X\",\"name\":" + json_quote(name) + ",\"cat\":\"" + cat + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + us(start) + ",\"dur\":" + us(end - start) + ",\"args\":" + args + "}");
  };
  // Processes: one per instance; attention_ffn: the attention pool (0) and the expert pool (1).
  if (afd) {
    for (int p = 0; p < static_cast<int>(r.pools.size()); ++p) {
      const engine::PoolStats& pool = r.pools[p];
      meta(p, std::string(engine::to_string(pool.role)) + " pool (" + std::to_string(pool.gpus) + " x " + pool.gpu + ")");
    }
  } else {
    std::vector<int> seen(r.pools.size(), 0);
    for (size_t i = 0; i < t.instances.size(); ++i) {
      const engine::TracedInstance& inst = t.instances[i];
      const engine::PoolStats& pool = r.pools[static_cast<size_t>(inst.pool)];
      meta(static_cast<int>(i), std::string(engine::to_string(pool.role)) + " instance " +
                                    std::to_string(seen[static_cast<size_t>(inst.pool)]++) + " (GPUs " +
                                    std::to_string(inst.first_gpu) + "-" + std::to_string(inst.first_gpu + inst.gpus - 1) +
                                    ", " + pool.gpu + ")");
    }
  }
  for (size_t k = 0; k < t.steps.size(); ++k) {
    const engine::TracedStep& s = t.steps[k];
    const int pid = afd ? 0 : s.instance;
    const std::string args = "{\"step\":" + std::to_string(k) + ",\"decode_seqs\":" + std::to_string(s.decode_seqs) +
                             ",\"prefill_seqs\":" + std::to_string(s.prefill_seqs) +
                             ",\"prefill_tokens\":" + std::to_string(s.prefill_tokens) + "}";
    span(pid, kSteps, step_name(s), "step", s.start, s.end, args);
    if (afd) span(1, kSteps, step_name(s) + " (experts)", "step", s.start, s.end, args);
    for (const engine::StepSpan& d : s.detail) {
      // attention_ffn: experts and N2M run on the expert pool.
      const bool expert_side = afd && (d.part == engine::StepPart::kFfn || d.part == engine::StepPart::kN2m);
      const int tid = d.part == engine::StepPart::kAttention ? kAttentionTrack
                      : d.part == engine::StepPart::kFfn     ? kFfnTrack
                                                              : kCommTrack;
      span(expert_side ? 1 : pid, tid, span_name(d, afd), engine::to_string(d.part), s.start + d.start, s.start + d.end,
           "{\"step\":" + std::to_string(k) + ",\"layer\":" + std::to_string(d.layer) +
               ",\"micro_batch\":" + std::to_string(d.micro_batch) + "}");
    }
  }
  int64_t flow_id = 0;
  for (size_t i = 0; i < t.kv.size(); ++i) {
    const engine::TracedKvTransfer& kv = t.kv[i];
    const int send_tid = internal::lane_tid(kKvSend, kv_lanes[2 * i], kTrackCount);
    const int recv_tid = internal::lane_tid(kKvRecv, kv_lanes[2 * i + 1], kTrackCount);
    const std::string name = "KV r" + std::to_string(kv.request);
    const std::string args = "{\"request\":" + std::to_string(kv.request) + ",\"bytes\":" + std::to_string(kv.bytes.n) + "}";
    span(kv.from_instance, send_tid, name, "kv", kv.sent, kv.arrived, args);
    span(kv.to_instance, recv_tid, name, "kv", kv.sent, kv.arrived, args);
    const std::string id = std::to_string(++flow_id);
    emit("{\"ph\":\"s\",\"name\":\"kv\",\"cat\":\"kv\",\"id\":" + id + ",\"pid\":" + std::to_string(kv.from_instance) +
         ",\"tid\":" + std::to_string(send_tid) + ",\"ts\":" + us(kv.sent) + "}");
    emit("{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"kv\",\"cat\":\"kv\",\"id\":" + id + ",\"pid\":" +
         std::to_string(kv.to_instance) + ",\"tid\":" + std::to_string(recv_tid) + ",\"ts\":" + us(kv.sent) + "}");
  }
  out += "\n]}\n";
  return out;
}

namespace {

// The load while requests arrive, from the first arrival to the last (the window W): the output
// tokens the deployment produced in it (a request's first token at its time, the others spread
// evenly to its finish, as its TPOT averages them), and those its requests would have produced in
// it at the run's quickest time to first token and its median TPOT, counted the same way, every
// request offered (rejected ones too: left out until 2026-12-06, and a deployment that rejected
// most of its load read as keeping up). Unlike tokens_per_s over the whole run, the drain does not
// count: a deployment that keeps up produces about what is offered, one that falls behind less
// (shown as falling behind under kKeepsUp, 95%, of it). Until 2026-12-06 the offered side counted each
// arriving request's whole output, whose last tokens come after the window when the requests live
// long: 7,000-token outputs at 14 ms a token over 200 s of arrivals read 0.76 of the offered load,
// "falling behind", with no queue and every request within its SLO.
struct LoadWindow {
  double window_s = 0;  // 0: a burst, no steady state to measure
  double offered = 0;   // tokens/s
  double steady = 0;    // tokens/s
  double requested = 0;  // tokens/s: the outputs of the requests arriving in the window, over it
  // Mean time to first token of the completed requests arriving in the window's first and last
  // quarter (s; 0 when none): a queue that grows shows as the later ones waiting longer.
  double ttft_first_quarter = 0;
  double ttft_last_quarter = 0;
  // Completed requests arriving in the first, second and last quarter (their means are 0, and
  // results.json's null, where none did).
  int64_t first_quarter_count = 0, second_quarter_count = 0, last_quarter_count = 0;
  // Arrivals in each quarter of the window, rejected ones included. Far apart (a trace's burst and
  // quiet spells) the quarters compared above are not one load's: steady_arrivals is false.
  std::array<int64_t, 4> quarter_arrivals{};
  bool steady_arrivals = true;
  // How fast the time to first token grows with the arrival time (s per s): the mean of the last
  // quarter's arrivals less the second quarter's, over the time between their mean arrivals (the
  // first quarter left out: it meets an empty deployment). Where a queue builds, a deployment
  // saturated by its arrivals makes each wait longer than the one before.
  double ttft_second_quarter = 0;
  double ttft_growth = 0;
  // Requests in the deployment (arrived, not rejected, not finished) at `settled_from` and at the
  // window's end, and the arrivals between: where they keep piling up the run ended before a
  // steady state. settled_from is the later of the window's middle and the 90th percentile of a
  // completed request's life after the first arrival (before it the deployment is still filling
  // from empty); `short_run` where that leaves under a tenth of the window to judge by.
  double settled_from = 0;  // s after the first arrival
  double in_system_from = 0;  // when the first count is taken: settled_from, at most the window
  bool short_run = false;
  int64_t in_system_middle = 0;
  int64_t in_system_end = 0;
  int64_t arrivals_second_half = 0;
  // The offered load at the quickest first token and the fastest TPOT (tokens/s): what the
  // arrivals ask within the window from a deployment that their load does not slow.
  double offered_fast = 0;
};

// What the load window says of the deployment: "burst" (no window to judge), "unsteady_arrivals"
// (not falling behind, with arrivals far from steady: LoadWindow::steady_arrivals), "falls_behind",
// "short_of_rejected" (below the offered load with rejected requests and no growing wait: their
// tokens are among what is missing), "not_settled" (the requests in the system still pile up at
// the end of the arrivals, faster than kUnsettled of the second half's arrivals: the run ends
// before a steady state) or "keeps_up".
//
// Falling behind: produced below kKeepsUp of the offered load, or a first-token wait growing by
// more than kGrowing of the time elapsed (0.6 s a minute). The second catches a colocated
// deployment whose batch, growing, slows its own TPOT, which the offered side's median TPOT then
// follows (until 2026-12-07 only the first: a Llama-3-70B deployment with first tokens going from
// 0.5 s to 14.6 s over 8,000 requests read 96% and said nothing; QA). Measured 2026-12-07 on
// stable runs the growth stays under 0.4% of the time elapsed, and on overloaded ones 1.4% to 160%.
constexpr double kGrowing = 0.01;
constexpr double kUnsettled = 0.10;

// The share of the offered load below which a run reads as falling behind: the planning sweeps'
// gate (`served_fraction: {min: 0.95}`); 0.8 until 2026-12-07, when a deployment 22% over its
// capacity (served 0.80-0.85, first tokens doubling with the run's length) said nothing (review).
constexpr double kKeepsUp = 0.95;
LoadWindow load_window(const engine::ServingResult& r) {
  LoadWindow w;
  const Time first = r.first_arrival;
  Time last = first;
  for (const engine::RequestOutcome& o : r.requests) last = max(last, o.arrival);
  // Arrivals in a burst have no steady state to measure: a window under ten times the quickest
  // first token (about a prefill on an idle deployment) is one. Not a share of the run: an
  // overloaded deployment's run is many times its arrival window, which is when falling behind
  // matters (before 2026-12-04, under a tenth of the run was a burst: 30 s of arrivals drained
  // over 469 s reported nothing).
  Time quickest = Time::max();
  std::vector<double> tpots, outputs, lives;
  for (const engine::RequestOutcome& o : r.requests) {
    if (!o.completed) continue;
    quickest = min(quickest, o.first_token - o.arrival);
    outputs.push_back(static_cast<double>(o.output));
    lives.push_back((o.finish - o.arrival).as_s());
    if (o.output > 1) tpots.push_back((o.finish - o.first_token).as_s() / static_cast<double>(o.output - 1));
  }
  const auto median = [](std::vector<double>& v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  // Nor is a window shorter than a request's life on an idle deployment: the quickest first token
  // and the median output at the quickest TPOT (a loaded batch's slower decode, or a queue's wait,
  // would make an overloaded run read as a burst): 21 requests a millisecond apart, each decoding
  // for 40 ms, read as falling behind until 2026-12-06.
  const double fastest_tpot = tpots.empty() ? 0.0 : *std::min_element(tpots.begin(), tpots.end());
  const double idle_life = quickest == Time::max() ? 0.0 : quickest.as_s() + std::max(0.0, median(outputs) - 1) * fastest_tpot;
  if (quickest == Time::max() || last <= first || last - first < 10.0 * quickest ||
      (last - first).as_s() < idle_life) {
    return w;
  }
  w.window_s = (last - first).as_s();
  const double tpot = median(tpots);
  const double from = first.as_s(), to = last.as_s();
  // Tokens of a request within the window: its first at `first_token`, the other output - 1
  // spread evenly over [first_token, finish].
  const auto within = [&](double first_token, double finish, int64_t output) {
    double n = first_token >= from && first_token <= to ? 1.0 : 0.0;
    if (output <= 1) return n;
    const double span = finish - first_token;
    if (span > 0) return n + (output - 1) * std::max(0.0, std::min(finish, to) - std::max(first_token, from)) / span;
    return n + (finish >= from && finish <= to ? output - 1.0 : 0.0);
  };
  // The tokens a request would produce within the window from its quickest first token at `per_token`.
  const auto ideal = [&](const engine::RequestOutcome& o, double per_token) {
    const double ideal_first = (o.arrival + quickest).as_s();
    return within(ideal_first, ideal_first + per_token * static_cast<double>(std::max<int64_t>(0, o.output - 1)), o.output);
  };
  double life90 = 0;
  if (!lives.empty()) {
    const auto at90 = lives.begin() + static_cast<std::ptrdiff_t>(0.9 * static_cast<double>(lives.size() - 1));
    std::nth_element(lives.begin(), at90, lives.end());
    life90 = *at90;
  }
  const double quarter = 0.25 * w.window_s;
  const double middle = from + 2.0 * quarter;
  w.settled_from = std::max(2.0 * quarter, life90);
  w.short_run = w.settled_from > 0.9 * w.window_s;
  w.in_system_from = std::min(w.settled_from, w.window_s);
  const double settled = from + w.in_system_from;
  double asked = 0, asked_fast = 0, made = 0, requested = 0;
  double early_sum = 0, second_sum = 0, late_sum = 0, second_at = 0, late_at = 0;
  int early = 0, second = 0, late = 0;
  for (const engine::RequestOutcome& o : r.requests) {
    const double at = o.arrival.as_s();
    ++w.quarter_arrivals[static_cast<size_t>(std::clamp(static_cast<int>((at - from) / quarter), 0, 3))];
    asked += ideal(o, tpot);
    asked_fast += ideal(o, fastest_tpot);
    requested += static_cast<double>(o.output);
    if (at > settled) ++w.arrivals_second_half;
    if (!o.rejected) {
      // Unfinished (never completed) requests stay in the system.
      if (at <= settled && (!o.completed || o.finish.as_s() > settled)) ++w.in_system_middle;
      if (!o.completed || o.finish.as_s() > to) ++w.in_system_end;
    }
    if (o.rejected || !o.completed) continue;
    made += within(o.first_token.as_s(), o.finish.as_s(), o.output);
    const double ttft = (o.first_token - o.arrival).as_s();
    if (at <= from + quarter) {
      early_sum += ttft;
      ++early;
    } else if (at <= middle) {
      second_sum += ttft;
      second_at += at;
      ++second;
    } else if (at >= to - quarter) {
      late_sum += ttft;
      late_at += at;
      ++late;
    }
  }
  w.offered = asked / w.window_s;
  w.offered_fast = asked_fast / w.window_s;
  w.steady = made / w.window_s;
  w.requested = requested / w.window_s;
  w.ttft_first_quarter = early > 0 ? early_sum / early : 0.0;
  w.ttft_last_quarter = late > 0 ? late_sum / late : 0.0;
  w.first_quarter_count = early;
  w.second_quarter_count = second;
  w.last_quarter_count = late;
  // Unsteady: the quietest quarter under half the busiest, and apart by more than five standard
  // deviations of the difference of two Poisson counts, 5 sqrt(most + fewest) (a Poisson run trips
  // it under 2e-6 of the time at up to 50 requests a quarter; 4 sqrt(most) tripped 0.5%: review):
  // 5,000 requests in 10 s and 50 an hour later read "keeps_up" while 98% of them missed their TTFT
  // limit (QA, 2026-12-07).
  const auto [fewest, most] = std::minmax_element(w.quarter_arrivals.begin(), w.quarter_arrivals.end());
  w.steady_arrivals = !(2 * *fewest < *most && static_cast<double>(*most - *fewest) >
                                                   5.0 * std::sqrt(static_cast<double>(*most + *fewest)));
  if (second > 0 && late > 0) {
    w.ttft_second_quarter = second_sum / second;
    const double apart = late_at / late - second_at / second;
    if (apart > 0) w.ttft_growth = (w.ttft_last_quarter - w.ttft_second_quarter) / apart;
  }
  return w;
}

// The verdict (see kGrowing) and the share of the load served: the produced over the offered,
// and where the wait grows, no more than the produced over what the arrivals ask within the window
// at the quickest first token and the fastest TPOT (offered_fast, counted as the offered side):
// a saturated deployment produces at its capacity all the window, and the offered side, paced by
// its own slowed TPOT, follows it down. (Not the arrivals' whole outputs: long outputs run past
// the window even on an idle deployment.)
std::string load_verdict(const LoadWindow& w, int64_t rejected) {
  if (w.window_s <= 0) return "burst";
  const bool growing = w.ttft_growth > kGrowing;
  if (growing || w.steady < kKeepsUp * w.offered) return rejected > 0 && !growing ? "short_of_rejected" : "falls_behind";
  // A pile-up beyond the counts' own noise (three standard deviations of a Poisson count), or a
  // run too short to tell (review, 2026-12-07: 400 requests at a quarter of the capacity read
  // not_settled, their middle count taken while the deployment filled).
  const double grew = static_cast<double>(w.in_system_end - w.in_system_middle);
  const bool unsettled = w.short_run || (grew > kUnsettled * static_cast<double>(w.arrivals_second_half) &&
                                         grew > 3.0 * std::sqrt(static_cast<double>(w.in_system_end)));
  // Arrivals far from steady (a trace's bursts and quiet spells): neither verdict holds, as the
  // quarters compared are not one load's (since 2026-12-07).
  if (!w.steady_arrivals) return "unsteady_arrivals";
  return unsettled ? "not_settled" : "keeps_up";
}
double served_fraction(const LoadWindow& w) {
  double served = w.offered > 0 ? w.steady / w.offered : 1.0;
  if (w.ttft_growth > kGrowing && w.offered_fast > 0) served = std::min(served, w.steady / w.offered_fast);
  return served;
}

}  // namespace

std::string requests_csv(const engine::ServingResult& r) {
  std::string out =
      "request,prompt_tokens,output_tokens,status,arrival_s,ttft_s,tpot_s,e2e_s,kv_wait_for_room_s,kv_transfer_s,"
      "queued_s\n";
  char line[320];
  const size_t rows = std::min(r.requests.size(), kMaxRequestRows);
  for (size_t i = 0; i < rows; ++i) {
    const engine::RequestOutcome& o = r.requests[i];
    const char* status = o.rejected ? "rejected" : o.completed ? "completed" : "unfinished";
    // Nine significant digits, and arrivals to the microsecond: a trace's arrivals 500,000 s in
    // printed to the millisecond, and two a few microseconds apart read as one, until 2026-12-07.
    const auto seconds = [](bool has, Time t) {
      char buf[32] = "";
      if (has) std::snprintf(buf, sizeof buf, "%.9g", t.as_s());
      return std::string(buf);
    };
    const auto arrival = [](Time t) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6f", t.as_s());
      return std::string(buf);
    };
    const bool done = o.completed;
    const Time tpot = done && o.output > 1 ? Time::s((o.finish - o.first_token).as_s() / (o.output - 1)) : Time::zero();
    std::snprintf(line, sizeof line, "%zu,%d,%d,%s,%s,%s,%s,%s,%s,%s,%s\n", i, o.prompt, o.output, status,
                  arrival(o.arrival).c_str(), seconds(done, o.first_token - o.arrival).c_str(),
                  seconds(done && o.output > 1, tpot).c_str(), seconds(done, o.finish - o.arrival).c_str(),
                  seconds(o.kv_moved, o.kv_wait_for_room).c_str(), seconds(o.kv_moved, o.kv_transfer).c_str(),
                  seconds(o.admitted, o.prefill_start - o.arrival).c_str());
    out += line;
  }
  return out;
}

RunOutput inference_output(const ScenarioConfig& cfg, const engine::ServingResult& r) {
  const InferenceConfig& in = *cfg.inference;
  std::vector<double> ttft, tpot, e2e, kv_wait, kv_transfer, queued;
  int64_t completed = 0, rejected = 0, tokens = 0, within = 0, met = 0;
  for (const engine::RequestOutcome& o : r.requests) {
    if (o.rejected) {
      ++rejected;
      continue;
    }
    if (o.kv_moved) {
      kv_wait.push_back(o.kv_wait_for_room.as_s());
      kv_transfer.push_back(o.kv_transfer.as_s());
    }
    if (!o.completed) continue;
    ++completed;
    tokens += o.output;
    ttft.push_back((o.first_token - o.arrival).as_s());
    if (o.admitted) queued.push_back((o.prefill_start - o.arrival).as_s());
    e2e.push_back((o.finish - o.arrival).as_s());
    bool meets = in.ttft_limit == Time::zero() || o.first_token - o.arrival <= in.ttft_limit;
    if (o.output > 1) {
      const Time t = Time::s((o.finish - o.first_token).as_s() / (o.output - 1));
      tpot.push_back(t.as_s());
      const bool in_tpot = in.tpot_limit == Time::zero() || t <= in.tpot_limit;
      within += in_tpot ? 1 : 0;
      meets = meets && in_tpot;
    }
    met += meets ? 1 : 0;
  }
  if (!r.requests.empty() && rejected == static_cast<int64_t>(r.requests.size())) {
    // Nothing ran: a throughput of 0 over a duration of nothing would read as a result. (Poisson
    // arrivals are checked before the run; a trace's requests one by one, here.)
    throw BadInput(InputError{cfg.file, 0, in.trace.empty() ? "inference.pools" : "inference.trace",
                              "every one of the " + std::to_string(rejected) +
                                  " requests needs more KV cache than one attention replica holds; give the pools "
                                  "more memory per replica (tp, kv_cache_per_gpu) or use shorter requests"});
  }
  const Percentiles ttft_p = percentiles(ttft), tpot_p = percentiles(tpot), e2e_p = percentiles(e2e),
                    queued_p = percentiles(queued);
  const double duration = (r.last_finish - r.first_arrival).as_s();
  int gpus = 0;
  double price = 0;
  bool priced = true;
  for (const engine::PoolStats& p : r.pools) {
    gpus += p.gpus;
    price += p.gpus * p.price_per_gpu_hour;
    priced = priced && p.price_per_gpu_hour > 0;
  }
  const double tps = duration > 0 ? static_cast<double>(tokens) / duration : 0.0;
  const double per_gpu = gpus > 0 ? tps / gpus : 0.0;
  const LoadWindow load = load_window(r);
  const std::string verdict = load_verdict(load, rejected);

  RunOutput out;
  Json& j = out.results;
  j = Json::object();
  j.set("kind", "inference");
  j.set("scenario", scenario_name(cfg));
  j.set("mode", to_string(in.mode));
  j.set("fidelity", to_string(cfg.network.fidelity));
  j.set("gpus", gpus);
  j.set("weight_precision", in.weight_precision == WeightPrecision::kFp8 ? "fp8" : "bf16");
  j.set("kv_precision", in.kv_precision == KvPrecision::kFp8 ? "fp8" : "bf16");
  j.set("chunked_prefill", in.chunked_prefill);
  // How MoE layers move their tokens: the pools' expert groups' collective, attention_ffn's M2N;
  // null for a dense model.
  const bool moe = in.moe.experts > 0;
  const char* dispatch = in.mode == ServingMode::kAttentionFfn                 ? "m2n"
                         : in.moe.dispatch == MoeDispatch::kAllGather ? "all_gather"
                                                                       : "all_to_all";
  j.set("moe_dispatch", moe ? Json(dispatch) : Json());
  j.set("micro_batches", r.micro_batches);
  j.set("m2n_fabric_factor", r.m2n_factor);
  j.set("m2n_probe_measured_s", r.m2n_probe.measured.as_s());
  j.set("m2n_probe_bound_s", r.m2n_probe.bound.as_s());
  Json& req = j.set("requests", Json::object());
  req.set("arrived", static_cast<int64_t>(r.requests.size()));
  req.set("completed", completed);
  req.set("rejected", rejected);
  j.set("duration_s", duration);
  j.set("output_tokens", tokens);
  j.set("tokens_per_s", tps);
  j.set("tokens_per_s_per_gpu", per_gpu);
  // While requests arrive: what the load asks for and what the deployment produced (null when
  // every request arrives at once).
  j.set("arrival_window_s", load.window_s);
  j.set("offered_tokens_per_s", load.window_s > 0 ? Json(load.offered) : Json());
  j.set("steady_tokens_per_s", load.window_s > 0 ? Json(load.steady) : Json());
  j.set("requested_tokens_per_s", load.window_s > 0 ? Json(load.requested) : Json());
  // null where no completed request arrived in the quarter (0 until 2026-12-07, as if none waited).
  j.set("ttft_first_quarter_s", load.window_s > 0 && load.first_quarter_count > 0 ? Json(load.ttft_first_quarter) : Json());
  j.set("ttft_last_quarter_s", load.window_s > 0 && load.last_quarter_count > 0 ? Json(load.ttft_last_quarter) : Json());
  j.set("ttft_second_quarter_s", load.window_s > 0 && load.second_quarter_count > 0 ? Json(load.ttft_second_quarter) : Json());
  if (load.window_s > 0) {
    Json& q = j.set("arrivals_by_quarter", Json::array());
    for (const int64_t n : load.quarter_arrivals) q.push(n);
  }
  j.set("ttft_growth", load.window_s > 0 ? Json(load.ttft_growth) : Json());
  j.set("in_system_from_s", load.window_s > 0 ? Json(load.in_system_from) : Json());
  j.set("in_system_middle", load.window_s > 0 ? Json(load.in_system_middle) : Json());
  j.set("in_system_end", load.window_s > 0 ? Json(load.in_system_end) : Json());
  j.set("load_verdict", verdict);
  if (priced && price > 0) j.set("tokens_per_cost_unit", tps * 3600.0 / price);
  j.set("ttft_s", stats_json(ttft_p));
  j.set("ttft_queued_s", queued.empty() ? Json() : stats_json(queued_p));
  // TPOT needs a second token: with none, it is undefined (null), not zero.
  j.set("tpot_s", tpot.empty() ? Json() : stats_json(tpot_p));
  j.set("e2e_latency_s", stats_json(e2e_p));
  j.set("tpot_limit_s", in.tpot_limit.as_s());
  // Without a limit there is no share to give (it read 1 until 2026-12-06).
  j.set("tpot_within_limit_fraction", tpot.empty() || in.tpot_limit == Time::zero()
                                          ? Json()
                                          : Json(static_cast<double>(within) / tpot.size()));
  // Goodput (requests meeting their SLOs per second of this run; DistServe calls goodput the
  // highest rate at which attainment holds a target): requests that met every limit given, a rejected or unfinished
  // request counting as missed, over all requests, and per second of the run.
  const bool slo = in.ttft_limit > Time::zero() || in.tpot_limit > Time::zero();
  const double attainment = r.requests.empty() ? 0.0 : static_cast<double>(met) / r.requests.size();
  const double goodput = duration > 0 ? met / duration : 0.0;  // requests/s; none over no time
  j.set("ttft_limit_s", in.ttft_limit.as_s());
  j.set("slo_attainment", slo ? Json(attainment) : Json());
  j.set("goodput_requests_per_s", slo && duration > 0 ? Json(goodput) : Json());
  Json& step = j.set("decode_step", Json::object());
  const double n = static_cast<double>(std::max<int64_t>(1, r.decode_steps));
  step.set("count", r.decode_steps);
  step.set("mixed_count", r.mixed_steps);
  step.set("drain_count", r.drain_decode_steps);
  // Means of no decode-only step are undefined (null), not a 0 s step at batch 0, as TPOT.
  const bool stepped = r.decode_steps > 0;
  const auto mean = [&](double sum) { return stepped ? Json(sum / n) : Json(); };
  step.set("mean_batch", mean(r.decode_step_seqs));
  step.set("time_s", mean(r.decode_step_sum.total.as_s()));
  step.set("attention_s", mean(r.decode_step_sum.attention.as_s()));
  step.set("ffn_s", mean(r.decode_step_sum.ffn.as_s()));
  step.set("communication_s", mean(r.decode_step_sum.communication.as_s()));
  step.set("idle_s", mean(r.decode_step_sum.idle.as_s()));
  step.set("attention_busy_s", mean(r.decode_step_sum.attention_busy.as_s()));
  step.set("ffn_busy_s", mean(r.decode_step_sum.ffn_busy.as_s()));
  Json& pools = j.set("pools", Json::array());
  for (const engine::PoolStats& p : r.pools) {
    Json row = Json::object();
    const double span = duration * std::max(1, p.instances);
    row.set("role", engine::to_string(p.role));
    row.set("gpu", p.gpu);
    row.set("gpus", p.gpus);
    row.set("instances", p.instances);
    row.set("price_per_gpu_hour", p.price_per_gpu_hour);
    row.set("utilisation", span > 0 ? p.compute_busy.as_s() / span : 0.0);
    row.set("busy", span > 0 ? p.stepping.as_s() / span : 0.0);
    row.set("steps", p.steps);
    row.set("max_batch_seen", p.max_batch_seen);
    row.set("max_batch", p.max_batch);
    row.set("weights_per_gpu_gib", p.weights_per_gpu.as_gib());
    row.set("kv_cache_per_gpu_gib", p.kv_budget_per_gpu.as_gib());
    row.set("kv_tokens_per_instance", p.kv_tokens_per_instance);
    pools.push(row);
  }
  Json& kv = j.set("kv_transfers", Json::object());
  kv.set("count", r.kv_transfers);
  kv.set("bytes", r.kv_transfer_bytes.n);
  const Percentiles kv_wait_p = percentiles(kv_wait), kv_transfer_p = percentiles(kv_transfer);
  kv.set("transfer_s", stats_json(kv_transfer_p));
  kv.set("wait_for_room_s", stats_json(kv_wait_p));

  std::ostringstream s;
  char line[768];
  s << "serving " << scenario_name(cfg) << ": mode " << to_string(in.mode) << ", " << gpus
    << " GPUs";
  if (in.mode == ServingMode::kAttentionFfn) s << ", m = " << r.micro_batches << " micro-batches";
  if (in.weight_precision == WeightPrecision::kFp8) s << ", fp8 weights";
  if (in.kv_precision == KvPrecision::kFp8) s << ", fp8 KV cache";
  if (in.chunked_prefill) s << ", chunked prefill";
  if (moe && in.moe.dispatch == MoeDispatch::kAllGather) s << ", MoE tokens all-gathered";
  s << "\n";
  std::snprintf(line, sizeof line, "  requests    %lld arrived, %lld completed, %lld rejected (KV cache too small)\n",
                static_cast<long long>(r.requests.size()), static_cast<long long>(completed),
                static_cast<long long>(rejected));
  s << line;
  std::snprintf(line, sizeof line, "  throughput  %s output tokens/s, %s per GPU over %.4g s\n", rate(tps).c_str(),
                rate(per_gpu).c_str(), duration);
  s << line;
  if (load.window_s > 0) {
    // "Offered" is what the requests would produce at this deployment's quickest first token and
    // median TPOT (it moves with the deployment); the arrivals' own demand is printed beside it.
    char trend[400] = "";
    if (verdict == "falls_behind" && load.ttft_second_quarter > 0 && load.ttft_last_quarter > 0) {
      char growth[120] = "";
      if (load.ttft_growth > kGrowing) {
        std::snprintf(growth, sizeof growth, ": growing %.2g s a minute of arrivals (%.0f%% of what they ask for produced)",
                      60.0 * load.ttft_growth, 100.0 * served_fraction(load));
      }
      const double top = std::max({load.ttft_first_quarter, load.ttft_second_quarter, load.ttft_last_quarter});
      std::snprintf(trend, sizeof trend,
                    "\n              first token: mean %s for the first quarter of arrivals, %s for the second, %s for the "
                    "last%s",
                    ms(load.ttft_first_quarter, top).c_str(), ms(load.ttft_second_quarter, top).c_str(),
                    ms(load.ttft_last_quarter, top).c_str(), growth);
    } else if (verdict == "unsteady_arrivals") {
      std::snprintf(trend, sizeof trend,
                    "\n              unsteady arrivals: %lld, %lld, %lld and %lld requests in the four quarters of "
                    "the window:\n              not one load to judge; read the latency percentiles and the goodput, "
                    "or replay a steady stretch",
                    static_cast<long long>(load.quarter_arrivals[0]), static_cast<long long>(load.quarter_arrivals[1]),
                    static_cast<long long>(load.quarter_arrivals[2]), static_cast<long long>(load.quarter_arrivals[3]));
    } else if (verdict == "not_settled" && load.short_run) {
      std::snprintf(trend, sizeof trend,
                    "\n              not settled: a request lives up to %.3g s (90th percentile) against %.3g s of "
                    "arrivals:\n              the run ends before a steady state; more requests (inference.requests) "
                    "tell whether it keeps up",
                    load.settled_from, load.window_s);
    } else if (verdict == "not_settled") {
      std::snprintf(trend, sizeof trend,
                    "\n              not settled: %lld requests in the deployment %.3g s into the arrivals, %lld at "
                    "their end (of %lld arriving between):\n              the run ends before a steady state; more "
                    "requests (inference.requests) tell whether it keeps up",
                    static_cast<long long>(load.in_system_middle), load.settled_from,
                    static_cast<long long>(load.in_system_end), static_cast<long long>(load.arrivals_second_half));
    }
    std::snprintf(line, sizeof line,
                  "  steady      %s output tokens/s produced while requests arrived (%.2f s; they ask for %s),\n"
                  "              %.0f%% of the %s they would produce at this deployment's quickest first token and "
                  "median TPOT%s%s\n",
                  rate(load.steady).c_str(), load.window_s, rate(load.requested).c_str(),
                  load.offered > 0 ? 100.0 * load.steady / load.offered : 100.0, rate(load.offered).c_str(),
                  // Rejected requests are offered and never served: with any, the gap need not be
                  // a queue (until 2026-12-06 it always said one grew).
                  verdict == "falls_behind"        ? ": falling behind, queues grow"
                  : verdict == "short_of_rejected" ? ": below it, the rejected requests' tokens among what is missing"
                                                   : "",
                  trend);
    s << line;
  }
  if (priced && price > 0) {
    std::snprintf(line, sizeof line, "  cost        %.0f output tokens per currency unit (all %d GPUs cost %.2f per hour)\n",
                  tps * 3600.0 / price, gpus, price);
    s << line;
  }
  s << "  TTFT        " << latency_stats(ttft_p) << "\n";
  // The part of it spent waiting to be admitted (a batch slot, KV room, the prefill budget),
  // before any prompt token is computed (since 2026-12-07; review: a PD run's 2 s mean TTFT had
  // no split).
  if (!queued.empty()) {
    s << "    queued    " << latency_stats(queued_p)
      << " (arrival to the step that takes its first prompt tokens; the rest of TTFT is prefill"
      << (in.mode == ServingMode::kPrefillDecode ? " and the KV cache's move)" : ")") << "\n";
  }
  if (tpot.empty()) {
    s << "  TPOT        none (no completed request has a second output token)";
  } else {
    s << "  TPOT        " << latency_stats(tpot_p);
  }
  if (in.tpot_limit > Time::zero() && !tpot.empty()) {
    std::snprintf(line, sizeof line, " (%.0f%% within %s)", 100.0 * within / std::max<size_t>(1, tpot.size()),
                  to_string(in.tpot_limit).c_str());
    s << line;
  }
  s << "\n";
  if (slo) {
    std::string limits;
    if (in.ttft_limit > Time::zero()) limits = "TTFT <= " + to_string(in.ttft_limit);
    if (in.tpot_limit > Time::zero()) limits += (limits.empty() ? "TPOT <= " : " and TPOT <= ") + to_string(in.tpot_limit);
    // Over no time (results.json's null) there is no rate to print.
    char rate[96] = "n/a (no time elapsed)";
    // Per second of the whole run: a short run's drain lowers it below the offered rate even where
    // every request meets the limits (QA, 2026-12-07: the figure alone read as a shortfall).
    if (duration > 0) std::snprintf(rate, sizeof rate, "%.3g requests/s (over the run's %.4g s, drain included)", goodput, duration);
    std::snprintf(line, sizeof line, "  goodput     %s within %s: %.1f%% of the %lld requests (rejected ones miss)\n",
                  rate, limits.c_str(), 100.0 * attainment, static_cast<long long>(r.requests.size()));
    s << line;
  }
  if (r.decode_steps > 0) {
    std::snprintf(line, sizeof line,
                  "  decode step mean %s at batch %.0f: attention %s, FFN %s, communication %s, idle %s\n",
                  ms(r.decode_step_sum.total.as_s() / n).c_str(), r.decode_step_seqs / n,
                  ms(r.decode_step_sum.attention.as_s() / n).c_str(), ms(r.decode_step_sum.ffn.as_s() / n).c_str(),
                  ms(r.decode_step_sum.communication.as_s() / n).c_str(), ms(r.decode_step_sum.idle.as_s() / n).c_str());
    s << line;
    if (in.mode == ServingMode::kAttentionFfn) {
      // The parts above split the step's time among overlapping pools by precedence (attention
      // first), so under ping-pong they can hide the busier pool (infer-afd: "FFN 4.9 ms" of
      // 25.3 while the expert pool computed 98% of the step; 2026-12-06 review).
      const double total = r.decode_step_sum.total.as_s();
      std::snprintf(line, sizeof line,
                    "              each pool busy: attention %s (%.0f%% of the step), experts %s (%.0f%%)\n",
                    ms(r.decode_step_sum.attention_busy.as_s() / n).c_str(),
                    total > 0 ? 100 * r.decode_step_sum.attention_busy.as_s() / total : 0.0,
                    ms(r.decode_step_sum.ffn_busy.as_s() / n).c_str(),
                    total > 0 ? 100 * r.decode_step_sum.ffn_busy.as_s() / total : 0.0);
      s << line;
    }
  } else {
    s << "  no decode-only step (every request's tokens came in steps that also prefilled, or one token each)\n";
  }
  if (r.decode_steps > 0 && 2 * r.drain_decode_steps > r.decode_steps) {
    // Under a steady load most steps also prefill: the decode-only ones are then the drain, whose
    // batches shrink as requests finish (counted since 2026-12-06: before, the note needed more
    // mixed steps than decode-only ones, and infer-afd's 441 decode-only steps, every one of
    // them after the last arrival, beside 151 mixed, showed none).
    std::snprintf(line, sizeof line,
                  "              (%lld of the %lld decode-only steps ran after the last arrival, in the drain; %lld "
                  "more also ran prefill and are not in it: the mean describes the drain, not the steady state)\n",
                  static_cast<long long>(r.drain_decode_steps), static_cast<long long>(r.decode_steps),
                  static_cast<long long>(r.mixed_steps));
    s << line;
  }
  if (r.kv_transfers > 0) {
    // Both are part of each moved request's TTFT (its first token reaches the client from decode).
    std::snprintf(line, sizeof line, "  KV transfer %lld caches, %.2f GiB: mean %s, p99 %s; waited for decode room mean %s, p99 %s\n",
                  static_cast<long long>(r.kv_transfers), r.kv_transfer_bytes.as_gib(), ms(kv_transfer_p.mean).c_str(),
                  ms(kv_transfer_p.p99).c_str(), ms(kv_wait_p.mean).c_str(), ms(kv_wait_p.p99).c_str());
    s << line;
  }
  for (const engine::PoolStats& p : r.pools) {
    const double span = duration * std::max(1, p.instances);
    std::snprintf(line, sizeof line,
                  // Time shares, not FLOP utilisation: a memory-bound decode step is computing all along
                  // (the text said "utilisation" until 2026-12-06; results.json keeps the key).
                  "  pool %-9s %3d x %-14s computing %3.0f%% of the time, in steps %3.0f%%, weights %.1f GiB/GPU, "
                  "max batch %s\n",
                  engine::to_string(p.role), p.gpus, p.gpu.c_str(), span > 0 ? 100 * p.compute_busy.as_s() / span : 0.0,
                  span > 0 ? 100 * p.stepping.as_s() / span : 0.0, p.weights_per_gpu.as_gib(),
                  // An FFN pool of attention/FFN disaggregation holds no sequences of its own: its
                  // figure is the attention pool's batch it served (unlabelled until 2026-12-06).
                  (p.max_batch_seen > 0
                       ? std::to_string(p.max_batch_seen) +
                             (p.role == engine::PoolRole::kExpert ? " (served; holds none)"
                              // At the cap, say so: a deployment that falls behind there wants a
                              // larger batch, which the figure alone did not tell (QA, 2026-12-07).
                              : p.max_batch_seen >= p.max_batch ? " (its max_batch: the cap)"
                                                                : "")
                       : std::string("- (holds no sequences)"))
                      .c_str());
    s << line;
  }
  if (in.moe.experts > 0) {
    // scenarios/validation/serving-moe.yaml (known gap): every MoE row ran above the engine's rate.
    s << "  caveat      MoE layers are priced at their roofline costs; against TensorRT-LLM's published MoE\n"
         "              serving rates these predictions run well high (scenarios/validation/serving-moe.yaml):\n"
         "              read the throughput as an upper bound\n";
  }
  out.summary = s.str();
  ServingFigures figures;
  figures.duration_s = duration;
  figures.tokens_per_s = tps;
  figures.tokens_per_s_per_gpu = per_gpu;
  figures.tokens_per_cost_unit = priced && price > 0 ? tps * 3600.0 / price : 0.0;
  figures.gpus = gpus;
  figures.ttft_s = ttft;
  figures.tpot_s = tpot;
  out.report_html = write_inference_html(cfg, r, figures);
  out.trace_json = write_inference_trace_json(cfg, r);
  out.extra_files.emplace_back("requests.csv", requests_csv(r));
  // The file keeps the first kMaxRequestRows; past them it is not every request the figures count
  // (said nowhere until 2026-12-07; QA).
  if (r.requests.size() > kMaxRequestRows) {
    out.notes.push_back("requests.csv (with --out) holds the first " + std::to_string(kMaxRequestRows) + " of the " +
                        std::to_string(r.requests.size()) +
                        " requests, in arrival order; results.json's figures count them all");
  }
  out.metrics = {{"tokens_per_s", tps},
                 {"tokens_per_s_per_gpu", per_gpu},
                 {"ttft_p50_s", ttft_p.p50},
                 {"ttft_p99_s", ttft_p.p99},
                 {"rejected", static_cast<double>(rejected)}};
  if (!tpot.empty()) {
    out.metrics["tpot_p50_s"] = tpot_p.p50;
    out.metrics["tpot_p99_s"] = tpot_p.p99;
  }
  // What share of the offered load the deployment kept up with while requests arrived: a sweep
  // constraint {min: 0.95} leaves out deployments that fall behind (2026-12-06).
  if (load.window_s > 0 && load.offered > 0) out.metrics["served_fraction"] = served_fraction(load);
  // How fast the first-token wait grows (s per s): a sweep's {max: 0.01} leaves out deployments
  // whose queue grows, whatever share of the offered load they produce (since 2026-12-07).
  // (0 where the wait shrinks: a sweep's metrics are never negative.)
  if (load.window_s > 0) out.metrics["ttft_growth"] = std::max(0.0, load.ttft_growth);
  // Present (1) only where the arrivals are far from steady: a sweep says its served_fraction and
  // ttft_growth then compare quarters that are not one load's (since 2026-12-07; review).
  if (verdict == "unsteady_arrivals") out.metrics["unsteady_arrivals"] = 1;
  if (slo) {
    out.metrics["slo_attainment"] = attainment;
    if (duration > 0) out.metrics["goodput_requests_per_s"] = goodput;
  }
  return out;
}

RunOutput run_inference(const ScenarioConfig& cfg) { return inference_output(cfg, engine::run_serving(cfg)); }

}  // namespace clustersim::report
