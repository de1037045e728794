// SPDX-License-Identifier: Apache-2.0
#include "sim/report/sweep/sweep_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <stdexcept>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/report/run_scenario.h"
#include "sim/report/sweep/candidate_evaluator.h"
#include "sim/report/sweep/result_log.h"
#include "sim/report/sweep/sweep_output.h"
#include "sim/report/sweep/sweep_table.h"
#include "tests/unit/scratch_dir.h"
#include "tests/unit/sweep/sweep_test_util.h"

namespace clustersim::sweep {
namespace {

using testing::spec_from;

// 3 x 4 x 3 x 2 = 72 candidates; tp 3 and pp 5 never divide the model, some plans do not fit.
const char* const kAxes =
    "axes:\n"
    "  parallelism.tp: [1, 3, 8]\n"
    "  parallelism.pp: [1, 2, 4, 5]\n"
    "  parallelism.micro_batch: [1, 2, 8]\n"
    "  parallelism.zero_stage: [0, 1]\n"
    "constraints: {iteration_time_s: {max: 1000}}\n"
    "flow_stage: {top_k: 2}\n";

using ScratchDir = clustersim::testing::ScratchDir;

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

TEST(CandidateEvaluator, StatusesSayWhyPlansAreSkipped) {
  const SweepSpec spec = spec_from(kAxes);
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  const Outcome ok = eval.analytical(0);  // tp 1 pp 1 mb 1 zero 0
  EXPECT_EQ(ok.status, kOk) << ok.reason;
  EXPECT_GT(ok.metrics.at("tokens_per_s"), 0);
  EXPECT_EQ(ok.metrics.at("dp"), 16);
  const Outcome invalid = eval.analytical(space.size() / 3);  // tp 3
  EXPECT_EQ(invalid.status, kInvalid);
  EXPECT_NE(invalid.reason.find("parallelism.tp"), std::string::npos);
}

// A candidate refused over another file than its scenario (a trace that is not there) names the
// path tried; before 2026-12-04 the reason said only "inference.trace: is not a readable file".
TEST(CandidateEvaluator, AnErrorAboutAnotherFileNamesIt) {
  const std::string body =
      "base:\n"
      "  cluster: {gpu: H100-SXM, gpus: 16, gpus_per_node: 8}\n"
      "  model: {layers: 4, hidden: 1024, heads: 16, kv_heads: 4, ffn_hidden: 2048, seq_len: 2048, vocab: 32000,\n"
      "          activation: swiglu, tied_embeddings: false, learned_positions: false}\n"
      "  inference: {mode: colocated, trace: sub/no_such_trace.csv, pools: {colocated: {gpus: 16, tp: 2}}}\n"
      "axes: {inference.max_batch: [32]}\n";
  const ScratchDir dir("clustersim_sweep_trace");  // holds no sub/ directory
  ASSERT_TRUE(dir.ok());
  const SweepSpec spec = sweep_spec_from_tree(parse_yaml_text(body, dir.file("sw.yaml")), dir.file("sw.yaml"));
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  const Outcome o = eval.analytical(0);
  EXPECT_NE(o.status, kOk);
  EXPECT_NE(o.reason.find("sub/no_such_trace.csv: inference.trace: is not a readable file"), std::string::npos)
      << o.reason;
}

TEST(CandidateEvaluator, AFabricThatCannotBeBuiltIsAnInvalidCandidate) {
  // 2:1 does not split radix 64 into whole ports (64 / 3 up): invalid with the Clos's reason,
  // never ranked on a closed form that skips its routing. 43:21 is the nearest split.
  const SweepSpec spec = spec_from("axes:\n  network.tor_oversubscription: [1, 2, \"43:21\"]\n");
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  EXPECT_EQ(eval.analytical(0).status, kOk);
  const Outcome two = eval.analytical(1);
  EXPECT_EQ(two.status, kInvalid);
  EXPECT_NE(two.reason.find("network.tor_oversubscription"), std::string::npos) << two.reason;
  EXPECT_NE(two.reason.find("43:21"), std::string::npos) << two.reason;
  EXPECT_EQ(eval.analytical(2).status, kOk) << eval.analytical(2).reason;
}

TEST(CandidateEvaluator, MemoryFitsHoldsWhateverTheRunsMemoryCheckSays) {
  // training.memory_check: false lets a run go ahead; the sweep's memory_fits constraint (on by
  // default) still drops the plan that does not fit (24 sequences per micro-batch on one GPU).
  const SweepSpec spec = spec_from("axes:\n  parallelism.micro_batch: [1, 24]\n  training.memory_check: [false]\n");
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  EXPECT_EQ(eval.analytical(0).status, kOk);
  const Outcome big = eval.analytical(1);
  EXPECT_EQ(big.status, kNoFit) << big.reason;
  EXPECT_EQ(big.metrics.at("memory_fits"), 0);
  // The reason names the setting a sweep reads (QA, 2026-12-07: it advised memory_check: false,
  // which this candidate sets).
  EXPECT_NE(big.reason.find("a sweep keeps such plans with constraints.memory_fits: false"), std::string::npos) << big.reason;
  EXPECT_EQ(big.reason.find("runs it anyway"), std::string::npos) << big.reason;
}

// Ranking plans that overflow HBM (memory_fits: false) is said when the best one does (QA,
// 2026-12-07: 14 ranked DeepSeek-V3 plans all overflowed, without a word).
TEST(CandidateEvaluator, ABestPlanThatDoesNotFitIsSaid) {
  const CandidateSpace kept(spec_from("axes:\n  parallelism.micro_batch: [1, 24]\nconstraints: {memory_fits: false}\n"));
  const std::vector<std::string> notes = memory_notes(kept, {{"memory_fits", 0}, {"memory_per_gpu_gib", 153.04}});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("does not fit in its GPUs' memory (153.0 GiB per GPU)"), std::string::npos) << notes[0];
  EXPECT_TRUE(memory_notes(kept, {{"memory_fits", 1}}).empty());
  EXPECT_TRUE(memory_notes(CandidateSpace(spec_from("axes:\n  parallelism.micro_batch: [1, 24]\n")), {{"memory_fits", 0}}).empty());
}

// An iteration past the limit of simulated time (106 days) is an error with `clustersim run`'s
// message, not ranked: 2.048e9 sequences of 4,096 tokens of a 1.7B model on 16 A100s take about
// 2.048e9 x 6 x 1.7e9 x 4,096 FLOPs / (16 x ~150 TFLOP/s) = 3.6e7 s (micro-batches of 128, so that
// the pipeline holds the 1,000,000 micro-batches allowed; kept whatever their memory). Before
// 2026-12-05 the screen's closed form skipped run's check and ranked it `ok` at the saturated
// 9,223,372 s (the reviewer's 175B plan on 8 GPUs: first, at MFU 95.8%).
TEST(CandidateEvaluator, AnIterationPastTheTimeLimitIsAnErrorAsInRun) {
  const SweepSpec spec = spec_from(
      "set: {model.seq_len: 4096, training.memory_check: false}\n"
      "axes:\n  parallelism.micro_batch: [128]\n  training.global_batch: [2048, 2048000000]\n"
      "constraints: {memory_fits: false}\n");
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  EXPECT_EQ(eval.analytical(0).status, kOk);
  const Outcome huge = eval.analytical(1);
  EXPECT_EQ(huge.status, kError) << huge.reason;
  EXPECT_EQ(huge.metrics.count("iteration_time_s"), 0u);
  std::string run_message;
  try {
    report::run_scenario(scenario_from_tree(space.tree(1), spec.base_origin));
  } catch (const BadInput& e) {
    run_message = e.errors().front().message;
  }
  EXPECT_NE(run_message.find("one training iteration would take over 107 days"), std::string::npos) << run_message;
  EXPECT_EQ(huge.reason, run_message);
}

// A sequence imbalance whose heaviest replicas overflow HBM (10x the mean's 2,048 tokens: 116.0
// GiB on an 80 GB A100) is `no_fit` like any training overflow, and the memory reported is the
// heavy replicas' (memory_fits: false keeps it, for a memory_per_gpu_gib constraint to see). Before
// 2026-12-05: the mean's 16.5 GiB, memory_fits 1, and the run's refusal made it an `error`.
TEST(CandidateEvaluator, HeavyReplicasMemoryIsTheCandidatesMemory) {
  const std::string body = "base: " + std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/stragglers-175b-12288.yaml\n" +
                           "set: {stragglers.hosts: null}\n"
                           "axes: {stragglers.sequence_imbalance.max_over_mean: [1.15, 10]}\n"
                           "flow_stage: {top_k: 0}\n";
  const SweepSpec spec = sweep_spec_from_tree(parse_yaml_text(body, "test.yaml"), "test.yaml");
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  EXPECT_EQ(eval.analytical(0).status, kOk) << eval.analytical(0).reason;
  const Outcome heavy = eval.analytical(1);
  EXPECT_EQ(heavy.status, kNoFit) << heavy.reason;
  EXPECT_NE(heavy.reason.find("the heaviest replicas' sequences of 20480 tokens"), std::string::npos) << heavy.reason;
  EXPECT_NEAR(heavy.metrics.at("memory_per_gpu_gib"), 125.5, 0.05);  // ZeRO-1: gradients whole
  EXPECT_EQ(heavy.metrics.at("memory_fits"), 0);

  const SweepSpec kept = sweep_spec_from_tree(parse_yaml_text(body + "constraints: {memory_fits: false}\n", "test.yaml"), "test.yaml");
  const CandidateSpace kept_space(kept);
  CandidateEvaluator kept_eval(kept_space);
  const Outcome run = kept_eval.analytical(1);
  EXPECT_EQ(run.status, kOk) << run.reason;
  EXPECT_NEAR(run.metrics.at("memory_per_gpu_gib"), 125.5, 0.05);
  EXPECT_EQ(run.metrics.at("memory_fits"), 0);
}

TEST(SweepOutput, PlansKeptThatOverflowHbmAreMarkedInTheTables) {
  // With memory_fits: false a plan that overflows HBM is ranked; sweep.csv and the printed table
  // then carry a memory_fits column saying which (with the constraint on, no row needs it).
  const std::string axes = "axes:\n  parallelism.micro_batch: [1, 24]\n  training.memory_check: [false]\n";
  const auto has_column = [](const SweepSpec& spec) {
    const std::vector<std::string> m = metric_columns(spec);
    return std::find(m.begin(), m.end(), "memory_fits") != m.end();
  };
  EXPECT_FALSE(has_column(spec_from(axes)));
  const SweepSpec kept = spec_from(axes + "constraints:\n  memory_fits: false\n");
  EXPECT_TRUE(has_column(kept));
  const CandidateSpace space(kept);
  CandidateEvaluator eval(space);
  EXPECT_EQ(eval.analytical(1).status, kOk);
  EXPECT_EQ(eval.analytical(1).metrics.at("memory_fits"), 0);
}

TEST(CandidateEvaluator, DegradedLinksAreNotScreenedOnAHealthyFabric) {
  // The analytical screen has no per-link view: a base with network.faults is refused per candidate,
  // with the key, rather than ranked as if the fabric were whole.
  const SweepSpec spec = sweep_spec_from_tree(
      parse_yaml_text("base:\n"
                      "  cluster: {gpu: A100-SXM4-80GB, gpus: 16, nic_bandwidth: 200Gbps}\n"
                      "  network: {faults: [{element: \"host:0/up\", bandwidth_factor: 0.5}]}\n"
                      "  model: {layers: 24, hidden: 2304, heads: 24, seq_len: 2048, vocab: 51200}\n"
                      "  parallelism: {tp: 1, pp: 1}\n"
                      "  training: {global_batch: 384}\n"
                      "axes:\n  parallelism.tp: [1, 2]\n",
                      "test.yaml"),
      "test.yaml");
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  const Outcome o = eval.analytical(0);
  EXPECT_EQ(o.status, kError);
  EXPECT_NE(o.reason.find("network.faults"), std::string::npos) << o.reason;
}

TEST(CandidateEvaluator, AxesTheScreenCannotSeeAreNoted) {
  const SweepSpec spec = spec_from("axes:\n  network.switch_latency: [500ns, 2us]\n  parallelism.tp: [1, 2]\n");
  const std::vector<std::string> notes = analytical_notes(CandidateSpace(spec));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("network.switch_latency is not used by the analytical training level"), std::string::npos)
      << notes[0];
  EXPECT_TRUE(analytical_notes(CandidateSpace(spec_from("axes:\n  parallelism.tp: [1, 2]\n"))).empty());
  // The screen routes a dense model's DP rings, so a routing axis is seen.
  EXPECT_TRUE(analytical_notes(CandidateSpace(spec_from("axes:\n  network.routing: [ecmp, dmodk]\n"))).empty());
}

