// SPDX-License-Identifier: Apache-2.0
// results.json of a serving run: percentiles, the documented keys, and a whole run on SimGrid.
#include "sim/report/inference_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"
#include "tests/unit/inference/inference_test_util.h"
#include "tests/unit/scratch_dir.h"

namespace clustersim::report {
namespace {

TEST(Percentiles, NearestRank) {
  const Percentiles p = percentiles({5, 1, 4, 2, 3});
  EXPECT_DOUBLE_EQ(p.mean, 3);
  EXPECT_DOUBLE_EQ(p.p50, 3);
  EXPECT_DOUBLE_EQ(p.p99, 5);
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  EXPECT_DOUBLE_EQ(percentiles(hundred).p99, 99);
  EXPECT_DOUBLE_EQ(percentiles(hundred).p50, 50);
  EXPECT_EQ(percentiles({}).count, 0);
}

// A hand-made run on one instance of 8 GPUs: `n` requests of 11 tokens `gap` apart, request i
// rejected where `rejected(i)`, else its first token `ttft(i)` after its arrival and its last
// `decode(i)` after that. last_finish is the caller's.
engine::ServingResult paced_run(int n, const std::function<bool(int)>& rejected, const std::function<Time(int)>& ttft,
                                const std::function<Time(int)>& decode, Time gap = Time::s(1)) {
  engine::ServingResult r;
  engine::PoolStats pool;
  pool.gpus = 8;
  pool.instances = 1;
  r.pools = {pool};
  for (int i = 0; i < n; ++i) {
    engine::RequestOutcome o;
    o.arrival = i * gap;
    o.output = 11;
    if (rejected(i)) {
      o.rejected = true;
    } else {
      o.first_token = o.arrival + ttft(i);
      o.finish = o.first_token + decode(i);
      o.completed = true;
    }
    r.requests.push_back(o);
  }
  return r;
}

// The output of 40 requests a second apart, none rejected, the run ending with the last one.
RunOutput paced_output(const std::function<Time(int)>& ttft, const std::function<Time(int)>& decode) {
  engine::ServingResult r = paced_run(40, [](int) { return false; }, ttft, decode);
  r.last_finish = r.requests.back().finish;
  return inference_output(clustersim::testing::serving(), r);
}

// Arrivals far from steady (a trace's burst, then quiet) are no one load to judge: 200 requests in
// the first 20 s and 20 more from 60 s to 98 s read keeps_up until 2026-12-07,
// and a quarter without arrivals gave its mean first token as 0.
TEST(InferenceOutput, UnsteadyArrivalsAreNotJudgedAsOneLoad) {
  engine::ServingResult r;
  engine::PoolStats pool;
  pool.gpus = 8;
  pool.instances = 1;
  r.pools = {pool};
  for (int i = 0; i < 220; ++i) {
    engine::RequestOutcome o;
    o.arrival = i < 200 ? Time::ms(100 * i) : Time::s(60 + 2 * (i - 200));
    o.output = 11;
    o.first_token = o.arrival + Time::ms(10);
    o.finish = o.first_token + Time::ms(190);
    o.completed = true;
    r.requests.push_back(o);
  }
  r.first_arrival = r.requests.front().arrival;
  r.last_finish = r.requests.back().finish;
  const RunOutput out = inference_output(clustersim::testing::serving(), r);
  const std::string j = out.results.dump(0);
  EXPECT_NE(j.find("\"load_verdict\":\"unsteady_arrivals\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"arrivals_by_quarter\":[200,0,7,13]"), std::string::npos) << j;
  EXPECT_NE(j.find("\"ttft_second_quarter_s\":null"), std::string::npos) << j;
  EXPECT_EQ(out.metrics.at("unsteady_arrivals"), 1.0);  // for a sweep's note
  EXPECT_NE(out.summary.find("unsteady arrivals: 200, 0, 7 and 13 requests in the four quarters"), std::string::npos)
      << out.summary;
  // Paced arrivals are steady: judged as before, no such metric.
  const RunOutput paced = paced_output([](int) { return Time::ms(10); }, [](int) { return Time::ms(190); });
  EXPECT_NE(paced.results.dump(0).find("\"load_verdict\":\"keeps_up\""), std::string::npos);
  EXPECT_EQ(paced.metrics.count("unsteady_arrivals"), 0u);
}

// Rejected requests were offered too: a deployment that turns half its load away serves half
// (until 2026-12-06 they were left out of the offered load, and it read as keeping up).
TEST(InferenceOutput, RejectedRequestsCountAsOfferedLoad) {
  const ScenarioConfig cfg = clustersim::testing::serving();
  // 20 requests of 11 tokens a second apart, each done within 0.2 s; every other one rejected.
  engine::ServingResult r = paced_run(
      20, [](int i) { return i % 2 == 1; }, [](int) { return Time::ms(10); }, [](int) { return Time::ms(190); });
  r.last_finish = Time::s(19);
  const RunOutput out = inference_output(cfg, r);
  // 19 s of window: 19 requests offered before the last (209 tokens), 10 of them served (110).
  EXPECT_NEAR(out.metrics.at("served_fraction"), 110.0 / 209.0, 1e-9);
  // Nothing queued: the summary names the rejections, not a growing queue (until 2026-12-06).
  EXPECT_EQ(out.summary.find("queues grow"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("the rejected requests' tokens among what is missing"), std::string::npos) << out.summary;
}

// A queue that grows: request i waits i x 100 ms more than the one before it (a deployment about
// 10% short of its load). Served about 0.9 of the offered load: falling behind, with the first
// tokens of the window's first and last quarter of arrivals (until 2026-12-07 only under 0.8 was
// anything said). The arrivals' own demand is reported beside the deployment-paced offered load.
TEST(InferenceOutput, AQueueThatGrowsIsFallingBehind) {
  const RunOutput out = paced_output([](int i) { return Time::ms(10 + 100 * i); }, [](int) { return Time::ms(190); });
  const double served = out.metrics.at("served_fraction");
  EXPECT_GT(served, 0.8);
  EXPECT_LT(served, 0.95);
  EXPECT_NE(out.summary.find("falling behind, queues grow"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("first token: mean 460.0 ms for the first quarter of arrivals"), std::string::npos)
      << out.summary;
  const std::string j = out.results.dump(0);
  EXPECT_NE(j.find("\"load_verdict\":\"falls_behind\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"requested_tokens_per_s\":"), std::string::npos) << j;
  // Requests 0-9 arrive in the window's first quarter (0..9.75 s), 30-39 in its last: TTFT means
  // 0.46 s and 3.46 s.
  EXPECT_NE(j.find("\"ttft_first_quarter_s\":0.46"), std::string::npos) << j;
  EXPECT_NE(j.find("\"ttft_last_quarter_s\":3.46"), std::string::npos) << j;
  // Kept up (a constant first token): nothing said.
  const RunOutput kept_out = paced_output([](int) { return Time::ms(10); }, [](int) { return Time::ms(190); });
  EXPECT_EQ(kept_out.summary.find("falling behind"), std::string::npos);
  EXPECT_NE(kept_out.results.dump(0).find("\"load_verdict\":\"keeps_up\""), std::string::npos);
}

// A wait that grows where the produced share stays high: each first token 50 ms later than the one
// before, a second apart. The produced tokens reach 97% of the offered ones, which until
// 2026-12-07 read as keeping up (QA: a Llama-3-70B deployment with first tokens going from 0.5 s
// to 14.6 s read 96% and said nothing); the growth says it falls behind, and is a metric a sweep
// can bound (ttft_growth). The served fraction is no more than the produced over what the
// arrivals ask within the window at the fastest TPOT (here the TPOT never slows: the same).
TEST(InferenceOutput, AWaitThatGrowsFallsBehindWhereTheOfferedLoadFollows) {
  const RunOutput out = paced_output([](int i) { return Time::ms(10 + 50 * i); }, [](int) { return Time::ms(190); });
  double steady = 0, offered = 0, requested = 0, growth = 0;
  out.results.for_each_number([&](const std::string& path, double v) {
    if (path == "steady_tokens_per_s") steady = v;
    if (path == "offered_tokens_per_s") offered = v;
    if (path == "requested_tokens_per_s") requested = v;
    if (path == "ttft_growth") growth = v;
  });
  EXPECT_GE(steady / offered, 0.95);
  EXPECT_LT(steady / requested, 0.95);  // the arrivals' whole outputs: spilling past the window
  EXPECT_NEAR(growth, 0.05, 1e-9);
  EXPECT_DOUBLE_EQ(out.metrics.at("ttft_growth"), growth);
  // A sweep's metric is never negative: a shrinking wait reads 0.
  EXPECT_EQ(paced_output([](int i) { return Time::ms(2010 - 50 * i); }, [](int) { return Time::ms(190); })
                .metrics.at("ttft_growth"),
            0.0);
  EXPECT_DOUBLE_EQ(out.metrics.at("served_fraction"), steady / offered);
  EXPECT_NE(out.summary.find("falling behind, queues grow"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("growing 3 s a minute of arrivals"), std::string::npos) << out.summary;
}

// Requests that live 36 s, arriving a second apart for 39 s: the deployment is still filling from
// empty when the arrivals end (a request's life past nine tenths of the window), with nothing to
// tell a steady state from a pile-up by. Said, not read as keeping up. Living 30 s the count
// settles at 30 from then on: judged from 30 s in (the later of the window's middle and the 90th
// percentile life), it keeps up (until a review of 2026-12-07 the middle's count, taken while
// the deployment filled, read as a pile-up).
TEST(InferenceOutput, ARunEndingBeforeASteadyStateSaysSo) {
  const auto verdict_of = [](Time life) {
    return paced_output([](int) { return Time::ms(10); }, [life](int) { return life; });
  };
  const RunOutput out = verdict_of(Time::s(36));
  const std::string j = out.results.dump(0);
  EXPECT_NE(j.find("\"load_verdict\":\"not_settled\""), std::string::npos) << j;
  EXPECT_NE(out.summary.find("not settled: a request lives up to 36 s (90th percentile) against 39 s of arrivals"),
            std::string::npos)
      << out.summary;
  EXPECT_EQ(out.summary.find("falling behind"), std::string::npos) << out.summary;
  const std::string settled = verdict_of(Time::s(30)).results.dump(0);
  EXPECT_NE(settled.find("\"load_verdict\":\"keeps_up\""), std::string::npos) << settled;
  EXPECT_NE(settled.find("\"in_system_from_s\":30.0"), std::string::npos) << settled;
  // Living past the arrivals, the first count is taken at their end, and the key says so (QA
  // 2026-12-07: it gave the life, 33.2 s on infer-afd.yaml, beside a count taken at 30.4 s).
  const std::string longer =
      paced_output([](int) { return Time::ms(10); }, [](int i) { return Time::s(i < 8 ? 5 : 45); }).results.dump(0);
  EXPECT_NE(longer.find("\"in_system_from_s\":39.0"), std::string::npos) << longer;
  EXPECT_NE(longer.find("\"load_verdict\":\"not_settled\""), std::string::npos) << longer;
}

// Goodput: the requests that completed within every limit given, a rejected one counting as
// missed, over all requests and per second; nothing without a limit (the TPOT share read 1 with
// no limit, and left rejected requests out, until 2026-12-06).
TEST(InferenceOutput, SloAttainmentCountsEveryLimitAndEveryRejectedRequest) {
  // 10 requests a second apart: TTFT 50 ms and TPOT 10 ms, except request 1 (TTFT 300 ms),
  // request 2 (TPOT 40 ms) and request 3 (rejected).
  engine::ServingResult r = paced_run(
      10, [](int i) { return i == 3; }, [](int i) { return i == 1 ? Time::ms(300) : Time::ms(50); },
      [](int i) { return i == 2 ? Time::ms(400) : Time::ms(100); });
  r.last_finish = r.requests.back().finish;
  const double duration = r.last_finish.as_s();
  const auto run = [&r](const std::vector<std::string>& limits) {
    return inference_output(clustersim::testing::serving(limits), r);
  };
  const RunOutput none = run({"inference.tpot_limit=null"});
  EXPECT_EQ(none.metrics.count("slo_attainment"), 0u);
  const std::string j = none.results.dump(0);
  for (const char* key : {"\"slo_attainment\":null", "\"goodput_requests_per_s\":null", "\"tpot_within_limit_fraction\":null"}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
  }
  const RunOutput tpot = run({"inference.tpot_limit=20ms"});
  EXPECT_DOUBLE_EQ(tpot.metrics.at("slo_attainment"), 8.0 / 10);  // request 2 misses, 3 is rejected
  EXPECT_DOUBLE_EQ(tpot.metrics.at("goodput_requests_per_s"), 8.0 / duration);
  const RunOutput both = run({"inference.tpot_limit=20ms", "inference.ttft_limit=100ms"});
  EXPECT_DOUBLE_EQ(both.metrics.at("slo_attainment"), 7.0 / 10);
  EXPECT_NE(both.summary.find("within TTFT <= 100 ms and TPOT <= 20 ms: 70.0% of the 10 requests"), std::string::npos)
      << both.summary;
  const RunOutput ttft = run({"inference.tpot_limit=null", "inference.ttft_limit=100ms"});
  EXPECT_DOUBLE_EQ(ttft.metrics.at("slo_attainment"), 8.0 / 10);
  // One request that arrives and finishes at once: no time, no rate, in the text as in the JSON
  // (the text printed 0 requests/s until 2026-12-06).
  engine::ServingResult instant = paced_run(
      1, [](int) { return false; }, [](int) { return Time::zero(); }, [](int) { return Time::zero(); });
  const RunOutput at_once = inference_output(clustersim::testing::serving({"inference.ttft_limit=100ms"}), instant);
  EXPECT_NE(at_once.results.dump(0).find("\"goodput_requests_per_s\":null"), std::string::npos);
  EXPECT_NE(at_once.summary.find("goodput     n/a (no time elapsed) within"), std::string::npos) << at_once.summary;
}

TEST(InferenceOutput, DocumentedKeysFromAHandMadeRun) {
  const ScenarioConfig cfg = clustersim::testing::serving();
  engine::ServingResult r;
  engine::PoolStats pool;
  pool.gpus = 16;
  pool.instances = 2;
  pool.price_per_gpu_hour = 2.5;
  pool.max_batch = 4;
  pool.max_batch_seen = 4;
  r.pools = {pool};
  // Two requests: 11 tokens (TTFT 0.1 s, TPOT 0.01 s) and 1 rejected.
  engine::RequestOutcome a;
  a.arrival = Time::zero();
  a.first_token = Time::ms(100);
  a.finish = Time::ms(200);
  a.output = 11;
  a.completed = true;
  engine::RequestOutcome b;
  b.rejected = true;
  r.requests = {a, b};
  r.last_finish = Time::ms(200);
  const RunOutput out = inference_output(cfg, r);
  const std::string j = out.results.dump(0);
  for (const char* key : {"\"kind\":\"inference\"", "\"tokens_per_s_per_gpu\":", "\"ttft_s\":{\"mean\":0.1,\"p50\":0.1,\"p99\":0.1}",
                          "\"tpot_s\":{\"mean\":0.01,\"p50\":0.01,\"p99\":0.01}", "\"rejected\":1", "\"completed\":1",
                          "\"tokens_per_cost_unit\":", "\"decode_step\":", "\"utilisation\":",
                          "\"weight_precision\":\"bf16\"", "\"kv_precision\":\"bf16\"", "\"chunked_prefill\":false",
                          "\"moe_dispatch\":\"all_to_all\"", "\"max_batch\":4,"}) {
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
  }
  // A pool whose batch reached its limit says so (since 2026-12-07).
  EXPECT_NE(out.summary.find("max batch 4 (its max_batch: the cap)"), std::string::npos) << out.summary;
  // 11 tokens in 0.2 s on 16 GPUs.
  EXPECT_DOUBLE_EQ(out.metrics.at("tokens_per_s"), 55.0);
  EXPECT_DOUBLE_EQ(out.metrics.at("tokens_per_s_per_gpu"), 55.0 / 16);
  EXPECT_DOUBLE_EQ(out.metrics.at("tpot_p99_s"), 0.01);
  // One output token each: no time per output token to speak of. Undefined, not zero.
  r.requests[0].output = 1;
  const RunOutput single = inference_output(cfg, r);
  const std::string s = single.results.dump(0);
  EXPECT_NE(s.find("\"tpot_s\":null"), std::string::npos) << s;
  EXPECT_NE(s.find("\"tpot_within_limit_fraction\":null"), std::string::npos) << s;
  EXPECT_EQ(single.metrics.count("tpot_p99_s"), 0u);
  EXPECT_NE(single.summary.find("TPOT        none"), std::string::npos) << single.summary;
  // An MoE model's summary says its throughput is an upper bound (serving-moe.yaml, a known gap);
  // a dense model's does not.
  EXPECT_NE(single.summary.find("read the throughput as an upper bound"), std::string::npos) << single.summary;
  const ScenarioConfig dense = clustersim::testing::serving({"inference.moe=null", "inference.pools.colocated.ep=null"});
  EXPECT_EQ(inference_output(dense, r).summary.find("upper bound"), std::string::npos);
  // moe_dispatch: null for a dense model, the pools' collective, or attention_ffn's M2N.
  EXPECT_NE(inference_output(dense, r).results.dump(0).find("\"moe_dispatch\":null"), std::string::npos);
  const RunOutput gathered = inference_output(clustersim::testing::serving({"inference.moe.dispatch=all_gather"}), r);
  EXPECT_NE(gathered.results.dump(0).find("\"moe_dispatch\":\"all_gather\""), std::string::npos);
  EXPECT_NE(gathered.summary.find("MoE tokens all-gathered"), std::string::npos) << gathered.summary;
  const ScenarioConfig afd = clustersim::testing::serving(
      {"inference.mode=attention_ffn", "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"});
  EXPECT_NE(inference_output(afd, r).results.dump(0).find("\"moe_dispatch\":\"m2n\""), std::string::npos);
}

TEST(RunInference, WholeRunOnTheFabricThroughRunScenario) {
  // prefill_decode over the analytical network on SimGrid's clock: KV caches cross the fabric.
  const ScenarioConfig cfg = clustersim::testing::serving(
      {"inference.mode=prefill_decode", "inference.requests=60",
       "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"});
  const RunOutput out = run_scenario(cfg);
  const std::string j = out.results.dump(0);
  EXPECT_NE(j.find("\"mode\":\"prefill_decode\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"arrived\":60,\"completed\":60,\"rejected\":0"), std::string::npos) << j;
  EXPECT_GT(out.metrics.at("tokens_per_s_per_gpu"), 0);
  EXPECT_GT(out.metrics.at("ttft_p99_s"), 0);
  EXPECT_NE(out.summary.find("mode prefill_decode"), std::string::npos) << out.summary;
}

TEST(RunInference, AttentionFfnAtFlowLevelMeasuresTheExchange) {
  const ScenarioConfig cfg = clustersim::testing::serving(
      {"inference.mode=attention_ffn", "inference.micro_batches=2", "inference.requests=40", "network.fidelity=flow",
       "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"});
  const RunOutput out = run_scenario(cfg);
  const std::string j = out.results.dump(0);
  EXPECT_NE(j.find("\"completed\":40"), std::string::npos) << j;
  EXPECT_NE(j.find("\"m2n_fabric_factor\":"), std::string::npos) << j;
}

// The decode-step means cover decode-only steps; the steps that also prefilled are counted
// beside them, and where they outnumber them (a steady load) the summary says the means describe
// the drain (before 2026-12-04 nothing said so: mean_batch read the same at every rate).
TEST(InferenceReport, DecodeStepsThatAlsoPrefilledAreCountedAndNamed) {
  for (const char* rate : {"inference.rate_per_s=20", "inference.rate_per_s=2000"}) {
    const RunOutput out = run_scenario(clustersim::testing::serving({"inference.requests=400", rate}));
    std::map<std::string, double> f;
    out.results.for_each_number([&f](const std::string& path, double v) { f[path] = v; });
    ASSERT_TRUE(f.count("decode_step.mixed_count")) << rate;
    const bool drain = f.at("decode_step.mixed_count") > f.at("decode_step.count");
    EXPECT_EQ(out.summary.find("describes the drain") != std::string::npos, drain) << rate << "\n" << out.summary;
  }
  const RunOutput busy = run_scenario(
      clustersim::testing::serving({"inference.requests=2000", "inference.rate_per_s=40000", "inference.max_batch=1024"}));
  EXPECT_NE(busy.summary.find("more also ran prefill"), std::string::npos) << busy.summary;
}

TEST(InferenceReport, NoDecodeOnlyStepGivesNullMeansNotAZeroStep) {
  // One output token each: nothing decodes alone. The means are undefined, as TPOT is (until
  // 2026-12-05 a 0 ms step at batch 0).
  const RunOutput out = run_scenario(clustersim::testing::serving(
      {"inference.requests=50", "inference.output_tokens.dist=fixed", "inference.output_tokens.mean=1"}));
  std::map<std::string, double> f;
  out.results.for_each_number([&f](const std::string& path, double v) { f[path] = v; });
  EXPECT_EQ(f.at("decode_step.count"), 0);
  EXPECT_EQ(f.count("decode_step.time_s"), 0u);
  EXPECT_EQ(f.count("decode_step.mean_batch"), 0u);
  EXPECT_EQ(out.summary.find("decode step mean"), std::string::npos) << out.summary;
  EXPECT_NE(out.summary.find("no decode-only step"), std::string::npos) << out.summary;
}

// Requests that live long against the arrival window keep up when each is served as fast as the
// first: the offered side counts what they would produce within the window at the quickest first
// token and the median TPOT, as the produced side counts theirs. Until 2026-12-06 it counted their
// whole outputs, and 200 requests a second apart, each decoding for 100 s, read 0.75 of the
// offered load, "falling behind". A queue that grows (each first token 0.5 s later than the one
// before) still reads as one.
TEST(InferenceOutput, LongLivedRequestsThatKeepUpServeTheOfferedLoad) {
  const ScenarioConfig cfg = clustersim::testing::serving();
  engine::ServingResult r = paced_run(
      200, [](int) { return false; }, [](int) { return Time::ms(10); }, [](int) { return Time::s(100); });
  r.last_finish = Time::s(300);
  const RunOutput kept = inference_output(cfg, r);
  EXPECT_NEAR(kept.metrics.at("served_fraction"), 1.0, 1e-9);
  EXPECT_EQ(kept.summary.find("falling behind"), std::string::npos) << kept.summary;
  engine::ServingResult queued = paced_run(
      200, [](int) { return false; }, [](int i) { return Time::ms(10 + 500 * i); },
      [](int) { return Time::s(100); });
  queued.last_finish = Time::s(400);
  const RunOutput behind = inference_output(cfg, queued);
  EXPECT_LT(behind.metrics.at("served_fraction"), 0.8);
  EXPECT_NE(behind.summary.find("falling behind, queues grow"), std::string::npos) << behind.summary;
}

// Arrivals that end within one request's life (first token and decode) are a burst: no steady
// state to measure (21 requests a millisecond apart, each decoding for 40 ms, read as falling
// behind until 2026-12-06).
TEST(InferenceOutput, ArrivalsWithinOneRequestsLifeAreABurst) {
  const ScenarioConfig cfg = clustersim::testing::serving();
  engine::ServingResult r = paced_run(
      21, [](int) { return false; }, [](int) { return Time::ms(1); }, [](int) { return Time::ms(40); }, Time::ms(1));
  r.last_finish = Time::ms(61);
  const RunOutput out = inference_output(cfg, r);
  EXPECT_FALSE(out.metrics.count("served_fraction"));
  EXPECT_EQ(out.summary.find("falling behind"), std::string::npos) << out.summary;
}

TEST(InferenceReport, SteadyThroughputMeetsTheOfferedLoadUntilTheDeploymentFallsBehind) {
  // tokens_per_s counts the drain after the last arrival; steady_tokens_per_s only the arrival
  // window: about the offered rate under a light load, well under it when overloaded.
  // The sweep's served_fraction metric is their ratio (2026-12-06).
  const auto figures = [](const std::vector<std::string>& extra) {
    std::vector<std::string> o = {"inference.requests=400"};
    o.insert(o.end(), extra.begin(), extra.end());
    const RunOutput out = run_scenario(clustersim::testing::serving(o));
    std::map<std::string, double> f;
    out.results.for_each_number([&f](const std::string& path, double v) { f[path] = v; });
    if (out.metrics.count("served_fraction")) f["served_fraction"] = out.metrics.at("served_fraction");
    if (f.count("steady_tokens_per_s")) {
      // Where the wait grows, no more than the produced over the arrivals' demand (2026-12-07).
      const double served = f.at("steady_tokens_per_s") / f.at("offered_tokens_per_s");
      if (f.at("ttft_growth") > 0.01) {
        EXPECT_LE(f.at("served_fraction"), served);
      } else {
        EXPECT_DOUBLE_EQ(f.at("served_fraction"), served);
      }
    } else {
      EXPECT_FALSE(f.count("served_fraction"));
    }
    return std::make_pair(f, out.summary);
  };
  const auto [light, light_text] = figures({"inference.rate_per_s=20"});
  ASSERT_TRUE(light.count("steady_tokens_per_s")) << light_text;
  EXPECT_NEAR(light.at("steady_tokens_per_s") / light.at("offered_tokens_per_s"), 1.0, 0.1);
  EXPECT_EQ(light_text.find("falling behind"), std::string::npos) << light_text;
  // 4,000 requests/s (1,000 before 2026-12-04's skinny-GEMM change, which made this small model's
  // decode steps 40% shorter and let it keep up with 1,000).
  const auto [heavy, heavy_text] = figures({"inference.rate_per_s=4000", "inference.max_batch=4"});
  ASSERT_TRUE(heavy.count("steady_tokens_per_s")) << heavy_text;
  EXPECT_LT(heavy.at("steady_tokens_per_s"), 0.8 * heavy.at("offered_tokens_per_s"));
  EXPECT_LT(heavy.at("served_fraction"), 0.8);
  EXPECT_NE(heavy_text.find("falling behind, queues grow"), std::string::npos) << heavy_text;
  // Overloaded so far that the run lasts many times its arrival window: still measured, and
  // falling behind (before 2026-12-04 a window under a tenth of the run read as a burst: null).
  const auto [swamped, swamped_text] = figures({"inference.rate_per_s=4000", "inference.max_batch=1"});
  ASSERT_TRUE(swamped.count("steady_tokens_per_s")) << swamped_text;
  EXPECT_GT(swamped.at("duration_s"), 10 * swamped.at("arrival_window_s")) << swamped_text;
  EXPECT_NE(swamped_text.find("falling behind, queues grow"), std::string::npos) << swamped_text;
  // Every request at once: no arrival window to measure (null, so not a number).
  const auto [burst, burst_text] = figures({"inference.rate_per_s=1e9"});
  EXPECT_FALSE(burst.count("steady_tokens_per_s")) << burst_text;
  // Three requests a second apart to an idle deployment: the window holds two gaps, so 20 of the
  // 30 tokens are offered in it (before 2026-12-04 all 30, and it read as falling behind).
  const clustersim::testing::ScratchDir dir("clustersim_trace");
  ASSERT_TRUE(dir.ok());
  std::ofstream(dir.file("t.csv")) << "0,100,10\n1,100,10\n2,100,10\n";
  const auto [few, few_text] = figures({"inference.trace=" + dir.file("t.csv")});
  ASSERT_TRUE(few.count("offered_tokens_per_s")) << few_text;
  EXPECT_DOUBLE_EQ(few.at("offered_tokens_per_s"), 10.0);
  EXPECT_EQ(few_text.find("falling behind"), std::string::npos) << few_text;
}

// Work the run cannot finish in minutes is refused up front with its figures (10 million requests
// of 4,000 tokens at max_batch 1 ran for hours): 300,000 x 1,500 tokens at max_batch 1 on 2 instances.
TEST(InferenceReport, RunsOfTooManyDecodeStepsAreRefusedUpFront) {
  const ScenarioConfig cfg = clustersim::testing::serving(
      {"inference.requests=300000", "inference.max_batch=1", "inference.output_tokens={dist: fixed, mean: 1501}"});
  try {
    run_scenario(cfg);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("inference.requests: the requests need at least"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("4.5e+08 output tokens after the first over max_batch 1 x 2 decoding instances"),
              std::string::npos)
        << e.what();
  }
}

TEST(InferenceReport, ATraceWhoseEveryRequestIsRejectedIsRefused) {
  // 16 MiB of KV per GPU holds 585 tokens per replica: a trace of longer requests is rejected
  // whole; before 2026-11-22 such a run printed 0 tokens/s over -0.0029 s.
  const std::string trace = (std::filesystem::temp_directory_path() / "clustersim_all_rejected.csv").string();
  std::ofstream(trace) << "arrival_s,prompt_tokens,output_tokens\n0.0,1000,10\n0.1,2000,20\n";
  const std::string scenario = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-colocated.yaml";
  try {
    run_scenario(load_scenario(scenario, {"inference.trace=" + trace, "inference.kv_cache_per_gpu=16MiB"}));
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("inference.trace: every one of the 2 requests"), std::string::npos) << e.what();
  }
  // A cache without room for one token is refused before any request, naming the key to raise.
  try {
    run_scenario(load_scenario(scenario, {"inference.trace=" + trace, "inference.kv_cache_per_gpu=0GiB"}));
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("the KV cache holds 0 tokens per replica: no request of the trace fits; raise "
                                         "inference.kv_cache_per_gpu"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(trace);
}

}  // namespace
}  // namespace clustersim::report
