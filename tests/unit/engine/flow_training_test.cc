// SPDX-License-Identifier: Apache-2.0
// The flow level for training: schedules with free communication give the closed-form bubble,
// folded and unfolded runs agree, a run is deterministic, flow and analytical agree without
// contention, the trace is valid JSON with the expected tracks, and new keys reject bad input.
#include "sim/engine/flow_training.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "sim/core/error.h"
#include "sim/core/scenario.h"
#include "sim/core/yaml_tree.h"
#include "sim/report/trace_writer.h"

namespace clustersim::engine {
namespace {

const calib::HardwareProfile& a100() {
  static const calib::HardwareProfile hw = calib::load_hardware_profile("A100-SXM4-80GB");
  return hw;
}

// A GPT 1.3B-class model on 4-GPU nodes (4 x 200G NICs each).
ScenarioConfig plan(int gpus, int tp, int pp, int vpp, int global_batch) {
  ScenarioConfig cfg;
  cfg.file = "plan.yaml";
  cfg.cluster.gpu = "A100-SXM4-80GB";
  cfg.cluster.gpus = gpus;
  cfg.cluster.gpus_per_node = 4;
  cfg.cluster.nics_per_node = 4;
  cfg.cluster.nic_bandwidth = gbps(200);
  cfg.network.fidelity = Fidelity::kFlow;
  cfg.network.tiers = 2;
  cfg.network.switch_radix = 16;
  cfg.model.layers = 24;
  cfg.model.hidden = 2048;
  cfg.model.heads = 16;
  cfg.model.seq_len = 2048;
  cfg.model.vocab = 51200;
  cfg.parallelism.tp = tp;
  cfg.parallelism.pp = pp;
  cfg.parallelism.vpp = vpp;
  cfg.training.global_batch = global_batch;
  for (const InputError& e : validate_scenario(cfg)) ADD_FAILURE() << "test plan is invalid: " << e.to_string();
  return cfg;
}

FlowTrainingOptions quick() {
  FlowTrainingOptions o;
  o.use_simgrid = false;
  return o;
}

// Equal stages: 1 ms forward and 2 ms backward per chunk, nothing else.
work::GraphCosts equal_stages() {
  work::GraphCosts c;
  c.forward_chunk = Time::ms(1);
  c.backward_chunk = Time::ms(2);
  c.params_on_gpu = 1e6;
  return c;
}

TEST(FlowTraining, OneF1BBubbleEqualsClosedFormWithFreeCommunication) {
  ScenarioConfig cfg = plan(4, 1, 4, 1, 8);  // dp 1, 8 micro-batches
  FlowTrainingOptions o = quick();
  o.free_communication = true;
  o.costs = equal_stages();
  const FlowTrainingResult r = simulate_training(cfg, a100(), o);
  // (m + p - 1)(f + b) = (8 + 3) x 3 ms; bubble (p - 1)(f + b) = 9 ms.
  EXPECT_EQ(r.estimate.iteration, Time::ms(33));
  EXPECT_EQ(r.estimate.breakdown.compute, Time::ms(24));
  EXPECT_EQ(r.estimate.breakdown.bubble, Time::ms(9));
}

TEST(FlowTraining, InterleavedBubbleShrinksByVpp) {
  for (const int vpp : {2, 3}) {
    ScenarioConfig cfg = plan(4, 1, 4, vpp, 8);
    FlowTrainingOptions o = quick();
    o.free_communication = true;
    work::GraphCosts c = equal_stages();
    c.forward_chunk = Time::us(1200 / vpp);
    c.backward_chunk = Time::us(2400 / vpp);
    o.costs = c;
    const FlowTrainingResult r = simulate_training(cfg, a100(), o);
    // m (f + b) + (p - 1)(f + b) / vpp with f + b = 3.6 ms per micro-batch and stage.
    const Time bubble = Time::us(3 * 3600 / vpp);
    EXPECT_EQ(r.estimate.breakdown.compute, Time::us(8 * 3600)) << "vpp " << vpp;
    EXPECT_EQ(r.estimate.breakdown.bubble, bubble) << "vpp " << vpp;
    EXPECT_EQ(r.estimate.iteration, Time::us(8 * 3600) + bubble) << "vpp " << vpp;
  }
}

TEST(FlowTraining, FoldedAndUnfoldedAgreeOnASymmetricPlan) {
  ScenarioConfig cfg = plan(32, 4, 2, 1, 32);  // dp 4, 8 nodes
  cfg.network.routing = Routing::kDmodK;
  cfg.training.fold_ranks = true;
  const FlowTrainingResult folded = simulate_training(cfg, a100(), quick());
  cfg.training.fold_ranks = false;
  const FlowTrainingResult unfolded = simulate_training(cfg, a100(), quick());
  EXPECT_TRUE(folded.folded);
  EXPECT_FALSE(unfolded.folded);
  EXPECT_EQ(folded.rank_groups, 2);
  EXPECT_EQ(unfolded.rank_groups, 8);
  EXPECT_NEAR(unfolded.estimate.iteration / folded.estimate.iteration, 1.0, 1e-3);
}

TEST(FlowTraining, SameSeedSameRun) {
  ScenarioConfig cfg = plan(32, 2, 2, 2, 64);
  cfg.network.ecmp_seed = 7;
  const FlowTrainingResult a = simulate_training(cfg, a100(), quick());
  const FlowTrainingResult b = simulate_training(cfg, a100(), quick());
  EXPECT_EQ(a.estimate.iteration, b.estimate.iteration);
  EXPECT_EQ(a.flows, b.flows);
  EXPECT_EQ(report::write_trace_json(a), report::write_trace_json(b));
}

TEST(FlowTraining, AgreesWithAnalyticalWithoutContention) {
  // DP across 4 nodes on one rail each, no overlap anywhere: the flow level's collectives and
  // compute are the analytical level's, so the iterations agree closely.
  ScenarioConfig cfg = plan(16, 4, 1, 1, 32);
  cfg.training.overlap = {false, false, false, false};
  cfg.training.dp_bucket_size = 4'000'000'000;  // one bucket, as the analytical level's one collective
  const FlowTrainingResult r = simulate_training(cfg, a100(), quick());
  EXPECT_NEAR(r.estimate.iteration / r.analytical.iteration, 1.0, 0.02);
  EXPECT_NEAR(r.estimate.breakdown.compute / r.analytical.breakdown.compute, 1.0, 1e-6);
  EXPECT_NEAR(r.estimate.breakdown.dp_exposed / r.analytical.breakdown.dp_exposed, 1.0, 0.03);
  // A pipeline with TP inside nodes.
  ScenarioConfig pipe = plan(16, 4, 4, 1, 16);
  pipe.training.overlap = {false, false, false, false};
  const FlowTrainingResult p = simulate_training(pipe, a100(), quick());
  EXPECT_NEAR(p.estimate.iteration / p.analytical.iteration, 1.0, 0.03);
}

TEST(FlowTraining, BreakdownOfEveryGroupAddsUpToTheIteration) {
  ScenarioConfig cfg = plan(32, 2, 4, 2, 64);
  const FlowTrainingResult r = simulate_training(cfg, a100(), quick());
  ASSERT_EQ(r.groups.size(), 4u);
  for (const RankGroupTiming& g : r.groups) {
    const TrainingBreakdown& b = g.breakdown;
    EXPECT_EQ(b.compute + b.tp_exposed + b.pp_exposed + b.bubble + b.dp_exposed + b.optimizer, r.estimate.iteration) << g.name;
    EXPECT_FALSE(g.critical_path.empty());
  }
}

TEST(FlowTraining, TraceIsJsonWithATrackPerGroupAndStream) {
  ScenarioConfig cfg = plan(16, 2, 2, 1, 16);  // dp 4: 4 micro-batches per pipeline
  const FlowTrainingResult r = simulate_training(cfg, a100(), quick());
  const YamlNode doc = parse_yaml_text(report::write_trace_json(r), "trace.json");
  const YamlNode& events = *doc.find("traceEvents");
  ASSERT_TRUE(events.is_seq());
  std::set<std::string> tracks;
  int sends = 0, flow_starts = 0, flow_ends = 0;
  for (const YamlNode& e : events.seq) {
    const std::string ph = e.find("ph")->scalar;
    const std::string name = e.find("name")->scalar;
    if (ph == "M" && name == "thread_name") tracks.insert(e.find("pid")->scalar + "/" + e.find("args")->find("name")->scalar);
    if (ph == "X" && name.rfind("pp_send", 0) == 0) ++sends;
    flow_starts += ph == "s";
    flow_ends += ph == "f";
  }
  for (const char* t : {"0/compute", "0/tp", "0/pp", "0/dp", "1/compute", "1/tp", "1/pp", "1/dp"}) {
    EXPECT_TRUE(tracks.count(t)) << t;
  }
  // 4 micro-batches: stage 0 sends 4 activations, stage 1 sends 4 gradients.
  EXPECT_EQ(sends, 8);
  EXPECT_EQ(flow_starts, 8);
  EXPECT_EQ(flow_ends, 8);
}

InputError first_error(const std::string& yaml) {
  try {
    scenario_from_tree(parse_yaml_text(yaml, "bad.yaml"), "bad.yaml");
  } catch (const BadInput& e) {
    return e.errors().front();
  }
  ADD_FAILURE() << "no error for:\n" << yaml;
  return {};
}

constexpr const char* kBase = R"(cluster: {gpus: 16, gpu: A100-SXM4-80GB}
model: {layers: 4, hidden: 1024, heads: 8, seq_len: 1024, vocab: 32000}
)";

TEST(FlowTrainingKeys, BadPlacementNamesItsKey) {
  const InputError e = first_error(std::string(kBase) + "parallelism: {tp: 8, placement: tp-dp-pp}\ntraining: {global_batch: 16}\n");
  EXPECT_EQ(e.key_path, "parallelism.placement");
}

TEST(FlowTrainingKeys, BadBucketAndFoldNameTheirKeys) {
  EXPECT_EQ(first_error(std::string(kBase) + "training: {global_batch: 16, dp_bucket_size: -5}\n").key_path,
            "training.dp_bucket_size");
  EXPECT_EQ(first_error(std::string(kBase) + "training: {global_batch: 16, fold_ranks: maybe}\n").key_path,
            "training.fold_ranks");
}

TEST(FlowTrainingKeys, NewKeysAreRead) {
  const ScenarioConfig cfg = scenario_from_tree(
      parse_yaml_text(std::string(kBase) +
                          "parallelism: {tp: 8, placement: tp-pp-dp-cp}\n"
                          "training: {global_batch: 16, dp_bucket_size: 1000000, fold_ranks: false}\n",
                      "good.yaml"),
      "good.yaml");
  EXPECT_EQ(cfg.parallelism.placement, "tp-pp-dp-cp");
  EXPECT_EQ(cfg.training.dp_bucket_size, 1000000);
  EXPECT_FALSE(cfg.training.fold_ranks);
}

}  // namespace
}  // namespace clustersim::engine