// A finalist the flow stage simulates folded, whose pipeline sends leave their pods, is marked and
// the sweep's note says what run's note says of it (QA 2026-12-07: nothing was said).
TEST(CandidateEvaluator, AFinalistFoldedInStepIsNoted) {
  const std::string body = std::string("base: ") + CLUSTERSIM_SOURCE_DIR +
                           "/scenarios/megascale-175b-12288.yaml\naxes: {parallelism.micro_batch: [1]}\n"
                           "flow_stage: {top_k: 1}\n";
  const SweepSpec spec = sweep_spec_from_tree(parse_yaml_text(body, "t.yaml"), "t.yaml");
  const CandidateSpace space(spec);
  CandidateEvaluator eval(space);
  const Outcome o = eval.finer(0);
  ASSERT_EQ(o.status, kOk) << o.reason;
  EXPECT_EQ(o.metrics.at("folded"), 1.0);
  EXPECT_EQ(o.info.count(kFoldedInStepInfo), 1u);
  EXPECT_EQ(o.info.count(kFoldedOverTaperInfo), 0u);
  SweepTable t;
  t.rows.emplace_back();
  StageResult& finer = t.rows.back().finer;
  finer.ran = true;
  finer.status = o.status;
  finer.metrics = o.metrics;
  finer.info = o.info;
  const std::string note = folding_mix_note(t);
  EXPECT_NE(note.find("simulated 1 finalist folded whose pipeline sends leave their pods"), std::string::npos) << note;
}

