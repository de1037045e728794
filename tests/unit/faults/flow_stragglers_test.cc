// SPDX-License-Identifier: Apache-2.0
// Stragglers at the flow level: a slow host slows the run and sits on the critical path, a
// degraded NIC slows its stage's DP collective, folding with straggling replicas agrees with the
// unfolded run, drawn stragglers are reproducible, and the other sources push the right way.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"
#include "sim/engine/flow_training.h"
#include "sim/engine/straggler_model.h"
#include "sim/report/internal/straggler_words.h"
#include "sim/report/training_report.h"
#include "sim/report/whatif_report.h"

namespace clustersim::engine {
namespace {

// 32 GPUs on 8 hosts of 4 (one 200G NIC per GPU); tp 4 fills a host, pp 2 -> dp 4, 8 micro-batches.
// Placement tp-cp-dp-pp: host h holds stage h / 4 of replica h mod 4.
const char* const kBase =
    "cluster: {gpu: A100-SXM4-80GB, gpus: 32, gpus_per_node: 4, nics_per_node: 4, nic_bandwidth: 200Gbps}\n"
    "network: {fidelity: flow, tiers: 2, switch_radix: 16, routing: dmodk}\n"
    "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, vocab: 51200}\n"
    "parallelism: {tp: 4, pp: 2}\n";

ScenarioConfig load(const std::string& extra, const std::string& training = "training: {global_batch: 32}\n") {
  const ScenarioConfig cfg = scenario_from_tree(parse_yaml_text(std::string(kBase) + training + extra, "s.yaml"), "s.yaml");
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test scenario is invalid: " << e.to_string();
  return cfg;
}

const calib::HardwareProfile& a100() {
  static const calib::HardwareProfile hw = calib::load_hardware_profile("A100-SXM4-80GB");
  return hw;
}

// Our own event queue (one SimGrid run per process would allow only one simulation per test).
FlowTrainingResult run(const ScenarioConfig& cfg) {
  FlowTrainingOptions o;
  o.use_simgrid = false;
  return simulate_training(cfg, a100(), o);
}

// The rank group with the most compute on the critical path.
std::string top_critical_group(const FlowTrainingResult& r) {
  std::map<int32_t, Time> compute;
  for (const CriticalSegment& s : r.groups[r.critical_group].critical_path) {
    if (s.kind == "compute") compute[s.group] += s.time;
  }
  const auto it = std::max_element(compute.begin(), compute.end(),
                                   [](const auto& a, const auto& b) { return a.second < b.second; });
  return it == compute.end() ? "" : r.group_names[it->first];
}

Time role_time(const FlowTrainingResult& r, work::OpRole role, int stage) {
  Time t;
  for (const TraceSpan& s : r.spans) {
    if (s.role == role && r.group_names[s.group].rfind("stage" + std::to_string(stage) + "/", 0) == 0) t += s.end - s.start;
  }
  return t;
}

TEST(FlowStragglers, SlowHostSlowsTheRunAndIsOnTheCriticalPath) {
  const FlowTrainingResult clean = run(load(""));
  const FlowTrainingResult slow = run(load("stragglers: {hosts: {list: [5], slowdown: 1.5}}\n"));
  EXPECT_GT(slow.estimate.iteration, 1.05 * clean.estimate.iteration);
  EXPECT_LT(slow.estimate.mfu, clean.estimate.mfu);
  ASSERT_EQ(slow.straggling_groups.size(), 1u);
  EXPECT_EQ(slow.straggling_groups[0], "stage1/dp1 (host 5)");
  EXPECT_EQ(top_critical_group(slow), "stage1/dp1");
  EXPECT_EQ(slow.slow_hosts, std::vector<int>{5});
  // Folded: the representative (replica 0) and replica 1 on their own.
  EXPECT_TRUE(slow.folded);
  EXPECT_EQ(slow.rank_groups, 4);
  EXPECT_EQ(slow.unfolded_replicas, 1);
}

// A flow run with stragglers is compared with the analytical level with the same stragglers, in
// the summary and report.html; before 2026-12-05 with the closed form without them, unlabelled
// (175B on 12,288 GPUs, 8 slow hosts: "flow / analytical 1.029" against 6.313 s, where the
// analytical run with the stragglers gives 6.51 s).
TEST(FlowStragglers, TheAnalyticalFigureBesideHasTheSameStragglers) {
  const ScenarioConfig cfg = load("stragglers: {hosts: {list: [5], slowdown: 1.5}}\n");
  const FlowTrainingResult slow = run(cfg);
  const StragglerImpact same = simulate_stragglers(cfg, a100(), analytical_level());
  ASSERT_GT(same.iteration, 1.05 * slow.analytical.iteration);  // the slow host costs the analytical level too
  const report::RunOutput out = report::flow_training_output(cfg, a100(), slow);
  EXPECT_NE(out.summary.find("analytical   " + to_string(same.iteration) + " per iteration with the same stragglers"),
            std::string::npos)
      << out.summary;
  EXPECT_NE(out.summary.find("without stragglers " + to_string(slow.analytical.iteration)), std::string::npos) << out.summary;
  EXPECT_NE(out.report_html.find("<th>analytical iteration (same stragglers)</th>"), std::string::npos);
  EXPECT_NE(out.report_html.find("<td>" + to_string(same.iteration) + "</td>"), std::string::npos);
  // Without stragglers the line is as it was.
  const ScenarioConfig clean_cfg = load("");
  const report::RunOutput clean = report::flow_training_output(clean_cfg, a100(), run(clean_cfg));
  EXPECT_NE(clean.summary.find(" per iteration, MFU "), std::string::npos) << clean.summary;
  EXPECT_EQ(clean.summary.find("stragglers"), std::string::npos) << clean.summary;
}

// Network faults are the flow level's alone (the analytical level refuses them): the figure beside
// is the analytical level without them, and says so. Before 2026-12-06 it priced them on its
// routed collectives only, so a degraded NVLink read as a disagreement between the levels (64
// H100s, tp 2 pp 2, nvlink:0/up at 0.1: "flow / analytical 1.594"; host:0/up at 0.1, priced,
// 1.007), a figure no analytical run gives.
TEST(FlowStragglers, TheAnalyticalFigureBesideIsWithoutNetworkFaults) {
  const ScenarioConfig clean_cfg = load("");
  const FlowTrainingResult clean = run(clean_cfg);
  for (const char* element : {"nvlink:0/up", "host:0/up"}) {
    SCOPED_TRACE(element);
    ScenarioConfig cfg = clean_cfg;
    FabricFault fault;
    fault.element = element;
    fault.bandwidth_factor = 0.1;
    cfg.network.faults.push_back(fault);
    const FlowTrainingResult faulted = run(cfg);
    ASSERT_GT(faulted.estimate.iteration, 1.02 * clean.estimate.iteration);  // the fault costs the flow level
    EXPECT_EQ(faulted.analytical.iteration, clean.analytical.iteration);
    const report::RunOutput out = report::flow_training_output(cfg, a100(), faulted);
    EXPECT_NE(out.summary.find("analytical   " + to_string(clean.analytical.iteration) +
                               " per iteration without the network faults"),
              std::string::npos)
        << out.summary;
    EXPECT_NE(out.summary.find("(flow with faults / analytical without "), std::string::npos) << out.summary;
    EXPECT_NE(out.report_html.find("<th>analytical iteration (without network faults)</th>"), std::string::npos);
  }
}

// Plain 1F1B with overlapped sends over slow NICs: the steady state waits for the sends, the
// baseline counts the waits, and a slowed stage hides part of them, so the straggler model
// replays the schedule with the sends. 2 stages of one H100 and one 25 Gbps NIC, GPU 0 1.3x
// slower: 1.890 s at both levels (before 2026-12-06 the analytical baseline left the waits out,
// 1.342 s against the flow level's 1.690 s).
TEST(FlowStragglers, PlainPipelineSendWaitsAreNotChargedTwice) {
  const char* const text =
      "cluster: {gpu: H100-SXM, gpus: 2, gpus_per_node: 1, nics_per_node: 1, nic_bandwidth: 25Gbps}\n"
      "network: {fidelity: flow, tiers: 2, switch_radix: 16}\n"
      "model: {layers: 8, hidden: 4096, heads: 32, seq_len: 2048, vocab: 128, tied_embeddings: false,\n"
      "        learned_positions: false}\n"
      "parallelism: {tp: 1, pp: 2, micro_batch: 1, zero_stage: 0}\n"
      "training: {global_batch: 64, overlap: {pp_p2p: true}}\n"
      "stragglers: {gpus: {list: [0], slowdown: 1.3}}\n";
  const ScenarioConfig cfg = scenario_from_tree(parse_yaml_text(text, "p.yaml"), "p.yaml");
  const calib::HardwareProfile h100 = calib::load_hardware_profile("H100-SXM");
  const StragglerImpact analytical = simulate_stragglers(cfg, h100, analytical_level());
  FlowTrainingOptions o;
  o.use_simgrid = false;
  const Time flow = simulate_training(cfg, h100, o).estimate.iteration;
  EXPECT_NEAR(analytical.iteration / flow, 1.0, 0.01) << analytical.iteration.as_s() << " s against " << flow.as_s();
  EXPECT_GT(analytical.iteration, 1.1 * analytical.baseline);
}

TEST(FlowStragglers, AnalyticalAndFlowNameTheSameStageUnderAPlacement) {
  // tp-cp-pp-dp: PP before DP, so host h holds stage h mod 2 of replica h / 2; host 1 is stage 1
  // of replica 0 (under the default tp-cp-dp-pp it would be stage 0 of replica 1).
  ScenarioConfig cfg = load("stragglers: {hosts: {list: [1], slowdown: 2}}\n");
  cfg.parallelism.placement = "tp-cp-pp-dp";
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << e.to_string();
  const FlowTrainingResult flow = run(cfg);
  ASSERT_EQ(flow.straggling_groups.size(), 1u);
  EXPECT_EQ(flow.straggling_groups[0], "stage1/dp0 (host 1)");
  const StragglerImpact analytical = simulate_stragglers(cfg, a100(), analytical_level());
  EXPECT_EQ(analytical.critical.stage, 1);
  EXPECT_EQ(analytical.critical.replica, 0);
  EXPECT_EQ(analytical.critical.hosts, std::vector<int>{1});
}

TEST(FlowStragglers, ForwardOnlySlowdownCostsLessThanAllPhases) {
  const Time all = run(load("stragglers: {hosts: {list: [5], slowdown: 1.3}}\n")).estimate.iteration;
  const Time fwd = run(load("stragglers: {hosts: {list: [5], slowdown: 1.3, phase: forward}}\n")).estimate.iteration;
  const Time clean = run(load("")).estimate.iteration;
  EXPECT_GT(fwd, clean);
  EXPECT_LT(fwd, all);
}

TEST(FlowStragglers, DegradedNicSlowsItsStagesDpCollective) {
  // No overlap, so the reduce-scatter runs on its own after the backward passes.
  const std::string training =
      "training: {global_batch: 32, overlap: {dp_grad_reduce: false, dp_param_gather: false}}\n";
  const FlowTrainingResult clean = run(load("", training));
  // Host 0 holds stage 0 of replica 0: its NICs carry stage 0's DP rings.
  const FlowTrainingResult slow = run(load("stragglers: {nics: {hosts: [0], bandwidth_factor: 0.25}}\n", training));
  EXPECT_GT(slow.estimate.iteration, clean.estimate.iteration);
  const Time clean0 = role_time(clean, work::OpRole::kDpReduce, 0);
  const Time slow0 = role_time(slow, work::OpRole::kDpReduce, 0);
  const Time slow1 = role_time(slow, work::OpRole::kDpReduce, 1);
  EXPECT_GT(slow0, 2.0 * clean0) << "a quarter of the line rate on one ring member";
  EXPECT_LT(slow1, 1.01 * role_time(clean, work::OpRole::kDpReduce, 1)) << "stage 1's rings avoid host 0";
  ASSERT_EQ(slow.degraded_links.size(), 8u);  // 4 NICs x 2 directions
  EXPECT_GT(slow.degraded_links[0].bytes.n, 0);
  EXPECT_NEAR(slow.degraded_links[0].capacity.as_gbps(), 50.0, 1e-6);
}

TEST(FlowStragglers, FoldedAgreesWithUnfolded) {
  for (const char* s : {"stragglers: {hosts: {list: [5], slowdown: 1.2}}\n",
                        "stragglers: {gpus: {list: [1, 30], slowdown: 1.3, phase: backward}}\n",
                        "stragglers: {sequence_imbalance: {max_over_mean: 1.5, replicas: 1}}\n"}) {
    const FlowTrainingResult folded = run(load(s));
    const FlowTrainingResult unfolded = run(load(s, "training: {global_batch: 32, fold_ranks: false}\n"));
    EXPECT_TRUE(folded.folded) << s;
    EXPECT_FALSE(unfolded.folded) << s;
    EXPECT_LT(folded.rank_groups, unfolded.rank_groups) << s;
    EXPECT_NEAR(folded.estimate.iteration / unfolded.estimate.iteration, 1.0, 1e-3) << s;
    EXPECT_EQ(top_critical_group(folded), top_critical_group(unfolded)) << s;
  }
}

// GPU speed variation at the flow level: every replica runs on its own with its cells' factors
// (the analytical model's), so the folded run is the unfolded one, and the two levels agree.
TEST(FlowStragglers, VariationGivesEveryReplicaItsOwnSpeed) {
  const std::string s = "stragglers: {seed: 3, variation: {spread: 0.16}}\n";
  const ScenarioConfig cfg = load(s);
  const FlowStragglers fs = flow_stragglers(cfg, a100());
  EXPECT_EQ(fs.graph.replicas.size(), 4u);  // dp 4
  const FlowTrainingResult r = run(cfg);
  const FlowTrainingResult unfolded = run(load(s, "training: {global_batch: 32, fold_ranks: false}\n"));
  const FlowTrainingResult clean = run(load(""));
  EXPECT_NEAR(r.estimate.iteration / unfolded.estimate.iteration, 1.0, 1e-3);
  const StragglerImpact m = simulate_stragglers(cfg, a100(), analytical_level());
  const double flow_slowdown = r.estimate.iteration / clean.estimate.iteration;
  EXPECT_GT(flow_slowdown, 1.0);
  EXPECT_NEAR(flow_slowdown, m.slowdown(), 0.01) << "flow " << flow_slowdown << " analytical " << m.slowdown();
}

// A straggler source that slows nothing leaves every replica folded: the run is the clean one to
// the bit (before 2026-12-05 the listed host's replica ran on its own and its flows met others
// differently: -0.054% on GPT 39B at 512 GPUs).
TEST(FlowStragglers, ASourceThatSlowsNothingChangesNothing) {
  const FlowTrainingResult clean = run(load(""));
  const ScenarioConfig cfg = load("stragglers: {hosts: {list: [1], slowdown: 1.0}}\n");
  EXPECT_TRUE(flow_stragglers(cfg, a100()).graph.replicas.empty());
  EXPECT_EQ(run(cfg).estimate.iteration, clean.estimate.iteration);
}

TEST(FlowStragglers, DrawnHostsAreReproducible) {
  const std::string s = "stragglers: {seed: 7, hosts: {count: 2, slowdown: 1.2}}\n";
  const FlowTrainingResult a = run(load(s));
  const FlowTrainingResult b = run(load(s));
  EXPECT_EQ(a.estimate.iteration, b.estimate.iteration);
  EXPECT_EQ(a.slow_hosts, b.slow_hosts);
  EXPECT_EQ(a.straggling_groups, b.straggling_groups);
  EXPECT_EQ(a.slow_hosts.size(), 2u);
  // The analytical model draws the same hosts.
  const StragglerImpact m = simulate_stragglers(load(s), a100(), analytical_level());
  EXPECT_EQ(m.slow_hosts, a.slow_hosts);
}

TEST(FlowStragglers, UnevenStagesAndLongerSequencesSlowTheRun) {
  const Time clean = run(load("")).estimate.iteration;
  EXPECT_GT(run(load("stragglers: {stage_layers: [10, 14]}\n")).estimate.iteration, clean);
  // Replica 0 is heavy: the representative becomes replica 1.
  const FlowTrainingResult heavy = run(load("stragglers: {sequence_imbalance: {max_over_mean: 1.5, replicas: 1}}\n"));
  EXPECT_GT(heavy.estimate.iteration, clean);
  EXPECT_EQ(heavy.groups.front().name, "stage0/dp1");
  EXPECT_EQ(top_critical_group(heavy).substr(6), "/dp0");
}

// 64 GPUs on 16 hosts of 4; tp 4 fills a host, pp 4 -> dp 4, 8 micro-batches. Host h holds stage
// h / 4 of replica h mod 4.
ScenarioConfig pipeline(int vpp, const std::string& stragglers) {
  const std::string text =
      "cluster: {gpu: A100-SXM4-80GB, gpus: 64, gpus_per_node: 4, nics_per_node: 4, nic_bandwidth: 200Gbps}\n"
      "network: {fidelity: flow, tiers: 2, switch_radix: 16, routing: dmodk}\n"
      "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, vocab: 51200}\n"
      "parallelism: {tp: 4, pp: 4, vpp: " + std::to_string(vpp) + "}\n"
      "training: {global_batch: 32}\n" + stragglers;
  const ScenarioConfig cfg = scenario_from_tree(parse_yaml_text(text, "p.yaml"), "p.yaml");
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test scenario is invalid: " << e.to_string();
  return cfg;
}

// Free communication and stages of 1 ms forward + 2 ms backward per micro-batch, no LM head and
// no optimizer: the iteration is the slowest replica's pipeline makespan.
FlowTrainingResult schedule_only(const ScenarioConfig& cfg) {
  FlowTrainingOptions o;
  o.use_simgrid = false;
  o.free_communication = true;
  work::GraphCosts c;
  c.forward_chunk = Time::us(1000 / cfg.parallelism.vpp);
  c.backward_chunk = Time::us(2000 / cfg.parallelism.vpp);
  c.params_on_gpu = 1e6;
  o.costs = c;
  return simulate_training(cfg, a100(), o);
}

void expect_ms(Time got, double want_ms, const std::string& what) {
  EXPECT_NEAR(got.as_s() * 1e3, want_ms, 1e-6) << what;
}

TEST(FlowStragglers, ASlowStageFollowsThePipelineClosedForm) {
  // 1F1B, slow last stage (host 12: stage 3, replica 0), x1.5: (m f + pp - 1)(f + b) = (12 + 3) x 3 ms.
  expect_ms(schedule_only(pipeline(1, "stragglers: {hosts: {list: [12], slowdown: 1.5}}\n")).estimate.iteration, 45.0,
            "1F1B, last stage x1.5");
  // 1F1B, stage 1 (host 5, replica 1) forward x1.1, d = 0.1 ms: (m + pp - 1)(f + b) + (m - (pp - 1 - k)) d
  // = 33 + 6 x 0.1 ms (its two warm-up micro-batches hide their extra time).
  expect_ms(schedule_only(pipeline(1, "stragglers: {hosts: {list: [5], slowdown: 1.1, phase: forward}}\n")).estimate.iteration,
            33.6, "1F1B, stage 1 forward x1.1");
  // Interleaved (vpp 2), last stage (host 13) forward x1.5: chunks c = 1.5 ms, c' = 1.75 ms,
  // (m vpp - 1) c' + (pp - 1) c + c' = 15 x 1.75 + 3 x 1.5 + 1.75 ms.
  expect_ms(schedule_only(pipeline(2, "stragglers: {hosts: {list: [13], slowdown: 1.5, phase: forward}}\n")).estimate.iteration,
            32.5, "interleaved, last stage forward x1.5");
  // Interleaved, stage 1 slow: no closed form; the flow level's graph and the straggler model's
  // schedule replay (two implementations) agree.
  std::vector<ChunkTime> chunks(8, ChunkTime{Time::us(500), Time::ms(1)});
  chunks[1] = chunks[5] = ChunkTime{Time::us(650), Time::us(1300)};
  EXPECT_EQ(schedule_only(pipeline(2, "stragglers: {hosts: {list: [6], slowdown: 1.3}}\n")).estimate.iteration,
            pipeline_makespan(chunks, 4, 2, 8));
}

TEST(FlowStragglers, OneSlowReplicaGatesTheDpSync) {
  // Host 6: stage 1 of replica 2, x1.5. Every stage's gradient reduction waits for replica 2.
  const FlowTrainingResult r = schedule_only(pipeline(1, "stragglers: {hosts: {list: [6], slowdown: 1.5}}\n"));
  std::vector<ChunkTime> chunks(4, ChunkTime{Time::ms(1), Time::ms(2)});
  chunks[1] = ChunkTime{Time::us(1500), Time::ms(3)};
  EXPECT_EQ(r.estimate.iteration, pipeline_makespan(chunks, 4, 1, 8));
  auto last_end = [&](work::OpRole role, const std::string& group) {
    Time end;
    for (const TraceSpan& s : r.spans) {
      if (s.role == role && r.group_names[s.group] == group) end = max(end, s.end);
    }
    return end;
  };
  for (int stage = 0; stage < 4; ++stage) {
    const std::string st = "stage" + std::to_string(stage);
    const Time slow = last_end(work::OpRole::kBackward, st + "/dp2");
    const Time healthy = last_end(work::OpRole::kBackward, st + "/dp0");
    Time reduced;
    for (const TraceSpan& s : r.spans) {
      if (s.role == work::OpRole::kDpReduce && r.group_names[s.group].rfind(st + "/", 0) == 0) reduced = max(reduced, s.end);
    }
    EXPECT_GE(reduced, slow) << st;
    EXPECT_GT(slow, healthy) << st << ": the healthy replica finishes first and waits";
  }
}

TEST(FlowStragglers, ASlowHostStretchesComputeNotItsTransfers) {
  // Host 5 (stage 1 of replica 1) twice as slow in every kernel: its compute doubles, its TP
  // collectives (NVLink) and pipeline sends (NICs) take what the representative's take. (With
  // the gradient reduction overlapped, its last send would share its NIC with the other
  // replicas' reduce-scatter, which it now meets: contention, not a slower transfer.)
  const FlowTrainingResult r =
      run(load("stragglers: {hosts: {list: [5], slowdown: 2}}\n",
               "training: {global_batch: 32, overlap: {dp_grad_reduce: false, dp_param_gather: false}}\n"));
  auto total = [&](work::OpRole role, const std::string& group) {
    Time t;
    for (const TraceSpan& s : r.spans) {
      if (s.role == role && r.group_names[s.group] == group) t += s.end - s.start;
    }
    return t;
  };
  const double compute = (total(work::OpRole::kForward, "stage1/dp1") + total(work::OpRole::kBackward, "stage1/dp1")) /
                         (total(work::OpRole::kForward, "stage1/dp0") + total(work::OpRole::kBackward, "stage1/dp0"));
  EXPECT_NEAR(compute, 2.0, 1e-6);
  const Time tp_slow = total(work::OpRole::kTpComm, "stage1/dp1");
  const Time tp_healthy = total(work::OpRole::kTpComm, "stage1/dp0");
  ASSERT_GT(tp_healthy, Time::zero());
  EXPECT_NEAR(tp_slow / tp_healthy, 1.0, 0.01);
  const Time pp_slow = total(work::OpRole::kPpSend, "stage1/dp1");
  const Time pp_healthy = total(work::OpRole::kPpSend, "stage1/dp0");
  ASSERT_GT(pp_healthy, Time::zero());
  EXPECT_NEAR(pp_slow / pp_healthy, 1.0, 0.01);
}

// A folded run's result with `names` simulated and compute on the critical path per group index.
FlowTrainingResult paced_by(std::vector<std::string> names, std::vector<std::string> straggling,
                            const std::map<int32_t, double>& compute_ms) {
  FlowTrainingResult f;
  f.group_names = std::move(names);
  f.straggling_groups = std::move(straggling);
  f.groups.resize(1);
  for (const auto& [group, ms] : compute_ms) f.groups[0].critical_path.push_back({group, "compute", Time::ms(ms)});
  f.groups[0].critical_path.push_back({0, "pp", Time::ms(50)});  // communication does not count
  return f;
}

TEST(FlowStragglers, NamesAFoldedRepresentativeThatPacesTheRun) {
  using report::internal::flow_pacing_representative;
  const std::vector<std::string> names{"stage0/dp0", "stage0/dp3", "stage1/dp0", "stage1/dp3"};
  const std::vector<std::string> slow{"stage0/dp3 (host 3)"};
  // The representative's last stage has the most compute on the critical path: it paces.
  EXPECT_EQ(flow_pacing_representative(paced_by(names, slow, {{2, 5}, {1, 1}})), "stage1/dp0");
  // The straggling replica does, through its slow group or another of its stages: nothing to say.
  EXPECT_EQ(flow_pacing_representative(paced_by(names, slow, {{1, 5}, {2, 1}})), "");
  EXPECT_EQ(flow_pacing_representative(paced_by(names, slow, {{3, 5}, {2, 1}})), "");
  // Unfolded, or without stragglers, there is no representative to blame.
  FlowTrainingResult unfolded = paced_by(names, slow, {{2, 5}});
  unfolded.folded = false;
  EXPECT_EQ(flow_pacing_representative(unfolded), "");
  EXPECT_EQ(flow_pacing_representative(paced_by(names, {}, {{2, 5}})), "");
  // Replica 0 straggles: replica 1 represents the rest (the first group is its).
  const std::vector<std::string> shifted{"stage0/dp1", "stage0/dp0", "stage1/dp1", "stage1/dp0"};
  EXPECT_EQ(flow_pacing_representative(paced_by(shifted, {"stage1/dp0 (host 4)"}, {{2, 5}})), "stage1/dp1");
  EXPECT_EQ(flow_pacing_representative(paced_by(shifted, {"stage1/dp0 (host 4)"}, {{3, 5}})), "");
}

TEST(FlowStragglers, WhatIfSaysWhenTheFoldedRepresentativeHidesTheStragglers) {
  // At 12,288 GPUs without pipeline-send overlap the folded representative, meeting every folded
  // replica's ECMP collisions in step, outlasted the straggling replicas: 0.00 points lost and
  // "repairing them regains 0.00 pt" where the unfolded runs lose 1.1 points. The cause now says
  // none was found and a note says why, in the table and (per variant) in the JSON.
  const ScenarioConfig cfg = load("stragglers: {hosts: {list: [5], slowdown: 1.01}}\n");
  report::FlowVariant base, all;
  base.name = "baseline";
  base.iteration_s = 1.0;
  base.mfu = 0.5;
  all = base;
  all.name = "all";
  all.straggling = "stage1/dp1 (host 5)";
  all.critical_stage = -1;
  all.representative_paces = "stage1/dp0";
  const report::FlowVariant round = report::decode_variant(report::encode_variant(all));
  EXPECT_EQ(round.representative_paces, "stage1/dp0");
  const std::vector<report::FlowVariant> variants{base, round};
  const std::string table = report::whatif_flow_table(cfg, variants);
  EXPECT_NE(table.find("cause      not found: the folded representative replica (stage1/dp0)"), std::string::npos) << table;
  EXPECT_NE(table.find("training.fold_ranks: false"), std::string::npos) << table;
  EXPECT_NE(table.find("(1 of 1 variants with stragglers)"), std::string::npos) << table;
  const std::string json = report::whatif_flow_json(cfg, variants).dump();
  EXPECT_NE(json.find("\"representative_paces\": \"stage1/dp0\""), std::string::npos) << json;
  // A straggler on the critical path: no note.
  all.representative_paces.clear();
  all.critical_stage = 1;
  all.iteration_s = 1.1;
  all.mfu = 0.45;
  EXPECT_EQ(report::whatif_flow_table(cfg, {base, all}).find("note"), std::string::npos);
}

TEST(FlowStragglers, NoStragglersLeavesTheGraphAlone) {
  const ScenarioConfig cfg = load("");
  const FlowStragglers fs = flow_stragglers(cfg, a100());
  EXPECT_TRUE(fs.graph.empty());
  EXPECT_TRUE(fs.faults.empty());
}

}  // namespace
}  // namespace clustersim::engine
