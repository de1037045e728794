// SPDX-License-Identifier: Apache-2.0
// The reliability study driven by analytical and by flow-level iteration times: the same cluster
// states at both levels, the same ETTR structure (no failures: 1 - checkpoint overhead exactly),
// flow times independent of the number of worker processes, and identical results run to run.
// Each flow-level state is a SimGrid run in a forked worker, so this process runs none itself.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"
#include "sim/report/faults_report.h"

namespace clustersim::report {
namespace {

// 32 GPUs on 8 hosts of 4 (one 200G NIC per GPU); tp 4 fills a host, pp 2 -> dp 4: host 0 holds
// stage 0 and host 4 stage 1 of replica 0. One day, checkpoints every 10 min with a 5 s
// synchronous stall, and one degrade component whose rate the tests choose.
std::string scenario(const std::string& fidelity, double degrade_per_host_day) {
  return "name: faults-small\n"
         "cluster: {gpu: A100-SXM4-80GB, gpus: 32, gpus_per_node: 4, nics_per_node: 4, nic_bandwidth: 200Gbps}\n"
         "network: {fidelity: analytical, tiers: 2, switch_radix: 16, routing: dmodk}\n"
         "model: {layers: 24, hidden: 2048, heads: 16, seq_len: 2048, vocab: 51200}\n"
         "parallelism: {tp: 4, pp: 2}\n"
         "training: {global_batch: 32}\n"
         "faults:\n"
         "  duration: 1d\n"
         "  seeds: 3\n"
         "  sweep_points: 3\n"
         "  rates: none\n"
         "  iteration_time_fidelity: " + fidelity + "\n"
         "  components:\n"
         "    slow_host: {unit: host, rate_per_day: " + std::to_string(degrade_per_host_day) +
         ", kind: degrade, slowdown: 1.5}\n"
         "  checkpoint: {interval: 10min, blocking: 5s, async: false}\n"
         "  recovery: {straggler_detection: 2h}\n";
}

ScenarioConfig load(const std::string& text) {
  const ScenarioConfig cfg = scenario_from_tree(parse_yaml_text(text, "s.yaml"), "s.yaml");
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test scenario is invalid: " << e.to_string();
  return cfg;
}

bool contains(const std::string& s, const std::string& needle) { return s.find(needle) != std::string::npos; }

TEST(ReliabilityLevels, StatesAreHealthyThenOneSlowHostPerStage) {
  const std::vector<ClusterState> states = reliability_states(load(scenario("flow", 0)));
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[0].name, "healthy");
  EXPECT_EQ(states[1].name, "host 0 (stage 0) x1.5 all");
  EXPECT_EQ(states[2].name, "host 4 (stage 1) x1.5 all");
  ASSERT_EQ(states[2].cfg.stragglers.added_hosts.size(), 1u);
  EXPECT_EQ(states[2].cfg.stragglers.added_hosts[0].list, std::vector<int>{4});
  EXPECT_FALSE(states[2].cfg.stragglers.hosts);
}

// A degraded state is the healthy job, with the scenario's own slow hosts, and one more: never
// faster than healthy. Before 2026-12-04 the degraded host replaced the scenario's slow hosts, so
// with host 5 twice as slow in every state the degraded states (one host 1.5x) ran faster than
// healthy, cost nothing, and more stragglers raised ETTR.
TEST(ReliabilityLevels, ADegradedStateKeepsTheScenariosSlowHosts) {
  const ScenarioConfig cfg = load(scenario("analytical", 0.5) + "stragglers: {hosts: {list: [5], slowdown: 2.0}}\n");
  const calib::HardwareProfile hw = training_profile(cfg);
  const std::vector<ClusterState> states = reliability_states(cfg);
  ASSERT_EQ(states.size(), 3u);
  const StateTimes t = state_iteration_times(cfg, states, hw, IterationTimeFidelity::kAnalytical, 1);
  for (size_t i = 1; i < states.size(); ++i) {
    ASSERT_TRUE(states[i].cfg.stragglers.hosts) << states[i].name;
    EXPECT_EQ(states[i].cfg.stragglers.hosts->list, std::vector<int>{5});
    EXPECT_GE(t.iteration[i], t.iteration[0]) << states[i].name;
  }
  // Host 4 (stage 1 of replica 0) at 1.5x beside host 5 (stage 1 of replica 1) at 2x: the slowest
  // replica is still replica 1's, so the state runs as healthy does.
  EXPECT_EQ(t.iteration[2], t.iteration[0]);
}

// The scenario with its checkpoint line (and optionally its parallelism line) replaced.
std::string with(std::string text, const std::string& checkpoint, const std::string& parallelism = "") {
  const std::string ck = "  checkpoint: {interval: 10min, blocking: 5s, async: false}\n";
  text.replace(text.find(ck), ck.size(), "  checkpoint: " + checkpoint + "\n");
  if (!parallelism.empty()) {
    const std::string p = "parallelism: {tp: 4, pp: 2}\n";
    text.replace(text.find(p), p.size(), "parallelism: " + parallelism + "\n");
  }
  return text;
}

// The key paths of the BadInput `f` throws (empty when it does not).
template <typename F>
std::vector<std::string> bad_keys(F f) {
  try {
    f();
  } catch (const BadInput& e) {
    std::vector<std::string> keys;
    for (const InputError& err : e.errors()) keys.push_back(err.key_path);
    return keys;
  }
  return {};
}

TEST(ReliabilityLevels, DegradedStatesFollowThePlacement) {
  // tp-cp-pp-dp: PP before DP, so stage 1 of replica 0 starts at GPU 4, on host 1 (not host 4).
  const std::vector<ClusterState> states = reliability_states(
      load(with(scenario("analytical", 0), "{interval: 10min, blocking: 5s, async: false}",
                "{tp: 4, pp: 2, placement: tp-cp-pp-dp}")));
  ASSERT_EQ(states.size(), 3u);
  EXPECT_EQ(states[1].name, "host 0 (stage 0) x1.5 all");
  EXPECT_EQ(states[2].name, "host 1 (stage 1) x1.5 all");
  ASSERT_EQ(states[2].cfg.stragglers.added_hosts.size(), 1u);
  EXPECT_EQ(states[2].cfg.stragglers.added_hosts[0].list, std::vector<int>{1});
}

TEST(ReliabilityLevels, ZeroCostCheckpointWithAnIntervalFinishes) {
  // blocking 0 made the sweep's intervals NaN -> 1 ps (~1e17 events). With failures on, so the
  // sweep has a curve; every number stays a fraction of the window.
  std::string text = with(scenario("analytical", 0), "{interval: 1h, blocking: 0s}");
  text.replace(text.find("rates: none"), 11, "rates: llama3");
  const RunOutput out = run_reliability(load(text));
  EXPECT_GE(out.metrics.at("ettr"), 0.0);
  EXPECT_LE(out.metrics.at("ettr"), 1.0);
  const std::string json = out.results.dump(0);
  for (const char* bad : {":nan", ":-nan", ":inf", ":-inf"}) EXPECT_FALSE(contains(json, bad)) << json;
  // Young and Daly are 0 at a zero cost, no optimum: null (0 until 2026-12-05), and nothing else is.
  EXPECT_TRUE(contains(json, "\"young_daly_interval_s\":null")) << json;
  EXPECT_TRUE(contains(json, "\"daly_interval_s\":null")) << json;
  size_t nulls = 0;
  for (size_t at = json.find(":null"); at != std::string::npos; at = json.find(":null", at + 1)) ++nulls;
  EXPECT_EQ(nulls, 2u) << json;
  EXPECT_TRUE(contains(json, "\"optimal_checkpoint_interval_at\":\"floor\"")) << json;
}

TEST(ReliabilityLevels, DerivedCheckpointTimesBeyondTheWindowAreBadInput) {
  // No size: 14 bytes per parameter of the model (18.4 GB) at 1 Mbit/s is 1.5e5 s, past the
  // one-day window (at 1 bit/s, or for a 405B model, it overflowed Time: negative ETTR).
  const ScenarioConfig slow = load(with(scenario("analytical", 0), "{write_bandwidth: 1Mbps}"));
  std::vector<std::string> keys = bad_keys([&] { run_reliability(slow); });
  EXPECT_EQ(keys, std::vector<std::string>{"faults.checkpoint.write_bandwidth"});
  const ScenarioConfig read = load(with(scenario("analytical", 0), "{read_bandwidth: 1Mbps}"));
  keys = bad_keys([&] { run_reliability(read); });
  EXPECT_EQ(keys, std::vector<std::string>{"faults.checkpoint.read_bandwidth"});
  // A configured interval shorter than the 1 s floor (and than an iteration).
  const ScenarioConfig fast = load(with(scenario("analytical", 0), "{interval: 100ms, blocking: 5s}"));
  keys = bad_keys([&] { run_reliability(fast); });
  EXPECT_EQ(keys, std::vector<std::string>{"faults.checkpoint.interval"});
}

TEST(ReliabilityLevels, WithoutFailuresEttrIsOneMinusCheckpointOverheadAtBothLevels) {
  // 600 s of training then a 5 s stall: 142 whole cycles of 605 s fit in 86,400 s and the last
  // 490 s trains. ETTR = 1 - 142 x 5 / 86,400, whatever the iteration time.
  const double expected = 1.0 - 710.0 / 86400.0;
  for (const char* level : {"analytical", "flow"}) {
    const RunOutput out = run_reliability(load(scenario(level, 0)));
    EXPECT_DOUBLE_EQ(out.metrics.at("ettr"), expected) << level;
    const std::string json = out.results.dump(0);
    EXPECT_TRUE(contains(json, std::string("\"iteration_time_source\":\"") + level + "\"")) << json;
    EXPECT_TRUE(contains(json, "\"cluster_states\"")) << json;
  }
}

TEST(ReliabilityLevels, BothLevelsSlowTheSameStatesAndLoseTimeToDegradation) {
  const ScenarioConfig analytical = load(scenario("analytical", 0.5));
  const ScenarioConfig flow = load(scenario("flow", 0.5));
  const calib::HardwareProfile hw = training_profile(flow);
  const std::vector<ClusterState> states = reliability_states(flow);
  const StateTimes a = state_iteration_times(analytical, states, hw, IterationTimeFidelity::kAnalytical, 1);
  const StateTimes f = state_iteration_times(flow, states, hw, IterationTimeFidelity::kFlow, 3);
  ASSERT_EQ(f.iteration.size(), states.size());
  for (size_t i = 1; i < states.size(); ++i) {
    // A host 50% slower in every phase slows its stage, hence the lockstep job, at both levels.
    EXPECT_GT(a.iteration[i], a.iteration[0]) << states[i].name;
    EXPECT_GT(f.iteration[i], f.iteration[0]) << states[i].name;
  }
  const engine::ReliabilityInputs in = reliability_inputs(flow, states, f);
  ASSERT_EQ(in.components.size(), 1u);
  ASSERT_EQ(in.components[0].degraded_speed.size(), 2u);
  for (double speed : in.components[0].degraded_speed) {
    EXPECT_GT(speed, 0.5);  // no worse than the host's own 1.5x
    EXPECT_LT(speed, 1.0);
  }
  for (const ScenarioConfig* cfg : {&analytical, &flow}) {
    const RunOutput out = run_reliability(*cfg);
    EXPECT_LT(out.metrics.at("ettr"), 1.0 - 710.0 / 86400.0);
  }
}

TEST(ReliabilityLevels, FlowTimesDoNotDependOnWorkersAndRunsRepeat) {
  const ScenarioConfig cfg = load(scenario("flow", 0.5));
  const calib::HardwareProfile hw = training_profile(cfg);
  const std::vector<ClusterState> states = reliability_states(cfg);
  const StateTimes one = state_iteration_times(cfg, states, hw, IterationTimeFidelity::kFlow, 1);
  const StateTimes three = state_iteration_times(cfg, states, hw, IterationTimeFidelity::kFlow, 3);
  EXPECT_EQ(one.iteration, three.iteration);
  EXPECT_EQ(run_reliability(cfg).results.dump(), run_reliability(cfg).results.dump());
}

TEST(ReliabilityLevels, AFailedFlowSimulationNamesTheKeyAndTheState) {
  ScenarioConfig cfg = load(scenario("flow", 0));
  const calib::HardwareProfile hw = training_profile(cfg);
  std::vector<ClusterState> states = reliability_states(cfg);
  states[1].cfg.network.switch_radix = 2;  // too few ports for the fabric: the child's run throws
  try {
    state_iteration_times(cfg, states, hw, IterationTimeFidelity::kFlow, 2);
    FAIL() << "expected BadInput";
  } catch (const BadInput& e) {
    ASSERT_FALSE(e.errors().empty());
    EXPECT_EQ(e.errors()[0].key_path, "faults.iteration_time_fidelity");
    EXPECT_TRUE(contains(e.errors()[0].message, "host 0 (stage 0)")) << e.errors()[0].message;
  }
}

TEST(ReliabilityLevels, ASlowHostCountsTenFailuresInTheWorkBudget) {
  // 2.5e5 a host-day on 8 hosts for a day: 2e6 arrivals per window. As crashes, a fifth of the
  // 1e7 budget; as slow hosts, each found, waiting for a spare and swapped out through indexes
  // over the others (about 1.2 us each against 0.1 us a crash), 2e7 failures' work: refused up
  // front. Before 2026-12-05 a slow host counted one, and the loop over every slow host present at
  // every event ran for hours.
  const std::string slow = scenario("analytical", 2.5e5);
  try {
    check_failure_budget(load(slow));
    ADD_FAILURE() << "expected BadInput";
  } catch (const BadInput& e) {
    EXPECT_NE(std::string(e.what()).find("faults.components.slow_host.rate_per_day: the job would see about 2e+06 failures"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("2e+06 of them slow hosts (degrade components), which cost about 10 failures' "
                                         "work each: 2e+07 in all"),
              std::string::npos)
        << e.what();
  }
  std::string crash = slow;
  crash.replace(crash.find("kind: degrade, slowdown: 1.5"), 28, "kind: crash");
  EXPECT_NO_THROW(check_failure_budget(load(crash)));
}

}  // namespace
}  // namespace clustersim::report