// A colocated serving sweep's flow stage reproduces the screen (its collectives are closed forms
// at every level): said where the stage re-runs some (2026-12-07 review: it matched to the digit
// without a word); a training sweep's says nothing.
TEST(CandidateEvaluator, AColocatedServingFlowStageIsNoted) {
  const SweepSpec serving = load_sweep_spec(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/sweep-serving-8b.yaml");
  const std::vector<std::string> notes = flow_stage_notes(CandidateSpace(serving), {0});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("flow figures are the analytical level's"), std::string::npos) << notes[0];
  EXPECT_TRUE(flow_stage_notes(CandidateSpace(serving), {}).empty());
  EXPECT_TRUE(flow_stage_notes(CandidateSpace(spec_from("axes:\n  parallelism.tp: [1, 2]\n")), {0, 1}).empty());
}

// A serving sweep says what its figures rest on, as run does: MoE candidates' roofline pricing, and
// a best candidate that does not keep up where no constraint holds that (QA 2026-12-07: ranked by
// cost, a deployment serving 78% of the load came first without a word).
TEST(CandidateEvaluator, ServingSweepsSayWhatTheirFiguresRestOn) {
  const SweepSpec dense = load_sweep_spec(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/sweep-serving-8b.yaml");
  const CandidateSpace dense_space(dense);
  EXPECT_TRUE(serving_notes(dense_space, {0, 1}, {{"served_fraction", 0.99}, {"ttft_growth", 0.001}}).empty());
  const std::vector<std::string> behind = serving_notes(dense_space, {0}, {{"served_fraction", 0.784}, {"ttft_growth", 0.266}});
  ASSERT_EQ(behind.size(), 1u);
  EXPECT_NE(behind[0].find("does not keep up with the offered load (served_fraction 0.784"), std::string::npos) << behind[0];
  // A sweep that constrains both says nothing (its constraints already hold the load).
  const SweepSpec held = sweep_spec_from_tree(
      parse_yaml_text(std::string("base: ") + CLUSTERSIM_SOURCE_DIR +
                          "/scenarios/serving-trtllm/llama3.1-8b.yaml\naxes: {inference.weight_precision: [fp8]}\n"
                          "constraints: {served_fraction: {min: 0.5}, ttft_growth: {max: 1}}\nflow_stage: {top_k: 0}\n",
                      "t.yaml"),
      "t.yaml");
  EXPECT_TRUE(serving_notes(CandidateSpace(held), {0}, {{"served_fraction", 0.784}, {"ttft_growth", 0.266}}).empty());
  // Arrivals far from steady (a trace's bursts) are said, whatever the figures (since 2026-12-07).
  const std::vector<std::string> unsteady =
      serving_notes(dense_space, {0}, {{"served_fraction", 0.99}, {"ttft_growth", 0.0}, {"unsteady_arrivals", 1}});
  ASSERT_EQ(unsteady.size(), 1u);
  EXPECT_NE(unsteady[0].find("arrivals are far from steady"), std::string::npos) << unsteady[0];
  // Only the figures the run gave are printed.
  const std::vector<std::string> one = serving_notes(dense_space, {0}, {{"served_fraction", 0.5}});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].find("ttft_growth 0"), std::string::npos) << one[0];
  const SweepSpec moe =
      load_sweep_spec(std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/sweep-serving-moe-layout.yaml");
  const std::vector<std::string> notes = serving_notes(CandidateSpace(moe), {0, 1, 2}, {});
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("3 of the 3 ranked candidates serve an MoE model"), std::string::npos) << notes[0];
  // Training sweeps: nothing.
  EXPECT_TRUE(serving_notes(CandidateSpace(spec_from("axes:\n  parallelism.tp: [1, 2]\n")), {0}, {}).empty());
}

