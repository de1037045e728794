// SPDX-License-Identifier: Apache-2.0
// `clustersim run` on the fault scenarios and `clustersim whatif`, as a user runs them: exit
// codes, the stable keys, identical output for a fixed seed, and exit 2 on bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>

#include "tests/unit/run_cli.h"
#include "tests/unit/scratch_dir.h"

namespace {

using Result = clustersim::testing::CliResult;

// Runs `clustersim ARGS` in the source directory (stderr folded into stdout).
Result clustersim(const std::string& args) {
  return clustersim::testing::run_cli(args, clustersim::testing::Stderr::kFolded);
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

// Failures faster than a recovery: said, rather than an optimum interval and a spare count read
// as advice (since 2026-12-07; QA).
TEST(FaultsCli, FailuresFasterThanARecoveryAreSaid) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=10000 --set faults.duration=1d "
                              "--set faults.seeds=2");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "recovery-bound failures come every")) << r.out;
  EXPECT_FALSE(contains(clustersim("run scenarios/faults-16k-30d.yaml").out, "recovery-bound"));
}

TEST(FaultsCli, ThirtyDayJobReportsEttrAndIsReproducible) {
  const Result a = clustersim("run scenarios/faults-16k-30d.yaml --format json");
  ASSERT_EQ(a.code, 0) << a.out;
  for (const char* key : {"\"ettr\"", "\"ettr_ci95\"", "\"ettr_range\"", "\"ettr_gain_at_optimal_interval\"", "\"goodput\"", "\"effective_mfu\"", "\"interruptions\"",
                          "\"time_lost_s\"", "\"comm_init\"", "\"optimal_checkpoint_interval_s\"",
                          "\"young_daly_interval_s\"", "\"iteration_time_source\": \"analytical\"",
                          "\"cluster_states\""}) {
    EXPECT_TRUE(contains(a.out, key)) << key;
  }
  EXPECT_EQ(a.out, clustersim("run scenarios/faults-16k-30d.yaml --format json").out);
}

// One seed has no confidence interval (Student t needs two samples): null, and the summary says
// so (before 2026-12-04 it printed "95% CI 93.47 to 93.47%").
TEST(FaultsCli, OneSeedHasNoConfidenceInterval) {
  const Result j = clustersim("run scenarios/faults-16k-30d.yaml --format json --set faults.seeds=1");
  ASSERT_EQ(j.code, 0) << j.out;
  for (const char* key : {"\"ettr_ci95\": null", "\"goodput_ci95\": null", "\"effective_mfu_ci95\": null",
                          "\"interruptions_ci95\": null", "\"lost_work\": null"}) {
    EXPECT_TRUE(contains(j.out, key)) << key;
  }
  const Result t = clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=1");
  EXPECT_TRUE(contains(t.out, "one seed: no confidence interval")) << t.out;
  EXPECT_FALSE(contains(t.out, "95% CI")) << t.out;
  // The hangs' watchdog timeout is shown beside the heartbeat's (only in JSON until 2026-12-07).
  EXPECT_TRUE(contains(t.out, "recovery       detect 30 s, hang detect 120 s, diagnose")) << t.out;
  EXPECT_TRUE(contains(clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=2").out, "95% CI"));
}

// Keys that only some failure kinds read are named when nothing of that kind can happen, and an
// asynchronous stall no shorter than the whole write is named as such (2026-12-06 review).
TEST(FaultsCli, KeysNoFailureReadsAreNamed) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=2 --set faults.rate_scale=0 --set faults.checkpoint.interval=1h "
                              "--set faults.sweep_points=51 --set faults.recovery.straggler_detection=5min");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string all = r.out + r.err;
  EXPECT_TRUE(contains(all, "faults.recovery.hang_detection is not used: no component of kind hang has a rate")) << all;
  EXPECT_TRUE(contains(all, "faults.recovery.straggler_detection is not used")) << all;
  EXPECT_TRUE(contains(all, "faults.sweep_points is not used")) << all;
  EXPECT_TRUE(contains(all, "note: the asynchronous stall, 5 s, is no shorter than the whole write")) << all;
  // straggler_threshold as straggler_detection; and detection where no degrade component reaches
  // the threshold (since 2026-12-07, QA).
  const Result threshold = clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=2 --set faults.rate_scale=0 "
                                      "--set faults.checkpoint.interval=1h --set faults.recovery.straggler_threshold=1.2");
  EXPECT_TRUE(contains(threshold.out + threshold.err, "faults.recovery.straggler_threshold is not used")) << threshold.err;
  const Result unseen = clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=2 "
                                   "--set faults.recovery.straggler_threshold=9 --set faults.recovery.straggler_detection=2h "
                                   "--set 'faults.components.slow={unit: host, kind: degrade, rate_per_day: 0.001, slowdown: 1.1}'");
  EXPECT_TRUE(contains(unseen.out + unseen.err, "every degrade component's slowdown is below")) << unseen.err;
  const Result sync = clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=2 --set faults.checkpoint.blocking=1s");
  EXPECT_FALSE(contains(sync.out + sync.err, "is no shorter than the whole write")) << sync.out;
}

// Components counted per job (Llama 3's planned maintenance, dependencies) dominate a small job's
// interruptions whatever its size: said (2026-12-06), and not on the 16,384-GPU job they came from.
TEST(FaultsCli, PerJobRatesOnASmallJobAreNamed) {
  const Result small = clustersim(
      "run scenarios/faults-16k-30d.yaml --set faults.seeds=2 --set cluster.gpus=8 --set parallelism.pp=1 "
      "--set parallelism.vpp=1 --set stragglers=null --set model.layers=2 --set training.global_batch=8");
  ASSERT_EQ(small.code, 0) << small.err;
  EXPECT_TRUE(contains(small.out, "of the interruptions come from components counted per job")) << small.out;
  const Result large = clustersim("run scenarios/faults-16k-30d.yaml --set faults.seeds=2");
  EXPECT_FALSE(contains(large.out, "counted per job")) << large.out;
}

double json_number(const std::string& out, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("\"" + key + "\": ([-0-9.e+]+)"))) return std::nan("");
  return std::stod(m[1]);
}

// A checkpoint asked for every 236 s of 100 s iterations is taken every 300 s, as the results
// and the summary say (both said 236 s until 2026-12-06).
TEST(FaultsCli, AnIntervalIsTakenInWholeIterations) {
  const std::string set = " --set faults.iteration_time=100s --set faults.checkpoint.interval=236s --set faults.seeds=2";
  const Result j = clustersim("run scenarios/faults-16k-30d.yaml --format json" + set);
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_EQ(json_number(j.out, "effective_interval_s"), 300.0) << j.out;
  EXPECT_EQ(std::fmod(json_number(j.out, "optimal_checkpoint_interval_s"), 100.0), 0.0) << j.out;
  const Result t = clustersim("run scenarios/faults-16k-30d.yaml" + set);
  EXPECT_TRUE(contains(t.out, "taken at the end of the iteration under way: every 300.000 s")) << t.out;
  // An asynchronous write of 28.4 s between 15 s iterations: checkpoints 30 s apart, the sweep's
  // shortest interval too (both read 28.4 s until 2026-12-06).
  const std::string async = " --set faults.iteration_time=15s --set faults.checkpoint.write_bandwidth=200GBps"
                            " --set faults.duration=2d --set faults.seeds=2";
  const Result free = clustersim("run scenarios/faults-16k-30d.yaml --format json --set faults.checkpoint.blocking=0s"
                                 " --set faults.checkpoint.interval=30min" + async);
  ASSERT_EQ(free.code, 0) << free.out;
  EXPECT_EQ(json_number(free.out, "optimal_checkpoint_interval_s"), 30.0) << free.out;
  const Result every = clustersim("run scenarios/faults-16k-30d.yaml --format json --set faults.checkpoint.interval=15s" + async);
  EXPECT_EQ(json_number(every.out, "effective_interval_s"), 30.0) << every.out;
}

