// SPDX-License-Identifier: Apache-2.0
// The serving event loop on a hand-run clock: arrivals, KV cache and batch limits, no request
// lost, determinism, the three modes; and request traces.
#include "sim/engine/inference_sim.h"

#include <gtest/gtest.h>

#include <set>

#include <map>

#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/inference/inference_test_util.h"
#include "tests/unit/scratch_dir.h"

namespace clustersim::engine {
namespace {

using clustersim::testing::bad_input_of;
using clustersim::testing::serving;
using clustersim::testing::simulate;

void expect_no_request_lost(const ServingResult& r) {
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestOutcome& o = r.requests[i];
    EXPECT_NE(o.completed, o.rejected) << "request " << i << " neither completed nor rejected";
    if (!o.completed) continue;
    EXPECT_GE(o.first_token, o.arrival) << i;
    EXPECT_GE(o.finish, o.first_token) << i;
  }
}

TEST(Requests, PoissonArrivalsAndLengthsAreSeeded) {
  const InferenceConfig in = *serving().inference;
  const std::vector<ServingRequest> a = make_requests(in, "");
  const std::vector<ServingRequest> b = make_requests(in, "");
  ASSERT_EQ(a.size(), 200u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival, b[i].arrival);
    EXPECT_EQ(a[i].prompt, b[i].prompt);
    EXPECT_GE(a[i].prompt, 64);
    EXPECT_LE(a[i].prompt, 512);
    EXPECT_GE(a[i].output, 1);
    EXPECT_LE(a[i].output, 64);
    if (i > 0) {
      EXPECT_GE(a[i].arrival, a[i - 1].arrival);
    }
  }
  // 200 exponential gaps of mean 1/400 s: the last arrival near 0.5 s (within 4 standard deviations).
  EXPECT_NEAR(a.back().arrival.as_s(), 0.5, 4 * 0.5 / std::sqrt(200.0));
}

TEST(Requests, ExponentialLengthsStayInBounds) {
  std::mt19937_64 rng(3);
  const LengthConfig l{LengthDist::kExponential, 100, 10, 300};
  double sum = 0;
  for (int i = 0; i < 2000; ++i) {
    const int v = draw_length(l, rng);
    ASSERT_GE(v, 10);
    ASSERT_LE(v, 300);
    sum += v;
  }
  EXPECT_NEAR(sum / 2000, 100, 10);
}