// Ties in the objective go to the faster plan: under objective gpus every plan of one size ties,
// and the first in candidate order ranked first whatever its throughput (until 2026-12-06).
TEST(SweepRunner, TiesGoToTheHigherThroughput) {
  const SweepSpec spec = spec_from("axes:\n  parallelism.tp: [4, 2, 1]\nobjective: {metric: gpus, goal: min}\n");
  const CandidateSpace space(spec);
  RunOptions o;
  o.jobs = 1;
  o.top_k = 0;
  const ScratchDir dir("clustersim_sweep_ties");
  ASSERT_TRUE(dir.ok());
  o.log_path = dir.file("results.jsonl");
  const SweepRun run = run_sweep(spec, o);
  const SweepTable t = build_table(space, run.records);
  ASSERT_EQ(t.ranking.size(), 3u);
  for (size_t i = 1; i < t.ranking.size(); ++i) {
    EXPECT_EQ(*t.rows[t.ranking[i]].analytical.objective, *t.rows[t.ranking[0]].analytical.objective);
    EXPECT_GE(t.rows[t.ranking[i - 1]].analytical.metrics.at("tokens_per_s"),
              t.rows[t.ranking[i]].analytical.metrics.at("tokens_per_s"));
  }
  EXPECT_NE(t.ranking[0], 0);  // tp 4, first in candidate order, is not the fastest of these
}

TEST(SweepRunner, InterruptedSweepResumesToOneRowPerCandidate) {
  const SweepSpec spec = spec_from(kAxes);
  const CandidateSpace space(spec);

  RunOptions full;
  full.jobs = 2;
  full.top_k = 0;
  const ScratchDir full_dir("clustersim_sweep_full");
  ASSERT_TRUE(full_dir.ok());
  full.log_path = full_dir.file("results.jsonl");
  const SweepRun a = run_sweep(spec, full);
  ASSERT_EQ(a.records.size(), static_cast<size_t>(space.size()));

  RunOptions cut = full;
  const ScratchDir cut_dir("clustersim_sweep_cut");
  ASSERT_TRUE(cut_dir.ok());
  cut.log_path = cut_dir.file("results.jsonl");
  cut.after_append = [](int64_t n) {
    if (n == 30) throw Interrupted();
  };
  EXPECT_THROW(run_sweep(spec, cut), Interrupted);
  cut.after_append = nullptr;
  cut.resume = true;
  cut.jobs = 1;  // resuming with another -j is fine
  const SweepRun b = run_sweep(spec, cut);
  EXPECT_EQ(b.analytical.reused, 30);
  EXPECT_EQ(b.analytical.ran, space.size() - 30);
  ASSERT_EQ(b.records.size(), static_cast<size_t>(space.size()));

  const SweepTable ta = build_table(space, a.records);
  const SweepTable tb = build_table(space, b.records);
  EXPECT_EQ(sweep_csv(space, ta), sweep_csv(space, tb));
  EXPECT_GT(ta.status_counts.at(kOk), 0);
  EXPECT_GT(ta.status_counts.at(kInvalid), 0);
  // Ranked best first.
  ASSERT_GE(ta.ranking.size(), 2u);
  EXPECT_GE(*ta.rows[ta.ranking[0]].analytical.objective, *ta.rows[ta.ranking[1]].analytical.objective);
}

// A candidate whose worker was lost (killed, crashed) before it reported is logged as failed and
// marked to retry: --resume runs it again (before 2026-12-04 the failure was kept, and a resumed
// sweep's tables differed from an uninterrupted one's).
TEST(SweepRunner, ResumeRunsAgainTheCandidatesWhoseWorkerWasLost) {
  const SweepSpec spec = spec_from(kAxes);
  const CandidateSpace space(spec);
  RunOptions o;
  o.top_k = 0;
  const ScratchDir dir("clustersim_sweep_lost");
  ASSERT_TRUE(dir.ok());
  o.log_path = dir.file("results.jsonl");
  const SweepRun a = run_sweep(spec, o);
  // As a lost worker leaves it: the first five records failed, marked to retry.
  std::ifstream in(o.log_path);
  std::string line, text;
  int marked = 0;
  while (std::getline(in, line)) {
    std::optional<Record> r = record_from_line(line);
    if (r && marked < 5) {
      r->outcome = Outcome{};
      r->outcome.status = kFailed;
      r->outcome.reason = "worker process killed by signal 9";
      r->retry = true;
      ASSERT_EQ(record_from_line(record_to_line(*r))->retry, true);
      line = record_to_line(*r);
      ++marked;
    }
    text += line + "\n";
  }
  in.close();
  std::ofstream(o.log_path, std::ios::binary) << text;
  o.resume = true;
  const SweepRun b = run_sweep(spec, o);
  EXPECT_EQ(b.analytical.ran, 5);
  EXPECT_EQ(sweep_csv(space, build_table(space, a.records)), sweep_csv(space, build_table(space, b.records)));
}

// Resumed with a smaller --top, the tables hold that many finer rows (the log keeps the others for
// a later, larger --top); before 2026-12-04 every logged one.
TEST(SweepRunner, ResumeWithASmallerTopKeepsThatManyFinerRows) {
  const SweepSpec spec = spec_from(kAxes);
  const CandidateSpace space(spec);
  RunOptions o;
  o.jobs = 2;
  o.top_k = 2;
  const ScratchDir dir("clustersim_sweep_top");
  ASSERT_TRUE(dir.ok());
  o.log_path = dir.file("results.jsonl");
  const auto finer_rows = [&](const SweepRun& run) {
    int n = 0;
    for (const Row& r : build_table(space, run.records).rows) n += r.finer.ran ? 1 : 0;
    return n;
  };
  EXPECT_EQ(finer_rows(run_sweep(spec, o)), 2);
  o.resume = true;
  o.top_k = 1;
  const SweepRun one = run_sweep(spec, o);
  EXPECT_EQ(one.finer.ran, 0);
  EXPECT_EQ(finer_rows(one), 1);
}

