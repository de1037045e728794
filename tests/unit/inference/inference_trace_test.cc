// SPDX-License-Identifier: Apache-2.0
// trace.json and report.html of serving runs (valid JSON, the expected tracks, spans and flow
// arrows, the documented bounds, the page's sections) and pools of different GPU types end to end.
#include "sim/report/inference_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/core/scenario.h"
#include "sim/engine/inference_sweep.h"
#include "tests/unit/inference/inference_test_util.h"

namespace clustersim::report {
namespace {

using clustersim::testing::JsonChecker;
using clustersim::testing::serving;
using clustersim::testing::simulate;

const std::vector<std::string> kPd = {
    "inference.mode=prefill_decode",
    "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"};
const std::vector<std::string> kAfd = {"inference.mode=attention_ffn", "inference.micro_batches=2",
                                       "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The parsed events of a trace, after checking that it is strict JSON.
struct Events {
  std::set<std::string> tracks;               // "pid/thread name"
  std::map<std::string, int> phases;          // ph -> count
  std::map<std::string, int> by_track;        // "pid/tid" -> complete events
  std::vector<const YamlNode*> complete;      // ph X
  YamlNode doc;
};

Events parse(const std::string& json) {
  Events e;
  size_t where = 0;
  EXPECT_TRUE(JsonChecker::valid(json, &where)) << "not JSON at offset " << where << ": "
                                                << json.substr(where > 60 ? where - 60 : 0, 120);
  e.doc = parse_yaml_text(json, "trace.json");
  const YamlNode* events = e.doc.find("traceEvents");
  EXPECT_TRUE(events && events->is_seq());
  if (!events) return e;
  for (const YamlNode& ev : events->seq) {
    const std::string ph = ev.find("ph")->scalar;
    ++e.phases[ph];
    if (ph == "M" && ev.find("name")->scalar == "thread_name") {
      e.tracks.insert(ev.find("pid")->scalar + "/" + ev.find("args")->find("name")->scalar);
    }
    if (ph == "X") {
      e.complete.push_back(&ev);
      ++e.by_track[ev.find("pid")->scalar + "/" + ev.find("tid")->scalar];
    }
  }
  return e;
}

TEST(JsonChecker, AcceptsJsonRejectsNearMisses) {
  EXPECT_TRUE(JsonChecker::valid(R"({"a":[1,-2.5e3,true,null,"x\"y"],"b":{}})"));
  EXPECT_FALSE(JsonChecker::valid(R"({"a":1,})"));
  EXPECT_FALSE(JsonChecker::valid(R"({a:1})"));
  EXPECT_FALSE(JsonChecker::valid(R"([1 2])"));
  EXPECT_FALSE(JsonChecker::valid(R"({"a":.5})"));
  EXPECT_FALSE(JsonChecker::valid("{\"a\":1} x"));
}

TEST(InferenceTrace, PrefillDecodeHasStepTracksAndKvFlowArrows) {
  const ScenarioConfig cfg = serving(kPd);
  const engine::ServingResult r = simulate(cfg);
  const RunOutput out = inference_output(cfg, r);
  ASSERT_FALSE(out.trace_json.empty());
  const Events e = parse(out.trace_json);
  // Instance 0 is the prefill instance, 1 the decode instance.
  for (const char* t : {"0/steps", "0/kv send", "1/steps", "1/kv recv", "1/attention", "1/ffn", "1/communication"}) {
    EXPECT_TRUE(e.tracks.count(t)) << t;
  }
  EXPECT_TRUE(has(out.trace_json, "\"prefill instance 0 (GPUs 0-7, H100-SXM)\"")) << out.trace_json.substr(0, 400);
  EXPECT_TRUE(has(out.trace_json, "\"decode instance 0 (GPUs 8-15, H100-SXM)\""));
  // Every traced KV transfer: a span on each side and one arrow (s -> f).
  const int kv = static_cast<int>(r.trace.kv.size());
  EXPECT_GT(kv, 0);
  EXPECT_EQ(e.phases.at("s"), kv);
  EXPECT_EQ(e.phases.at("f"), kv);
  // Transfers in flight together go to lanes of their own (tids 4 + 6k and 5 + 6k), so that spans on
  // one thread nest or are disjoint, as Perfetto needs (they overlapped on one lane until
  // 2026-12-06).
  int sends = 0, receives = 0;
  for (const auto& [track, n] : e.by_track) {
    const int tid = std::stoi(track.substr(track.find('/') + 1));
    sends += track.rfind("0/", 0) == 0 && tid % 6 == 4 ? n : 0;
    receives += track.rfind("1/", 0) == 0 && tid % 6 == 5 ? n : 0;
  }
  EXPECT_EQ(sends, kv);
  EXPECT_EQ(receives, kv);
  std::map<std::string, std::vector<std::pair<double, double>>> threads;
  for (const YamlNode* x : e.complete) {
    const double ts = std::stod(x->find("ts")->scalar), dur = std::stod(x->find("dur")->scalar);
    threads[x->find("pid")->scalar + "/" + x->find("tid")->scalar].push_back({ts, ts + dur});
  }
  for (auto& [key, spans] : threads) {
    std::sort(spans.begin(), spans.end());
    std::vector<double> open;
    for (const auto& [start, end] : spans) {
      while (!open.empty() && open.back() <= start + 1e-5) open.pop_back();
      EXPECT_TRUE(open.empty() || end <= open.back() + 1e-5) << key << ": [" << start << ", " << end << "] crosses an end";
      open.push_back(end);
    }
  }
  for (const engine::TracedKvTransfer& t : r.trace.kv) EXPECT_GT(t.arrived, t.sent);
  // Decode steps are drawn as their summed parts (attention, FFN, communication) for at most 3 steps.
  EXPECT_EQ(e.by_track.at("1/1"), 3);
  EXPECT_EQ(e.by_track.at("1/2"), 3);
  EXPECT_TRUE(has(out.trace_json, "\"attention (all layers)\""));
}

// requests.csv: a row per request, whose TTFTs give results.json's percentiles back (a serving
// run had no per-request output until 2026-12-06).
TEST(InferenceTrace, RequestsCsvHasARowPerRequestThatGivesThePercentilesBack) {
  const ScenarioConfig cfg = serving(kPd);
  const engine::ServingResult r = simulate(cfg);
  const RunOutput out = inference_output(cfg, r);
  const auto it = std::find_if(out.extra_files.begin(), out.extra_files.end(),
                               [](const auto& f) { return f.first == "requests.csv"; });
  ASSERT_NE(it, out.extra_files.end());
  std::istringstream csv(it->second);
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line,
            "request,prompt_tokens,output_tokens,status,arrival_s,ttft_s,tpot_s,e2e_s,kv_wait_for_room_s,kv_transfer_s,"
            "queued_s");
  std::vector<double> ttft, queued;
  size_t rows = 0;
  while (std::getline(csv, line)) {
    ++rows;
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string x; std::getline(fields, x, ',');) f.push_back(x);
    if (f.size() > 5 && !f[5].empty()) ttft.push_back(std::stod(f[5]));
    // The wait to be admitted to a prefill (since 2026-12-07) is part of the first token's time:
    // the rest is the prefill and the KV cache's move.
    if (f.size() > 10 && !f[10].empty() && !f[5].empty()) {
      queued.push_back(std::stod(f[10]));
      EXPECT_GE(queued.back(), 0.0);
      EXPECT_LT(queued.back(), std::stod(f[5])) << line;
    }
  }
  EXPECT_EQ(rows, r.requests.size());
  EXPECT_EQ(queued.size(), ttft.size());
  const std::string j = out.results.dump(0);
  EXPECT_NE(j.find("\"ttft_queued_s\":{\"mean\":"), std::string::npos);
  EXPECT_NE(out.summary.find("    queued    mean "), std::string::npos) << out.summary;
  ASSERT_FALSE(ttft.empty());
  const Percentiles p = percentiles(ttft);
  EXPECT_NEAR(p.p50, out.metrics.at("ttft_p50_s"), 1e-8);
  EXPECT_NEAR(p.p99, out.metrics.at("ttft_p99_s"), 1e-8);
}