// Catch-up per interruption is over every interruption of every seed: a 1-hour window, where
// most seeds see none, reads what the seeds' interruptions took (each seed's mean, with the
// seeds without one as 0, until 2026-12-06: 65 s for 436 s).
TEST(FaultsCli, CatchUpIsPooledOverEveryInterruption) {
  const std::string run = "run scenarios/faults-16k-30d.yaml --format json --set faults.duration=1h";
  const Result all = clustersim(run + " --set faults.seeds=8");
  ASSERT_EQ(all.code, 0) << all.out;
  double catch_up_s = 0, stops = 0;
  for (int seed = 1; seed <= 8; ++seed) {
    const Result one = clustersim(run + " --set faults.seeds=1 --set faults.seed=" + std::to_string(seed));
    ASSERT_EQ(one.code, 0) << one.out;
    const double n = json_number(one.out, "interruptions");
    // A seed without interruptions has no mean (null, since 2026-12-06; it read 0).
    if (n == 0) {
      EXPECT_TRUE(contains(one.out, "\"mean_catch_up_s\": null")) << one.out;
      continue;
    }
    catch_up_s += json_number(one.out, "mean_catch_up_s") * n;
    stops += n;
  }
  ASSERT_GT(stops, 0);
  EXPECT_NEAR(json_number(all.out, "mean_catch_up_s"), catch_up_s / stops, 1e-6 * catch_up_s / stops);
}

// Means per interruption over none are null, and the summary says there was none (they read 0,
// "catch-up 0.0 min per interruption", until 2026-12-06).
TEST(FaultsCli, NoInterruptionHasNoMeanPerInterruption) {
  const std::string run = "run scenarios/faults-16k-30d.yaml --set faults.rate_scale=0 --set faults.checkpoint.interval=1h";
  const Result j = clustersim(run + " --format json");
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_TRUE(contains(j.out, "\"mean_catch_up_s\": null")) << j.out;
  EXPECT_TRUE(contains(j.out, "\"mean_downtime_per_interruption_s\": null")) << j.out;
  EXPECT_TRUE(contains(clustersim(run).out, "catch-up       none: no interruption in any window"));
}

// A dry pool that shows as slow hosts running on, not as a wait, gets the spares line too (QA,
// 2026-12-07: 4 spares, 22% of the window degraded, nothing said).
TEST(FaultsCli, SlowHostsRunningOnForWantOfASpareNameThePool) {
  const std::string run =
      "run scenarios/faults-16k-30d.yaml --set faults.rates=none --set faults.checkpoint.interval=10min "
      "--set 'faults.components.slowhost={unit: host, kind: degrade, rate_per_day: 0.002, slowdown: 1.5}' "
      "--set faults.recovery.spare_hosts=";
  const Result dry = clustersim(run + "4");
  ASSERT_EQ(dry.code, 0) << dry.out;
  EXPECT_TRUE(contains(dry.out, "spares         the 4 hot spares ran dry: slow hosts ran on for want of a spare (22.0%"))
      << dry.out;
  EXPECT_FALSE(contains(clustersim(run + "40").out, "ran dry"));
}