// A serving sweep's tables carry the medians where it ranks or constrains by them, as they carry
// slo_attainment (sweep.csv left ttft_p50_s out even where the sweep ranked by it, until
// 2026-12-06).
TEST(SweepOutput, ServingMediansAreColumnsWhereTheSweepUsesThem) {
  const std::string base = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-pd.yaml";
  const auto columns = [&](const std::string& rest) {
    const std::string body = "base: " + base + "\naxes: {inference.requests: [300]}\nflow_stage: {top_k: 0}\n" + rest;
    return metric_columns(sweep_spec_from_tree(parse_yaml_text(body, "test.yaml"), "test.yaml"));
  };
  const auto has = [](const std::vector<std::string>& m, const char* c) { return std::find(m.begin(), m.end(), c) != m.end(); };
  EXPECT_FALSE(has(columns("objective: tokens_per_s\n"), "ttft_p50_s"));
  EXPECT_TRUE(has(columns("objective: {metric: ttft_p50_s, goal: min}\n"), "ttft_p50_s"));
  EXPECT_TRUE(has(columns("objective: tokens_per_s\nconstraints: {tpot_p50_s: {max: 50ms}}\n"), "tpot_p50_s"));
}

// A serving candidate's pools are priced by their own GPU types (before 2026-12-04 every GPU at
// cluster.gpu's price, and a price for the attention pool's H200 was refused as unused).
TEST(SweepTable, ServingPoolsArePricedByTheirOwnGpus) {
  const std::string base = std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-afd-hetero.yaml";
  const auto spec_with = [&](const std::string& prices) {
    const std::string body = "base: " + base + "\naxes: {inference.requests: [300]}\nobjective: cost_per_mtoken\n" +
                             "flow_stage: {top_k: 0}\nprice_per_gpu_hour: " + prices + "\n";
    return sweep_spec_from_tree(parse_yaml_text(body, "test.yaml"), "test.yaml");
  };
  try {
    spec_with("{H800-SXM: 2.0}");
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("needs a price for GPU 'H200-SXM'"), std::string::npos) << e.what();
  }
  const SweepSpec spec = spec_with("{H800-SXM: 2.0, H200-SXM: 2.6}");
  const CandidateSpace space(spec);
  const ScratchDir dir("clustersim_sweep_cost");
  ASSERT_TRUE(dir.ok());
  RunOptions o;
  o.top_k = 0;
  o.log_path = dir.file("results.jsonl");
  const SweepTable t = build_table(space, run_sweep(spec, o).records);
  ASSERT_EQ(t.rows.size(), 1u);
  const StageResult& a = t.rows[0].analytical;
  ASSERT_EQ(a.status, kOk) << a.reason;
  EXPECT_EQ(a.info.at("gpu"), "H200-SXM+H800-SXM");
  EXPECT_EQ(a.info.at(kGpuCountsInfo), "8 H200-SXM, 16 H800-SXM");
  const double per_hour = 8 * 2.6 + 16 * 2.0;
  EXPECT_NEAR(a.metrics.at("cost_per_mtoken"), per_hour / 3600.0 / a.metrics.at("tokens_per_s") * 1e6, 1e-9);
}

TEST(SweepTable, NoValidCandidateSaysWhyWithCounts) {
  // 12 and 20 GPUs are not whole nodes: nothing to rank, and the reason is counted once.
  const SweepSpec spec = spec_from("axes: {cluster.gpus: [12, 20]}\nflow_stage: {top_k: 0}\n");
  const CandidateSpace space(spec);
  RunOptions o;
  o.top_k = 0;
  const ScratchDir none_valid_dir("clustersim_sweep_none_valid");
  ASSERT_TRUE(none_valid_dir.ok());
  o.log_path = none_valid_dir.file("results.jsonl");
  const SweepTable t = build_table(space, run_sweep(spec, o).records);
  EXPECT_TRUE(t.ranking.empty());
  const std::string why = no_valid_candidates(t);
  EXPECT_EQ(why.rfind("none of the 2 candidates is valid (reasons grouped, numbers shown as #): 2 x invalid: cluster.gpus: ", 0), 0u) << why;
  // A sweep that ranks something has no such message.
  const SweepSpec good = spec_from(kAxes);
  const CandidateSpace good_space(good);
  const ScratchDir some_valid_dir("clustersim_sweep_some_valid");
  ASSERT_TRUE(some_valid_dir.ok());
  o.log_path = some_valid_dir.file("results.jsonl");
  EXPECT_EQ(no_valid_candidates(build_table(good_space, run_sweep(good, o).records)), "");
}

TEST(SweepRunner, SecondStageRunsTheBestKInChildProcesses) {
  const SweepSpec spec = spec_from(kAxes);
  const CandidateSpace space(spec);
  RunOptions o;
  o.jobs = 2;
  const ScratchDir finer_dir("clustersim_sweep_finer");
  ASSERT_TRUE(finer_dir.ok());
  o.log_path = finer_dir.file("results.jsonl");
  SweepRun run = run_sweep(spec, o);
  EXPECT_EQ(run.finer.candidates, 2);
  const SweepTable t = build_table(space, run.records);
  int finer = 0;
  for (const Row& r : t.rows) {
    if (!r.finer.ran) continue;
    ++finer;
    EXPECT_LE(r.analytical.rank, 2);
    // A candidate the finer level refuses or fails on is reported with its reason, never fatal.
    EXPECT_TRUE(r.finer.status == kOk || !r.finer.reason.empty()) << r.finer.status;
  }
  EXPECT_EQ(finer, 2);
  EXPECT_NE(sweep_summary(space, t, run).find("flow stage"), std::string::npos);
  EXPECT_NE(sweep_html(space, t, run).find("<svg"), std::string::npos);
  // sweep.json is written row by row (2026-12-05), as the whole tree dumps it.
  EXPECT_EQ(sweep_json_text(space, t, run), sweep_json(space, t, run).dump(1));
  // The sweep's notes are kept in sweep.json and sweep.html (on stderr only until 2026-12-07).
  EXPECT_EQ(sweep_json_text(space, t, run).find("\"notes\""), std::string::npos);
  run.notes = {"analytical screen: a note"};
  EXPECT_NE(sweep_json_text(space, t, run).find("\"notes\": [\n  \"analytical screen: a note\""), std::string::npos)
      << sweep_json_text(space, t, run).substr(0, 600);
  EXPECT_EQ(sweep_json_text(space, t, run), sweep_json(space, t, run).dump(1));
  EXPECT_NE(sweep_html(space, t, run).find("<li>analytical screen: a note</li>"), std::string::npos);
}