TEST(InferenceTrace, AttentionFfnDrawsThePingPongOfTheLargestDecodeSteps) {
  const ScenarioConfig cfg = serving(kAfd);
  const engine::ServingResult r = simulate(cfg);
  const Events e = parse(inference_output(cfg, r).trace_json);
  for (const char* t : {"0/steps", "0/attention", "0/communication", "1/steps", "1/ffn", "1/communication"}) {
    EXPECT_TRUE(e.tracks.count(t)) << t;
  }
  EXPECT_TRUE(has(inference_output(cfg, r).trace_json, "\"attention pool (8 x H100-SXM)\""));
  // 3 detailed steps x (4 layers x 2 micro-batches) on each stage, plus 2 LM heads per step on attention.
  int detailed = 0;
  int64_t smallest_detailed = 1 << 30, largest_plain = 0;
  for (const engine::TracedStep& s : r.trace.steps) {
    if (!s.detail.empty()) {
      ++detailed;
      smallest_detailed = std::min(smallest_detailed, s.decode_seqs);
      EXPECT_EQ(s.prefill_seqs, 0);
    } else if (s.prefill_seqs == 0) {
      largest_plain = std::max(largest_plain, s.decode_seqs);
    }
  }
  EXPECT_EQ(detailed, 3);
  EXPECT_GE(smallest_detailed, largest_plain) << "the detailed steps are the largest decode batches";
  EXPECT_EQ(e.by_track.at("0/1"), 3 * (4 * 2 + 2));
  EXPECT_EQ(e.by_track.at("1/2"), 3 * 4 * 2);
  EXPECT_EQ(e.by_track.at("0/3"), 3 * 4 * 2);  // M2N
  EXPECT_EQ(e.by_track.at("1/3"), 3 * 4 * 2);  // N2M
  // Spans of a detailed step stay inside it, and its stages never overlap themselves.
  for (const engine::TracedStep& s : r.trace.steps) {
    std::map<engine::StepPart, Time> free;
    for (const engine::StepSpan& d : s.detail) {
      EXPECT_GE(d.start, free[d.part]);
      EXPECT_LE(s.start + d.end, s.end);
      free[d.part] = d.end;
    }
  }
}