// A pool of spares that runs dry gets a line with the hosts away at once: 5.9 hosts a day away
// 3 days, 17.6 on average, 28 or fewer 99% of the time (Poisson), which then hardly wait.
TEST(FaultsCli, ASparePoolThatRunsDrySaysHowManyWouldDo) {
  const Result dry = clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=24");
  ASSERT_EQ(dry.code, 0) << dry.out;
  EXPECT_TRUE(contains(dry.out, "the 24 hot spares ran dry")) << dry.out;
  EXPECT_TRUE(contains(dry.out, "28 or fewer 99% of the time")) << dry.out;
  const Result enough = clustersim("run scenarios/faults-16k-30d.yaml --format json --set faults.recovery.spare_hosts=28");
  EXPECT_GT(json_number(enough.out, "hosts_repaired"), 150.0) << enough.out;
  EXPECT_LT(json_number(enough.out, "repair_wait"), 0.01 * 30 * 86400) << enough.out;
  EXPECT_FALSE(contains(clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=28").out, "ran dry"));
  // One spare and none read as such ("the 0 hot spares ran dry" until 2026-12-06).
  EXPECT_TRUE(contains(clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=1").out,
                       "spares         the 1 hot spare ran dry: the job waited"));
  EXPECT_TRUE(contains(clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=0").out,
                       "spares         with no hot spares: the job waited"));
  // No pool: unlimited, free spares, which the ETTR rests on, said with the pool that would hold
  // it (QA 2026-12-07: nothing was said).
  const Result unlimited = clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=null");
  ASSERT_EQ(unlimited.code, 0) << unlimited.out;
  EXPECT_TRUE(contains(unlimited.out, "spares         unlimited (faults.recovery.spare_hosts not set")) << unlimited.out;
  EXPECT_TRUE(contains(unlimited.out, "28 or fewer 99% of the time: set spare_hosts")) << unlimited.out;
  EXPECT_FALSE(contains(enough.out, "spares         unlimited"));
}

// Slow hosts are found only while the job runs, and wait for a spare: a dry pool sends fewer
// hosts to repair than the failures need (21.7 a day against 2,048 x 0.01 + 5.9 = 26.4), and a
// count read from what it sent (85) still ran dry. The advice follows the rates (101), and that
// pool then hardly waits.
TEST(FaultsCli, SpareAdviceCountsSlowHostsTheDryPoolHeldBack) {
  const std::string slow = " --set 'faults.components.slow={unit: host, rate_per_day: 0.01, kind: degrade, slowdown: 1.2}'";
  const Result dry = clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=64" + slow);
  ASSERT_EQ(dry.code, 0) << dry.out;
  EXPECT_TRUE(contains(dry.out, "need 26.4 hosts repaired a day")) << dry.out;
  EXPECT_TRUE(contains(dry.out, "101 or fewer 99% of the time")) << dry.out;
  const Result enough = clustersim("run scenarios/faults-16k-30d.yaml --format json --set faults.recovery.spare_hosts=101" + slow);
  ASSERT_EQ(enough.code, 0) << enough.out;
  EXPECT_LT(json_number(enough.out, "repair_wait"), 0.01 * 30 * 86400) << enough.out;
}

// The run's own interval is among those the sweep tries, so the best it reports is never worse
// than the run. With no spares the derived interval (Young to the nearest iteration, 331.9 s) was
// not in the grid (rounded up), and the best, 338.7 s, reported 0.0006 points below the run.
TEST(FaultsCli, BestCheckpointIntervalIsNeverWorseThanTheRuns) {
  for (const char* set : {"faults.recovery.spare_hosts=0", "faults.checkpoint.interval=20min", "faults.rate_scale=3"}) {
    const Result r = clustersim(std::string("run scenarios/faults-16k-30d.yaml --format json --set ") + set);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_GE(json_number(r.out, "ettr_gain_at_optimal_interval"), 0.0) << set;
  }
}

TEST(FaultsCli, SlowRecoveryScenarioRuns) {
  const Result r = clustersim("run scenarios/faults-16k-30d-slow-recovery.yaml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "ETTR"));
  EXPECT_TRUE(contains(r.out, "comm_init"));
}

TEST(FaultsCli, StudiesTooLargeToSimulateAreRefusedUpFront) {
  // rate_scale within its documented range, but a failure every 0.01 s for 30 days: hours of
  // events. Refused at once with the figures, not left to run.
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=1000000");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "faults.rate_scale: the job would see about 2.59e+08 failures")) << r.out;
  // One component's rate set too high: its key is named, not rate_scale (until 2026-12-06).
  const Result one = clustersim("run scenarios/faults-16k-30d.yaml --set faults.components.faulty_gpu.rate_per_day=1e6");
  EXPECT_EQ(one.code, 2) << one.out;
  EXPECT_TRUE(contains(one.out, "yaml: faults.components.faulty_gpu.rate_per_day: the job would see about 4.92e+11")) << one.out;
  const Result many = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=10000");
  EXPECT_EQ(many.code, 2) << many.out;
  EXPECT_TRUE(contains(many.out, "faults.seeds: 2.33e+09 failures to simulate (2.59e+06 per window x 20 seeds x 45 windows"))
      << many.out;
}

TEST(FaultsCli, WithoutFailuresTheIntervalIsGivenAndMtbfIsNone) {
  // No crash or hang: the MTBF is infinite, and a Young/Daly interval would be made up. The
  // interval must be given; MTBF and Young/Daly are reported as none.
  const Result none = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rates=none");
  EXPECT_EQ(none.code, 2) << none.out;
  EXPECT_TRUE(contains(none.out, "faults.checkpoint.interval: no crash or hang component has a rate")) << none.out;
  // rate_scale 0 is named as the cause (until 2026-12-07 "no crash or hang component has a rate",
  // beside eighteen that had; QA).
  const Result scaled = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=0");
  EXPECT_EQ(scaled.code, 2) << scaled.out;
  EXPECT_TRUE(contains(scaled.out, "faults.checkpoint.interval: faults.rate_scale is 0, so nothing fails")) << scaled.out;
  // A rate so small that the job's rate underflows is refused as rate_scale's is (it printed
  // "Young inf d" and an optimum interval beside a null MTBF).
  const Result tiny = clustersim("run scenarios/faults-16k-30d.yaml --set faults.components.faulty_gpu.rate_per_day=1e-320");
  EXPECT_EQ(tiny.code, 2) << tiny.out;
  EXPECT_TRUE(contains(tiny.out, "faults.components.faulty_gpu.rate_per_day: must be 0 (never) or at least 1e-12"))
      << tiny.out;
  const Result given =
      clustersim("run scenarios/faults-16k-30d.yaml --set faults.rates=none --set faults.checkpoint.interval=1h --format json");
  ASSERT_EQ(given.code, 0) << given.out;
  EXPECT_TRUE(contains(given.out, "\"mtbf_s\": null")) << given.out;
  EXPECT_TRUE(contains(given.out, "\"young_daly_interval_s\": null"));
  EXPECT_TRUE(contains(given.out, "\"optimal_checkpoint_interval_s\": null"));  // longer is always better
  // The components are there, at rate 0 (the summary said there were none).
  const Result text = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=0 --set faults.checkpoint.interval=1h");
  EXPECT_TRUE(contains(text.out, "MTBF none (no crash or hang component has a rate)")) << text.out;
  // A checkpoint once per window, no failures: the interval sweep stops at the window instead of
  // running past the range of simulated time (refused, naming an output field, before 2026-11-22).
  const Result monthly = clustersim(
      "run scenarios/faults-16k-30d.yaml --set faults.rates=none --set faults.checkpoint.interval=30d --format json");
  EXPECT_EQ(monthly.code, 0) << monthly.out;
}

TEST(FaultsCli, RareFailuresStillHaveAnOptimumInterval) {
  // rate_scale 0.001: an MTBF of 1.1e7 s (129 days), far past a 30-day window, yet failures
  // still come (0.2 per window) and Young's sqrt(2 x 5 s x 1.1e7 s) = 2.9 h is where a scan of
  // the interval peaks (before 2026-11-22 anything past 9e6 s was "no crash or hang component").
  const Result rare = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=0.001 --format json");
  ASSERT_EQ(rare.code, 0) << rare.out;
  EXPECT_FALSE(contains(rare.out, "\"mtbf_s\": null")) << rare.out;
  EXPECT_FALSE(contains(rare.out, "\"young_daly_interval_s\": null")) << rare.out;
  EXPECT_FALSE(contains(rare.out, "\"optimal_checkpoint_interval_s\": null")) << rare.out;
  // Rarer still: Young's interval (1e7 s) passes simulated time; it is reported, and a derived
  // interval stops at the window, rather than the run being refused as an overflow.
  for (const char* interval : {" --set faults.checkpoint.interval=1h", ""}) {
    const Result rarest =
        clustersim(std::string("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=1e-9") + interval);
    EXPECT_EQ(rarest.code, 0) << interval << rarest.out;
  }
}

TEST(FaultsCli, FreeCheckpointOptimumIsTheFloorAndYoungDalyAreNotDefined) {
  // blocking 0: Young and Daly are sqrt(2 x 0 x MTBF) = 0, no optimum; a checkpoint costs only
  // the wait for one iteration (6.84 s here), so checkpointing every iteration does best (ETTR
  // 96.6%). Until 2026-12-05 the sweep centred on the given interval and reported the edge of its
  // grid: 900 s (ETTR 92.8%) for 1h, 15 s for 60s, with "Young 0 s, Daly 0 s".
  for (const char* interval : {"1h", "60s"}) {
    const std::string args = std::string("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.blocking=0s "
                                         "--set faults.checkpoint.interval=") + interval;
    const Result j = clustersim(args + " --format json");
    ASSERT_EQ(j.code, 0) << j.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(j.out, m, std::regex("\"optimal_checkpoint_interval_s\": ([0-9.e+-]+)"))) << j.out;
    EXPECT_LT(std::stod(m[1]), 7.0) << interval;
    EXPECT_TRUE(contains(j.out, "\"optimal_checkpoint_interval_at\": \"floor\"")) << j.out;
    EXPECT_TRUE(contains(j.out, "\"young_daly_interval_s\": null")) << j.out;
    EXPECT_TRUE(contains(j.out, "\"daly_interval_s\": null")) << j.out;
    const Result t = clustersim(args);
    EXPECT_TRUE(contains(t.out, "Young and Daly not defined (no blocking cost)")) << t.out;
    EXPECT_TRUE(contains(t.out, "the shortest interval simulated (one iteration")) << t.out;
    EXPECT_FALSE(contains(t.out, "Young 0 s")) << t.out;
  }
  // With a blocking cost the optimum lies between two intervals tried: Young and Daly are numbers.
  const Result base = clustersim("run scenarios/faults-16k-30d.yaml --format json");
  EXPECT_TRUE(contains(base.out, "\"optimal_checkpoint_interval_at\": \"interior\"")) << base.out;
}

// A ten-minute window with no degrade component: recovery.straggler_detection (default 1 h) is
// never used, and the study runs (refused, naming the unwritten key, until 2026-12-05).
TEST(FaultsCli, AShortWindowWithoutSlowHostsRuns) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.duration=10min");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "ETTR")) << r.out;
}

// Listed stage layers that balance the LM head better than the even split make the step faster:
// the cause says so (it was empty until 2026-12-06).
TEST(FaultsCli, WhatIfSaysWhenTheSourcesMakeTheStepFaster) {
  const Result t = clustersim("whatif scenarios/faults-16k-30d.yaml");
  ASSERT_EQ(t.code, 0) << t.out;
  EXPECT_TRUE(contains(t.out, "cause      none: the sources make the iteration faster")) << t.out;
  const Result j = clustersim("whatif scenarios/faults-16k-30d.yaml --format json");
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_TRUE(contains(j.out, "\"cause\": \"none: the sources make the iteration faster")) << j.out;
}

// whatif --out says what it wrote, as run does (it said nothing until 2026-12-07); not in JSON.
TEST(FaultsCli, WhatIfOutSaysWhatItWrote) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("whatif_out_" + std::to_string(::getpid()));
  const Result r = clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws 1 --out '" + dir.string() + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\nwrote " + (dir / "whatif.json").string() + "\n")) << r.out;
  EXPECT_TRUE(std::filesystem::exists(dir / "whatif.json"));
  const Result j = clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws 1 --format json --out '" + dir.string() + "'");
  EXPECT_FALSE(contains(j.out, "wrote ")) << j.out;
  std::filesystem::remove_all(dir);
}

// An uneven layer split alone is the plan (Llama 3 405B's 7, 8, ..., 8, 7), compared with the even
// split in those words, not as stragglers (until 2026-12-07 "12.54 s without stragglers", and
// the breakdown of the even split under that name; review). With a slow host beside it, the words
// are the stragglers' again.
TEST(FaultsCli, AnUnevenLayerSplitAloneIsNotCalledAStraggler) {
  const Result r = clustersim("run scenarios/llama3-405b/llama3-405b-8192.yaml");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, " with the layers split evenly)")) << r.out;
  EXPECT_TRUE(contains(r.out, "where the time goes (the layers split evenly, ")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nstage_layers iteration ")) << r.out;
  EXPECT_TRUE(contains(r.out, " than the even split), MFU ")) << r.out;
  EXPECT_FALSE(contains(r.out, "without stragglers")) << r.out;
  EXPECT_FALSE(contains(r.out, "stragglers   ")) << r.out;
  const Result slow = clustersim("run scenarios/llama3-405b/llama3-405b-8192.yaml --set stragglers.hosts.list=[3] "
                                 "--set stragglers.hosts.slowdown=1.1");
  ASSERT_EQ(slow.code, 0) << slow.err;
  EXPECT_TRUE(contains(slow.out, "without stragglers)")) << slow.out;
  EXPECT_TRUE(contains(slow.out, "\nstragglers   iteration ")) << slow.out;
}