// memory_fits: false keeps plans that overflow HBM at the finer stage too (before 2026-12-05 the
// flow-level run refused them, so its whole top k came back as errors).
TEST(SweepRunner, PlansKeptThatOverflowHbmRunAtTheFinerStage) {
  const SweepSpec spec = spec_from("axes:\n  parallelism.micro_batch: [1, 24]\nconstraints:\n  memory_fits: false\n"
                                   "flow_stage: {top_k: 2}\n");
  const CandidateSpace space(spec);
  RunOptions o;
  const ScratchDir dir("clustersim_sweep_nofit_finer");
  ASSERT_TRUE(dir.ok());
  o.log_path = dir.file("results.jsonl");
  const SweepTable t = build_table(space, run_sweep(spec, o).records);
  ASSERT_EQ(t.rows.size(), 2u);
  const Row& big = t.rows[1];
  ASSERT_EQ(big.analytical.status, kOk) << big.analytical.reason;
  EXPECT_EQ(big.analytical.metrics.at("memory_fits"), 0);
  ASSERT_TRUE(big.finer.ran);
  EXPECT_EQ(big.finer.status, kOk) << big.finer.reason;
  EXPECT_TRUE(big.finer.objective.has_value());
}

// A rejected candidate names every constraint it misses, and its reason class keeps them all
// (until 2026-12-06 the first only: an 8-GPU BF16 70B plan read as missing its TTFT alone).
TEST(SweepTable, ARejectionListsEveryConstraintMissed) {
  SweepSpec spec;
  spec.objective = "tokens_per_s";
  spec.limits.push_back(MetricLimit{"ttft_p99_s", std::nullopt, 1.0});
  spec.limits.push_back(MetricLimit{"tpot_p99_s", std::nullopt, 0.05});
  spec.limits.push_back(MetricLimit{"served_fraction", 0.95, std::nullopt});
  StageResult s;
  s.ran = true;
  s.status = kOk;
  s.metrics = {{"tokens_per_s", 3000}, {"gpus", 8}, {"ttft_p99_s", 57.3}, {"tpot_p99_s", 0.02}, {"served_fraction", 0.46}};
  finish_stage(spec, s);
  EXPECT_EQ(s.status, kRejected);
  EXPECT_EQ(s.reason,
            "ttft_p99_s 57.3 s above the constraint's maximum 1 s; served_fraction 0.46 below the constraint's minimum 0.95");
  EXPECT_EQ(reason_class(s.status, s.reason), "rejected: ttft_p99_s # s above maximum # s; served_fraction # below minimum #");
  // Times keep their unit (bare seconds until 2026-12-07).
  SweepSpec tpot;
  tpot.objective = "tokens_per_s";
  tpot.limits.push_back(MetricLimit{"tpot_p99_s", std::nullopt, 0.05});
  StageResult t;
  t.ran = true;
  t.status = kOk;
  t.metrics = {{"tokens_per_s", 3000}, {"gpus", 8}, {"tpot_p99_s", 0.0631967}};
  finish_stage(tpot, t);
  EXPECT_EQ(t.reason, "tpot_p99_s 63.2 ms above the constraint's maximum 50 ms");
}

// A missing objective says why, as a constraint on it does (the bare fact until 2026-12-07).
TEST(SweepTable, AMissingObjectiveSaysWhy) {
  SweepSpec spec;
  spec.objective = "slo_attainment";
  StageResult s;
  s.ran = true;
  s.status = kOk;
  s.metrics = {{"tokens_per_s", 3000}, {"gpus", 8}};
  finish_stage(spec, s);
  EXPECT_EQ(s.status, kError);
  EXPECT_EQ(s.reason, "the run did not produce the objective 'slo_attainment' (no service objective: set "
                      "inference.ttft_limit and/or inference.tpot_limit in the base scenario)");
}

// A constraint on a metric the candidate does not produce is never met: the candidate is an
// error saying which metric and why (before 2026-12-05 it counted as met).
TEST(SweepTable, AConstraintOnAMissingMetricIsNeverMet) {
  const auto finished = [](const std::string& metric, const std::map<std::string, double>& metrics) {
    SweepSpec spec;
    spec.limits.push_back(MetricLimit{metric, std::nullopt, 1e-6});
    spec.price_per_gpu_hour["H800-SXM"] = 2.0;
    StageResult s;
    s.ran = true;
    s.status = kOk;
    s.metrics = metrics;
    s.info[kGpuCountsInfo] = "8 H100-SXM, 16 H800-SXM";
    finish_stage(spec, s);
    return s;
  };
  // An unpriced GPU (a pool an axis brought in) leaves no cost to compare.
  const StageResult cost = finished("cost_per_mtoken", {{"tokens_per_s", 100}, {"gpus", 24}});
  EXPECT_EQ(cost.status, kError);
  EXPECT_NE(cost.reason.find("does not produce cost_per_mtoken (price_per_gpu_hour has no price for GPU 'H100-SXM'"),
            std::string::npos)
      << cost.reason;
  EXPECT_FALSE(cost.objective);
  // No decode (one output token per request): no TPOT.
  const StageResult tpot = finished("tpot_p99_s", {{"tokens_per_s", 100}, {"gpus", 24}});
  EXPECT_EQ(tpot.status, kError);
  EXPECT_NE(tpot.reason.find("the constraint on tpot_p99_s cannot be checked"), std::string::npos) << tpot.reason;
  EXPECT_NE(tpot.reason.find("no request decoded"), std::string::npos) << tpot.reason;
  // No train_tokens: no time to train.
  EXPECT_EQ(finished("time_to_train_days", {{"tokens_per_s", 100}, {"gpus", 24}}).status, kError);
  // Present and within the limit: met.
  EXPECT_EQ(finished("tpot_p99_s", {{"tokens_per_s", 100}, {"gpus", 24}, {"tpot_p99_s", 1e-7}}).status, kOk);
}