TEST(InferenceTrace, BoundsAreRespected) {
  engine::ServingTraceLimits limits;
  limits.steps_per_instance = 5;
  limits.detailed_decode_steps = 1;
  limits.kv_transfers = 4;
  const ScenarioConfig cfg = serving(kPd);
  const engine::ServingResult r = simulate(cfg, {}, limits);
  ASSERT_EQ(r.trace.instances.size(), 2u);
  EXPECT_EQ(r.trace.steps.size(), 10u);
  EXPECT_EQ(r.trace.kv.size(), 4u);
  int detailed = 0;
  for (const engine::TracedStep& s : r.trace.steps) detailed += s.detail.empty() ? 0 : 1;
  EXPECT_EQ(detailed, 1);
  const std::string json = inference_output(cfg, r).trace_json;
  EXPECT_TRUE(has(json, "\"steps_per_instance\":5"));
  EXPECT_TRUE(JsonChecker::valid(json));
  // Same seed, same trace.
  EXPECT_EQ(json, inference_output(cfg, simulate(cfg, {}, limits)).trace_json);
}

TEST(InferenceHtml, HasTheSectionsAndNeedsNoNetwork) {
  const ScenarioConfig cfg = serving(kAfd);
  const RunOutput out = inference_output(cfg, simulate(cfg));
  const std::string& html = out.report_html;
  for (const char* part : {"<h2 id='summary'>", "<h2 id='ttft'>", "<h2 id='tpot'>", "<h2 id='pools'>",
                           "<h2 id='decode-step'>", "<svg", "m = 2 micro-batches", "attention (8 x H100-SXM)", "expert",
                           "tokens per cost unit", "limit 50 ms"}) {
    EXPECT_TRUE(has(html, part)) << part;
  }
  for (const char* remote : {"<script", "src=", "<link", "href=", "@import"}) EXPECT_FALSE(has(html, remote)) << remote;
  EXPECT_EQ(html.rfind("</html>\n"), html.size() - 8);
}

TEST(InferenceHtml, HandMadeRunWithoutStepsStillRenders) {
  const ScenarioConfig cfg = serving();
  engine::ServingResult r;
  engine::PoolStats pool;
  pool.gpus = 16;
  r.pools = {pool};
  const RunOutput out = inference_output(cfg, r);
  EXPECT_TRUE(has(out.report_html, "No decode-only step"));
  EXPECT_TRUE(has(out.report_html, "unpriced"));
  EXPECT_TRUE(JsonChecker::valid(out.trace_json));
}

// Pools of different GPU types: attention on H200 (141 GB), experts on H100 (80 GB).
const std::vector<std::string> kHetero = {
    "inference.mode=attention_ffn", "inference.micro_batches=2",
    "inference.pools={attention: {gpu: H200-SXM, gpus: 8, tp: 2, price_per_gpu_hour: 3}, "
    "expert: {gpu: H100-SXM, gpus: 8, price_per_gpu_hour: 2}}"};