// Slow hosts that slow nothing (a fraction of 0, a slowdown of 1): whatif notes it as run does,
// names it in the critical path and the cause, and draws no placements of nothing (until
// 2026-12-05: no note, "hidden by the last stage's LM-head slack", cause "", 100 draws).
TEST(FaultsCli, WhatIfSaysAnInertSourceSlowsNothing) {
  for (const auto& [set, why] : {std::pair{"stragglers.hosts.fraction=0", "slows none: its count (or fraction) is 0"},
                                 std::pair{"stragglers.hosts.slowdown=1", "slows nothing: its slowdown is 1"}}) {
    const std::string args = std::string("whatif scenarios/stragglers-175b-12288.yaml --set ") + set;
    const Result t = clustersim(args);
    ASSERT_EQ(t.code, 0) << t.out;
    EXPECT_TRUE(contains(t.out, std::string("note: stragglers.hosts ") + why)) << t.out;
    EXPECT_FALSE(contains(t.out, "LM-head slack")) << t.out;
    EXPECT_TRUE(contains(t.out, "cause      none: nothing is slowed")) << t.out;
    EXPECT_FALSE(contains(t.out, "placements")) << t.out;
    EXPECT_FALSE(contains(t.out, "by stage")) << t.out;  // hosts placed at slowdown 1 are not slow
    EXPECT_FALSE(contains(t.out, "slow hosts ")) << t.out;
    const Result j = clustersim(args + " --format json");
    ASSERT_EQ(j.code, 0) << j.out;
    EXPECT_FALSE(contains(j.out, "\"cause\": \"\"")) << j.out;
    EXPECT_FALSE(contains(j.out, "\"draws\"")) << j.out;
    EXPECT_TRUE(contains(j.out, "\"notes\"")) << j.out;
    EXPECT_TRUE(contains(clustersim(std::string("run scenarios/stragglers-175b-12288.yaml --set ") + set).out,
                         std::string("note: stragglers.hosts ") + why));
  }
}

TEST(FaultsCli, CheckpointWritesAreNeverLost) {
  // A synchronous checkpoint blocks for its write: a shorter blocking time is refused (it was
  // taken, losing 279 s of every checkpoint).
  const Result sync = clustersim(
      "run scenarios/faults-16k-30d.yaml --set faults.checkpoint.async=false --set faults.checkpoint.write_bandwidth=20GBps");
  EXPECT_EQ(sync.code, 2) << sync.out;
  EXPECT_TRUE(contains(sync.out, "faults.checkpoint.blocking: a synchronous checkpoint (async: false) blocks for its "
                                 "whole write"))
      << sync.out;
  EXPECT_EQ(clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.async=false "
                       "--set faults.checkpoint.write_bandwidth=20GBps --set faults.checkpoint.blocking=null")
                .code,
            0);
  // An asynchronous write longer than the interval spaces the checkpoints: reported.
  const Result slow = clustersim(
      "run scenarios/faults-16k-30d.yaml --set faults.checkpoint.interval=10min --set faults.checkpoint.write_bandwidth=2GBps");
  EXPECT_EQ(slow.code, 0) << slow.out;
  EXPECT_TRUE(contains(slow.out, "a checkpoint starts only when the previous one is written: every ")) << slow.out;
}

// A misspelt built-in component on the command line: exit 2 with the key and the name meant.
// A plan with no whole replica gets its own error, not one about a straggler key's default
// ("stragglers.sequence_imbalance.replicas: there are only 0 DP replicas" until 2026-12-06).
TEST(FaultsCli, APlanWithoutAReplicaIsNotBlamedOnStragglerDefaults) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set cluster.gpus=8");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_FALSE(contains(r.out, "sequence_imbalance")) << r.out;
}

TEST(FaultsCli, AMisspeltComponentIsBadInput) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.components.gpu_hmb3.rate_per_day=0");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "faults.components.gpu_hmb3: is not a built-in component; did you mean 'gpu_hbm3'?")) << r.out;
}

TEST(FaultsCli, TheSummarySaysWhatStorageSustains) {
  // 5,682 GB every 331.6 s (Young's in whole iterations, 49 of 6.768 s; 331.2 s, 49 of 6.758 s, and 331.9 s, 49 of
  // 6.774 s, before the SwiGLU activation read 3f, not 4f, on 2026-12-07; 335.6 s, 49 of
  // 6.848 s, before the straggler replays waited for the pipeline sends on 2026-12-06): 16.9 GB/s
  // (17 GB/s, every 333.7 s, before 2026-12-05). With the blocking time computed from the snapshot alone the
  // summary says what it leaves out (Young/Daly then picks seconds-long intervals).
  const Result given = clustersim("run scenarios/faults-16k-30d.yaml --format json");
  EXPECT_TRUE(contains(given.out, "\"mean_write_rate_bytes_per_s\":")) << given.out;
  const Result text = clustersim("run scenarios/faults-16k-30d.yaml");
  EXPECT_TRUE(contains(text.out, "checkpoint     every 331.")) << text.out;  // 331.6 s; 331.2 s before 2026-12-07's DP exposure
  EXPECT_TRUE(contains(text.out, " s, blocking 5 s")) << text.out;
  // 5,682 GB per 336.9 s cycle: the interval's training and the 5 s stall (17.1 GB/s, per
  // interval alone; per 340.6 s, 16.7 GB/s, before 2026-12-06's straggler replays); a blocking
  // hour every 10 minutes writes 5,682 GB per 4,200 s.
  EXPECT_TRUE(contains(text.out, "GB each, written at 16.9 GB/s on average\n")) << text.out;
  const Result stall = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.async=false "
                                  "--set faults.checkpoint.blocking=1h --set faults.checkpoint.interval=10min");
  EXPECT_TRUE(contains(stall.out, "GB each, written at 1.35 GB/s on average\n")) << stall.out;
  const Result computed = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.blocking=null");
  EXPECT_TRUE(contains(computed.out, "the shard's copy to host memory only")) << computed.out;
  // A synchronous checkpoint's computed blocking time is its whole write (28.41 s here: size /
  // write bandwidth), not a copy to host memory (which its note said until 2026-12-05).
  const Result sync = clustersim("run scenarios/faults-16k-30d-slow-recovery.yaml");
  ASSERT_EQ(sync.code, 0) << sync.out;
  EXPECT_TRUE(contains(sync.out, "blocking: the whole synchronous write, size / the write rate;")) << sync.out;
  EXPECT_FALSE(contains(sync.out, "copy to host memory")) << sync.out;
}

// A checkpoint leaves the hosts through their NICs: storage faster than the job's NICs together
// (2,048 hosts x one 100 Gbps NIC = 25.6 TB/s here) writes and reads at their rate, and the summary
// says so (until 2026-12-06 an 8-GPU job on the default 8 x 400 Gbps wrote at the 2 TB/s default,
// 5x its NICs' rate).
TEST(FaultsCli, CheckpointsMoveNoFasterThanTheJobsNics) {
  const std::string nic = " --set cluster.nics_per_node=1 --set cluster.nic_bandwidth=100Gbps";
  const Result fast = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.write_bandwidth=100TBps "
                                 "--set faults.checkpoint.blocking=null --format json" + nic);
  ASSERT_EQ(fast.code, 0) << fast.out;
  const double nics = 2048 * 100e9 / 8;
  EXPECT_DOUBLE_EQ(json_number(fast.out, "effective_write_bandwidth_bytes_per_s"), nics) << fast.out;
  EXPECT_DOUBLE_EQ(json_number(fast.out, "effective_read_bandwidth_bytes_per_s"), nics) << fast.out;
  const double size = json_number(fast.out, "size_bytes");
  EXPECT_NEAR(json_number(fast.out, "async_s"), size / nics, 1e-9 * size / nics) << fast.out;
  EXPECT_NEAR(json_number(fast.out, "load_s"), size / nics, 1e-9 * size / nics) << fast.out;
  const Result text = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.write_bandwidth=100TBps" + nic);
  EXPECT_TRUE(contains(text.out, "\n               each write and load at the job's NICs' 25.6 TB/s (2048 hosts x 1 x "
                                 "100 Gbps), below write_bandwidth's 100 TB/s\n"))
      << text.out;
  // A read above the NICs' rate beside a write below it: the load alone goes at the NICs' rate.
  const Result read = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.read_bandwidth=100TBps" + nic);
  EXPECT_TRUE(contains(read.out, "\n               each load at the job's NICs' 25.6 TB/s (2048 hosts x 1 x 100 Gbps), "
                                 "below read_bandwidth's 100 TB/s\n"))
      << read.out;
  EXPECT_FALSE(contains(read.out, "each write at")) << read.out;
  // Storage slower than the NICs keeps its own rate, without the note.
  const Result usual = clustersim("run scenarios/faults-16k-30d.yaml --format json");
  EXPECT_DOUBLE_EQ(json_number(usual.out, "effective_write_bandwidth_bytes_per_s"), 2e12) << usual.out;
  const Result usual_text = clustersim("run scenarios/faults-16k-30d.yaml");
  EXPECT_FALSE(contains(usual_text.out, "the job's NICs'")) << usual_text.out;
}

