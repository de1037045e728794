// SPDX-License-Identifier: Apache-2.0
// Serving runs (scenarios with an `inference:` section): results.json, summary and headline metrics.
#pragma once

#include <vector>

#include "sim/core/config.h"
#include "sim/engine/inference_sim.h"
#include "sim/report/json_writer.h"
#include "sim/report/run_scenario.h"

namespace clustersim::report {

// Mean, median and 99th percentile (nearest rank) of `values`; all zero when empty.
struct Percentiles {
  double mean = 0;
  double p50 = 0;
  double p99 = 0;
  int64_t count = 0;
};
Percentiles percentiles(std::vector<double> values);

// Builds results (kind "inference"), the summary, the metrics map, trace.json, report.html and
// requests.csv from a finished run.
RunOutput inference_output(const ScenarioConfig& cfg, const engine::ServingResult& r);

// requests.csv: one row per request, in arrival order, at most kMaxRequestRows (the first):
// request, prompt_tokens, output_tokens, status (completed, rejected, unfinished), arrival_s
// (from the start of serving), ttft_s, tpot_s (one output token: empty), e2e_s, and for a KV
// cache moved to a decode instance kv_wait_for_room_s and kv_transfer_s (else empty).
inline constexpr size_t kMaxRequestRows = 1'000'000;
std::string requests_csv(const engine::ServingResult& r);

// trace.json of a serving run in the Chrome trace event format (ui.perfetto.dev, chrome://tracing),
// from r.trace (bounded by engine::ServingTraceLimits). One process per instance (attention_ffn:
// per pool), threads "steps" (prefill / decode / mixed steps), "attention", "ffn", "communication"
// (the inside of the detailed decode steps: ping-pong spans per layer and micro-batch, M2N on the
// attention pool and N2M on the expert pool; other modes: the step's summed parts), "kv send" and
// "kv recv" (KV transfers, joined by a flow arrow). Times in microseconds from the first arrival.
std::string write_inference_trace_json(const ScenarioConfig& cfg, const engine::ServingResult& r);

// Runs the serving simulation of a validated scenario (engine::run_serving) and reports it.
RunOutput run_inference(const ScenarioConfig& cfg);

}  // namespace clustersim::report