TEST(HeterogeneousPools, EachPoolUsesItsOwnGpu) {
  const engine::ServingSetup homo = engine::make_serving_setup(serving(kAfd));
  const engine::ServingSetup hetero = engine::make_serving_setup(serving(kHetero));
  EXPECT_EQ(hetero.pools[0].hw.name, "H200-SXM");
  EXPECT_EQ(hetero.pools[1].hw.name, "H100-SXM");
  // The same weights per GPU, 143,771 - 81,559 MiB = 65.2 GB more KV cache per attention GPU.
  EXPECT_EQ(hetero.pools[0].weights_per_gpu, homo.pools[0].weights_per_gpu);
  EXPECT_NEAR((hetero.pools[0].kv_budget_per_gpu - homo.pools[0].kv_budget_per_gpu).as_double() / 1e9, 65.23, 0.01);
  EXPECT_EQ(hetero.pools[1].kv_budget_per_gpu, homo.pools[1].kv_budget_per_gpu);
  // Faster HBM: the same decode step takes less attention time.
  engine::StepLoad load;
  for (int i = 0; i < 64; ++i) load.add_decode(1024);
  EXPECT_LT(engine::attention_layer_time(hetero.model, hetero.pools[0].hw, load, 2),
            engine::attention_layer_time(homo.model, homo.pools[0].hw, load, 2));
}

TEST(HeterogeneousPools, ReportedPerPoolAndPricedPerPool) {
  const ScenarioConfig cfg = serving(kHetero);
  const RunOutput out = inference_output(cfg, simulate(cfg));
  const std::string j = out.results.dump(0);
  EXPECT_TRUE(has(j, "\"role\":\"attention\",\"gpu\":\"H200-SXM\",\"gpus\":8")) << j;
  EXPECT_TRUE(has(j, "\"role\":\"expert\",\"gpu\":\"H100-SXM\",\"gpus\":8")) << j;
  EXPECT_TRUE(has(j, "\"price_per_gpu_hour\":3")) << j;
  // tokens per cost unit = tokens/s x 3600 / (8 x 3 + 8 x 2).
  const double tps = out.metrics.at("tokens_per_s");
  EXPECT_TRUE(has(j, "\"tokens_per_cost_unit\":")) << j;
  EXPECT_TRUE(has(out.summary, "8 x H200-SXM")) << out.summary;
  EXPECT_TRUE(has(out.summary, "all 16 GPUs cost 40.00 per hour")) << out.summary;
  EXPECT_GT(tps, 0);
}

TEST(HeterogeneousPools, SweepPricesEachPoolAndTheColocatedBaseline) {
  const ScenarioConfig cfg = serving(kHetero);
  // The colocated baseline runs on cluster.gpu (H100) and borrows the expert pool's H100 price.
  const engine::DecodePoint c = engine::colocated_decode_point(cfg, 2, 8, 64);
  ASSERT_TRUE(c.fits);
  EXPECT_DOUBLE_EQ(c.price_per_hour, 8 * 2.0);
  EXPECT_NEAR(c.tokens_per_cost_unit, c.tokens_per_s_per_gpu * 8 * 3600 / 16.0, 1e-6 * c.tokens_per_cost_unit);
  const engine::DecodePoint a = engine::afd_decode_point(cfg, 2, 8, 8, 64, 2);
  ASSERT_TRUE(a.fits);
  EXPECT_DOUBLE_EQ(a.price_per_hour, 8 * 3.0 + 8 * 2.0);
  engine::DecodeSweepGrid grid;
  grid.micro_batches = {2};
  grid.colocated_tp = {1, 2, 8};
  grid.colocated_instance_gpus = {8};
  grid.attention_gpus = {8};
  grid.expert_gpus = {8};
  grid.batches = {16, 64};
  grid.rank_by_cost = true;
  const engine::DecodeSweepResult r = engine::sweep_decode(cfg, grid);
  EXPECT_EQ(r.baseline_tp, 8);
  EXPECT_EQ(r.colocated_tp_best.tp, 8);
  EXPECT_LT(r.colocated_dp_best.tp, 8);
  const std::string table = engine::format_decode_sweep(r);
  for (const char* part : {"colocated TP-8 attn", "colocated DP attn", "attn/ffn ping-pong", "vs TP-8", "vs DP-attn",
                           "per cost unit", "attention H200-SXM at 3.00/h", "assumed here, not sourced"}) {
    EXPECT_TRUE(has(table, part)) << part << "\n" << table;
  }
}

TEST(ServingScenarios, EveryInferScenarioLoadsAndSetsUp) {
  for (const char* name : {"infer-colocated", "infer-pd", "infer-afd", "infer-afd-hetero"}) {
    const ScenarioConfig cfg = load_scenario(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/" + name + ".yaml");
    ASSERT_TRUE(cfg.inference.has_value()) << name;
    const engine::ServingSetup s = engine::make_serving_setup(cfg);
    for (const engine::PoolPlan& p : s.pools) EXPECT_GT(p.price_per_gpu_hour, 0) << name;
    if (std::string(name) == "infer-afd-hetero") {
      EXPECT_EQ(s.pools[0].hw.name, "H200-SXM");
      EXPECT_EQ(s.pools[1].hw.name, "H800-SXM");
    }
  }
}

}  // namespace
}  // namespace clustersim::report