// With train_tokens a training candidate also gives what the run takes in GPU-hours and, priced,
// in money (since 2026-12-07: days only; a planner multiplied by the GPUs and prices by hand).
TEST(SweepTable, TrainTokensGiveGpuHoursAndTheCostToTrain) {
  SweepSpec spec;
  spec.train_tokens = 1e12;
  spec.price_per_gpu_hour["H100-SXM"] = 2.5;
  // A finished candidate of 1,024 H100s at 2M tokens/s, its derived metrics added.
  const auto finished = [&spec] {
    StageResult r;
    r.ran = true;
    r.status = kOk;
    r.metrics = {{"tokens_per_s", 2e6}, {"gpus", 1024}};
    r.info["gpu"] = "H100-SXM";
    finish_stage(spec, r);
    return r;
  };
  const StageResult s = finished();
  ASSERT_EQ(s.status, kOk) << s.reason;
  const double hours = 1e12 / 2e6 / 3600.0;  // 138.9 h
  EXPECT_NEAR(s.metrics.at("time_to_train_days"), hours / 24.0, 1e-12);
  EXPECT_NEAR(s.metrics.at("gpu_hours_to_train"), 1024 * hours, 1e-6);
  EXPECT_NEAR(s.metrics.at("cost_to_train"), 2.5 * 1024 * hours, 1e-6);
  // The cost to train is cost_per_mtoken times the millions of tokens.
  EXPECT_NEAR(s.metrics.at("cost_to_train"), s.metrics.at("cost_per_mtoken") * 1e12 / 1e6, 1e-6);
  EXPECT_EQ(format_metric("cost_to_train", s.metrics.at("cost_to_train")), "$355556");
  EXPECT_EQ(format_metric("cost_to_train", 12.3456e6), "$12.346M");
  EXPECT_EQ(format_metric("cost_to_train", 0.42), "$0.42");
  // Unpriced: GPU-hours but no cost, and a constraint on the cost says why.
  spec.price_per_gpu_hour.clear();
  spec.limits.push_back(MetricLimit{"cost_to_train", std::nullopt, 1e7});
  const StageResult u = finished();
  EXPECT_TRUE(u.metrics.count("gpu_hours_to_train"));
  EXPECT_FALSE(u.metrics.count("cost_to_train"));
  EXPECT_EQ(u.status, kError);
  EXPECT_NE(u.reason.find("price_per_gpu_hour has no price for GPU 'H100-SXM'"), std::string::npos) << u.reason;
}