// Where the NICs set the rate, messages about the write name them, not the storage key that a
// faster store would not change (2026-12-06's review: "write_bandwidth ... takes 45 d" at 2 TB/s).
TEST(FaultsCli, MessagesNameTheNicsWhenTheySetTheRate) {
  const std::string nic = " --set cluster.nics_per_node=1 --set cluster.nic_bandwidth=1Mbps";
  const Result slow = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.size=1PB" + nic);
  EXPECT_EQ(slow.code, 2) << slow.out;
  EXPECT_TRUE(contains(slow.out, "cluster.nic_bandwidth: writing the 1000000000000000-byte checkpoint at the job's "
                                 "NICs' 256 MB/s (2048 hosts x 1 x 0.001 Gbps), below write_bandwidth's 2 TB/s, takes "))
      << slow.out;
  const Result sync = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.async=false "
                                 "--set cluster.nics_per_node=1 --set cluster.nic_bandwidth=1Gbps");
  EXPECT_EQ(sync.code, 2) << sync.out;
  EXPECT_TRUE(contains(sync.out, "blocks for its whole write, its size at the job's NICs' 256 GB/s (2048 hosts x 1 x "
                                 "1 Gbps), below write_bandwidth's 2 TB/s, "))
      << sync.out;
}

// Writes that take a tenth of the NICs or more are noted: the training step is not charged for
// them.
TEST(FaultsCli, CheckpointTrafficOnTheNicsIsNoted) {
  // 500 TB every 2 h over 2,048 x 1 Gbps (256 GB/s): about 1,950 s of writing in each cycle.
  const Result busy = clustersim("run scenarios/faults-16k-30d.yaml --set faults.checkpoint.interval=2h "
                                 "--set faults.checkpoint.size=500TB --set cluster.nics_per_node=1 "
                                 "--set cluster.nic_bandwidth=1Gbps");
  ASSERT_EQ(busy.code, 0) << busy.out;
  EXPECT_TRUE(contains(busy.out, "of the job's NIC bandwidth on average")) << busy.out;
  const Result usual = clustersim("run scenarios/faults-16k-30d.yaml");
  EXPECT_FALSE(contains(usual.out, "of the job's NIC bandwidth")) << usual.out;
}

// An interval past int64's picoseconds once rounded up to whole iterations stays positive, and a
// simulated iteration longer than the window is refused like a given one (both ran on silently,
// with a negative interval or an ETTR near 0, until 2026-12-06).
TEST(FaultsCli, LongIterationsKeepTheirIntervals) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.duration=90d "
                              "--set faults.iteration_time=60d --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(json_number(r.out, "effective_interval_s"), 60 * 86400.0) << r.out;
  EXPECT_GT(json_number(r.out, "mean_write_rate_bytes_per_s"), 0) << r.out;
  const Result slow = clustersim("run scenarios/faults-16k-30d.yaml --set cluster.nics_per_node=1 "
                                 "--set cluster.nic_bandwidth=1Mbps --set faults.checkpoint.size=1GB");
  EXPECT_EQ(slow.code, 2) << slow.out;
  EXPECT_TRUE(contains(slow.out, "faults.duration: the simulated iteration, ")) << slow.out;
  EXPECT_TRUE(contains(slow.out, "is longer than the window (30 d)")) << slow.out;
  // A given interval that whole iterations take past simulated time's range: refused, naming the
  // interval (a generic "would take over 107 days ... lower model.layers" until 2026-12-06).
  const Result past = clustersim("run scenarios/faults-16k-30d.yaml --set faults.duration=90d "
                                 "--set faults.iteration_time=54d --set faults.checkpoint.interval=55d");
  EXPECT_EQ(past.code, 2) << past.out;
  EXPECT_TRUE(contains(past.out, "faults.checkpoint.interval: taken at the end of the iteration under way (54 d each), "
                                 "the checkpoint interval, 55 d, comes to 108 d, past the 106 days simulated time holds"))
      << past.out;
}

// Without a crash or hang rate nothing is swept: the run's interval alone (a grid of sweep_points
// ran unreported until 2026-12-06, while a note said sweep_points is not used).
TEST(FaultsCli, WithoutCrashesNoIntervalIsSwept) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=0 "
                              "--set faults.checkpoint.interval=10min --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.find("\"checkpoint_sweep\"");
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string sweep = r.out.substr(at, r.out.find(']', at) - at);
  size_t entries = 0;
  for (size_t p = sweep.find("interval_s"); p != std::string::npos; p = sweep.find("interval_s", p + 1)) ++entries;
  EXPECT_EQ(entries, 1u) << sweep;
}

// Checkpoints count toward what a study may simulate, as failures do: 10,000 seeds of 90 days
// checkpointed every iteration ran for about an hour (QA, 2026-12-07); refused up front, naming
// the figures. Fewer seeds run.
TEST(FaultsCli, TooManyCheckpointsAreRefused) {
  const std::string run = "run scenarios/faults-16k-30d.yaml --set faults.duration=90d --set faults.checkpoint.interval=7s";
  const Result many = clustersim(run + " --set faults.seeds=10000");
  EXPECT_EQ(many.code, 2) << many.out;
  EXPECT_TRUE(contains(many.out, "faults.seeds: about ")) << many.out;
  EXPECT_TRUE(contains(many.out, "checkpoints to simulate (")) << many.out;
  EXPECT_TRUE(contains(many.out, "at most 1e9: lengthen checkpoint.interval, or lower seeds, duration or sweep_points")) << many.out;
  const Result few = clustersim(run + " --set faults.seeds=2 --set faults.sweep_points=3");
  EXPECT_EQ(few.code, 0) << few.out;
}

// A host whose NICs alone slow the step (its pipeline no slower) is the critical path's cell:
// replica and stage read -1 until 2026-12-07 while the step doubled and the cause named them (QA).
TEST(FaultsCli, DegradedNicsNameTheirCell) {
  const Result r = clustersim(
      "run scenarios/stragglers-175b-12288.yaml --format json --set stragglers.hosts=null "
      "--set 'stragglers.nics={hosts: [0], bandwidth_factor: 0.1}'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "\"replica\": 0,")) << r.out;
  EXPECT_TRUE(contains(r.out, "\"stage\": 0,")) << r.out;
  EXPECT_TRUE(contains(r.out, "its pipeline runs at nominal speed; its degraded NICs slow its collectives")) << r.out;
}

TEST(FaultsCli, IntervalsOfRatesAndCountsStayInRange) {
  // Two seeds give a wide interval: goodput's and effective MFU's are ETTR's (clamped to [0, 1])
  // times the rate, and counts and times do not go below zero.
  const Result r = clustersim(
      "run scenarios/faults-16k-30d.yaml --set faults.recovery.spare_hosts=4 --set faults.seeds=2 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const size_t at = r.out.find("\"goodput_ci95\": [");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out[at + std::string("\"goodput_ci95\": [").size()], '-') << r.out.substr(at, 80);
  // No interval, top-level or nested (time_lost_ci95.*), starts below zero, but the gain of the
  // best checkpoint interval's, which may (a difference of ETTRs).
  std::string intervals = r.out;
  const size_t gain = intervals.find("\"ettr_gain_at_optimal_interval_ci95\"");
  ASSERT_NE(gain, std::string::npos) << r.out;
  intervals.erase(gain, intervals.find(']', gain) - gain);
  EXPECT_FALSE(std::regex_search(intervals, std::regex(R"(\[\s*-[0-9])"))) << r.out;
}

// Every interval brackets its mean, also where every seed gives the same value (QA, 2026-12-08:
// at rate_scale 1e-9 no seed fails, and the gain's upper bound, capped at 1 - mean ETTR, rounded
// an ulp under the mean: [1.170245704e-06, 1.170245703e-06]).
TEST(FaultsCli, AnIntervalBracketsItsMeanWhereEverySeedIsAlike) {
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.rate_scale=1e-9 --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string key = "\"ettr_gain_at_optimal_interval\": ";
  const size_t at = r.out.find(key);
  ASSERT_NE(at, std::string::npos) << r.out;
  const double mean = std::stod(r.out.substr(at + key.size()));
  const std::string ci_key = "\"ettr_gain_at_optimal_interval_ci95\": [";
  const size_t ci = r.out.find(ci_key);
  ASSERT_NE(ci, std::string::npos) << r.out;
  size_t used = 0;
  const std::string rest = r.out.substr(ci + ci_key.size());
  const double low = std::stod(rest, &used);
  const double high = std::stod(rest.substr(rest.find(',') + 1));
  EXPECT_LE(low, mean) << rest.substr(0, 60);
  EXPECT_GE(high, mean) << rest.substr(0, 60);
}

