// SPDX-License-Identifier: Apache-2.0
// Stragglers at the flow level: a slow host slows the run and sits on the critical path, a
// degraded NIC slows its stage's DP collective, folding with straggling replicas agrees with the
// unfolded run, drawn stragglers are reproducible, and the other sources push the right way.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"
#include "sim/engine/flow_training.h"
#include "sim/engine/straggler_model.h"

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

TEST(FlowStragglers, NoStragglersLeavesTheGraphAlone) {
  const ScenarioConfig cfg = load("");
  const FlowStragglers fs = flow_stragglers(cfg, a100());
  EXPECT_TRUE(fs.graph.empty());
  EXPECT_TRUE(fs.faults.empty());
}

}  // namespace
}  // namespace clustersim::engine