TEST(SweepRunner, SweepsTooBigForTheMemoryAreRefusedWithTheirSize) {
  EXPECT_EQ(sweep_memory_refusal(1000, int64_t{1} << 30), "");
  const std::string why = sweep_memory_refusal(10'000'000, int64_t{8} << 30);
  EXPECT_NE(why.find("the axes make 10000000 candidates; holding their results needs about 57."), std::string::npos) << why;
  EXPECT_NE(why.find("but 8.0 GiB is available"), std::string::npos) << why;
  EXPECT_GT(sweep_memory_estimate(50'000), 295'000'000);  // 5.9 KB each measured on 50,000 that all ran
}

// Axis columns are told apart: inference.pools.expert.tp and .attention.tp both printed "tp".
TEST(SweepTable, AxisHeadersAreTheShortestUniqueTail) {
  const std::vector<std::string> keys = {"cluster.gpu", "inference.pools.expert.tp", "inference.pools.attention.tp",
                                         "parallelism.pp"};
  EXPECT_EQ(axis_header(keys[0], keys), "gpu");
  EXPECT_EQ(axis_header(keys[1], keys), "expert.tp");
  EXPECT_EQ(axis_header(keys[2], keys), "attention.tp");
  EXPECT_EQ(axis_header(keys[3], keys), "pp");
  // A key that another ends with in full keeps all of itself.
  EXPECT_EQ(axis_header("tp", {"tp", "parallelism.tp"}), "tp");
  EXPECT_EQ(axis_header("parallelism.tp", {"tp", "parallelism.tp"}), "parallelism.tp");
}

// An axis header is no other column's name: inference.pools.expert.gpus printed "gpus", the
// metric's name, showing 16 for a candidate of 24 GPUs (before 2026-12-05); and a rate per GPU
// prints as the rate does, "14583" beside "14583", not "1.458e+04".
TEST(SweepTable, AxisHeadersAreNoMetricsName) {
  const std::string body = "base: " + std::string(CLUSTERSIM_SOURCE_DIR) + "/scenarios/infer-afd-hetero.yaml\n" +
                           "axes: {inference.pools.expert.gpus: [16]}\nflow_stage: {top_k: 0}\n";
  const SweepSpec spec = sweep_spec_from_tree(parse_yaml_text(body, "test.yaml"), "test.yaml");
  const CandidateSpace space(spec);
  Record r;
  r.stage = kStageAnalytical;
  r.index = 0;
  r.id = space.id(0);
  r.outcome.metrics = {{"tokens_per_s", 14583.3}, {"tokens_per_s_per_gpu", 14583.3}, {"gpus", 24},
                       {"ttft_p99_s", 1.0}, {"tpot_p99_s", 0.35}, {"rejected", 0}};
  const SweepTable t = build_table(space, {r});
  const std::string text = sweep_summary(space, t, SweepRun{});
  const size_t head = text.find("  rank ");
  ASSERT_NE(head, std::string::npos) << text;
  const std::string header = text.substr(head, text.find('\n', head) - head);
  EXPECT_NE(header.find(" expert.gpus "), std::string::npos) << header;
  EXPECT_EQ((" " + header + " ").find(" gpus "), std::string::npos) << header;
  EXPECT_EQ(text.find("e+0"), std::string::npos) << text;
  EXPECT_EQ(format_metric("tokens_per_s_per_gpu", 14583.3), "14583");
  EXPECT_EQ(format_metric("tokens_per_s", 14583.3), "14583");
  EXPECT_EQ(format_metric("tokens_per_s_per_gpu", 1.2955e6), "1.296M");
  EXPECT_EQ(format_metric("tokens_per_s_per_gpu", 105.4), "105.4");
  // Candidates a second: whole above 10, two digits below (a slow MoE sweep read 0).
  EXPECT_EQ(rate_text(2713.4), "2713");
  EXPECT_EQ(rate_text(0.2412), "0.24");
  // Where the column repeats the axis's key (a training sweep's cluster.gpus), the short name stays.
  const std::vector<std::string> keys = {"cluster.gpus", "parallelism.tp"};
  const std::map<std::string, std::string> training = non_axis_columns(spec_from("axes: {parallelism.tp: [1, 2]}\n"));
  EXPECT_EQ(axis_header(keys[0], keys, training), "gpus");
  EXPECT_EQ(axis_header(keys[1], keys, training), "tp");
  EXPECT_EQ(axis_header("inference.pools.expert.gpus", {"inference.pools.expert.gpus"}, non_axis_columns(spec)),
            "expert.gpus");
}

// finer_top_k is the number of candidates the finer stage holds, not the --top asked for: a
// --top 10 over 4 ranked candidates re-runs 4 (sweep.json said 10 before 2026-12-05).
TEST(SweepOutput, FinerTopKIsTheNumberReRun) {
  const SweepSpec spec = spec_from("axes: {parallelism.tp: [1, 2, 4, 8]}\n");
  const CandidateSpace space(spec);
  std::vector<Record> records;
  for (int64_t i = 0; i < space.size(); ++i) {
    Record r;
    r.stage = kStageAnalytical;
    r.index = i;
    r.id = space.id(i);
    r.outcome.metrics = {{"tokens_per_s", 100.0 + static_cast<double>(i)}, {"gpus", 16}};
    records.push_back(r);
  }
  SweepRun run;
  run.top_k = 10;
  run.finer.candidates = 4;
  const SweepTable t = build_table(space, records);
  const std::string json = sweep_json_text(space, t, run);
  EXPECT_NE(json.find("\"finer_top_k\": 4,"), std::string::npos) << json.substr(0, 400);
}

// Times print in the unit that shows them: a traffic run's 1.35 ms printed as "0.001 s".
TEST(SweepTable, TimesPrintInAUnitThatShowsThem) {
  EXPECT_EQ(format_metric("iteration_time_s", 6.2288), "6.229 s");
  EXPECT_EQ(format_metric("completion_time_s", 0.001348), "1.348 ms");
  EXPECT_EQ(format_metric("ttft_p50_s", 0.0000425), "42.50 us");
  EXPECT_EQ(format_metric("iteration_time_s", 0.0), "0.000 s");
  EXPECT_EQ(format_metric("iteration_time_s", std::nan("")), "-");
}

// Rank moves between stages ignore rounding noise; equal objectives are one place.
TEST(SweepTable, ObjectivesWithinRoundingNoiseAreTheSame) {
  EXPECT_TRUE(same_objective(6.228820157, 6.228820159));
  EXPECT_FALSE(same_objective(6.2288, 6.2289));
  EXPECT_TRUE(same_objective(0, 0));
  // Two plans the screen cannot tell apart (memory_check changes nothing in the numbers): the
  // finer level's rounding noise is no rank move, and a best 1 cut inside the tie says so.
  const SweepSpec spec = spec_from("axes: {training.memory_check: [true, false]}\n");
  const CandidateSpace space(spec);
  const auto record = [&](const char* stage, int64_t index, double tokens) {
    Record r;
    r.stage = stage;
    r.index = index;
    r.id = space.id(index);
    r.outcome.metrics = {{"tokens_per_s", tokens}, {"gpus", 16}};
    return r;
  };
  const SweepTable t = build_table(space, {record(kStageAnalytical, 0, 100), record(kStageAnalytical, 1, 100),
                                           record(kStageFiner, 0, 99.9999999999), record(kStageFiner, 1, 100)});
  ASSERT_EQ(t.rows[0].finer.rank, 2);  // the ranks themselves stay a total order
  const std::string moves = ranking_change_text(space, t);
  size_t same = 0;
  for (size_t at = moves.find("     =  "); at != std::string::npos; at = moves.find("     =  ", at + 1)) ++same;
  EXPECT_EQ(same, 2u) << moves;
  SweepRun run;
  run.finer.candidates = 1;
  EXPECT_NE(sweep_summary(space, t, run).find("the best 1 stop inside a tie: 2 candidates share the objective 100"),
            std::string::npos)
      << sweep_summary(space, t, run);
  // The objective is tokens/s itself here, so candidate order breaks the tie; under another
  // objective the higher tokens/s does first (the note said candidate order alone until 2026-12-06).
  EXPECT_NE(sweep_summary(space, t, run).find("(ties go by candidate order)"), std::string::npos)
      << sweep_summary(space, t, run);
  run.finer.candidates = 2;
  EXPECT_EQ(sweep_summary(space, t, run).find("inside a tie"), std::string::npos);
}

}  // namespace
}  // namespace clustersim::sweep