TEST(FaultsCli, HostsTooLittleSlowToDetectStayAndCostAlmostNothing) {
  // 20 slow hosts a day, 0.01% slower: below recovery.straggler_threshold nobody swaps them (a
  // swap costs a planned restart each), so ETTR stays at the baseline's.
  auto ettr = [](const std::string& extra) {
    const Result r = clustersim("run scenarios/faults-16k-30d.yaml --format json" + extra);
    EXPECT_EQ(r.code, 0) << r.out;
    const size_t at = r.out.find("\"ettr\": ");
    return at == std::string::npos ? -1.0 : std::stod(r.out.substr(at + 8));
  };
  const double base = ettr("");
  const std::string slow = " --set 'faults.components.slowhost={unit: host, rate_per_day: 0.01, kind: degrade, slowdown: 1.0001}'";
  EXPECT_NEAR(ettr(slow), base, 0.001);
  EXPECT_LT(ettr(slow + " --set faults.recovery.straggler_threshold=1"), base - 0.1);  // every one swapped
}

// The what-if compares training iterations: a microbenchmark or a serving scenario is refused
// with its section named (with network.faults a traffic run crashed its workers, and at the
// analytical level printed a negative iteration time); --draws where nothing is drawn, and
// --fidelity against --set network.fidelity, are refused rather than ignored.
// The what-if compares iterations; it says so rather than drop a faults section unmentioned
// (until 2026-12-06).
TEST(FaultsCli, WhatIfNotesThatItLeavesTheFaultsOut) {
  const Result r = clustersim("whatif scenarios/faults-16k-30d.yaml");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "note: the faults section is not used: the what-if compares training iterations"))
      << r.out;
  EXPECT_FALSE(contains(clustersim("whatif scenarios/stragglers-175b-12288.yaml").out, "faults section"));
}

TEST(FaultsCli, WhatIfRefusesWhatItCannotCompare) {
  const std::string faults = " --set network.fidelity=flow --set 'network.faults=[{element: \"host:0\", bandwidth_factor: 0.5}]'";
  const Result traffic = clustersim("whatif scenarios/net-ring-1k.yaml" + faults);
  EXPECT_EQ(traffic.code, 2) << traffic.out;
  EXPECT_TRUE(contains(traffic.out, "scenarios/net-ring-1k.yaml")) << traffic.out;
  EXPECT_TRUE(contains(traffic.out, "traffic: the what-if compares training iterations")) << traffic.out;
  const Result serving = clustersim("whatif scenarios/infer-colocated.yaml" + faults);
  EXPECT_EQ(serving.code, 2) << serving.out;
  EXPECT_TRUE(contains(serving.out, "inference: the what-if compares training iterations")) << serving.out;
  const Result listed = clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws 5 "
                                   "--set 'stragglers.hosts={list: [3, 17], slowdown: 1.1}'");
  EXPECT_EQ(listed.code, 2);
  EXPECT_TRUE(contains(listed.out, "place nothing at random")) << listed.out;
  // Drawn but slowing nothing: none drawn, or (analytical) none slower; ran to 0.00 +- 0.00 until
  // 2026-12-06.
  for (const char* inert : {"{count: 0, slowdown: 1.1}", "{fraction: 0.005, slowdown: 1}"}) {
    const Result r = clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws 3 --set 'stragglers.hosts=" +
                                std::string(inert) + "'");
    EXPECT_EQ(r.code, 2) << inert << r.out;
    EXPECT_TRUE(contains(r.out, "drawn stragglers slow nothing")) << r.out;
  }
  const Result both = clustersim("whatif scenarios/stragglers-175b-12288.yaml --fidelity analytical --set network.fidelity=flow");
  EXPECT_EQ(both.code, 2);
  EXPECT_TRUE(contains(both.out, "disagree; give one")) << both.out;
}