TEST(Requests, ATraceHeaderNamesItsColumnsInAnyOrder) {
  // Columns in another order are read by their names (until 2026-12-05 by position: prompts of
  // 500 and 800 tokens arrived at 500 s and 800 s).
  const std::vector<ServingRequest> t =
      parse_request_trace("prompt_tokens,output_tokens,\"arrival_s\"\n500,100,3\n800,200,5\n", "t.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].arrival, Time::s(3));
  EXPECT_EQ(t[0].prompt, 500);
  EXPECT_EQ(t[0].output, 100);
  EXPECT_EQ(t[1].arrival, Time::s(5));
  // Names it does not know, or one named twice, are refused naming the line.
  const std::string unknown = bad_input_of([] { parse_request_trace("foo,bar,baz\n1,2,3\n", "t.csv"); });
  EXPECT_NE(unknown.find("t.csv:1"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("'foo' is not one"), std::string::npos) << unknown;
  const std::string twice =
      bad_input_of([] { parse_request_trace("arrival_s,arrival_s,output_tokens\n1,2,3\n", "t.csv"); });
  EXPECT_NE(twice.find("'arrival_s' is named twice"), std::string::npos) << twice;
}

// inference.trace_speed replays a trace faster (or slower): its arrivals divided by it, lengths
// and order kept (since 2026-12-07); without a trace it is refused.
TEST(Requests, TraceSpeedScalesTheArrivals) {
  const testing::ScratchDir dir("clustersim_trace_speed");
  ASSERT_TRUE(dir.ok());
  {
    std::ofstream(dir.file("t.csv")) << "arrival_s,prompt_tokens,output_tokens\n0.5,100,10\n3,20,3\n";
  }
  const auto with_speed = [&](const std::string& speed) {
    return make_requests(*serving({"inference.trace=" + dir.file("t.csv"), "inference.trace_speed=" + speed}).inference, "");
  };
  const std::vector<ServingRequest> twice = with_speed("2");
  ASSERT_EQ(twice.size(), 2u);
  EXPECT_EQ(twice[0].arrival, Time::ms(250));
  EXPECT_EQ(twice[1].arrival, Time::ms(1500));
  EXPECT_EQ(twice[1].prompt, 20);
  EXPECT_EQ(with_speed("0.5")[1].arrival, Time::s(6));
  EXPECT_NE(bad_input_of([] { serving({"inference.trace_speed=2"}); })
                .find("inference.trace_speed: replays inference.trace faster or slower"),
            std::string::npos);
  EXPECT_NE(bad_input_of([&] { with_speed("0"); }).find("inference.trace_speed"), std::string::npos);
  EXPECT_NE(bad_input_of([] { serving({"inference.trace_speed=1"}); }).find("inference.trace_speed"), std::string::npos);
  // Slowed past the arrivals' range: said of trace_speed (it ran past the range unchecked).
  {
    std::ofstream(dir.file("late.csv")) << "arrival_s,prompt_tokens,output_tokens\n900000,100,10\n";
  }
  const std::string late = bad_input_of([&] {
    make_requests(*serving({"inference.trace=" + dir.file("late.csv"), "inference.trace_speed=0.5"}).inference, "");
  });
  EXPECT_NE(late.find("inference.trace_speed: the last arrival, 900000 s, is 1.8e+06 s at this speed"), std::string::npos)
      << late;
}

// Compressed or UTF-16 files are named as such, and a bad line is shown cut short with its
// control bytes visible (a gzip file's bytes, a NUL and a 50 KB line were echoed raw until
// 2026-12-07; QA).
TEST(Requests, TraceFilesThatAreNotTextSaySo) {
  EXPECT_NE(bad_input_of([] { parse_request_trace(std::string("\x1f\x8b\x08\x00rest", 8), "t.csv.gz"); })
                .find("t.csv.gz:1: inference.trace: is gzip-compressed"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { parse_request_trace(std::string("\xFF\xFE" "a\0r\0", 6), "t.csv"); }).find("is UTF-16 text"), std::string::npos);
  const std::string nul = bad_input_of([] { parse_request_trace(std::string("1.0\0,100,10\n", 13), "t.csv"); });
  EXPECT_NE(nul.find("got '1.0\\x00,100,10'"), std::string::npos) << nul;
  const std::string long_line = bad_input_of([] { parse_request_trace("1," + std::string(50000, '9') + ",x\n", "t.csv"); });
  EXPECT_NE(long_line.find("... (50004 bytes)"), std::string::npos) << long_line.substr(0, 300);
  // Cut at a character's start: a two-byte 'é' across byte 120 is left out whole.
  const std::string accented =
      bad_input_of([] { parse_request_trace("1," + std::string(118, '9') + "\xC3\xA9x,1\n", "t.csv"); });
  EXPECT_NE(accented.find(std::string(118, '9') + "... ("), std::string::npos) << accented.substr(0, 300);
  EXPECT_LT(long_line.size(), 400u);
}

TEST(Requests, TraceParsesAndRejectsBadLines) {
  const std::vector<ServingRequest> t =
      parse_request_trace("arrival_s,prompt_tokens,output_tokens\n# comment\n0.5,100,10\n0.25, 20, 3\n\n", "t.csv");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].arrival, Time::ms(250));  // sorted by arrival
  EXPECT_EQ(t[0].prompt, 20);
  EXPECT_EQ(t[1].output, 10);
  const std::string bad = bad_input_of([] { parse_request_trace("0.1,100\n", "t.csv"); });
  EXPECT_NE(bad.find("t.csv:1: inference.trace: expected 3 fields, arrival_s,prompt_tokens,output_tokens"),
            std::string::npos)
      << bad;
  EXPECT_NE(bad_input_of([] { parse_request_trace("0.1,0,5\n", "t.csv"); })
                .find("prompt_tokens must be a whole number from 1 to 16777216"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { parse_request_trace("-1,10,5\n", "t.csv"); })
                .find("arrival_s must be a decimal number of seconds in [0, 1e6]"),
            std::string::npos);
  // The field that is wrong is named: a fractional or exponent token count is not a header.
  for (const char* line : {"0.1,100.5,20\n", "0.1,1e2,20\n", "0.1,inf,20\n"}) {
    EXPECT_NE(bad_input_of([line] { parse_request_trace(line, "t.csv"); }).find("prompt_tokens must be a whole number"),
              std::string::npos)
        << line;
  }
  // Quoted numbers are numbers, not a header (double or single quotes, spaces inside).
  for (const char* line : {"\"0.1\",\"100\",\"20\"\n", "'0.1','100','20'\n", "\" 0.1 \",\" 100 \",\" 20 \"\n"}) {
    const std::vector<ServingRequest> quoted = parse_request_trace(line, "t.csv");
    ASSERT_EQ(quoted.size(), 1u) << line;
    EXPECT_EQ(quoted[0].prompt, 100) << line;
  }
  // Line ends of every kind: LF, CRLF and a lone CR (old Mac files, which read as one line of 7
  // fields until 2026-12-05), with the line numbers of the file.
  for (const char* eol : {"\n", "\r\n", "\r"}) {
    const std::string e = eol;
    const std::vector<ServingRequest> lines =
        parse_request_trace("arrival_s,prompt_tokens,output_tokens" + e + "0.5,100,10" + e + "0.25,20,3" + e, "t.csv");
    ASSERT_EQ(lines.size(), 2u) << static_cast<int>(e.size());
    EXPECT_EQ(lines[1].prompt, 100);
    EXPECT_NE(bad_input_of([&] { parse_request_trace("0.5,100,10" + e + "0.1,100" + e, "t.csv"); }).find("t.csv:2:"),
              std::string::npos)
        << static_cast<int>(e.size());
  }
  // Past the clock's range: refused, not saturated into a request that never arrives.
  EXPECT_NE(bad_input_of([] { parse_request_trace("1e7,10,5\n", "t.csv"); }).find("t.csv:1:"), std::string::npos);
  // A header only on the first line: a letter later (a second header, 'nan', junk) is an error.
  EXPECT_NE(bad_input_of([] { parse_request_trace("0.0,512,128\nx,y,z\n", "t.csv"); }).find("t.csv:2:"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { parse_request_trace("arrival,prompt,output\nnan,1,1\n", "t.csv"); }).find("t.csv:2:"),
            std::string::npos);
  // Longer than the context served.
  EXPECT_NE(bad_input_of([] { parse_request_trace("0,4000,128\n", "t.csv", 4096); }).find("over model.seq_len (4096)"),
            std::string::npos);
  EXPECT_EQ(parse_request_trace("0,3968,128\n", "t.csv", 4096).size(), 1u);
  // Spreadsheet CSVs: a byte-order mark, a quoted header, comments before it.
  EXPECT_EQ(parse_request_trace("\xEF\xBB\xBF\"arrival_s\",\"prompt\",\"output\"\n0.1,100,10\n", "t.csv").size(), 1u);
  EXPECT_EQ(parse_request_trace("\xEF\xBB\xBF" "0.1,100,10\n", "t.csv").size(), 1u);
  EXPECT_EQ(parse_request_trace("# made by hand\n\narrival_s,prompt,output\n0.1,100,10\n", "t.csv").size(), 1u);
  // A first line of other than three names is a mistyped request, not a header (it was dropped).
  for (const char* text : {"x\n1,100,10\n", "a,b\n1,100,10\n", "a,b,c,d\n1,100,10\n", "\"0.5\n1,100,10\n"}) {
    EXPECT_NE(bad_input_of([text] { parse_request_trace(text, "t.csv"); }).find("t.csv:1: inference.trace: a header names 3 columns"),
              std::string::npos)
        << text;
  }
  EXPECT_NE(bad_input_of([] { parse_request_trace("nan,1,1\n", "t.csv"); }).find("t.csv:1:"), std::string::npos);
  EXPECT_NE(bad_input_of([] { parse_request_trace("0.1,10,5,7\n", "t.csv"); }).find("expected"), std::string::npos);
  EXPECT_NE(bad_input_of([] { parse_request_trace("# nothing\n", "t.csv"); }).find("no requests"), std::string::npos);
  // Arrivals are decimal numbers: no sign, hexadecimal float or infinity (strtod took all three).
  for (const char* line : {"+1,10,5\n", "-0,10,5\n", "-0.0,10,5\n", "0x1p3,10,5\n", "inf,10,5\n", "1.5s,10,5\n", "1_000,10,5\n"}) {
    EXPECT_NE(bad_input_of([line] { parse_request_trace(line, "t.csv"); }).find("arrival_s must be a decimal number"),
              std::string::npos)
        << line;
  }
  EXPECT_EQ(parse_request_trace(".5,10,5\n1e2,10,5\n", "t.csv").back().arrival, Time::s(100));
  // Poisson arrivals past the clock's range: refused, naming the rate.
  EXPECT_NE(bad_input_of([] {
              make_requests(*serving({"inference.rate_per_s=1e-6", "inference.requests=100"}).inference, "");
            }).find("inference.rate_per_s"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { make_requests(*serving({"inference.trace=/nonexistent/trace.csv"}).inference, ""); })
                .find("/nonexistent/trace.csv: inference.trace: is not a readable file"),
            std::string::npos);
}