// `run` says a fault above the hosts unfolded the run with a stragglers section too, as the
// shipped Llama 3 scenarios have (until 2026-12-07 that path dropped the note; QA).
TEST(FaultsCli, RunWithStragglersSaysAFaultUnfoldedIt) {
  const Result r = clustersim("run scenarios/megascale-table2/megascale-175b-256-b768.yaml --fidelity flow "
                              "--set 'network.faults=[{element: tor:0, bandwidth_factor: 0.1}]' "
                              "--set 'stragglers.stage_layers=[12,12,12,12,12,12,12,12]'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "so every DP replica is simulated")) << r.out;
}

// A fault above the hosts unfolds every replica where the graph fits, and every variant alike;
// past the limit all stay folded. Until 2026-12-06 the baseline was handed every replica by name
// and refused past the limit, and both variants failed.
TEST(FaultsCli, WhatIfWithAnUplinkFaultOnALargePlanRuns) {
  const Result r = clustersim("whatif scenarios/megascale-175b-12288.yaml --set network.fidelity=flow "
                              "--set training.global_batch=24576 --set 'network.faults=[{element: \"tor_agg:0\", "
                              "bandwidth_factor: 0.5}]'");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_FALSE(contains(r.out, "failed")) << r.out;
  EXPECT_TRUE(contains(r.out, "but this run is folded (every replica's graph would hold")) << r.out;
  // Where the graph fits, the baseline and the faulted variant simulate the same replicas: all.
  const Result fits = clustersim("whatif scenarios/megascale-table2/megascale-175b-256-b768.yaml --fidelity flow "
                                 "--format json --set 'network.faults=[{element: tor:0, bandwidth_factor: 0.1}]'");
  ASSERT_EQ(fits.code, 0) << fits.out;
  const std::regex groups("\"variant\": \"(baseline|all)\",[^}]*?\"rank_groups_simulated\": ([0-9]+)");
  int seen = 0;
  for (std::sregex_iterator it(fits.out.begin(), fits.out.end(), groups), end; it != end; ++it, ++seen) {
    EXPECT_EQ((*it)[2], "32") << (*it)[1];
  }
  EXPECT_EQ(seen, 2) << fits.out;
  EXPECT_TRUE(contains(fits.out, "so every DP replica is simulated")) << fits.out;
}

TEST(FaultsCli, WhatIfNamesTheSlowHosts) {
  const Result r = clustersim("whatif scenarios/stragglers-175b-12288.yaml");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "hosts"));
  EXPECT_TRUE(contains(r.out, "stage"));
  EXPECT_TRUE(contains(r.out, "MFU lost"));
  // Seed 1 puts slow hosts 1409 and 1504 on the last stage (with the LM head): they are the cause.
  EXPECT_TRUE(contains(r.out, "cause      the slow hosts 1409,1504 on stage 7 of 8 (the last")) << r.out;
  // The hosts are drawn, so the analytical what-if also redraws them, 100 times by default.
  EXPECT_TRUE(contains(r.out, "over 100 placements (seeds 1..100)")) << r.out;
  EXPECT_TRUE(contains(clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws 1").out, "placements") == false);
  // `run` prices the seed's placement and, the hosts being drawn, 100 others.
  const Result run = clustersim("run scenarios/stragglers-175b-12288.yaml --format json");
  EXPECT_EQ(run.code, 0) << run.out;
  EXPECT_TRUE(contains(run.out, "\"placements\"")) << run.out;
  EXPECT_TRUE(contains(run.out, "\"last_stage_draws\"")) << run.out;
  const Result listed = clustersim("run scenarios/stragglers-175b-12288.yaml --format json "
                                   "--set 'stragglers.hosts={list: [1409], slowdown: 1.1, phase: forward}'");
  EXPECT_EQ(listed.code, 0) << listed.out;
  EXPECT_FALSE(contains(listed.out, "\"placements\"")) << listed.out;
  const Result j = clustersim("whatif scenarios/stragglers-175b-12288.yaml --format json --draws 3");
  EXPECT_EQ(j.code, 0) << j.out;
  EXPECT_TRUE(contains(j.out, "\"mfu_lost_mean\""));
  EXPECT_TRUE(contains(j.out, "\"mfu_lost_ci95\""));
  EXPECT_TRUE(contains(j.out, "\"critical_path\""));
  EXPECT_TRUE(contains(j.out, "\"stages\""));
  // A source that costs more alone than any stage's slow hosts is the cause; one that costs
  // nothing changes nothing in the sentence.
  const Result seq = clustersim("whatif scenarios/stragglers-175b-12288.yaml "
                                "--set 'stragglers.sequence_imbalance={max_over_mean: 1.2, replicas: 2}'");
  EXPECT_TRUE(contains(seq.out, "cause      the straggler source 'sequence_imbalance'")) << seq.out;
  const Result idle = clustersim("whatif scenarios/stragglers-175b-12288.yaml "
                                 "--set stragglers.sequence_imbalance.max_over_mean=1.0001");
  // After the cause's repair the next costliest: stage 6's, which alone from the full set
  // regains nothing (the last stage still paces), and after it regains 0.24 points.
  EXPECT_TRUE(contains(idle.out, "; then the slow hosts 1219,1291 on stage 6 of 8 (repairing them too regains 0.24 pt)")) << idle.out;
  EXPECT_FALSE(contains(idle.out, "other sources")) << idle.out;
  // GPU speed variation costs more than the slow hosts alone here, and no repair removes it: the
  // cause also says what repairing the slow hosts regains, and both outputs price them on top of it.
  const std::string variation = " --set stragglers.variation.spread=0.08";
  const Result v = clustersim("whatif scenarios/stragglers-175b-12288.yaml" + variation);
  EXPECT_EQ(v.code, 0) << v.out;
  EXPECT_TRUE(contains(v.out, "cause      the straggler source 'variation'")) << v.out;
  EXPECT_TRUE(contains(v.out, "; then the slow hosts 1409,1504 on stage 7 of 8")) << v.out;
  EXPECT_TRUE(contains(v.out, "beyond the GPU speed variation alone")) << v.out;
  const Result vj = clustersim("whatif scenarios/stragglers-175b-12288.yaml --format json --draws 3" + variation);
  EXPECT_TRUE(contains(vj.out, "\"mfu_regained_if_removed\"")) << vj.out;
  EXPECT_TRUE(contains(vj.out, "\"mfu_lost_beyond_variation_mean\"")) << vj.out;
  const Result vr = clustersim("run scenarios/stragglers-175b-12288.yaml --format json" + variation);
  EXPECT_TRUE(contains(vr.out, "\"mfu_lost_beyond_variation\"")) << vr.out;
  EXPECT_TRUE(contains(vr.out, "\"variation_mfu\"")) << vr.out;
}

// The 32-GPU job the flow what-if tests use (tp 4, pp 2, dp 4; a host per TP group), with
// `network` keys and a `stragglers` section, written to a temporary file.
struct TempScenario {
  clustersim::testing::ScratchDir dir{"clustersim-whatif"};
  std::string path;  // empty when the directory could not be made
};

TempScenario small_scenario(const std::string& network, const std::string& stragglers) {
  TempScenario t;
  if (!t.dir.ok()) return t;
  t.path = t.dir.file("s.yaml");
  std::ofstream(t.path) << "name: small-straggler\n"
                           "cluster: {gpu: A100-SXM4-80GB, gpus: 32, gpus_per_node: 4, nics_per_node: 4, nic_bandwidth: 200Gbps}\n"
                           "network: {fidelity: flow, tiers: 2, switch_radix: 16"
                        << network << "}\n"
                           "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, vocab: 51200}\n"
                           "parallelism: {tp: 4, pp: 2}\n"
                           "training: {global_batch: 32}\n"
                        << stragglers;
  return t;
}

// Host 5 (stage 1 of replica 1) 50% slower and host 2's NICs at half rate.
TempScenario small_straggler_scenario() {
  return small_scenario("", "stragglers: {hosts: {list: [5], slowdown: 1.5}, nics: {hosts: [2], bandwidth_factor: 0.5}}\n");
}

TEST(FaultsCli, FlowWhatIfNamesTheSlowHostsStage) {
  const TempScenario t = small_straggler_scenario();
  const std::string& s = t.path;
  ASSERT_FALSE(s.empty());
  const Result r = clustersim("whatif " + s);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "flow level")) << r.out;
  EXPECT_TRUE(contains(r.out, "MFU lost")) << r.out;
  EXPECT_TRUE(contains(r.out, "all but hosts")) << r.out;
  EXPECT_TRUE(contains(r.out, "compute on the critical path: stage1/dp1 (host 5)")) << r.out;
  EXPECT_TRUE(contains(r.out, "degraded host:8/up (nic:8)")) << r.out;
  EXPECT_TRUE(contains(r.out, "cause      the slow host 5 on stage 1 of 2 (the last")) << r.out;
  EXPECT_FALSE(contains(r.out, "placement")) << r.out;  // listed hosts: nothing to redraw
  const Result j = clustersim("whatif " + s + " --format json --jobs 3");
  ASSERT_EQ(j.code, 0) << j.out;
  EXPECT_TRUE(contains(j.out, "\"mfu_lost\"")) << j.out;
  const Result run = clustersim("run " + s + " --format json");
  ASSERT_EQ(run.code, 0) << run.out;
  EXPECT_TRUE(contains(run.out, "\"straggling_groups\"")) << run.out;
  const Result a = clustersim("whatif " + s + " --fidelity analytical");
  EXPECT_EQ(a.code, 0) << a.out;
  EXPECT_FALSE(contains(a.out, "placements")) << a.out;
  EXPECT_TRUE(contains(a.out, "replica 1, stage 1 of 2")) << a.out;
  EXPECT_TRUE(contains(a.out, "cause      the slow host 5 on stage 1 of 2 (the last")) << a.out;
  EXPECT_EQ(clustersim("whatif " + s + " --fidelity packet").code, 2);
  EXPECT_EQ(clustersim("whatif " + s + " --jobs 0").code, 2);
  // A fabric that does not build, or a fault naming no element of it, is refused before any
  // variant forks (each used to fail alone: exit 0 or 1, the reason only in the table).
  const Result bad_fault = clustersim("whatif " + s + " --set 'network.faults=[{element: foo, bandwidth_factor: 0.5}]'");
  EXPECT_EQ(bad_fault.code, 2) << bad_fault.out;
  EXPECT_TRUE(contains(bad_fault.out, "network.faults[0].element: no fabric element 'foo'")) << bad_fault.out;
  const Result bad_radix = clustersim("whatif " + s + " --set network.switch_radix=4");
  EXPECT_EQ(bad_radix.code, 2) << bad_radix.out;
  EXPECT_TRUE(contains(bad_radix.out, "network.switch_radix")) << bad_radix.out;
  // A plain run takes stragglers at the congestion levels too (the operation graph carries them).
  const Result packet = clustersim("run " + s + " --set network.fidelity=packet");
  EXPECT_EQ(packet.code, 0) << packet.out;
  EXPECT_TRUE(contains(packet.out, "with slow hosts or GPUs")) << packet.out;
}

// Stragglers that slow nothing cost nothing at the flow level: the baseline unfolds the replicas
// the straggled run does. (Folded, it ran in step with the representative's ECMP collisions on
// this 12:4 fabric: 495.8 ms against 481.4 ms, and GPUs 2% slower came out 3% faster.)
TEST(FaultsCli, FlowWhatIfBaselineUnfoldsWhatTheVariantsDo) {
  const clustersim::testing::ScratchDir dir("clustersim-whatif");
  ASSERT_TRUE(dir.ok());
  const std::string path = dir.file("s.yaml");
  std::ofstream(path) << "cluster: {gpu: A100-SXM4-80GB, gpus: 256, gpus_per_node: 8, nics_per_node: 8}\n"
                         "network: {fidelity: flow, tiers: 3, switch_radix: 16, tor_oversubscription: '12:4'}\n"
                         "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, vocab: 64000}\n"
                         "parallelism: {tp: 4, pp: 2, vpp: 3, sequence_parallel: true, zero_stage: 1}\n"
                         "training: {global_batch: 512, recompute: selective, parallel_block: false, memory_check: false,\n"
                         "  overlap: {dp_grad_reduce: false, dp_param_gather: false, tp_comm: true, pp_p2p: false}}\n"
                         "stragglers: {seed: 48, gpus: {fraction: 0.1, slowdown: 1.0, phase: forward}}\n";
  // (--draws 2 redrew them until 2026-12-06; draws of stragglers that slow nothing are refused.)
  const Result r = clustersim("whatif " + path + " --format json");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::regex lost("\"variant\": \"(all)\",[^}]*?\"mfu_lost\": ([-0-9.e]+)");
  int checked = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), lost), end; it != end; ++it, ++checked) {
    EXPECT_EQ(std::stod((*it)[2]), 0.0) << (*it)[1];
  }
  EXPECT_EQ(checked, 1) << r.out;
  EXPECT_EQ(clustersim("whatif " + path + " --draws 2").code, 2);
}