// `n` requests of 64 prompt and 1,000 output tokens, `gap_s` apart.
std::vector<ServingRequest> spaced_requests(int n, double gap_s) {
  std::vector<ServingRequest> out(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out[static_cast<size_t>(i)] = {i, Time::s(i * gap_s), 64, 1000};
  return out;
}

TEST(ServingWork, AtLowLoadEveryTokenIsAStep) {
  // kServing: 2 colocated instances, max_batch 64. 500,000 requests 1.9 s apart each decode alone
  // (999 steps of well under a millisecond), so every token is a step: 5e8 / 2 = 2.5e8 an
  // instance, past the 2e8 bound. Counted at full batches it was 5e8 / (64 x 2) = 3.9e6, and
  // such a run passed the guard to take most of an hour (before 2026-12-05).
  const ScenarioConfig cfg = serving();
  const ServingSetup setup = make_serving_setup(cfg);
  const std::vector<ServingRequest> sparse = spaced_requests(500'000, 1.9);
  const DecodeWork w = decode_work(setup, sparse);
  EXPECT_EQ(w.batch, 1);
  EXPECT_DOUBLE_EQ(w.steps, 500'000 * 999 / 2.0);
  EXPECT_NEAR(w.full_batch_steps, 500'000 * 999 / 128.0, 1);
  try {
    check_serving_work(cfg, setup, sparse);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("inference.requests: the requests need about 2.5e+08 decode steps an instance: "
                                         "at this load a step decodes about 1 sequence (max_batch 64)"),
              std::string::npos)
        << e.what();
  }
  // The bound is on the steps of all decoding instances (each instance's step is its own event):
  // 300,000 such requests are 1.5e8 steps an instance, 3e8 in all (before 2026-12-05 the bound was
  // per instance, and a deployment of many instances ran that many times longer).
  const std::vector<ServingRequest> fewer = spaced_requests(300'000, 1.9);
  EXPECT_DOUBLE_EQ(decode_work(setup, fewer).steps, 300'000 * 999 / 2.0);
  EXPECT_THROW(check_serving_work(cfg, setup, fewer), BadInput);
  // The same requests 1,000 times as often share steps.
  const std::vector<ServingRequest> dense = spaced_requests(500'000, 0.0019);
  const DecodeWork d = decode_work(setup, dense);
  EXPECT_GT(d.batch, 1);
  EXPECT_LT(d.steps, w.steps / 10);
  EXPECT_NO_THROW(check_serving_work(cfg, setup, dense));
}

// A decoding instance holds no more sequences than its KV cache reserves whole requests for (2026-12-06
// QA: max_batch alone was counted, and a cache that held one request let through a run of 2.4e8
// steps that max_batch 1 refused). kServing with 2 MiB of KV per GPU: 1,024 tokens a replica, 4
// replicas an instance; requests of 24 + 1,000 tokens: 4 sequences an instance, not max_batch 64.
TEST(ServingWork, TheKvCacheCapsTheBatchItCounts) {
  const ScenarioConfig cfg = serving({"inference.kv_cache_per_gpu=2MiB", "inference.max_batch=64"});
  const ServingSetup setup = make_serving_setup(cfg);
  std::vector<ServingRequest> burst = spaced_requests(900'000, 0.0);
  for (ServingRequest& r : burst) r.prompt = 24;
  const DecodeWork w = decode_work(setup, burst);
  EXPECT_TRUE(w.kv_bound);
  EXPECT_DOUBLE_EQ(w.batch_cap, 4.0);
  EXPECT_LE(w.batch, 4);
  EXPECT_DOUBLE_EQ(w.full_batch_steps, 900'000 * 999 / 8.0);
  try {
    check_serving_work(cfg, setup, burst);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("over a batch of at most 4, what the KV cache holds of whole requests "
                                         "(max_batch 64) x 2 decoding instances"),
              std::string::npos)
        << e.what();
  }
  // Whole requests a replica: 1,024 tokens hold one of 600 (not 1.7), four an instance.
  std::vector<ServingRequest> mid = spaced_requests(10, 0.0);
  for (ServingRequest& r : mid) {
    r.prompt = 100;
    r.output = 500;
  }
  EXPECT_DOUBLE_EQ(decode_work(setup, mid).batch_cap, 4.0);
  // Mixed lengths share a replica where short: the mean's ratio unrounded (mean 600: 4 x 1024/600).
  for (size_t i = 0; i < mid.size(); i += 2) mid[i].output = 100;  // 200 tokens
  for (size_t i = 1; i < mid.size(); i += 2) mid[i].output = 900;  // 1,000 tokens
  EXPECT_NEAR(decode_work(setup, mid).batch_cap, 4.0 * 1024 / 600, 1e-9);
  // Without the small cache max_batch sets the count, as before.
  const DecodeWork roomy = decode_work(make_serving_setup(serving({"inference.max_batch=64"})), burst);
  EXPECT_FALSE(roomy.kv_bound);
  EXPECT_DOUBLE_EQ(roomy.batch_cap, 64.0);
}

TEST(ServingWork, PromptsCountTheirPrefillSteps) {
  // A replica prefills at most max_prefill_tokens a step (kServing: 4 attention replicas an
  // instance): 1,000 requests of 64 prompt tokens at one token a step take 16,000 steps between
  // the instances, whatever the decode (before
  // 2026-12-05 only decode steps were counted, and a million 1,000-token prompts at one token a
  // step passed the guard to run for most of an hour).
  const ScenarioConfig small = serving({"inference.max_prefill_tokens=1", "inference.chunked_prefill=true"});
  const ServingSetup setup = make_serving_setup(small);
  EXPECT_NO_THROW(check_serving_work(small, setup, spaced_requests(1'000, 0.0019)));
  std::vector<ServingRequest> long_prompts = spaced_requests(1'000, 0.0019);
  for (ServingRequest& r : long_prompts) r.prompt = 1'000'000;  // 1e9 prompt tokens: 2.5e8 steps
  try {
    check_serving_work(small, setup, long_prompts);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("inference.requests: the prompts need at least 2.5e+08 prefill steps in all "
                                         "(1e+09 prompt tokens over max_prefill_tokens 1, over 4 attention replicas "
                                         "an instance)"),
              std::string::npos)
        << e.what();
  }
  // A larger budget takes them in fewer steps.
  const ScenarioConfig wide = serving({"inference.max_prefill_tokens=8192"});
  EXPECT_NO_THROW(check_serving_work(wide, make_serving_setup(wide), long_prompts));
  // Without chunked prefill a prompt longer than the budget runs whole in one step: 1,000 steps
  // (until 2026-12-05 counted as its tokens over the budget and refused).
  const ScenarioConfig whole = serving({"inference.max_prefill_tokens=1", "inference.chunked_prefill=false"});
  EXPECT_NO_THROW(check_serving_work(whole, make_serving_setup(whole), long_prompts));
}

TEST(ServingSim, ColocatedCompletesEveryRequest) {
  const ServingResult r = simulate(serving());
  expect_no_request_lost(r);
  for (const RequestOutcome& o : r.requests) EXPECT_TRUE(o.completed);
  EXPECT_GT(r.decode_steps, 0);
  EXPECT_LE(r.pools[0].max_batch_seen, 64);
}

TEST(ServingSim, KvCacheLimitCapsTheBatch) {
  // 2 MiB of KV per GPU; tp 2 holds 2 of 4 KV heads: 2048 bytes per token per GPU, so 1024
  // tokens per replica and 4 replicas per instance: 4096 tokens. Requests of 256 + 256 = 512
  // tokens: two per replica, at most 8 sequences per instance, whatever max_batch allows.
  // Requests of 300 + 300 = 600: the instance's 4096 would hold 6, but a request's KV cannot be
  // split over replicas and each holds one: 4.
  for (const auto& [length, most] : {std::pair{256, 8}, std::pair{300, 4}}) {
    const std::string fixed = "{dist: fixed, mean: " + std::to_string(length) + "}";
    const ServingResult r = simulate(serving({"inference.kv_cache_per_gpu=2MiB", "inference.max_batch=64",
                                              "inference.prompt_tokens=" + fixed, "inference.output_tokens=" + fixed}));
    expect_no_request_lost(r);
    EXPECT_EQ(r.pools[0].kv_tokens_per_instance, 4096);
    EXPECT_EQ(r.pools[0].max_batch_seen, most) << length;
  }
  // With room for 32 sequences, the batch grows past 8.
  const ServingResult roomy = simulate(serving({"inference.kv_cache_per_gpu=8MiB", "inference.max_batch=64",
                                                "inference.prompt_tokens={dist: fixed, mean: 256}",
                                                "inference.output_tokens={dist: fixed, mean: 256}"}));
  EXPECT_GT(roomy.pools[0].max_batch_seen, 8);
}

TEST(ServingSim, RequestTooLongForTheKvCacheIsRejectedNotLost) {
  const ScenarioConfig cfg = serving({"inference.kv_cache_per_gpu=1MiB",  // 512 tokens per replica
                                      "inference.prompt_tokens={dist: fixed, mean: 100}",
                                      "inference.output_tokens={dist: fixed, mean: 10}"});
  std::vector<ServingRequest> reqs = {{0, Time::zero(), 100, 10}, {1, Time::ms(1), 600, 10}, {2, Time::ms(2), 200, 5}};
  const ServingResult r = simulate(cfg, reqs);
  expect_no_request_lost(r);
  EXPECT_TRUE(r.requests[0].completed);
  EXPECT_TRUE(r.requests[1].rejected);
  EXPECT_TRUE(r.requests[2].completed);
}

TEST(ServingSim, ARequestGoesToAnIdleInstanceNotOneBusyWithAPrefill) {
  // Two long prompts 1 ns apart on 2 instances: the second one's prefill runs beside the first's
  // on the idle instance, so both wait one prefill (before 2026-11-22 an instance whose only work
  // was a prefill in flight looked idle, and the second prompt queued behind the first).
  const ScenarioConfig cfg = serving({"inference.prompt_tokens={dist: fixed, mean: 1900}",
                                      "inference.output_tokens={dist: fixed, mean: 2}"});
  const std::vector<ServingRequest> reqs = {{0, Time::zero(), 1900, 2}, {1, Time::ns(1), 1900, 2}};
  const ServingResult r = simulate(cfg, reqs);
  expect_no_request_lost(r);
  const Time first = r.requests[0].first_token - r.requests[0].arrival;
  const Time second = r.requests[1].first_token - r.requests[1].arrival;
  EXPECT_NEAR(second / first, 1.0, 0.01) << first.as_s() << " s, " << second.as_s() << " s";
}

TEST(ServingSim, RequestsArrivingTogetherShareTheirFirstStep) {
  // 16 short prompts at t = 0 on 2 instances: each instance prefills its 8 in one step (before
  // 2026-12-05 the first arrival started a step alone and the rest waited for it).
  const ScenarioConfig cfg = serving({"inference.prompt_tokens={dist: fixed, mean: 100}",
                                      "inference.output_tokens={dist: fixed, mean: 4}"});
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 16; ++i) reqs.push_back({i, Time::zero(), 100, 4});
  const ServingResult r = simulate(cfg, reqs);
  expect_no_request_lost(r);
  std::set<int64_t> first_tokens;
  for (const RequestOutcome& o : r.requests) first_tokens.insert(o.first_token.as_ps());
  EXPECT_EQ(first_tokens.size(), 1u);
}

// inference.chunked_prefill: a 1,900-token prompt with a 512-token budget is processed as 512,
// 512, 512 and 364 tokens in four steps, its first token after the fourth; the steps' prompt
// tokens add up to the prompt, and the chunks' attention pairs to the whole prompt's.
TEST(ServingSim, ChunkedPrefillSplitsALongPromptOverSteps) {
  const std::vector<ServingRequest> one = {{0, Time::zero(), 1900, 3}};
  const std::vector<std::string> base = {"inference.pools.colocated.gpus=8", "inference.max_prefill_tokens=512",
                                         "inference.prompt_tokens={dist: fixed, mean: 1900}",
                                         "inference.output_tokens={dist: fixed, mean: 3}"};
  std::vector<std::string> chunked = base;
  chunked.push_back("inference.chunked_prefill=true");
  const ServingResult whole = simulate(serving(base), one);
  const ServingResult parts = simulate(serving(chunked), one);
  expect_no_request_lost(parts);
  std::vector<int64_t> tokens;
  for (const TracedStep& st : parts.trace.steps) {
    if (st.prefill_tokens > 0) tokens.push_back(st.prefill_tokens);
  }
  EXPECT_EQ(tokens, (std::vector<int64_t>{512, 512, 512, 364}));
  ASSERT_EQ(whole.trace.steps.size(), 3u);  // the prompt alone, then two decode steps
  EXPECT_EQ(whole.trace.steps[0].prefill_tokens, 1900);
  // Four partial passes take longer than the one whole pass (launches, weights read four times).
  EXPECT_GT(parts.requests[0].first_token, whole.requests[0].first_token);
  StepLoad all, sum;
  all.add_prefill(1900);
  for (int64_t done = 0, k = 0; done < 1900; done += tokens[static_cast<size_t>(k++)]) {
    sum.add_prefill_chunk(done, tokens[static_cast<size_t>(k)]);
  }
  EXPECT_DOUBLE_EQ(sum.prefill_pairs, all.prefill_pairs);
  EXPECT_EQ(sum.prefill_tokens, all.prefill_tokens);
}

// The budget counts the step's decode tokens (as vLLM's and TensorRT-LLM's do), so a long prompt
// arriving while others decode cannot stretch their steps: their slowest token comes sooner than
// when the whole prompt runs in one step beside them.
TEST(ServingSim, ChunkedPrefillBoundsTheDecodersStepWhileALongPromptArrives) {
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 8; ++i) reqs.push_back({i, Time::zero(), 64, 100});
  reqs.push_back({8, Time::ms(20), 1900, 2});
  // One instance of one attention replica (tp 2 = ep 2), so one budget holds every sequence.
  const std::vector<std::string> base = {"inference.pools.colocated.gpus=2", "inference.pools.colocated.ep=2",
                                         "inference.max_prefill_tokens=256",
                                         "inference.prompt_tokens={dist: uniform, min: 64, max: 1900}",
                                         "inference.output_tokens={dist: uniform, min: 2, max: 100}"};
  std::vector<std::string> chunked = base;
  chunked.push_back("inference.chunked_prefill=true");
  Time longest[2];
  for (int c = 0; c < 2; ++c) {
    const ServingResult r = simulate(serving(c ? chunked : base), reqs);
    expect_no_request_lost(r);
    for (const TracedStep& st : r.trace.steps) {
      if (st.decode_seqs > 0) longest[c] = max(longest[c], st.end - st.start);
      if (c == 1) {
        EXPECT_LE(st.prefill_tokens + st.decode_seqs, 256);
      }
    }
  }
  EXPECT_LT(longest[1], longest[0]);
}

// The prefill budget is each data-parallel attention replica's: one instance of 4 replicas (tp 2,
// ep 8) with a 512-token budget prefills eight 400-token prompts arriving together in two steps,
// four at a time, one a replica (until 2026-12-05 the instance's one budget took them one a step,
// eight steps).
TEST(ServingSim, EachAttentionReplicaHasItsOwnPrefillBudget) {
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 8; ++i) reqs.push_back({i, Time::zero(), 400, 2});
  const ServingResult r = simulate(serving({"inference.pools.colocated.gpus=8", "inference.max_prefill_tokens=512",
                                            "inference.prompt_tokens={dist: fixed, mean: 400}",
                                            "inference.output_tokens={dist: fixed, mean: 2}"}),
                                   reqs);
  expect_no_request_lost(r);
  std::set<int64_t> first_tokens;
  for (const RequestOutcome& o : r.requests) first_tokens.insert(o.first_token.as_ps());
  EXPECT_EQ(first_tokens.size(), 2u);
  std::vector<int64_t> prefill_steps;
  for (const TracedStep& st : r.trace.steps) {
    if (st.prefill_seqs > 0) prefill_steps.push_back(st.prefill_seqs);
  }
  EXPECT_EQ(prefill_steps, (std::vector<int64_t>{4, 4}));
}

TEST(ServingSim, SameSeedSameMetrics) {
  for (const char* mode : {"colocated", "prefill_decode", "attention_ffn"}) {
    std::vector<std::string> o;
    if (std::string(mode) == "prefill_decode") {
      o = {"inference.mode=prefill_decode", "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"};
    } else if (std::string(mode) == "attention_ffn") {
      o = {"inference.mode=attention_ffn", "inference.micro_batches=2",
           "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"};
    }
    const ServingResult a = simulate(serving(o));
    const ServingResult b = simulate(serving(o));
    ASSERT_EQ(a.requests.size(), b.requests.size());
    for (size_t i = 0; i < a.requests.size(); ++i) {
      EXPECT_EQ(a.requests[i].first_token, b.requests[i].first_token) << mode << i;
      EXPECT_EQ(a.requests[i].finish, b.requests[i].finish) << mode << i;
    }
    EXPECT_EQ(a.decode_step_sum.total, b.decode_step_sum.total) << mode;
    // A different seed gives different arrivals.
    o.push_back("inference.seed=8");
    EXPECT_NE(simulate(serving(o)).requests[0].arrival, a.requests[0].arrival) << mode;
  }
}

TEST(ServingSim, PrefillDecodeSendsEveryKvCache) {
  const ScenarioConfig cfg = serving({"inference.mode=prefill_decode",
                                      "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"});
  const ServingResult r = simulate(cfg);
  expect_no_request_lost(r);
  int64_t multi = 0;
  for (const RequestOutcome& o : r.requests) multi += o.output > 1 ? 1 : 0;
  EXPECT_EQ(r.kv_transfers, multi);  // one per request (its tp 2 shards together)
  EXPECT_EQ(r.pools.size(), 2u);
  EXPECT_GT(r.pools[1].steps, 0);
  // Each KV cache goes to one decode replica (the one with the fewest tokens held and coming) and
  // is admitted there: with 1,024 tokens per replica and 600-token requests, at most one per
  // replica, 4 per decode instance, however many arrive at once.
  const ServingResult tight = simulate(serving({"inference.mode=prefill_decode", "inference.kv_cache_per_gpu=2MiB",
                                                "inference.prompt_tokens={dist: fixed, mean: 300}",
                                                "inference.output_tokens={dist: fixed, mean: 300}",
                                                "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"}));
  expect_no_request_lost(tight);
  EXPECT_EQ(tight.pools[1].max_batch_seen, 4);
}

// Each decode rank receives the KV heads it holds: 4 KV heads over decode tp 8 put each head on
// two ranks, which each get a copy, twice the bytes of decode tp 4 for the same requests.
TEST(ServingSim, ReplicatedKvHeadsAreSentToEachRankHoldingThem) {
  const auto pd = [](int decode_tp) {
    return simulate(serving({"inference.mode=prefill_decode",
                             "inference.pools={prefill: {gpus: 8, tp: 1, ep: 8}, decode: {gpus: 8, tp: " +
                                 std::to_string(decode_tp) + ", ep: 8}}"}));
  };
  const ServingResult once = pd(4), twice = pd(8);
  ASSERT_GT(once.kv_transfers, 0);
  ASSERT_EQ(once.kv_transfers, twice.kv_transfers);
  EXPECT_EQ(twice.kv_transfer_bytes.n, 2 * once.kv_transfer_bytes.n);
}

// Prefill/decode on 8 + 8 GPUs (tp 2, ep 8) with fixed 300-token prompts, and `extra` overrides.
ServingResult simulate_pd(std::vector<std::string> extra) {
  std::vector<std::string> o = {"inference.mode=prefill_decode", "inference.prompt_tokens={dist: fixed, mean: 300}",
                                "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"};
  o.insert(o.end(), extra.begin(), extra.end());
  return simulate(serving(o));
}

// The requests whose KV caches the decode instance of `k` holds when `k` is sent: sent to it by
// then and not finished (k's own included).
int held_at_send(const ServingResult& r, const TracedKvTransfer& k) {
  int held = 0;
  for (const TracedKvTransfer& o : r.trace.kv) {
    const Time finish = r.requests[static_cast<size_t>(o.request)].finish;
    if (o.to_instance == k.to_instance && o.sent <= k.sent && finish > k.sent) ++held;
  }
  return held;
}

// The decode side reserves a request's KV cache before it is sent, and the prefill side holds it
// until it arrives: at no time does a decode instance have more caches sent to it and unfinished
// than it holds (600-token requests, 1,024 tokens per replica, 4 replicas per instance). Before
// 2026-12-04 a sent cache was held by neither side until decode admitted it: every prefilled
// request's cache was in flight at once, and TTFT ignored a full decode pool.
TEST(ServingSim, PrefillDecodeSendsAKvCacheOnlyWhereThereIsRoom) {
  const ServingResult r = simulate_pd({"inference.kv_cache_per_gpu=2MiB", "inference.output_tokens={dist: fixed, mean: 300}"});
  expect_no_request_lost(r);
  ASSERT_GT(r.trace.kv.size(), 50u);
  for (const TracedKvTransfer& k : r.trace.kv) EXPECT_LE(held_at_send(r, k), 4) << "request " << k.request;
}

// A decode instance takes a KV cache only with a batch slot for it (max_batch), as it takes one only
// with KV room: a decode engine pulls a cache when it schedules the request, so the wait for a
// slot is TTFT's. Until 2026-12-06 the cache landed, the first token was stamped, and the request
// waited for a slot inside TPOT: Llama 3.1 8B, 8 + 8 H100s, max_batch 4 read TPOT 70.6 ms against
// a 6.2 ms step and TTFT 61 ms, where the same limit set by KV memory read 6.2 ms and 13 s.
TEST(ServingSim, PrefillDecodeSendsAKvCacheOnlyWithABatchSlot) {
  const ServingResult r = simulate_pd({"inference.max_batch=2", "inference.output_tokens={dist: fixed, mean: 30}"});
  expect_no_request_lost(r);
  ASSERT_GT(r.trace.kv.size(), 50u);
  int waited = 0;
  for (const TracedKvTransfer& k : r.trace.kv) {
    EXPECT_LE(held_at_send(r, k), 2) << "request " << k.request;
    waited += r.requests[static_cast<size_t>(k.request)].kv_wait_for_room > Time::zero() ? 1 : 0;
  }
  EXPECT_GT(waited, 10);
}

// A pool's own max_batch caps its instances' steps, where inference.max_batch caps the others'
// (since 2026-12-07: one limit for prefill and decode pools alike; QA).
TEST(ServingSim, APoolsOwnMaxBatchCapsItsSteps) {
  const ServingResult r = simulate_pd({"inference.max_batch=64", "inference.pools.decode.max_batch=3",
                                       "inference.output_tokens={dist: fixed, mean: 30}"});
  expect_no_request_lost(r);
  ASSERT_EQ(r.pools.size(), 2u);
  EXPECT_EQ(r.pools[0].max_batch, 64);
  EXPECT_EQ(r.pools[1].max_batch, 3);
  EXPECT_EQ(r.pools[1].max_batch_seen, 3);
  for (const TracedKvTransfer& k : r.trace.kv) EXPECT_LE(held_at_send(r, k), 3) << "request " << k.request;
}

// Each moved KV cache reports how long it waited for decode room after its prefill and how long
// its transfer took, as its trace span shows them; with room for one request per replica the
// later ones wait. The first token reaches the client when the cache has landed, after both
// (neither was reported before 2026-12-06, and TTFT stopped at the prefill's end).
TEST(ServingSim, AMovedKvCacheReportsItsWaitAndItsTransfer) {
  const ServingResult r = simulate(serving({"inference.mode=prefill_decode", "inference.kv_cache_per_gpu=2MiB",
                                            "inference.prompt_tokens={dist: fixed, mean: 300}",
                                            "inference.output_tokens={dist: fixed, mean: 300}",
                                            "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"}));
  ASSERT_GT(r.trace.kv.size(), 50u);
  int waited = 0;
  for (const TracedKvTransfer& k : r.trace.kv) {
    const RequestOutcome& o = r.requests[static_cast<size_t>(k.request)];
    ASSERT_TRUE(o.kv_moved);
    EXPECT_EQ(o.kv_transfer, k.arrived - k.sent) << k.request;
    EXPECT_GT(o.kv_transfer, Time::zero()) << k.request;
    EXPECT_EQ(o.first_token, k.arrived) << k.request;
    EXPECT_GE(o.kv_wait_for_room, Time::zero()) << k.request;
    EXPECT_LE(o.kv_wait_for_room, k.sent - o.arrival) << k.request;
    waited += o.kv_wait_for_room > Time::zero() ? 1 : 0;
  }
  EXPECT_GT(waited, 10);
  int64_t moved = 0;
  for (const RequestOutcome& o : r.requests) moved += o.kv_moved ? 1 : 0;
  EXPECT_EQ(moved, r.kv_transfers);
}

// At a level that shares bandwidth each KV shard's flow events reprice those in flight: where
// the NICs cannot carry the caches the sum grows with the square of the requests, and past the
// bound no more are sent and the run is refused with the figures (2026-12-06 QA: infer-pd on 10
// Gbps NICs took 105 s for 30,000 requests, a million would have run for hours).
TEST(ServingSim, KvTransfersPastTheFlowWorkBoundAreRefused) {
  const ScenarioConfig cfg = serving({"inference.mode=prefill_decode", "cluster.nic_bandwidth=10Gbps", "network.fidelity=flow",
                                      "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"});
  const ServingResult r = run_serving(cfg);
  EXPECT_FALSE(r.kv_flow_work_exceeded);
  EXPECT_GT(r.kv_flow_work, 0);
  const double limit = r.kv_flow_work / 4;
  try {
    run_serving(cfg, limit);
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("inference.requests: the KV transfers outrun the network: at the flow level"),
              std::string::npos)
        << e.what();
  }
}

// A slower network delays the first token of a disaggregated deployment by what it adds to the
// KV transfers (TTFT did not move with the network before 2026-12-06).
TEST(ServingSim, PrefillDecodeTtftCountsTheKvTransfer) {
  const auto mean_ttft_and_transfer = [](const char* nic) {
    const ServingResult r = run_serving(serving({"inference.mode=prefill_decode", std::string("cluster.nic_bandwidth=") + nic,
                                                 "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"}));
    double ttft = 0, transfer = 0;
    int n = 0;
    for (const RequestOutcome& o : r.requests) {
      if (!o.kv_moved) continue;
      ttft += (o.first_token - o.arrival).as_s();
      transfer += o.kv_transfer.as_s();
      ++n;
    }
    return std::pair{ttft / n, transfer / n};
  };
  const auto [fast_ttft, fast_transfer] = mean_ttft_and_transfer("400Gbps");
  const auto [slow_ttft, slow_transfer] = mean_ttft_and_transfer("10Gbps");
  ASSERT_GT(slow_transfer, fast_transfer * 4);
  EXPECT_GT(slow_ttft - fast_ttft, 0.5 * (slow_transfer - fast_transfer));
}

// A prefilled request goes to a decode instance with room for its KV cache when the least loaded
// one has none: a short request behind a long one that fills instance 0 decodes on instance 1 at
// once (it queued behind the long one before, until that finished).
TEST(ServingSim, APrefilledRequestGoesWhereItsKvCacheFits) {
  const ScenarioConfig cfg = serving({"inference.mode=prefill_decode", "inference.kv_cache_per_gpu=2MiB", "cluster.gpus=24",
                                      "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 16, tp: 8, ep: 8}}"});
  const ServingSetup setup = make_serving_setup(cfg);
  ASSERT_EQ(setup.pools[1].instances, 2);
  ASSERT_EQ(setup.pools[1].attention_replicas, 1);
  const int64_t room = setup.pools[1].kv_tokens_per_replica;
  const int prompt = static_cast<int>(std::min<int64_t>(room / 2, setup.pools[0].kv_tokens_per_replica));
  ASSERT_GT(prompt, 16);
  const int output = static_cast<int>(room - prompt);  // fills a decode replica exactly
  // The long one decodes on instance 0 by 20 ms; the second short one ties the first's load on
  // instance 1 and, before, went to the lower index and queued.
  std::vector<ServingRequest> requests = {{0, Time::zero(), prompt, output},
                                          {1, Time::ms(20), 16, 200},
                                          {2, Time::ms(21), 16, 4}};
  const ServingResult r = simulate(cfg, requests);
  expect_no_request_lost(r);
  // The short ones finish long before the long one, which decodes its output a token a step.
  EXPECT_LT(r.requests[2].finish, r.requests[0].finish);
  EXPECT_LT((r.requests[2].finish - r.requests[2].arrival).as_s(), 0.1 * (r.requests[0].finish - r.requests[0].arrival).as_s());
}

// Concurrent KV transfers through one NIC share it at the analytical level too (it prices each
// shard on an idle fabric): 8 prefill GPUs behind one 10G NIC send 8 caches at once, which take
// at least their bytes over the NIC's line rate, as at the flow level. Before 2026-12-04 each
// transfer had the whole NIC: 8x too fast.
TEST(ServingSim, ConcurrentKvTransfersShareTheirNicAtBothLevels) {
  std::map<std::string, Time> span;
  for (const char* fidelity : {"analytical", "flow"}) {
    const ScenarioConfig cfg = serving(
        {"inference.mode=prefill_decode", std::string("network.fidelity=") + fidelity, "cluster.nics_per_node=1",
         "cluster.nic_bandwidth=10Gbps", "inference.requests=8", "inference.rate_per_s=1e6",
         "inference.prompt_tokens={dist: fixed, mean: 1000}", "inference.output_tokens={dist: fixed, mean: 4}",
         "inference.pools={prefill: {gpus: 8, tp: 1, ep: 1}, decode: {gpus: 8, tp: 8, ep: 8}}"});
    const ServingResult r = run_serving(cfg);
    ASSERT_EQ(r.trace.kv.size(), 8u) << fidelity;
    Time first = r.trace.kv[0].sent, last = r.trace.kv[0].arrived;
    double bytes = 0;
    for (const TracedKvTransfer& k : r.trace.kv) {
      first = min(first, k.sent);
      last = max(last, k.arrived);
      bytes += static_cast<double>(k.bytes.n);
    }
    span[fidelity] = last - first;
    EXPECT_GE(span[fidelity].as_s(), 0.99 * bytes / (10e9 / 8)) << fidelity;
  }
  EXPECT_NEAR(span["analytical"] / span["flow"], 1.0, 0.1);
}

// A KV cache leaving one prefill GPU (tp 1) for 4 decode GPUs leaves through that GPU's NIC:
// sharded 4 ways (one per KV head, none replicated) it is no faster, at the analytical level (each shard priced on an idle fabric:
// before, 8 shards made it 8x faster than the NIC) as at the flow level.
TEST(ServingSim, KvShardsFromOneGpuShareItsNic) {
  for (const char* fidelity : {"analytical", "flow"}) {
    std::vector<Time> took;
    for (const char* decode_tp : {"1", "4"}) {
      const ScenarioConfig cfg = serving(
          {"inference.mode=prefill_decode", std::string("network.fidelity=") + fidelity,
           "inference.requests=4", "inference.rate_per_s=1", "inference.prompt_tokens={dist: fixed, mean: 1000}",
           std::string("inference.pools={prefill: {gpus: 8, tp: 1, ep: 1}, decode: {gpus: 8, tp: ") + decode_tp +
               ", ep: 8}}"});
      const ServingResult r = run_serving(cfg);
      ASSERT_FALSE(r.trace.kv.empty()) << fidelity;
      took.push_back(r.trace.kv[0].arrived - r.trace.kv[0].sent);
    }
    // Band 5%: the shards to the other rails' GPUs cross the spine, a few microseconds more.
    EXPECT_NEAR(took[1].as_s(), took[0].as_s(), 0.05 * took[0].as_s()) << fidelity;
  }
}

TEST(ServingSim, KvShardsOfOneNodeShareItsNicAtBothLevels) {
  // tp 8 to tp 8 across nodes: 8 shards over 8 NICs, or all through one: several times as long
  // (8x the bytes term, the same latency), at the analytical level as at the flow level (before
  // 2026-11-22 the analytical level, which prices each shard alone, saw 8 NICs always).
  std::map<std::string, std::vector<Time>> took;
  for (const char* fidelity : {"analytical", "flow"}) {
    for (const char* nics : {"8", "1"}) {
      const ScenarioConfig cfg = serving(
          {"inference.mode=prefill_decode", std::string("network.fidelity=") + fidelity,
           std::string("cluster.nics_per_node=") + nics, "inference.requests=1",
           "inference.prompt_tokens={dist: fixed, mean: 1000}",
           "inference.pools={prefill: {gpus: 8, tp: 8, ep: 8}, decode: {gpus: 8, tp: 8, ep: 8}}",
           "inference.moe.experts=8"});
      const ServingResult r = run_serving(cfg);
      ASSERT_FALSE(r.trace.kv.empty()) << fidelity;
      took[fidelity].push_back(r.trace.kv[0].arrived - r.trace.kv[0].sent);
    }
  }
  EXPECT_GT(took["flow"][1] / took["flow"][0], 5.0);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(took["analytical"][i] / took["flow"][i], 1.0, 0.05) << i;
}

TEST(ServingSim, KvShardsSharingANicTakeTheirOwnSlowFabricLinks) {
  // tp 4 to tp 8 over 50 Gbps switch links: two shards leave each prefill GPU's NIC (400 Gbps)
  // and take a switch link each. The analytical level charges the NIC for both and each link for
  // one, as the flow level shares them (before 2026-11-22 it charged both on one link: 2x slow).
  std::map<std::string, Time> took;
  for (const char* fidelity : {"analytical", "flow"}) {
    const ScenarioConfig cfg = serving(
        {"inference.mode=prefill_decode", std::string("network.fidelity=") + fidelity, "network.fabric_bandwidth=50Gbps",
         "inference.requests=1", "inference.prompt_tokens={dist: fixed, mean: 1000}",
         "inference.pools={prefill: {gpus: 8, tp: 4, ep: 8}, decode: {gpus: 8, tp: 8, ep: 8}}"});
    const ServingResult r = run_serving(cfg);
    ASSERT_FALSE(r.trace.kv.empty()) << fidelity;
    took[fidelity] = r.trace.kv[0].arrived - r.trace.kv[0].sent;
  }
  EXPECT_NEAR(took["analytical"] / took["flow"], 1.0, 0.1);
}

// The run lasts until its last event, a rejection included: a rejected last arrival left
// duration_s shorter than the arrival window until 2026-12-06.
TEST(ServingSim, ARejectedLastArrivalEndsTheRun) {
  const ScenarioConfig cfg = serving({"inference.kv_cache_per_gpu=1MiB", "inference.prompt_tokens={dist: fixed, mean: 30}",
                                      "inference.output_tokens={dist: fixed, mean: 20}"});
  // The cache holds 512 tokens a replica: the second request's 1,000-token prompt never fits.
  std::vector<ServingRequest> requests = {{0, Time::s(0), 30, 20}, {1, Time::s(5), 1000, 20}};
  const ServingResult r = simulate(cfg, requests);
  ASSERT_TRUE(r.requests[0].completed);
  ASSERT_TRUE(r.requests[1].rejected);
  EXPECT_GE(r.last_finish, Time::s(5));
}

TEST(ServingSim, AttentionFfnUsesBothPools) {
  const ScenarioConfig cfg = serving({"inference.mode=attention_ffn", "inference.micro_batches=3",
                                      "inference.pools={attention: {gpus: 8, tp: 2}, expert: {gpus: 8}}"});
  const ServingResult r = simulate(cfg);
  expect_no_request_lost(r);
  EXPECT_EQ(r.micro_batches, 3);
  EXPECT_GT(r.pools[1].compute_busy, Time::zero());
  // The expert pool serves the attention pool's batches (its largest was reported 0 before 2026-12-04).
  EXPECT_GT(r.pools[1].max_batch_seen, 0);
  EXPECT_EQ(r.pools[1].max_batch_seen, r.pools[0].max_batch_seen);
  EXPECT_EQ(r.decode_step_sum.attention + r.decode_step_sum.ffn + r.decode_step_sum.communication +
                r.decode_step_sum.idle,
            r.decode_step_sum.total);
}

// Ping-pong micro-batches split each attention replica's own sequences: with 8 replicas of 8
// sequences each, a micro-batch of m = 4 holds 2 of every replica's, and its attention runs 2
// sequences, not 8. Until 2026-12-06 the step's list was dealt in turn over the micro-batches, and
// admission deals requests over the replicas in turn too: micro-batch 0 held all of replicas 0
// and 4's, and each micro-batch took as long as the whole step's attention at m = 1.
TEST(ServingSim, PingPongMicroBatchesSplitEachReplicasSequences) {
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 64; ++i) reqs.push_back({i, Time::zero(), 256, 32});
  std::map<int, Time> attention;  // the longest attention span of a decode step, by m
  for (int m : {1, 4}) {
    const ScenarioConfig cfg = serving({"inference.mode=attention_ffn", "inference.micro_batches=" + std::to_string(m),
                                        "inference.pools={attention: {gpus: 8, tp: 1}, expert: {gpus: 8}}",
                                        "inference.prompt_tokens={dist: fixed, mean: 256}",
                                        "inference.output_tokens={dist: fixed, mean: 32}"});
    const ServingResult r = simulate(cfg, reqs);
    expect_no_request_lost(r);
    for (const TracedStep& st : r.trace.steps) {
      if (st.decode_seqs != 64) continue;
      for (const StepSpan& sp : st.detail) {
        if (sp.part == StepPart::kAttention) attention[m] = max(attention[m], sp.end - sp.start);
      }
    }
    ASSERT_GT(attention[m], Time::zero()) << m;
  }
  EXPECT_LT(attention[4], attention[1]);
}

// Replicas with fewer sequences than micro-batches fill them evenly: 8 replicas of one sequence
// each and m = 8 give one sequence to every micro-batch, not all 8 to the first.
TEST(ServingSim, PingPongMicroBatchesSpreadFewSequencesEvenly) {
  std::vector<ServingRequest> reqs;
  for (int i = 0; i < 8; ++i) reqs.push_back({i, Time::zero(), 256, 16});
  const ScenarioConfig cfg = serving({"inference.mode=attention_ffn", "inference.micro_batches=8",
                                      "inference.pools={attention: {gpus: 8, tp: 1}, expert: {gpus: 8}}",
                                      "inference.prompt_tokens={dist: fixed, mean: 256}",
                                      "inference.output_tokens={dist: fixed, mean: 16}"});
  const ServingResult r = simulate(cfg, reqs);
  expect_no_request_lost(r);
  bool seen = false;
  for (const TracedStep& st : r.trace.steps) {
    if (st.decode_seqs != 8 || st.detail.empty()) continue;
    std::set<int> micro_batches;  // those with an FFN span: a micro-batch with tokens
    for (const StepSpan& sp : st.detail) {
      if (sp.part == StepPart::kFfn) micro_batches.insert(sp.micro_batch);
    }
    EXPECT_EQ(micro_batches.size(), 8u);
    seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST(ServingSetup, TensorParallelGroupsStayInsideANode) {
  // tp 4 on 6-GPU nodes: the second group would run on GPUs 4-7, across nodes 0 and 1.
  const std::string msg = bad_input_of([] {
    make_serving_setup(serving({"cluster.gpus=12", "cluster.gpus_per_node=6", "cluster.nics_per_node=6", "inference.pools.colocated.gpus=12",
                                "inference.pools.colocated.tp=4", "inference.pools.colocated.ep=4"}));
  });
  EXPECT_NE(msg.find("inference.pools.colocated.tp: its tensor-parallel group on GPUs 4-7 would span nodes 0 and 1"),
            std::string::npos)
      << msg;
  // tp 2 groups at 0, 2, 4, ... each fit a node.
  EXPECT_NO_THROW(make_serving_setup(serving({"cluster.gpus=12", "cluster.gpus_per_node=6", "cluster.nics_per_node=6",
                                              "inference.pools.colocated.gpus=12", "inference.pools.colocated.tp=2",
                                              "inference.pools.colocated.ep=2"})));
}

TEST(ServingSetup, ReplicasAreSizedForTheLongestRequestTheyHold) {
  // 2 MiB per GPU is 1,024 tokens per tp-2 replica; the longest request draws 512 + 64: it fits
  // (a uniform length's unused mean, 1,024 and 256 by default, once counted: refused as 1,280).
  EXPECT_NO_THROW(make_serving_setup(serving({"inference.kv_cache_per_gpu=2MiB"})));
  // 1 MiB (512 tokens): a prefill replica holds the 512-token prompt; a decode replica cannot hold
  // prompt and output, and is the pool named.
  const std::string msg = bad_input_of([] {
    make_serving_setup(serving({"inference.kv_cache_per_gpu=1MiB", "inference.mode=prefill_decode",
                                "inference.pools={prefill: {gpus: 8, tp: 2, ep: 8}, decode: {gpus: 8, tp: 2, ep: 8}}"}));
  });
  EXPECT_NE(msg.find("inference.pools.decode: the KV cache holds 512 tokens per replica but one request can need 576"),
            std::string::npos)
      << msg;
  EXPECT_EQ(msg.find("inference.pools.prefill"), std::string::npos) << msg;
  // A trace replaces the length draws: they no longer bound model.seq_len (each line is checked).
  EXPECT_NO_THROW(serving({"inference.trace=t.csv", "model.seq_len=256"}));
}

TEST(ServingSetup, PoolTooSmallForTheModelIsAClearError) {
  // Mixtral-8x22B-sized experts on one 80 GB GPU per instance.
  const std::string msg = bad_input_of([] {
    make_serving_setup(serving({"model.layers=56", "model.hidden=6144", "model.heads=48", "model.kv_heads=6",
                                "inference.moe.expert_ffn_hidden=16384", "inference.pools.colocated.tp=1",
                                "inference.pools.colocated.ep=1"}));
  });
  EXPECT_NE(msg.find("inference.pools.colocated: the pool is too small for the model"), std::string::npos) << msg;
  EXPECT_NE(msg.find("spread the model over more GPUs (tp / ep)"), std::string::npos) << msg;
  // A workspace larger than the weights is the prefill budget's, on every GPU whatever tp: that
  // key is the remedy (more GPUs were advised until 2026-12-07).
  const std::string workspace =
      bad_input_of([] { make_serving_setup(serving({"inference.max_prefill_tokens=40000000"})); });
  EXPECT_NE(workspace.find("lower inference.max_prefill_tokens (40000000"), std::string::npos) << workspace;
  // A cache shrunk by kv_cache_fraction names it (it was not named until 2026-12-07).
  const std::string fraction =
      bad_input_of([] { make_serving_setup(serving({"inference.kv_cache_fraction=0.000001"})); });
  EXPECT_NE(fraction.find("raise inference.kv_cache_fraction (1e-06 of the memory left)"), std::string::npos)
      << fraction;
  EXPECT_NE(bad_input_of([] { make_serving_setup(serving({"inference.kv_cache_per_gpu=500GiB"})); })
                .find("inference.kv_cache_per_gpu: asks for"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { make_serving_setup(serving({"inference.pools.colocated.gpu=B300"})); }).find("B300"),
            std::string::npos);
  EXPECT_NE(bad_input_of([] { make_serving_setup(serving({"inference.kv_cache_per_gpu=100KiB"})); })
                .find("the KV cache holds"),
            std::string::npos);
}

}  // namespace
}  // namespace clustersim::engine