// Host 2's uplink at a quarter of its rate (network.faults) and, with `slow_host`, host 5 50% slower.
TempScenario degraded_link_scenario(bool slow_host) {
  return small_scenario(", faults: [{element: host:2/up, bandwidth_factor: 0.25}]",
                        slow_host ? "stragglers: {hosts: {list: [5], slowdown: 1.5}}\n" : "");
}

// Degraded fabric links (network.faults) are a what-if source at the flow level: the baseline has
// none, `links` alone and `all but links` price them, and they are named when they cost the most.
TEST(FaultsCli, FlowWhatIfPricesDegradedLinks) {
  const TempScenario t = degraded_link_scenario(true);
  const std::string& s = t.path;
  ASSERT_FALSE(s.empty());
  const Result r = clustersim("whatif " + s);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "(no stragglers, no network.faults)")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nlinks ")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nall but links ")) << r.out;
  EXPECT_TRUE(contains(r.out, "degraded host:2/up")) << r.out;
  EXPECT_TRUE(contains(r.out, "cause      the degraded links (network.faults: host:2/up): repairing them regains")) << r.out;
  // Links alone, no stragglers section: still a what-if.
  const TempScenario links_only = degraded_link_scenario(false);
  const Result only = clustersim("whatif " + links_only.path);
  ASSERT_EQ(only.code, 0) << only.out;
  EXPECT_TRUE(contains(only.out, "cause      the degraded links (network.faults: host:2/up):")) << only.out;
  // The analytical level has no per-link view: it refuses rather than drop them.
  const Result a = clustersim("whatif " + s + " --fidelity analytical");
  EXPECT_EQ(a.code, 2) << a.out;
  EXPECT_TRUE(contains(a.out, "network.faults: failed or degraded links and switches are simulated at the flow level")) << a.out;
  EXPECT_EQ(clustersim("run " + s + " --set network.fidelity=analytical").code, 2);
}

TEST(FaultsCli, BadInputExitsTwo) {
  EXPECT_EQ(clustersim("whatif scenarios/megascale-175b-12288.yaml").code, 2);  // no stragglers
  EXPECT_EQ(clustersim("whatif scenarios/stragglers-175b-12288.yaml --draws zero").code, 2);
  EXPECT_EQ(clustersim("whatif").code, 2);
  const Result r = clustersim("run scenarios/faults-16k-30d.yaml --set faults.recovery.comm_init=fast");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(contains(r.out, "faults.recovery.comm_init")) << r.out;
  const Result s = clustersim("run scenarios/stragglers-175b-12288.yaml --set stragglers.hosts.slowdown=0.9");
  EXPECT_EQ(s.code, 2);
  EXPECT_TRUE(contains(s.out, "stragglers.hosts.slowdown")) << s.out;
  EXPECT_EQ(clustersim("run scenarios/faults-16k-30d.yaml --set network.fidelity=packet").code, 2);
  const Result f = clustersim("run scenarios/faults-16k-30d.yaml --set faults.iteration_time_fidelity=packet");
  EXPECT_EQ(f.code, 2);
  EXPECT_TRUE(contains(f.out, "faults.iteration_time_fidelity")) << f.out;
  // A given iteration time faster than the FLOPs at peak (MFU 272%) is not this job's.
  const Result t = clustersim("run scenarios/faults-16k-30d.yaml --set faults.iteration_time=1s");
  EXPECT_EQ(t.code, 2);
  EXPECT_TRUE(contains(t.out, "faults.iteration_time: 1 s is shorter than the model's FLOPs take")) << t.out;
  // An empty --fidelity is not the scenario's level (before 2026-12-04 it ran as if not given).
  EXPECT_EQ(clustersim("whatif scenarios/stragglers-175b-12288.yaml --fidelity ''").code, 2);
}

// The what-if's cause is the repair that regains the most: until 2026-12-07 the stage whose slow
// hosts cost the most alone (QA: host 15 on the last stage, regaining 0.84 of 4.44 points, where
// repairing hosts 1 and 17 on stage 1 regains 3.36).
TEST(FaultsCli, WhatIfNamesTheRepairThatRegainsTheMost) {
  const Result r = clustersim("whatif scenarios/faults-16k-30d.yaml --set 'stragglers.hosts={list: [1, 17, 15], slowdown: 1.2}'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "cause      the slow hosts 1,17 on stage 1 of 16: repairing them regains 3.3"))  // 3.35 of 4.42 pt
      << r.out;
  EXPECT_TRUE(contains(r.out, "; then the slow host 15 on stage 15 of 16")) << r.out;
}

// A degraded NIC that costs more through the collectives than the slow hosts through the
// pipeline is the critical path's (QA, 2026-12-07: 74.6 s of communication against 0.17 s, and the
// critical path named a slow host).
TEST(FaultsCli, TheCriticalPathFollowsTheLargerDelay) {
  const Result r = clustersim(
      "run scenarios/stragglers-175b-12288.yaml --format json --set 'stragglers.nics={hosts: [700], bandwidth_factor: 0.01}'");
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 2000);
  EXPECT_GT(json_number(r.out, "communication_delta_s"), 10 * json_number(r.out, "pipeline_delta_s"));
  EXPECT_TRUE(contains(r.out, "replica 124, stage 3 of 8, host 700: its pipeline runs at nominal speed")) << r.out.substr(0, 4000);
}

TEST(FaultsCli, PacketLevelKeepsLongRunsInBoundedMemory) {
  // Host 1's NICs at 1e-4 of their rate stretch a step to 121 simulated seconds: 12 million
  // sampling instants at the 10 us interval. The congestion series thin themselves past 4 million
  // rows (every other instant, sampling half as often), so the run fits in 340 MB; before
  // 2026-12-04 it ended in std::bad_alloc past 1.6 GB (at 1e-6 it ran for hours).
  const TempScenario t = small_scenario("", "stragglers: {nics: {hosts: [1], bandwidth_factor: 0.0001}}\n");
  const std::string& s = t.path;
  ASSERT_FALSE(s.empty());
  const Result r = clustersim("run " + s + " --fidelity packet --set model.layers=2 --set training.global_batch=8 --format json");
  ASSERT_EQ(r.code, 0) << r.out.substr(0, 2000);
  EXPECT_TRUE(contains(r.out, "\"iteration_time_s\": 121.")) << r.out.substr(0, 2000);
  const size_t at = r.out.find("\"queue_samples\": ");
  ASSERT_NE(at, std::string::npos);
  EXPECT_LE(std::stoll(r.out.substr(at + 17)), 4'000'000);
}

TEST(FaultsCli, WhatIfRefusesWhatRunRefuses) {
  // A fault that cuts a GPU off (host 0's uplink failed): `run` exits 2 naming network.faults, and
  // so does the flow what-if (before 2026-12-04 it printed the failed variant and exited 0).
  const TempScenario cut_scenario = small_scenario(", faults: [{element: host:0/up, bandwidth_factor: 0}]", "");
  const std::string& cut = cut_scenario.path;
  const Result r = clustersim("whatif " + cut);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "error: variant 'all' failed: network.faults: the faults leave no path")) << r.out;
  const Result run = clustersim("run " + cut);
  EXPECT_EQ(run.code, 2);
  // The cut names the fault that made it and the remedy (since 2026-12-07).
  EXPECT_TRUE(contains(run.out, "host:0/up is failed (failed by host:0/up); every pair of GPUs the run sends between "
                                "needs one: lift one of those faults, or give it a bandwidth_factor above 0"))
      << run.out;
  // Times at the limit of simulated time are an overflow, not a result, at both levels of the
  // what-if as in `run` (a NIC 50 days away: the what-if printed 9.2e6 s).
  const TempScenario far_scenario = small_scenario("", "stragglers: {nics: {hosts: [1], extra_latency: 50d}}\n");
  const std::string& far = far_scenario.path;
  for (const char* level : {"analytical", "flow"}) {
    const Result w = clustersim("whatif " + far + " --fidelity " + level);
    EXPECT_EQ(w.code, 2) << level << ": " << w.out;
    EXPECT_TRUE(contains(w.out, "reaches the limit of simulated time")) << level << ": " << w.out;
  }
  EXPECT_EQ(clustersim("run " + far).code, 2);
}

}  // namespace
